"""A frontier table's rows are indexed by their ids only when a row sent is looked up by its id.

Rule (inspector/replay/replaced.py): ``FrontierTable.sync`` maps a table's entries (transcript index,
reason, row sent, row replaced) and leaves the id index of the rows sent to :meth:`FrontierTable.row_ids`,
which brings it up to date with the rows mapped since it was last asked; :class:`FrontierSwaps`
(inspector/replay/ranges.py) asks it when a payload row is looked up. A replay whose payload reads the
replaced rows by their log positions (a one-turn agent's clearing calls) never asks, so a clearing call
no longer indexes the row it maps (the first one of a long turn: thousands at once). The frame's
``segments`` and ``replaced`` are made by :func:`frontier_frame`, the previous frame's view again when
it is the same one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.contracts import Replacement
from inspector.engine.types import Message


class _CountedIds(dict[int, int]):
    """An id index that counts the entries written into it."""

    written = 0

    def update(self, pairs: Any = (), /, **kwargs: Any) -> None:  # type: ignore[override]
        pairs = list(pairs)
        self.written += len(pairs)
        super().update(pairs)

    def __setitem__(self, key: int, value: int) -> None:
        self.written += 1
        super().__setitem__(key, value)


def _table(n: int, twice: int | None = None) -> tuple[list[Message], dict[int, int], list[Replacement]]:
    """A log of ``2n + 2`` rows, its index by id, and a table replacing rows 1, 3, ... (entry ``twice``
    sends the row entry 0 sends: one row object listed twice)."""
    log: list[Message] = [{"role": "user", "content": str(i)} for i in range(2 * n + 2)]
    table = [Replacement(2 * k + 1, {"role": "user", "content": f"r{k}"}, f"why{k % 3}") for k in range(n)]
    if twice is not None and 0 < twice < n:
        table[twice] = Replacement(table[twice].index, table[0].row, table[twice].reason)
    return log, {id(m): i for i, m in enumerate(log)}, table


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.sampled_from([1, 10 ** 9]), st.none() | st.integers(1, 39))
def test_row_ids_are_the_position_of_each_row_sent_built_only_when_asked(old: int, new: int, batch: int,
                                                                          twice: int | None) -> None:
    """Syncing ``old`` entries then ``new`` more (in bulk or one by one) writes no id; ``row_ids`` then
    answers every row sent by its id (a row listed twice: its last position) and writes each row once
    over the table's life: ``old`` ids when asked after the first sync, ``new`` more after the second."""
    from inspector.replay.replaced import FrontierTable

    log, ref, table = _table(old + new, twice)
    real = FrontierTable.BATCH
    try:
        FrontierTable.BATCH = batch  # type: ignore[misc]
        fr = FrontierTable(table[:old])
        ids = fr.ids = _CountedIds()
        assert fr.sync(log, ref, log)
        assert ids.written == 0
        assert fr.row_ids() == {id(r.row): k for k, r in enumerate(table[:old])}
        assert ids.written == old
        fr.table = table
        assert fr.sync(log, ref, log)
        assert ids.written == old
        assert fr.row_ids() is ids
        assert ids == {id(r.row): k for k, r in enumerate(table)}
        assert ids.written == old + new
        fr.row_ids()
        assert ids.written == old + new
    finally:
        FrontierTable.BATCH = real  # type: ignore[misc]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.data())
def test_a_frontier_swaps_lookup_answers_as_the_id_rule_says(n: int, data: Any) -> None:
    """``FrontierSwaps.get`` of any row's id, as the table grows and the frontier moves: (the row replaced,
    its reason) for a row sent among the table's first ``upto`` entries (its last position), else what
    ``extra`` holds, else None (a row sent past the frontier, a log row, an unknown id)."""
    from inspector.replay.ranges import FrontierSwaps
    from inspector.replay.replaced import FrontierTable

    log, ref, table = _table(n, data.draw(st.none() | st.integers(1, n)))
    extra_row: Message = {"role": "tool", "content": "w"}
    extra = {id(extra_row): (log[0], "in-working")}
    fr = FrontierTable(table[:0])
    found = FrontierSwaps(fr, 0, extra)
    for _ in range(4):
        size = data.draw(st.integers(len(fr.refs), n))
        fr.table = table[:size]
        assert fr.sync(log, ref, log)
        found.upto = data.draw(st.integers(0, size))
        last = {id(r.row): k for k, r in enumerate(table[:size])}
        for m in [r.row for r in table] + log + [extra_row]:
            k = last.get(id(m))
            want = (log[table[k].index], table[k].reason) if k is not None and k < found.upto \
                else extra.get(id(m))
            assert found.get(id(m)) == want


@pytest.mark.parametrize(("name", "params"), [("observation-masking", {"attention_window": 3}),
                                              ("clear-tool-results", {"trigger": 1, "keep": 2})])
def test_a_one_turn_frontier_replay_indexes_no_row_sent(tmp_path: Path, monkeypatch: Any, name: str,
                                                         params: dict[str, Any]) -> None:
    """A one-turn agent of 30 asks of 200-character results (its record replaces working-memory rows
    only), call k replacing the
    results of asks 0..k-3 (observation-masking, window 3 events; clear-tool-results over a 1-token
    trigger keeping 2 results): 28 frontier frames (calls 3..30) over one table of 28 entries. Their
    payloads read the replaced rows by their positions, so no row sent is looked up by its id and none is
    indexed (28 before: each entry as it was mapped). Each frontier frame's ``segments`` and ``replaced``
    are views of their own over the table's first ``upto`` entries, as the record's."""
    from inspector.replay import replay
    from inspector.replay.replaced import FrontierSegments, FrontierTable, ReplacedRefs
    from inspector.transcripts.api import load_transcript
    from tests.builders import one_turn_asks

    made: list[FrontierTable] = []
    original = FrontierTable.__init__

    def kept(self: FrontierTable, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(FrontierTable, "__init__", kept)
    path, manifest = tmp_path / "t.json", tmp_path / "m.yaml"
    path.write_text(json.dumps({"messages": one_turn_asks(30, "x" * 200)}))
    manifest.write_text(json.dumps({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "m"}, "spec": {
        "models": [{"id": "main", "model": "gpt-4o"}], "context_manager": {"type": name, "params": params}}}))
    rp = replay(str(manifest), load_transcript(path), counter="estimate")
    frontier = [f for f in rp.frames if type(f.replaced) is ReplacedRefs]
    tables = [fr for fr in made if fr.table]
    assert len(tables) == 1 and tables[0].ids == {} and tables[0].indexed == 0 and len(tables[0].refs) == 28
    assert [f.replaced.upto for f in frontier] == list(range(1, 29))
    assert len({id(f.replaced) for f in frontier}) == len({id(f.segments) for f in frontier}) == 28
    assert all(type(f.segments) is FrontierSegments and f.segments.upto == f.replaced.upto
               and f.segments.fr is f.replaced.fr is tables[0] and f.replaced.extra == () for f in frontier)


def test_a_frontier_frames_views_are_the_ones_their_classes_make() -> None:
    """``frontier_frame`` (made by the slots) gives the views ``FrontierSegments`` and ``ReplacedRefs`` make,
    read alike, with the previous frame's ``replaced`` again only when it is the same view of the same table."""
    from inspector.replay.replaced import FrontierSegments, FrontierTable, ReplacedRefs, frontier_frame

    log, ref, table = _table(6)
    fr, other = FrontierTable(table), FrontierTable(table)
    assert fr.sync(log, ref, log) and other.sync(log, ref, log)
    runs = [(0, 1, "user", None, None), (1, 12, "working_memory", None, None)]
    last = ReplacedRefs(fr, 4)
    for upto, extra, prev, again in ((4, (), last, True), (5, (), last, False), (4, ((13, "w"),), last, False),
                                     (4, (), ReplacedRefs(other, 4), False), (4, (), (), False)):
        segs, replaced = frontier_frame(runs, fr, upto, prev, extra)
        want_segs, want = FrontierSegments(tuple(runs), fr, upto), ReplacedRefs(fr, upto, extra)
        assert (replaced is prev) == again
        assert type(segs) is FrontierSegments and type(replaced) is ReplacedRefs
        assert (segs.runs, segs.fr, segs.upto) == (want_segs.runs, want_segs.fr, want_segs.upto)
        assert list(segs) == list(want_segs) and list(replaced) == list(want) and replaced.extra == extra
