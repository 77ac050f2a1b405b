"""History structure helpers (docs/design.md §1.2, §1.3) held to their docstrings at the edges.

``start_of_tool_group`` clamps its index and steps back over ``tool`` rows to the ask;
``leading_group_size`` measures the group at ``start`` (default: the first row). Callers in the
engine (stack slicing, the pre-cut) never pass an empty list or an index past the end, so these
edges are pinned here, where a wrong clamp would otherwise go unseen until a new caller relied on it.
"""

from __future__ import annotations

import pytest
from builders import ask, asst, tool, user

from inspector.engine.history import leading_group_size, start_of_tool_group


def test_start_of_tool_group_of_nothing_is_zero() -> None:
    assert start_of_tool_group([], 0) == 0
    assert start_of_tool_group([], 5) == 0


@pytest.mark.parametrize(("rows", "i", "start"), [
    ([user(), asst(), user()], 2, 2),  # the last row, not a tool row: itself
    ([user(), asst(), user()], 99, 2),  # past the end: clamped to the last row
    ([user(), asst(), user()], -4, 0),  # before the start: clamped to 0
    ([user(), ask("a"), tool("a"), tool("a")], 99, 1),  # clamped, then back over the results to the ask
    ([ask("a"), tool("a"), tool("a")], 2, 0),  # back to an ask at index 0
    ([tool("a"), tool("b")], 1, 0),  # tool rows from the very start: stops at 0, never below
])
def test_start_of_tool_group_clamps_then_steps_back_to_the_ask(rows: list[dict], i: int, start: int) -> None:
    assert start_of_tool_group(rows, i) == start


def test_leading_group_size_measures_the_first_group_by_default() -> None:
    rows = [ask("a", "b"), tool("a"), tool("b"), user("next")]
    assert leading_group_size(rows) == 3
    assert leading_group_size(rows, 3) == 1 and leading_group_size(rows, 4) == 0
