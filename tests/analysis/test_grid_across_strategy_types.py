"""Grids across strategy types: a strategy parameter applies only to the strategies whose params
model defines it, each run says which settings applied, and no foreign parameter ever reaches a
strategy (docs/design.md Q9, "Grids across strategy types").

Bug classes guarded here: ``keep_turns`` handed to a ``stack`` (a failed run, or worse a silently
ignored field); the same run made twice because a setting that does not apply differs; a grid key
that no strategy defines turned into a column of identical runs instead of an error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.compare import check_strategy, foreign_parameters
from inspector.manifest import apply_overrides, load_manifest
from inspector.manifest.overrides import OverrideError
from inspector.grid import GridRun, expand_grid, split_settings, strategy_parameter
from inspector.sweep import grid_runs

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "sample_manifests" / "small-window.yaml"  # a summarising manager, keep_turns 3
DOC = apply_overrides(load_manifest(MANIFEST).raw, ["spec.models[0].context_window=6000"])


def test_two_types_by_their_applicable_keys_make_exactly_these_runs() -> None:
    """2 strategies x keep_turns [2, 4] x hysteresis_ratio [0, 0.1] = 8 combinations. sliding-window
    defines keep_turns, not hysteresis_ratio: 2 runs, each naming both ratios as not applicable;
    summarising defines both: 4 runs. Product order: strategy, then keep_turns, then the ratio."""
    grid = {"context_manager": ["sliding-window", "summarising"], "keep_turns": [2, 4], "hysteresis_ratio": [0, 0.1]}
    na = {"hysteresis_ratio": [0, 0.1]}
    assert expand_grid(grid, DOC) == [
        GridRun({"context_manager": "sliding-window", "keep_turns": 2}, na),
        GridRun({"context_manager": "sliding-window", "keep_turns": 4}, na),
        GridRun({"context_manager": "summarising", "keep_turns": 2, "hysteresis_ratio": 0}, {}),
        GridRun({"context_manager": "summarising", "keep_turns": 2, "hysteresis_ratio": 0.1}, {}),
        GridRun({"context_manager": "summarising", "keep_turns": 4, "hysteresis_ratio": 0}, {}),
        GridRun({"context_manager": "summarising", "keep_turns": 4, "hysteresis_ratio": 0.1}, {}),
    ]


def test_stack_takes_max_messages_and_the_window_keep_turns_each_run_once() -> None:
    """stack x {keep_turns 3} x max_messages [20, 40]: stack defines max_messages only (2 runs);
    sliding-window keep_turns only (1 run, both caps not applicable)."""
    grid = {"context_manager": ["stack", "sliding-window"], "keep_turns": [3], "max_messages": [20, 40]}
    assert expand_grid(grid, DOC) == [
        GridRun({"context_manager": "stack", "max_messages": 20}, {"keep_turns": [3]}),
        GridRun({"context_manager": "stack", "max_messages": 40}, {"keep_turns": [3]}),
        GridRun({"context_manager": "sliding-window", "keep_turns": 3}, {"max_messages": [20, 40]}),
    ]


def test_a_whole_spec_is_a_grid_value_and_its_type_decides_what_applies() -> None:
    spec = {"type": "stack", "params": {"max_messages": 20}}
    grid = {"context_manager": [spec, "sliding-window"], "keep_turns": [5]}
    assert grid_runs(MANIFEST, grid) == [GridRun({"context_manager": spec}, {"keep_turns": [5]}),
                                         GridRun({"context_manager": "sliding-window", "keep_turns": 5}, {})]
    # without a context_manager axis the manifest's own strategy decides (summarising: keep_turns applies)
    assert split_settings(DOC, {"keep_turns": 5}) == ("summarising", {"keep_turns": 5}, {})
    assert split_settings(DOC, {"spec.context_manager.params.keep_turns": 5, "context_manager": "full-history"}) == \
        ("stack", {"context_manager": "full-history"}, {"spec.context_manager.params.keep_turns": 5})


def test_a_key_no_strategy_of_the_grid_defines_is_an_error_naming_it() -> None:
    with pytest.raises(OverrideError, match=r"hysteresis_ratio: not a parameter of any strategy in the grid "
                                            r"\(stack, sliding-window\); defined by: summarising"):
        expand_grid({"context_manager": ["stack", "sliding-window"], "hysteresis_ratio": [0.1]}, DOC)
    with pytest.raises(OverrideError, match="max_messages"):  # the manifest's own summarising manager
        expand_grid({"max_messages": [20]}, DOC)
    with pytest.raises(OverrideError, match=r"context_manager.params.keep_turns: not a parameter of the stack"):
        expand_grid({"context_manager": [{"type": "stack", "params": {"keep_turns": 4}}]}, DOC)


def test_strategy_parameters_are_the_params_models_names() -> None:
    assert strategy_parameter("keep_turns") == "keep_turns"
    assert strategy_parameter("spec.context_manager.params.max_messages") == "max_messages"
    assert strategy_parameter("window_size") == "window_size"  # any registered strategy's parameter, given bare
    assert strategy_parameter("context_manager") is None
    assert strategy_parameter("spec.context_manager.params.trimmer") is None  # every strategy accepts it
    assert strategy_parameter("spec.models[0].context_window") is None


def test_compare_refuses_a_foreign_parameter_in_a_strategy_spec() -> None:
    assert foreign_parameters({"type": "stack", "params": {"keep_turns": 4, "max_messages": 9, "trimmer": {}}}) == \
        ["keep_turns"]
    assert foreign_parameters("stack") == [] and foreign_parameters({"type": "sliding-window"}) == []
    with pytest.raises(OverrideError, match=r"keep_turns: not a parameter of the stack context manager "
                                            r"\(accepts: max_messages\)"):
        check_strategy({"type": "stack", "params": {"keep_turns": 4}})
