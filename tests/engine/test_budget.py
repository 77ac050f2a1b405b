"""Budget numbers of docs/design.md §2.3 and §3.2, exactly, through the real manifest loader."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.budget import CalibrationError, compute_budget, resolve_calibration
from inspector.engine.limits import ModelResolutionError, resolve_limits, resolve_mapped_model
from inspector.engine.summarizers.llm import resolve_summary_model
from inspector.manifest import settings_from_dict


def budget_for(spec: dict, *, fixed: int = 0, summarizing: bool | None = None):
    settings = settings_from_dict({"kind": "Agent", "spec": spec}).settings
    limits = resolve_limits(settings)
    params = settings.context_manager.params
    is_sum = settings.context_manager.type == "summarising" if summarizing is None else summarizing
    return compute_budget(limits, settings.trimmer, fixed=fixed, tool_tokens=0, summarizing=is_sum,
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


def test_unknown_model_falls_back_with_one_warning_per_name() -> None:
    spec = {"models": [{"model": "acme/foo-unknown-xyz"}]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        b1 = budget_for(spec)
        b2 = budget_for(spec)
    assert b1.window == b2.window == 128_000 and b1.window_source == "fallback"
    assert sum("acme/foo-unknown-xyz" in str(w.message) for w in caught) == 1


def test_litellm_model_info_and_explicit_window_wins() -> None:
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


def test_budgets_use_the_primary_model() -> None:
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
def test_summary_model_selection(requested, rows, engine, expected) -> None:  # noqa: ANN001
    assert resolve_summary_model(requested, rows, engine) == expected


# --- token calibration: which factor is in force and where it was set ---------------------------------
def _settings(spec: dict):
    return settings_from_dict({"kind": "Agent", "spec": spec}).settings


MAPPED = {"models": [{"model": "default"}], "infra": {"models": {"mappings": {"default": "gpt-4o-mini"}}}}


@pytest.mark.parametrize("model", ["default", "gpt-4o-mini"])  # as written, or as mapped
def test_a_calibration_override_names_the_model_as_written_or_as_mapped(model: str) -> None:
    s = _settings(MAPPED)
    assert resolve_calibration(s.primary_model(), resolve_limits(s), "estimate", {model: 1.25}) == (
        1.25, f"command line ({model}, estimate counter)")


def test_a_calibration_override_for_another_model_is_an_error_naming_both() -> None:
    s = _settings(MAPPED)
    with pytest.raises(CalibrationError) as info:
        resolve_calibration(s.primary_model(), resolve_limits(s), "estimate", {"gpt-4o": 1.25})
    assert str(info.value) == "token calibration names model 'gpt-4o', but this replay's model is default / gpt-4o-mini"
    plain = _settings({"models": [{"model": "gpt-4o"}]})
    with pytest.raises(CalibrationError, match=r"this replay's model is gpt-4o$"):  # one name when unmapped
        resolve_calibration(plain.primary_model(), resolve_limits(plain), "estimate", {"gpt-4": 2})


@pytest.mark.parametrize("factor", [0, -1.5, float("nan"), float("inf"), True, "2", None])
def test_a_calibration_override_must_be_a_positive_finite_number(factor: object) -> None:
    s = _settings({"models": [{"model": "gpt-4o"}]})
    with pytest.raises(CalibrationError) as info:
        resolve_calibration(s.primary_model(), resolve_limits(s), "estimate", {"gpt-4o": factor})  # type: ignore[dict-item]
    assert str(info.value) == f"token calibration for 'gpt-4o' must be a positive number, got {factor!r}"


def test_a_calibration_override_of_an_integer_factor_is_a_float() -> None:
    s = _settings({"models": [{"model": "gpt-4o"}]})
    factor, _ = resolve_calibration(s.primary_model(), resolve_limits(s), "estimate", {"gpt-4o": 2})
    assert factor == 2.0 and isinstance(factor, float)


@pytest.mark.parametrize(("table", "counter", "expected"), [
    ({"estimate": 1.2, "tiktoken": 0.9}, "estimate", (1.2, "manifest (spec.models[main].token_calibration.estimate)")),
    ({"estimate": 1.2, "tiktoken": 0.9}, "tiktoken", (0.9, "manifest (spec.models[main].token_calibration.tiktoken)")),
    ({"tiktoken": 0.9}, "estimate", (None, None)),  # no factor for this counter
    ({"estimate": 2}, "estimate", (2.0, "manifest (spec.models[main].token_calibration.estimate)")),
])
def test_the_primary_rows_calibration_applies_to_its_counter(table: dict, counter: str,
                                                              expected: tuple[float | None, str | None]) -> None:
    s = _settings({"models": [{"id": "main", "model": "gpt-4o", "token_calibration": table}]})
    assert resolve_calibration(s.primary_model(), resolve_limits(s), counter) == expected


class _Row:
    """A primary row as the engine sees it (``id`` and ``extra``), with values a manifest would refuse."""

    def __init__(self, extra: object, id: str = "r1") -> None:  # noqa: A002
        self.extra, self.id = extra, id


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), True, "1.2", None])
def test_an_unusable_manifest_factor_is_no_calibration(value: object) -> None:
    limits = resolve_limits(_settings({"models": [{"model": "gpt-4o"}]}))
    assert resolve_calibration(_Row({"token_calibration": {"estimate": value}}), limits, "estimate") == (None, None)
    assert resolve_calibration(_Row({"token_calibration": "estimate"}), limits, "estimate") == (None, None)
    assert resolve_calibration(_Row(None), limits, "estimate") == (None, None)
    assert resolve_calibration(None, limits, "estimate") == (None, None)


def test_a_row_without_an_id_is_named_main() -> None:
    limits = resolve_limits(_settings({"models": [{"model": "gpt-4o"}]}))
    row = type("Bare", (), {"extra": {"token_calibration": {"estimate": 1.5}}})()
    assert resolve_calibration(row, limits, "estimate") == (1.5, "manifest (spec.models[main].token_calibration.estimate)")
    assert resolve_calibration(_Row({"token_calibration": {"estimate": 1.5}}), limits, "estimate") == (
        1.5, "manifest (spec.models[r1].token_calibration.estimate)")


def test_a_factor_below_one_is_a_valid_calibration() -> None:
    s = _settings({"models": [{"model": "gpt-4o"}]})
    assert resolve_calibration(s.primary_model(), resolve_limits(s), "estimate", {"gpt-4o": 0.5})[0] == 0.5
    assert resolve_calibration(s.primary_model(), resolve_limits(s), "estimate", {"gpt-4o": 1})[0] == 1.0


def test_a_row_whose_extra_is_not_a_mapping_has_no_calibration() -> None:
    limits = resolve_limits(_settings({"models": [{"model": "gpt-4o"}]}))
    assert resolve_calibration(_Row("token_calibration"), limits, "estimate") == (None, None)
    assert resolve_calibration(_Row(["token_calibration"]), limits, "estimate") == (None, None)


@settings(max_examples=300, deadline=None)
@given(max_tokens=st.integers(1, 2_000_000), fixed=st.integers(0, 300_000),
       margin_ratio=st.sampled_from([0.0, 0.05, 0.1, 0.15, 0.2, 0.33, 0.5]),
       hysteresis=st.sampled_from([0.0, 0.1, 0.15, 0.25, 0.3, 0.7, 1.0]),
       calibration=st.sampled_from([None, 0.8, 1.0, 1.17, 1.3]))
def test_the_budget_by_integer_division_equals_the_exact_fraction_formulas(
        max_tokens: int, fixed: int, margin_ratio: float, hysteresis: float, calibration: float | None) -> None:
    """The per-call budget divides integers instead of building Fractions; the result must be the
    exact rational formulas of docs/design.md §3.2, computed here independently with Fraction."""
    import math
    from fractions import Fraction
    from types import SimpleNamespace

    from inspector.engine.budget import compute_budget

    limits = SimpleNamespace(window=max_tokens, window_source="test", completion=100, completion_source="test")
    trimmer = SimpleNamespace(max_tokens=None, reserve_tokens=None, safety_margin_ratio=margin_ratio)
    b = compute_budget(limits, trimmer, fixed=fixed, tool_tokens=0, summarizing=True,  # type: ignore[arg-type]
                       hysteresis_ratio=hysteresis, calibration=calibration)
    cap = max(1, math.floor(Fraction(max_tokens) / Fraction(str(calibration)))) if calibration else max_tokens
    margin = math.ceil(cap * Fraction(str(margin_ratio)))
    hard = max(1, cap - 100 - margin - fixed)
    r = Fraction(str(hysteresis))
    hint = max(1, math.floor(hard / (1 + r)))
    assert (b.max_tokens, b.margin, b.hard, b.hint) == (cap, margin, hard, hint)
    assert b.ceiling == max(hint, math.floor(hint * (1 + r)))
