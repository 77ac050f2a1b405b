"""The incremental assembly: the reference's result from running sums and recorded boundaries.

:class:`IncrementalPath` keeps a :class:`~inspector.engine.assembly.row_index.RowIndex` over every
message ever committed (in commit order) and one over working memory, so a call reads only what
changed since the last one: the pre-cut and the working-memory cut by bisection over running sums,
the pairing repair and the final check over the dirty units and the two ends of each range, bands
from the sums, and the payload's long runs recorded as :class:`~inspector.engine.types.Span`
ranges. It applies when the context manager's record is ``log[:h] + [block?] + log[k:]``
(:meth:`~inspector.engine.contracts.EditRecord.split_shape`: a suffix of the committed log, or the
condenser's kept head, summary and tail, whose head rows and block are read one by one ahead of
the log range); otherwise it returns None and the reference path
(:mod:`inspector.engine.assembly.reference`) runs. Tests hold the two equal call by call.

One call, in named steps: :func:`_match_log` (where the manager's result sits in the log), the
pre-cut (:mod:`inspector.engine.assembly.precut`: history that can never fit), :func:`_compose` (the
payload handed to the trimmer, a view when it is long), the trim from sums, :func:`_locate` (where
the log range and working memory sit after it), :func:`_clean_sources` (the ranges the pairing
pass need not read), the pairing pass, then the layout (:class:`_Layout`) and the bands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from inspector.engine.assembly.call import HELLO, BandRule, Call, band_rule
from inspector.engine.assembly.records import Assembly, PayloadRow, assembly_record
from inspector.engine.assembly.precut import cut_guards, front_cut, precut_at
from inspector.engine.assembly.row_index import RowIndex, clean_ranges, marks_of, singled_any
from inspector.engine.contracts import Insertion
from inspector.engine.history import is_ask
from inspector.engine.pairing import sanitize_provider_messages
from inspector.engine.summary_block import is_summary_block
from inspector.engine.tokens import TokenCounter
from inspector.engine.trim import RowSums, trim_budget, trim_with_sums
from inspector.engine.types import JoinedRows, Message, RowsView, SanitizeResult, Span
from inspector.vocabulary import BANDS

__all__ = ["VIEW_MIN", "IncrementalPath", "RowUnits"]

VIEW_MIN = 256
"""A payload whose log range and working memory hold this many rows or more is handed on as a view
(:class:`~inspector.engine.types.JoinedRows`), never copied: the copy of a long payload, and its
free later, cost more than the view's handful of reads (a few Python calls a call); a shorter one
is copied into a list, which reads at C speed."""

_NO_TOKENS: dict[str, int] = dict.fromkeys(BANDS, 0)
"""Every band at 0, in band order: copied (never changed) as a call's per-band sums start."""

Source = tuple[RowIndex, int, int, int, str]
"""A clean range of an index: (index, lo, hi, its payload position, band)."""


class RowUnits(NamedTuple):
    """What the assembler already read for a call: the units of the system band's row, of the user
    row and of all of working memory, and the two indexes (committed log, working memory: its ``n``
    is the call's working memory's length, read from it rather than through ``len()``)."""

    system: int
    user: int
    working: int
    log: RowIndex
    wmi: RowIndex


@dataclass(slots=True)
class _Where:
    """Where the log range and working memory sit in the trimmer's output: ``out[log_at:log_end]``
    is ``log.rows[la:]`` and ``out[wm_at:]`` is ``wmi.rows[cur:]``."""

    log: RowIndex
    la: int
    log_at: int
    log_end: int
    wmi: RowIndex
    cur: int
    wm_at: int


@dataclass(slots=True)
class _Composed:
    """The payload handed to the trimmer: ``messages[off:end]`` is the log range from row ``a``, the
    rows before it the front (system band, protected head, an uncut block), then the user row or the
    placeholder. ``units`` is the total units of ``messages``; ``precut`` the rows cut before it.
    ``messages`` is a :class:`~inspector.engine.types.JoinedRows` view when the log range and
    working memory are long (:data:`VIEW_MIN` rows or more), else a list."""

    messages: list[Message] | JoinedRows
    a: int
    off: int
    end: int
    placeholder: bool
    units: int
    precut: Sequence[Message]
    first: Message | None
    """``messages[0]`` (None: no row)."""
    after: Message | None
    """The row after the log range: the user row, the placeholder, or None (working memory's first row comes next)."""


class IncrementalPath:
    """The incremental path's state across calls: the indexes, the committed log they read, and the
    band rule and marks of the last call (every call of a turn reuses them).

    Guarantees: :meth:`assemble` returns the reference path's record for the same call, or None
    when the call is not one it covers; each row's facts are derived when it enters working memory
    and at most once more at commit (:attr:`rows_indexed`)."""

    def __init__(self) -> None:
        self._indexes: dict[str, RowIndex] = {}
        self._base: list[Message] = []  # every committed message, in commit order
        self._base_pos: dict[int, int] = {}  # id(message) -> position in _base
        self._seen: tuple[Sequence[Message] | None, int, Message | None] = (None, -1, None)
        """The log the last call indexed: (list object, length, last row)."""
        self._rule: tuple[Any, ...] = (None, None, None, None, None, None)
        """(system row, user row, has_user, placeholder, own_system, the band rule made for them)."""
        self._match: tuple[Any, ...] = (None, None, None, -1, None, None)
        """(edit record (frozen), projection, log list, its length, system row, the answer)."""
        self._marks: tuple[Any, ...] = (None, -1, None, None, None, None, ())
        """(``_base``, its length, system row, user row, log index, the ``singled`` rule made for them
        from :func:`~inspector.engine.assembly.row_index.marks_of`, and its log marks), kept while
        those five stay the same (the log only grows in place, and a new one is a new list)."""

    @property
    def rows_indexed(self) -> int:
        """How many rows had their facts derived over this path's life: each row when it enters
        working memory and at most once more at commit (a long turn's facts are taken over from
        working memory, :attr:`RowIndex.CARRY_MIN`), never per call: tests hold this at O(rows)."""
        return sum(idx.measured for idx in self._indexes.values())

    def index(self, name: str, counter: TokenCounter, rows: Sequence[Message], carry: RowIndex | None = None) -> RowIndex:
        """The index called ``name`` (``"working"``, ``"log"``) brought in step with ``rows``; a new
        one when ``counter`` changed. ``carry`` as :meth:`RowIndex.sync` takes it."""
        idx = self._indexes.get(name)
        if idx is None or idx.counter is not counter:
            idx = self._indexes[name] = RowIndex(counter)
        return idx.sync(rows, carry)

    def log_index(self, counter: TokenCounter, past: Sequence[Message]) -> RowIndex:
        """The index over every message ever committed, in commit order (an append-only list, so a
        fold never re-indexes: the projection ``past`` is ``[summary block?] + a suffix`` of it).

        Every call of a turn sees the same log (the same list object, length and last row): then
        nothing was committed since the last call and the index is returned as it stands."""
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
        return self.index("log", counter, base, carry=self._indexes.get("working"))

    def assemble(self, c: Call, ru: RowUnits,
                 shape: tuple[int, int, Insertion | None] | None = None) -> Assembly | None:
        """Call ``c``'s assembly from running sums (module docstring); None when the manager's record
        is not of the split shape (:func:`_match_log`) or the trimmer dropped the answers of an ask
        (a resumed turn): the reference path handles those. ``shape``: the record's split shape when
        the caller read it already (None: read here)."""
        matched = self._matched(c, shape)
        if matched is None:
            return None
        prot, front, a0 = matched
        budget = c.budget
        reserve = budget.trimmer_reserve
        limit = trim_budget(budget.max_tokens, reserve, c.tool_tokens)
        comp = _compose(c, ru, prot, front, a0, limit)
        counter = c.engine.counter
        sums = RowSums(partial(_msg_sum, ru.log.pre, comp.a, comp.off, comp.end, comp.messages, counter.unit),
                       comp.units, ru.wmi.unit, ru.wmi.units, ru.working, ru.wmi.chain, ru.wmi.reach, ru.wmi.n)
        n_msgs = comp.end + (1 if c.has_user else 0) + (1 if comp.placeholder else 0)  # len(messages)
        t_head = 1 if comp.first is not None and comp.first.get("role") == "system" else 0
        trimmed = trim_with_sums(comp.messages, max_tokens=budget.max_tokens, reserve=reserve, fixed=c.tool_tokens,
                                 pin_tail=c.wm, counter=counter, sums=sums, owned=True, budget=limit)
        # (the trimmer's result: a view of the same ranges, working memory's kept rows after them; no row copied)
        if trimmed.answers_removed:
            return None  # answers of a dropped ask (HITL): the reference handles it
        t_msgs = trimmed.messages
        n_in = t_msgs.n if type(t_msgs) is JoinedRows else len(t_msgs)  # (a view's len() is a Python call)
        n_wm = ru.wmi.n  # len(c.wm), read from its index (a frontier's working memory is a view: len() a Python call)
        w = _locate(ru, comp, n_in, n_msgs, t_head, trimmed.history_removed, n_wm)
        sources, skip = _clean_sources(w, comp.after if comp.after is not None else
                                       c.wm[w.cur] if w.cur < n_wm else None)
        declares = partial(_declares, sources)
        sanitized = sanitize_provider_messages(trimmed.messages, skip=skip, skip_declares=declares, owned=True)
        band_of = self._band_rule(c, comp.placeholder)
        singled = self._singled(c, ru.log)
        blocks = self._blocks(w) if sanitized.messages is trimmed.messages and not sanitized.repairs and \
            not singled(w.wmi, w.cur, w.wmi.n) else None
        if blocks is not None:
            layout, units, count, payload_units = _layout_ranges(sanitized.messages, w, band_of, c, ru, blocks)
        else:
            lay = _Layout()
            _layout_rows(lay, sanitized, sources, trimmed.messages, band_of, counter.unit, w, singled)
            layout, units, count = lay.close(), lay.units, lay.count
            payload_units = sum(units.values())
        bands = _bands(units, count, ru.log.additive, counter, c.tool_tokens)
        sent = sanitized.messages
        payload_tokens = counter.total(payload_units, n_in if sent is t_msgs else len(sent)) + c.tool_tokens
        return assembly_record(c, sanitized, layout, bands, payload_tokens, trimmed, comp.precut, declares)

    def _matched(self, c: Call, shape: tuple[int, int, Insertion | None] | None) -> tuple[Message | None, list[Message], int] | None:
        """``(protected head row or None, front rows, a0)``: :func:`_match_log` with the protected
        head row (a system-role row standing first, no system band) taken off. The same on every
        call of a turn (the same record, projection, log and system band), so it is kept for them."""
        edits, past, base = c.decision.edits, c.past, self._base
        last = self._match
        if last[0] is edits and last[1] is past and last[2] is base and last[3] == len(base) and \
                last[4] is c.system and edits is not None:
            kept: tuple[Message | None, list[Message], int] | None = last[5]
            return kept
        matched = _match_log(c, base, self._base_pos, shape)
        out: tuple[Message | None, list[Message], int] | None = None
        if matched is not None:
            front, a0 = matched
            prot: Message | None = None
            if c.system is None:
                if front and front[0].get("role") == "system":
                    prot, front = front[0], front[1:]
                elif not front and a0 < len(base) and base[a0].get("role") == "system":
                    prot, a0 = base[a0], a0 + 1
            out = (prot, front, a0)
        self._match = (edits, past, base, len(base), c.system, out)
        return out

    def _band_rule(self, c: Call, placeholder: bool) -> BandRule:
        """:func:`~inspector.engine.assembly.call.band_rule` for this call: the same rule on every
        call of a turn, so it is made once a turn and kept."""
        system, user, has_user = c.system, c.user, c.has_user
        own_system = c.engine.conversation.system_message is system
        rule = self._rule
        if rule[0] is system and rule[1] is user and rule[2] is has_user and rule[3] is placeholder and \
                rule[4] is own_system:
            band_of: BandRule = rule[5]
            return band_of
        band_of = band_rule(system, user, has_user, placeholder, own_system)
        self._rule = (system, user, has_user, placeholder, own_system, band_of)
        return band_of

    def _singled(self, c: Call, log: RowIndex) -> Callable[[RowIndex, int, int], bool]:
        """``singled(idx, lo, hi)``: whether a row of ``idx.rows[lo:hi]`` is one the band rule gives
        a band other than its range's (:func:`~inspector.engine.assembly.row_index.singled_out`), with the marks of this call's system
        and user rows read once while they and the log stay the same."""
        past, system = self._base, c.system
        u_obj = c.user if c.has_user else None
        marks = self._marks
        if marks[0] is not past or marks[1] != len(past) or marks[2] is not system or marks[3] is not u_obj or \
                marks[4] is not log:
            log_marks, odd = marks_of(self._base_pos, system, u_obj)
            singled = partial(singled_any, log, log_marks, odd, system, u_obj)
            marks = self._marks = (past, len(past), system, u_obj, log, singled, log_marks)
        rule: Callable[[RowIndex, int, int], bool] = marks[5]
        return rule

    def _blocks(self, w: _Where) -> list[int] | None:
        """The summary blocks of the log range (positions in the log), when they are the only rows of
        it the band rule singles out (each is then laid as one row between the range's spans); None
        when the system band's row or the user row stands in it (the row-by-row layout reads it).
        Read after :meth:`_singled` for this call (its marks)."""
        lo, hi = w.la, w.log.n
        for p in self._marks[6]:
            if lo <= p < hi:
                return None
        return w.log.blocks_in(lo, hi)


def _match_log(c: Call, base: Sequence[Message], pos: Mapping[int, int],
               shape: tuple[int, int, Insertion | None] | None = None) -> tuple[list[Message], int] | None:
    """``(front, a0)`` when the call's edit record is ``log[:h] + [block?] + log[k:]``
    (:meth:`~inspector.engine.contracts.EditRecord.split_shape`): the history is the rows ``front``
    (the kept head and the block, read one by one) then the append-only log ``base`` from position
    ``a0`` (read from its index), the projection's rows being the log's tail (``pos``: its row
    positions); else None, and the reference path assembles the call. A kept projection head that
    the log does not hold (the summary block an earlier fold left) is a front row. None too when the
    log range opens with a ``tool`` row that a front row's group could take (its groups would not be
    the log's recorded chain)."""
    edits, past = c.decision.edits, c.past
    n_log = len(past)
    if edits is None or edits.size != n_log:
        return None
    if shape is None:
        shape = edits.split_shape()
    if shape is None:
        return None
    h, k, ins = shape
    off = len(base) - n_log  # projection row i (a row the log holds) is log row i + off
    front = [past[i] for i in range(h)]
    if ins is not None:
        front.append(ins.row)
    row = past[k] if k < n_log else None
    if row is not None and id(row) not in pos:  # not a log row: the block an earlier fold left
        if front or not is_summary_block(row):
            return None
        return [row], k + 1 + off
    a0 = k + off
    if front and row is not None and row.get("role") == "tool":
        last = front[-1]
        if last.get("role") == "tool" or is_ask(last):
            return None
    return front, a0


def _compose(c: Call, ru: RowUnits, prot: Message | None, front: list[Message], a0: int, limit: int) -> _Composed:
    """The payload before the trimmer: the system band (or a protected head row with no system
    band), the ``front`` rows the pre-cut left (a kept head, a block), the log rows after the
    pre-cut, then the user row, or :data:`~inspector.engine.assembly.call.HELLO` when there is
    nothing else to send; with the units of it all (the log range's from its running sums). ``limit``:
    the tokens the trimmer allows the messages (:func:`~inspector.engine.trim.trim_budget`)."""
    log, system, has_user = ru.log, c.system, c.has_user
    past: list[Message] = log.rows  # type: ignore[assignment]
    n_log = log.n
    unit = c.engine.counter.unit
    u_user = ru.user if has_user else 0
    u_protected = unit(prot) if prot is not None else 0
    u_front = [unit(m) for m in front] if front else []  # (no front rows, the usual call: no comprehension)
    n_f = len(front)
    cut = 0
    if n_log > a0 or front:
        u_other = ru.system + u_user + u_protected + ru.working
        n_other = (1 if system else 0) + (1 if has_user else 0) + (1 if prot is not None else 0) + ru.wmi.n
        at = precut_at(log, a0, limit, n_other, u_other) if n_log > a0 else None
        if at is not None:
            cut = n_f + at - a0
        elif front:  # every suffix of the log range fits: the newest overflowing row, if any, is a front row
            cut = front_cut(c.engine.counter, log, a0, front, u_front, limit, n_other + n_log - a0,
                             u_other + log.pre[n_log] - log.pre[a0])
        if cut and system is None:
            cut = cut_guards(c, log, a0, front, cut, prot is not None)
    a = a0 + cut - n_f if cut > n_f else a0  # first log row after the pre-cut
    # (nothing cut, the usual call of a log that fits: no view to build)
    precut: Sequence[Message] = RowsView(front[:cut], past, a0, a) if cut else ()
    kept = front[cut:] if cut < n_f else []
    lead: list[Message] = [system] if system else [prot] if prot is not None else []
    lead.extend(kept)
    off = len(lead)  # rows before the log range
    end = off + n_log - a
    placeholder = not end and not has_user and not ru.wmi.n  # nothing else to send
    last: list[Message] = [c.user] if has_user else [HELLO] if placeholder else []
    messages: list[Message] | JoinedRows
    if n_log - a + ru.wmi.n >= VIEW_MIN:  # a long payload is not copied: a view of (lead, log[a:], user row)
        messages = JoinedRows([(lead, 0, off), (past, a, n_log), (last, 0, len(last))], end + len(last))
    elif a >= off:  # a short one copied once, with room for the front rows written over it
        messages = past[a - off:]
        messages[:off] = lead
        messages += last
    else:
        messages = lead + past[a:] + last
    first = lead[0] if off else past[a] if end else last[0] if last else None
    units = log.pre[n_log] - log.pre[a] + ru.system + u_protected + u_user + (sum(u_front[cut:]) if front else 0) + \
        (unit(HELLO) if placeholder else 0)
    return _Composed(messages, a, off, end, placeholder, units, precut, first, last[0] if last else None)


def _locate(ru: RowUnits, comp: _Composed, n_in: int, n_msgs: int, t_head: int, dropped_hist: int,
            n_wm: int) -> _Where:
    """Where the log range and working memory sit in the trimmer's output of ``n_in`` rows, from what
    it dropped: ``dropped_hist`` history rows after the protected head (``t_head``), and working
    memory's oldest rows (the output's length says how many)."""
    start = t_head + dropped_hist
    off = comp.off
    la = comp.a + (start - off if start > off else 0)  # first log row still in the payload
    log_at = (off if off > start else start) - start + t_head
    wm_kept = n_in - (n_msgs - dropped_hist)
    return _Where(ru.log, la, log_at, log_at + ru.log.n - la, ru.wmi, n_wm - wm_kept, n_in - wm_kept)


def _clean_sources(w: _Where, nxt: Message | None) -> tuple[list[Source], list[tuple[int, int]]]:
    """The clean ranges of the log range and of working memory (:func:`clean_ranges`), with their
    payload ranges: what the pairing pass and the final check need not read. The log range's last
    unit is one of them too when what follows it in the payload (``nxt``) closes it: a row that is
    not a tool row (the user turn, as a rule) or nothing at all; working memory ends the payload."""
    closed = nxt is None or (type(nxt) is dict and nxt.get("role") != "tool")
    sources: list[Source] = []
    skip: list[tuple[int, int]] = []
    for idx, lo, at, band, to_end in ((w.log, w.la, w.log_at, "history", closed),
                                      (w.wmi, w.cur, w.wm_at, "working_memory", True)):
        for s_lo, s_hi in clean_ranges(idx, lo, idx.n, to_end):
            p_lo = at + s_lo - lo
            sources.append((idx, s_lo, s_hi, p_lo, band))
            skip.append((p_lo, p_lo + s_hi - s_lo))
    return sources, skip


def _msg_sum(pre: Sequence[int], a: int, off: int, end: int, messages: Sequence[Message],
             unit: Callable[[Message], int], i: int, j: int) -> int:
    """Units of ``messages[i:j]`` where ``messages[off:end]`` is the log range from row ``a`` (its
    running sums ``pre``) and every other row is measured by ``unit`` (bound with
    :func:`functools.partial` into :class:`~inspector.engine.trim.RowSums`' ``msg_sum``)."""
    if off <= i and j <= end:
        return pre[a + j - off] - pre[a + i - off]
    return sum(pre[a + q - off + 1] - pre[a + q - off] if off <= q < end else unit(messages[q]) for q in range(i, j))


def _declares(sources: Sequence[Source], rid: str) -> bool:
    """Whether an ask inside one of the clean ``sources`` ranges declares call id ``rid`` (rule 6's
    label for the pairing pass, which does not read those rows; bound with :func:`functools.partial`)."""
    return any(idx.declares(rid, lo, hi) for idx, lo, hi, _at, _b in sources)


class _Layout:
    """The payload's layout as it is built, with the units and rows per band: rows sent as they are,
    in their own band, from one index grow as one pending :class:`~inspector.engine.types.Span`
    (:meth:`span`) until a row of another kind is laid (:meth:`row`) or the layout is closed."""

    __slots__ = ("parts", "units", "count", "run_idx", "run_lo", "run_hi", "run_band")

    def __init__(self) -> None:
        self.parts: list[PayloadRow | Span] = []
        self.units = dict(_NO_TOKENS)
        self.count = dict(_NO_TOKENS)
        self.run_idx: RowIndex | None = None
        self.run_lo = self.run_hi = 0
        self.run_band = ""

    def span(self, idx: RowIndex, lo: int, hi: int, band: str) -> None:
        """Lay ``idx.rows[lo:hi]`` in ``band``: it extends the pending run when it continues it."""
        if self.run_idx is idx and self.run_hi == lo:
            self.run_hi = hi
            return
        if self.run_idx is not None:
            self._flush()
        self.run_idx, self.run_lo, self.run_hi, self.run_band = idx, lo, hi, band

    def row(self, row: PayloadRow, units: int) -> None:
        """Lay one row of ``units`` units (after the pending run)."""
        if self.run_idx is not None:
            self._flush()
        self.parts.append(row)
        self.units[row.band] += units
        self.count[row.band] += 1

    def close(self) -> list[PayloadRow | Span]:
        """The layout, the pending run laid."""
        self._flush()
        return self.parts

    def _flush(self) -> None:
        idx = self.run_idx
        if idx is None:
            return
        lo, hi, band = self.run_lo, self.run_hi, self.run_band
        self.parts.append(Span(idx.rows, lo, hi, band))  # type: ignore[arg-type]
        self.units[band] += idx.pre[hi] - idx.pre[lo]
        self.count[band] += hi - lo
        self.run_idx = None


def _layout_ranges(sent: Sequence[Message], w: _Where, band_of: BandRule, c: Call, ru: RowUnits,
                   blocks: Sequence[int] = ()) -> tuple[list[PayloadRow | Span], dict[str, int], dict[str, int], int]:
    """The layout when nothing was repaired and no row of the two ranges is one the band rule singles
    out but the log range's summary ``blocks`` (log positions, ascending): each range is one Span in
    its own band, split around each block, laid as one row in its band (its units from the log's
    sums), and only the rows around the ranges are read (the front, then the user turn or the
    placeholder), whose units the call already holds. Returns the layout, the units and rows per
    band, and the payload's units (no run is ever pending: no _Layout)."""
    system = c.system
    u_obj = c.user if c.has_user else None
    unit = c.engine.counter.unit
    parts: list[PayloadRow | Span] = []
    units, count = dict(_NO_TOKENS), dict(_NO_TOKENS)
    payload_units = 0
    before, after = _around(sent, w) if type(sent) is JoinedRows else (sent[:w.log_at], sent[w.log_end:w.wm_at])
    # laid straight into the layout: the two ranges are of two indexes, so no run continues another
    for around, idx, lo, band in ((before, w.log, w.la, "history"), (after, w.wmi, w.cur, "working_memory")):
        for src in around:
            b, syn = band_of(src, False)
            u = ru.system if src is system else ru.user if src is u_obj else unit(src)
            parts.append(PayloadRow(src, b, syn, src))
            units[b] += u
            count[b] += 1
            payload_units += u
        pre = idx.pre
        for p in (blocks if idx is w.log else ()):  # a block between the spans (as _layout_rows lays it)
            if p > lo:
                payload_units += _lay_span(parts, units, count, idx, lo, p, band)
            src = idx.rows[p]  # type: ignore[index]
            b, syn = band_of(src, False)
            parts.append(PayloadRow(src, b, syn, src))
            u = pre[p + 1] - pre[p]
            units[b] += u
            count[b] += 1
            payload_units += u
            lo = p + 1
        if idx.n > lo:
            payload_units += _lay_span(parts, units, count, idx, lo, idx.n, band)
    return parts, units, count, payload_units


def _around(sent: Sequence[Message], w: _Where) -> tuple[Sequence[Message], Sequence[Message]]:
    """The rows of ``sent`` before the log range and between it and working memory (the front, then
    the user row or the placeholder): two slices of a list; of a view whose four parts are those
    ranges (lead, log range, user row, working memory: the trimmer dropped nothing), its first and
    third parts' rows, read from their lists, not row by row through the view."""
    if type(sent) is not JoinedRows:
        return sent[:w.log_at], sent[w.log_end:w.wm_at]
    p = sent.parts
    if len(p) == 4:
        (r0, a0, b0), (_r1, a1, b1), (r2, a2, b2) = p[0], p[1], p[2]
        if b0 - a0 == w.log_at and b1 - a1 == w.log_end - w.log_at and b2 - a2 == w.wm_at - w.log_end:
            return r0[a0:b0], r2[a2:b2]
    return [sent[i] for i in range(w.log_at)], [sent[i] for i in range(w.log_end, w.wm_at)]


def _lay_span(parts: list[PayloadRow | Span], units: dict[str, int], count: dict[str, int], idx: RowIndex,
              lo: int, hi: int, band: str) -> int:
    """Lay ``idx``'s rows ``lo:hi`` as one Span in ``band`` (units from its running sums); returns the units."""
    parts.append(Span(idx.rows, lo, hi, band))  # type: ignore[arg-type]
    u = idx.pre[hi] - idx.pre[lo]
    units[band] += u
    count[band] += hi - lo
    return u


def _layout_rows(lay: _Layout, sanitized: SanitizeResult, sources: Sequence[Source], out_in: Sequence[Message],
                 band_of: BandRule, unit: Callable[[Message], int], w: _Where,
                 singled: Callable[[RowIndex, int, int], bool]) -> None:
    """The layout row by row, for a payload the pairing pass changed or whose ranges hold a row the
    band rule singles out: each clean range in one step, every other row read (:func:`_lay_row`)."""
    prev_band = "working_memory"
    origin = sanitized.origin
    sent = sanitized.messages
    n_out = len(sent)
    spans = iter(zip(sanitized.clean, sources))
    nxt = next(spans, None)
    i = 0
    while i < n_out:  # the spans in one step each; only the rows between them one by one
        if nxt is not None and i == nxt[0][0]:
            (_o_lo, o_hi), (idx, lo, hi, _at, band) = nxt
            nxt = next(spans, None)
            if not singled(idx, lo, hi):
                lay.span(idx, lo, hi, band)
                prev_band = band
                i = o_hi
                continue
            # else its rows are read one by one below, like the rows between the clean ranges
        prev_band = _lay_row(lay, sent[i], origin[i], out_in, prev_band, band_of, unit, w)
        i += 1


def _lay_row(lay: _Layout, out: Message, org: int | None, out_in: Sequence[Message], prev_band: str,
             band_of: BandRule, unit: Callable[[Message], int], w: _Where) -> str:
    """Lay one row sent (``org``: its position in the pairing pass's input, None for an empty result
    it added, which takes the band before it); a row sent as recorded in its own range's band joins
    that range's run. Returns its band."""
    if org is None:
        lay.row(PayloadRow(out, prev_band, "empty_result", None), unit(out))
        return prev_band
    src = out_in[org]
    in_wm = org >= w.wm_at
    b, syn = band_of(src, in_wm)
    if out is src and syn is None:
        if in_wm and b == "working_memory":
            q = w.cur + org - w.wm_at
            lay.span(w.wmi, q, q + 1, b)
            return b
        if w.log_at <= org < w.log_end and b == "history":
            q = w.la + org - w.log_at
            lay.span(w.log, q, q + 1, b)
            return b
    lay.row(PayloadRow(out, b, syn, src), unit(out))
    return b


def _bands(units: dict[str, int], count: dict[str, int], additive: bool, counter: TokenCounter,
           tool_tokens: int) -> dict[str, int]:
    """Each band's tokens from its ``units`` over ``count`` rows (in place: the units are the tokens
    for an additive counter), and the tool schemas'."""
    bands = units
    if not additive:
        total = counter.total
        for k, n in count.items():
            if n:
                bands[k] = total(bands[k], n)
    bands["tool_schemas"] = tool_tokens
    return bands
