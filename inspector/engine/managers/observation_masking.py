"""``observation-masking``: tool results older than the attention window are sent as a placeholder.

OpenHands' ``ObservationMaskingCondenser`` (``openhands/memory/condenser/impl/
observation_masking_condenser.py``): over a view of ``n`` events, the event at index ``i`` is masked
when it is an observation and ``i < n - attention_window``, so the last ``attention_window`` events
keep their results. Here an event is one row of the log followed by the current turn's working
memory (user, assistant and tool rows alike count); only tool results are masked, and never one in
working memory's newest group (the ask the model is answering and its results).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice

from inspector.engine.contracts import EditRecord, ReplacedBefore, Replacement, newest_group_start
from inspector.engine.managers.base import CMDecision, ContextManager, Managed, managed
from inspector.engine.managers.shared import BuiltFromParams, keep_record, table_view, whole_list
from inspector.engine.types import Message
from inspector.params import ObservationMaskingParams
from inspector.vocabulary import Action, Reason

DEFAULTS = ObservationMaskingParams()
"""The model's defaults (``attention_window`` 100, OpenHands' ``<MASKED>``), which the constructor's keywords read."""

MASKED = "observation-masked"
"""The replacement reason of a masked tool result."""


def mask_text(placeholder: str, tool: str, size: int) -> str:
    """``placeholder`` with ``{tool}`` replaced by the tool's name and ``{size}`` by the characters
    masked (a placeholder without them is sent as written, e.g. OpenHands' ``<MASKED>``)."""
    return placeholder.replace("{tool}", tool).replace("{size}", str(size))


def _tool_name(call: object) -> str:
    """The tool an ask's call names (``tool`` when the call names none)."""
    fn = call.get("function") if isinstance(call, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    return name if isinstance(name, str) and name else "tool"


def _tool_names(*parts: Sequence[Message]) -> dict[str, str]:
    """``{tool_call_id: tool name}`` of every ask in ``parts`` (a malformed ask names none)."""
    out: dict[str, str] = {}
    for rows in parts:
        for m in rows:
            calls = m.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict) and isinstance(call.get("id"), str):
                    out[call["id"]] = _tool_name(call)
    return out


def _read_rows(rows: Sequence[Message], n: int, names: dict[str, str], tools: list[int], results: set[str],
               dup: bool) -> bool:
    """Read ``rows[n:]`` into a state's tables (each row once): the tool name each ask gives its call
    ids (``names``), where the tool results stand (``tools``) and the ids they answer (``results``);
    returns ``dup``, now also true when an ask re-declares a call id or comes after its result."""
    for i in range(n, len(rows)):
        m = rows[i]
        if m.get("role") == "tool":
            tools.append(i)
            results.add(str(m.get("tool_call_id")))
        calls = m.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                dup = dup or call["id"] in names or call["id"] in results
                names[call["id"]] = _tool_name(call)
    return dup


def _read_tools(rows: Sequence[Message], n: int, tools: list[int]) -> None:
    """Where the tool results of ``rows[n:]`` stand, appended to ``tools``: all a placeholder that
    names no tool needs (no call id's name is read, so no re-declared id can change an answer)."""
    tools.extend([i for i in range(n, len(rows)) if rows[i].get("role") == "tool"])


class _Masks:
    """What the manager keeps across calls about the committed log it last saw (the log only grows
    between calls): the tool name each ask gives its call ids, where the tool results stand, and the
    table of replacements below the frontier so far, each built once (:class:`ReplacedBefore`)."""

    __slots__ = ("rows", "n", "last", "names", "results", "tools", "table", "dup", "built", "view", "named")

    def __init__(self, rows: Sequence[Message] | None = None, named: bool = False) -> None:
        self.rows, self.n, self.named = rows, 0, named
        self.last: Message | None = None
        self.names: dict[str, str] = {}
        self.results: set[str] = set()  # the call ids the log's tool results answer
        self.tools: list[int] = []  # log positions of the tool results
        self.table: list[Replacement] = []  # one per tool result below ``built``, in log order
        self.built = 0  # how many of ``tools`` have their replacement in ``table``
        self.view: ReplacedBefore | None = None  # the last view of ``table`` given (:func:`table_view`)
        self.dup = False  # an ask re-declared a call id, or came after its result: names can change, so
        # every call is worked out from scratch

    def sync(self, past: Sequence[Message], named: bool) -> _Masks:
        """The state brought up to date with ``past``: a new state when it is not this log grown.
        ``named``: the placeholder names the tool, so the asks' names are read too (a new state when
        the last one was read without them: a manager's placeholder may be set again)."""
        n = self.n
        if past is not self.rows or len(past) < n or (n and past[n - 1] is not self.last) or named is not self.named:
            return _Masks(None, named)._read(past, 0, named)
        return self._read(past, n, named) if len(past) > n else self  # (a turn's later calls: nothing committed)

    def _read(self, past: Sequence[Message], n: int, named: bool) -> _Masks:
        if named:
            self.dup = _read_rows(past, n, self.names, self.tools, self.results, self.dup)
        else:
            _read_tools(past, n, self.tools)
        self.rows, self.n = past, len(past)
        self.last = past[-1] if past else None
        return self


class _Working:
    """What the manager keeps across the calls of one turn about its working memory (a list that only
    grows between them): the tool name each ask gives its call ids, where the tool results stand, and
    the table of their replacements so far, each built once (:class:`ReplacedBefore`), as
    :class:`_Masks` keeps the log's. Started again for another list, another log, or a shrunk list."""

    __slots__ = ("first", "log", "n", "last", "names", "results", "tools", "table", "built", "dup", "clash",
                 "view")

    def __init__(self, log: tuple[_Masks, int] | None = None) -> None:
        self.log, self.n = log, 0
        self.first: Message | None = None
        self.last: Message | None = None
        self.names: dict[str, str] = {}
        self.results: set[str] = set()
        self.tools: list[int] = []
        self.table: list[Replacement] = []
        self.built = 0
        self.view: ReplacedBefore | None = None  # the last view of ``table`` given (as :attr:`_Masks.view`)
        self.dup = False  # an ask re-declared a call id, or came after its result: worked out from scratch
        self.clash = False  # an ask declares a call id the log declares or answers: the log's names can
        # change, so the call is worked out from scratch (found as names are read: the log's state is
        # this one's for its whole life, so the names read before need no second look)

    def sync(self, working: Sequence[Message], log: tuple[_Masks, int], named: bool) -> _Working:
        """The state brought up to date with ``working`` (a copy of the turn's list on each call: its
        first and last read rows say it is the same list grown): a new state when it is not, or when
        the log's state ``log`` (the log's :class:`_Masks` and its length) is another. ``named``: as
        :meth:`_Masks.sync`'s (without it, no clash is looked for: names cannot change an answer)."""
        n = self.n
        if log != self.log or len(working) < n or \
                (n and (working[n - 1] is not self.last or working[0] is not self.first)):
            return _Working(log)._read(working, 0, named) if working else _Working(log)  # (a turn's first call)
        return self._read(working, n, named) if len(working) > n else self

    def _read(self, working: Sequence[Message], n: int, named: bool) -> _Working:
        if not named:
            _read_tools(working, n, self.tools)
            self.n = len(working)
            self.first, self.last = working[0], working[-1]
            return self
        names, known = self.names, len(self.names)
        self.dup = _read_rows(working, n, names, self.tools, self.results, self.dup)
        if not self.clash and len(names) > known and self.log is not None:  # the new names only
            log = self.log[0]
            self.clash = any(c in log.names or c in log.results for c in islice(reversed(names), len(names) - known))
        self.n = len(working)
        self.first, self.last = (working[0], working[-1]) if working else (None, None)
        return self


class ObservationMasking(BuiltFromParams, ContextManager):
    """Every log row kept; each tool result more than ``attention_window`` events from the end of
    log + working memory sent as the placeholder, in the log and in working memory alike (a one-turn
    agent lives in working memory), never in working memory's newest group. The hint is ignored."""

    name = "observation-masking"
    edits_working_memory = True
    actions = (
        Action("observations-kept", "kept: no tool result older than the attention window"),
        Action("observations-masked", "old tool results masked", "edit", marker="old tool results masked"),
    )
    reasons = (Reason(MASKED, "tool result masked (a placeholder was sent)"),)

    def __init__(self, attention_window: int = DEFAULTS.attention_window, placeholder: str = DEFAULTS.placeholder,
                 *, params: ObservationMaskingParams | None = None) -> None:
        """The defaults and the check come from :class:`~inspector.params.ObservationMaskingParams`
        (a value it refuses raises ``ValueError``); ``params``, a validated model, is used as it is instead."""
        super().__init__()
        if params is None:
            params = ObservationMaskingParams.build(self.name, attention_window=attention_window,
                                                    placeholder=placeholder)
        self.attention_window = params.attention_window
        self.placeholder = params.placeholder
        self._masks = _Masks()
        self._work = _Working()
        self._rows: dict[int, tuple[Message, str, Message]] = {}  # id(original) -> (it, text, its placeholder row)
        self._last: EditRecord | None = None  # the last call's record (:func:`keep_record`)
        self.rows_built = 0
        """How many placeholder rows were made over this manager's life (tests: once per original row)."""

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        """The result with no working memory (:meth:`decide_with_working` with none)."""
        return self.decide_with_working(past, (), hint)

    def decide_with_working(self, past: Sequence[Message], working: Sequence[Message], hint: int) -> Managed:
        """The whole log kept, and a :class:`~inspector.engine.contracts.Replacement` for each tool
        result at event index ``i < len(past) + len(working) - attention_window`` (working memory's
        rows indexed after the log's; its newest group never), reason ``observation-masked``. The
        decision is ``observations-masked`` when one was masked, else ``observations-kept``."""
        del hint
        if type(working) is not tuple:  # (a turn's first call is given an empty tuple: no call)
            working = whole_list(working)
        n = len(past)
        cut = n + len(working) - self.attention_window  # events before ``cut`` are outside the window
        named = "{tool}" in self.placeholder  # the placeholder names the tool: the asks' names are read
        st = self._masks = self._masks.sync(past, named)
        if named or cut > n:  # working memory's names are read for clashes; its rows, once some are below the window
            self._work = self._work.sync(working, (st, st.n), named)
        in_log = self._log_masks(past, min(cut, n))
        # working memory's rows below the window, never its newest group (found only when some are below)
        span = min(cut - n, newest_group_start(working)) if cut > n and working else 0
        in_working: Sequence[Replacement] = ()
        if in_log is None:  # a call id declared twice: the names are read again, as the rule says
            wnames = _tool_names(past, working)
            in_log = tuple(self._masked(past, range(min(cut, n)), wnames, {}))
            in_working = tuple(self._masked(working, range(span), wnames, st.names)) if span > 0 else ()
        elif span > 0:
            in_working = self._working_masks(working, span)
        record = self._last = keep_record(self._last, n, in_log, in_working)
        action = "observations-masked" if in_log or in_working else "observations-kept"
        return managed(past, record, CMDecision(action))

    def _log_masks(self, past: Sequence[Message], cut: int) -> Sequence[Replacement] | None:
        """The log's replacements below ``cut``, as a :class:`ReplacedBefore` view of the table kept
        across calls (each tool result's placeholder row built once, when it first falls outside the
        window); None when a call id is declared twice (in the log, or by working memory's asks
        again: :attr:`_Working.clash`), where a name could change and the call is worked out from scratch."""
        st = self._masks
        if st.dup or self._work.clash:
            return None
        tools, table = st.tools, st.table
        while st.built < len(tools) and tools[st.built] < cut:
            i = tools[st.built]
            table.append(self._mask(past[i], i, st.names, {}))
            st.built += 1
        count = st.built
        while count and tools[count - 1] >= cut:  # the window moved back (a longer working memory)
            count -= 1
        if not count:
            return ()
        view = st.view = table_view(st.view, table, count, tools)
        return view

    def _working_masks(self, working: Sequence[Message], span: int) -> Sequence[Replacement]:
        """Working memory's replacements below ``span``, as a :class:`ReplacedBefore` view of the
        turn's table (each tool result's placeholder row built once, when it first falls outside the
        window); worked out from scratch while an ask of working memory re-declares a call id."""
        wk, names = self._work, self._masks.names
        if wk.dup:
            return tuple(self._masked(working, range(span), wk.names, names))
        tools, table = wk.tools, wk.table
        while wk.built < len(tools) and tools[wk.built] < span:
            i = tools[wk.built]
            table.append(self._mask(working[i], i, wk.names, names))
            wk.built += 1
        count = wk.built
        while count and tools[count - 1] >= span:
            count -= 1
        if not count:
            return ()
        view = wk.view = table_view(wk.view, table, count, tools)
        return view

    def _masked(self, rows: Sequence[Message], span: range, names: dict[str, str],
                more: dict[str, str]) -> Iterator[Replacement]:
        """A replacement for each tool result of ``rows`` at an index in ``span`` (:meth:`_mask`)."""
        for i in span:
            m = rows[i]
            if m.get("role") == "tool":
                yield self._mask(m, i, names, more)

    def _mask(self, m: Message, i: int, names: dict[str, str], more: dict[str, str]) -> Replacement:
        """The replacement of tool result ``m`` at index ``i``, its tool named by ``names``, else
        ``more``. A row masked before with the same text is sent as the same row (working memory's
        rows are masked again on every call of their turn)."""
        placeholder = self.placeholder
        if "{tool}" not in placeholder and "{size}" not in placeholder:  # sent as written (OpenHands' <MASKED>)
            text = placeholder
        else:
            content = m.get("content")
            size = len(content if isinstance(content, str) else str(content or ""))
            cid = str(m.get("tool_call_id"))
            text = mask_text(placeholder, names.get(cid) or more.get(cid, "tool"), size)
        cache = self._rows
        hit = cache.get(id(m))
        if hit is None or hit[0] is not m or hit[1] != text:
            self.rows_built += 1
            hit = cache[id(m)] = (m, text, {**m, "content": text})
        return Replacement(i, hit[2], MASKED)
