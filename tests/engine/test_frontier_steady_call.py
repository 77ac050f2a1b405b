"""The steady frontier call (``ReplacingSums.frontier``'s fast path) against the general one.

Rules: a call over the same log index grown (the same lists), the same table and a view moved on by
some entries, after a call whose sums were one list, patches that list where the new entries stand
(each new placeholder measured once, nothing else read) and re-points the index without
``ReplacingSums.upto`` or ``FrontierIndex.point``; every answer (each ``pre[i]``, the rows view, the
facts, ``reach``, ``fits_back``) is the one a fresh object's general path gives for that call. A
``ReplacedRows`` row read alone answers what its list does.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import UnitsOf, sent_sums, spy
from inspector.engine.contracts import ReplacedBefore, ReplacedRows, Replacement
from inspector.engine.types import Message


class _Counted(UnitsOf):
    """:class:`UnitsOf` counting the rows it measures."""

    def __init__(self) -> None:
        self.measured: list[Message] = []

    def unit(self, msg: Message) -> int:
        self.measured.append(msg)
        return int(msg["u"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=48), st.integers(0, 8), st.booleans(), st.data())
def test_every_frontier_call_answers_what_a_fresh_objects_general_path_answers(
        units: list[int], tail_list: int, with_made: bool, data: Any) -> None:
    """One log index over one growing list, one table (a second one drawn part-way: the manager
    started again), views whose frontier moves on, stands or moves back, a drawn ``TAIL_LIST``, the
    call's rows view given or not: every call's index answers as a fresh :class:`ReplacingSums`'s
    does (its general path) — each ``pre[i]``, the rows read through the index, every fact of the
    log's, ``reach`` and ``fits_back``; its ``pre`` is one list only where the fresh one's is. No
    placeholder is measured twice."""
    from inspector.engine.assembly import replacing
    from inspector.engine.assembly.replacing import ReplacingSums
    from inspector.engine.assembly.row_index import RowIndex

    rows: list[Message] = [{"role": "user", "content": "", "u": u} for u in units]

    def table_of() -> list[Replacement]:
        at = sorted(data.draw(st.sets(st.integers(0, len(rows) - 1), max_size=len(rows))))
        return [Replacement(i, {"role": "user", "content": "", "u": data.draw(st.integers(1, 9))}, "cleared")
                for i in at]

    counter = _Counted()
    fresh_counter: Any = UnitsOf()
    grown: list[Message] = []
    log = RowIndex(fresh_counter)
    sums = ReplacingSums()
    tables = [table_of()]
    saved = replacing.TAIL_LIST
    replacing.TAIL_LIST = tail_list
    try:
        for step in range(data.draw(st.integers(1, 12))):
            if step and data.draw(st.integers(0, 7)) == 0:
                tables.append(table_of())
            table = tables[-1]
            view = ReplacedBefore(table, data.draw(st.integers(0, len(table))))
            n = data.draw(st.integers(max(view.frontier, len(grown)), len(rows)))
            grown.extend(rows[len(grown):n])
            log.sync(grown)
            made = ReplacedRows(grown, view, view.at) if with_made else None
            idx = sums.frontier(log, view, counter, made)
            ref = ReplacingSums().frontier(RowIndex(fresh_counter).sync(grown), view, fresh_counter)
            assert [idx.pre[i] for i in range(n + 1)] == [ref.pre[i] for i in range(n + 1)] == \
                sent_sums(rows, view, n)
            assert type(idx.pre) is not list or type(ref.pre) is list
            assert list(idx.rows) == list(ref.rows) and (made is None or idx.rows is made)
            assert idx.n == n and all(getattr(idx, k) is v for k, v in vars(log).items() if k not in ("rows", "pre"))
            want = sent_sums(rows, view, n)
            for x in range(0, want[-1] + 3, 3):
                assert idx.reach(x) == bisect_left(want, x, 0, n + 1)
            for lo in range(n):
                assert idx.fits_back(7, 1, 2, lo) == bisect_left(want, want[n] + 2 - 7, lo, n) - 1
        measured = [id(m) for m in counter.measured]
        assert len(set(measured)) == len(measured)
    finally:
        replacing.TAIL_LIST = saved


@pytest.mark.parametrize("made", [False, True])
def test_a_steady_clearing_call_patches_its_sums_and_reads_nothing_else(monkeypatch: Any, made: bool) -> None:
    """Working memory of one turn, 2 rows a call (an ask, its result), results cleared all but the
    newest 2: call k (k >= 3) has 2k rows and a view of k - 2 entries (the results at 1, 3, .., 2k - 5:
    frontier 2k - 4, 4 rows above it). 20 calls from k = 3: the first takes the general path (1
    ``upto``, 1 ``point``), the 19 after it are steady: 0 ``upto``, 0 ``point``, each new placeholder
    measured once (19 in all: each call's one new entry), and 1 rows view made a call when the
    caller gives none (0 when it gives one: its own is the index's), every ``pre`` one list of the
    rows as sent."""
    from inspector.engine.assembly.replacing import FrontierIndex, ReplacingSums
    from inspector.engine.assembly.row_index import RowIndex

    counter = _Counted()
    log_counter: Any = UnitsOf()
    rows: list[Message] = []
    for k in range(24):
        rows += [{"role": "assistant", "content": "", "u": 3}, {"role": "tool", "content": "x" * k, "u": 10 + k}]
    table = [Replacement(i, {"role": "tool", "content": "cleared", "u": 1}, "cleared") for i in range(1, 48, 2)]
    wm: list[Message] = []
    wmi = RowIndex(log_counter)
    sums = ReplacingSums()
    upto = spy(monkeypatch, ReplacingSums, "upto")
    point = spy(monkeypatch, FrontierIndex, "point")
    views = spy(monkeypatch, ReplacedRows, "__init__")
    inside: list[int] = []
    for k in range(3, 23):
        wm.extend(rows[len(wm):2 * k])
        wmi.sync(wm)
        if k == 4:
            counter.measured.clear()
            del upto[:], point[:], views[:]
        view = ReplacedBefore(table, k - 2)
        sent = ReplacedRows(wm, view, view.at) if made else None
        before = len(views)
        idx = sums.frontier(wmi, view, counter, sent)
        inside.append(len(views) - before)
        assert type(idx.pre) is list and idx.pre == sent_sums(rows, view, 2 * k)
        instead = {r.index: r.row for r in view}
        assert list(idx.rows) == [instead.get(i, rows[i]) for i in range(2 * k)] and (not made or idx.rows is sent)
    assert len(upto) == len(point) == 0
    assert [id(m) for m in counter.measured] == [id(table[k - 3].row) for k in range(4, 23)]
    assert inside[1:] == [0 if made else 1] * 19


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 12), st.data())
def test_a_replaced_rows_view_read_by_position_is_its_list(n: int, data: Any) -> None:
    """``ReplacedRows[i]`` for every ``i`` in ``[-n - 2, n + 2)``: the row of ``list(view)`` at ``i``
    (a replaced row below the frontier, the log's own above it), or IndexError out of range."""
    past: list[Message] = [{"role": "user", "content": str(i)} for i in range(n)]
    at = sorted(data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))) if n else []
    table = [Replacement(i, {"role": "tool", "content": f"r{i}"}, "cleared") for i in at]
    view = ReplacedRows(past, ReplacedBefore(table, data.draw(st.integers(0, len(table)))))
    whole = list(view)
    for i in range(-n - 2, n + 2):
        if -n <= i < n:
            assert view[i] is whole[i]
        else:
            with pytest.raises(IndexError):
                view[i]
