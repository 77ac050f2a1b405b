"""``symmetric_difference`` of two run lists (the forgetting detector's rows whose status changed
between two calls) is the set definition, whatever the runs: sorted, disjoint, touching or empty.

Bug class: a boundary-parity shortcut that keeps a boundary two runs share (two touching runs of
one list read as a change) or drops a row in exactly one list."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.replay.runs import symmetric_difference


def _runs(widths: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint runs from (gap, width) pairs; a gap of 0 makes a run touch the one before."""
    out, at = [], 0
    for gap, width in widths:
        out.append((at + gap, at + gap + width))
        at += gap + width
    return out


_RUNS = st.lists(st.tuples(st.integers(0, 4), st.integers(1, 5)), max_size=8).map(_runs)


@settings(max_examples=500, deadline=None)
@given(_RUNS, _RUNS)
def test_the_symmetric_difference_holds_the_rows_in_exactly_one_list(a: list[tuple[int, int]],
                                                                      b: list[tuple[int, int]]) -> None:
    rows = {i for lo, hi in a for i in range(lo, hi)} ^ {i for lo, hi in b for i in range(lo, hi)}
    got = symmetric_difference(a, b)
    assert [i for lo, hi in got for i in range(lo, hi)] == sorted(rows)
    assert all(lo < hi for lo, hi in got)
    assert all(x[1] < y[0] for x, y in zip(got, got[1:]))  # sorted, and touching runs joined


def test_touching_runs_of_one_list_are_no_change() -> None:
    assert symmetric_difference([(0, 3), (3, 5)], [(0, 5)]) == []
    assert symmetric_difference([(1, 4)], [(1, 6)]) == [(4, 6)]
    assert symmetric_difference([(0, 1), (189, 231), (231, 232)], [(0, 1), (195, 238)]) == [(189, 195), (232, 238)]
