"""Budget numbers of docs/design.md §2.3 and §3.2, exactly, through the real manifest loader."""

from __future__ import annotations

import warnings

import pytest

from inspector.engine.budget import compute_budget
from inspector.engine.limits import ModelResolutionError, resolve_limits, resolve_mapped_model
from inspector.engine.summarizers.llm import resolve_summary_model
from inspector.manifest import settings_from_dict


def budget_for(spec: dict, *, fixed: int = 0, summarising: bool | None = None):
    settings = settings_from_dict({"kind": "Agent", "spec": spec}).settings
    limits = resolve_limits(settings)
    params = settings.context_manager.params
    is_sum = settings.context_manager.type == "summarising" if summarising is None else summarising
    return compute_budget(limits, settings.trimmer, fixed=fixed, tool_tokens=0, summarising=is_sum,
                          hysteresis_ratio=params.get("hysteresis_ratio", 0.1),
                          summary_threshold=params.get("summary_threshold", 0))


# (spec, max_tokens, reserve + margin, hard, hint) — one row per scenario
TABLE = [
    # 8: default budget, summarising default → hint = ⌊113 200 / 1.1⌋
    ({}, 128_000, 14_800, 113_200, 102_909),
    # 8: the string form gets the same (normalised first, docs/design.md Q5)
    ({"context_manager": "summarising"}, 128_000, 14_800, 113_200, 102_909),
    # 8: sliding-window / stack get the hard budget as hint
    ({"context_manager": "sliding-window"}, 128_000, 14_800, 113_200, 113_200),
    ({"context_manager": "stack"}, 128_000, 14_800, 113_200, 113_200),
    # 9: explicit window and completion budget
    ({"models": [{"model": "gpt-4o", "max_tokens": 4096, "context_window": 200_000}]}, 200_000, 24_096, 175_904, 159_912),
    # 10: trimmer cap and reserve
    ({"context_manager": {"type": "summarising", "params": {"trimmer": {"max_tokens": 12_000, "reserve_tokens": 512}}}},
     12_000, 1_712, 10_288, 9_352),
    ({"context_manager": {"type": "sliding-window", "params": {"trimmer": {"max_tokens": 12_000, "reserve_tokens": 512}}}},
     12_000, 1_712, 10_288, 10_288),
    # 11: summary_threshold lowers the hint, never raises it
    ({"context_manager": {"type": "summarising", "params": {"summary_threshold": 8000}}}, 128_000, 14_800, 113_200, 8_000),
    ({"context_manager": {"type": "summarising", "params": {"summary_threshold": 200_000}}}, 128_000, 14_800, 113_200, 102_909),
    ({"context_manager": {"type": "summarising", "params": {"summary_threshold": 0}}}, 128_000, 14_800, 113_200, 102_909),
    # 12: margin ratio clamped to 0.5
    ({"context_manager": {"type": "summarising", "params": {"trimmer": {"safety_margin_ratio": 0.9}}}},
     128_000, 66_000, 62_000, 56_363),
]


@pytest.mark.parametrize(("spec", "max_tokens", "trim_reserve", "hard", "hint"), TABLE)
def test_budget_numbers(spec: dict, max_tokens: int, trim_reserve: int, hard: int, hint: int) -> None:
    b = budget_for(spec)
    assert (b.max_tokens, b.trimmer_reserve, b.hard, b.hint) == (max_tokens, trim_reserve, hard, hint)


def test_margin_and_ceiling() -> None:
    b = budget_for({"models": [{"model": "gpt-4o", "max_tokens": 4096, "context_window": 200_000}]})
    # margin = ceil(200 000 × 0.1); hard = 200 000 − 4 096 − 20 000; hint = floor(175 904 / 1.1) = 159 912;
    # hysteresis ceiling = floor(159 912 × 1.1) = floor(175 903.2) = 175 903 — back on (just under) hard
    assert b.margin == 20_000 and b.window_source == "manifest"
    assert (b.hard, b.hint, b.ceiling) == (175_904, 159_912, 175_903)


# max_tokens 12 345, reserve 0, margin ceil(1 234.5) = 1 235 → hard 11 110 in every row
@pytest.mark.parametrize(("params", "hint", "ceiling"), [
    ({"hysteresis_ratio": 0.1}, 10_100, 11_110),  # 11 110 / 1.1 = 10 100 exactly; × 1.1 = 11 110
    ({"hysteresis_ratio": 0.3}, 8_546, 11_109),  # floor(8 546.15…) ; floor(11 109.8)
    ({"hysteresis_ratio": 0.25}, 8_888, 11_110),
    ({"hysteresis_ratio": 0.0}, 11_110, 11_110),
    ({"hysteresis_ratio": 0.1, "summary_threshold": 5_000}, 5_000, 5_500),  # threshold lowers the hint
])
def test_hint_and_hysteresis_ceiling_from_the_rule(params: dict, hint: int, ceiling: int) -> None:
    spec = {"context_manager": {"type": "summarising", "params": {
        **params, "trimmer": {"max_tokens": 12_345, "reserve_tokens": 0}}}}
    b = budget_for(spec)
    assert (b.margin, b.hard, b.hint, b.ceiling) == (1_235, 11_110, hint, ceiling)


def test_fixed_parts_reduce_the_hard_budget() -> None:
    assert budget_for({}, fixed=1_000).hard == 112_200


def test_unknown_model_falls_back_with_one_warning_per_name_scenario_13() -> None:
    spec = {"models": [{"model": "acme/foo-unknown-xyz"}]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        b1 = budget_for(spec)
        b2 = budget_for(spec)
    assert b1.window == b2.window == 128_000 and b1.window_source == "fallback"
    assert sum("acme/foo-unknown-xyz" in str(w.message) for w in caught) == 1


def test_litellm_model_info_and_explicit_window_wins_scenario_13() -> None:
    b = budget_for({"models": [{"model": "vertex_ai/gemini-2.5-flash"}]})
    assert (b.window, b.window_source) == (1_048_576, "litellm")
    b = budget_for({"models": [{"model": "vertex_ai/gemini-2.5-flash", "context_window": 50_000}]})
    assert (b.window, b.window_source) == (50_000, "manifest")


def test_infra_mapping_and_generation() -> None:
    spec = {"models": [{"model": "default"}],
            "infra": {"models": {"mappings": {"default": "fast", "fast": "gpt-4o-mini"}}}}
    settings = settings_from_dict({"kind": "Agent", "spec": spec}).settings
    limits = resolve_limits(settings)
    assert limits.effective_model == "gpt-4o-mini" and limits.window == 128_000 and limits.window_source == "litellm"
    spec["infra"]["models"]["generation"] = {"context_window": 32_000, "max_tokens": 1_000}
    limits = resolve_limits(settings_from_dict({"kind": "Agent", "spec": spec}).settings)
    assert (limits.window, limits.window_source, limits.completion, limits.completion_source) == (32_000, "infra", 1_000, "infra")


def test_mapping_cycles_are_errors() -> None:
    with pytest.raises(ModelResolutionError, match="cycle"):
        resolve_mapped_model("a", {"a": "b", "b": "a"})
    chain = {f"m{i}": f"m{i + 1}" for i in range(20)}
    with pytest.raises(ModelResolutionError, match="deeper"):
        resolve_mapped_model("m0", chain)


def test_budgets_use_the_primary_model_scenario_14() -> None:
    spec = {"models": [{"id": "main", "context_window": 128_000, "max_tokens": 2_000},
                       {"id": "summarizer", "context_window": 8_000}]}
    b = budget_for(spec)
    assert (b.window, b.reserve) == (128_000, 2_000)


class Row:
    def __init__(self, id: str, model: str | None) -> None:  # noqa: A002
        self.id, self.model = id, model


@pytest.mark.parametrize(("requested", "rows", "engine", "expected"), [
    ("summarizer", [Row("summarizer", "gpt-4o-mini")], "gpt-4o", ("gpt-4o-mini", "spec.models[id=summarizer]")),
    (None, [], "gpt-4o", ("gpt-4o", "agent")),
    ("haiku-3", [], "gpt-4o", ("haiku-3", "override")),
    ("gpt-4o", [], "gpt-4o", ("gpt-4o", "agent")),
    (None, [], None, (None, "agent")),
    ("summarizer", [Row("summarizer", "any")], "gpt-4o", ("gpt-4o", "agent")),
    (None, [Row("summarizer", "gpt-4o-mini")], "gpt-4o", ("gpt-4o-mini", "spec.models[id=summarizer]")),
])
def test_summary_model_selection_scenario_15(requested, rows, engine, expected) -> None:  # noqa: ANN001
    assert resolve_summary_model(requested, rows, engine) == expected
