"""Normalised settings: system band (system_prompt, §2.7 context chunks incl. file confinement,
memory seeds), skills as pinned parts (Q7), models and the primary row (§2.2), tools, to_dict, and
set_dotted overrides."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from inspector.manifest import (
    ManifestError,
    load_manifest,
    load_manifest_text,
    set_dotted,
    settings_from_dict,
)


def spec_settings(mode: str = "assemble", base_dir: Path | None = None, **spec: object):
    return settings_from_dict({"kind": "Agent", "spec": spec}, mode=mode, base_dir=base_dir)  # type: ignore[arg-type]


# --- system band ------------------------------------------------------------------------------------

def test_injected_context_is_system_prompt_then_context_lines_in_order() -> None:
    s = spec_settings(system_prompt="  You help.  ", context={"tone": "Be kind.", "b": "  Second.\n",
                                                             "blank": "  ", "none": None}).settings
    assert s.injected_context == ("You help.", "[tone] Be kind.", "[b] Second.")


def test_context_chunk_files_are_read_relative_to_the_manifest_directory(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "policy.md").write_text("Refunds within 30 days.\n")
    (tmp_path / "faq.txt").write_text("Q: hours? A: 8-18.")
    manifest = tmp_path / "agent.yaml"
    manifest.write_text("kind: Agent\nspec:\n  context:\n    policy: ./docs/policy.md\n"
                        "    faq: faq.txt\n    ref: {ref: docs/policy.md}\n")
    s = load_manifest(manifest, mode="validate").settings
    assert s.injected_context == ("[policy] Refunds within 30 days.", "[faq] Q: hours? A: 8-18.",
                                  "[ref] Refunds within 30 days.")


@pytest.mark.parametrize(
    ("chunk", "outcome"),
    [
        ("./missing.md", "error"),  # ./ must exist
        ({"ref": "missing.md"}, "error"),  # {ref} must exist
        ("../secret.txt", "error"),  # outside the manifest directory: never read
        ("notes/missing.md", "inline+warning"),  # looks like a path, no such file: inline text
        ("Escalate billing/refund issues to a human.", "inline"),  # a sentence with a slash
        (42, "skipped+warning"),
        (["a"], "skipped+warning"),
    ],
)
def test_context_chunk_rules(tmp_path: Path, chunk: object, outcome: str) -> None:
    (tmp_path.parent / "secret.txt").write_text("do not read")
    base = tmp_path
    if outcome == "error":
        with pytest.raises(ManifestError) as info:
            spec_settings("validate", base, context={"k": chunk})
        assert info.value.issues[0].path.startswith("spec.context.k")
        return
    loaded = spec_settings("validate", base, context={"k": chunk})
    lines, warned = loaded.settings.injected_context, [w.path for w in loaded.warnings]
    if outcome.startswith("inline"):
        assert lines == (f"[k] {chunk}",)
    else:
        assert lines == ()
    assert ("spec.context.k" in warned) == outcome.endswith("warning")


def test_no_file_is_read_without_a_manifest_directory() -> None:
    loaded = spec_settings("validate", None, context={"k": "./policy.md"})
    assert loaded.settings.injected_context == ()
    assert [w.path for w in loaded.warnings] == ["spec.context.k"]


def test_memory_seeds_keep_order_and_drop_blanks() -> None:
    s = spec_settings(memory_seeds={"customer": "Jane, gold tier", "empty": "", "plan": "Pro "}).settings
    assert s.memory_seeds == (("customer", "Jane, gold tier"), ("plan", "Pro"))


# --- skills (Q7) --------------------------------------------------------------------------------------

def test_skills_become_pinned_system_skills_parts() -> None:
    s = spec_settings(skills=[
        {"name": "refunds", "description": "Issue refunds", "body": "Step 1...", "activated": True},
        {"name": "shipping", "description": "Track parcels"},
        {"name": "returns", "body": "Return steps", "activated": True},
    ]).settings
    assert [(p.section_id, p.placement, p.priority, p.pinned) for p in s.parts] == [
        ("skills/catalog", "system_skills", 40, True),
        ("skills/activated/refunds", "system_skills", 41, True),
        ("skills/activated/returns", "system_skills", 42, True),
    ]
    assert "refunds: Issue refunds" in s.parts[0].content and "shipping" in s.parts[0].content
    assert s.parts[1].content == '<activated_skill name="refunds">\nStep 1...\n</activated_skill>'


# --- models ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("rows", "primary"),
    [
        ([], None),
        ([{"model": "gpt-4o"}], "main"),  # no id counts as main
        ([{"id": "summarizer", "model": "mini"}, {"id": "main", "model": "gpt-4o"}], "main"),
        ([{"id": "summarizer", "model": "mini"}, {"id": "other", "model": "x"}], "summarizer"),  # first row
    ],
)
def test_primary_model(rows: list, primary: str | None) -> None:
    row = spec_settings(models=rows).settings.primary_model()
    assert (row.id if row else None) == primary


def test_model_row_keeps_extra_fields() -> None:
    (row,) = spec_settings("validate", models=[{"id": "main", "model": "gpt-4o", "max_tokens": 4096,
                                                "context_window": 200000, "temperature": 0.2,
                                                "on_truncation": "error"}]).settings.models
    assert (row.id, row.model, row.max_tokens, row.context_window) == ("main", "gpt-4o", 4096, 200000)
    assert dict(row.extra) == {"temperature": 0.2, "on_truncation": "error"}


# --- tools ---------------------------------------------------------------------------------------------

def test_tools_are_none_when_omitted_and_kept_as_written() -> None:
    assert spec_settings().settings.tools is None
    assert spec_settings(tools=[]).settings.tools == ()
    tool = {"type": "function", "function": {"name": "f", "description": "d",
                                             "parameters": {"type": "object", "properties": {}}}}
    assert spec_settings("validate", tools=[tool]).settings.tools == (tool,)


def test_flat_tool_schema_is_normalised() -> None:
    s = spec_settings("validate", tools=[{"name": "f", "parameters": {"type": "object"}}]).settings
    assert s.tools == ({"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},)


def test_invalid_tool_is_skipped_in_assemble_mode() -> None:
    loaded = spec_settings(tools=[{"type": "function", "function": {"description": "no name"}}, "oops"])
    assert loaded.settings.tools == ()
    assert [w.path for w in loaded.warnings] == ["spec.tools[0].function.name", "spec.tools[1]"]


def test_a_tool_schema_value_json_cannot_write_is_refused_naming_its_field(tmp_path: Path) -> None:
    """An unquoted YAML date in a schema's default is a ``datetime.date``, which a payload (JSON) cannot
    carry: validation names the field and the line, rather than the replay failing later."""
    import datetime

    from inspector.manifest import load_manifest

    p = tmp_path / "agent.yaml"
    p.write_text("kind: Agent\nspec:\n  models: [{model: gpt-4o}]\n  tools:\n    - type: function\n"
                 "      function:\n        name: book\n        parameters:\n          type: object\n"
                 "          properties: {day: {type: string, default: 2026-12-05}}\n", encoding="utf-8")
    with pytest.raises(ManifestError) as err:
        load_manifest(p, mode="validate")
    text = str(err.value)
    assert "agent.yaml:10:" in text  # the line of `properties: {day: ...}`
    assert "spec.tools[0].function.parameters.properties.day.default" in text and "must be a JSON value" in text
    loaded = spec_settings(tools=[{"type": "function", "function": {"name": "book", "parameters": {
        "type": "object", "properties": {"day": {"type": "string", "default": datetime.date(2026, 12, 5)}}}}}])
    assert loaded.settings.tools == ()  # assemble mode skips the schema with a warning naming the field
    assert [w.path for w in loaded.warnings] == ["spec.tools[0].function.parameters.properties.day.default"]


# --- to_dict --------------------------------------------------------------------------------------------

def test_to_dict_is_json_deterministic_and_resolves_defaults() -> None:
    s = spec_settings(context_manager="sliding-window", models=[{"model": "gpt-4o"}]).settings
    d = s.to_dict()
    assert json.dumps(d, allow_nan=False) == json.dumps(spec_settings(
        context_manager="sliding-window", models=[{"model": "gpt-4o"}]).settings.to_dict(), allow_nan=False)
    assert list(d) == ["assembler", "context_manager", "summarizer", "trimmer", "models", "primary_model", "infra",
                       "injected_context", "memory_seeds", "parts", "tools", "persistent", "deprecated", "warnings"]
    assert d["context_manager"]["resolved_params"] == {"keep_turns": 10}
    assert d["assembler"]["resolved_params"] == {"emit_segments": True, "always_reassemble": False,
                                                 "token_budget": None}
    assert d["trimmer"] == {"max_tokens": None, "reserve_tokens": None, "safety_margin_ratio": 0.1}
    assert d["summarizer"] is None and d["primary_model"] == "main"


@pytest.mark.parametrize(
    ("params", "resolved"),
    [
        ({}, {"keep_turns": 10, "summary_threshold": 0, "hysteresis_ratio": 0.1}),
        ({"keep_turns": 3, "hysteresis_ratio": 0.2}, {"keep_turns": 3, "summary_threshold": 0,
                                                      "hysteresis_ratio": 0.2}),
    ],
)
def test_to_dict_summarising_defaults(params: dict, resolved: dict) -> None:
    d = spec_settings(context_manager={"type": "summarising", "params": params}).settings.to_dict()
    assert d["context_manager"]["resolved_params"] == resolved
    assert d["summarizer"]["type"] == "llm"


@pytest.mark.parametrize(
    ("params", "keep"),
    [({"window_size": 4}, 4), ({"max_turns": 2, "window_size": 5}, 5), ({"keep_turns": 1, "window_size": 5}, 1)],
)
def test_to_dict_sliding_window_alias_precedence(params: dict, keep: int) -> None:
    d = spec_settings(context_manager={"type": "sliding-window", "params": params}).settings.to_dict()
    assert d["context_manager"]["resolved_params"] == {"keep_turns": keep}
    assert d["context_manager"]["params"] == params  # as written


def test_to_dict_converts_yaml_only_values_to_json() -> None:
    loaded = load_manifest_text("spec:\n  models:\n    - model: m\n      released: 2024-05-13\n"
                                "      score: .inf\n      blob: !!binary aGk=\n")
    json.dumps(loaded.settings.to_dict(), allow_nan=False)


def test_settings_pickle_and_compare_equal() -> None:
    s = spec_settings(context_manager="stack", tools=[{"type": "function", "function": {"name": "f"}}]).settings
    assert pickle.loads(pickle.dumps(s)) == s


# --- set_dotted ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("doc", "path", "value", "expected"),
    [
        ({"spec": {"context_manager": "summarising"}}, "spec.context_manager.params.keep_turns", "3",
         {"spec": {"context_manager": {"type": "summarising", "params": {"keep_turns": 3}}}}),  # promoted
        ({}, "spec.context_manager.params.trimmer.max_tokens", "8000",
         {"spec": {"context_manager": {"params": {"trimmer": {"max_tokens": 8000}}}}}),  # created
        ({"spec": {"models": [{"model": "a"}]}}, "spec.models[0].context_window", "6000",
         {"spec": {"models": [{"model": "a", "context_window": 6000}]}}),
        ({"spec": {}}, "spec.context_manager", "stack", {"spec": {"context_manager": "stack"}}),
        ({"spec": {}}, "spec.tools", "[]", {"spec": {"tools": []}}),
        ({"spec": {"x": 1}}, "spec.x", "", {"spec": {"x": None}}),
    ],
)
def test_set_dotted(doc: dict, path: str, value: str, expected: dict) -> None:
    before = json.dumps(doc)
    assert set_dotted(doc, path, value) == expected
    assert json.dumps(doc) == before  # deep copy: input untouched


@pytest.mark.parametrize(
    ("doc", "path", "value"),
    [
        ({"spec": {"system_prompt": "hi"}}, "spec.system_prompt.x", "1"),  # through a plain string
        ({"spec": {}}, "spec..x", "1"),
        ({"spec": {}}, "", "1"),
        ({"spec": {}}, "spec.x", "[unclosed"),
        ({"spec": {"models": []}}, "spec.models[3].id", "a"),
    ],
)
def test_set_dotted_errors_are_manifest_errors(doc: dict, path: str, value: str) -> None:
    with pytest.raises(ManifestError):
        set_dotted(doc, path, value)


def test_overrides_are_validated_like_the_file() -> None:
    text = "kind: Agent\nspec:\n  context_manager: stack\n"
    loaded = load_manifest_text(text, overrides=["spec.context_manager.params.max_messages=5"], mode="validate")
    assert dict(loaded.settings.context_manager.params) == {"max_messages": 5}
    with pytest.raises(ManifestError, match="keep_turns"):
        load_manifest_text(text, overrides=["spec.context_manager.params.keep_turns=5"], mode="validate")
