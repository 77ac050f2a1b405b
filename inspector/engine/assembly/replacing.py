"""The incremental assembly of a record that replaces rows below a frontier (docs/design.md §3.14).

observation-masking and clear-tool-results keep the whole log and send its older tool results as
placeholder rows: their edit record's replacements are a
:class:`~inspector.engine.contracts.ReplacedBefore` view (the first ``upto`` entries of a table
the manager keeps, each row's placeholder built once), every row kept, nothing inserted. Such a
call is the incremental path's suffix call over a different list: the log with the rows below the
frontier ``F`` replaced. Replacing a tool result's content changes no role and no call id, so every
pairing and grouping fact of the log's :class:`~inspector.engine.assembly.row_index.RowIndex`
holds for it; only the rows and their units differ. :class:`FrontierIndex` is the log's index seen
that way: its rows a :class:`~inspector.engine.contracts.ReplacedRows` view, its running sums
``pre[i]`` those of the replaced log below ``F`` and the log's own above (:class:`_FrontierSums`),
so the pre-cut, the trimmer and the bands read O(1) sums as for any suffix call. The replaced log's
sums are kept per table, extended as the frontier moves on (:class:`ReplacingSums`): each row read
once, never per call. The incremental path then assembles the call as it stands
(:meth:`~inspector.engine.assembly.incremental.IncrementalPath.assemble`); tests hold the result
equal to the reference path's.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import repeat
from operator import add
from typing import overload

from inspector.engine.assembly.call import Call
from inspector.engine.assembly.incremental import IncrementalPath, RowUnits
from inspector.engine.assembly.records import Assembly
from inspector.engine.assembly.row_index import RowIndex
from inspector.engine.contracts import EditRecord, FlatRows, ReplacedBefore, ReplacedRows
from inspector.engine.tokens import TokenCounter
from inspector.engine.types import Message

__all__ = ["FrontierIndex", "ReplacingSums", "frontier_record"]


TAIL_LIST = 64
"""The most rows above a frontier written into :class:`ReplacingSums`' list after its sums (the
call's whole ``pre`` then one list, read at C speed: clear-tool-results' frontier stands a few rows
below working memory's end); a longer tail is read through :class:`_FrontierSums`."""

_NO_VIEW = ReplacedBefore([], 0)
"""The empty frontier view (its table never grows): a record replacing only working-memory rows has it."""


def frontier_record(edits: EditRecord | None) -> ReplacedBefore | None:
    """The record's frontier view when it is of the shape this module assembles: every log row kept,
    nothing inserted, the log's replacements a :class:`ReplacedBefore` (those of working memory, in
    its order, if any: a frontier of their own). A record replacing only working-memory rows has an
    empty view."""
    if edits is None or edits.inserted:
        return None
    size = edits.size
    if edits.kept != (((0, size),) if size else ()):  # every log row kept
        return None
    replaced, w = edits.replaced, edits.working
    if type(w) is ReplacedBefore:  # (its entries are in order: a view's table is)
        if type(replaced) is ReplacedBefore:
            return replaced
        return _NO_VIEW if not replaced and w.upto else None
    if type(replaced) is ReplacedBefore:
        view: ReplacedBefore = replaced
    elif not replaced and w:
        view = _NO_VIEW
    else:
        return None
    if w and len(w) > 1 and any(w[k].index >= w[k + 1].index for k in range(len(w) - 1)):
        return None
    return view


class ReplacingSums:
    """Running unit sums of the log with every row of one manager's table replaced, kept across calls:
    ``pre[i]`` = units of the replaced log's first ``i`` rows, read up to the furthest frontier asked
    for so far (each row once). A new table (the manager started again) or counter starts them again."""

    def __init__(self, work: ReplacingSums | None = None) -> None:
        """``work``: the sums of working memory's frontier views (made on first use when None)."""
        self.table: object = None
        self.counter: TokenCounter | None = None
        self.pre: list[int] = [0]
        self.k = 0
        """Table entries read into ``pre`` (but see :attr:`whole`)."""
        self.flat = FlatRows()
        """The replaced log as one list, moved to a view's frontier when the view is sliced (then a plain list copy)."""
        self.work = work
        """Working memory's, when its replacements are a frontier view too; its ``flat`` is the one the
        call's working rows view (:class:`~inspector.engine.contracts.ReplacedRows`) moves."""
        self.index: FrontierIndex | None = None
        """The one index these sums are read through, pointed at each call's view (:meth:`frontier`)."""
        self.own: list[int] | None = None
        self.n = -1
        self.view = _NO_VIEW
        """What the index was last pointed at: the log index's sums list (its own: a sync rebinds it, and
        the log's rows, only with a new one), its length then, and the view (read by identity)."""
        self.whole = False
        """Whether the index reads ``pre`` itself: the sums up to :attr:`view`'s frontier, then the log's
        own rows above it (shifted); ``k`` is then that view's ``upto`` (:meth:`frontier` takes those
        rows off before reading on)."""
        self.keep: EditRecord = EditRecord.keep_all(0)
        """The last ``EditRecord.keep_all`` record the path was shown (:func:`assemble_replacing`): the
        same object while the log's length is (a record is immutable), so the path's per-record answers
        (``_matched``) are kept across the calls of a turn."""

    def frontier(self, log: RowIndex, view: ReplacedBefore, counter: TokenCounter,
                 made: ReplacedRows | None = None) -> FrontierIndex:
        """``log`` seen through ``view`` (sums brought up to its frontier): one :class:`FrontierIndex`
        for the life of these sums, pointed at this call's view, so the incremental path's per-index
        rules (:meth:`~inspector.engine.assembly.incremental.IncrementalPath._singled`) are made
        once per log, not once per call. ``made``: the call's rows view of ``log`` through ``view``
        when the caller made one (working memory's, :class:`~inspector.engine.contracts.ReplacedRows`):
        the index's rows too, one view a call.

        The steady call (a clearing call: the same log lists, grown; the same table, the view moved
        on by an entry or two) is patched in place: the last call left its sums as one list (sums up
        to its frontier ``f0``, then the log's own rows above it, shifted), so only the rows replaced
        since (each table entry between the two views, at ``j >= f0``) change what follows them:
        the list is cut after ``j`` and the log's own sums re-written after it shifted by the new
        ``pre[j + 1] - own[j + 1]``. Exact because ``pre[i]`` for ``i <= j`` holds no newer
        replacement (entries come in log order) and a row that is not replaced adds its own units.
        The index's other facts are the log's, shared (:class:`FrontierIndex`): nothing to take over;
        the same view over the log grown keeps its rows view (a view of the same list through the same
        table prefix: the rows it reads never change, the list only grows). Anything else (a new table, counter, log list; a view moving back; too long a tail; a
        replaced row past the last call's log) takes the general path below."""
        own, n = log.pre, log.n
        if own is self.own and counter is self.counter:
            old, n0 = self.view, self.n
            if n == n0 and old is view:
                return self.index  # type: ignore[return-value]  # the last call's log and view: as it was
            f = view.frontier
            if self.whole and (old is view or view.table is self.table and old.frontier <= f <= n0) and \
                    n - f <= TAIL_LIST:  # the steady call (docstring; ``own`` holds n + 1 sums, ``pre`` n0 + 1)
                pre, k = self.pre, old.upto
                if view.upto == k:  # no entry since (the log grown): its own rows after the last sum
                    pre.extend(map(add, own[n0 + 1:], repeat(pre[n0] - own[n0])))
                else:
                    for e in view.table[k:view.upto]:
                        j = e.index + 1
                        pre[j:] = map(add, own[j:], repeat(pre[j - 1] - own[j] + counter.unit(e.row)))
                idx: FrontierIndex = self.index  # type: ignore[assignment]  # (set with ``own``)
                if made is not None and made.replaced is view and made.past is log.rows:
                    idx.rows = made
                elif old is not view:  # (the same view over the same list: its rows view as it was)
                    idx.rows = ReplacedRows(log.rows, view, view.at, self.flat)  # type: ignore[arg-type]
                self.n, self.view = n, view
                return idx
        if made is not None and (made.replaced is not view or made.past is not log.rows):
            made = None
        pre = self.pre
        if self.whole:  # the last call's rows above its frontier: taken off
            last = self.view
            del pre[last.frontier + 1:]
            self.k, self.whole = last.upto, False
        f = view.frontier
        if len(pre) <= f or view.table is not self.table or counter is not self.counter:
            pre = self.upto(view, log, counter)  # (else the sums reach the frontier already: nothing to read)
        whole = None
        if len(pre) == f + 1 and 0 <= n - f <= TAIL_LIST:  # the rows above the frontier written after the sums
            pre.extend(map(add, own[f + 1:n + 1], repeat(pre[f] - own[f])))
            whole = pre
        idx = self.index  # type: ignore[assignment]
        if idx is None:
            idx = self.index = FrontierIndex(log, view, pre, self.flat, made, whole)
        else:
            idx.point(log, view, pre, self.flat, made, whole)
        self.own, self.n, self.view, self.whole = own, n, view, whole is not None
        return idx

    def upto(self, view: ReplacedBefore, log: RowIndex, counter: TokenCounter) -> list[int]:
        """The sums brought up to ``view``'s frontier over ``log`` (the log's own sums for rows the
        table does not replace); returns them."""
        if view.table is not self.table or counter is not self.counter:
            self.table, self.counter, self.pre, self.k = view.table, counter, [0], 0
        pre, table, own = self.pre, view.table, log.pre
        f = view.frontier
        i, k = len(pre) - 1, self.k
        if i >= f:
            return pre
        unit = counter.unit
        total = pre[-1]
        nt = len(table)
        while i < f:
            if k < nt and table[k].index == i:
                total += unit(table[k].row)
                k += 1
            else:
                total += own[i + 1] - own[i]
            pre.append(total)
            i += 1
        self.k = k
        return pre


class _FrontierSums(Sequence[int]):
    """``pre[i]`` of the log with its rows below ``f`` replaced: the replaced log's sums up to ``f``,
    the log's own differences after it. Read by index (the pre-cut bisects it)."""

    __slots__ = ("rep", "own", "f", "base", "n")

    def __init__(self, rep: Sequence[int], own: Sequence[int], f: int, n: int) -> None:
        self.rep, self.own, self.f, self.n = rep, own, f, n
        self.base = rep[f] - own[f]

    def __len__(self) -> int:
        return self.n + 1

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...
    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        if type(i) is int and i >= 0:  # the path's reads: a position, from the start
            return self.rep[i] if i <= self.f else self.own[i] + self.base
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n + 1))]
        if i < 0:
            i += self.n + 1
        return self.rep[i] if i <= self.f else self.own[i] + self.base


class FrontierIndex(RowIndex):
    """The log's :class:`RowIndex` seen through a frontier record: the same pairing, grouping and
    band facts (a placeholder keeps its row's role and call id), its rows and running sums those of
    the log with the replaced rows sent instead. O(1) to make and to point; reads only.

    The facts are the log index's own, read live: the index shares the log index's attribute dict
    (every fact a sync sets lives there), so a log grown or re-indexed needs nothing copied or
    taken over; ``rows`` and ``pre`` (its running sums) are slots of its own, which a
    slot's descriptor reads before that dict. Nothing writes to a frontier index but :meth:`point`
    and :class:`ReplacingSums` (a sync would write the log's dict: none is ever run on it)."""

    __slots__ = ("rows", "pre", "sums")

    def __init__(self, log: RowIndex, view: ReplacedBefore, rep: Sequence[int], flat: FlatRows | None = None,
                 made: ReplacedRows | None = None, whole: list[int] | None = None) -> None:
        # no RowIndex.__init__: every fact is the log index's own (point shares them)
        self.sums: _FrontierSums | None = None
        """Its running sums (``pre``), one object re-pointed at each call's frontier (read only during a call)."""
        self.point(log, view, rep, flat, made, whole)

    def point(self, log: RowIndex, view: ReplacedBefore, rep: Sequence[int], flat: FlatRows | None = None,
              made: ReplacedRows | None = None, whole: list[int] | None = None) -> None:
        """Read ``log`` through ``view`` from now on (``rep``: the replaced log's sums up to its frontier):
        the log's facts (its dict, shared), a new rows view (a layout made before keeps its own) and the
        sums re-pointed (no layout keeps them: it reads its units as it is made). ``made``: that rows
        view when the caller holds it already; ``whole``: the sums of every row as one list when the
        caller wrote them (then read as they are, no :class:`_FrontierSums`)."""
        rows, own, n = log.rows, log.pre, log.n
        if self.__dict__ is not log.__dict__:
            self.__dict__ = log.__dict__
        assert rows is not None
        self.rows = made if made is not None else ReplacedRows(rows, view, view.at, flat)  # (``flat`` moved when sliced)
        if whole is not None:
            self.pre = whole
            return
        f, sums = view.frontier, self.sums
        if sums is None:
            sums = self.sums = _FrontierSums(rep, own, f, n)
        else:
            sums.rep, sums.own, sums.f, sums.n, sums.base = rep, own, f, n, rep[f] - own[f]
        self.pre = sums  # type: ignore[assignment]

    def fits_back(self, budget_units: int, n_other: int, units_other: int, lo: int) -> int:
        """:meth:`RowIndex.fits_back` over the frontier sums, by a bisection of one of its two lists
        (the replaced log's sums up to the frontier, or the log's own after it, shifted): the sums
        are one non-decreasing sequence that meets at the frontier, so the first row whose suffix
        fits is in the part whose end bounds the target. Each probe a C list read, not a
        :class:`_FrontierSums` item (the pre-cut runs on every call)."""
        pre: Sequence[int] = self.pre
        if type(pre) is list and self.additive:  # the sums as one list (the steady call's): RowIndex.fits_back's bisection
            return bisect_left(pre, pre[self.n] + units_other - budget_units, lo, self.n) - 1
        if not self.additive or type(pre) is not _FrontierSums:
            return RowIndex.fits_back(self, budget_units, n_other, units_other, lo)
        end, f, rep = self.n, pre.f, pre.rep
        t = (rep[end] if end <= f else pre.own[end] + pre.base) + units_other - budget_units
        # (pre[end], read from the two lists) the smallest i in [lo, end) with pre[i] >= t
        if lo <= f and rep[f] >= t:
            return bisect_left(rep, t, lo, f) - 1
        return bisect_left(pre.own, t - pre.base, max(lo, f), end) - 1

    def reach(self, x: int) -> int:
        """:meth:`RowIndex.reach` over the frontier sums, by a bisection of one of their two lists (as
        :meth:`fits_back`): a C list read per probe, not a :class:`_FrontierSums` item."""
        pre: Sequence[int] = self.pre
        if type(pre) is not _FrontierSums:
            return RowIndex.reach(self, x)
        f, rep = pre.f, pre.rep
        t = rep[0] + x
        if rep[f] >= t:
            return bisect_left(rep, t, 0, f + 1)
        return bisect_left(pre.own, t - pre.base, f + 1, self.n + 1)


def assemble_replacing(path: IncrementalPath, sums: ReplacingSums, view: ReplacedBefore, c: Call, system: int,
                       user: int, working: int, log: RowIndex, wmi: RowIndex) -> Assembly | None:
    """Call ``c``'s assembly by the incremental path over the log seen through ``view`` (module
    docstring); None when the path does not cover the call (then the reference assembles it). The
    call's own decision, with its frontier record, stays the assembly's. ``system`` .. ``wmi``: the
    call's :class:`~inspector.engine.assembly.incremental.RowUnits` with the log's own index (the
    call's is made here, once, with the frontier index). Working memory is the call's (``c.wm``): a
    :class:`~inspector.engine.contracts.ReplacedRows` when the record's ``working`` is a frontier view
    (:class:`~inspector.engine.assembly.assembler.ContextAssembler` reads it through that view), which
    its frontier index then reads too."""
    c_decision = c.decision
    edits = c_decision.edits
    n = log.n
    if n != len(c.past) or (n and log.last is not c.past[-1]) or view.frontier > n:
        return None  # the log index is not this projection (a fold): positions would not match
    # an empty view (a record replacing only working-memory rows) reads the log as it is: its index itself
    idx = sums.frontier(log, view, c.engine.counter) if view.upto else log
    if c.wm is not wmi.rows:  # working memory sent as another list: rows of it replaced
        wm: Sequence[Message] = c.wm  # (a view, when read through a frontier: typed as the list it stands for)
        counter = c.engine.counter
        if type(wm) is ReplacedRows:  # read through a frontier view of its own (the record's ``working``)
            work = sums.work
            if work is None:
                work = sums.work = ReplacingSums()
            wmi = work.frontier(wmi, wm.replaced, counter, wm)
            working = wmi.pre[-1]
        elif edits is not None and (wv := edits.working):  # a few replacements: its sums made on the call
            wview = ReplacedBefore(list(wv), len(wv))
            wmi = FrontierIndex(wmi, wview, _sums(wmi, wview, counter))
            working = wmi.pre[wmi.n]
    # the path reads the record's shape (its log match) and nothing else of it: for that read the
    # decision holds the suffix shape, the whole log over idx's rows, and gets its own record back
    # after (no copy of the decision and of the call per call)
    keep = sums.keep
    if keep.size != n:
        keep = sums.keep = EditRecord.keep_all(n)
    c_decision.edits = keep
    try:
        return path.assemble(c, RowUnits(system, user, working, idx, wmi))
    finally:
        c_decision.edits = edits


def _sums(idx: RowIndex, view: ReplacedBefore, counter: TokenCounter) -> list[int]:
    """Running unit sums of ``idx``'s rows up to ``view``'s frontier, its replaced rows counted as sent."""
    pre, own, table = [0], idx.pre, view.table
    k = 0
    for i in range(view.frontier):
        if k < len(table) and table[k].index == i:
            pre.append(pre[-1] + counter.unit(table[k].row))
            k += 1
        else:
            pre.append(pre[-1] + own[i + 1] - own[i])
    return pre
