"""A frontier index's sums as one list (``replacing.TAIL_LIST``) and its facts taken from a grown log.

Rules: when the rows above a view's frontier are few (at most ``TAIL_LIST``) and the replaced log's
sums reach exactly that frontier, :class:`~inspector.engine.assembly.replacing.ReplacingSums` writes
those rows' sums after its own and the frontier index reads the one list (no ``_FrontierSums`` item, a
Python call each); otherwise it reads through ``_FrontierSums`` as before. Either way ``pre[i]`` is the
sum of the first ``i`` rows sent. A frontier index shares the log index's facts (its attribute
dict: nothing copied or taken over as the log grows) and so holds every fact of the log's. The
trimmer reads nothing of working memory's rows when no history group is dropped, and its length from
the caller when given (``RowSums.pin_n``).
"""

from __future__ import annotations

import json
from bisect import bisect_left
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from builders import UnitsOf, one_turn_asks, sent_sums, spy
from inspector.engine.contracts import ReplacedBefore, Replacement
from inspector.engine.types import Message


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=40), st.integers(0, 6), st.data())
def test_a_frontier_indexs_list_sums_are_the_replaced_logs_for_a_growing_log(
        units: list[int], tail_list: int, data: Any) -> None:
    """One log index synced over one growing list, views whose frontier moves on and back, a drawn
    ``TAIL_LIST``: ``pre[i]`` is the rule's sum, ``reach`` and ``fits_back`` answer what bisecting
    the rule's sums answers, ``pre`` is a list exactly when the rows above the frontier are at most
    ``TAIL_LIST`` and no earlier view's frontier stood further on, and every other fact of the log
    index is the frontier index's (the same object)."""
    from inspector.engine.assembly import replacing
    from inspector.engine.assembly.replacing import ReplacingSums
    from inspector.engine.assembly.row_index import RowIndex

    counter: Any = UnitsOf()
    rows: list[Message] = [{"role": "user", "content": "", "u": u} for u in units]
    at = sorted(data.draw(st.sets(st.integers(0, len(rows) - 1), max_size=len(rows))))
    table = [Replacement(i, {"role": "user", "content": "", "u": data.draw(st.integers(1, 9))}, "masked") for i in at]
    grown: list[Message] = []
    log = RowIndex(counter)
    sums = ReplacingSums()
    furthest = 0
    saved = replacing.TAIL_LIST
    replacing.TAIL_LIST = tail_list
    try:
        for upto in data.draw(st.lists(st.integers(0, len(table)), min_size=1, max_size=8)):
            view = ReplacedBefore(table, upto)
            n = data.draw(st.integers(max(view.frontier, len(grown)), len(rows)))
            grown.extend(rows[len(grown):n])
            log.sync(grown)
            idx = sums.frontier(log, view, counter)
            want = sent_sums(rows, view, n)
            assert [idx.pre[i] for i in range(n + 1)] == want
            f = view.frontier
            assert (type(idx.pre) is list) == (f >= furthest and n - f <= tail_list)
            furthest = max(furthest, f)
            for x in range(0, want[-1] + 3, 2):
                assert idx.reach(x) == bisect_left(want, x, 0, n + 1)
            for lo in range(n):
                assert idx.fits_back(7, 1, 2, lo) == bisect_left(want, want[n] + 2 - 7, lo, n) - 1
            mine = vars(idx)
            assert all(mine[k] is v for k, v in vars(log).items() if k not in ("rows", "pre"))
    finally:
        replacing.TAIL_LIST = saved


def test_a_clearing_turns_frontier_calls_read_their_sums_as_one_list(tmp_path: Path, monkeypatch: Any) -> None:
    """clear-tool-results (trigger 1 token, keep 2) over one turn of 30 asks (200-character results),
    a call before each ask and before "done": the call before ask k (working memory 2k rows) clears the
    results of asks j < k - 2, so from k = 3 on (28 calls) every call clears and its working memory's
    frontier (2k - 4) stands 4 rows below the end: each reads its sums as one list, 0 ``_FrontierSums``
    items read in all (each call read 5 before: working memory's total, two sums in the trimmer, two in
    the layout; at least 1 when the payload fits)."""
    from inspector.engine.assembly.replacing import ReplacingSums, _FrontierSums
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript

    path, manifest = tmp_path / "t.json", tmp_path / "m.yaml"
    path.write_text(json.dumps({"messages": one_turn_asks(30, "x" * 200)}))
    manifest.write_text(json.dumps({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "m"}, "spec": {
        "models": [{"id": "main", "model": "gpt-4o"}],
        "context_manager": {"type": "clear-tool-results", "params": {"trigger": 1, "keep": 2}}}}))
    items = spy(monkeypatch, _FrontierSums, "__getitem__")
    pointed: list[Any] = []
    real = ReplacingSums.frontier

    def recording(self: Any, *args: Any) -> Any:
        idx = real(self, *args)
        pointed.append(type(idx.pre))
        return idx

    monkeypatch.setattr(ReplacingSums, "frontier", recording)
    rp = replay(str(manifest), load_transcript(path), counter="estimate")
    assert len(rp.frames) == 31 and len(pointed) == 28 and all(t is list for t in pointed)
    assert len(items) == 0


def test_the_trimmer_reads_no_working_row_when_no_history_group_is_dropped() -> None:
    """A payload that fits after its history (system row, user row) and a 6-row working memory over
    budget: the working-memory cut by bisection, ``len(pin_tail)`` asked 0 times when ``pin_n`` is
    given, once without (twice before: also ``bool(pin_tail)``), a row of it read alone 0 times (``pin_tail[0]`` was read once, to look
    for answers owed by a dropped ask, with no history group to drop)."""
    from inspector.engine.trim import RowSums, trim_with_sums

    class Counted(list):  # type: ignore[type-arg]
        lens = 0
        items = 0

        def __len__(self) -> int:
            Counted.lens += 1
            return super().__len__()

        def __getitem__(self, i: Any) -> Any:
            if not isinstance(i, slice):  # (the kept rows' one slice is the result's copy)
                Counted.items += 1
            return super().__getitem__(i)

    head: list[Message] = [{"role": "system", "content": "s", "u": 1}, {"role": "user", "content": "q", "u": 1}]
    rows: list[Message] = []
    for k in range(3):
        rows += [{"role": "assistant", "content": "", "u": 5, "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": f"c{k}", "content": "x", "u": 5}]
    pre = [0]
    for m in rows:
        pre.append(pre[-1] + m["u"])
    tail = Counted(rows)
    for given_n, lens in ((6, 0), (-1, 1)):
        Counted.lens = Counted.items = 0
        sums = RowSums(lambda lo, hi: sum(m["u"] for m in head[lo:hi]), 2, lambda k: pre[k + 1] - pre[k],
                       lambda lo, hi: pre[hi] - pre[lo], pre[-1], [0, 2, 4],
                       lambda x: bisect_left(pre, x), given_n)
        out = trim_with_sums(head, max_tokens=25, reserve=0, fixed=0, pin_tail=tail, counter=UnitsOf(),  # type: ignore[arg-type]
                             sums=sums)
        assert list(out.messages) == head + rows[2:] and not out.over_budget
        assert (Counted.lens, Counted.items) == (lens, 0)
