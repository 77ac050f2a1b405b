"""Membership and arithmetic over runs of transcript indices: what the forgetting detector asks of
a frame's payload (:class:`IndexRuns`), of a frontier frame's payload without a range per replaced
row (:class:`HoledRuns`), of the rows of a turn it does not send (:class:`WindowComplement`), and
what changed between two consecutive frames (:func:`changed_rows`).

A frame records *ranges* (:mod:`inspector.replay.ranges`); these views answer by bisection over
them, so no question expands a long run to a set.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

class IndexRuns:
    """Membership in half-open ``[start, end)`` ranges of transcript indices, merged into sorted,
    disjoint runs (``starts``, ``ends``): ``i in runs`` answers by bisection, O(log runs) per
    question and O(runs) to build, so a frame's long history run is never expanded to a set.
    Anything but an int is in no run."""

    __slots__ = ("starts", "ends")

    def __init__(self, ranges: Sequence[tuple[int, int]]) -> None:
        if len(ranges) == 1:  # one range (a window, a frame's one run): nothing to sort or merge
            self.starts, self.ends = [ranges[0][0]], [ranges[0][1]]
            return
        if len(ranges) == 2:  # two in order (a turn's user row and its working memory): one look
            (a, b), (c, d) = ranges
            if a <= c <= b:
                self.starts, self.ends = [a], [max(b, d)]
                return
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(ranges):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
            else:
                merged.append((lo, hi))
        self.starts = [a for a, _ in merged]
        self.ends = [b for _, b in merged]

    def __contains__(self, i: object) -> bool:
        if not isinstance(i, int):
            return False
        k = bisect_right(self.starts, i) - 1
        return k >= 0 and i < self.ends[k]

    def has(self, i: int) -> bool:
        """``i in self`` for an int ``i`` (no type check: the views' own questions)."""
        k = bisect_right(self.starts, i) - 1
        return k >= 0 and i < self.ends[k]

    @property
    def parts(self) -> tuple[IndexRuns]:
        """The plain runs a view is made of (itself): what :func:`changed_rows` compares."""
        return (self,)

    def floor(self, i: int) -> int:
        """The start of the run holding ``i`` (a member)."""
        return self.starts[bisect_right(self.starts, i) - 1]

    def count(self, h: Sequence[int], lo: int = 0, hi: int = 1 << 62) -> int:
        """How many of the sorted ``h`` in ``[lo, hi)`` are members."""
        return _count_runs(h, self.starts, self.ends, lo, hi)


_NO_RUNS = IndexRuns(())
"""No run (a view's ``extra`` when it has none): shared, never changed."""


def complement(runs: IndexRuns, lo: int, hi: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` minus the runs, as sorted disjoint ranges."""
    out: list[tuple[int, int]] = []
    at = lo
    k = max(bisect_right(runs.ends, lo), 0)
    while at < hi and k < len(runs.starts):
        a, b = runs.starts[k], runs.ends[k]
        if a >= hi:
            break
        if a > at:
            out.append((at, a))
        at = max(at, b)
        k += 1
    if at < hi:
        out.append((at, hi))
    return out


def symmetric_difference(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ranges in exactly one of two sorted, disjoint range lists (O(len a + len b)): every range
    end toggles membership, so the boundaries left after cancelling equal pairs, taken two by two,
    are the answer's ranges."""
    points = [p for r in a for p in r]
    points += [p for r in b for p in r]
    points.sort()  # two sorted runs: one merge
    return _toggled(points)


def _toggled(points: Sequence[int]) -> list[tuple[int, int]]:
    """The ranges of :func:`symmetric_difference` from the sorted boundary points of both lists (a
    merged run's start and end, for runs kept as ``starts`` and ``ends``: disjoint, so sorted together
    they alternate)."""
    odd: list[int] = []
    for p in points:
        if odd and odd[-1] == p:
            odd.pop()
        else:
            odd.append(p)
    return list(zip(odd[::2], odd[1::2]))


def count_in(h: Sequence[int], ranges: Sequence[tuple[int, int]]) -> int:
    """How many of the sorted indices ``h`` fall in the ranges."""
    return sum(bisect_left(h, b) - bisect_left(h, a) for a, b in ranges)


def _count_runs(h: Sequence[int], starts: Sequence[int], ends: Sequence[int], lo: int, hi: int) -> int:
    """How many of the sorted ``h`` fall in the runs clipped to ``[lo, hi)`` (an empty range, ``hi <= lo``,
    holds none: each run's clipped part is then empty too, never a negative count)."""
    if hi <= lo:
        return 0
    if len(starts) == 1:  # one run (a turn's): two bisections
        a, b = starts[0], ends[0]
        return bisect_left(h, min(b, hi)) - bisect_left(h, max(a, lo)) if a < hi and b > lo else 0
    return sum(bisect_left(h, min(b, hi)) - bisect_left(h, max(a, lo)) for a, b in zip(starts, ends) if a < hi and b > lo)


class HoledRuns:
    """Membership in the ``base`` runs, less the first ``c`` of the sorted ``holes`` that fall in the
    ``split`` runs, plus the single rows ``extra``: a frontier frame's runs (its replaced rows are the
    first ``c`` entries of one table) read without a range per replaced row, so building one costs
    O(runs) and asking O(log) however many rows were replaced so far. :func:`changed_rows` compares two
    over the same table by what changed between them."""

    __slots__ = ("base", "split", "holes", "c", "extra", "extra_rows")

    def __init__(self, base: Sequence[tuple[int, int]] | IndexRuns, split: Sequence[tuple[int, int]] | IndexRuns,
                 holes: Sequence[int], c: int, extra: Sequence[int] = ()) -> None:
        # runs built already are taken as they are: a frame's two views share their base runs
        self.base = base if isinstance(base, IndexRuns) else IndexRuns(base)
        self.split = split if isinstance(split, IndexRuns) else IndexRuns(split)
        self.holes, self.c = holes, c
        self.extra_rows = sorted(set(extra)) if extra else []
        self.extra = IndexRuns([(i, i + 1) for i in self.extra_rows]) if extra else _NO_RUNS

    @property
    def parts(self) -> tuple[IndexRuns, IndexRuns, IndexRuns]:
        """The plain runs it is made of (base, split, extra): what :func:`changed_rows` compares."""
        return self.base, self.split, self.extra

    def hole(self, i: int) -> bool:
        """Whether ``i`` is one of the first ``c`` holes (by bisection)."""
        k = bisect_left(self.holes, i, 0, self.c)
        return k < self.c and self.holes[k] == i

    def __contains__(self, i: object) -> bool:
        return isinstance(i, int) and self.has(i)

    def has(self, i: int) -> bool:
        """``i in self`` for an int ``i``: :meth:`IndexRuns.has` and :meth:`hole` inline (the question
        :func:`changed_rows` asks of every row that may have changed)."""
        if self.extra_rows and self.extra.has(i):
            return True
        base = self.base
        k = bisect_right(base.starts, i) - 1
        if k < 0 or i >= base.ends[k]:
            return False
        split = self.split
        if split is not base:  # (``split is base``: every run split at the holes, ``i`` is in one)
            k = bisect_right(split.starts, i) - 1
            if k < 0 or i >= split.ends[k]:
                return True
        holes, c = self.holes, self.c
        k = bisect_left(holes, i, 0, c)
        return not (k < c and holes[k] == i)

    def floor(self, i: int) -> int:
        """A row ``a <= i`` with every row of ``[a, i]`` a member (``i`` is one)."""
        if i not in self.base or (i in self.split and self.hole(i)):
            return i  # one of ``extra``
        a = self.base.floor(i)
        j = bisect_left(self.holes, i, 0, self.c) - 1
        return max(a, self.holes[j] + 1) if j >= 0 else a

    def count(self, h: Sequence[int], lo: int = 0, hi: int = 1 << 62) -> int:
        """How many of the sorted ``h`` in ``[lo, hi)`` are members: O(runs · log h + min(h, holes) · log);
        an empty range (``hi <= lo``) counts 0."""
        if hi <= lo:
            return 0
        base, split = self.base, self.split
        a0, a1 = bisect_left(h, lo), bisect_left(h, hi)
        if a1 - a0 <= len(base.starts):  # no more of ``h`` there than runs: each asked (O(log) a row)
            has = self.has
            return sum(1 for x in h[a0:a1] if has(x))
        n = _count_runs(h, base.starts, base.ends, lo, hi)
        holes = self.holes
        b0, b1 = bisect_left(holes, lo, 0, self.c), bisect_left(holes, hi, 0, self.c)
        if a1 - a0 <= b1 - b0:
            both = [x for x in h[a0:a1] if self.hole(x)]
        else:
            both = [x for x in holes[b0:b1] if _has(h, x)]
        if both:
            n -= sum(1 for x in both if base.has(x) and (split is base or split.has(x)))
        if not self.extra_rows:
            return n
        return n + sum(1 for x in self.extra_rows if lo <= x < hi and _has(h, x) and (x not in base or (x in split and self.hole(x))))


def _has(h: Sequence[int], x: int) -> bool:
    k = bisect_left(h, x)
    return k < len(h) and h[k] == x


class WindowComplement:
    """The rows of ``[lo, hi)`` that ``runs`` (an :class:`IndexRuns` or a :class:`HoledRuns`) do not hold."""

    __slots__ = ("runs", "lo", "hi")

    def __init__(self, runs: IndexRuns | HoledRuns, lo: int, hi: int) -> None:
        self.runs, self.lo, self.hi = runs, lo, hi

    @property
    def parts(self) -> tuple[IndexRuns, ...]:
        """The window's run and the runs' parts: what :func:`changed_rows` compares (made when asked:
        two consecutive calls of a frontier turn are compared by :func:`_grown` without them)."""
        return (IndexRuns([(self.lo, self.hi)]), *self.runs.parts)

    def __contains__(self, i: object) -> bool:
        return isinstance(i, int) and self.lo <= i < self.hi and not self.runs.has(i)

    def has(self, i: int) -> bool:
        """``i in self`` for an int ``i``."""
        return self.lo <= i < self.hi and not self.runs.has(i)

    def count(self, h: Sequence[int]) -> int:
        """How many of the sorted ``h`` are members: those in ``[lo, hi)`` minus the runs' there."""
        if self.hi <= self.lo:
            return 0
        return bisect_left(h, self.hi) - bisect_left(h, self.lo) - self.runs.count(h, self.lo, self.hi)


RunsView = IndexRuns | HoledRuns | WindowComplement


def _holes_of(v: RunsView) -> tuple[Sequence[int] | None, int]:
    inner = v.runs if isinstance(v, WindowComplement) else v
    return (inner.holes, inner.c) if isinstance(inner, HoledRuns) else (None, 0)


def _asked(prev: RunsView, cur: RunsView) -> list[int] | None:
    """The rows :func:`changed_rows` asks of both views, ascending (None: not of one shape): every row of
    the ranges in exactly one of two parts (two single runs compared by their ends, no sort) and the holes
    between the two counts. A row is asked once however many parts changed it."""
    (hp, cp), (hc, cc) = _holes_of(prev), _holes_of(cur)
    pp, cq = prev.parts, cur.parts
    if type(prev) is not type(cur) or hp is not hc or len(pp) != len(cq):
        return None
    asked: set[int] = set()
    seen: tuple[object, object] = (None, None)
    for a, b in zip(pp, cq):
        if a is b or (a is seen[0] and b is seen[1]):  # (a view's split runs are often its base runs: once)
            continue
        seen = (a, b)
        sa, ea, sb, eb = a.starts, a.ends, b.starts, b.ends
        if sa == sb and ea == eb:
            continue
        if len(sa) == 1 and len(sb) == 1 and (sa[0] == sb[0] or ea[0] == eb[0]):  # one end moved
            lo, hi = (ea[0], eb[0]) if sa[0] == sb[0] else (sa[0], sb[0])
            asked.update(range(lo, hi) if lo < hi else range(hi, lo))
            continue
        for lo, hi in _toggled(sorted([*sa, *ea, *sb, *eb])):
            asked.update(range(lo, hi))
    if hc is not None and cp != cc:
        asked.update(hc[cp:cc] if cp < cc else hc[cc:cp])
    return sorted(asked)


def changed_rows(prev: RunsView, cur: RunsView) -> list[tuple[int, int]] | None:
    """The rows in exactly one of two views of the same shape (None: not of one shape, compare them
    another way), found from what changed between them: their runs' differences (a part whose runs
    are equal adds none) and the holes between the two counts (a slice of the table, not a walk
    from its start), each such row asked of both once. O(runs + rows changed), never O(holes)."""
    asked = _asked(prev, cur)
    if asked is None:
        return None
    p, q = prev.has, cur.has
    return [(r, r + 1) for r in asked if p(r) != q(r)]


def changed_in_window(prev: WindowComplement,
                      cur: WindowComplement) -> tuple[list[tuple[int, bool]], list[tuple[int, bool]]] | None:
    """For two window complements of the same shape: (the rows of :func:`changed_rows` of the two,
    and those of their runs), each row with whether ``cur`` (``cur.runs``) holds it; None when not of one
    shape. Both answers from one set of rows asked (the complements' parts are the window's and the
    runs'), each row asked of each run once: the complement's membership follows from the run's."""
    grown = _grown(prev, cur)
    if grown is not None:
        return grown
    slid = _slid(prev, cur)
    if slid is not None:
        return slid
    asked = _asked(prev, cur)
    if asked is None:
        return None
    p, q = prev.runs.has, cur.runs.has
    plo, phi, qlo, qhi = prev.lo, prev.hi, cur.lo, cur.hi
    unsent: list[tuple[int, bool]] = []
    runs: list[tuple[int, bool]] = []
    for r in asked:
        a, b = p(r), q(r)
        if a != b:
            runs.append((r, b))
        u = qlo <= r < qhi and not b
        if (plo <= r < phi and not a) != u:
            unsent.append((r, u))
    return unsent, runs


def _grown(prev: WindowComplement,
           cur: WindowComplement) -> tuple[list[tuple[int, bool]], list[tuple[int, bool]]] | None:
    """:func:`changed_in_window` of two calls of one frontier turn read off their ends, no row asked:
    each view one run ``[s, e)`` over one table, ``split is base``, no extra row, its window ``[lo, e)``
    from the same ``lo >= s``, the later one longer (``e <= e'``) with more holes (``c <= c'``), the
    new holes inside the earlier window and every hole before its end ``e``. Then the rows that change
    are the new holes ``holes[c:c']`` (no longer sent as they are, now unsent) and the new rows ``[e, e')``
    (sent as they are, never unsent): what asking each row of both views answers, in the same
    order (the holes, ascending and distinct as a table's rows are, all stand before ``e``). None for
    any other pair (:func:`_asked`'s rows are asked then)."""
    one = _one_table(prev, cur)
    if one is None:
        return None
    pr, cr, pb, cb, holes = one
    ps, cs, lo = pb.starts, cb.starts, prev.lo
    if len(ps) != 1 or len(cs) != 1 or ps[0] != cs[0] or ps[0] > lo or cur.lo != lo:
        return None
    pe, ce, cp, cc = pb.ends[0], cb.ends[0], pr.c, cr.c
    if prev.hi != pe or cur.hi != ce or pe > ce or cp > cc or (cc and holes[cc - 1] >= pe):
        return None
    new = holes[cp:cc]
    if new and (new[0] < lo or (cp and holes[cp - 1] >= new[0]) or any(a >= b for a, b in zip(new, new[1:]))):
        return None
    return [(h, True) for h in new], [(h, False) for h in new] + [(r, True) for r in range(pe, ce)]


def _slid(prev: WindowComplement,
          cur: WindowComplement) -> tuple[list[tuple[int, bool]], list[tuple[int, bool]]] | None:
    """:func:`changed_in_window` of two calls of one frontier turn in a window that trims it, read off
    the runs' ends and the holes, no row asked: each view's runs over one table, ``split is base``, no
    extra row, the same runs but the last, ``[s, e)`` then ``[s', e')`` with ``s <= s' <= e <= e'``, the
    windows ``[lo, e)`` and ``[lo, e')`` from one ``lo <= s``, more holes (``c <= c'``), every hole before
    ``e`` and the new ones in ``[s, e)``. Then the rows that change are the rows of ``[s, s')`` not holes
    before (they leave the runs: now unsent), the new holes in ``[s', e)`` (likewise) and the new rows
    ``[e, e')`` (sent as they are, never unsent), ascending as asking each row of both views answers.
    None for any other pair."""
    one = _one_table(prev, cur)
    if one is None:
        return None
    pr, cr, pb, cb, holes = one
    ps, pn, cs, cn, lo = pb.starts, pb.ends, cb.starts, cb.ends, prev.lo
    if len(ps) != len(cs) or not ps or cur.lo != lo or ps[:-1] != cs[:-1] or pn[:-1] != cn[:-1]:
        return None
    s, e, s2, e2, cp, cc = ps[-1], pn[-1], cs[-1], cn[-1], pr.c, cr.c
    if not lo <= s <= s2 <= e <= e2 or prev.hi != e or cur.hi != e2 or cp > cc or (cc and holes[cc - 1] >= e):
        return None
    new = holes[cp:cc]
    if new and (new[0] < s or (cp and holes[cp - 1] >= new[0]) or any(a >= b for a, b in zip(new, new[1:]))):
        return None
    gone = _rows_less(holes, cp, s, s2) if s < s2 else []
    if new:
        gone += new[bisect_left(new, s2):]
    return [(r, True) for r in gone], [(r, False) for r in gone] + [(r, True) for r in range(e, e2)]


def _one_table(prev: WindowComplement,
               cur: WindowComplement) -> tuple[HoledRuns, HoledRuns, IndexRuns, IndexRuns, Sequence[int]] | None:
    """The two views' runs, base runs and the holes they share when each view's runs are over one table
    (``split is base``, no extra row): the shape :func:`_grown` and :func:`_slid` read off ends; None else."""
    pr, cr = prev.runs, cur.runs
    if type(pr) is not HoledRuns or type(cr) is not HoledRuns:
        return None
    pb, cb, holes = pr.base, cr.base, pr.holes
    if cr.holes is not holes or pr.split is not pb or cr.split is not cb or pr.extra_rows or cr.extra_rows:
        return None
    return pr, cr, pb, cb, holes


def _rows_less(holes: Sequence[int], c: int, a: int, b: int) -> list[int]:
    """The rows of ``[a, b)`` that are not among the first ``c`` (sorted, distinct) holes, ascending."""
    i, j = bisect_left(holes, a, 0, c), bisect_left(holes, b, 0, c)
    out: list[int] = []
    at = a
    for h in holes[i:j]:
        out.extend(range(at, h))
        at = h + 1
    out.extend(range(at, b))
    return out
