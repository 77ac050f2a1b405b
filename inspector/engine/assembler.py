"""Assembly: one LLM call's ``messages[]`` plus the record of every decision behind it (docs/design.md §3.9).

Order is fixed: system band → [summary] → kept history → current user turn → working memory.
Then the token trimmer (working memory pinned as the tail), then ONE pairing pass, then the final
check. :class:`ContextEngine` is the object a live agent loop holds: manifest in, paired and
budgeted payload out, with an :class:`Assembly` record the inspector displays.

Live use::

    engine = ContextEngine.from_manifest("agent.yaml", counter="tiktoken")
    engine.user("Where is my order?")
    while True:
        call = engine.assemble()                       # paired, within budget, recorded
        reply = litellm.completion(model=..., messages=call.messages, tools=call.tools)
        msg = reply.choices[0].message.model_dump(exclude_none=True)
        engine.record(msg)
        if not msg.get("tool_calls"):
            break
        for tc in msg["tool_calls"]:
            engine.record({"role": "tool", "tool_call_id": tc["id"], "content": run_tool(tc)})
    engine.commit()                                    # archive + write-back of the recency cap
"""

from __future__ import annotations

import inspect
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from inspector.engine.budget import Budget, compute_budget, resolve_calibration
from inspector.engine.history import LogRuns, group_start, leading_group_size
from inspector.engine.incremental import RowIndex, clean_ranges
from inspector.engine.limits import ModelLimits, resolve_limits
from inspector.engine.llm import LLMEngine
from inspector.engine.managers.base import CMDecision, ContextManager, budget_terms, is_manager, manage
from inspector.engine.managers.sliding_window import SlidingWindowConversation
from inspector.engine.managers.stack import StackConversation
from inspector.engine.managers.summarising import SummarizingConversation, is_summary_block
from inspector.engine.memory import Conversation
from inspector.engine.pairing import check_provider_payload, sanitize_provider_messages
from inspector.engine.tokens import TokenCounter, make_counter
from inspector.engine.trim import trim_budget, trim_messages_to_budget, trim_with_sums
from inspector.engine.types import (
    Message,
    ProviderPayloadError,
    Removal,
    Removals,
    Repair,
    RowsView,
    SanitizeResult,
    Span,
    TrimResult,
)
from inspector.ids import stringify_ids
from inspector.manifest import ContextSettings, ManifestSource, as_settings
from inspector.params import ASSEMBLER
from inspector.plugins import Registry, default_registry
from inspector.vocabulary import BANDS, fold_kind

PLACEMENTS = ("system_header", "system_pattern", "system_agents", "system_tools", "system_skills",
              "system_ontology", "system_body", "system_memory")
HELLO: Message = {"role": "user", "content": "Hello"}
_SHIPPED_MANAGERS = (StackConversation, SlidingWindowConversation, SummarizingConversation)
"""Managers whose result is ``[summary block?] + a suffix of the committed log`` (the incremental path's premise)."""
_NO_TOKENS: dict[str, int] = dict.fromkeys(BANDS, 0)
"""Every band at 0, in band order: copied (never changed) as a call's per-band sums start."""


@dataclass(slots=True)
class PayloadRow:
    """One row of the payload: the message sent, its band, and where it came from."""

    message: Message
    band: str
    synthetic: str | None  # None | "system_band" | "summary" | "empty_result" | "placeholder"
    source: Message | None  # the object it derives from (itself, or the original of a rebound copy)


@dataclass(slots=True)
class Assembly:
    """The complete record of one LLM call (what every inspector view is a projection of)."""

    messages: list[Message]
    tools: list[dict[str, Any]] | None
    layout: list[PayloadRow | Span]  # payload rows in order; a Span stands for a run of log/working-memory rows
    budget: Budget
    limits: ModelLimits
    bands: dict[str, int]
    payload_tokens: int
    headroom: int
    decision: CMDecision  # what the context manager did (the manager itself is ContextEngine.cm)
    trimmer_removed: list[Removal] | Removals
    repairs: list[Repair]
    check: str
    turn: int
    warnings: list[str] = field(default_factory=list)
    precut: Sequence[Message] = ()  # oldest history rows cut before the trimmer ran (they could never fit)
    clean: list[tuple[int, int]] = field(default_factory=list)  # payload ranges of clean units (final check skips)
    skip_declares: Callable[[str], bool] | None = None  # whether an ask inside ``clean`` declares an id
    verified: bool = False
    """The pairing pass read ``messages`` as the final check reads it and found every rule held (see
    :func:`~inspector.engine.pairing.sanitize_provider_messages`): the check is not read twice."""
    repaired_rows: list[Message | None] = field(default_factory=list)
    """Per repair, the row it concerned (``repairs[i].index`` in the pairing pass's input, by
    identity), so a replay can name the transcript message; None for a repair of no single row."""

    @property
    def ok(self) -> bool:
        return self.check == "ok"

    @property
    def rows(self) -> list[PayloadRow]:
        """One :class:`PayloadRow` per payload row (spans expanded: O(payload), built on demand)."""
        out: list[PayloadRow] = []
        for part in self.layout:
            if isinstance(part, Span):
                out.extend(PayloadRow(m, part.band, None, m) for m in part.rows[part.lo:part.hi])
            else:
                out.append(part)
        return out

    @property
    def trimmed(self) -> list[Removal]:
        """Every row the budget removed: the pre-cut history prefix, then the trimmer's own removals."""
        return [*(Removal(m, "history") for m in self.precut), *self.trimmer_removed]

    @property
    def trimmed_count(self) -> int:
        return len(self.precut) + len(self.trimmer_removed)


@dataclass(slots=True)
class CommitRecord:
    turn: int
    action: str
    summarizer_called: bool
    folded_turns: int
    error: str | None
    archive: dict[str, int]
    committed_rows: int
    folded: list[Message] = field(default_factory=list)  # rows that left the committed log at this commit


def build_context_manager(settings: ContextSettings, counter: TokenCounter, *, registry: Registry | None = None,
                          summarizer: Any = "manifest", llm: LLMEngine | None = None,
                          summary_cache: Any = None, allow_imports: Iterable[str] = ()) -> ContextManager:
    """Instantiate the manifest's manager and bind its summarizer (docs/design.md §3.6a).

    ``summarizer`` overrides the manifest's choice: ``"manifest"`` (default), ``"drop"``,
    ``"stand-in"`` (the labelled offline stand-in) or a summarizer object.
    """
    reg = registry or default_registry()
    binding = settings.context_manager
    if binding.ref and reg.find("context_manager", binding.type) is None:
        spec = reg.resolve_ref("context_manager", binding.ref, allow_imports=allow_imports)
    else:
        spec = reg.resolve("context_manager", binding.type, field_path="spec.context_manager")
    cls = spec.load()
    try:
        cm: ContextManager = cls(**dict(binding.params))  # or a duck-typed third-party one (read by manage())
    except TypeError as exc:
        raise TypeError(f"spec.context_manager.params: {cls.__name__} rejected {sorted(binding.params)}: {exc}") from exc
    if not isinstance(cm, ContextManager) and not hasattr(cm, "manage_history"):
        raise TypeError(f"spec.context_manager: {cls.__name__} is not a context manager")
    cm.counter = counter
    if getattr(cm, "accepts_summarizer", False):
        cm.bind_summarizer(build_summarizer(settings, summarizer=summarizer, llm=llm, cache=summary_cache,
                                            registry=reg, allow_imports=allow_imports))
    return cm


def build_summarizer(settings: ContextSettings, *, summarizer: Any = "manifest", llm: LLMEngine | None = None,
                     cache: Any = None, registry: Registry | None = None, allow_imports: Iterable[str] = ()) -> Any:
    from inspector.engine.summarizers.drop import DropSummarizer
    from inspector.engine.summarizers.standin import StandInSummarizer

    if summarizer == "drop":
        return DropSummarizer()
    if summarizer in ("stand-in", "standin"):
        return StandInSummarizer()
    if summarizer not in (None, "manifest"):
        return summarizer
    reg = registry or default_registry()
    binding = settings.summarizer
    name = binding.type if binding is not None else "llm"
    params = dict(binding.params) if binding is not None else {}
    if binding is not None and binding.ref and reg.find("summarizer", binding.type) is None:
        spec = reg.resolve_ref("summarizer", binding.ref, allow_imports=allow_imports,
                               field_path="spec.context_manager.params.summarizer.ref")
    else:
        spec = reg.resolve("summarizer", name, field_path="spec.context_manager.params.summarizer")
    cls = spec.load()
    if spec.name == "drop":
        return cls()
    if spec.name == "llm":
        return cls(model=params.get("model"), instructions=params.get("instructions"), llm=llm,
                   models=settings.models, cache=cache)
    kwargs = {"llm": llm} if "llm" in inspect.signature(cls).parameters else {}
    return cls(**params, **kwargs)


def _takes_group(first: Message) -> bool:
    """Whether the pre-cut cuts through the group that ``first`` starts (the group of the newest
    overflowing row) rather than stopping before it: when ``first`` is not a ``tool`` row (a result
    that is a group of one, Q24: the trimmer drops it itself) and not a summary block (those stay the
    trimmer's to drop, as before). One rule for both paths."""
    return first.get("role") != "tool" and not is_summary_block(first)


def _precut(history: Sequence[Message], others: Sequence[Message], counter: TokenCounter, budget: int) -> int:
    """Index of the first history row the trimmer could possibly keep.

    Walking back from the newest row, once ``others + history[i:]`` exceeds the budget the trimmer
    (which drops from the front) must drop everything before ``i``'s group, and that group too
    unless it is the last one (it holds ``i``); cutting there first gives the identical result while
    keeping each call O(kept rows) instead of O(whole history) — what makes a 2 000-turn ``stack``
    replay linear — and leaves the trimmer nothing to drop from history in the usual overflow. The
    last history group is never cut here (see :func:`_takes_group` for when ``i``'s group is).
    Callers pass only the part of the history the trimmer may cut (a protected head row, e.g. a
    summary block standing first with no system band, goes into ``others``: Q18).
    """
    units = sum(counter.unit(m) for m in others)
    n = len(others)
    for i in range(len(history) - 1, -1, -1):
        units += counter.unit(history[i])
        n += 1
        if counter.total(units, n) > budget:
            cut = group_start(history, i)  # the trimmer's groups (Q24), chained from the history's start
            last_group = group_start(history, len(history) - 1)
            if cut < last_group and _takes_group(history[cut]):
                # the trimmer drops that whole group too (its suffix holds row i, which overflows, and
                # it is not the last group, which the trimmer keeps): cut through it, so the trimmer
                # has nothing left to drop from history in the usual overflow (an uncapped stack's
                # every call)
                cut += leading_group_size(history, cut)
            return min(cut, last_group)
    return 0


class ContextAssembler:
    """The default ``assembler`` plugin. Custom assemblers implement ``assemble(engine)`` and must
    return a paired payload (they may call :func:`inspector.engine.pairing.sanitize_provider_messages`).

    Two paths, one result. The **incremental** path (the default for the shipped managers) keeps a
    :class:`~inspector.engine.incremental.RowIndex` over the committed log and over working memory,
    so a call reads only what changed since the last one: the pre-cut and the working-memory cut by
    bisection over running sums, the pairing repair and the final check over the dirty units and
    the two ends of each range, bands from the sums, and the payload's long runs recorded as
    :class:`~inspector.engine.types.Span` ranges. The **reference** path (``incremental = False``,
    and whatever the incremental one does not cover: a custom manager, a resumed HITL turn, a
    disabled trimmer) is the full-payload implementation; tests hold the two equal call by call.
    """

    precut: bool = True
    """Cut history that can never fit before the trimmer runs (a speed-up with the identical result;
    tests switch it off on an instance to prove that)."""
    incremental: bool = True
    """Use the incremental path where it applies (tests switch it off to get the reference)."""

    def __init__(self, emit_segments: bool = ASSEMBLER.emit_segments,
                 always_reassemble: bool = ASSEMBLER.always_reassemble, token_budget: int | None = ASSEMBLER.token_budget):
        """The three parameters are the reference runtime's legacy-hook options, marked
        :class:`~inspector.params.Inert` on :class:`~inspector.params.AssemblerParams`: accepted so a
        reference manifest builds, with no effect here; ``validate`` warns at their line."""
        del emit_segments, always_reassemble, token_budget
        self._indexes: dict[str, RowIndex] = {}
        self._base: list[Message] = []  # every committed message, in commit order
        self._base_pos: dict[int, int] = {}  # id(message) -> position in _base
        self._seen: tuple[Sequence[Message] | None, int, Message | None] = (None, -1, None)
        """The log the last call indexed: (list object, length, last row)."""
        self._turn_units: tuple[TokenCounter | None, Message | None, int, Message | None, int, bool] = \
            (None, None, 0, None, 0, False)
        """(counter, system row, its units, user row, its units, whether it says something) of the last
        call: every call of a turn sends the same two rows, so they are read once a turn, not once a call."""
        self._rule: tuple[Any, ...] = (None, None, None, None, None, None)
        """(system row, user row, has_user, placeholder, own_system, the band rule made for them): the
        incremental path's last band rule, reused while those five stay the same (every call of a turn)."""
        self._marks: tuple[list[Message] | None, int, Message | None, Message | None, tuple[int, ...], bool] = \
            (None, -1, None, None, (), False)
        """(``_base``, its length, system row, user row, their positions in it, whether either has an
        assistant or tool role) for :func:`_singled_out`, kept while those four stay the same (the
        log only grows in place, and a new one is a new list)."""

    @property
    def rows_indexed(self) -> int:
        """How many rows had their facts derived (units, role, ask, call ids, group and unit
        boundaries) over this assembler's life. Each row is derived once when it enters working
        memory and at most once more at commit — a long turn's facts are taken over from working
        memory (only the user row, the first row of the turn and a final reply are derived again), a
        short turn's rows derived again, which costs less (:attr:`RowIndex.CARRY_MIN`) — never per
        call: tests hold this at O(rows)."""
        return sum(idx.measured for idx in self._indexes.values())

    def _index(self, name: str, counter: TokenCounter, rows: Sequence[Message],
               carry: RowIndex | None = None) -> RowIndex:
        idx = self._indexes.get(name)
        if idx is None or idx.counter is not counter:
            idx = self._indexes[name] = RowIndex(counter)
        return idx.sync(rows, carry)

    def assemble(self, engine: ContextEngine) -> Assembly:
        conv = engine.conversation
        counter = engine.counter
        tools = engine.tools
        system = engine.system_message()
        past = conv.committed_messages
        wm = conv.working
        user = conv.current_user if conv.current_user is not None else {"role": "user", "content": ""}
        cm = engine.cm
        fast = self.incremental and self.precut and type(cm) in _SHIPPED_MANAGERS
        # the log first: rows committed since the last call are mostly working memory's, whose facts
        # the working index still holds until it moves on to this turn's list below
        log = self._log_index(counter, past) if fast else None
        wmi = self._index("working", counter, wm) if fast else None
        tool_tokens = counter.count_tools(tools)
        # the system band's and the user row's units (the incremental path reuses them) and whether the
        # user row says something: the same two rows on every call of a turn, so they are read once a turn
        tu = self._turn_units
        same = tu[0] is counter
        u_system = tu[2] if same and tu[1] is system else counter.unit(system) if system else 0
        if same and tu[3] is user:
            u_user, has_user = tu[4], tu[5]
        else:
            u_user, has_user = counter.unit(user), bool(conv.last_user_text.strip())
        self._turn_units = (counter, system, u_system, user, u_user, has_user)
        if wmi is not None:
            wm_units = wmi.pre[-1]  # units of all of working memory (its running sum)
            if wmi.additive:  # total(units, n) is units: the sum is the tokens
                fixed = u_system + u_user + wm_units + tool_tokens
            else:
                fixed = (counter.total(u_system, 1) if system else 0) + counter.total(u_user, 1) + \
                    counter.total(wm_units, len(wm)) + tool_tokens
        else:
            wm_units = 0
            # count([row]) of one row is total(unit(row), 1): no list per call
            fixed = (counter.total(u_system, 1) if system else 0) + counter.total(u_user, 1) + counter.count(wm) + \
                tool_tokens
        terms = budget_terms(cm)
        budget = compute_budget(engine.limits, engine.settings.trimmer, fixed=fixed, tool_tokens=tool_tokens,
                                summarizing=terms.summarizing, hysteresis_ratio=terms.hysteresis_ratio,
                                summary_threshold=terms.summary_threshold, calibration=engine.calibration,
                                calibration_source=engine.calibration_source)
        outcome = manage(cm, past, budget.hint)
        managed, decision = outcome.messages, outcome.decision
        # A committed ask answered from working memory (HITL) takes its answers with it when the
        # trimmer drops it; only the trimmer knows how far that goes, so no pre-cut then.
        hitl = bool(wm) and wm[0].get("role") == "tool"
        if wmi is not None and log is not None and not hitl and budget.max_tokens > 0:
            result = self._assemble_incremental(engine, system, wm, user, has_user, tool_tokens, budget, managed,
                                                decision, u_system, u_user, wm_units, log, wmi)
            if result is not None:
                return result
        return self._assemble_reference(_Call(engine, system, past, wm, user, has_user, tool_tokens, budget, managed,
                                              decision, hitl))

    def _log_index(self, counter: TokenCounter, past: Sequence[Message]) -> RowIndex:
        """The index over every message ever committed, in commit order (an append-only list, so a
        fold never re-indexes: the projection is ``[summary block?] + a suffix`` of it).

        Every call of a turn sees the same log (the same list object, length and last row: what
        :class:`~inspector.engine.history.LogRuns` checks too): then nothing was committed since
        the last call and the index is returned as it stands, without walking back over ``past``."""
        n = len(past)
        seen = self._seen
        log = self._indexes.get("log")
        if log is not None and seen[0] is past and seen[1] == n and log.counter is counter and \
                (not n or seen[2] is past[-1]):
            return log
        base, pos = self._base, self._base_pos
        j = n
        while j > 0 and id(past[j - 1]) not in pos:  # the rows committed since the last call
            j -= 1
        if j > 0 and (pos[id(past[j - 1])] != len(base) - 1 or base[-1] is not past[j - 1]):
            # not a continuation (a restored snapshot, a rewrite): start again from this projection
            base, pos = self._base, self._base_pos = [], {}
            j = 1 if past and is_summary_block(past[0]) else 0
        if j < n:
            new = past[j:]
            pos.update(zip(map(id, new), range(len(base), len(base) + len(new))))
            base.extend(new)
        self._seen = (past, n, past[-1] if n else None)
        return self._index("log", counter, base, carry=self._indexes.get("working"))

    def _assemble_reference(self, c: _Call) -> Assembly:
        """The full-payload assembly: every row of the payload is read (the oracle of the tests)."""

        engine, system, managed, wm, user, budget = c.engine, c.system, c.managed, list(c.wm), c.user, c.budget
        counter = engine.counter
        has_user, tool_tokens = c.has_user, c.tool_tokens
        messages: list[Message] = [system] if system else []
        budget_tokens = trim_budget(budget.max_tokens, budget.trimmer_reserve, tool_tokens)  # the trimmer's own budget
        others = ([system] if system else []) + ([user] if has_user else []) + wm
        # The trimmer never removes a leading system-role row (with no system band, a summary block
        # stands there): the pre-cut protects the same row (Q18), so pre-cut + trimmer == trimmer.
        head = 1 if system is None and managed and managed[0].get("role") == "system" else 0
        cut = 0
        if self.precut and budget.max_tokens > 0 and not c.hitl:
            cut = _precut(managed[head:], [*others, *managed[:head]], counter, budget_tokens)
        precut = managed[head:head + cut]
        messages.extend([*managed[:head], *managed[head + cut:]] if cut else managed)
        if has_user:
            messages.append(user)
        placeholder = not messages and not wm
        if placeholder:
            messages.append(HELLO)
        trimmed = trim_messages_to_budget(messages, max_tokens=budget.max_tokens, reserve=budget.trimmer_reserve,
                                          fixed=tool_tokens, pin_tail=wm, counter=counter)
        wm_ids = {id(m) for m in wm}
        band_of = _band_rule(system, user, has_user, placeholder, engine.conversation.system_message is system)
        sanitized = sanitize_provider_messages(trimmed.messages)
        rows: list[PayloadRow | Span] = []
        prev_band = "working_memory"
        for out, origin in zip(sanitized.messages, sanitized.origin):
            if origin is None:
                rows.append(PayloadRow(out, prev_band, "empty_result", None))
                continue
            src = trimmed.messages[origin]
            b, syn = band_of(src, id(src) in wm_ids)
            rows.append(PayloadRow(out, b, syn, src))
            prev_band = b
        bands = {k: 0 for k in BANDS}
        per_band: dict[str, list[Message]] = {}
        for r in rows:
            per_band.setdefault(r.band, []).append(r.message)  # type: ignore[union-attr]
        for k, msgs in per_band.items():
            bands[k] = counter.count(msgs)
        bands["tool_schemas"] = tool_tokens
        payload_tokens = counter.count(sanitized.messages) + tool_tokens
        return _assembly(engine, budget, c.decision, sanitized.messages, rows, bands, payload_tokens, trimmed,
                         sanitized.repairs, precut, [], None, sanitized.verified)

    def _assemble_incremental(self, engine: ContextEngine, system: Message | None, wm: list[Message], user: Message,
                              has_user: bool, tool_tokens: int, budget: Budget, managed: Sequence[Message],
                              decision: CMDecision, u_system: int, u_user: int, wm_units: int, log: RowIndex,
                              wmi: RowIndex) -> Assembly | None:
        """The same assembly from running sums and recorded boundaries (class docstring); None when
        the manager's result is not ``[summary block?] + a suffix of the committed log``.

        Runs on every LLM call, so it takes what :meth:`assemble` read as arguments (no record of
        them is built), reads each fact once into a local and calls as little as it can: the ends
        of ``managed`` in one call, the system band's and the user row's units (``u_system``,
        ``u_user``) and working memory's (``wm_units``) from :meth:`assemble`, row units of the log
        range from its running sums."""

        past = self._base  # every committed message in commit order (log indexes it); managed = [block?] + past[k:]
        counter = engine.counter
        n_log, n_wm = len(past), len(wm)
        pos = self._base_pos
        pre = log.pre
        # managed = [block?] + past[k:], checked at its two ends (the shipped managers' contract);
        # each end is read once (``managed`` may be a view whose reads are not free)
        if type(managed) is RowsView:
            n_man, m0, m1, m_last = managed.ends()
        else:
            n_man = len(managed)
            m0, m1, m_last = (managed[0], managed[1] if n_man > 1 else None, managed[-1]) if n_man else \
                (None, None, None)
        k = n_log
        blk = 0
        if m0 is not None:
            k0 = pos.get(id(m0))
            if k0 is None:  # not a log row: the summary block before the suffix, or not this contract
                if not is_summary_block(m0):
                    return None
                blk = 1
                if m1 is not None:
                    k = pos.get(id(m1), n_log)
            else:
                k = k0
        mb = m1 if blk else m0  # the first log row of managed (None: there is none)
        if n_man - blk != n_log - k or (mb is not None and (mb is not past[k] or m_last is not past[-1])):
            return None
        head = 1 if system is None and m0 is not None and m0.get("role") == "system" else 0
        prot = m0 if head else None  # a protected head row (a system-role row standing first, no system band)
        extra = m0 if blk and not head else None  # a summary block the cut may take
        n_extra = 1 if extra is not None else 0
        a0 = k + 1 if head and not blk else k  # history rows from the log: past[a0:]
        max_tokens, reserve = budget.max_tokens, budget.trimmer_reserve
        budget_tokens = trim_budget(max_tokens, reserve, tool_tokens)  # the trimmer's own budget
        unit = counter.unit
        if not has_user:
            u_user = 0
        u_protected = unit(prot) if prot is not None else 0
        u_other = u_system + u_user + u_protected + wm_units
        n_other = (1 if system else 0) + (1 if has_user else 0) + head + n_wm

        # The pre-cut (what _precut does over history = [extra?] + past[a0:]): the trimmer group start
        # (Q24) of the newest row whose suffix overflows, in history positions, then through that group
        # (its end is the next trimmer group start, from the recorded chain) when _precut's rule says
        # so. The log's chain is the history's from the first non-tool row at or after a0 (every
        # non-tool row starts a group); a row before it is a tool row, a group of one in the history
        # (it follows a0's start or the block, not its ask). Group starts only grow along the log, so
        # that start is never past the last group's (the clamp _precut applies); and when every log
        # suffix fits, history[0:] is what overflows at most, whose cut is 0: no cut.
        cut = 0
        if n_log > a0:
            p = log.fits_back(budget_tokens, n_other, u_other, a0)
            if p >= a0:
                chain = log.chain
                g = _chain_start(log, p, a0)
                cut = n_extra + g - a0
                last = _chain_start(log, n_log - 1, a0)  # the last group's start (>= g)
                if g < last and _takes_group(past[g]):
                    k = bisect_right(chain, g)
                    e = chain[k] if k < len(chain) else n_log
                    cut = n_extra + (e if e < last else last) - a0
        a = a0 + cut - n_extra if cut > n_extra else a0  # first log row after the pre-cut
        # (nothing cut, the usual call of a log that fits: no view to build)
        precut: Sequence[Message] = RowsView([extra] if cut and extra is not None else [], past, a0, a) \
            if cut else ()
        kept_extra = extra is not None and not cut
        # the front: the system band, or a protected head row (only with no system band), then an uncut block
        front: list[Message] = [system] if system else [prot] if prot is not None else []
        if kept_extra:
            front.append(extra)  # type: ignore[arg-type]
        off = len(front)  # rows before the log range
        messages = past[a:]  # the long run of log rows, copied once
        if off:
            messages[:0] = front
        end = off + n_log - a
        if has_user:
            messages.append(user)
        placeholder = not end and not has_user and not n_wm  # nothing else to send
        if placeholder:
            messages.append(HELLO)

        # units of messages[i:j] (the log range from its running sums), for the trimmer
        msg_sum = partial(_msg_sum, pre, a, off, end, messages, unit)

        # the rows around the log range: the front (system, protected head, an uncut block) and the tail
        u_extra = unit(extra) if kept_extra else 0  # type: ignore[arg-type]
        u_hello = unit(HELLO) if placeholder else 0
        msg_total = pre[n_log] - pre[a] + u_system + u_protected + u_extra + u_user + u_hello
        n_msgs = end + (1 if has_user else 0) + (1 if placeholder else 0)  # len(messages)
        t_head = 1 if n_msgs and messages[0].get("role") == "system" else 0
        trimmed = trim_with_sums(messages, max_tokens=max_tokens, reserve=reserve,
                                 fixed=tool_tokens, pin_tail=wm, counter=counter, msg_sum=msg_sum,
                                 msg_total=msg_total, pin_units=wmi.unit, pin_sum=wmi.units, pin_total=wm_units,
                                 pin_chain=wmi.chain, owned=True, budget=budget_tokens)
        # ``messages`` was handed over (owned): the trimmer's result may be that very list, so it is not read again
        out_in = trimmed.messages
        n_in = len(out_in)
        # where the log range and working memory sit in the trimmer's output
        if trimmed.answers_removed:
            return None  # answers of a dropped ask (HITL): the reference handles it
        dropped_hist = trimmed.history_removed
        start = t_head + dropped_hist
        la = a + (start - off if start > off else 0)  # first log row still in the payload
        log_at = (off if off > start else start) - start + t_head
        wm_kept = n_in - (n_msgs - dropped_hist)
        cur = n_wm - wm_kept
        wm_at = n_in - wm_kept
        log_end = log_at + n_log - la  # out_in[log_at:log_end] is past[la:], out_in[wm_at:] is wm[cur:]
        sources: list[tuple[RowIndex, int, int, int, str]] = []  # (index, lo, hi, payload offset, band)
        skip: list[tuple[int, int]] = []  # their payload ranges
        # the log range's last unit is one of them too when what follows it in the payload closes it: a
        # row that is not a tool row (the user turn, as a rule) or nothing at all
        nxt = out_in[log_end] if log_end < n_in else None
        closed = nxt is None or (type(nxt) is dict and nxt.get("role") != "tool")
        # (working memory ends the payload: its last unit may be one of them)
        for idx, lo, hi, at, band, to_end in ((log, la, n_log, log_at, "history", closed),
                                              (wmi, cur, n_wm, wm_at, "working_memory", True)):
            for s_lo, s_hi in clean_ranges(idx, lo, hi, to_end):
                p_lo = at + s_lo - lo
                sources.append((idx, s_lo, s_hi, p_lo, band))
                skip.append((p_lo, p_lo + s_hi - s_lo))

        declares = partial(_declares, sources)
        sanitized = sanitize_provider_messages(out_in, skip=skip, skip_declares=declares, owned=True)
        own_system = engine.conversation.system_message is system
        rule = self._rule  # the same rule on every call of a turn: made once a turn, not once a call
        if rule[0] is system and rule[1] is user and rule[2] is has_user and rule[3] is placeholder and \
                rule[4] is own_system:
            band_of = rule[5]
        else:
            band_of = _band_rule(system, user, has_user, placeholder, own_system)
            self._rule = (system, user, has_user, placeholder, own_system, band_of)
        layout: list[PayloadRow | Span] = []
        units = dict(_NO_TOKENS)
        sent = sanitized.messages
        n_out = n_in if sent is out_in else len(sent)
        u_obj = user if has_user else None
        marks = self._marks
        if marks[0] is not past or marks[1] != n_log or marks[2] is not system or marks[3] is not u_obj:
            marks = self._marks = (past, n_log, system, u_obj, *_marks_of(pos, system, u_obj))
        log_marks, odd_role = marks[4], marks[5]
        count: dict[str, int] | None = None  # rows per band: only a counter that is not additive needs them
        if sent is out_in and not sanitized.repairs and not _singled_out(log, la, n_log, log_marks, False) \
                and not _singled_out(wmi, cur, n_wm, None, odd_role, system, u_obj):
            # Nothing was repaired and no row of the two ranges is one the band rule singles out, so
            # each range is one Span in its own band (what _layout_rows would build row by row) and
            # only the rows around them are read: the front (system band, protected head, an uncut
            # block) and the user turn, whose units the call already holds. The payload's units are
            # summed as the parts are laid out.
            add = layout.append
            payload_units = 0
            # the front, then the log range; the user turn (or the placeholder), then working memory
            for r_lo, r_hi, idx, lo, hi, band in ((0, log_at, log, la, n_log, "history"),
                                                  (log_end, wm_at, wmi, cur, n_wm, "working_memory")):
                for i in range(r_lo, r_hi):
                    src = sent[i]
                    b, syn = band_of(src, False)
                    add(PayloadRow(src, b, syn, src))
                    u = u_system if src is system else u_user if src is u_obj else unit(src)
                    units[b] += u
                    payload_units += u
                if hi > lo:
                    add(Span(idx.rows, lo, hi, band))  # type: ignore[arg-type]
                    u = idx.pre[hi] - idx.pre[lo]
                    units[band] += u
                    payload_units += u
            if not log.additive:
                count = dict(_NO_TOKENS)
                for part in layout:
                    count[part.band] += part.hi - part.lo if type(part) is Span else 1
        else:
            count = dict(_NO_TOKENS)
            _layout_rows(layout, units, count, sanitized, sources, out_in, band_of, unit,
                         (log, la, log_at, log_end, log_marks), (wmi, cur, wm_at), system, u_obj, odd_role)
            payload_units = sum(units.values())
        bands = units  # each band's units become its tokens, in place
        if count is not None and not log.additive:  # else total(units, n) is units
            total = counter.total
            for k_, n_ in count.items():
                if n_:
                    bands[k_] = total(units[k_], n_)
        bands["tool_schemas"] = tool_tokens
        payload_tokens = counter.total(payload_units, n_out) + tool_tokens
        return _assembly(engine, budget, decision, sent, layout, bands, payload_tokens, trimmed, sanitized.repairs,
                         precut, sanitized.clean, declares, sanitized.verified)


def _chain_start(log: RowIndex, p: int, a0: int) -> int:
    """The trimmer group start (Q24) holding log row ``p`` in a history that begins at log row ``a0``:
    the recorded chain's when ``p``'s run of tool rows begins at or after ``a0``, else ``p`` itself
    (a result before the history's first non-tool row is a group of one there)."""
    if log.back[p] < a0:
        return p
    chain = log.chain
    return chain[bisect_right(chain, p) - 1]


def _msg_sum(pre: Sequence[int], a: int, off: int, end: int, messages: Sequence[Message],
             unit: Callable[[Message], int], i: int, j: int) -> int:
    """Units of ``messages[i:j]`` where ``messages[off:end]`` is the log range from row ``a`` (its
    running sums ``pre``) and every other row is measured by ``unit``. Module level and bound with
    :func:`functools.partial` rather than a closure: the assembly that makes one per call then keeps
    these names as plain locals (a closure's would be cells, made and read more slowly on every call)."""
    if off <= i and j <= end:
        return pre[a + j - off] - pre[a + i - off]
    return sum(pre[a + q - off + 1] - pre[a + q - off] if off <= q < end else unit(messages[q]) for q in range(i, j))


def _declares(sources: Sequence[tuple[RowIndex, int, int, int, str]], rid: str) -> bool:
    """Whether an ask inside one of the clean ``sources`` ranges declares call id ``rid`` (rule 6's
    label for the pairing pass, which does not read those rows; bound with :func:`functools.partial`)."""
    return any(idx.declares(rid, lo, hi) for idx, lo, hi, _at, _b in sources)


def _layout_rows(layout: list[PayloadRow | Span], units: dict[str, int], count: dict[str, int],
                 sanitized: SanitizeResult, sources: Sequence[tuple[RowIndex, int, int, int, str]],
                 out_in: Sequence[Message], band_of: Callable[[Message, bool], tuple[str, str | None]],
                 unit: Callable[[Message], int], log_part: tuple[RowIndex, int, int, int, tuple[int, ...]],
                 wm_part: tuple[RowIndex, int, int], system: Message | None, user: Message | None,
                 odd_role: bool) -> None:
    """The incremental layout row by row, for a payload the pairing pass changed or whose ranges hold
    a row the band rule singles out: the clean ranges in one step each, every other row read. A run
    of rows sent as they are, in their own band, from one index grows as one Span — the clean ranges
    and the rows between them alike (a face sees the same rows and bands as with one row a part).
    ``log_part`` is (index, first log row sent, its payload position, the end of the log rows in the
    payload, the log positions of the system band's row and the user row: :func:`_marks_of`); ``wm_part``
    (index, first row sent, its position); ``odd_role`` as :func:`_marks_of` gives it."""
    log, la, log_at, log_end, log_marks = log_part
    wmi, cur, wm_at = wm_part
    add = layout.append
    run_idx: RowIndex | None = None
    run_lo = run_hi = 0
    run_band = ""

    def flush() -> None:  # the run so far becomes a Span (callers check there is one)
        assert run_idx is not None
        add(Span(run_idx.rows, run_lo, run_hi, run_band))  # type: ignore[arg-type]
        units[run_band] += run_idx.pre[run_hi] - run_idx.pre[run_lo]
        count[run_band] += run_hi - run_lo

    prev_band = "working_memory"
    origin = sanitized.origin
    sent = sanitized.messages
    n_out = len(sent)
    spans = iter(zip(sanitized.clean, sources))
    nxt = next(spans, None)
    at_span = nxt[0][0] if nxt is not None else -1
    i = 0
    while i < n_out:  # the spans in one step each; only the rows between them one by one
        if i == at_span:
            (o_lo, o_hi), (idx, lo, hi, _at, band) = nxt  # type: ignore[misc]
            nxt = next(spans, None)
            at_span = nxt[0][0] if nxt is not None else -1
            if not (_singled_out(idx, lo, hi, log_marks, False) if idx is log else
                    _singled_out(idx, lo, hi, None, odd_role, system, user)):
                if run_idx is idx and run_hi == lo:
                    run_hi = hi
                else:
                    if run_idx is not None:
                        flush()
                    run_idx, run_lo, run_hi, run_band = idx, lo, hi, band
                prev_band = band
                i = o_hi
                continue
            # else its rows are read one by one below, like the rows between the clean ranges
        out = sent[i]
        org = origin[i]
        i += 1
        if org is None:
            if run_idx is not None:
                flush()
                run_idx = None
            add(PayloadRow(out, prev_band, "empty_result", None))
            units[prev_band] += unit(out)
            count[prev_band] += 1
            continue
        src = out_in[org]
        in_wm = org >= wm_at
        b, syn = band_of(src, in_wm)
        prev_band = b
        if out is src and syn is None:
            row_idx: RowIndex | None = None
            if in_wm and b == "working_memory":
                row_idx, q = wmi, cur + org - wm_at
            elif log_at <= org < log_end and b == "history":
                row_idx, q = log, la + org - log_at
            if row_idx is not None:
                if run_idx is row_idx and run_hi == q:
                    run_hi += 1
                else:
                    if run_idx is not None:
                        flush()
                    run_idx, run_lo, run_hi, run_band = row_idx, q, q + 1, b
                continue
        if run_idx is not None:
            flush()
            run_idx = None
        add(PayloadRow(out, b, syn, src))
        units[b] += unit(out)
        count[b] += 1
    if run_idx is not None:
        flush()


def _marks_of(pos: Mapping[int, int], system: Message | None, user: Message | None) -> tuple[tuple[int, ...], bool]:
    """What :func:`_singled_out` needs of the system band's row and the user row (``user`` None when
    there is none), read once while they and the log stay the same: their positions in the committed
    log (``pos``: its positions by identity), and whether either has an assistant or tool role."""
    marks: list[int] = []
    odd = False
    for obj in (system, user):
        if obj is not None:
            p = pos.get(id(obj))
            if p is not None:
                marks.append(p)
            if obj.get("role") in ("assistant", "tool"):
                odd = True
    return tuple(marks), odd


def _singled_out(idx: RowIndex, lo: int, hi: int, log_marks: tuple[int, ...] | None, odd_role: bool,
                 system: Message | None = None, user: Message | None = None) -> bool:
    """Whether a row of ``idx.rows[lo:hi]`` is one the band rule (:func:`_band_rule`) gives a band
    other than its range's: the system band's row, the current user row (``user``, None when there
    is none) or, in the committed log, a summary block. ``log_marks`` and ``odd_role`` come from
    :func:`_marks_of`: for the committed log ``log_marks`` are the positions of the first two in it
    (the rows themselves are not needed); for working memory it is None and ``system``/``user`` are
    looked for among its rows that are neither assistant nor tool rows (when either of the two has
    such a role, ``odd_role``, it cannot tell: True). O(log rows) by bisection."""
    if hi <= lo:
        return False
    if log_marks is not None:
        for p in log_marks:
            if lo <= p < hi:
                return True
        return idx.has_block(lo, hi)
    if odd_role:
        return True
    odd = idx.others_in(lo, hi)
    if not odd:
        return False
    rows = idx.rows
    assert rows is not None
    return any((system is not None and rows[p] is system) or (user is not None and rows[p] is user) for p in odd)


@dataclass(slots=True)
class _Call:
    """What the reference path's assembly starts from (the incremental path takes the same facts as
    arguments: it runs on every call, and building this record would be a per-call cost)."""

    engine: ContextEngine
    system: Message | None
    past: list[Message]
    wm: list[Message]
    user: Message
    has_user: bool
    tool_tokens: int
    budget: Budget
    managed: Sequence[Message]
    decision: CMDecision
    hitl: bool


def _band_rule(system: Message | None, user: Message, has_user: bool, placeholder: bool,
               own_system: bool) -> Callable[[Message, bool], tuple[str, str | None]]:
    """The band (and synthetic kind) of a payload row from the row it came from (one rule, both paths).
    ``own_system``: the system band's row is the conversation's own system message (the transcript's),
    not one the engine built (then its rows are marked ``system_band``)."""

    def band_of(src: Message, in_wm: bool) -> tuple[str, str | None]:
        if system is not None and src is system:
            return "system", None if own_system else "system_band"
        if src is HELLO and placeholder:
            return "user", "placeholder"
        if has_user and src is user:
            return "user", None
        if in_wm:
            return "working_memory", None
        if is_summary_block(src):
            return "summary", "summary"
        return "history", None

    return band_of


def _assembly(engine: ContextEngine, budget: Budget, decision: CMDecision, messages: list[Message],
              layout: list[PayloadRow | Span], bands: dict[str, int], payload_tokens: int, trimmed: TrimResult,
              repairs: list[Repair], precut: Sequence[Message], clean: list[tuple[int, int]],
              skip_declares: Callable[[str], bool] | None, verified: bool) -> Assembly:
    """The call's record, both paths: headroom, warnings, the tools sent and the repaired rows
    (every field given in order, none left to a default: one is built on every LLM call)."""
    headroom = budget.max_tokens - payload_tokens - budget.reserve - budget.margin
    limits = engine.limits
    warnings: list[str] = list(limits.warnings)
    if trimmed.over_budget:
        warnings.append("pinned content alone exceeds the budget (system band, current user turn, newest "
                        "working-memory group)")
    tools = engine.tools
    if repairs:
        given = trimmed.messages
        repaired = [given[r.index] if r.index is not None and 0 <= r.index < len(given) else None for r in repairs]
    else:
        repaired = []
    return Assembly(messages, list(tools) if tools else None, layout, budget, limits, bands,
                    payload_tokens, headroom, decision, trimmed.removed, repairs, "ok",
                    engine.conversation.turn_index, warnings, precut, clean, skip_declares, verified, repaired)


class ContextEngine:
    """Manifest in, paired and budgeted ``messages[]`` out, plus the record of what was done.

    One instance per agent conversation: it owns the context manager (and so the hysteresis cache),
    the token counter's per-message cache, and the conversation state.
    """

    def __init__(self, settings: ManifestSource, *, counter: str | TokenCounter = "tiktoken", llm: LLMEngine | None = None,
                 summarizer: Any = "manifest", summary_cache: Any = None, registry: Registry | None = None,
                 allow_imports: Iterable[str] = (), tools: Sequence[dict[str, Any]] | None = None,
                 calibration: Mapping[str, float] | None = None) -> None:
        self.settings = as_settings(settings, allow_imports)
        self.registry = registry or default_registry()
        self.limits = resolve_limits(self.settings)
        self.counter: TokenCounter = make_counter(counter, self.limits.effective_model) if isinstance(counter, str) \
            else counter
        # opt-in token calibration (manifest token_calibration or ``calibration={model: factor}``)
        self.calibration, self.calibration_source = resolve_calibration(
            self.settings.primary_model(), self.limits, self.counter.name, calibration)
        self.llm = llm
        self.cm = build_context_manager(self.settings, self.counter, registry=self.registry, summarizer=summarizer,
                                        llm=llm, summary_cache=summary_cache, allow_imports=allow_imports)
        self.assembler = self._build_assembler(allow_imports)
        self.tools: list[dict[str, Any]] | None = list(tools) if tools is not None else (
            [dict(t) for t in self.settings.tools] if self.settings.tools else None)
        self.conversation = Conversation(injected_context=list(self.settings.injected_context),
                                         memory_seeds=list(self.settings.memory_seeds))
        self.summarizer_calls = {"in_turn": 0, "commit": 0}
        self._system_cache: tuple[str, Message] | None = None
        self._log_runs = LogRuns()  # the committed log's turn starts, for the write-back's recency cap
        self._ids_converted: list[str] = []  # numeric ids record() converted since the last call (Q19)

    @classmethod
    def from_manifest(cls, path: str | Path, **kw: Any) -> ContextEngine:
        return cls(path, **kw)

    def _build_assembler(self, allow_imports: Iterable[str]) -> Any:
        binding = self.settings.assembler
        if binding.ref and self.registry.find("assembler", binding.type) is None:
            spec = self.registry.resolve_ref("assembler", binding.ref, allow_imports=allow_imports)
        else:
            spec = self.registry.resolve("assembler", binding.type, field_path="spec.assembler")
        obj = spec.load()(**dict(binding.params))
        if not hasattr(obj, "assemble"):
            raise TypeError(f"spec.assembler: {type(obj).__name__} has no assemble()")
        return obj

    # -- the system band (rebuilt per call, never accumulates: docs/design.md Q15) -----------
    def system_message(self) -> Message | None:
        conv = self.conversation
        if conv.system_message is not None:
            return conv.system_message
        lines = [s.strip() for s in conv.injected_context if isinstance(s, str) and s.strip()]
        lines += [f"[memory:{k}] {v}".strip() for k, v in conv.memory_seeds if str(v).strip()]
        parts = sorted(self.settings.parts, key=lambda p: (
            PLACEMENTS.index(p.placement) if p.placement in PLACEMENTS else 99, p.priority))
        lines += [p.content.strip() for p in parts if p.content.strip()]
        if not lines:
            return None
        text = "\n\n".join(lines)
        if self._system_cache is None or self._system_cache[0] != text:
            self._system_cache = (text, {"role": "system", "content": text})
        return self._system_cache[1]

    # -- the loop -------------------------------------------------------------------------------
    def user(self, text: str | Message) -> None:
        self.conversation.note_user_input(text)

    def record(self, msg: Message) -> None:
        """Append one in-flight row (an assistant message or a tool result). A numeric tool-call id
        becomes its string form here, as at import (Q19, :mod:`inspector.ids`): the row recorded is
        a converted copy, and the next call's record says so in its warnings."""
        msg, changed = stringify_ids(msg)
        if changed:
            self._ids_converted += changed
        self.conversation.record(msg)

    def assemble(self, *, strict: bool = True) -> Assembly:
        """Build this call's payload. ``strict`` raises :class:`ProviderPayloadError` when the final
        check fails (as the kernel does); otherwise the verdict is recorded in ``check``."""

        assembler = self.assembler
        result: Assembly = assembler.assemble(self)
        if result.decision.summarizer_called:
            self.summarizer_calls["in_turn"] += 1
        if self._ids_converted:
            warnings = getattr(result, "warnings", None)
            if isinstance(warnings, list):
                warnings.append("non-string tool-call id converted to a string when recorded: "
                                + ", ".join(self._ids_converted))
            self._ids_converted = []
        try:
            # The final check nothing can skip. Its shortcuts (``verified``: the pairing pass read the
            # payload as the check does; ``clean``: ranges it need not read) are trusted only when the
            # rows sent are provably the rows checked: the default assembler itself returned this record
            # (not a subclass, a wrapper or a patched method, any of which may edit ``messages`` after it
            # was checked). Any other assembler's payload is checked whole.
            if type(assembler) is ContextAssembler and "assemble" not in vars(assembler) and type(result) is Assembly:
                if not result.verified:
                    check_provider_payload(result.messages, skip=result.clean, skip_declares=result.skip_declares)
            else:
                check_provider_payload(result.messages)
        except ProviderPayloadError as exc:
            result.check = str(exc)
            if strict:
                raise
        return result

    def commit(self, text: str | None = None) -> CommitRecord:
        """``note_agent_response``: archive the turn as one leaf, then write back the recency cap."""
        conv = self.conversation
        turn = conv.turn_index
        rows = conv.commit_rows(text)
        return self._write_back(turn, len(rows))

    def finalize_turn(self, text: str | None = None) -> CommitRecord | None:
        """The session controller's finalize with the HITL fix: fold whenever there is something to fold
        (a turn paused for a human's answer commits its open ask, and the answer pairs across the boundary)."""
        if (text and text.strip()) or self.conversation.working:
            return self.commit(text)
        return None

    def _write_back(self, turn: int, committed_rows: int) -> CommitRecord:
        conv = self.conversation
        past = conv.committed_messages
        cm = self.cm
        turn_cap = getattr(cm, "turn_cap", None)
        msg_cap = getattr(cm, "message_cap", None)
        # the turn count from running starts (each committed row read once), not a split per commit: a
        # shipped manager's own, which its decision reads next (one reader of the log, not two)
        runs = cm.log_runs if is_manager(cm) else self._log_runs.sync
        over = (turn_cap is not None and len(runs(past).starts) > turn_cap) or \
               (msg_cap is not None and len(past) > msg_cap)
        if not over:
            return CommitRecord(turn, "unchanged", False, 0, None, conv.archive.stats(), committed_rows)
        result = manage(cm, past, 1)
        managed, d = result.messages, result.decision
        if d.summarizer_called:
            self.summarizer_calls["commit"] += 1
        if d.action == "summarizer-failed":
            # Deliberate: a failed summary at commit leaves the stored log as it was (the next commit
            # retries) instead of writing back the verbatim tail and losing the older turns.
            return CommitRecord(turn, d.action, True, 0, d.error, conv.archive.stats(), committed_rows)
        kind = fold_kind(d.action)
        text_ = d.summary_text if kind == "summary" else None
        conv.archive.apply_managed(managed, kind, text_)  # type: ignore[arg-type]
        return CommitRecord(turn, d.action, d.summarizer_called, d.compressed_turns + d.dropped_turns, d.error,
                            conv.archive.stats(), committed_rows, list(d.folded))
