"""``clear-tool-results``: over a token trigger, the oldest tool results are sent as a placeholder.

The rule of Anthropic's context editing (``clear_tool_uses_20250919``) and LangChain's
``ClearToolUsesEdit`` (docs/design.md §3.13): when the input (the manager's counter over the
committed log and the current turn's working memory) exceeds ``trigger`` tokens, every tool result
but the last ``keep`` is replaced by a placeholder, oldest first, skipping ``exclude_tools`` and
results whose ask is not found; ``clear_tool_inputs`` blanks the cleared calls' arguments in the
asking row too (its ids stay, so pairing holds). ``clear_at_least`` > 0 stops clearing once that many
tokens are freed, and clears nothing when every candidate together frees fewer. Every log row is
kept; rows are only replaced, in the log and in working memory older than its newest group.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import is_

from inspector.engine.contracts import EditRecord, ReplacedBefore, Replacement, newest_group_start
from inspector.engine.managers.base import CMDecision, ContextManager, Managed, managed
from inspector.engine.managers.shared import BuiltFromParams, keep_record, table_view, whole_list
from inspector.engine.tokens import TokenCounter, content_swap
from inspector.engine.types import Message
from inspector.params import CLEAR_TOOL_RESULTS as D
from inspector.params import ClearToolResultsParams
from inspector.vocabulary import Action, Reason

CLEARED = "tool-result-cleared"
INPUT_CLEARED = "tool-input-cleared"
DEFAULT_PLACEHOLDER = "[tool result cleared: {tool}, {tokens} tokens]"


def _calls(msg: Message) -> list[dict[str, object]]:
    """The row's tool calls that are mappings (a malformed ``tool_calls`` asks nothing)."""
    calls = msg.get("tool_calls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _grouped(n: int) -> str:
    """``1234`` as ``1 234``: the placeholder's size in the project's plain number style."""
    return f"{n:,}".replace(",", " ")


@dataclass(slots=True)
class _Clearing:
    """The rows being replaced (by position in log + working memory) and the tokens freed so far."""

    rows: dict[int, tuple[Message, str]] = field(default_factory=dict)
    freed: int = 0


class _Log:
    """What the manager keeps across calls about the committed log it last saw (it only grows between
    calls): its units, where its tool results stand, each call id's ask, and the clearable results in
    log order with, for those cleared so far, their placeholder row (each built once) and the tokens
    freed up to each (``freed[k]``: by the first ``k``)."""

    __slots__ = ("rows", "n", "last", "units", "results", "answered", "asks", "cands", "at", "table", "freed",
                 "reach", "dup", "key", "excluded", "view", "additive")

    def __init__(self, key: tuple[object, ...] = (), excluded: frozenset[str] = frozenset()) -> None:
        self.key = key  # (counter, params) it was made for
        self.excluded = excluded  # the params' exclude_tools, as a set made once
        self.additive = bool(getattr(key[0], "additive", False)) if key else False  # the counter's total is its units
        self.rows: Sequence[Message] | None = None
        self.n, self.units = 0, 0
        self.last: Message | None = None
        self.results: list[int] = []  # log positions of the tool results
        self.asks: dict[str, tuple[int, str]] = {}  # call id -> (asking row, tool name)
        self.answered: set[str] = set()  # the call ids the log's tool results answer
        self.cands: list[tuple[int, str, int]] = []  # (result, tool, its unit) clearable by their asks
        self.at: list[int] = []  # the candidates' positions (bisected)
        self.reach: int | None = None  # the fewest candidates that free clear_at_least, once found
        self.table: list[Replacement] = []  # the first len(table) candidates' placeholders
        self.freed: list[int] = [0]
        self.view: ReplacedBefore | None = None  # the last view of ``table`` given (:func:`table_view`)
        self.dup = False  # a call id asked twice, or after its result: every call is worked out from scratch

    def sync(self, past: Sequence[Message], counter: TokenCounter, params: ClearToolResultsParams,
             turn: _Turn | None = None) -> _Log:
        """The state brought up to date with ``past``: a new state when it is not this log grown (or
        the counter or the parameters changed). ``turn``: the last call's working-memory state; when
        its rows were committed (:meth:`_take_over`), their facts are taken over, not read again."""
        n = self.n
        st = self
        if past is not self.rows or len(past) < n or (n and past[n - 1] is not self.last) or \
                self.key[0] is not counter or self.key[1] is not params:
            st, n = _Log((counter, params), frozenset(params.exclude_tools or ())), 0
        elif n == len(past):  # the same log as the last call (every call of a turn): nothing to read
            return st
        elif turn is not None and turn.n and turn.key is not None and turn.key[0] is st and turn.key[1] == n:
            return st._take_over(past, n, turn, counter)
        return st._read(past, n, len(past), counter)

    def _take_over(self, past: Sequence[Message], n: int, turn: _Turn, counter: TokenCounter) -> _Log:
        """The log grown by a committed turn, ``[user row?] + working memory + [reply?]``: the rows of
        ``turn`` (the turn's state over this log of ``n`` rows) have their facts taken over, shifted
        to where they stand, instead of being read again; the rows around them, which neither ask
        nor answer (else the whole growth is read), add their units.

        Why it is exact: the turn's rows stand at ``past[s:s + k]``, all of them, by identity; the
        rows around them ask and answer nothing (no ask or answer the turn's facts were worked out
        without, none after them that the turn's would change); the turn asked no call id the log
        asked or answered (``clash``) nor one twice or after its result (``dup``). Its asks, answers,
        units and results are then the log's; a result is clearable as the log reads it by the
        turn's ask (its ``cands``) or, asked before the turn, by the log's."""
        rows, k, end = turn.rows, turn.n, len(past)
        s = n if past[n] is turn.first else n + 1
        if turn.clash or turn.dup or rows is None or s + k > end or \
                not all(map(is_, past[s:s + k], rows[:k])):
            return self._read(past, n, end, counter)
        unit, units = counter.unit, self.units + turn.units
        for i in chain(range(n, s), range(s + k, end)):  # the rows around the turn's (its user row, its reply)
            m = past[i]
            if "tool_calls" in m or m.get("role") == "tool":  # one asks or answers: the log is read
                return self._read(past, n, end, counter)
            units += unit(m)
        asks, excluded, cands, at, results = self.asks, self.excluded, self.cands, self.at, self.results
        pos, c = turn.pos, 0
        for j in turn.res:
            results.append(s + j)
            if c < len(pos) and pos[c] == j:
                _j, tool, u = turn.cands[c]
                cands.append((s + j, tool, u))
                at.append(s + j)
                c += 1
            else:  # asked before the turn (a paused turn's answer): the log's ask
                ask = asks.get(str(rows[j].get("tool_call_id")))
                if ask is not None and ask[1] not in excluded:
                    cands.append((s + j, ask[1], unit(rows[j])))
                    at.append(s + j)
        d = s - n
        for cid, (p, tool) in turn.asks.items():
            asks[cid] = (p + d, tool)
        self.answered |= turn.answered
        self.units = units
        self.rows, self.n, self.last = past, end, past[end - 1]
        return self

    def _read(self, past: Sequence[Message], n: int, end: int, counter: TokenCounter) -> _Log:
        """The facts of ``past[n:end]`` read into the state (each row once over the log's life)."""
        st = self
        excluded, answered, asks, unit = st.excluded, st.answered, st.asks, counter.unit
        units, dup = st.units, st.dup
        for i in range(n, end):  # each row once over the log's life: its locals bound once a call
            m = past[i]
            u = unit(m)
            units += u
            for call in _calls(m) if "tool_calls" in m else ():
                cid = str(call.get("id"))
                dup = dup or cid in asks or cid in answered
                fn = call.get("function")
                asks[cid] = (i, str(fn.get("name", "")) if isinstance(fn, dict) else "")
            if m.get("role") == "tool":
                st.results.append(i)
                cid = str(m.get("tool_call_id"))
                answered.add(cid)
                ask = asks.get(cid)
                if ask is not None and ask[1] not in excluded:
                    st.cands.append((i, ask[1], u))
                    st.at.append(i)
        st.units, st.dup = units, dup
        st.rows, st.n, st.last = past, end, past[end - 1] if end else None
        return st


class _Turn:
    """What the manager keeps across the calls of one turn about its working memory (a copy of a list
    that only grows between them), as :class:`_Log` keeps the log's: its units, each call id's ask, where the
    results stand, the clearable ones in order (``pos``) and the placeholders built so far (``table``,
    each once, with the tokens freed up to each). ``clash``: an ask of working memory asks a log call
    id again (worked out from scratch, as the rule's look-up may differ); ``dup``: working memory asks
    a call id twice or after its result (the call walks working memory, as before)."""

    __slots__ = ("key", "n", "units", "newest", "first", "last", "asks", "answered", "res", "cands", "pos", "table",
                 "freed", "clash", "dup", "view", "rows")

    def __init__(self, key: tuple[object, int] | None = None) -> None:
        self.key, self.n, self.units = key, 0, 0
        self.newest = 0  # where working memory's newest group starts (:func:`newest_group_start`)
        self.first: Message | None = None
        self.last: Message | None = None
        self.asks: dict[str, tuple[int, str]] = {}  # call id -> (position in log + working memory, tool)
        self.answered: set[str] = set()
        self.res: list[int] = []  # working-memory positions of the tool results
        self.cands: list[tuple[int, str, int]] = []  # (position, tool, unit) of each result clearable by its ask
        self.pos: list[int] = []  # their positions (bisected)
        self.table: list[Replacement] = []
        self.freed: list[int] = [0]  # tokens freed by the first k placeholders of ``table``
        self.view: ReplacedBefore | None = None  # the last view of ``table`` given (:func:`table_view`)
        self.clash = self.dup = False
        self.rows: Sequence[Message] | None = None  # the list read (:meth:`_Log._take_over` checks it)

    def sync(self, working: Sequence[Message], st: _Log, n: int, counter: TokenCounter) -> _Turn:
        """The state brought up to date with ``working`` over log state ``st`` of ``n`` rows, its
        units by ``counter`` (``st``'s: a log state is made for one counter); a new state for another
        log or a working memory that is not this one grown. A long turn's calls read each row once."""
        t, k = self, self.n
        if (st, n) != self.key or len(working) < k or (k and (working[k - 1] is not self.last
                                                               or working[0] is not self.first)):
            t, k = _Turn((st, n)), 0
            if not working:  # (a turn's first call: nothing to read)
                return t
        elif k == len(working):  # (the same working memory as the last call)
            return t
        asks, answered, excluded = t.asks, t.answered, st.excluded
        log_asks, log_answered = st.asks, st.answered
        clash, dup = t.clash, t.dup
        units, unit = t.units, counter.unit
        for j in range(k, len(working)):  # the rows added since the last call (two a tool round)
            m = working[j]
            u = unit(m)
            units += u
            if "tool_calls" in m:
                for call in _calls(m):
                    cid = str(call.get("id"))
                    clash = clash or cid in log_asks or cid in log_answered
                    dup = dup or cid in asks or cid in answered
                    fn = call.get("function")
                    asks[cid] = (n + j, str(fn.get("name", "")) if isinstance(fn, dict) else "")
            role = m.get("role")
            if role == "assistant":
                t.newest = j
            elif role == "tool":
                t.res.append(j)
                cid = str(m.get("tool_call_id"))
                answered.add(cid)
                ask = asks.get(cid)
                if ask is not None and ask[0] < n + j and ask[1] not in excluded:
                    t.cands.append((j, ask[1], u))
                    t.pos.append(j)
        t.clash, t.dup, t.units = clash, dup, units
        t.n, t.rows = len(working), working
        t.first, t.last = (working[0], working[-1]) if working else (None, None)
        return t


def _view(st: _Log | _Turn, count: int) -> ReplacedBefore:
    """The first ``count`` placeholders of ``st``'s table as a view, the last call's while it stands
    (:func:`~inspector.engine.managers.shared.table_view`)."""
    view = st.view = table_view(st.view, st.table, count, st.at if isinstance(st, _Log) else st.pos)
    return view


class ClearToolResults(BuiltFromParams, ContextManager):
    """Tool results beyond the last ``keep`` tool uses sent as a placeholder once the input passes
    ``trigger`` tokens; parameters from :class:`~inspector.params.ClearToolResultsParams`."""

    name = "clear-tool-results"
    edits_working_memory = True
    actions = (
        Action("tool-results-under-trigger", "kept: input at or under the clearing trigger"),
        Action("tool-results-nothing-to-clear", "kept: no tool result to clear (or fewer tokens than clear_at_least)"),
        Action("tool-results-cleared", "older tool results cleared", "edit", marker="tool results cleared"),
    )
    reasons = (
        Reason(CLEARED, "tool result cleared (a placeholder was sent)"),
        Reason(INPUT_CLEARED, "tool call's arguments cleared (sent blank)"),
    )
    TEXTS_KEPT = 1024
    """How many placeholder texts (one per tool and size cleared) a manager remembers: results of a
    few tools and sizes repeat, and a text depends on nothing else (a bound, not a cache policy)."""

    def __init__(self, trigger: int = D.trigger, keep: int = D.keep, clear_at_least: int = D.clear_at_least,
                 exclude_tools: list[str] | None = D.exclude_tools, clear_tool_inputs: bool = D.clear_tool_inputs,
                 placeholder: str | None = D.placeholder, *, params: ClearToolResultsParams | None = None) -> None:
        """The defaults and the check come from :class:`~inspector.params.ClearToolResultsParams` (a
        value it refuses raises ``ValueError``); ``params``, a validated model, is used as it is instead."""
        super().__init__()
        if params is None:
            params = ClearToolResultsParams.build(
                self.name, trigger=trigger, keep=keep, clear_at_least=clear_at_least, exclude_tools=exclude_tools,
                clear_tool_inputs=clear_tool_inputs, placeholder=placeholder)
        self.params = params
        self._log = _Log()
        self._turn = _Turn()
        self._idle = _Turn()  # the state of an empty working memory (a turn's first call): never written
        self._wrows: dict[int, tuple[Message, str, Message, int]] = {}
        """Working memory's rows cleared by a call that walks it (:meth:`_frontier` when working memory
        asks a call id twice, or with ``clear_at_least``), by id of the original: (it, its tool, its
        placeholder row, tokens freed), so the calls of a turn send the same row (no second
        tokenisation). The turn's table holds its own rows (:meth:`_grow`), none here."""
        self.rows_built = 0
        """How many placeholder rows were made over this manager's life (tests: once per original row)."""
        self._last: EditRecord | None = None  # the last call's record (:func:`keep_record`)
        self._texts: dict[tuple[str, int], str] = {}  # (tool, tokens) -> placeholder text (``TEXTS_KEPT``)
        self._text: tuple[str, int | None, str] = ("", None, "")  # the last placeholder text made: (tool, tokens, it)
        self._swapper: tuple[TokenCounter, Callable[[Message, str], tuple[Message, int]], bool,
                             Callable[[int, int], int]] | None = None

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        """The result for ``past`` alone (no working memory): see :meth:`decide_with_working`."""
        return self.decide_with_working(past, (), hint)

    def decide_with_working(self, past: Sequence[Message], working: Sequence[Message], hint: int) -> Managed:
        """The whole log kept, its older tool results (and those of ``working`` before its newest
        group) replaced when the input exceeds ``trigger`` (``hint`` is not read). The decision's
        ``raw_tokens`` is the input counted, ``threshold`` the trigger."""
        del hint
        if type(working) is not tuple:  # (a turn's first call is given an empty tuple: no call)
            working = whole_list(working)
        trigger, n, counter = self.params.trigger, len(past), self.counter
        st = t = None
        if self.params.clear_tool_inputs:  # a cleared ask's row changes with each of its results: no table
            tokens = counter.count([*past, *working])
        else:
            st = self._log = self._log.sync(past, counter, self.params, self._turn)
            t = self._turn = self._turn.sync(working, st, n, counter) if working else self._idle
            tokens = st.units + t.units
            if not st.additive:  # (an additive counter's total is its units: no call)
                tokens = counter.total(tokens, n + len(working))
        # (a decision's raw_tokens and threshold given by position: keywords cost more than the rest of the call)
        if tokens <= trigger:  # both sources clear only above it: exactly at the trigger is kept
            return managed(past, self._kept(n),
                           CMDecision("tool-results-under-trigger", 0, 0, 0, tokens, trigger))
        if st is not None and t is not None and not st.dup:  # (the steady call: :meth:`_step`)
            step = self._step(st, t, past, working)
            if step is not None:
                return managed(past, step, CMDecision("tool-results-cleared", 0, 0, 0, tokens, trigger))
        limit = n + (t.newest if t is not None else newest_group_start(working)) if working else n
        found = self._frontier(st, t, past, working, limit) if st is not None and t is not None and not st.dup \
            else None
        if found is None:  # worked out from scratch
            rows = [*past, *working]
            clearing = self._clear(rows, limit)
            items = sorted(clearing.rows.items())
            found = (tuple(Replacement(i, row, why) for i, (row, why) in items if i < n),
                     tuple(Replacement(i - n, row, why) for i, (row, why) in items if i >= n))
        log, wm = found  # (a view's length read off it: ``len`` of a view is a Python call)
        if not (log.upto if type(log) is ReplacedBefore else log) and \
                not (wm.upto if type(wm) is ReplacedBefore else wm):
            return managed(past, self._kept(n),
                           CMDecision("tool-results-nothing-to-clear", raw_tokens=tokens, threshold=trigger))
        record = self._last = keep_record(self._last, n, log, wm)
        return managed(past, record, CMDecision("tool-results-cleared", 0, 0, 0, tokens, trigger))

    def _kept(self, n: int) -> EditRecord:
        """``EditRecord.keep_all(n)``: the last call's record again when it was that one."""
        record = self._last = keep_record(self._last, n, (), ())
        return record

    def _step(self, st: _Log, t: _Turn, past: Sequence[Message], working: Sequence[Message]) -> EditRecord | None:
        """The record of a steady clearing call: the last call's with one of its two views moved on
        (the other the same object), over a table grown as :meth:`_frontier` grows it. None for any
        other call (:meth:`_frontier` answers it).

        Why it is exact: with no ``clear_at_least`` and no ask clashing or asked twice, :meth:`_frontier`
        answers the views of the first ``c`` log candidates and the first ``k`` of working memory's
        before the bound, the ``keep``-th last result (capped at the newest group). When working
        memory holds ``keep`` results or more (``j`` >= 0), the bound stands in it, after every log
        candidate: ``c`` is all of them, and the last record's log view must be that view of the same
        table (as the log did not grow); else it stands among the log's results, ``k`` is 0 and the
        last record replaced nothing in working memory. The moving side's view is new unless its count
        stood still (then the last record answers, as :func:`keep_record` would); the tokens freed are
        read off the tables as there (placeholders longer than their rows: :meth:`_frontier` answers)."""
        last, p, n = self._last, self.params, len(past)
        if last is None or p.clear_at_least or t.clash or t.dup:
            return None
        wres, lv, wv = t.res, last.replaced, last.working
        j = len(wres) - p.keep  # where the bound stands among working memory's results (< 0: among the log's)
        side: _Log | _Turn
        if j >= 0:
            if len(st.at) != (lv.upto if type(lv) is ReplacedBefore and lv.table is st.table else -1 if lv else 0):
                return None
            bound = wres[j] if j < len(wres) else len(working)
            count = bisect_left(t.pos, bound if bound < t.newest else t.newest)
            side, view, rows, at, other = t, wv, working, t.pos, st.freed[len(st.at)]
        else:
            older = len(st.results) + j
            if older <= 0 or type(wv) is not tuple or wv:
                return None
            count, side, view, rows, at, other = bisect_left(st.at, st.results[older]), st, lv, past, st.at, 0
        table, freed = side.table, side.freed
        if not count or (view.table is not table if type(view) is ReplacedBefore else view):
            return None
        if len(table) < count:  # (one row of the last text's tool and size, an additive counter: :meth:`_grow`'s work)
            i, tool, unit = side.cands[count - 1]
            sw, text = self._swapper, self._text
            if text[1] != unit or text[0] != tool or len(table) + 1 < count or sw is None or sw[0] is not self.counter \
                    or not sw[2]:
                self._grow(table, freed, rows, side.cands, count)
            else:
                row, u = sw[1](rows[i], text[2])
                table.append(Replacement(i, row, CLEARED))
                freed.append(freed[-1] + unit - u)
                self.rows_built += 1
        if freed[count] + other < 0:
            return None
        kept = last.kept if last.size == n else ((0, n),) if n else ()
        if type(view) is ReplacedBefore and view.upto == count:
            return last if kept is last.kept else EditRecord(n, kept, lv, (), wv)
        new = side.view = ReplacedBefore(table, count, at)
        record = self._last = EditRecord(n, kept, lv, (), new) if side is t else EditRecord(n, kept, new, (), wv)
        return record

    def _frontier(self, st: _Log, t: _Turn, past: Sequence[Message], working: Sequence[Message],
                  limit: int) -> tuple[Sequence[Replacement], Sequence[Replacement]] | None:
        """:meth:`_clear`'s answer from the state kept across calls: the log's cleared results as a
        :class:`ReplacedBefore` view of its table (each placeholder built once), working memory's
        worked out on the call. None when working memory asks a call id again (the rule's ask look-up
        could then differ from the table's)."""
        if t.clash:
            return None
        n, results, wres = len(past), st.results, t.res
        older = len(results) + len(wres) - self.params.keep  # results before the keep-th last are older
        if older <= 0:
            bound = 0
        elif older < len(results):
            bound = results[older]
        elif older - len(results) < len(wres):
            bound = n + wres[older - len(results)]
        else:
            bound = n + len(working)
        if limit < bound:
            bound = limit
        c = bisect_left(st.at, bound)
        at_least = self.params.clear_at_least
        if at_least:
            k = self._reach(st, past, c, at_least)
            if k is not None:
                return (_view(st, k), ())
        else:
            if len(st.table) < c:  # (a frontier standing still builds nothing)
                self._build(st, past, c)
            if not t.dup:  # working memory's clearable results before the bound: a view of the turn's table
                k = bisect_left(t.pos, bound - n) if t.pos else 0
                if len(t.table) < k:  # (the call's newly cleared rows, usually one: built once each)
                    self._grow(t.table, t.freed, working, t.cands, k)
                if st.freed[c] + t.freed[k] < 0:  # placeholders longer than what they replace: none sent
                    return (), ()
                view: Sequence[Replacement] = ()
                if k:  # (the turn's view made here: one call fewer than :func:`_view`'s)
                    view = t.view = table_view(t.view, t.table, k, t.pos)
                return (_view(st, c) if c else (), view)
        freed = st.freed[c]
        excluded, wasks = st.excluded, t.asks
        wm: list[Replacement] = []
        for j in wres:
            ask = wasks.get(str(working[j].get("tool_call_id")))
            if n + j >= bound or ask is None or ask[0] >= n + j or ask[1] in excluded:
                continue
            _m, _tool, row, delta = self._wrow(working[j], ask[1])
            wm.append(Replacement(j, row, CLEARED))
            freed += delta
            if at_least and freed >= at_least:
                break
        if freed < at_least:
            return ((), ())
        return (_view(st, c) if c else (), tuple(wm))

    def _wrow(self, original: Message, tool: str) -> tuple[Message, str, Message, int]:
        """(``original``, ``tool``, its placeholder row, tokens freed): made once per row and tool."""
        wrows = self._wrows
        hit = wrows.get(id(original))
        if hit is None or hit[0] is not original or hit[1] != tool:
            row, delta = self._cleared(original, tool)
            hit = wrows[id(original)] = (original, tool, row, delta)
        return hit

    def _reach(self, st: _Log, past: Sequence[Message], c: int, at_least: int) -> int | None:
        """The fewest of the first ``c`` candidates that free ``at_least`` tokens (None: they do not)."""
        if st.reach is None:
            freed = st.freed
            while len(st.table) < c and st.reach is None:
                self._build(st, past, len(st.table) + 1)
                if freed[-1] >= at_least:
                    st.reach = len(st.table)
        return st.reach if st.reach is not None and st.reach <= c else None

    def _build(self, st: _Log, past: Sequence[Message], c: int) -> None:
        """The log's table grown to its first ``c`` candidates (:meth:`_grow`)."""
        self._grow(st.table, st.freed, past, st.cands, c)

    def _grow(self, table: list[Replacement], freed: list[int], rows: Sequence[Message],
              cands: Sequence[tuple[int, str, int]], c: int) -> None:
        """``table`` (the placeholders of the first ``len(table)`` of ``cands``, each ``(position in
        rows, tool, the counter's unit of the row)``) grown to the first ``c``, each built once, with
        ``freed`` (the tokens freed by the first k) grown with it: the one place a placeholder row is
        made. Its size is the original's count, its text one per tool and size
        (:meth:`_placeholder`, kept ``TEXTS_KEPT``; the last one made is used again while the rows
        are of its tool and size), its row the original with that text as content, counted by the
        counter's :func:`~inspector.engine.tokens.content_swap` (measured once, or read from the
        counter's memo of the text), and it frees the original's count minus its own."""
        counter, texts, sw = self.counter, self._texts, self._swapper
        if sw is None or sw[0] is not counter:  # (the counter's :func:`content_swap`, bound once per counter)
            sw = self._swapper = (counter, content_swap(counter), getattr(counter, "additive", False), counter.total)
        _c, swap, additive, total = sw  # (additive: total(u, 1) is u)
        run, start = freed[-1], len(table)
        last = self._text
        for i, tool, unit in cands[start:c]:  # (a slice: O(new rows), where islice would skip the old)
            size = unit if additive else total(unit, 1)
            if size != last[1] or tool != last[0]:  # (results of one tool and size in a row: one look-up)
                text = texts.get((tool, size))
                if text is None:
                    text = self._placeholder(tool, size)
                    if len(texts) < self.TEXTS_KEPT:
                        texts[(tool, size)] = text
                last = (tool, size, text)
            new, u = swap(rows[i], last[2])
            table.append(Replacement(i, new, CLEARED))
            run += size - (u if additive else total(u, 1))
            freed.append(run)
        self._text = last
        self.rows_built += len(table) - start

    def _cleared(self, original: Message, tool: str) -> tuple[Message, int]:
        """The placeholder row of one cleared result and the tokens it frees (:meth:`_grow`'s)."""
        table: list[Replacement] = []
        freed = [0]
        self._grow(table, freed, (original,), ((0, tool, self.counter.unit(original)),), 1)
        return table[0].row, freed[1]

    def _candidates(self, rows: Sequence[Message], limit: int) -> Iterator[tuple[int, int, str]]:
        """``(result position, asking row's position, tool name)`` of each clearable result, oldest
        first: every tool result but the last ``keep`` (excluded tools count among them, as in both
        sources), before ``limit``, with its ask found and its tool not excluded."""
        results = [i for i, m in enumerate(rows) if m.get("role") == "tool"]
        keep = self.params.keep
        older = results[:max(0, len(results) - keep)]
        asks: dict[str, tuple[int, str]] = {}
        for i, m in enumerate(rows):
            for call in _calls(m):
                fn = call.get("function")
                asks[str(call.get("id"))] = (i, str(fn.get("name", "")) if isinstance(fn, dict) else "")
        excluded = set(self.params.exclude_tools or ())
        for i in older:
            ask = asks.get(str(rows[i].get("tool_call_id")))
            if i < limit and ask is not None and ask[0] < i and ask[1] not in excluded:
                yield i, ask[0], ask[1]

    def _clear(self, rows: Sequence[Message], limit: int) -> _Clearing:
        """The replacements, oldest first, with the tokens they free (the counter's count of each
        original row minus its replacement's); stopped once ``clear_at_least`` > 0 is reached, and
        empty when every candidate together frees less."""
        at_least = self.params.clear_at_least
        done = _Clearing()
        for i, ask, tool in self._candidates(rows, limit):
            original = rows[i]
            new, delta = self._cleared(original, tool)
            done.rows[i] = (new, CLEARED)
            done.freed += delta
            if self.params.clear_tool_inputs:
                self._blank_input(rows, ask, str(original.get("tool_call_id")), done)
            if at_least and done.freed >= at_least:
                return done
        return done if done.freed >= at_least else _Clearing()

    def _blank_input(self, rows: Sequence[Message], ask: int, call_id: str, done: _Clearing) -> None:
        """Blank the arguments of call ``call_id`` in the asking row (its latest replacement when
        another call of it was blanked already), adding the tokens that frees."""
        before = done.rows[ask][0] if ask in done.rows else rows[ask]
        calls = [self._blank_call(c) if isinstance(c, dict) and str(c.get("id")) == call_id else c
                 for c in before.get("tool_calls") or ()]
        after = {**before, "tool_calls": calls}
        done.rows[ask] = (after, INPUT_CLEARED)
        done.freed += self.counter.count([before]) - self.counter.count([after])

    @staticmethod
    def _blank_call(call: dict[str, object]) -> dict[str, object]:
        """``call`` with its function's arguments blanked to ``{}`` (its id and name kept)."""
        fn = call.get("function")
        return {**call, "function": {**(fn if isinstance(fn, dict) else {}), "arguments": json.dumps({})}}

    def _placeholder(self, tool: str, tokens: int) -> str:
        """The text a cleared result is sent as: ``placeholder`` (or the default note) with
        ``{tool}`` and ``{tokens}`` filled in."""
        text = self.params.placeholder if self.params.placeholder is not None else DEFAULT_PLACEHOLDER
        return text.replace("{tool}", tool).replace("{tokens}", _grouped(tokens))
