"""A clearing call's forgetting step (clear-tool-results inside one enormous turn: each call sends two
more rows and clears one more tool result) does work for the rows that changed, with a small constant:
the two frames' plain views are asked about each changed row once (their unsent rows follow from
that, :func:`~inspector.replay.runs.changed_in_window`), a frame whose runs are all split at the holes
builds its run list once (``split is base``), and a need held by one message is counted by asking that
message, not by walking the runs and the holes.

Bug class: a shortcut that answers differently from :func:`~inspector.replay.runs.changed_rows` or
:meth:`~inspector.replay.runs.HoledRuns.count`; the old per-call work returning (each view asked
again through its complement, the split runs built and compared as a second list)."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

import pytest
from builders import spy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from inspector.forgetting import _Frame, call_needs
from inspector.replay import FrontierSegments, Replay
from inspector.replay import runs as runs_module
from inspector.replay.runs import HoledRuns, IndexRuns, WindowComplement, changed_in_window, changed_rows

ROOT = Path(__file__).resolve().parents[2]
_RANGES = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 8)), max_size=4).map(
    lambda xs: sorted((a, a + w) for a, w in xs))
_HOLES = st.lists(st.integers(0, 50), max_size=20, unique=True).map(sorted)


def _merged(ranges: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """The set definition's runs: every row of the ranges, as maximal runs."""
    rows = sorted({i for lo, hi in ranges for i in range(lo, hi)})
    starts, ends = [], []
    for i in rows:
        if ends and ends[-1] == i:
            ends[-1] = i + 1
        else:
            starts.append(i)
            ends.append(i + 1)
    return starts, ends


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20), st.integers(0, 20))
def test_two_ranges_in_order_are_merged_as_any_ranges_are(a: int, w: int, c: int, x: int) -> None:
    runs = IndexRuns([(a, a + w), (c, c + x)])
    got = {i for lo, hi in zip(runs.starts, runs.ends) for i in range(lo, hi)}
    assert got == {i for lo, hi in [(a, a + w), (c, c + x)] for i in range(lo, hi)}
    if w and x:  # non-empty: maximal runs, as the set definition has them
        assert (runs.starts, runs.ends) == _merged([(a, a + w), (c, c + x)])


@settings(max_examples=300, deadline=None)
@given(_RANGES, _RANGES, _RANGES, _HOLES, st.integers(0, 20), st.integers(0, 20), st.integers(0, 9),
       st.integers(0, 9), st.integers(30, 50), st.integers(30, 50), st.booleans())
def test_one_walk_answers_as_the_two_comparisons(b1: Any, b2: Any, s2: Any, holes: list[int], c1: int, c2: int,
                                                 lo1: int, lo2: int, hi1: int, hi2: int, shared: bool) -> None:
    """:func:`changed_in_window` is :func:`changed_rows` of the complements and of their runs, each row
    with its membership in the later view, whether a view's split runs are its base runs or not."""
    c1, c2 = min(c1, len(holes)), min(c2, len(holes))
    base1 = IndexRuns(b1)
    p = HoledRuns(base1, base1 if shared else IndexRuns(b1), holes, c1)
    base2 = IndexRuns(b2)
    q = HoledRuns(base2, base2 if shared else IndexRuns(s2), holes, c2)
    wp, wq = WindowComplement(p, lo1, hi1), WindowComplement(q, lo2, hi2)
    got = changed_in_window(wp, wq)
    assert got is not None
    unsent, plain = got
    assert [(r, r + 1) for r, _ in unsent] == changed_rows(wp, wq)
    assert [(r, r + 1) for r, _ in plain] == changed_rows(p, q)
    assert all(now == (r in wq) for r, now in unsent) and all(now == (r in q) for r, now in plain)
    assert changed_in_window(wp, WindowComplement(HoledRuns(b2, b2, list(holes), c2), lo2, hi2)) is None


@settings(max_examples=300, deadline=None)
@given(_RANGES, _HOLES, st.integers(0, 20), _HOLES, st.integers(0, 60), st.integers(0, 60))
def test_a_view_whose_split_runs_are_its_base_counts_as_its_rows(b: Any, holes: list[int], c: int, h: list[int],
                                                                lo: int, hi: int) -> None:
    c = min(c, len(holes))
    base = IndexRuns(b)
    v = HoledRuns(base, base, holes, c)
    rows = {i for x, y in b for i in range(x, y)} - set(holes[:c])
    assert {i for i in range(60) if v.has(i)} == rows
    assert v.count(h, lo, hi) == sum(1 for x in h if lo <= x < hi and x in rows)


def _pair(size: int) -> tuple[WindowComplement, WindowComplement]:
    """Two calls of one enormous turn under clear-tool-results: ``size`` rounds sent as one run (user
    row 0, then an assistant row and a tool row a round), the tool results but the last few cleared
    one more at the later call, which also sends one more round."""
    holes = list(range(2, 2 * size, 2))
    at = 2 * size + 1
    base_p, base_q = IndexRuns([(0, 1), (1, at)]), IndexRuns([(0, 1), (1, at + 2)])
    p, q = HoledRuns(base_p, base_p, holes, size - 10), HoledRuns(base_q, base_q, holes, size - 9)
    return WindowComplement(p, 1, at), WindowComplement(q, 1, at + 2)


@pytest.mark.parametrize("size", [1_000, 2_000])
def test_a_clearing_call_reads_the_change_off_the_two_views_ends(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows that change at a clearing call are the two rows it sends anew (the window's and the
    run's end moved by two) and the one newly cleared hole: read off the two views' ends and the
    holes between their counts (:func:`~inspector.replay.runs._grown`), no row asked of a view and
    no window run built, whether the turn holds 1 000 or 2 000 rounds (each of the 3 rows asked of
    the two plain views, as before: 6 questions and a run list for each window)."""
    wp, wq = _pair(size)
    asked = spy(monkeypatch, HoledRuns, "has", 1)
    walked = spy(monkeypatch, runs_module, "_asked")
    built = spy(monkeypatch, IndexRuns, "__init__")
    hole = 2 * (size - 9)
    got = changed_in_window(wp, wq)
    assert got == ([(hole, True)], [(hole, False), (2 * size + 1, True), (2 * size + 2, True)])
    assert asked == [] and walked == [] and built == []


def _brute(ranges: list[tuple[int, int]], holes: list[int], c: int, lo: int, hi: int) -> tuple[set[int], set[int]]:
    """The set definition: (the rows a view holds, the rows of its window it does not)."""
    rows = {i for a, b in ranges for i in range(a, b)} - set(holes[:c])
    return rows, set(range(lo, hi)) - rows


@settings(max_examples=600, deadline=None)
@given(st.integers(0, 6), st.integers(0, 10), st.integers(0, 30), st.integers(-4, 8), _HOLES, st.integers(0, 20),
       st.integers(0, 20), st.integers(-1, 1), st.integers(-1, 1))
@example(0, 4, 10, 2, [2, 8], 0, 1, 0, 0)  # a new hole before the window's start: a plain row lost, none unsent
def test_two_calls_of_one_turn_read_off_their_ends_answer_as_each_row_asked(
        s: int, lo: int, e: int, grow: int, holes: list[int], c1: int, c2: int, dhi1: int, dhi2: int) -> None:
    """Two one-run views over one table (the shape of a frontier turn's calls), their ends and hole
    counts drawn on both sides of the shortcut's conditions: :func:`changed_in_window` says, row by
    row and in order, what the set definition says changed and whether the later view holds it."""
    c1, c2 = min(c1, len(holes)), min(c2, len(holes))
    e2 = max(e + grow, 0)
    b1, b2 = IndexRuns([(s, max(e, s))]), IndexRuns([(s, max(e2, s))])
    p, q = HoledRuns(b1, b1, holes, c1), HoledRuns(b2, b2, holes, c2)
    hi1, hi2 = max(e, s) + dhi1, max(e2, s) + dhi2
    wp, wq = WindowComplement(p, lo, hi1), WindowComplement(q, lo, hi2)
    got = changed_in_window(wp, wq)
    assert got is not None
    (rp, up), (rq, uq) = _brute([(s, max(e, s))], holes, c1, lo, hi1), _brute([(s, max(e2, s))], holes, c2, lo, hi2)
    assert got[0] == [(r, r in uq) for r in sorted(up ^ uq)]
    assert got[1] == [(r, r in rq) for r in sorted(rp ^ rq)]


def test_a_holder_as_few_as_the_runs_is_asked_not_counted_over_runs_and_holes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A need held by one message, counted in a view of one run: one membership question, no run
    clipped and no hole slice bisected (``_count_runs`` not called); two holders and one run: the
    runs-and-holes count, as before."""
    walks = spy(monkeypatch, runs_module, "_count_runs")
    base = IndexRuns([(0, 5000)])
    v = HoledRuns(base, base, list(range(0, 4000, 2)), 1500)
    assert v.count([2999], 1, 5000) == 1 and v.count([2000]) == 0
    assert walks == []
    assert v.count([2000, 3001]) == 1 and len(walks) == 1


@functools.lru_cache(maxsize=None)
def _cleared(rounds: int) -> Replay:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from replay_scaling import one_enormous_turn, run

    return run(one_enormous_turn(rounds), {"type": "clear-tool-results", "params": {"trigger": 3000}},
               window=400_000)[1]


@pytest.mark.parametrize("rounds", [200, 400])
def test_a_clearing_frame_builds_its_runs_once(rounds: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clearing call's frame (a frontier frame: no row of its own, every run split at the holes)
    builds one run list when read, its runs: never the split runs as a second equal list, nor its
    turn's window as a run list (two calls of the turn are compared by their ends): 1 a frame, at 200
    rounds as at 400 (the window's built too: 2; the split runs again: 3)."""
    rp = _cleared(rounds)
    frontier = sum(type(f.segments) is FrontierSegments for f in rp.frames)
    assert frontier > rounds // 3
    read = [0]
    built = spy(monkeypatch, IndexRuns, "__init__")
    real_read = _Frame._read_runs

    def counting_read(self: _Frame) -> None:
        before = len(built)
        real_read(self)
        if self.holed:
            read[0] += 1
            assert len(built) - before == 1
            assert self.plain.split is self.plain.base and self.sent is self.plain

    monkeypatch.setattr(_Frame, "_read_runs", counting_read)
    call_needs(rp)
    assert read[0] == frontier


@settings(max_examples=400, deadline=None)
@given(_RANGES, _HOLES, st.integers(0, 20), st.lists(st.integers(0, 60), min_size=1, max_size=3, unique=True).map(sorted),
       st.integers(0, 30), st.integers(0, 60))
def test_a_need_held_once_is_counted_as_the_set_definition_counts_it(b: Any, holes: list[int], c: int, h: list[int],
                                                                     start: int, at: int) -> None:
    """A frontier frame's (holders counting as "earlier", holders sent as they are): before the turn,
    or in the turn's window and not sent; and sent. One holder is asked of the plain view once, more
    are counted over the runs and holes: both as the set definition says."""
    c = min(c, len(holes))
    base = IndexRuns(b)
    v = HoledRuns(base, base, holes, c)
    fr = object.__new__(_Frame)
    fr.start, fr.plain, fr.sent, fr.holed = start, v, v, True
    fr.unsent = WindowComplement(v, start, at)
    rows = {i for x, y in b for i in range(x, y)} - set(holes[:c])
    assert fr.older_plain(h) == (sum(1 for x in h if x < start or (start <= x < at and x not in rows)),
                                 sum(1 for x in h if x in rows))


@pytest.mark.parametrize("rounds", [200, 400])
def test_the_first_clearing_call_reads_its_change_off_the_holes(rounds: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The turn's first clearing call clears every older tool result at once; the frame before it (a
    frame of lists) is read as a view over its table with none replaced, so what changed is the
    holes and the two new rows, read off the ends (:func:`~inspector.replay.runs._grown`): no frontier
    frame listed as ranges (``FrontierSegments.plain``, O(rows cleared)), no range lists compared,
    no row asked through the generic walk, at 200 rounds as at 400 (before: the frame listed once, and
    the two frames' lists compared)."""
    rp = _cleared(rounds)
    listed = spy(monkeypatch, FrontierSegments, "plain")
    walked = spy(monkeypatch, runs_module, "_asked")
    needs = call_needs(rp)
    assert len(needs) == len(rp.frames)
    assert listed == [] and walked == []


def _slid_pair(size: int) -> tuple[WindowComplement, WindowComplement]:
    """Two consecutive clearing calls of one turn in a window that trims it: the user row and the
    newest rows ``[s, e)``; the later call drops the two oldest rows it sent, sends two new ones and
    clears one more tool result (every even row a tool result)."""
    holes = list(range(2, 2 * size, 2))
    at = 2 * size + 1
    s = at - 1000
    base_p, base_q = IndexRuns([(0, 1), (s, at)]), IndexRuns([(0, 1), (s + 2, at + 2)])
    p, q = HoledRuns(base_p, base_p, holes, size - 10), HoledRuns(base_q, base_q, holes, size - 9)
    return WindowComplement(p, 0, at), WindowComplement(q, 0, at + 2)


@pytest.mark.parametrize("size", [1_000, 2_000])
def test_a_clearing_call_in_a_trimming_window_reads_the_change_off_the_runs_ends(
        size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a window that trims the turn the run's start moves too: the rows leaving it at its start
    (one row sent as it was, one hole before: only the row changes), the newly cleared hole and the
    two new rows are read off the two views' starts, ends and the holes (:func:`~inspector.replay.runs._slid`):
    no row asked of a view, no generic walk, no run list built, at 1 000 rounds as at 2 000 (before:
    the 5 rows asked of both plain views, 10 questions, and a run list for each window)."""
    wp, wq = _slid_pair(size)
    asked = spy(monkeypatch, HoledRuns, "has", 1)
    walked = spy(monkeypatch, runs_module, "_asked")
    built = spy(monkeypatch, IndexRuns, "__init__")
    s, hole = 2 * size + 1 - 1000, 2 * (size - 9)
    got = changed_in_window(wp, wq)
    assert got == ([(s, True), (hole, True)],
                   [(s, False), (hole, False), (2 * size + 1, True), (2 * size + 2, True)])
    assert asked == [] and walked == [] and built == []


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), max_size=2), st.integers(0, 12), st.integers(0, 30),
       st.integers(-3, 8), st.integers(-3, 8), _HOLES, st.integers(0, 20), st.integers(0, 20), st.integers(0, 14),
       st.integers(-1, 1), st.integers(-1, 1))
@example([(0, 1)], 10, 30, 2, 2, [2, 4, 10, 12, 14, 28], 5, 6, 0, 0, 0)  # the trimming clearing call's shape
@example([(0, 1)], 10, 30, 2, 2, [2, 4, 10, 12, 14, 31], 5, 6, 0, 0, 0)  # a new hole past the earlier end
@example([(0, 1)], 10, 30, 2, 2, [2, 4, 5, 12, 14, 28], 2, 3, 0, 0, 0)  # a new hole before the run
def test_two_trimmed_calls_read_off_their_runs_answer_as_each_row_asked(
        head: list[tuple[int, int]], s: int, e: int, move: int, grow: int, holes: list[int], c1: int, c2: int,
        lo: int, dhi1: int, dhi2: int) -> None:
    """Two views over one table with the same runs but the last, whose start and end both move (the
    shape of a trimmed frontier turn's calls), drawn on both sides of the shortcut's conditions:
    :func:`changed_in_window` says, row by row and in order, what the set definition says changed."""
    c1, c2 = min(c1, len(holes)), min(c2, len(holes))
    head = [(a, a + w) for a, w in head if a + w < s]
    e, s2 = max(e, s), max(s + move, 0)
    e2 = max(e + grow, s2)
    r1, r2 = [*head, (s, e)], [*head, (s2, e2)]
    b1, b2 = IndexRuns(r1), IndexRuns(r2)
    p, q = HoledRuns(b1, b1, holes, c1), HoledRuns(b2, b2, holes, c2)
    hi1, hi2 = e + dhi1, e2 + dhi2
    wp, wq = WindowComplement(p, lo, hi1), WindowComplement(q, lo, hi2)
    got = changed_in_window(wp, wq)
    assert got is not None
    (rp, up), (rq, uq) = _brute(r1, holes, c1, lo, hi1), _brute(r2, holes, c2, lo, hi2)
    assert got[0] == [(r, r in uq) for r in sorted(up ^ uq)]
    assert got[1] == [(r, r in rq) for r in sorted(rp ^ rq)]
