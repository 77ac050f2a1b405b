"""The tuner tunes the strategy type the user names (``STRATEGY`` in tune_keep_turns.ipynb,
:func:`inspector.tuning.strategy_grid`): the type leads the grid, a strategy parameter its params
model does not define leaves the grid and the words say so with the types that define it, an
unknown type or a grid with nothing of the strategy's own is refused naming what would do."""

from __future__ import annotations

import pytest

from inspector.errors import PluginLookupError
from inspector.tuning import strategy_grid

GRID = {"keep_turns": [1, 2], "hysteresis_ratio": [0, 0.3], "spec.models[0].context_window": [6_000]}


def test_without_a_strategy_the_grid_is_swept_as_given() -> None:
    tuned = strategy_grid(GRID)
    assert tuned.grid == GRID and (tuned.x, tuned.h) == ("keep_turns", "hysteresis_ratio")


def test_a_named_type_leads_the_grid_and_keeps_only_its_own_parameters() -> None:
    tuned = strategy_grid(GRID, "sliding_window")  # an alias names the type too
    assert tuned.grid == {"context_manager": ["sliding-window"], "keep_turns": [1, 2],
                          "spec.models[0].context_window": [6_000]}  # a manifest path is not a strategy's
    assert (tuned.x, tuned.h) == ("keep_turns", "keep_turns")  # no ratio swept: the summarizer chart reads keep_turns
    assert "Left out of the grid, since sliding-window does not define them: `hysteresis_ratio` (defined by " \
           "summarising)." in tuned.words


def test_another_types_dial_is_swept_and_read_along() -> None:
    tuned = strategy_grid({"keep_turns": [2], "trigger": [1_000, 2_000]}, "clear-tool-results")
    assert tuned.grid == {"context_manager": ["clear-tool-results"], "trigger": [1_000, 2_000]}
    assert (tuned.x, tuned.h) == ("trigger", "trigger")
    assert "`keep_turns` (defined by summarising, sliding-window)" in tuned.words


def test_an_unknown_type_or_a_grid_without_its_parameters_is_refused() -> None:
    with pytest.raises(PluginLookupError, match="STRATEGY: unknown context_manager plugin 'nope'"):
        strategy_grid(GRID, "nope")
    with pytest.raises(ValueError, match="GRID sets no parameter of stack: name one of max_messages"):
        strategy_grid({"keep_turns": [1]}, "stack")
