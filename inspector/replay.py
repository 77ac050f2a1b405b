"""Replay: drive the engine with a transcript, one frame per LLM call (docs/design.md §5).

Each ``assistant`` message in the transcript is one LLM call: before it, the engine assembles the
payload with working memory = the turn's rows so far (a **frame**); then the assistant message
and the tool results after it are recorded. A ``user`` message commits the previous turn (a
**commit record**: the write-back fold, summarizer called or not) and starts the next. A
transcript that ends without a reply yields one last frame: the payload that would be sent next.

Frames hold transcript *indices* and the few synthesised rows (system band, summary block, empty
results), never copies of transcript messages, so a long replay stays small. The same inputs give
byte-identical JSON (no clocks, no ordering by hash).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from operator import ne
from pathlib import Path
from typing import Any, NamedTuple, ParamSpec, TypeVar

from inspector.engine import Assembly, CommitRecord, ContextAssembler, ContextEngine, PayloadRow
from inspector.engine.budget import Budget
from inspector.engine.history import role_of
from inspector.engine.llm import LLMEngine
from inspector.engine.managers.base import NO_TERMS, BudgetTerms, CMAction, CMDecision, budget_terms
from inspector.engine.summarizers import Summarizer, as_summarizer, calls_a_model
from inspector.engine.summarizers.llm import SummaryCache
from inspector.engine.summarizers.standin import StandInSummarizer
from inspector.engine.summary_block import is_summary_block
from inspector.engine.types import Message, Removals, Repair, RowsView, Span
from inspector.manifest import as_settings

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")
from inspector.policy import (
    DEFAULT_POLICY,
    NO_MANIFEST,
    SUMMARIZER_MODES,
    AgentInForce,
    ReplayPolicy,
    resolve_agent,
    summarizer_choice,
)

__all__ = ["PENDING_WORDS", "SUMMARIZER_MODES", "Commit", "Frame", "Replay", "replay"]

PENDING_WORDS = "next call, never made"
"""How every face marks the pending next call (:attr:`Replay.pending_call`): the call a transcript
that ends on a tool result or a user message would make next, which the agent never made."""

SUMMARY_TRIMMED = "summary block computed but trimmed for budget (token trimmer): the model saw neither it " \
                  "nor the turns it summarises"
"""Why a computed summary block is not in the payload (Q18): the only cut that can remove one."""


def _ranges(indices: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted indices as half-open ranges: a stack replay trims thousands of rows per frame."""
    out: list[tuple[int, int]] = []
    for i in sorted(indices):
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def _row_ranges(rows: Sequence[Message], refs: _Refs) -> tuple[tuple[int, int], ...]:
    """``_ranges`` of the rows' transcript indices (rows of none left out): what a fold removed.

    The rows of a fold are a prefix of the committed log, which holds transcript messages in
    transcript order (the premise :meth:`_Refs.runs` rests on too), so when the two ends are
    ``len − 1`` apart the rows are that one range, read from the ends; otherwise every row is looked up."""
    if not rows:
        return ()
    n = len(rows)
    a = refs.whole(rows, 0, n)
    if a is not None:
        return ((a, a + n),)
    return tuple(_ranges(r for r in (refs.get(m) for m in rows) if r is not None))


def expand_ranges(ranges: Sequence[tuple[int, int]]) -> list[int]:
    """Every transcript index in ``[start, end)`` ranges, in order (frames record runs, not lists)."""
    return [i for a, b in ranges for i in range(a, b)]


def _merge(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(a + b):
        if out and lo <= out[-1][1]:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


Segment = tuple[int | None, int, str, str | None, Message | None]
"""One run of payload rows: ``(ref, n, band, synthetic, own)``. With ``own`` None, the rows are the
transcript messages ``ref .. ref + n − 1`` as they are; otherwise one row (``n`` = 1) that is not a
transcript message as is (synthesised, or a rebound copy of message ``ref``)."""


@dataclass(slots=True)
class Frame:
    """One LLM call. The payload is kept as :data:`Segment` runs of transcript indices (a long
    history is one run), so a frame's size does not grow with the history; ``refs``, ``row_bands``,
    ``synthetic``, ``own`` and :meth:`payload` expand it on demand.

    The record is read-only once made: its sequences are tuples (an empty one is the shared ``()``).
    A replay keeps thousands of frames alive, and every list a frame held was one more object each
    garbage collection walked for the rest of the replay (most of them empty: no fold, no repair,
    no warning on most calls); a tuple of plain values is dropped from the collector's tracking."""

    turn: int  # 1-based; 0 = preamble
    step: int  # 0-based LLM call within the turn
    at: int  # transcript index of the reply this call produced (len(messages) for the pending call)
    budget: Budget  # the engine's own record of this call's budget
    bands: dict[str, int]
    payload_tokens: int
    headroom: int
    decision: CallDecision  # what the context manager did on this call (JSON key "cm")
    segments: Sequence[Segment]
    trimmed: Sequence[tuple[int, int]]  # transcript index ranges removed by the trimmer
    trimmed_synthetic: int  # synthesised rows (e.g. a summary block) removed by the trimmer
    folded: Sequence[tuple[int, int]]  # transcript index ranges folded by the manager this call
    repairs: Sequence[FrameRepair]
    check: str
    cost_usd: float | None
    usage: dict[str, Any] | None  # provider-reported usage of this call, when the transcript has it
    summary_text: str | None
    warnings: Sequence[str]
    summary_cost_usd: float | None = 0.0  # live summarizer calls made for this call (None = price unknown)
    not_sent: Sequence[dict[str, Any]] = ()
    """Synthesised rows computed for this call but not sent, each ``{kind, reason, tokens, content}``
    (Q18: a summary block the trimmer removed is listed here, never shown as sent)."""

    @property
    def refs(self) -> list[int | None]:
        """Payload row → transcript index (None = synthesised)."""
        out: list[int | None] = []
        for ref, n, _band, _syn, own in self.segments:
            if own is None and ref is not None:
                out.extend(range(ref, ref + n))
            else:
                out.append(ref)
        return out

    @property
    def row_bands(self) -> list[str]:
        return [band for _r, n, band, _s, _o in self.segments for _ in range(n)]

    @property
    def synthetic(self) -> list[str | None]:
        return [syn for _r, n, _b, syn, _o in self.segments for _ in range(n)]

    @property
    def own(self) -> dict[int, Message]:
        """Payload rows that are not a transcript message as is (synthesised, rebound), by position."""
        out: dict[int, Message] = {}
        k = 0
        for _r, n, _b, _s, own in self.segments:
            if own is not None:
                out[k] = own
            k += n
        return out

    @property
    def message_count(self) -> int:
        return sum(seg[1] for seg in self.segments)

    @property
    def summary_sent(self) -> bool:
        """Whether a summary block is in this call's payload."""
        return any(seg[2] == "summary" for seg in self.segments)

    @property
    def input_budget(self) -> int:
        """The trimmer's ceiling for the payload: max_tokens − completion reserve − safety margin."""
        return self.budget.max_tokens - self.budget.trimmer_reserve

    def payload(self, transcript_messages: Sequence[Message]) -> list[Message]:
        out: list[Message] = []
        for ref, n, _b, _s, own in self.segments:
            if own is not None:
                out.append(own)
            elif ref is not None:
                out.extend(transcript_messages[ref:ref + n])
        return out

    def to_json(self, transcript_messages: Sequence[Message] | None = None) -> dict[str, Any]:
        d: dict[str, Any] = {
            "turn": self.turn, "step": self.step, "at": self.at, "budget": _budget_json(self.budget),
            "bands": self.bands, "payload_tokens": self.payload_tokens, "headroom": self.headroom,
            "cm": record_json(self.decision, DECISION_FIELDS),
            "messages": self.message_count, "trimmed": [list(r) for r in self.trimmed],
            "trimmed_synthetic": self.trimmed_synthetic,
            "folded": [list(r) for r in self.folded], "repairs": [r.to_json() for r in self.repairs],
            "check": self.check,
            "cost_usd": self.cost_usd, "summary_cost_usd": self.summary_cost_usd, "usage": self.usage,
            "summary": self.summary_text, "summary_sent": self.summary_sent, "not_sent": list(self.not_sent),
            "warnings": list(self.warnings),
        }
        if transcript_messages is not None:
            rows = []
            refs, synthetic, bands = self.refs, self.synthetic, self.row_bands
            for k, msg in enumerate(self.payload(transcript_messages)):
                row: dict[str, Any] = {"role": msg.get("role"), "content": msg.get("content")}
                if msg.get("tool_calls"):
                    row["tool_calls"] = msg["tool_calls"]
                if msg.get("tool_call_id") is not None:
                    row["tool_call_id"] = msg["tool_call_id"]
                row.update(ref=refs[k], synthetic=synthetic[k], band=bands[k])
                rows.append(row)
            d["payload"] = rows
        return d


class CallDecision(NamedTuple):
    """What the context manager did on one call, as kept on a :class:`Frame`: the engine's
    :class:`~inspector.engine.managers.base.CMDecision` without the rows it folded (those are the
    frame's ``folded`` ranges) or the summary text (``Frame.summary_text``), so a frame stays small.

    Immutable, and a :class:`~typing.NamedTuple` rather than a frozen dataclass (like the engine's
    :class:`~inspector.engine.budget.Budget`): a replay makes a new one about once a turn, and a
    frozen dataclass sets each of its 7 fields through ``object.__setattr__`` (about 0.5 µs more a
    record here); a tuple is built in one step."""

    action: CMAction
    compressed_turns: int
    kept_turns: int
    dropped_turns: int
    summarizer_called: bool
    error: str | None
    raw_tokens: int | None

    @classmethod
    def of(cls, d: CMDecision) -> CallDecision:
        return cls(d.action, d.compressed_turns, d.kept_turns, d.dropped_turns, d.summarizer_called, d.error,
                   d.raw_tokens)


@dataclass(frozen=True, slots=True)
class FrameRepair:
    """One pairing repair of a call: the engine's :class:`~inspector.engine.types.Repair` and the
    transcript index of the message it concerned (``ref``; None when the row was synthesised, e.g.
    an empty result the repair added, or the repair names no single row)."""

    repair: Repair
    ref: int | None

    def to_json(self) -> dict[str, Any]:
        return {**self.repair.as_dict(), "ref": self.ref}


BUDGET_FIELDS: tuple[str, ...] = ("window", "window_source", "reserve", "reserve_source", "margin", "max_tokens",
                                  "fixed", "hard", "hint", "ceiling", "calibration", "calibration_source")
"""The :class:`~inspector.engine.budget.Budget` fields a frame's JSON shows, in their order (a
replay file's ``budget`` object; the record holds a few more the JSON never carried)."""
DECISION_FIELDS: tuple[str, ...] = CallDecision._fields
"""A frame's ``cm`` object: every :class:`CallDecision` field, in declaration order."""


def _budget_json(budget: Any) -> dict[str, Any]:
    """A frame's ``budget`` object: :data:`BUDGET_FIELDS`, plus ``prefix`` and ``prefix_source`` when an
    unrecorded prefix was added to the budget (a replay without one reads as before)."""
    out = record_json(budget, BUDGET_FIELDS)
    if budget.prefix:
        out.update(prefix=budget.prefix, prefix_source=budget.prefix_source)
    return out


def record_json(record: Any, names: Sequence[str]) -> dict[str, Any]:
    """The one serializer of a frame's typed records: the named fields, in order."""
    return {name: getattr(record, name) for name in names}


@dataclass(slots=True)
class Commit:
    turn: int
    action: str
    summarizer_called: bool
    folded_turns: int
    error: str | None
    archive: dict[str, int]
    folded: Sequence[tuple[int, int]] = ()  # transcript ranges that left the stored log (a tuple: see Frame)
    summary_cost_usd: float | None = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.turn, "cm": self.action, "summarizer_called": self.summarizer_called,
                "folded_turns": self.folded_turns, "folded": [list(r) for r in self.folded], "error": self.error,
                "summary_cost_usd": self.summary_cost_usd, "archive": self.archive}


@dataclass
class Replay:
    transcript: Any
    settings: Any
    counter: str
    summarizer_mode: str
    summarizer_label: str
    frames: list[Frame] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    summarizer_calls: dict[str, int] = field(default_factory=lambda: {"in_turn": 0, "commit": 0})
    summarizer_failures: int = 0
    summary_cache_hits: int = 0
    summary_cost_usd: float | None = 0.0
    tokens_computed: int = 0
    limits: dict[str, Any] = field(default_factory=dict)
    token_counter: Any = None  # the replay's own counter: reports reuse its per-message cache, never recount
    policy: ReplayPolicy = DEFAULT_POLICY
    summary_price_model: str | None = None  # the stand-in's estimated summaries are priced at this model's rates
    agent: AgentInForce | None = None  # the system text, tools, model and window in force, with sources (Q21)
    unrecorded: Any = None
    """The transcript's unrecorded prefix (:class:`inspector.calibration.PrefixEstimate`) when its log
    leaves out the system prompt or tools, or when the user added one to the budget; else None."""
    terms: BudgetTerms = NO_TERMS
    """What the replay's context manager added to every call's budget (whether it summarises, its
    hysteresis ratio and summary threshold): what faces read instead of the manager's name or params."""
    views: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """Views the report layer derives from this replay once (masked previews, per-call indexes),
    by name; read through :meth:`view`. Never serialised: a view is a function of the replay."""

    def view(self, name: str, make: Callable[[], T]) -> T:
        """The derived view ``name``, made by ``make()`` on first use and kept on this replay (so a
        face stepping through a long conversation computes it once, and two replays never share it)."""
        if name not in self.views:
            self.views[name] = make()
        made: T = self.views[name]
        return made

    def stated(self) -> list[str]:
        """What every face prints above a replay: the policy, the agent, the summarizer (Q21, Q22)."""
        lines = [self.policy.describe()]
        if self.agent is not None:
            lines.append(self.agent.describe())
        lines.append(f"summarizer: {self.summarizer_label}")
        prefix = self.prefix_line()
        if prefix:
            lines.append(prefix)
        return lines

    def prefix_line(self) -> str:
        """The unrecorded prefix in words: what the log leaves out, the estimate, and whether this
        budget counts it (``unrecorded prefix: …``); empty when there is nothing to say."""
        est = self.unrecorded
        added = int(self.limits.get("unrecorded_prefix") or 0)
        if added:
            return (f"unrecorded prefix: {added:,} tokens added to the budget as a fixed part of every call "
                    f"({self.limits.get('unrecorded_prefix_source')})")
        if est is None or not est.missing:
            return ""
        size = f"≈ {est.tokens:,} tokens (estimated: fitted offset of the recorded usage)" if est.tokens is not None \
            else "size unknown (no usage to fit)"
        return (f"unrecorded prefix: the log does not record the {' or the '.join(est.missing)}, {size}; NOT in "
                "this budget, so the headroom is overstated by that much (add it: --unrecorded-prefix auto)")

    @property
    def messages(self) -> list[Message]:
        return self.transcript.messages

    @property
    def pending_call(self) -> int | None:
        """Index of the **pending next call**, or None. A transcript that ends without a reply (on a
        tool result or a user message) gets one last frame: the payload that would be sent next
        (docs/design.md). The agent never made that call, so :meth:`totals` (and the sweep rows, fleet
        summaries and table totals built on them) leave it out by default; every face shows it
        marked with :data:`PENDING_WORDS`."""
        frames = self.frames
        return len(frames) - 1 if frames and frames[-1].at >= len(self.transcript.messages) else None

    def counted_frames(self, *, include_pending: bool = False) -> list[Frame]:
        """The calls the agent made: every frame but the pending next call (unless ``include_pending``)."""
        k = None if include_pending else self.pending_call
        return self.frames if k is None else self.frames[:k]

    def totals(self, *, include_pending: bool = False) -> dict[str, Any]:
        """Totals and peaks over the calls the agent made; the pending next call (if any) is left out
        unless ``include_pending`` — its payload and the summary computed for it (a summarizer call,
        failure and cost) — and ``pending_calls_left_out`` (present only then) says so."""
        frames = self.counted_frames(include_pending=include_pending)
        left_out = len(self.frames) - len(frames)
        summarizer_calls = dict(self.summarizer_calls)
        summary_cost = self.summary_cost_usd
        failures = self.summarizer_failures
        if left_out and self.frames[-1].decision.summarizer_called:  # its summary was never asked for either
            summarizer_calls["in_turn"] = max(0, summarizer_calls["in_turn"] - 1)
            failures -= self.frames[-1].decision.action == "summarizer-failed"
            pending_cost = self.frames[-1].summary_cost_usd
            summary_cost = None if summary_cost is None or pending_cost is None else \
                round(summary_cost - pending_cost, 8)
        costs = [f.cost_usd for f in frames]
        payload_cost = None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 8)
        total_cost = None if payload_cost is None or summary_cost is None else \
            round(payload_cost + summary_cost, 8)
        out = {
            "frames": len(frames),
            "payload_tokens": sum(f.payload_tokens for f in frames),
            "max_payload_tokens": max((f.payload_tokens for f in frames), default=0),
            "over_budget": sum(1 for f in frames if f.headroom < 0),
            "summarizer_calls": summarizer_calls,
            "folds": self.folds(frames),
            "summarizer_failures": failures,
            "summary_cache_hits": self.summary_cache_hits,
            "repairs": sum(len(f.repairs) for f in frames),
            "trimmed": sum(b - a for f in frames for a, b in f.trimmed) + sum(f.trimmed_synthetic for f in frames),
            "folded": sum(b - a for f in frames for a, b in f.folded),
            "checks_failed": sum(1 for f in frames if f.check != "ok"),
            "payload_cost_usd": payload_cost,
            "summary_cost_usd": summary_cost,
            "cost_usd": total_cost,
        }
        if left_out:
            out["pending_calls_left_out"] = left_out
        return out

    def folds(self, frames: Sequence[Frame] | None = None) -> dict[str, int]:
        """Older turns left out without a model call (Q20): ``drop``, or ``llm`` with no live model.
        Shown beside, never inside, the summarizer calls. ``frames``: the calls to count (default all)."""
        return {"in_turn": sum(1 for f in (self.frames if frames is None else frames)
                               if f.decision.action == "dropped"),
                "commit": sum(1 for c in self.commits if c.action == "dropped")}

    def to_json(self, *, payloads: bool = False) -> dict[str, Any]:
        t = self.transcript
        msgs = t.messages
        return {
            "transcript": {"format": t.format, "path": t.path, "conversation": getattr(t, "conversation", 0),
                           "messages": len(msgs), "turns": sum(1 for m in msgs if m.get("role") == "user")},
            "settings": {**self.settings.to_dict(), "counter": self.counter, "summarizer_mode": self.summarizer_mode,
                         "summarizer_label": self.summarizer_label, "limits": self.limits,
                         "policy": self.policy.as_dict(),
                         "agent": self.agent.as_dict() if self.agent is not None else None},
            "frames": self._frames_json(payloads),
            "commits": [c.to_json() for c in self.commits],
            "totals": self.totals(),
        }

    def _frames_json(self, payloads: bool) -> list[dict[str, Any]]:
        msgs = self.transcript.messages
        out = [f.to_json(msgs if payloads else None) for f in self.frames]
        k = self.pending_call
        if k is not None:  # the one frame the agent never sent: marked, and left out of "totals"
            out[k]["pending"] = True
        return out

    def dumps(self, *, payloads: bool = False) -> str:
        """The replay as JSON text, secrets masked (this is what leaves the process)."""
        from inspector.redact import mask_secrets

        return json.dumps(mask_secrets(self.to_json(payloads=payloads)), ensure_ascii=False, indent=1, sort_keys=False)


class _Refs:
    """Transcript index of each message object, and runs of a row list mapped to transcript ranges.

    The committed log and working memory hold transcript messages in transcript order, so a run
    ``rows[lo:hi]`` whose two ends are ``hi − lo − 1`` apart in the transcript is one range: found by
    looking at its ends, halving only where the run is not contiguous (O(log n) per break)."""

    def __init__(self, msgs: Sequence[Message]) -> None:
        self.ref = dict(zip(map(id, msgs), count()))  # id → index, later duplicates win (built in C)
        self.msgs = msgs

    def get(self, m: Message) -> int | None:
        r = self.ref.get(id(m))
        return r if r is not None and self.msgs[r] is m else None

    def whole(self, rows: Sequence[Message], lo: int, hi: int) -> int | None:
        """The transcript index of ``rows[lo]`` when ``rows[lo:hi]`` (not empty) is one transcript
        run — its two ends are transcript messages ``hi − lo − 1`` apart — else None. The usual
        case of every run a frame records, answered from the two ends alone."""
        m0, m1 = rows[lo], rows[hi - 1]
        ref_of, msgs = self.ref, self.msgs
        a, b = ref_of.get(id(m0)), ref_of.get(id(m1))
        if a is not None and b is not None and b - a == hi - lo - 1 and msgs[a] is m0 and msgs[b] is m1:
            return a
        return None

    def add_run(self, ranges: list[tuple[int, int]], rows: Sequence[Message], lo: int, hi: int) -> int:
        """Append the transcript ranges of ``rows[lo:hi]`` to ``ranges``; return how many of its rows
        are synthesised (no transcript index)."""
        if hi <= lo:
            return 0
        a = self.whole(rows, lo, hi)
        if a is not None:
            ranges.append((a, a + hi - lo))  # one run: the usual case
            return 0
        extra = 0
        for ref, n in self.runs(rows, lo, hi):
            if ref is None:
                extra += n
            else:
                ranges.append((ref, ref + n))
        return extra

    def runs(self, rows: Sequence[Message], lo: int, hi: int) -> Iterator[tuple[int | None, int]]:
        """``(ref, n)`` runs covering ``rows[lo:hi]`` in order; ``ref`` None for a row of no transcript index."""
        if hi <= lo:
            return
        a = self.whole(rows, lo, hi)
        if a is not None:
            yield a, hi - lo
            return
        if hi - lo == 1:
            yield None, 1
            return
        mid = (lo + hi) // 2
        yield from self.runs(rows, lo, mid)
        yield from self.runs(rows, mid, hi)


def _segments(layout: Iterable[PayloadRow | Span], refs: _Refs) -> list[Segment]:
    """The payload (an assembly's layout) as :data:`Segment` runs: spans by their ends, single rows by identity.

    O(layout parts + breaks in the spans), never O(payload rows): a long history is one span. The
    plain transcript run being extended is kept in locals and written once, when it ends (a call's
    layout is a handful of parts, each read once, so the per-part work is what a frame costs).

    The usual part is one plain run: a span whose two ends are transcript messages ``len − 1``
    apart (:meth:`_Refs.whole`), or a row that is a transcript message as is (its own source, no
    synthetic kind). It is merged into the open run right here;
    any other part (a span of several runs or of rows of no transcript index, a synthesised or
    rebound row) is broken up by :func:`_part_segments`, whose plain runs merge the same way."""
    out: list[Segment] = []
    add = out.append
    whole, get = refs.whole, refs.get
    # the open plain transcript run (it may grow): first ref, length, band; band None = no open run
    o_ref, o_n, o_band = 0, 0, None
    for part in layout:
        if type(part) is Span:
            rows, lo, hi = part.rows, part.lo, part.hi
            if hi <= lo:
                continue
            n = hi - lo
            ref = whole(rows, lo, hi)  # None: not one transcript run
        else:
            msg = part.message  # type: ignore[union-attr]
            n = 1
            ref = get(msg)
            if ref is not None and (part.source is not msg or part.synthetic is not None):  # type: ignore[union-attr]
                ref = None  # not a transcript message as is
        if ref is not None:  # one plain run: the usual case
            band = part.band
            if o_band == band and o_ref + o_n == ref:
                o_n += n
            else:
                if o_band is not None:
                    add((o_ref, o_n, o_band, None, None))
                o_ref, o_n, o_band = ref, n, band
            continue
        for seg in _part_segments(part, refs):
            ref, n, band, kind, own = seg
            if kind is None and own is None and ref is not None:  # a plain run
                if o_band == band and o_ref + o_n == ref:
                    o_n += n
                    continue
                if o_band is not None:
                    add((o_ref, o_n, o_band, None, None))
                o_ref, o_n, o_band = ref, n, band
            else:
                if o_band is not None:
                    add((o_ref, o_n, o_band, None, None))
                    o_band = None
                add(seg)
    if o_band is not None:
        add((o_ref, o_n, o_band, None, None))
    return out


def _part_segments(part: PayloadRow | Span, refs: _Refs) -> Iterator[Segment]:
    """The :data:`Segment` runs of one layout part that is not one plain transcript run (see
    :func:`_segments`, which merges adjacent plain runs): a span's runs in order, each row of no
    transcript index its own row; a single row with its transcript index (None when synthesised;
    a rebound copy takes its source's) and its synthetic kind."""
    if type(part) is Span:
        rows, lo, band = part.rows, part.lo, part.band
        for ref, n in refs.runs(rows, lo, part.hi):
            if ref is None:  # not a transcript message: kept as its own row
                for m in rows[lo:lo + n]:
                    yield None, 1, band, None, m
            else:
                yield ref, n, band, None, None
            lo += n
        return
    msg, src, band = part.message, part.source, part.band  # type: ignore[union-attr]
    r = refs.get(msg)
    if r is not None and msg is src:
        own = None  # a transcript message as is
    else:
        own = msg
        if r is None and src is not None:
            r = refs.get(src)
    kind = part.synthetic  # type: ignore[union-attr]
    if kind is None and r is None:
        kind = "system_band" if band == "system" else ("summary" if band == "summary" else None)
    yield r, 1, band, kind, own


def _removed(asm: Assembly, refs: _Refs) -> tuple[tuple[tuple[int, int], ...], int, tuple[dict[str, Any], ...]]:
    """What the budget removed from this call's payload, as a frame keeps it: the transcript ranges
    (the pre-cut ``asm.precut``, then the trimmer's removals ``asm.trimmer_removed``: a
    :class:`~inspector.engine.types.Removals`, whose parts are read, or a list of
    :class:`~inspector.engine.types.Removal`), how many removed rows were synthesised (no
    transcript index), and the summary blocks among those the model did not see (Q18, ``not_sent``).

    Most calls remove nothing: one look at the two, then ``((), 0, ())``. Otherwise such a block can
    only stand among the pre-cut prefix's first three rows (at its head; a stack replay pre-cuts
    thousands of rows per call, never walk all of them) or be one of the trimmer's single-row
    removals; the pre-cut's rows are looked at only when its runs hold a synthesised row at all.
    A single removal right after the last range (the trimmer takes the oldest rows after the
    pre-cut, one by one) extends that range in place; anything else is merged by :func:`_merge`.
    O(recorded parts + breaks), not O(removed rows)."""
    pre, removed = asm.precut, asm.trimmer_removed
    if type(pre) is RowsView:
        head, rows, lo, hi = pre.source()
        if not head and hi <= lo and not removed:
            return (), 0, ()  # the usual call: nothing removed
    elif not pre and not removed:
        return (), 0, ()
    ranges: list[tuple[int, int]] = []
    lone: list[Message] = []
    synth = 0
    if type(pre) is RowsView:
        if head:
            synth += refs.add_run(ranges, head, 0, len(head))
        if hi > lo:
            synth += refs.add_run(ranges, rows, lo, hi)
        if synth:
            lone = [m for m in [*head[:3], *rows[lo:min(hi, lo + 3)]][:3] if refs.get(m) is None]
    elif pre:
        synth += refs.add_run(ranges, pre, 0, len(pre))
        if synth:
            lone = [m for m in pre[:3] if refs.get(m) is None]
    few: Sequence[Any] = removed
    if type(removed) is Removals or (type(removed) is not list and isinstance(removed, Removals)):
        few = removed.parts()
    get = refs.get
    for part in few:
        if type(part) is tuple:
            synth += refs.add_run(ranges, part[0], part[1], part[2])
        else:  # one row: its own index, or a synthesised row
            m = part.message
            r = get(m)
            if r is None:
                synth += 1
                lone.append(m)
            elif ranges and ranges[-1][1] == r:  # right after the last range: the usual removal
                ranges[-1] = (ranges[-1][0], r + 1)
            else:
                ranges.append((r, r + 1))
    not_sent = tuple([{"kind": "summary", "reason": SUMMARY_TRIMMED, "content": m.get("content")}
                      for m in lone if is_summary_block(m)]) if lone else ()
    return tuple(ranges if len(ranges) < 2 else _merge([], ranges)), synth, not_sent


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a block (restored after it, also on an error; nested
    blocks leave it to the outermost). A replay and its analyses build many long-lived objects
    without cycles: each full collection re-reads every object alive, so collections during a long
    replay made its time grow faster than its work. Reference counting still frees everything."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _gc_paused_while(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run inside :func:`gc_paused`."""
    @functools.wraps(fn)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        with gc_paused():
            return fn(*args, **kwargs)
    return paused


@_gc_paused_while
def replay(manifest: Any, transcript: Any, *, counter: str | None = None, summarizer: str | Any = None,
           llm: LLMEngine | None = None, summary_cache: str | Path | SummaryCache | None = None,
           allow_imports: Iterable[str] = (), policy: ReplayPolicy | None = None, system: str | None = None,
           tools: str | None = None, model: str | None = None, sample: bool | None = None,
           calibration: Mapping[str, float] | None = None, unrecorded_prefix: int | str | None = None) -> Replay:
    """Replay ``transcript`` (an imported :class:`~inspector.transcripts.Transcript`) under ``manifest``.

    ``manifest`` may be None: the transcript is replayed as its own agent (its system text, tools
    and recorded model, the default strategy). ``policy`` defaults to
    :data:`~inspector.policy.DEFAULT_POLICY`; ``counter``, ``summarizer``, ``system``, ``tools`` and
    ``model`` change single fields of it (see :mod:`inspector.policy`). ``summarizer`` may also be
    a summarizer object. ``sample`` says the manifest is a bundled sample (default: judged from its
    file). What was in force is on the result: :attr:`Replay.policy`, :attr:`Replay.agent`.

    ``calibration`` (``{model: factor}``, opt-in) makes the budget apply a token correction factor
    for the manifest's model (see :mod:`inspector.calibration`); the manifest's own
    ``spec.models[].token_calibration`` applies otherwise. Every frame's budget states the factor
    in force and its source.

    ``unrecorded_prefix`` (``"auto"`` or a number of provider tokens, opt-in) adds what the log does
    not record (Claude Code's system prompt and tool schemas) to every call's budget as a fixed part:
    ``"auto"`` is the fitted offset of :func:`inspector.calibration.calibrate`
    (:func:`inspector.calibration.resolve_prefix`). The budget records it (``Budget.prefix`` and its
    source); :attr:`Replay.unrecorded` holds the estimate whenever the log leaves something out.
    """
    custom = summarizer if summarizer is not None and not isinstance(summarizer, str) else None
    pol = (policy or DEFAULT_POLICY).with_(counter=counter, summarizer=summarizer if custom is None else None,
                                           system=system, tools=tools, model=model)
    cache = SummaryCache(summary_cache) if isinstance(summary_cache, (str, Path)) else summary_cache
    settings = as_settings(NO_MANIFEST if manifest is None else manifest, allow_imports)
    if sample is None:  # a bundled sample says so inside the file (Q25)
        sample = manifest is None or settings.sample
    settings, agent = resolve_agent(settings, transcript, pol, sample=sample)
    mode = custom if custom is not None else summarizer_choice(settings, pol.summarizer, live=llm is not None)
    engine = ContextEngine(settings, counter=pol.counter, llm=llm, summarizer=mode, summary_cache=cache,
                           allow_imports=allow_imports, calibration=calibration)
    unrecorded = None
    missing = (getattr(transcript, "meta", None) or {}).get("not_recorded")
    if missing or unrecorded_prefix not in (None, 0):
        from inspector.calibration import estimate_prefix, resolve_prefix

        unrecorded = estimate_prefix(transcript, engine.counter.name)
        tokens, source = resolve_prefix(unrecorded_prefix, transcript, engine.counter.name)
        if tokens:
            engine.limits = dataclasses.replace(engine.limits, prefix=tokens, prefix_source=source)
    agent = dataclasses.replace(agent, window=engine.limits.window, window_source=engine.limits.window_source)
    bound = getattr(engine.cm, "summarizer", None)  # only a summarising manager holds one
    summ = None if bound is None else as_summarizer(bound)
    label = "none" if summ is None else summ.label
    if label == "llm" and not calls_a_model(summ):
        label = "llm without a live model (folds like drop: no call, no cost)"
    if isinstance(summ, StandInSummarizer):
        label = "offline stand-in (not a model)"
        if summ.price_model is None:  # priced at the summary model's rates
            summ.price_model = _summary_model(settings, engine.limits.effective_model)
    rp = Replay(transcript, settings, engine.counter.name, pol.summarizer if custom is None else "custom",
                label, limits=engine.limits.as_dict(), policy=pol, agent=agent, unrecorded=unrecorded,
                terms=budget_terms(engine.cm))
    rp.summary_price_model = None if summ is None else summ.price_model
    msgs: list[Message] = transcript.messages
    rec = _Recorder(rp, engine, summ, msgs, dict(getattr(transcript, "usage", {}) or {}))
    conv = engine.conversation
    transcript_system = agent.system == "transcript"
    record = engine.record  # through the engine (whatever it does with a recorded row), bound once
    call, user = rec.call, rec.user
    roles = list(map(role_of, msgs))
    # the last call: before the last assistant message, or after every row when a call is pending (the
    # transcript does not end with a reply); no row after it is ever sent
    last = next((i for i in range(len(roles) - 1, -1, -1) if roles[i] != "system"), -1)
    pending = last < 0 or roles[last] != "assistant"
    prime = getattr(engine.counter, "prime", None)  # a counter of ours measures the rows up front, in one pass
    if prime is not None:  # the rows a call may send: a transcript's system row only when it is the prompt
        sendable = msgs if pending else msgs[:last]
        prime(sendable if transcript_system else compress(sendable, map(ne, roles, repeat("system"))))
    for i, m, role in zip(range(len(msgs)), msgs, roles):
        if role == "assistant":  # the commonest role first
            call(i)
        elif role == "user":
            user(m)
            continue
        elif role == "system":
            if transcript_system:
                conv.system_message = m  # a mid-transcript system message replaces the band from here on
            continue
        elif not rec.open_turn:  # a row before the first user message
            rec.open_preamble()
        record(m)
    rec.finish(pending=pending)
    rp.summarizer_calls = dict(engine.summarizer_calls)
    rp.tokens_computed = engine.counter.computed
    rp.token_counter = engine.counter
    if isinstance(cache, SummaryCache):
        rp.summary_cache_hits = cache.hits
    rp.summary_cost_usd = _summary_cost(summ)
    return rp


class _Recorder:
    """What a replay records as it drives the engine: the turn and the step within it, one
    :class:`Frame` per LLM call and one :class:`Commit` per turn boundary, with the summarizer's
    cost attributed to the call or commit that incurred it.

    Stages, in transcript order: :meth:`user` (commit the open turn, start the next), :meth:`call`
    (assemble and record a frame; the rows before the first user message form the preamble turn
    0), :meth:`finish` (the pending call of a transcript that does not end with a reply, else the
    last commit). Guarantee: the same calls in the same order give the same frames and commits.
    """

    def __init__(self, rp: Replay, engine: ContextEngine, summ: Summarizer | None, msgs: Sequence[Message],
                 usage_by_index: dict[int, Any]) -> None:
        self.rp, self.engine, self.summ, self.msgs = rp, engine, summ, msgs
        self.refs = _Refs(msgs)
        self.decisions: dict[tuple[Any, ...], CallDecision] = {}  # equal call decisions shared (immutable records)
        self.usage_by_index = usage_by_index
        self.price = engine.limits.input_cost_per_token
        self.turn, self.step, self.open_turn = 0, 0, False
        # read on every call, bound once: the engine's own methods and the replay's frame list
        self.assemble, self.add_frame = engine.assemble, rp.frames.append
        self.own_bands = type(engine.assembler) is ContextAssembler
        """Whether a frame may keep its assembly's ``bands`` dict as it is: the shipped assembler builds a
        new one on every call and keeps no reference to it (nor to the assembly). Another assembler's
        dict may be one it updates in place, so a frame copies it."""

    def _usage_mark(self) -> int:
        return 0 if self.summ is None else len(self.summ.usage)

    def _summary_cost_since(self, n: int) -> float | None:
        """Cost of the summarizer calls logged since its usage log had ``n`` entries (0 when none)."""
        return None if self.summ is None else self.summ.cost(self.summ.usage[n:])

    def open_preamble(self) -> None:
        """Rows before the first user message form the preamble turn (0)."""
        if not self.open_turn:
            self.open_turn, self.turn, self.step = True, 0, 0

    def user(self, m: Message) -> None:
        if self.open_turn:
            self.commit()
        engine = self.engine
        engine.user(m)
        self.turn, self.step, self.open_turn = engine.conversation.turn_index, 0, True

    def call(self, next_index: int | None) -> None:
        """One LLM call: the payload assembled before the reply at ``next_index`` (None: the next
        call), recorded as one :class:`Frame`. Every fact of the engine's :class:`Assembly` is read
        once; equal call decisions share one :class:`CallDecision` (immutable; the calls of a turn
        mostly repeat one, so a new record is made once per distinct decision)."""
        if not self.open_turn:
            self.open_preamble()
        mark = self._usage_mark()
        asm = self.assemble(strict=False)
        d = asm.decision
        key = (d.action, d.compressed_turns, d.kept_turns, d.dropped_turns, d.summarizer_called, d.error, d.raw_tokens)
        decision = self.decisions.get(key)
        if decision is None:
            decision = self.decisions[key] = CallDecision(*key)
        refs = self.refs
        trimmed, trimmed_synth, not_sent = _removed(asm, refs)
        repairs, warnings, tokens, price = asm.repairs, asm.warnings, asm.payload_tokens, self.price
        # positional, in Frame's field order (keywords cost a frame more than half a microsecond each)
        self.add_frame(Frame(
            self.turn, self.step, len(self.msgs) if next_index is None else next_index, asm.budget,
            asm.bands if self.own_bands else dict(asm.bands),
            tokens, asm.headroom, decision, tuple(_segments(asm.layout, refs)), trimmed, trimmed_synth,
            _row_ranges(d.folded, refs) if d.folded else (),  # most calls fold nothing
            tuple([FrameRepair(r, refs.get(row) if row is not None else None)
                   for r, row in zip(repairs, asm.repaired_rows or [None] * len(repairs))]) if repairs else (),
            asm.check, None if price is None else round(tokens * price, 10),
            self.usage_by_index.get(next_index) if next_index is not None and self.usage_by_index else None,
            d.summary_text, tuple(warnings) if warnings else (),
            self._summary_cost_since(mark) if d.summarizer_called else 0.0, not_sent,
        ))
        if d.action == "summarizer-failed":
            self.rp.summarizer_failures += 1
        self.step += 1

    def commit(self) -> None:
        mark = self._usage_mark()
        rec: CommitRecord = self.engine.commit()
        folded = rec.folded
        self.rp.commits.append(Commit(rec.turn, rec.action, rec.summarizer_called, rec.folded_turns, rec.error,
                                      rec.archive, _row_ranges(folded, self.refs) if folded else (),
                                      self._summary_cost_since(mark) if rec.summarizer_called else 0.0))
        if rec.action == "summarizer-failed":
            self.rp.summarizer_failures += 1

    def finish(self, *, pending: bool) -> None:
        """End of transcript: the call that would be sent next when no reply ends it, else the last commit."""
        if self.open_turn and pending:
            self.call(None)
        elif self.open_turn:
            self.commit()


def _summary_cost(summ: Summarizer | None) -> float | None:
    """USD of all the summarizer's logged calls at the summary model's price (0 without a summarizer)."""
    return 0.0 if summ is None else summ.cost(summ.usage)


def _summary_model(settings: Any, agent_model: str | None) -> str | None:
    """The model an ``llm`` summarizer would use under these settings (how the stand-in is priced)."""
    from inspector.engine.summarizers.llm import resolve_summary_model

    binding = getattr(settings, "summarizer", None)
    requested = binding.params.get("model") if binding is not None else None
    return resolve_summary_model(requested, settings.models, agent_model)[0]


