"""Per-call work of clear-tool-results while it clears inside one turn's working memory: a clearing
call builds the placeholder of each row it newly clears, once, and nothing for the rows an earlier
call of the turn cleared (docs/performance.md, "Why some code is shaped for speed")."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

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
    from inspector.engine.tokens import EstimateCounter
    from tests.builders import one_turn_asks, spy

    built = spy(monkeypatch, EstimateCounter, "with_content", arg=1)  # (each placeholder row made by it)
    grown = spy(monkeypatch, ClearToolResults, "_grow", arg=4)
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


def test_a_placeholder_row_is_counted_from_its_originals_unit_and_its_texts_memo(monkeypatch: Any) -> None:
    """clear-tool-results (trigger 1 token, keep 2) before each of 40 asks of a one-turn agent, tiktoken
    counter: the 37 results cleared are all 200 ``x`` (one size), so their 37 placeholder rows share one
    text. The counter asks each row once: each call's ``unit`` questions are its two new rows (78 in
    all; the original of a row being cleared is not asked again: its unit was kept when the turn's
    state read it, where asking it again made 2 more a clearing call, 152 in all); and a placeholder
    row is measured only for the first text (1; the other 36 read the text's memo through
    ``with_content``, where each was measured: 37). Every row sent is the one counted: the counter's
    cache answers each placeholder's unit as measuring it would."""
    from inspector.engine.managers.clear_tool_results import ClearToolResults
    from inspector.engine.tokens import TiktokenCounter
    from tests.builders import one_turn_asks, spy

    counter = TiktokenCounter(model="gpt-4o")
    rows = one_turn_asks(40, "x" * 200)[1:-1]
    cm = ClearToolResults(trigger=1, keep=2)
    cm.counter = counter
    asked = spy(monkeypatch, TiktokenCounter, "unit", arg=1)
    measured = spy(monkeypatch, TiktokenCounter, "_measure", arg=1)
    past: list[Message] = []
    last: Any = None
    for k in range(40):
        last = cm.decide_with_working(past, tuple(rows[:2 * k]), 0).edits.working
    assert len(asked) == 78 and [id(m) for m in asked] == [id(m) for m in rows[:78]]
    placeholders = [m for m in measured if str(m["content"]).startswith("[tool result cleared")]
    assert len(placeholders) == 1 and cm.rows_built == 37
    fresh = TiktokenCounter(model="gpt-4o")
    assert [counter.unit(r.row) for r in last] == [fresh.unit(dict(r.row)) for r in last]


class _CountedTexts(dict[tuple[str, int], str]):
    """A manager's placeholder texts by (tool, tokens), counting each look-up (``get``)."""

    asked = 0

    def get(self, key: Any, default: Any = None) -> Any:
        """The text of ``key`` (None when none is kept yet), counted."""
        _CountedTexts.asked += 1
        return super().get(key, default)


def test_a_run_of_results_of_one_tool_and_size_looks_its_placeholder_text_up_once() -> None:
    """The 40 asks of the first test (trigger 1 token, keep 2, each result 200 ``x``: 54 tokens, one
    tool): the 37 rows cleared one a call share one (tool, tokens) key, so the manager looks the
    placeholder text up once (the first row; each later row is of the key it made last) and builds
    the text once; a look-up per row made 37. Then 5 asks answered by 400 ``y`` (104 tokens) after
    them and 6 more calls, which clear the last 3 results of 54 tokens and the first 3 of 104 (43 in
    all): the new key is looked up once, when its first row is cleared (2 in all; a look-up per row
    made 43)."""
    from inspector.engine.managers.clear_tool_results import ClearToolResults
    from tests.builders import one_turn_asks

    rows = one_turn_asks(40, "x" * 200)[1:-1] + one_turn_asks(5, "y" * 400)[1:-1]
    for k, m in enumerate(rows[80:]):  # (the second run's call ids after the first's)
        if "tool_calls" in m:
            m["tool_calls"][0]["id"] = f"d{k}"
        else:
            m["tool_call_id"] = f"d{k - 1}"
    cm = ClearToolResults(trigger=1, keep=2)
    cm._texts = texts = _CountedTexts()
    _CountedTexts.asked = 0
    past: list[Message] = []
    last: Any = None
    for k in range(40):
        last = cm.decide_with_working(past, tuple(rows[:2 * k]), 0).edits.working
    assert _CountedTexts.asked == 1 and list(texts) == [("bash", 54)] and len(last) == 37
    for k in range(40, 46):
        last = cm.decide_with_working(past, tuple(rows[:2 * k]), 0).edits.working
    assert _CountedTexts.asked == 2 and list(texts) == [("bash", 54), ("bash", 104)]
    assert [r.row["content"] for r in last] == ["[tool result cleared: bash, 54 tokens]"] * 40 + \
        ["[tool result cleared: bash, 104 tokens]"] * 3


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["bash", "read", "grep"]), st.integers(0, 3)), min_size=1, max_size=14),
       st.integers(0, 3))
def test_every_placeholder_text_is_its_tool_and_size_whatever_the_runs(results: list[tuple[str, int]],
                                                                      keep: int) -> None:
    """A one-turn agent whose results are of a few tools and sizes (4 lengths of ``x``), in any
    order, with a manager (trigger 1 token, ``keep``) asked before each ask: every row cleared on
    every call is its original with the text of its own tool and size (``_placeholder(tool,
    count([original]))``), whether the last row built was of the same key (its text reused) or not
    (looked up)."""
    from inspector.engine.managers.clear_tool_results import ClearToolResults

    rows: list[Message] = []
    for k, (tool, size) in enumerate(results):
        rows += [{"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": tool, "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": "x" * (40 * size)}]
    cm = ClearToolResults(trigger=1, keep=keep)
    past: list[Message] = []
    for k in range(len(results) + 1):
        for r in cm.decide_with_working(past, tuple(rows[:2 * k]), 0).edits.working:
            original = rows[r.index]
            tool = results[r.index // 2][0]
            assert r.row == {**original, "content": cm._placeholder(tool, cm.counter.count([original]))}
