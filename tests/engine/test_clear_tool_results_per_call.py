"""Per-call work of clear-tool-results while it clears inside one turn's working memory: a clearing
call builds the placeholder of each row it newly clears, once, and nothing for the rows an earlier
call of the turn cleared (docs/performance.md, "Why some code is shaped for speed")."""

from __future__ import annotations

from typing import Any

from inspector.engine.types import Message


def test_a_clearing_call_inside_working_memory_builds_only_its_newly_cleared_row(monkeypatch: Any) -> None:
    """clear-tool-results (trigger 1 token, keep 2) before each of R = 40 asks of a one-turn agent.
    Before ask k (working memory: k answered asks) the results of asks j < k - 2 are cleared (keep 2;
    the newest group is never cleared): k - 2 rows, one more than the call before from k = 3 on. So
    the placeholder builder runs 0 times on calls k = 0..2 and once on each of calls 3..39 (37 in
    all, each original once; estimate counter: 200 // 4 + 4 = 54 tokens a result), and the turn's
    table grows once a clearing call; a call that walked the older results again would build k - 2
    on call k (703 in all)."""
    from inspector.engine.managers.clear_tool_results import ClearToolResults
    from tests.builders import one_turn_asks, spy

    built = spy(monkeypatch, ClearToolResults, "_cleared", arg=1)
    grown = spy(monkeypatch, ClearToolResults, "_wgrow", arg=2)
    rows = one_turn_asks(40, "x" * 200)[1:-1]
    cm = ClearToolResults(trigger=1, keep=2)
    past: list[Message] = []
    per_call: list[int] = []
    last: Any = None
    for k in range(40):
        before = len(built)
        last = cm.decide_with_working(past, tuple(rows[:2 * k]), 0).edits.working
        per_call.append(len(built) - before)
    assert per_call == [0, 0, 0] + [1] * 37
    assert len({id(m) for m in built}) == 37 == cm.rows_built
    assert len(grown) == 37
    assert [r.index for r in last] == [2 * j + 1 for j in range(37)]
    assert [r.row["content"] for r in last] == ["[tool result cleared: bash, 54 tokens]"] * 37
