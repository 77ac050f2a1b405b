"""Each plugin's parameters come from one params model.

The model (:mod:`inspector.params`) is the only place a parameter's name, type, range, default and
doc are written; the registry, the manifest's checks, the resolved defaults, the constructors, the
presets and the parameter table of docs/guide.md are all read off it. These tests change a model (a subclass
registered as a temporary plugin) and watch every derived place follow, and hold the derived
places against expectations written here (ranges, clamps) rather than against the implementation.
"""

from __future__ import annotations

import inspect
import math
from fractions import Fraction
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, StrictInt

from inspector.compare import PRESETS
from inspector.engine.budget import compute_budget
from inspector.engine.limits import ModelLimits
from inspector.engine.managers.summarising import SummarizingConversation
from inspector.manifest import ManifestError, load_manifest_text, settings_from_dict
from inspector.manifest.settings import TrimmerSettings
from inspector.params import SAFETY_MARGIN_RATIO, PluginParams, SummarizingParams
from inspector.plugins import BUILTIN_SPECS, PluginSpec, builtin_params_table, default_registry, register

ROOT = Path(__file__).resolve().parents[2]
ENGINE_ONLY = {"engine", "models", "cache", "params"}  # constructor arguments the engine passes, never a manifest
# ("params": the validated model that ``from_params`` hands a built-in manager instead of its keywords)
LIMITS = ModelLimits(model="m", effective_model="m", window=100_000, window_source="test", completion=1_000,
                     completion_source="test", input_cost_per_token=None, output_cost_per_token=None,
                     price_source=None)


def validate(text: str) -> tuple[list[Any], list[Any]]:
    try:
        loaded = load_manifest_text(textwrap.dedent(text), file="m.yaml", mode="validate")
    except ManifestError as exc:
        return exc.issues, exc.warnings
    return [], list(loaded.warnings)


# --- a model changed in one place: every derived place follows -----------------------------------

class NarrowParams(SummarizingParams):
    """The summarising model with another default and a narrower range for ``keep_turns``."""

    keep_turns: Annotated[StrictInt, Field(ge=3)] = Field(7, description="at least three turns")


@pytest.fixture
def narrow() -> Iterator[str]:
    name = "narrow-test"
    register(PluginSpec("context_manager", name, "test.cm.narrow",
                        "inspector.engine.managers.summarising:SummarizingConversation",
                        builtin=True, params_model=NarrowParams))
    try:
        yield name
    finally:
        default_registry().unregister("context_manager", name)


def test_changing_a_default_in_the_model_changes_the_resolved_output(narrow: str) -> None:
    shown = settings_from_dict({"spec": {"context_manager": narrow}}).settings.to_dict()
    assert shown["context_manager"]["resolved_params"]["keep_turns"] == 7
    plain = settings_from_dict({"spec": {"context_manager": "summarising"}}).settings.to_dict()
    assert plain["context_manager"]["resolved_params"]["keep_turns"] == 10


def test_changing_a_range_in_the_model_changes_validation(narrow: str) -> None:
    errors, _ = validate(f"""\
        spec:
          context_manager:
            type: {narrow}
            params:
              keep_turns: 2
        """)
    assert [(e.path, e.line) for e in errors] == [("spec.context_manager.params.keep_turns", 5)]
    assert "greater than or equal to 3" in errors[0].message
    assert validate(f"spec:\n  context_manager: {{type: {narrow}, params: {{keep_turns: 3}}}}\n") == ([], [])


def test_an_unknown_param_is_a_located_error_listing_the_models_names(narrow: str) -> None:
    errors, _ = validate(f"""\
        spec:
          context_manager:
            type: {narrow}
            params:
              keep_turn: 4
        """)
    assert [(e.path, e.line) for e in errors] == [("spec.context_manager.params.keep_turn", 5)]
    assert "accepts: hysteresis_ratio, keep_turns, summarizer, summary_threshold" in errors[0].message
    with pytest.raises(ManifestError, match=r"spec\.context_manager\.params\.keep_turn\b"):
        settings_from_dict({"spec": {"context_manager": {"type": narrow, "params": {"keep_turn": 4}}}})


def test_the_registry_accepts_exactly_the_models_names(narrow: str) -> None:
    spec = default_registry().find("context_manager", narrow)
    assert spec is not None and spec.params == ("keep_turns", "summary_threshold", "hysteresis_ratio", "summarizer")


# --- the built-ins: constructors, registry and docs agree with their models ----------------------

@pytest.mark.parametrize("spec", [s for s in BUILTIN_SPECS if s.slot != "summarizer"], ids=lambda s: s.name)
def test_a_constructor_takes_the_models_names_with_the_models_defaults(spec: PluginSpec) -> None:
    model = spec.params_model
    assert model is not None
    signature = inspect.signature(spec.load())
    taken = {n: p.default for n, p in signature.parameters.items() if n not in ENGINE_ONLY}
    assert set(taken) == set(model.names())
    for name, fld in model.model_fields.items():
        if name in model.folds:  # a field with aliases: unset in the signature, its default applied inside
            assert taken[name] is None and getattr(spec.load()(), name) == fld.default, name
        else:
            assert taken[name] == fld.default, name


@pytest.mark.parametrize("spec", BUILTIN_SPECS, ids=lambda s: s.name)
def test_every_builtin_declares_a_model_and_the_registry_reads_it(spec: PluginSpec) -> None:
    assert spec.params_model is not None and issubclass(spec.params_model, PluginParams)
    assert spec.params == spec.params_model.names()


@pytest.mark.parametrize("spec", [s for s in BUILTIN_SPECS if s.slot == "context_manager"], ids=lambda s: s.name)
def test_a_wrong_value_is_refused_in_every_mode_for_a_manager(spec: PluginSpec) -> None:
    """A manager cannot run with a wrong value (``on_invalid = error``), so assemble mode refuses it too."""
    assert spec.params_model is not None and spec.params_model.on_invalid == "error"
    for name in spec.params_model.model_fields:
        with pytest.raises(ManifestError) as info:
            settings_from_dict({"spec": {"context_manager": {"type": spec.name, "params": {name: [1]}}}})
        assert [i.path for i in info.value.issues] == [f"spec.context_manager.params.{name}"]


def test_a_wrong_assembler_value_falls_back_to_the_models_default_in_assemble_mode() -> None:
    loaded = settings_from_dict({"spec": {"assembler": {"params": {"emit_segments": "yes"}}}})
    assert loaded.settings.to_dict()["assembler"]["resolved_params"]["emit_segments"] is True
    assert [w.path for w in loaded.warnings] == ["spec.assembler.params.emit_segments"]


def test_the_presets_write_the_models_defaults() -> None:
    assert PRESETS == {"summarising": {"type": "summarising", "params": {"keep_turns": 10}},
                       "sliding-window": {"type": "sliding-window", "params": {"keep_turns": 10}},
                       "stack": {"type": "stack"},
                       "clear-tool-results": {"type": "clear-tool-results", "params": {"trigger": 100_000, "keep": 3}},
                       "observation-masking": {"type": "observation-masking", "params": {"attention_window": 100}},
                       "auto-compact": {"type": "auto-compact", "params": {"keep_user_tokens": 0}},
                       "condenser": {"type": "condenser", "params": {"max_size": 240, "keep_first": 2}}}


def test_the_guides_parameter_table_is_the_models_table() -> None:
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    assert builtin_params_table() in guide
    for spec in BUILTIN_SPECS:  # and the table covers every parameter of every built-in
        for name in (spec.params_model.model_fields if spec.params_model is not None else ()):
            assert f"| {spec.slot} `{spec.name}` | `{name}` |" in builtin_params_table()


# --- clamps are written once: validation, resolved view, manager and budget agree ---------------

@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-5, max_value=5))
def test_the_hysteresis_clamp_is_the_same_everywhere(ratio: float) -> None:
    expected = min(1.0, max(0.0, ratio))  # docs/design.md §3.5: r in [0, 1]
    shown = settings_from_dict({"spec": {"context_manager": {"type": "summarising",
                                                             "params": {"hysteresis_ratio": ratio}}}})
    assert shown.settings.to_dict()["context_manager"]["resolved_params"]["hysteresis_ratio"] == expected
    assert SummarizingConversation(hysteresis_ratio=ratio).hysteresis_ratio == expected
    budget = compute_budget(LIMITS, TrimmerSettings(), fixed=0, tool_tokens=0, summarizing=True,
                            hysteresis_ratio=ratio)
    clamped = compute_budget(LIMITS, TrimmerSettings(), fixed=0, tool_tokens=0, summarizing=True,
                             hysteresis_ratio=expected)
    assert (budget.hint, budget.ceiling) == (clamped.hint, clamped.ceiling)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-3, max_value=3))
def test_the_safety_margin_clamp_is_the_same_in_the_manifest_and_the_budget(ratio: float) -> None:
    expected = min(0.5, max(0.0, ratio))  # docs/design.md §3.2: margin ratio in [0, 0.5]
    loaded = settings_from_dict({"spec": {"context_manager": {"params": {"trimmer": {"safety_margin_ratio": ratio}}}}})
    assert loaded.settings.trimmer.safety_margin_ratio == expected
    raw = compute_budget(LIMITS, TrimmerSettings(safety_margin_ratio=ratio), fixed=0, tool_tokens=0,
                         summarizing=False)
    assert raw.safety_margin_ratio == expected == SAFETY_MARGIN_RATIO(ratio)
    assert raw.margin == math.ceil(100_000 * Fraction(str(expected)))


@given(st.integers(min_value=-3, max_value=40))
def test_keep_turns_is_checked_by_its_range(keep: int) -> None:
    doc = {"spec": {"context_manager": {"type": "summarising", "params": {"keep_turns": keep}}}}
    if keep >= 1:
        assert settings_from_dict(doc).settings.to_dict()["context_manager"]["resolved_params"]["keep_turns"] == keep
        assert SummarizingConversation(keep_turns=keep).keep_turns == keep
    else:
        with pytest.raises(ManifestError, match=r"spec\.context_manager\.params\.keep_turns"):
            settings_from_dict(doc)
        with pytest.raises(ValueError, match=r"summarising: keep_turns must be an integer >= 1"):
            SummarizingConversation(keep_turns=keep)


@pytest.mark.parametrize(("cm", "keep"), [
    ({"type": "summarising"}, 10),  # not written: the params model's default
    ({"type": "sliding-window", "params": {"window_size": 4}}, 4),  # an alias folded into keep_turns
    ({"type": "sliding-window", "params": {"keep_turns": 3, "max_turns": 7}}, 3),  # keep_turns wins
    ({"type": "stack"}, None),  # no keep_turns at all
])
def test_a_binding_carries_its_validated_params_model(cm: dict[str, Any], keep: int | None) -> None:
    binding = settings_from_dict({"spec": {"context_manager": cm}}).settings.context_manager
    typed = binding.typed_params
    assert isinstance(typed, PluginParams) and getattr(typed, "keep_turns", None) == keep


@pytest.mark.parametrize(("cm", "summarizing", "ratio", "lines"), [
    ({"type": "summarising", "params": {"hysteresis_ratio": 0.25}}, True, 0.25, ["input_budget", "trigger", "ceiling"]),
    ({"type": "summarising"}, True, 0.1, ["input_budget", "trigger", "ceiling"]),  # the params model's default
    ({"type": "sliding-window"}, False, 0.0, ["input_budget"]),  # no summary: no trigger, no ceiling
])
def test_faces_read_the_budget_terms_the_replay_recorded(cm: dict[str, Any], summarizing: bool, ratio: float,
                                                         lines: list[str]) -> None:
    from inspector.replay import replay
    from inspector.report import figures, walkthrough
    from inspector.transcripts import parse_transcript

    doc = {"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "t"}, "spec": {"context_manager": cm}}
    chat = parse_transcript('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]')
    rp = replay(doc, chat, counter="estimate")
    assert (rp.terms.summarizing, rp.terms.hysteresis_ratio) == (summarizing, ratio)
    assert figures._budget_lines(rp) == lines
    assert walkthrough.ratios(rp) == sorted({0.0, 0.1, 0.3, ratio})


# --- settings typed once: the binding's params model goes to the plugin --------------------------

def _settings(cm: dict[str, Any]) -> Any:
    return settings_from_dict({"spec": {"context_manager": cm}}).settings


@pytest.mark.parametrize(("cm", "attr", "expected"), [
    # the aliases are folded by the model (keep_turns > window_size > max_turns), not by the constructor
    ({"type": "sliding-window", "params": {"window_size": 3, "max_turns": 7}}, "keep_turns", 3),
    ({"type": "stack", "params": {"max_messages": 40}}, "max_messages", 40),
    # the hysteresis ratio is clamped into [0, 1] by the model's Clamp
    ({"type": "summarising", "params": {"keep_turns": 2, "hysteresis_ratio": 1.5}}, "hysteresis_ratio", 1.0),
])
def test_a_builtin_manager_is_built_from_its_bindings_params_model_without_a_second_check(
        cm: dict[str, Any], attr: str, expected: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.engine import build_context_manager
    from inspector.engine.tokens import EstimateCounter

    settings = _settings(cm)
    typed = settings.context_manager.typed_params  # validated here, once
    assert typed is not None and getattr(typed, attr) == expected

    def second_check(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the params were validated a second time")

    monkeypatch.setattr(PluginParams, "build", classmethod(second_check))
    manager = build_context_manager(settings, EstimateCounter(), summarizer="drop")
    assert getattr(manager, attr) == expected


def test_a_name_the_builtin_does_not_accept_is_a_type_error_naming_the_field() -> None:
    import dataclasses

    from inspector.engine import build_context_manager
    from inspector.engine.tokens import EstimateCounter
    from inspector.manifest.settings import Binding

    settings = _settings({"type": "stack"})
    # a hand-made binding skips the manifest's checks: the builder still refuses the unknown name
    bad = Binding(type="stack", urn="mas.cm.stack", params={"max_message": 4}, source="test", slot="context_manager")
    with pytest.raises(TypeError, match=r"^spec\.context_manager\.params: StackConversation rejected "
                                        r"\['max_message'\]: unexpected keyword argument\(s\) 'max_message'$"):
        build_context_manager(dataclasses.replace(settings, context_manager=bad), EstimateCounter())


def test_the_llm_summarizer_is_built_from_its_params_model() -> None:
    from inspector.engine import build_summarizer

    settings = settings_from_dict({"spec": {"context_manager": {"type": "summarising", "params": {
        "summarizer": {"type": "llm", "params": {"model": "gpt-4o-mini", "instructions": "Be brief."}}}}}}).settings
    summarizer = build_summarizer(settings)
    assert (summarizer.model, summarizer.instructions) == ("gpt-4o-mini", "Be brief.")


def test_every_count_a_preset_writes_declares_what_it_counts() -> None:
    """A preset's integer dial says what it counts (tokens, events, rows, turns, tool uses) as a
    declared unit, the one place faces read it (the demo's fitting), never its doc's words."""
    from inspector.params import unit_of

    units = {(spec.name, field): unit_of(spec.params_model, field)
             for spec in BUILTIN_SPECS if spec.slot == "context_manager" and spec.params_model
             for field in spec.params_model.preset}
    assert units == {("summarising", "keep_turns"): "turns", ("sliding-window", "keep_turns"): "turns",
                     ("clear-tool-results", "trigger"): "tokens", ("clear-tool-results", "keep"): "tool uses",
                     ("observation-masking", "attention_window"): "events",
                     ("condenser", "max_size"): "events", ("condenser", "keep_first"): "events",
                     ("auto-compact", "keep_user_tokens"): "tokens"}


def test_a_field_with_no_declared_unit_counts_nothing_and_an_unknown_field_too() -> None:
    from inspector.params import AutoCompactParams, unit_of

    assert unit_of(AutoCompactParams, "threshold_ratio") is None  # a fraction, no count
    assert unit_of(AutoCompactParams, "threshold_tokens") == "tokens"
    assert unit_of(AutoCompactParams, "no_such_field") is None
