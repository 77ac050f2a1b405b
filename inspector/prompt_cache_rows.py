"""The rows one call sends through the provider's prompt cache, as :mod:`inspector.prompt_cache`
reads them: the head row, then the frame's payload runs (:class:`CallRows`), with their units as
running sums over the transcript (:class:`RowUnits`); how many leading rows two calls share
(:func:`shared_rows`) and, at a cache break, the tokens of this call's rows the previous call sent
too (:func:`resent_tokens`). Every answer walks runs, never rows: a frontier frame
(:class:`~inspector.replay.FrontierSegments`) is read in its compact form, its transcript runs and
how many rows of its manager's table it replaces (docs/performance.md)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from inspector.engine.cache import CallCache
from inspector.engine.types import Message
from inspector.replay import FrontierSegments
from inspector.replay.replaced import FrontierTable
from inspector.replay.records import Segment

__all__ = ["CallRows", "RowUnits", "common_rows", "replaced_row", "resent_tokens", "sent_from",
           "shared_rows"]

_NO_D: list[int] = []  # a frame that is not a frontier's: no table, no differences (never written)


def common_rows(a: Sequence[Segment], b: Sequence[Segment]) -> int:
    """How many leading rows the payloads of two frames' segments ``a`` and ``b`` share: equal
    transcript indices, or made rows with the same index and content. Walks the runs, not the rows."""
    rows = i = j = oa = ob = 0
    while i < len(a) and j < len(b):
        (ra, na, _ba, _sa, own_a), (rb, nb, _bb, _sb, own_b) = a[i], b[j]
        if own_a is not None or own_b is not None:
            if own_a is None or own_b is None or ra != rb or own_a != own_b:
                break
            rows, i, j = rows + 1, i + 1, j + 1
            continue
        if ra is None or rb is None or ra + oa != rb + ob:
            break
        step = min(na - oa, nb - ob)
        rows, oa, ob = rows + step, oa + step, ob + step
        if oa == na:
            i, oa = i + 1, 0
        if ob == nb:
            j, ob = j + 1, 0
    return rows


class CallRows:
    """One call's provider rows: the head row, then the payload's runs (the frame's segments). Its
    rows and tokens are summed in one pass over the runs (each run's units a difference of the
    transcript's running sums); the tokens of some leading rows (asked a handful of times a call:
    the unchanged rows, a breakpoint, a break's resent rows) walk the runs, never the rows.

    A frontier frame (:class:`~inspector.replay.FrontierSegments`) is read in its compact form: its
    transcript runs (``runs``) and its table's first ``upto`` replaced rows (``fr``), whose units are
    the table's running differences (:meth:`RowUnits.delta`), so a call costs O(its transcript runs ×
    log), not O(replaced rows it sends).

    Consecutive transcript runs (each row the message after the previous run's last, sent as it is
    or replaced in the table) are joined into one run (``runs``, ``sizes``: each joined run's
    units): the answers read transcript indices, never bands, so they do not change, and a payload
    of system row, history, user row and working memory is read as one or two runs, not four."""

    __slots__ = ("head", "runs", "units", "rows", "total_tokens", "fr", "upto", "segments", "d", "sizes")

    def __init__(self, head: int, segments: Sequence[Segment], units: RowUnits) -> None:
        self.segments = segments
        self.fr: FrontierTable | None
        if type(segments) is FrontierSegments:
            runs, fr, c = segments.runs, segments.fr, segments.upto
            held = units.last  # the table's differences, read once a call (the last call's table: at hand)
            self.d = held[1] if held[0] is fr and len(held[1]) > c else units.delta(fr, c)
            self.fr, self.upto = fr, c
        else:
            runs, self.fr, self.upto, self.d = segments, None, 0, _NO_D
        self.head, self.units = head, units
        rows = total = 0
        self.runs: list[Segment] = []  # the runs, consecutive transcript runs joined (see the class doc)
        self.sizes: list[int] = []  # the units of each joined run (read again at a break)
        out, sizes = self.runs, self.sizes
        opened: Segment | None = None  # the plain transcript run open for joining (its first segment)
        end = -1  # the row after the open run's last: a plain segment starting there joins it
        for seg in runs:
            ref, n, _band, syn, own = seg
            rows += n
            if own is None and syn is None and ref is not None:  # a plain transcript run
                if ref == end:
                    end += n
                    continue
                if opened is not None:
                    total += self._close(opened, end)
                opened, end = seg, ref + n
                continue
            if opened is not None:
                total += self._close(opened, end)
                opened, end = None, -1
            if own is None:  # a synthetic or index-less run: its rows' units, nothing replaced in it
                lo = ref or 0
                if lo + n >= len(units.sums):
                    units.extend(lo + n)
                size = units.sums[lo + n] - units.sums[lo]
            else:
                size = units.of_own(own)
            total += size
            out.append(seg)
            sizes.append(size)
        if opened is not None:
            total += self._close(opened, end)
        self.rows = rows  # message rows (the head row apart)
        # (an additive counter's total is the units themselves: no call)
        self.total_tokens = head + (total if units.additive else int(units.counter.total(total, rows)))

    def _close(self, opened: Segment, end: int) -> int:
        """List the joined plain run from ``opened``'s first row up to ``end`` (``opened`` itself when
        nothing joined it) and return its units: the running sums' difference, plus the replaced rows'
        differences on a frontier frame (one difference of sums for the whole run: the segments'
        units add up to it)."""
        ref, n, band, _syn, _own = opened
        lo = ref or 0
        sums = self.units.sums
        if end >= len(sums):
            self.units.extend(end)
        size = sums[end] - sums[lo]
        c = self.upto
        if c:  # a frontier frame (its table is fr)
            refs = self.fr.refs  # type: ignore[union-attr]
            first, last = refs[0], refs[c - 1]
            if lo <= last and end > first:  # around replaced rows (often all of them)
                d = self.d
                k_lo = 0 if lo <= first else bisect_left(refs, lo, 0, c)
                size += d[c if end > last else bisect_left(refs, end, k_lo, c)] - d[k_lo]
        self.runs.append(opened if lo + n == end else (ref, end - lo, band, None, None))
        self.sizes.append(size)
        return size

    def run_units(self, ref: int | None, n: int, syn: str | None, own: Message | None, a: int, b: int) -> int:
        """Units of rows ``a`` to ``b`` (offsets) of one run: a made row's own, a transcript run's from
        the running sums, plus the replaced rows' differences on a frontier frame."""
        if own is not None:
            return self.units.of_own(own) if a < b else 0
        lo = ref or 0
        sums = self.units.sums
        if lo + b >= len(sums):
            self.units.extend(lo + b)
        total = sums[lo + b] - sums[lo + a]
        fr = self.fr
        if fr is not None and ref is not None and syn is None:
            d, refs, c = self.d, fr.refs, self.upto
            total += d[bisect_left(refs, lo + b, 0, c)] - d[bisect_left(refs, lo + a, 0, c)]
        return total

    def tokens_upto(self, j: int) -> int:
        """Tokens of the first ``j`` provider rows (row 0 is the head row): the head's tokens plus the
        counter's count of the first ``j − 1`` payload rows."""
        m = j - 1
        if m >= self.rows:
            return self.total_tokens
        if j <= 0:
            return 0
        units = start = 0
        for (ref, n, _band, syn, own), size in zip(self.runs, self.sizes):
            if m < start + n:
                if own is None and m > start:
                    lo = ref or 0
                    sums = self.units.sums  # (the sums reach every row of the call's runs: __init__ read them)
                    units += sums[lo + m - start] - sums[lo]
                    fr = self.fr
                    if fr is not None and ref is not None and syn is None:  # a frontier's replaced rows in it
                        d, refs, c = self.d, fr.refs, self.upto
                        units += d[bisect_left(refs, lo + m - start, 0, c)] - d[bisect_left(refs, lo, 0, c)]
                break
            units += size
            start += n
        return self.head + (units if self.units.additive else int(self.units.counter.total(units, m)))

    def expanded(self) -> CallRows:
        """This call with a frontier frame's replaced rows split out (as every other frame lists them)."""
        if self.fr is None:
            return self
        return CallRows(self.head, list(self.segments), self.units)


class RowUnits:
    """The replay counter's units of transcript rows, as running sums over the transcript (extended
    as far as a call needs, so each message is asked once), and of rows the engine made; per
    frontier table, the running sums of (replacement's units − replaced message's units)."""

    __slots__ = ("counter", "msgs", "sums", "deltas", "additive", "last")

    def __init__(self, counter: Any, msgs: Sequence[Message]) -> None:
        self.counter, self.msgs = counter, msgs
        self.sums: list[int] = [0]
        self.deltas: dict[int, tuple[Any, list[int]]] = {}
        self.additive: bool = bool(getattr(counter, "additive", False))
        """Whether the counter's total of some rows is their units (no ``total`` call needed)."""
        self.last: tuple[Any, list[int]] = (None, [0])
        """The table the last call read and its differences (the next call's is usually the same)."""

    def extend(self, hi: int) -> None:
        """Running sums up to row ``hi`` (each message's units asked once)."""
        sums = self.sums
        running = accumulate(map(self.counter.unit, self.msgs[len(sums) - 1:hi]), initial=sums[-1])
        next(running)  # the sum already held
        sums.extend(running)

    def of_own(self, own: Message) -> int:
        """Units of a row the engine made (the counter's cache asked)."""
        return int(self.counter.unit(own))

    def delta(self, fr: Any, upto: int) -> list[int]:
        """The table ``fr``'s running differences over its first ``upto`` entries or more: every entry the
        table holds now, in one pass the first time a call reads it (each entry once; a table that
        grew since, e.g. a live replay's, is read on from where it was)."""
        held = self.last
        if held[0] is not fr:
            held = self.deltas.get(id(fr)) or held
            if held[0] is not fr:
                held = self.deltas[id(fr)] = (fr, [0])
            self.last = held
        d = held[1]
        if len(d) > upto:
            return d
        unit, sums, rows, refs = self.counter.unit, self.sums, fr.rows, fr.refs
        upto = max(upto, len(refs))
        if refs[upto - 1] + 1 >= len(sums):  # the sums reach the replaced messages
            self.extend(refs[upto - 1] + 1)
        total = d[-1]
        for k in range(len(d) - 1, upto):
            r = refs[k]  # the replaced message's units from the running sums: each message asked once
            total += unit(rows[k]) - (sums[r + 1] - sums[r])
            d.append(total)
        return d


def differing(a: CallRows, b: CallRows) -> tuple[list[int], int, int] | None:
    """Two frontier calls of one manager table, or a frontier call and a call that replaces nothing
    (the first call that clears or masks; compared in their compact form): the table's refs and the
    entries ``[lo, hi)`` replaced in one call and not the other (refs ascending: the rows whose
    replacement status differs); None for any other pair of calls."""
    fr = a.fr
    if fr is None or b.fr is not fr:
        if not a.upto and b.fr is not None:  # a replaces nothing: b's replaced rows differ
            return b.fr.refs, 0, b.upto
        if not b.upto and fr is not None:
            return fr.refs, 0, a.upto
        return None
    return (fr.refs, a.upto, b.upto) if a.upto < b.upto else (fr.refs, b.upto, a.upto)


def replaced_row(lay: CallRows, r: int) -> Message | None:
    """The row a frontier call sends in place of transcript message ``r`` (None: not one of its table's)."""
    if lay.fr is None:
        return None
    refs = lay.fr.refs
    k = bisect_left(refs, r, 0, lay.upto)
    return lay.fr.rows[k] if k < lay.upto and refs[k] == r else None


def shared_rows(prev: CallRows, cur: CallRows) -> int:
    """How many leading message rows two calls share (:func:`common_rows`); two frontier calls of one
    table walk their transcript runs: a stretch of rows plain in both runs is shared up to the first
    row replaced in one call and not the other; a made row is compared with the row sent there."""
    if prev.fr is None and cur.fr is None:  # the common case: no table on either side
        return common_rows(prev.runs, cur.runs)
    pair = differing(prev, cur)
    if pair is None:
        return common_rows(prev.expanded().runs, cur.expanded().runs)
    refs, dlo, dhi = pair
    a, b = prev.runs, cur.runs
    rows = i = j = oa = ob = 0
    while i < len(a) and j < len(b):
        (ra, na, _ba, sa, own_a), (rb, nb, _bb, sb, own_b) = a[i], b[j]
        if own_a is not None or own_b is not None or sa is not None or sb is not None:
            xa = own_a if own_a is not None else (None if ra is None or sa is not None else replaced_row(prev, ra + oa))
            xb = own_b if own_b is not None else (None if rb is None or sb is not None else replaced_row(cur, rb + ob))
            ka = None if ra is None else ra + (0 if own_a is not None else oa)
            kb = None if rb is None else rb + (0 if own_b is not None else ob)
            if ka != kb or (xa is None) != (xb is None) or (xa is None and ka is None) or xa != xb:
                break
            rows, oa, ob = rows + 1, oa + 1, ob + 1
        else:
            if ra is None or rb is None or ra + oa != rb + ob:
                break
            step, r0 = min(na - oa, nb - ob), ra + oa
            k = bisect_left(refs, r0, dlo, dhi)
            if k < dhi and refs[k] < r0 + step:
                return rows + refs[k] - r0  # replaced in one call, sent as it is in the other
            rows, oa, ob = rows + step, oa + step, ob + step
        if own_a is not None or oa >= na:
            i, oa = i + 1, 0
        if own_b is not None or ob >= nb:
            j, ob = j + 1, 0
    return rows


def sent_from(prev: CallRows, row: int) -> tuple[list[tuple[int, int]], dict[int | None, list[Message]] | None]:
    """The previous call's rows from message row ``row`` on: its transcript ranges and its made rows
    (by index: a row is looked up among the made rows of its own index, not among them all; None
    when it made none, as most calls)."""
    plain: list[tuple[int, int]] = []
    made: dict[int | None, list[Message]] | None = None
    start = 0
    for ref, n, _band, _syn, own in prev.runs:
        start += n
        if start > row:  # (start is now the row after this run)
            if own is not None:
                if made is None:
                    made = {}
                made.setdefault(ref, []).append(own)
            elif ref is not None:
                plain.append((ref + row - start + n if row > start - n else ref, ref + n))
    return plain, made


def resent_tokens(call: CallCache, cur: CallRows, prev: CallRows) -> tuple[int, int]:
    """Tokens, written and uncached, of this call's rows past the break that the previous call sent
    too (the same transcript rows, or a made row with the same index and content). One walk over
    this call's runs lists the shared pieces, each with the units before its first and past its
    last row; their tokens are then split at the cached and written ends. Two frontier calls of one
    table walk their transcript runs, a piece cut at each row replaced in one call and not the other
    (:func:`differing`), each piece's ends found by two searches of the table (its first row's place
    also gives the units before the run)."""
    broke = call.broke_at
    assert broke is not None
    row = broke - 1 if broke > 0 else 0
    pair = differing(prev, cur) if cur.fr is not None else None
    if pair is None:
        cur, prev = cur.expanded(), prev.expanded()
        pair = _NO_D, 0, 0
    refs, dlo, dhi = pair
    plain, made = sent_from(prev, row)
    pieces: list[tuple[int, int, int, int]] = []  # (first row, end row, units before, units to the end)
    start = before = 0  # the message row this run starts at, the units of the rows before it
    sums, frontier = cur.units.sums, cur.fr is not None
    d, c = cur.d, cur.upto  # a frontier call's differences (of one table: c ≤ dhi)
    for (ref, n, _band, syn, own), size in zip(cur.runs, cur.sizes):
        if own is not None:
            if start >= row and ((made and any(o == own for o in made.get(ref, ()))) or (
                    dlo < dhi and ref is not None and any(lo <= ref < hi for lo, hi in plain)
                    and replaced_row(prev, ref) == own)):
                pieces.append((start, start + 1, before, before + size))
        elif ref is not None and start + n > row:
            first, end = ref + (row - start if row > start else 0), ref + n
            off: int | None = None
            kr = 0  # the table place of the run's first row (found with off)
            for lo, hi in plain:
                a, b = (first if first > lo else lo), (end if end < hi else hi)
                if a >= b:
                    continue
                if not frontier or syn is not None:  # the common case inline: one piece
                    pieces.append((start + a - ref, start + b - ref, before + sums[a] - sums[ref],
                                   before + sums[b] - sums[ref]))
                    continue
                # one search of the table over [0, dhi) serves both the rows replaced here (d, up to this
                # call's c ≤ dhi: a place k past c reads d[c]) and the rows replaced in one call only,
                # which cut the piece ([dlo, dhi))
                if off is None:  # the units before this run's row x are off + sums[x] + d[x's table place]
                    kr = bisect_left(refs, ref, 0, dhi)
                    off = before - sums[ref] - d[kr if kr < c else c]
                x, kx = a, (kr if a == ref else bisect_left(refs, a, kr, dhi))
                kb = bisect_left(refs, b, kx, dhi)
                if kb > dlo:  # rows replaced in one call only may lie here (usually none do)
                    for t in range(kx if kx > dlo else dlo, kb):
                        y = refs[t]
                        if x < y:
                            pieces.append((start + x - ref, start + y - ref, off + sums[x] + d[kx if kx < c else c],
                                           off + sums[y] + d[t if t < c else c]))
                        x, kx = y + 1, t + 1
                if x < b:
                    pieces.append((start + x - ref, start + b - ref, off + sums[x] + d[kx if kx < c else c],
                                   off + sums[b] + d[kb if kb < c else c]))
            if made and frontier and syn is None:  # a row the previous call made, replaced here by an equal one
                for r, owns in made.items():
                    if r is not None and first <= r < end and replaced_row(cur, r) in owns:
                        x = r - ref
                        pieces.append((start + x, start + x + 1, before + cur.run_units(ref, n, syn, None, 0, x),
                                       before + cur.run_units(ref, n, syn, None, 0, x + 1)))
        start += n
        before += size
    return _split_pieces(call, cur.head, None if cur.units.additive else cur.units.counter, pieces)


def _split_pieces(call: CallCache, head: int, counter: Any, pieces: list[tuple[int, int, int, int]]) -> tuple[int, int]:
    """Tokens, written and uncached, of the ``pieces`` (first row, end row, units before, units to the
    end) past the call's cached prefix, after the ``head`` row's tokens. ``counter`` None: an additive
    counter's, whose token ends are the units themselves (no call of ``total`` per end)."""
    cached = call.cached - head  # the ends are compared past the head row: the units need no shift
    written_end = cached + call.written
    ends = pieces  # (an additive counter's token ends are the units themselves)
    if counter is not None:
        count = counter.total
        ends = [(pa, pb, count(ua, pa), count(ub, pb)) for pa, pb, ua, ub in pieces]
    in_written = in_uncached = 0
    if written_end == cached:  # nothing written (the OpenAI rule): every piece's tokens past the cache are uncached
        for _pa, _pb, lo_t, hi_t in ends:
            if hi_t > cached:
                in_uncached += hi_t - (lo_t if lo_t > cached else cached)
        return 0, in_uncached
    for _pa, _pb, lo_t, hi_t in ends:
        in_written += max(0, min(hi_t, written_end) - max(lo_t, cached))
        in_uncached += max(0, hi_t - max(lo_t, written_end))
    return in_written, in_uncached
