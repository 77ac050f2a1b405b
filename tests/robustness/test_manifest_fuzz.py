"""Fuzzing the manifest reader: whatever the input (random text, random bytes, YAML-ish token
soup, random YAML structures, agent-shaped documents with random values), the only outcomes are a
LoadedManifest whose to_dict() is strict JSON, or a ManifestError. Guards the bug class "one odd
manifest crashes the CLI/app with a traceback"."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.manifest import (
    LoadedManifest,
    ManifestError,
    load_manifest_text,
    overlay_binding,
    set_dotted,
    settings_from_dict,
)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_outcome(fn: Any, *args: Any, **kwargs: Any) -> None:
    for mode in ("assemble", "validate"):
        try:
            result = fn(*args, mode=mode, **kwargs)
        except ManifestError as exc:
            assert exc.issues, "a ManifestError always carries at least one issue"
            for issue in exc.issues:
                str(issue)
            continue
        assert isinstance(result, LoadedManifest)
        json.dumps(result.settings.to_dict(), allow_nan=False)
        for issue in result.warnings:
            assert issue.severity == "warning"
            str(issue)


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**20, max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
)
yaml_values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.one_of(st.text(max_size=10), st.integers()), children, max_size=4)),
    max_leaves=20,
)

PLUGIN_NAMES = ["summarising", "summarizing", "stack", "sliding-window", "sliding_window", "full-history",
                "assembler", "context-assembler", "llm", "drop", "mas.cm.stack", "nope", "", "mod:Cls"]
PARAM_KEYS = ["keep_turns", "window_size", "max_turns", "max_messages", "hysteresis_ratio", "summary_threshold",
              "summarizer", "trimmer", "working_memory_messages", "max_in_turn_messages", "working_memory_ref",
              "emit_segments", "token_budget", "model", "instructions", "max_tokens", "reserve_tokens",
              "safety_margin_ratio", "type", "ref", "params", "strategy", "persistent", "compaction", "bogus"]
SPEC_KEYS = ["system_prompt", "context", "memory_seeds", "skills", "assembler", "context_manager",
             "working_memory", "models", "tools", "infra", "budget", "description"]

param_values = st.one_of(scalars, st.sampled_from(PLUGIN_NAMES))
param_maps = st.recursive(
    param_values,
    lambda children: st.one_of(st.dictionaries(st.sampled_from(PARAM_KEYS), children, max_size=5),
                               st.lists(children, max_size=3)),
    max_leaves=15,
)
agent_docs = st.fixed_dictionaries(
    {"kind": st.sampled_from(["Agent", "agent", None])},
    optional={
        "apiVersion": st.just("mas/v1"),
        "metadata": st.one_of(st.none(), st.dictionaries(st.just("name"), st.text(max_size=5))),
        "spec": st.dictionaries(st.sampled_from(SPEC_KEYS), param_maps, max_size=6),
    },
)

TOKENS = ["a", "b", "spec", "context_manager", "params", ":", ": ", "- ", "\n", "  ", "    ", "&x ", "*x", "<<: ",
          "!!binary ", "!!str ", "!!python/name:os.system", "{", "}", "[", "]", ",", "'", '"', "#", "---\n", "...",
          "|\n", ">\n", "? ", "%YAML 1.1\n", "\t", "2021-02-30", "0x1F", ".nan", "~", "yes", "\\x00", "é", "\u2028"]


@FUZZ
@given(st.text(max_size=300))
def test_arbitrary_text(text: str) -> None:
    check_outcome(load_manifest_text, text)


@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_bytes(data: bytes) -> None:
    check_outcome(load_manifest_text, data)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map("".join))
def test_yaml_token_soup(text: str) -> None:
    check_outcome(load_manifest_text, text)


@FUZZ
@given(yaml_values)
def test_random_yaml_structures(value: Any) -> None:
    check_outcome(load_manifest_text, yaml.safe_dump(value, allow_unicode=True))


@FUZZ
@given(agent_docs)
def test_agent_shaped_documents_as_yaml(doc: dict) -> None:
    check_outcome(load_manifest_text, yaml.safe_dump(doc, allow_unicode=True))


@FUZZ
@given(agent_docs, st.lists(st.dictionaries(st.sampled_from(["kind", "spec"]), param_maps, max_size=2), max_size=2))
def test_agent_shaped_documents_as_dicts(doc: dict, extra_docs: list) -> None:
    check_outcome(settings_from_dict, doc, infra_documents=extra_docs)


@FUZZ
@given(param_maps, param_maps)
def test_overlay_never_raises(base: Any, patch: Any) -> None:
    overlay_binding(base, patch)


@FUZZ
@given(agent_docs, st.text(max_size=30), st.text(max_size=20))
def test_set_dotted_raises_only_manifest_errors(doc: dict, path: str, value: str) -> None:
    try:
        set_dotted(doc, path, value)
    except ManifestError:
        pass
