"""docs/design.md §2.1–§2.6: binding normalisation, aliases, compaction sugar, overlay merge,
lenient (assemble) versus strict (validate) reading of the plugin slots; Q5 form equivalence."""

from __future__ import annotations

import pytest

from inspector.plugins import PluginLookupError
from inspector.manifest import (
    ManifestError,
    UnknownPluginError,
    compaction_to_context_manager,
    load_manifest_text,
    overlay_binding,
    settings_from_dict,
)
from inspector.manifest.settings import resolved_params


def agent(**spec: object) -> dict:
    return {"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "a"}, "spec": dict(spec)}


def cm_of(spec_value: object, mode: str = "assemble"):
    return settings_from_dict(agent(context_manager=spec_value), mode=mode).settings  # type: ignore[arg-type]


# --- the default ---------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["assemble", "validate"])
def test_omitted_context_manager_is_summarising_with_llm(mode: str) -> None:
    s = settings_from_dict(agent(), mode=mode).settings  # type: ignore[arg-type]
    assert (s.context_manager.type, s.context_manager.urn, s.context_manager.source) == (
        "summarising", "mas.cm.summarising", "default")
    assert s.summarizer is not None
    assert (s.summarizer.type, s.summarizer.urn, dict(s.summarizer.params), s.summarizer.source) == (
        "llm", "mas.summarizer.llm", {}, "default")
    assert (s.assembler.type, s.assembler.source) == ("assembler", "default")


@pytest.mark.parametrize("value", [None, "", "   ", {}])
def test_null_empty_and_empty_object_count_as_omitted(value: object) -> None:
    s = cm_of(value, "validate")
    assert (s.context_manager.type, s.context_manager.source) == ("summarising", "default")


# --- forms and aliases -----------------------------------------------------------------

@pytest.mark.parametrize(
    ("written", "canonical", "urn"),
    [
        ("stack", "stack", "mas.cm.stack"),
        ({"type": "stack"}, "stack", "mas.cm.stack"),
        ("summarizing", "summarising", "mas.cm.summarising"),  # alias
        ("sliding_window", "sliding-window", "mas.cm.sliding_window"),  # alias
        ("sliding-window", "sliding-window", "mas.cm.sliding_window"),
        ("full-history", "stack", "mas.cm.stack"),  # alias
        ("full_history", "stack", "mas.cm.stack"),
        ("mas.cm.stack", "stack", "mas.cm.stack"),  # exact URN
        ("STACK", "stack", "mas.cm.stack"),  # case-insensitive
        ({"ref": "mas.cm.sliding_window"}, "sliding-window", "mas.cm.sliding_window"),  # ref locator
        ({"type": "stack", "ref": "mas.cm.summarising"}, "stack", "mas.cm.stack"),  # type wins
    ],
)
def test_context_manager_names_resolve(written: object, canonical: str, urn: str) -> None:
    s = cm_of(written, "validate")
    assert (s.context_manager.type, s.context_manager.urn) == (canonical, urn)
    assert s.context_manager.source == "spec.context_manager"


@pytest.mark.parametrize("written", ["context-assembler", "ctx-assembler", "assembler", {"type": "assembler"},
                                     "mas.ctx.assembler"])
def test_assembler_aliases_resolve(written: object) -> None:
    s = settings_from_dict(agent(assembler=written), mode="validate").settings
    assert (s.assembler.type, s.assembler.urn, s.assembler.source) == ("assembler", "mas.ctx.assembler",
                                                                        "spec.assembler")


def test_stack_string_and_object_forms_are_identical() -> None:
    assert cm_of("stack") == cm_of({"type": "stack"}) == cm_of({"type": "stack", "params": {}})


def test_three_forms_of_the_default_normalise_identically_except_source() -> None:
    omitted, named, full = cm_of(None), cm_of("summarising"), cm_of({"type": "summarising", "params": {}})
    for s in (named, full):
        assert (s.context_manager.type, s.context_manager.urn, dict(s.context_manager.params)) == (
            omitted.context_manager.type, omitted.context_manager.urn, dict(omitted.context_manager.params))
        assert s.summarizer == omitted.summarizer
        assert s.trimmer == omitted.trimmer


# --- a malformed value: strict error, lenient default -------------------------------------

@pytest.mark.parametrize("value", [42, 3.5, True, ["stack"], [], {"type": 7}, {"type": "stack", "params": [1]}])
def test_malformed_context_manager_fails_validate_naming_the_field(value: object) -> None:
    with pytest.raises(ManifestError) as info:
        cm_of(value, "validate")
    assert any(i.path.startswith("spec.context_manager") for i in info.value.issues)
    assert "spec.context_manager" in str(info.value)


@pytest.mark.parametrize("value", [42, 3.5, True, ["stack"], {"type": 7}, {"type": "stack", "params": [1]}])
def test_malformed_context_manager_assembles_with_default_summarising(value: object) -> None:
    loaded = settings_from_dict(agent(context_manager=value), mode="assemble")
    s = loaded.settings
    assert (s.context_manager.type, s.context_manager.source) == (
        "summarising", "default (malformed spec.context_manager ignored)")
    assert s.summarizer is not None and s.summarizer.type == "llm"
    assert any(w.path.startswith("spec.context_manager") for w in loaded.warnings)


def test_same_yaml_validate_fails_assemble_succeeds_with_line() -> None:
    text = "kind: Agent\nspec:\n  context_manager: 42\n"
    with pytest.raises(ManifestError) as info:
        load_manifest_text(text, file="m.yaml", mode="validate")
    (issue,) = info.value.issues
    assert (issue.path, issue.line, issue.file) == ("spec.context_manager", 3, "m.yaml")
    assert str(issue).startswith("m.yaml:3: spec.context_manager: ")
    assert load_manifest_text(text, mode="assemble").settings.context_manager.type == "summarising"


# --- unknown plugin names are never lenient ----------------------------------------------

@pytest.mark.parametrize("mode", ["assemble", "validate"])
@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"assembler": {"type": "does-not-exist"}}, "spec.assembler"),
        ({"assembler": "does-not-exist"}, "spec.assembler"),
        ({"context_manager": "nope"}, "spec.context_manager"),
        ({"context_manager": {"ref": "mas.cm.nope"}}, "spec.context_manager"),
        ({"context_manager": {"type": "summarising", "params": {"summarizer": "gpt"}}},
         "spec.context_manager.params.summarizer"),
    ],
)
def test_unknown_plugin_is_a_lookup_error_naming_the_slot(mode: str, spec: dict, field: str) -> None:
    with pytest.raises(UnknownPluginError) as info:
        settings_from_dict(agent(**spec), mode=mode)  # type: ignore[arg-type]
    assert isinstance(info.value, PluginLookupError) and isinstance(info.value, ManifestError)
    assert field in str(info.value)


def test_assembler_forms_yield_default_assembler_with_params() -> None:
    plain = settings_from_dict(agent(assembler="assembler"), mode="validate").settings.assembler
    full = settings_from_dict(agent(assembler={"type": "assembler", "params": {"emit_segments": False}}),
                              mode="validate").settings.assembler
    assert plain.type == full.type == "assembler"
    assert dict(full.params) == {"emit_segments": False}
    assert resolved_params(full)["emit_segments"] is False
    assert resolved_params(plain)["emit_segments"] is True


def test_ref_import_requires_allow_imports() -> None:
    doc = agent(context_manager={"ref": "my_plugins.cm:Custom", "params": {"anything": 1}})
    with pytest.raises(UnknownPluginError, match="allow_imports"):
        settings_from_dict(doc, mode="validate")
    s = settings_from_dict(doc, mode="validate", allow_imports=["my_plugins"]).settings
    assert (s.context_manager.type, s.context_manager.ref) == ("my_plugins.cm:Custom", "my_plugins.cm:Custom")
    assert dict(s.context_manager.params) == {"anything": 1}  # unknown signature: passed through


# --- compaction sugar ----------------------------------------------------------------------

@pytest.mark.parametrize(
    ("compaction", "expected"),
    [
        ({"strategy": "keep_recent", "max_messages": 50}, {"type": "stack", "params": {"max_messages": 50}}),
        ({}, {"type": "stack", "params": {}}),  # empty block = keep_recent without a cap
        ({"strategy": "sliding_window", "window_size": 20},
         {"type": "sliding_window", "params": {"window_size": 20}}),
        ({"strategy": "summarize", "summary_threshold": 8000, "keep_turns": 6},
         {"type": "summarising", "params": {"summary_threshold": 8000, "keep_turns": 6}}),
        ({"strategy": "summarize", "summary_threshold": 8000, "keep_turns": 6, "model": "gpt-4o-mini"},
         {"type": "summarising", "params": {"summary_threshold": 8000, "keep_turns": 6,
                                            "summarizer": {"type": "llm", "params": {"model": "gpt-4o-mini"}}}}),
        ({"strategy": "keep_recent", "window_size": 5}, {"type": "stack", "params": {}}),  # only its keys
    ],
)
def test_compaction_translation_is_exact(compaction: dict, expected: dict) -> None:
    assert compaction_to_context_manager(compaction) == expected


def test_compaction_applies_when_context_manager_is_absent() -> None:
    wm = {"compaction": {"strategy": "summarize", "keep_turns": 6, "model": "gpt-4o-mini"}}
    s = settings_from_dict(agent(working_memory=wm), mode="validate").settings
    assert (s.context_manager.type, dict(s.context_manager.params), s.context_manager.source) == (
        "summarising", {"keep_turns": 6}, "spec.working_memory.compaction")
    assert s.summarizer is not None
    assert (s.summarizer.type, dict(s.summarizer.params), s.summarizer.source) == (
        "llm", {"model": "gpt-4o-mini"}, "spec.working_memory.compaction")


def test_sliding_window_sugar_keeps_the_alias_as_written() -> None:
    wm = {"compaction": {"strategy": "sliding_window", "window_size": 20}}
    cm = settings_from_dict(agent(working_memory=wm), mode="validate").settings.context_manager
    assert (cm.type, dict(cm.params)) == ("sliding-window", {"window_size": 20})


# --- bogus strategy; context_manager wins ----------------------------------------------------

def test_unknown_strategy_names_it_and_the_allowed_list() -> None:
    with pytest.raises(ManifestError) as info:
        compaction_to_context_manager({"strategy": "bogus"})
    message = str(info.value)
    assert "'bogus'" in message and "keep_recent" in message and "summarize" in message
    assert info.value.issues[0].path == "spec.working_memory.compaction.strategy"


@pytest.mark.parametrize("mode", ["assemble", "validate"])
def test_unknown_strategy_in_a_manifest_is_an_error_with_line(mode: str) -> None:
    text = "spec:\n  working_memory:\n    compaction:\n      strategy: bogus\n"
    with pytest.raises(ManifestError) as info:
        load_manifest_text(text, file="m.yaml", mode=mode)  # type: ignore[arg-type]
    (issue,) = info.value.issues
    assert (issue.path, issue.line) == ("spec.working_memory.compaction.strategy", 4)
    assert "bogus" in issue.message


def test_context_manager_wins_and_is_left_exactly_as_written() -> None:
    written = {"type": "sliding-window", "params": {"window_size": 3}}
    loaded = settings_from_dict(agent(context_manager=written,
                                      working_memory={"compaction": {"strategy": "bogus"}}), mode="validate")
    cm = loaded.settings.context_manager
    assert (cm.type, dict(cm.params), cm.source) == ("sliding-window", {"window_size": 3}, "spec.context_manager")
    assert any(w.path == "spec.working_memory.compaction" and "ignored" in w.message for w in loaded.warnings)
    assert written == {"type": "sliding-window", "params": {"window_size": 3}}  # input untouched


# --- overlay merge ---------------------------------------------------------------------------

BASE = {"type": "summarising", "params": {"keep_turns": 10, "trimmer": {"max_tokens": 12000}}}


@pytest.mark.parametrize(
    ("base", "patch", "expected"),
    [
        # a type change replaces the binding and drops the old params
        (BASE, {"type": "stack"}, {"type": "stack"}),
        # a params-only patch deep-merges
        (BASE, {"params": {"hysteresis_ratio": 0.3}},
         {"type": "summarising", "params": {"keep_turns": 10, "hysteresis_ratio": 0.3,
                                            "trimmer": {"max_tokens": 12000}}}),
        # nested maps keep their siblings
        (BASE, {"params": {"trimmer": {"reserve_tokens": 4000}}},
         {"type": "summarising", "params": {"keep_turns": 10,
                                            "trimmer": {"max_tokens": 12000, "reserve_tokens": 4000}}}),
        # the same plugin under an alias merges too
        (BASE, {"type": "summarizing", "params": {"keep_turns": 3}},
         {"type": "summarizing", "params": {"keep_turns": 3, "trimmer": {"max_tokens": 12000}}}),
        # a string overlay replaces
        (BASE, "stack", "stack"),
        # a string base is promoted before merging
        ("summarising", {"params": {"keep_turns": 2}}, {"type": "summarising", "params": {"keep_turns": 2}}),
        # omitted base
        (None, {"params": {"keep_turns": 2}}, {"params": {"keep_turns": 2}}),
        # null patch keeps the base
        (BASE, None, BASE),
    ],
)
def test_overlay_binding(base: object, patch: object, expected: object) -> None:
    import copy

    before = copy.deepcopy(base)
    assert overlay_binding(base, patch) == expected
    assert base == before  # never mutated
