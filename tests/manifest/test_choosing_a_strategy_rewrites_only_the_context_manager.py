"""Choosing a context strategy in a manifest's text (inspector.manifest.strategy, what the app's
Manifest view calls): every registered strategy is offered; choosing one rewrites
``spec.context_manager`` to it at its params model's defaults, keeps the budget (``trimmer``) and
a summarizer the new strategy takes, replaces a ``working_memory.compaction`` shorthand, and leaves
every other line of the manifest as written (comments included); an unknown type is refused."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import PositiveInt

from inspector.manifest import ManifestReadError, UnknownPluginError, load_manifest_text
from inspector.manifest.strategy import parameter_rows, strategy_binding, strategy_choices, with_strategy
from inspector.params import Doc, PluginParams
from inspector.plugins import PluginSpec, default_registry, register

MANIFESTS = Path(__file__).resolve().parents[2] / "inspector" / "samples" / "manifests"
DEMO = (MANIFESTS / "support-demo.yaml").read_text(encoding="utf-8")
REGISTERED = [spec.name for spec in default_registry().specs("context_manager")]

# clear-tool-results' defaults as issue 30 states them (Anthropic's clear_tool_uses_20250919)
CLEAR_TOOL_RESULTS = {"type": "clear-tool-results",
                      "params": {"trigger": 100_000, "keep": 3, "clear_at_least": 0, "exclude_tools": None,
                                 "clear_tool_inputs": False, "placeholder": None}}


def without_cm(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["spec"].pop("context_manager", None)
    return out


def lines_outside(text: str, start: str) -> list[str]:
    """The lines of ``text`` with the ``context_manager:`` block (from its key to the next line at
    the key's indentation or less) left out."""
    out, inside, indent = [], False, 0
    for line in text.splitlines():
        if line.strip() == start:
            inside, indent = True, len(line) - len(line.lstrip())
            continue
        if inside and line.strip() and len(line) - len(line.lstrip()) <= indent:
            inside = False
        if not inside:
            out.append(line)
    return out


def test_clear_tool_results_replaces_the_block_with_its_defaults_and_keeps_every_other_line() -> None:
    new = with_strategy(DEMO, "clear-tool-results")
    doc, old = yaml.safe_load(new), yaml.safe_load(DEMO)
    assert doc["spec"]["context_manager"] == CLEAR_TOOL_RESULTS  # summarizer: llm is not a parameter of it
    assert without_cm(doc) == without_cm(old)  # models (window 7200), tools, context: as they were
    assert lines_outside(new, "context_manager:") == lines_outside(DEMO, "context_manager:")  # comments too
    assert "# support-demo.yaml — made for the bundled demo" in new
    loaded = load_manifest_text(new, mode="validate")
    assert loaded.settings.context_manager.type == "clear-tool-results" and not loaded.warnings


def test_the_budget_and_a_summarizer_the_new_strategy_takes_are_kept() -> None:
    text = (MANIFESTS / "summarising-drop.yaml").read_text(encoding="utf-8")
    trimmer = {"reserve_tokens": 2000, "safety_margin_ratio": 0.1}
    condenser = yaml.safe_load(with_strategy(text, "condenser"))["spec"]["context_manager"]
    assert condenser == {"type": "condenser", "params": {"max_size": 240, "keep_first": 2, "summarizer": "drop",
                                                         "trimmer": trimmer}}
    window = yaml.safe_load(with_strategy(text, "sliding-window"))["spec"]["context_manager"]
    assert window == {"type": "sliding-window", "params": {"keep_turns": 10, "trimmer": trimmer}}  # no aliases


def test_a_compaction_shorthand_is_replaced_and_its_summary_model_carried() -> None:
    text = (MANIFESTS / "compaction-sugar.yaml").read_text(encoding="utf-8")
    new = with_strategy(text, "auto-compact")
    doc = yaml.safe_load(new)
    assert doc["spec"]["working_memory"] == {"persistent": True}
    assert doc["spec"]["context_manager"] == {
        "type": "auto-compact", "params": {"threshold_ratio": None, "threshold_tokens": None, "keep_user_tokens": 0,
                                           "summarizer": {"type": "llm", "params": {"model": "gpt-4o-mini"}}}}
    loaded = load_manifest_text(new, mode="validate")
    assert not loaded.warnings and loaded.settings.context_manager.source == "spec.context_manager"


def test_a_manifest_without_a_context_manager_gets_one_and_loses_no_line() -> None:
    text = (MANIFESTS / "default.yaml").read_text(encoding="utf-8")
    new = with_strategy(text, "stack")
    assert yaml.safe_load(new)["spec"]["context_manager"] == {"type": "stack", "params": {"max_messages": None}}
    assert lines_outside(new, "context_manager:") == text.splitlines()


def test_an_unknown_type_is_refused_naming_the_field_and_the_known_types() -> None:
    for bad in ("no-such-strategy", ""):
        with pytest.raises(UnknownPluginError) as err:
            with_strategy(DEMO, bad)
        message = str(err.value)
        assert message.startswith("spec.context_manager.type: unknown context_manager type")
        assert all(name in message for name in REGISTERED)


def test_text_that_is_not_yaml_is_refused_as_such() -> None:
    with pytest.raises(ManifestReadError, match="invalid YAML"):
        with_strategy("apiVersion: mas/v1\nkind: Agent\nspec: [unclosed\n", "stack")


def test_an_alias_is_written_as_the_canonical_type() -> None:
    assert strategy_binding("full-history") == {"type": "stack", "params": {"max_messages": None}}


@pytest.mark.parametrize("name", sorted(p.name for p in MANIFESTS.glob("*.yaml")))
def test_every_sample_under_every_registered_strategy_validates_and_rewriting_again_changes_nothing(name: str) -> None:
    text = (MANIFESTS / name).read_text(encoding="utf-8")
    for strategy in REGISTERED:
        new = with_strategy(text, strategy)
        loaded = load_manifest_text(new, mode="validate")
        assert loaded.settings.context_manager.type == strategy and not loaded.warnings, (name, strategy)
        assert with_strategy(new, strategy) == new
        doc, old = yaml.safe_load(new), yaml.safe_load(text)
        old["spec"].get("working_memory", {}).pop("compaction", None)
        if old["spec"].get("working_memory") == {}:
            del old["spec"]["working_memory"]
        assert without_cm(doc) == without_cm(old), (name, strategy)


def test_the_parameters_in_force_are_the_written_values_over_the_defaults() -> None:
    rows = {r["parameter"]: r for r in parameter_rows("sliding-window", {"window_size": 5})}
    assert rows["keep_turns"] == {"parameter": "keep_turns", "value": "5", "default": "10",
                                  "meaning": "last N user turns kept verbatim"}  # the alias folded in
    rows = {r["parameter"]: r for r in parameter_rows("clear-tool-results", {})}
    assert [(r["value"], r["default"]) for r in rows.values()] == [
        ("100000", "100000"), ("3", "3"), ("0", "0"), ("null", "null"), ("false", "false"), ("null", "null")]


class ThrowAwayParams(PluginParams):
    """``throw-away``: keeps everything (a test's strategy)."""

    depth: Annotated[PositiveInt, Doc("a number it never reads")] = 7


@pytest.fixture
def throw_away() -> Iterator[str]:
    register(PluginSpec("context_manager", "throw-away", "test.cm.throw_away", lambda **_: None,
                        params_model=ThrowAwayParams))
    yield "throw-away"
    default_registry().unregister("context_manager", "throw-away")


def test_the_choices_are_the_registry_s_with_a_strategy_registered_since(throw_away: str) -> None:
    choices = strategy_choices()
    assert list(choices) == [spec.name for spec in default_registry().specs("context_manager")]
    assert list(choices)[:len(REGISTERED)] == REGISTERED and list(choices)[-1] == throw_away
    assert choices[throw_away] == "keeps everything (a test's strategy)."
    assert choices["summarising"] == "the default manager: fold older turns into one summary block."
    assert yaml.safe_load(with_strategy(DEMO, throw_away))["spec"]["context_manager"] == {
        "type": throw_away, "params": {"depth": 7}}


@settings(max_examples=60, deadline=None)
@given(start=st.sampled_from(REGISTERED), target=st.sampled_from(REGISTERED),
       reserve=st.integers(0, 10_000), ratio=st.sampled_from([0.0, 0.05, 0.1, 0.5]),
       note=st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), max_size=30))
def test_any_chain_of_choices_keeps_the_budget_and_every_other_line(start: str, target: str, reserve: int,
                                                                   ratio: float, note: str) -> None:
    """Whatever strategy is chosen after whatever was written: the trimmer written under the old
    one is the new one's, the file's other lines (a comment of any text among them) are unchanged,
    and the result validates with the chosen type."""
    text = DEMO.replace("  tools:\n", f"  # {note}\n  tools:\n", 1)
    text = text.replace("      summarizer: llm", f"      summarizer: llm\n      trimmer: {{reserve_tokens: {reserve}, "
                                                 f"safety_margin_ratio: {ratio}}}", 1)
    first = with_strategy(text, start)
    new = with_strategy(first, target)
    doc = yaml.safe_load(new)
    assert doc["spec"]["context_manager"]["params"]["trimmer"] == {"reserve_tokens": reserve,
                                                                   "safety_margin_ratio": ratio}
    assert lines_outside(new, "context_manager:") == lines_outside(text, "context_manager:")
    assert load_manifest_text(new, mode="validate").settings.context_manager.type == target
