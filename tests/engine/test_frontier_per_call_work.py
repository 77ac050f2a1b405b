"""Per-call work of the frontier strategies (observation-masking, clear-tool-results): what does not
change between the calls of a turn is made once a turn, as for the plain strategies
(docs/performance.md, "Why some code is shaped for speed")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.engine.types import Message


def _turns(n: int, pad: int = 0) -> list[Message]:
    """``n`` turns of one tool round each: user row, ask, its result (``pad`` more characters), reply
    (two calls a turn)."""
    msgs: list[Message] = []
    for t in range(n):
        msgs += [{"role": "user", "content": f"q{t}"},
                 {"role": "assistant", "content": "", "tool_calls": [
                     {"id": f"c{t}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": f"c{t}", "content": f"out {t}" + "x" * pad},
                 {"role": "assistant", "content": "done"}]
    return msgs


@pytest.mark.parametrize(("turns", "matched", "marked"), [(10, 12, 11), (20, 22, 21)])
def test_a_frontier_calls_log_match_and_band_marks_are_made_once_a_turn(
        tmp_path: Path, monkeypatch: Any, turns: int, matched: int, marked: int) -> None:
    """observation-masking, window 3 events, ``turns`` turns of 2 calls (call 2t before turn t's ask,
    2t + 1 before its reply). Calls 0-2 mask nothing (the plain path: a new record each call, so the
    log match is made on each, 3; the band marks on calls 0 and 2, the log grown, 2). From call 3 on
    every call masks (a frontier view): the path is shown one record and one index per log, so the
    match and the marks are made once per log length, i.e. once a turn: call 3 (turn 1), then turns
    2 .. turns-1. Match: 3 + 1 + (turns - 2) = turns + 2; marks: 2 + 1 + (turns - 2) = turns + 1.
    (They were made on every frontier call: 2·turns and 2·turns - 1.)"""
    from inspector.engine.assembly import incremental
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript

    counts = {"match": 0, "marks": 0}
    match_log, marks_of = incremental._match_log, incremental.marks_of

    def counting_match(*a: Any, **k: Any) -> Any:
        counts["match"] += 1
        return match_log(*a, **k)

    def counting_marks(*a: Any, **k: Any) -> Any:
        counts["marks"] += 1
        return marks_of(*a, **k)

    monkeypatch.setattr(incremental, "_match_log", counting_match)
    monkeypatch.setattr(incremental, "marks_of", counting_marks)
    path, manifest = tmp_path / "t.json", tmp_path / "m.yaml"
    path.write_text(json.dumps({"messages": _turns(turns)}))
    manifest.write_text(json.dumps({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "m"}, "spec": {
        "models": [{"id": "main", "model": "gpt-4o"}],
        "context_manager": {"type": "observation-masking", "params": {"attention_window": 3}}}}))
    rp = replay(str(manifest), load_transcript(path), counter="estimate")
    # the window of 3 events: call 2t + 1 (log 4t rows, working memory 2) masks results 2, 6, .. below 4t - 1
    assert [len(f.replaced) for f in rp.frames][:6] == [0, 0, 0, 1, 1, 2]
    assert (counts["match"], counts["marks"]) == (matched, marked)


@pytest.mark.parametrize(("name", "before", "last"), [("observation-masking", 172, 9), ("clear-tool-results", 280, 9)])
def test_a_frontier_manager_reads_a_frozen_working_memory_as_its_list_not_through_view_calls(
        monkeypatch: Any, name: str, before: int, last: int) -> None:
    """The engine hands working memory over read-only (``frozen``: a view of its whole list). One
    turn of 12 asks, the manager called before each ask as the engine calls it (observation-masking
    with a window of 3 events, clear-tool-results over a 1-token trigger keeping 2 results): the
    view's ``__len__`` and ``__getitem__`` are called 0 times (each was a Python call per row read
    and per length asked: ``before`` calls over the turn, 16 (masking) and 26 (clearing) a call from
    ask 3 on), and the answers are those of the same rows given as a tuple. The call before ask 11 sends
    the results of asks 0 .. 8 as placeholders (masked: j < k - 2; cleared: all but the last 2 of
    the 11 results, none in the newest group; each 205 characters, longer than its placeholder)."""
    from inspector.engine.managers.base import frozen
    from inspector.engine.managers.clear_tool_results import ClearToolResults
    from inspector.engine.managers.observation_masking import ObservationMasking
    from inspector.engine.types import RowsView

    del before  # (the count before the change, for the record)
    calls = [0]
    length, item = RowsView.__len__, RowsView.__getitem__

    def counting_len(self: RowsView) -> int:
        calls[0] += 1
        return length(self)

    def counting_item(self: RowsView, k: Any) -> Any:
        calls[0] += 1
        return item(self, k)

    def make() -> Any:
        return ObservationMasking(attention_window=3) if name == "observation-masking" else \
            ClearToolResults(trigger=1, keep=2)

    rows = _turns(12, 200)[1:]  # one user turn's working memory grows ask by ask
    rows = [m for k in range(12) for m in (rows[4 * k], rows[4 * k + 1])]
    viewed, plain = make(), make()
    working: list[Message] = []
    past: list[Message] = []  # the log, one list (the engine's)
    monkeypatch.setattr(RowsView, "__len__", counting_len)
    monkeypatch.setattr(RowsView, "__getitem__", counting_item)
    for k in range(12):
        working[:] = rows[:2 * k]
        a = viewed.decide_with_working(past, frozen(working), 0).edits
        assert calls[0] == 0
        b = plain.decide_with_working(past, tuple(working), 0).edits
        assert [(r.index, r.row) for r in a.working] == [(r.index, r.row) for r in b.working]
    assert len(a.working) == last
