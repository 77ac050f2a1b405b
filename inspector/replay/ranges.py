"""From an assembly to transcript indices: the payload's :data:`~inspector.replay.records.Segment`
runs and the ranges a call trimmed or folded.

Frames record *ranges* of transcript indices, never lists of rows: the committed log and working
memory hold transcript messages in transcript order, so a run of rows is read from its two ends
(:class:`_Refs`), and what a call removed is a handful of ranges however many rows it holds.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from itertools import count
from typing import Any

from inspector.engine import Assembly, PayloadRow
from inspector.engine.contracts import EditRecord, ReplacedRows
from inspector.engine.summary_block import is_summary_block
from inspector.engine.types import Message, Removals, RowsView, Span
from inspector.replay.records import Segment
from inspector.replay.replaced import FrontierTable

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


class _Refs:
    """Transcript index of each message object, and runs of a row list mapped to transcript ranges.

    The committed log and working memory hold transcript messages in transcript order, so a run
    ``rows[lo:hi]`` whose two ends are ``hi − lo − 1`` apart in the transcript is one range: found by
    looking at its ends, halving only where the run is not contiguous (O(log n) per break)."""

    def __init__(self, msgs: Sequence[Message]) -> None:
        self.ref = dict(zip(map(id, msgs), count()))  # id → index; a message listed twice maps to its last index
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

    def add_run(self, ranges: list[tuple[int, int]], rows: Sequence[Message], lo: int, hi: int,
                swaps: Swaps | FrontierSwaps | None = None) -> int:
        """Append the transcript ranges of ``rows[lo:hi]`` to ``ranges``; return how many of its rows
        are synthesised (no transcript index). A row in ``swaps`` (sent in place of a transcript
        message by the manager's record) counts as that message. Rows of a frontier record's log
        view are read as the log's own rows (the same messages, found in O(1))."""
        if hi <= lo:
            return 0
        if type(rows) is ReplacedRows:
            rows = rows.past
        a = self.whole(rows, lo, hi)
        if a is not None:
            ranges.append((a, a + hi - lo))  # one run: the usual case
            return 0
        extra = 0
        at = lo
        for ref, n in self.runs(rows, lo, hi, swaps):
            if ref is not None:
                ranges.append((ref, ref + n))
            elif swaps:
                for m in rows[at:at + n]:
                    swap = swaps.get(id(m))
                    r = self.get(swap[0]) if swap is not None else None
                    if r is None:
                        extra += 1
                    else:
                        ranges.append((r, r + 1))
            else:
                extra += n
            at += n
        return extra

    def swapped_whole(self, rows: Sequence[Message], lo: int, hi: int, swaps: Swaps | FrontierSwaps) -> int | None:
        """:meth:`whole`, a row sent in place of a transcript message (``swaps``) read as that message: a
        run of working memory with masked rows in it is still one transcript run, found from its ends."""
        ends: list[int] = []
        for m in (rows[lo], rows[hi - 1]):
            r = self.get(m)
            if r is None:
                swap = swaps.get(id(m))
                r = self.get(swap[0]) if swap is not None else None
                if r is None:
                    return None
            ends.append(r)
        return ends[0] if ends[1] - ends[0] == hi - lo - 1 else None

    def runs(self, rows: Sequence[Message], lo: int, hi: int,
             swaps: Swaps | FrontierSwaps | None = None) -> Iterator[tuple[int | None, int]]:
        """``(ref, n)`` runs covering ``rows[lo:hi]`` in order; ``ref`` None for a row of no transcript
        index (with ``swaps``: a row sent in place of a message counts as it)."""
        if hi <= lo:
            return
        a = self.whole(rows, lo, hi)
        if a is None and swaps:
            a = self.swapped_whole(rows, lo, hi, swaps)
        if a is not None:
            yield a, hi - lo
            return
        if hi - lo == 1:
            yield None, 1
            return
        mid = (lo + hi) // 2
        yield from self.runs(rows, lo, mid, swaps)
        yield from self.runs(rows, mid, hi, swaps)


Swaps = dict[int, tuple[Message, str]]
"""Rows a manager's edit record sent in place of another, by the new row's id: (the row it replaced,
the reason code). Empty for a call whose record replaces nothing."""


def replaced_rows(edits: EditRecord | None, past: Sequence[Message], working: Sequence[Message]) -> Swaps:
    """The :data:`Swaps` of one call's edit record over the committed log ``past`` and working
    memory ``working`` (both as they stood when the call was assembled)."""
    if edits is None or not (edits.replaced or edits.working):
        return {}
    out: Swaps = {id(r.row): (past[r.index], r.reason) for r in edits.replaced}
    out.update((id(r.row), (working[r.index], r.reason)) for r in edits.working)
    return out


def _replaced(swaps: Swaps, refs: _Refs) -> tuple[tuple[int, str], ...]:
    """The transcript messages a call's edit record sent another row in place of, as ``(index,
    reason)`` in transcript order (a replaced row of no transcript index is left out)."""
    found = ((refs.get(orig), reason) for orig, reason in swaps.values())
    return tuple(sorted((i, reason) for i, reason in found if i is not None))


def _segments(layout: Sequence[PayloadRow | Span], refs: _Refs, swaps: Swaps | FrontierSwaps | None = None,
              apart: tuple[object, object] = (None, None)) -> list[Segment]:
    """The payload (an assembly's layout) as :data:`Segment` runs: spans by their ends, single rows by identity.

    O(layout parts + breaks in the spans), never O(payload rows): a long history is one span. Runs
    that continue each other in the same band are merged, so a frame's segments are as few as its
    payload allows (the open run is written when it ends).

    The usual part is one plain run: a span whose two ends are transcript messages ``len − 1``
    apart (:meth:`_Refs.whole`), or a row that is a transcript message as is (its own source, no
    synthetic kind). It is merged into the open run right here;
    any other part (a span of several runs or of rows of no transcript index, a synthesised or
    rebound row) is broken up by :func:`_part_segments`, whose plain runs merge the same way. A row
    in ``swaps`` (sent in place of a transcript message by the manager's edit record) is its own
    row with that message's index and the replacement's reason as its kind; with ``apart`` (the frontier
    tables the frame keeps apart, a pair: either may be None), a span over either's rows is laid as its
    own rows (read in place: no new span); any other span over a frontier record's rows makes the layout be split by
    :func:`_split_replaced` and read again."""
    out: list[Segment] = []
    add = out.append
    ref_of, msgs = refs.ref, refs.msgs  # _Refs.whole and _Refs.get, inlined: two or four parts a call
    # the open plain transcript run (it may grow): first ref, length, band; band None = no open run
    o_ref, o_n, o_band = 0, 0, None
    for part in layout:
        if type(part) is Span:
            rows, lo, hi = part.rows, part.lo, part.hi
            if type(rows) is ReplacedRows:  # a frontier record's rows: the own rows when kept apart
                if rows.replaced.table is not apart[0] and rows.replaced.table is not apart[1]:
                    return _segments(list(_split_replaced(layout, apart)), refs, swaps, apart)  # else split, anew
                rows = rows.past
            if hi <= lo:
                continue
            n = hi - lo
            m0, m1 = rows[lo], rows[hi - 1]
            ref, last = ref_of.get(id(m0)), ref_of.get(id(m1))
            if ref is not None and not (last is not None and last - ref == n - 1 and msgs[ref] is m0
                                        and msgs[last] is m1):
                ref = None  # not one transcript run
        else:
            msg = part.message  # type: ignore[union-attr]
            n = 1
            ref = ref_of.get(id(msg))
            if ref is not None and msgs[ref] is not msg:
                ref = None  # another object with a reused id: not a transcript message
            elif ref is not None and (part.source is not msg or part.synthetic is not None):  # type: ignore[union-attr]
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
        if type(part) is Span and part.rows is not rows:  # a frontier span read as its own rows (``rows.past``)
            part = Span(rows, part.lo, part.hi, part.band)
        for seg in _part_segments(part, refs, swaps):
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


def _split_replaced(layout: Iterable[PayloadRow | Span], apart: tuple[object, object] | None
                    ) -> Iterator[PayloadRow | Span]:
    """The layout with each span over a frontier record's rows (a
    :class:`~inspector.engine.contracts.ReplacedRows` view: the log or working memory with rows
    replaced below a frontier) read as the own rows when the frame keeps that table's replaced rows
    ``apart`` (a pair of tables, either may be None; :class:`~inspector.replay.replaced.FrontierSegments`
    splits them out when read), else split into spans of the own rows and one row per replaced row (bisecting
    the table's positions)."""
    for part in layout:
        if type(part) is not Span or type(part.rows) is not ReplacedRows:
            yield part
            continue
        rows: ReplacedRows = part.rows
        table = rows.replaced.table
        if apart is not None and (table is apart[0] or table is apart[1]):
            yield Span(rows.past, part.lo, part.hi, part.band)
            continue
        at, count, table, band = rows.at, rows.replaced.upto, rows.replaced.table, part.band
        lo, hi = part.lo, part.hi
        for k in range(bisect_left(at, lo, 0, count), bisect_left(at, hi, 0, count)):
            p = at[k]
            if p > lo:
                yield Span(rows.past, lo, p, band)
            new = table[k].row
            yield PayloadRow(new, band, None, new)
            lo = p + 1
        if hi > lo:
            yield Span(rows.past, lo, hi, band)


class FrontierSwaps:
    """:data:`Swaps` of a frontier record, looked up rather than built: a row sent in place of a log
    row is found by its id in the replay's :class:`~inspector.replay.replaced.FrontierTable`
    (the table's first ``count`` entries), working memory's in ``extra``."""

    __slots__ = ("fr", "upto", "past", "extra")

    def __init__(self, fr: FrontierTable, upto: int, extra: Swaps) -> None:
        self.fr, self.upto, self.extra = fr, upto, extra

    def __bool__(self) -> bool:
        return True

    def get(self, key: int) -> tuple[Message, str] | None:
        """(the row replaced, the reason) of the row sent whose id is ``key``; None: it replaced none."""
        fr = self.fr
        k = (fr.ids if fr.indexed == len(fr.rows) else fr.row_ids()).get(key)
        if k is not None and k < self.upto:
            return fr.msgs[fr.refs[k]], fr.reasons[k]
        return self.extra.get(key)


def _part_segments(part: PayloadRow | Span, refs: _Refs, swaps: Swaps | FrontierSwaps | None = None) -> Iterator[Segment]:
    """The :data:`Segment` runs of one layout part that is not one plain transcript run (see
    :func:`_segments`, which merges adjacent plain runs): a span's runs in order, each row of no
    transcript index its own row; a single row with its transcript index (None when synthesised;
    a rebound copy takes its source's) and its synthetic kind."""
    if type(part) is Span:
        rows, lo, band = part.rows, part.lo, part.band
        for ref, n in refs.runs(rows, lo, part.hi):
            if ref is None:  # not a transcript message: kept as its own row
                for m in rows[lo:lo + n]:
                    swap = swaps.get(id(m)) if swaps else None
                    yield (None, 1, band, None, m) if swap is None else (refs.get(swap[0]), 1, band, swap[1], m)
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
    swap = swaps.get(id(msg)) if swaps else None
    if swap is not None:
        r, kind = refs.get(swap[0]), swap[1]
    if kind is None and r is None:
        kind = "system_band" if band == "system" else ("summary" if band == "summary" else None)
    yield r, 1, band, kind, own


def _removed(asm: Assembly, refs: _Refs, swaps: Swaps | FrontierSwaps | None = None
             ) -> tuple[tuple[tuple[int, int], ...], int, tuple[dict[str, Any], ...]]:
    """What the budget removed from this call's payload, as a frame keeps it: the transcript ranges
    (the pre-cut ``asm.precut``, then the trimmer's removals ``asm.trimmer_removed``: a
    :class:`~inspector.engine.types.Removals`, whose parts are read, or a list of
    :class:`~inspector.engine.types.Removal`), how many removed rows were synthesised (no
    transcript index), and the summary blocks among those the model did not see (Q18, ``not_sent``).

    Most calls remove nothing: one look at the two, then ``((), 0, ())``; a call whose pre-cut alone
    removed one transcript run (a frontier call cut by the budget) is that run, read from its two ends.
    Otherwise such a block can
    only stand among the pre-cut prefix's first three rows (at its head; a stack replay pre-cuts
    thousands of rows per call, never walk all of them) or be one of the trimmer's single-row
    removals; the pre-cut's rows are looked at only when its runs hold a synthesised row at all.
    A single removal right after the last range (the trimmer takes the oldest rows after the
    pre-cut, one by one) extends that range in place; anything else is merged by :func:`_merge`.
    O(recorded parts + breaks), not O(removed rows)."""
    pre, removed = asm.precut, asm.trimmer_removed
    if type(pre) is RowsView:
        head, rows, lo, hi = pre.source()
        if not head and not removed:
            if hi <= lo:
                return (), 0, ()  # the usual call: nothing removed
            if type(rows) is ReplacedRows:
                rows = rows.past
            a = refs.whole(rows, lo, hi)  # a frontier call cut by the budget: one transcript run, its two ends
            if a is not None:
                return ((a, a + hi - lo),), 0, ()
    elif not pre and not removed:
        return (), 0, ()
    ranges: list[tuple[int, int]] = []
    lone: list[Message] = []
    synth = 0
    if type(pre) is RowsView:
        if head:
            synth += refs.add_run(ranges, head, 0, len(head), swaps)
        if hi > lo:
            synth += refs.add_run(ranges, rows, lo, hi, swaps)
        if synth:
            lone = [m for m in [*head[:3], *rows[lo:min(hi, lo + 3)]][:3] if refs.get(m) is None]
    elif pre:
        synth += refs.add_run(ranges, pre, 0, len(pre), swaps)
        if synth:
            lone = [m for m in pre[:3] if refs.get(m) is None]
    few: Sequence[Any] = removed
    if type(removed) is Removals or (type(removed) is not list and isinstance(removed, Removals)):
        few = removed.parts()
    get = refs.get
    for part in few:
        if type(part) is tuple:
            synth += refs.add_run(ranges, part[0], part[1], part[2], swaps)
        else:  # one row: its own index, or a synthesised row
            m = part.message
            r = get(m)
            if r is None and swaps:
                swap = swaps.get(id(m))  # a replaced row: its transcript message was removed
                r = get(swap[0]) if swap is not None else None
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
