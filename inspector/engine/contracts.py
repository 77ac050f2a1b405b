"""The manager contract: what a context manager returns for one call, as an edit record.

A manager receives the committed log (``past``) and a token hint and answers with a :class:`Managed`
result: an :class:`EditRecord` over the log and the :class:`~inspector.engine.managers.base.CMDecision`
that says why. The record names, by log index, the rows kept as they are (``kept`` ranges), the kept
rows sent as another row (``replaced``, each with a reason code such as ``tool-result-cleared``) and
the blocks inserted (``inserted``, e.g. a summary, before a log index). The history the call sees is
derived from it (:meth:`EditRecord.apply`), and so are the rows a call left out
(:meth:`EditRecord.dropped`): every reader (the archive's fold, the assembly paths, the replay's row
references, the forgetting reasons) reads the record, never object identity.

Working memory. A strategy may opt in (``edits_working_memory``) to see the current turn's working
memory, read-only, and replace rows of it (``working``: replacements by working-memory index), never
in its newest group (the rows from its last assistant message on, which the model is answering):
:func:`check_record` refuses a record that does.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import overload

from inspector.engine.summary_block import is_summary_block
from inspector.engine.types import Message, RowsView

__all__ = ["EditRecord", "FlatRows", "Insertion", "ReplacedBefore", "ReplacedRows", "Replacement", "check_record",
           "newest_group_start", "record_of"]


@dataclass(frozen=True, slots=True, init=False)
class Replacement:
    """Row ``index`` (of the log, or of working memory in :attr:`EditRecord.working`) sent as ``row``
    instead, for ``reason`` (a code its strategy declares, e.g. ``tool-result-cleared``)."""

    index: int
    row: Message
    reason: str

    def __init__(self, index: int, row: Message, reason: str) -> None:
        # the generated frozen ``__init__``'s work by the slots' own setters (:func:`_slot_setters`)
        _SET_INDEX(self, index)
        _SET_ROW(self, row)
        _SET_REASON(self, reason)


def _slot_setters(cls: type, *names: str) -> tuple[Callable[[object, object], None], ...]:
    """The setters of ``cls``'s slots ``names``: what a frozen record's ``__init__`` sets its fields
    with. A frontier manager makes a :class:`Replacement` per row it replaces and an
    :class:`EditRecord` per call, and the generated ``__init__``'s ``object.__setattr__`` by name
    costs half as much again."""
    return tuple(getattr(cls, name).__set__ for name in names)


_SET_INDEX, _SET_ROW, _SET_REASON = _slot_setters(Replacement, "index", "row", "reason")


class ReplacedBefore(Sequence[Replacement]):
    """The replacements of one call given as a frontier: the first ``upto`` entries of ``table``, an
    append-only list of :class:`Replacement` in log order that its manager owns and shares across
    calls (every row it replaces below the frontier, each built once). A read-only view: O(1) to
    make, so a record that replaces every old tool result costs nothing per row and per call.

    Why: observation-masking and clear-tool-results replace rows oldest first and a row's
    replacement never changes (docs/design.md §3.14), so call k+1's set is call k's table prefix,
    longer or shorter; listing it per call made a replay quadratic. ``table`` is only ever appended
    to (a manager that must rebuild starts a new list), so a view stays valid after later calls."""

    __slots__ = ("table", "upto", "at", "frontier")

    def __init__(self, table: list[Replacement], upto: int, at: Sequence[int] | None = None) -> None:
        """``at``, when given, holds the log index of each table entry (at least ``upto`` of them;
        the manager's own list, shared): what :class:`ReplacedRows` bisects, so it is not rebuilt per call."""
        if not 0 <= upto <= len(table):
            raise ValueError(f"a frontier of {upto} replacements over a table of {len(table)}")
        self.table = table
        self.upto = upto
        self.at = at
        self.frontier = table[upto - 1].index + 1 if upto else 0
        """The log index after the last replaced row (0 when none): every replaced row stands before it
        (fixed for the view: its entries are immutable and the table only grows after them)."""

    def __len__(self) -> int:
        return self.upto

    @overload
    def __getitem__(self, i: int) -> Replacement: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Replacement]: ...
    def __getitem__(self, i: int | slice) -> Replacement | Sequence[Replacement]:
        if isinstance(i, slice):
            return tuple(self.table[:self.upto][i])
        if i < 0:
            i += self.upto
        if not 0 <= i < self.upto:
            raise IndexError("replacement index out of range")
        return self.table[i]

    def __iter__(self) -> Iterator[Replacement]:
        return islice(self.table, self.upto)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ReplacedBefore) and other.table is self.table:
            return other.upto == self.upto
        return isinstance(other, Sequence) and len(other) == self.upto and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"ReplacedBefore({self.upto} of {len(self.table)}, frontier {self.frontier})"


class FlatRows:
    """The log with a table's rows replaced below ``frontier``, as one list (``rows``) moved from
    frontier to frontier in O(rows that changed): what lets a :class:`ReplacedRows` slice be one list
    copy. A view moves it to its own frontier when it is sliced (a view that is never sliced, most
    of a replay's, costs no move)."""

    __slots__ = ("table", "frontier", "rows", "past")

    def __init__(self) -> None:
        self.past: Sequence[Message] | None = None
        self.table: list[Replacement] | None = None
        self.frontier = 0
        self.rows: list[Message] = []

    def move(self, view: ReplacedBefore, past: Sequence[Message]) -> FlatRows:
        """The rows brought to ``view`` over ``past`` (a new table starts them again); returns self."""
        rows, table, f = self.rows, view.table, view.frontier
        k, n = len(rows), len(past)
        if self.table is not table or self.past is not past or k > n or \
                (k and k - 1 >= self.frontier and rows[-1] is not past[k - 1]):
            self.table, self.past, self.frontier = table, past, 0
            rows[:] = past
        elif k < n:
            rows.extend(past[k:])
        old = self.frontier
        if old != f:
            lo, hi = (old, f) if old < f else (f, old)
            at = view.at if view.at is not None else [r.index for r in table]
            t = len(table)
            for k in range(bisect_left(at, lo, 0, t), bisect_left(at, hi, 0, t)):
                i = at[k]
                rows[i] = table[k].row if i < f else past[i]
            self.frontier = f
        return self


class ReplacedRows(Sequence[Message]):
    """The history a :class:`ReplacedBefore` record derives: ``past`` with each replaced row as its
    new row, read on demand (a slice or an iteration is a new list). ``at``: the log index of each
    table entry (at least the view's ``upto`` of them; built here when not given), bisected."""

    __slots__ = ("past", "replaced", "at", "flat")

    def __init__(self, past: Sequence[Message], replaced: ReplacedBefore, at: Sequence[int] | None = None,
                 flat: FlatRows | None = None) -> None:
        """``flat``: the :class:`FlatRows` its owner keeps for ``replaced``'s table over ``past``; a
        slice moves it to this view (O(what changed since it last moved)) and copies from it."""
        self.past = past
        self.replaced = replaced
        self.flat = flat
        if at is None:
            at = replaced.at if replaced.at is not None else [r.index for r in replaced]
        self.at = at

    def __len__(self) -> int:
        return len(self.past)

    @overload
    def __getitem__(self, i: int) -> Message: ...
    @overload
    def __getitem__(self, i: slice) -> list[Message]: ...
    def __getitem__(self, i: int | slice) -> Message | list[Message]:
        if type(i) is int and i >= 0:  # a row read alone (the pre-cut's): first
            replaced = self.replaced
            if i < replaced.frontier:  # (a view's entries are rows of ``past``: ``i`` is one too)
                k = bisect_left(self.at, i, 0, replaced.upto)  # (< upto: the last entry's index is frontier - 1)
                return replaced.table[k].row if self.at[k] == i else self.past[i]
            if i < len(self.past):
                return self.past[i]
        n, count = len(self.past), self.replaced.upto
        at = self.at
        if isinstance(i, slice):
            lo, hi, step = i.indices(n)
            if step != 1:
                return list(self)[i]
            flat = self.flat
            if flat is not None:  # brought to this view when read (most views are never sliced), then one copy
                rows = flat.move(self.replaced, self.past).rows
                if hi <= len(rows):
                    return rows[lo:hi]
            out = list(self.past[lo:hi])
            table = self.replaced.table
            for k in range(bisect_left(at, lo, 0, count), bisect_left(at, hi, 0, count)):
                out[at[k] - lo] = table[k].row
            return out
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("row index out of range")
        k = bisect_left(at, i, 0, count)
        if k < count and at[k] == i:
            return self.replaced.table[k].row
        return self.past[i]

    def __iter__(self) -> Iterator[Message]:
        return iter(self[0:len(self.past)])


@dataclass(frozen=True, slots=True)
class Insertion:
    """A block the manager adds: ``row`` goes before log row ``at`` (``at`` = the log's length: after
    every kept row); ``kind`` says what it is (``summary``)."""

    at: int
    row: Message
    kind: str = "summary"


@dataclass(frozen=True, slots=True, init=False)
class EditRecord:
    """One call's edits over a log of ``size`` rows: ``kept`` sorted, disjoint ``[a, b)`` ranges of
    log indices passed on (in log order), ``replaced`` kept rows sent as another row, ``inserted``
    blocks placed before a log index, ``working`` replacements of working-memory rows. Every log row
    in no kept range is left out of the call (:meth:`dropped`)."""

    size: int
    kept: tuple[tuple[int, int], ...]
    replaced: Sequence[Replacement] = ()
    """A tuple, or a :class:`ReplacedBefore` frontier view (then every row is kept, nothing inserted)."""
    inserted: tuple[Insertion, ...] = ()
    working: Sequence[Replacement] = ()
    """A tuple, or a :class:`ReplacedBefore` frontier view over working memory's positions."""

    def __init__(self, size: int, kept: tuple[tuple[int, int], ...], replaced: Sequence[Replacement] = (),
                 inserted: tuple[Insertion, ...] = (), working: Sequence[Replacement] = ()) -> None:
        # the generated frozen ``__init__``'s work by the slots' own setters (:func:`_slot_setters`)
        _SET_SIZE(self, size)
        _SET_KEPT(self, kept)
        _SET_REPLACED(self, replaced)
        _SET_INSERTED(self, inserted)
        _SET_WORKING(self, working)

    @classmethod
    def keep_all(cls, size: int) -> EditRecord:
        """The whole log of ``size`` rows, unchanged."""
        return cls(size, ((0, size),) if size else ())

    @classmethod
    def suffix(cls, size: int, start: int, block: Message | None = None, kind: str = "summary") -> EditRecord:
        """The log's rows from ``start`` on, after ``block`` (None: no block), the rows before left out."""
        kept = ((start, size),) if start < size else ()
        return cls(size, kept, (), (Insertion(start, block, kind),) if block is not None else ())

    def dropped(self) -> tuple[tuple[int, int], ...]:
        """The ``[a, b)`` ranges of log indices left out of the call (those in no kept range)."""
        out: list[tuple[int, int]] = []
        at = 0
        for a, b in self.kept:
            if a > at:
                out.append((at, a))
            at = b
        if at < self.size:
            out.append((at, self.size))
        return tuple(out)

    def suffix_start(self) -> tuple[int, Insertion | None] | None:
        """``(k, block)`` when the record is ``[block?] + log[k:]`` (at most one insertion, standing
        first; no replacements): the shape the archive's suffix fold reads directly (the incremental
        assembly reads the wider :meth:`split_shape`). None for any other record."""
        if self.replaced or self.working or len(self.inserted) > 1 or len(self.kept) > 1:
            return None
        k = self.kept[0][0] if self.kept else self.size
        if self.kept and self.kept[0][1] != self.size:
            return None
        if self.inserted and self.inserted[0].at != k:
            return None
        return k, self.inserted[0] if self.inserted else None

    def split_shape(self) -> tuple[int, int, Insertion | None] | None:
        """``(h, k, block)`` when the record is ``log[:h] + [block?] + log[k:]`` (``h <= k``: a kept
        head, at most one insertion, standing between the two, and a kept suffix; no replacements):
        the suffix shape (:meth:`suffix_start`, ``h`` = 0) and the condenser's (its first events,
        the summary, the tail), which the incremental assembly reads directly. None for any other
        record."""
        shape = self.suffix_start()
        if shape is not None:
            return 0, shape[0], shape[1]
        kept, n = self.kept, self.size
        if self.replaced or self.working or len(self.inserted) > 1 or not 0 < len(kept) <= 2 or kept[0][0] != 0:
            return None
        h = kept[0][1]
        k = kept[1][0] if len(kept) == 2 else n
        if len(kept) == 2 and kept[1][1] != n:
            return None
        ins = self.inserted[0] if self.inserted else None
        if ins is not None and not h <= ins.at <= k:
            return None
        return h, k, ins

    def apply(self, past: Sequence[Message]) -> Sequence[Message]:
        """The history the call sees: kept rows in log order (a replaced row as its new row), each
        inserted block before its log index. A record of the split shape (:meth:`split_shape`) is a
        read-only view of ``past`` (its head rows and block listed, no copy of the suffix); any
        other a new list."""
        replaced = self.replaced
        if type(replaced) is ReplacedBefore and replaced.upto and not self.inserted and self.kept == ((0, self.size),):
            return ReplacedRows(past, replaced)  # (a record with replacements is never of the split shape)
        shape = self.split_shape()
        if shape is not None:
            h, k, ins = shape
            head = [past[i] for i in range(h)]
            if ins is not None:
                head.append(ins.row)
            return RowsView(head, past, k, self.size)
        if type(replaced) is ReplacedBefore and not self.inserted and self.kept == ((0, self.size),):
            return ReplacedRows(past, replaced)
        new = {r.index: r.row for r in self.replaced}
        blocks = sorted(self.inserted, key=lambda i: i.at)
        out: list[Message] = []
        j = 0
        for a, b in self.kept:
            while j < len(blocks) and blocks[j].at <= a:
                out.append(blocks[j].row)
                j += 1
            for i in range(a, b):
                out.append(new.get(i, past[i]))
        out.extend(ins.row for ins in blocks[j:])
        return out

    def apply_working(self, working: Sequence[Message]) -> Sequence[Message]:
        """Working memory as the call sends it: each replaced row as its new row (``working`` itself
        when the record replaces none)."""
        if not self.working:
            return working
        if type(self.working) is ReplacedBefore:
            return ReplacedRows(working, self.working)
        new = {r.index: r.row for r in self.working}
        return [new.get(i, m) for i, m in enumerate(working)]


_SET_SIZE, _SET_KEPT, _SET_REPLACED, _SET_INSERTED, _SET_WORKING = _slot_setters(
    EditRecord, "size", "kept", "replaced", "inserted", "working")


def newest_group_start(working: Sequence[Message]) -> int:
    """Where working memory's newest group starts: its last assistant message (the ask the model
    is answering, with its results after it); 0 when it holds none."""
    for i in range(len(working) - 1, -1, -1):
        if working[i].get("role") == "assistant":
            return i
    return 0


def check_record(record: EditRecord, past: Sequence[Message], working: Sequence[Message]) -> None:
    """Check ``record`` against the log and working memory it was made for. Raises
    :class:`ValueError` naming the fault: a size that is not the log's, kept ranges out of order or
    out of the log, a replacement of a row that is not kept, an insertion outside the log, or a
    working-memory replacement outside working memory or in its newest group."""
    size = record.size
    if size != len(past):
        raise ValueError(f"edit record over {size} rows, but the log holds {len(past)}")
    replaced, rows = record.replaced, record.working
    if record.kept == (((0, size),) if size else ()) and not record.inserted:  # every log row kept, nothing
        # inserted: a frontier record (every call of two strategies, in the log or working memory) read by
        # its views' two ends (a view's rows stand in order), no view's length asked (a Python call); any
        # record it does not pass is checked in full below
        if type(replaced) is ReplacedBefore:
            u, table = replaced.upto, replaced.table
            held = not u or 0 <= table[0].index <= table[u - 1].index < size
        else:
            held = not replaced
        if held:
            if type(rows) is ReplacedBefore:
                u, table = rows.upto, rows.table
                if not u:
                    return
                end = table[u - 1].index
                if 0 <= table[0].index <= end:
                    # an assistant row after the view's end: the newest group starts there or later. The
                    # row right after it first (a steady call's: the next ask), then from working memory's
                    # end (:func:`newest_group_start`'s walk, inline: no Python call)
                    if end + 1 < len(working) and working[end + 1].get("role") == "assistant":
                        return
                    for i in range(len(working) - 1, end, -1):
                        if working[i].get("role") == "assistant":
                            return
            elif not rows:
                return
    at = 0
    for a, b in record.kept:
        if not at <= a < b <= size:
            raise ValueError(f"kept range [{a}, {b}) is out of order or outside the log")
        at = b
    whole = record.kept == ((0, size),)
    rows = record.working
    if type(replaced) is ReplacedBefore and replaced.upto and whole:
        # a frontier view: its rows stand in log order, so its two ends bound them all
        replaced = (replaced.table[0], replaced.table[replaced.upto - 1])
    for r in replaced:
        if not (0 <= r.index < record.size if whole else any(a <= r.index < b for a, b in record.kept)):
            raise ValueError(f"replaced row {r.index} is not a kept row")
    for ins in record.inserted:
        if not 0 <= ins.at <= record.size:
            raise ValueError(f"insertion before row {ins.at} is outside the log")
    if not record.working:
        return
    newest = newest_group_start(working)
    ends: Sequence[Replacement] = rows
    if type(rows) is ReplacedBefore:  # in working memory's order: its two ends bound them all
        ends = (rows.table[0], rows.table[rows.upto - 1])
    for r in ends:
        if not 0 <= r.index < newest:
            raise ValueError(f"working-memory row {r.index} is not an older row of the current turn "
                             f"(the newest group starts at {newest})")



def record_of(past: Sequence[Message], messages: Sequence[Message]) -> EditRecord:
    """The edit record of a manager that answers with rows only (a third-party ``manage_history``):
    a row that is a log row standing after the previous kept one is kept, any other row is an
    inserted block before the next log index. The one place a row's identity is read; a manager
    that returns an :class:`EditRecord` is never read this way."""
    pos = {id(m): i for i, m in enumerate(past)}
    kept: list[tuple[int, int]] = []
    inserted: list[Insertion] = []
    last = -1
    for m in messages:
        i = pos.get(id(m))
        if i is not None and i > last and past[i] is m:
            if kept and kept[-1][1] == i:
                kept[-1] = (kept[-1][0], i + 1)
            else:
                kept.append((i, i + 1))
            last = i
        else:
            inserted.append(Insertion(last + 1, m, "summary" if is_summary_block(m) else "block"))
    return EditRecord(len(past), tuple(kept), (), tuple(inserted))

