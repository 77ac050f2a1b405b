"""The forgetting detector reads a frontier frame (its replaced rows are the first ``c`` entries of
one table) through views over that table (:class:`~inspector.replay.runs.HoledRuns`,
:class:`~inspector.replay.runs.WindowComplement`), and two consecutive frames by what changed between
them (:func:`~inspector.replay.runs.changed_rows`): the same answers as the lists it used to build,
with work per call bounded by the change, not by the rows replaced so far.

Bug class: a view that counts a hole outside its split runs, an extra row twice, a change missed
between two counts of one table; per-call work that grows with the rows masked so far."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from inspector.forgetting import _Frame, call_needs
from inspector.forgetting_index import TranscriptIndex
from inspector.replay import FrontierSegments, Replay
from inspector.replay.runs import HoledRuns, IndexRuns, WindowComplement, changed_rows, count_in

ROOT = Path(__file__).resolve().parents[2]
_RANGES = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 8)), max_size=5).map(
    lambda xs: sorted((a, a + w) for a, w in xs))
_HOLES = st.lists(st.integers(0, 50), max_size=20, unique=True).map(sorted)


def _rows(base: list[tuple[int, int]], split: list[tuple[int, int]], holes: list[int], c: int,
          extra: list[int]) -> set[int]:
    """The set definition of a :class:`HoledRuns`."""
    b, s = {i for lo, hi in base for i in range(lo, hi)}, {i for lo, hi in split for i in range(lo, hi)}
    return {i for i in b if not (i in s and i in holes[:c])} | set(extra)


@settings(max_examples=300, deadline=None)
@given(_RANGES, _RANGES, _HOLES, st.integers(0, 20), st.lists(st.integers(0, 50), max_size=3, unique=True),
       _HOLES, st.integers(0, 60), st.integers(0, 60))
@example(base=[(0, 5)], split=[], holes=[], c=0, extra=[], h=[0, 1], lo=2, hi=1)  # lo > hi: counted -1 once
def test_a_holed_view_answers_as_its_rows(base: Any, split: Any, holes: list[int], c: int, extra: list[int],
                                          h: list[int], lo: int, hi: int) -> None:
    c = min(c, len(holes))
    rows = _rows(base, split, holes, c, extra)
    v = HoledRuns(base, split, holes, c, extra)
    assert {i for i in range(60) if i in v} == rows
    assert v.count(h, lo, hi) == sum(1 for x in h if lo <= x < hi and x in rows)
    for i in rows:
        assert all(j in rows for j in range(v.floor(i), i + 1))
    w = WindowComplement(v, lo, hi)
    assert w.count(h) == sum(1 for x in h if lo <= x < hi and x not in rows)
    listed = [(i, i + 1) for i in range(lo, hi) if i not in rows]
    assert w.count(h) == count_in(h, listed)


def test_an_empty_range_counts_no_rows() -> None:
    """The rule: ``[lo, hi)`` with ``hi <= lo`` holds no index, so every view counts 0 there (a run
    clipped to it must not count ``bisect(hi) - bisect(lo) < 0``)."""
    h = [0, 1, 2, 3]
    assert IndexRuns([(0, 5)]).count(h, 2, 1) == 0
    assert IndexRuns([(0, 5)]).count(h, 2, 2) == 0
    assert HoledRuns([(0, 5)], [], [], 0).count(h, 2, 1) == 0
    assert HoledRuns([(0, 5)], [(0, 5)], [1, 2], 2, [3]).count(h, 3, 0) == 0
    assert HoledRuns([(0, 5)], [], [], 0).count(h, 1, 3) == 2  # the boundary the other way: rows 1 and 2


@settings(max_examples=300, deadline=None)
@given(_RANGES, _RANGES, _RANGES, _HOLES, st.integers(0, 20), st.integers(0, 20), st.integers(0, 9))
def test_changed_rows_are_the_rows_in_exactly_one_of_two_views_of_one_table(
        b1: Any, b2: Any, s1: Any, holes: list[int], c1: int, c2: int, start: int) -> None:
    c1, c2 = min(c1, len(holes)), min(c2, len(holes))
    p, q = HoledRuns(b1, s1, holes, c1), HoledRuns(b2, b1, holes, c2, [start])
    want = sorted(_rows(b1, s1, holes, c1, []) ^ _rows(b2, b1, holes, c2, [start]))
    assert changed_rows(p, q) == [(i, i + 1) for i in want]
    wp, wq = WindowComplement(p, start, 45), WindowComplement(q, start, 50)
    assert changed_rows(wp, wq) == [(i, i + 1) for i in range(60) if (i in wp) != (i in wq)]
    assert changed_rows(p, HoledRuns(b1, s1, list(holes), c1)) is None  # another table: not one shape


@pytest.mark.parametrize("size", [1_000, 2_000])
def test_the_change_between_two_frames_of_one_table_is_asked_of_its_rows_only(
        size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """One more masked row (count 500 → 501) under one unchanged run ``[0, 3 size)``: the one row
    changed, asked of both views (2 questions), whether the table holds 1 000 or 2 000 rows."""
    holes = list(range(1, 3 * size, 3))
    asked = [0]
    real = HoledRuns.has

    def counting(self: HoledRuns, i: int) -> bool:
        asked[0] += 1
        return real(self, i)

    monkeypatch.setattr(HoledRuns, "has", counting)
    prev, cur = HoledRuns([(0, 3 * size)], [(0, 3 * size)], holes, 500), HoledRuns([(0, 3 * size)], [(0, 3 * size)], holes, 501)
    assert changed_rows(prev, cur) == [(1501, 1502)]
    assert asked[0] == 2


class _ReadCounting(Sequence[int]):
    """A table's transcript indices that count every entry read (by index, slice or iteration)."""

    def __init__(self, items: list[int]) -> None:
        self.items, self.read = items, 0

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: Any) -> Any:
        out = self.items[i]
        self.read += len(out) if isinstance(i, slice) else 1
        return out

    def __iter__(self) -> Iterator[int]:
        for x in self.items:
            self.read += 1
            yield x


@pytest.mark.parametrize("size", [1_000, 2_000])
def test_the_holes_between_two_counts_are_read_from_the_table_not_walked_from_its_start(size: int) -> None:
    """Counts ``size`` → ``size + 1`` of a table of ``size + 500`` holes (every third row): the one new
    hole is read (1 entry), and each view bisects its first ``size`` or ``size + 1`` entries once for
    that row (at most 11 probes each, as 2¹¹ > 2 001): at most 23 entries read, never the ``size``
    holes before the change (a walk from the table's start reads 1 000 or 2 000)."""
    holes = _ReadCounting(list(range(1, 3 * (size + 500), 3)))
    runs = [(0, 3 * (size + 500))]
    prev, cur = HoledRuns(runs, runs, holes, size), HoledRuns(runs, runs, holes, size + 1)
    assert changed_rows(prev, cur) == [(3 * size + 1, 3 * size + 2)]
    assert holes.read <= 1 + 2 * 11


@functools.lru_cache(maxsize=None)
def _enormous(rounds: int, window: int = 400_000) -> Replay:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from replay_scaling import one_enormous_turn, run

    return run(one_enormous_turn(rounds), {"type": "observation-masking", "params": {"attention_window": 6}},
               window=window)[1]


@pytest.mark.parametrize("window", [400_000, 3_000])
def test_a_frontier_frames_views_answer_as_its_lists(window: int) -> None:
    """Every frame of one enormous masked turn: membership, the counts a need starts from, and what its
    own rows show (of the keys the index looks for), as the lists and the joined text of its rows split
    out answer."""
    rp = _enormous(60, window)
    ix = TranscriptIndex(rp, call_needs.__globals__["extract_identifiers"], [])
    keys = [*ix.holders, "<masked>", "masked>"]  # and two keys its placeholder rows hold
    for k in keys[-2:]:
        ix.ac.add_word(k, k)
    ix.ac.make_automaton()
    assert sum(type(f.segments) is FrontierSegments and f.segments.upto > 0 for f in rp.frames) > 40
    for f in rp.frames:
        fr = _Frame(f, len(rp.messages), 0)
        if not fr.holed:
            continue
        plain, plain_ranges, sent, unsent = fr._lists()
        for i in range(len(rp.messages)):
            assert (i in fr.plain, i in fr.sent, i in fr.unsent) == (i in plain, i in sent, i in IndexRuns(unsent))
        for key, h in ix.holders.items():
            assert fr.older_plain(h) == (count_in(h, unsent), count_in(h, plain_ranges)), key
        for key in keys:
            assert fr.shows(key, ix) == (key in _Frame(f, len(rp.messages), 0).own_text()), key


def test_the_range_work_per_call_is_bounded_as_the_rounds_double(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranges handed to :class:`IndexRuns` by the detector over one enormous masked turn, per call: a
    frame's runs (the turn's run, the rows after it), never one per masked row, so the same at 200 and
    400 rounds (measured ≈ 9 a call at both; one per masked row would be 100 and 200)."""
    built = [0]
    real = IndexRuns.__init__

    def counting(self: IndexRuns, r: Any) -> None:
        built[0] += len(r)
        real(self, r)

    per_call = []
    for rounds in (200, 400):
        rp = _enormous(rounds)
        assert rp.frames[-1].segments.upto > rounds // 2  # most results masked
        monkeypatch.setattr(IndexRuns, "__init__", counting)
        built[0] = 0
        call_needs(rp)
        monkeypatch.setattr(IndexRuns, "__init__", real)
        per_call.append(built[0] / len(rp.frames))
    assert per_call[1] <= per_call[0] * 1.05 and per_call[1] <= 12


@pytest.mark.parametrize("size", [999, 1_998])
def test_a_run_with_replaced_rows_is_one_transcript_run_read_from_its_ends(size: int,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``size`` transcript rows, every third sent as a placeholder (a swap): the run is the one range
    ``[0, size)``, found by one look at its ends (one :meth:`whole`, one :meth:`swapped_whole`), never
    halved down to each placeholder, whether 333 or 666 rows are replaced."""
    from inspector.replay.ranges import _Refs

    msgs = [{"role": "tool", "content": str(i)} for i in range(size)]
    rows = [{"role": "tool", "content": "<masked>"} if i % 3 == 0 else m for i, m in enumerate(msgs)]
    swaps = {id(rows[i]): (msgs[i], "masked") for i in range(0, size, 3)}
    refs, looks = _Refs(msgs), [0]
    real = _Refs.whole

    def counting(self: _Refs, *args: Any) -> int | None:
        looks[0] += 1
        return real(self, *args)

    monkeypatch.setattr(_Refs, "whole", counting)
    ranges: list[tuple[int, int]] = []
    assert refs.add_run(ranges, rows, 0, size, swaps) == 0
    assert ranges == [(0, size)] and looks[0] == 2  # add_run's own look, then runs' one


def test_a_frontier_frame_that_sends_no_row_of_its_own_builds_one_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """One enormous masked turn (60 rounds): its frontier frames send no row of their own and every
    run is split at the holes, so each frame read builds one :class:`HoledRuns` (its plain rows, which
    are also its sent rows), not two equal ones: as many views as frontier frames read, and one more
    for the turn's first frontier frame, which reads the frame of lists before it over its table."""
    rp = _enormous(60)
    built, read = [0], [0]
    real_init, real_read = HoledRuns.__init__, _Frame._read_runs

    def counting_init(self: HoledRuns, *a: Any, **k: Any) -> None:
        built[0] += 1
        real_init(self, *a, **k)

    def counting_read(self: _Frame) -> None:
        real_read(self)
        read[0] += self.holed

    monkeypatch.setattr(HoledRuns, "__init__", counting_init)
    monkeypatch.setattr(_Frame, "_read_runs", counting_read)
    call_needs(rp)
    assert read[0] > 40
    assert built[0] == read[0] + 1
