"""Manifests at the edges: every wrong type at every field, negative and huge numbers at every
numeric field, bad YAML aliases and misspelt plugin aliases, conflicting ``context_manager`` and
``working_memory.compaction``, unknown keys in every closed block, odd encodings, a 50 MB file.

manifest/test_validate_mode.py pins one message per rule and test_manifest_fuzz.py the error contract;
this module sweeps *every field* and then keeps going: whatever loads in assemble mode must also
replay, because "validates" is worthless if the engine then crashes on the same value.

Contract checked for each case: ``validate`` either accepts the value or fails with errors that
all name the field (path and YAML line); ``assemble`` either fails the same way or loads settings
that replay a small transcript with every provider check ok. Nothing else may happen.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from inspector.manifest import ManifestError, ManifestReadError, load_manifest, load_manifest_text
from inspector.manifest._yaml import MAX_BYTES
from inspector.replay import replay
from inspector.transcripts import parse_transcript

EXE = Path(sys.executable).with_name("context-inspector")

ROWS = [{"role": "user", "content": "hi " * 50}, {"role": "assistant", "content": "yo " * 50}] * 4 + \
       [{"role": "user", "content": "end"}]
TRANSCRIPT = parse_transcript(json.dumps(ROWS), name="t.json")


def _parts(path: str) -> list[str | int]:
    out: list[str | int] = []
    for p in path.split("."):
        m = re.fullmatch(r"(\w+)\[(\d+)\]", p)
        out += [m.group(1), int(m.group(2))] if m else [p]
    return out


def put(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``doc`` with ``value`` at the dotted ``path`` (``spec.models[0].max_tokens``)."""
    doc = copy.deepcopy(doc)
    parts = _parts(path)
    cur: Any = doc
    for p, nxt in zip(parts, parts[1:]):
        if isinstance(p, int):
            while len(cur) <= p:
                cur.append({})
            cur = cur[p]
        else:
            if not isinstance(cur.get(p), (dict, list)):
                cur[p] = [] if isinstance(nxt, int) else {}
            cur = cur[p]
    last = parts[-1]
    if isinstance(last, int):
        while len(cur) <= last:
            cur.append(None)
    cur[last] = value
    return doc


def located(issues: list[Any], path: str) -> bool:
    """Every issue names the field (or a part of it) and its YAML line."""
    prefix = path.split("[")[0] if path.endswith("]") else path
    return bool(issues) and all(i.path.startswith(prefix) and i.line is not None for i in issues)


def check_contract(doc: dict[str, Any], path: str) -> str:
    """Apply the module contract to one manifest; returns a short outcome for the failure message."""
    text = yaml.safe_dump(doc, sort_keys=False)
    try:
        load_manifest_text(text, file="m.yaml", mode="validate")
        outcome = "valid"
    except ManifestError as exc:
        assert located(exc.issues, path), [str(i) for i in exc.issues]
        outcome = "invalid"
    try:
        loaded = load_manifest_text(text, file="m.yaml", mode="assemble")
    except ManifestError as exc:
        assert outcome == "invalid", "assemble mode is never stricter than validate"
        assert located(exc.issues, path), [str(i) for i in exc.issues]
        return outcome + "+refused"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rp = replay(loaded, TRANSCRIPT, counter="estimate", summarizer="stand-in")
    assert rp.frames and all(f.check == "ok" for f in rp.frames)
    json.loads(rp.dumps(payloads=True))
    return outcome + "+replayed"


# --- negative and huge numbers at every numeric field ---------------------------------------------

ROW = {"spec": {"models": [{"id": "main"}]}}
NUMERIC_FIELDS = {
    "spec.context_manager.params.keep_turns": {"spec": {"context_manager": {"type": "summarising"}}},
    "spec.context_manager.params.summary_threshold": {"spec": {"context_manager": {"type": "summarising"}}},
    "spec.context_manager.params.hysteresis_ratio": {"spec": {"context_manager": {"type": "summarising"}}},
    "spec.context_manager.params.window_size": {"spec": {"context_manager": {"type": "sliding-window"}}},
    "spec.context_manager.params.max_turns": {"spec": {"context_manager": {"type": "sliding-window"}}},
    "spec.context_manager.params.max_messages": {"spec": {"context_manager": {"type": "stack"}}},
    "spec.context_manager.params.trimmer.max_tokens": {},
    "spec.context_manager.params.trimmer.token_budget": {},
    "spec.context_manager.params.trimmer.reserve_tokens": {},
    "spec.context_manager.params.trimmer.safety_margin_ratio": {},
    "spec.assembler.params.token_budget": {},
    "spec.working_memory.compaction.max_messages": {"spec": {"working_memory": {"compaction": {"strategy": "keep_recent"}}}},
    "spec.working_memory.compaction.window_size": {"spec": {"working_memory": {"compaction": {"strategy": "sliding_window"}}}},
    "spec.working_memory.compaction.summary_threshold": {"spec": {"working_memory": {"compaction": {"strategy": "summarize"}}}},
    "spec.working_memory.compaction.keep_turns": {"spec": {"working_memory": {"compaction": {"strategy": "summarize"}}}},
    "spec.models[0].max_tokens": ROW,
    "spec.models[0].context_window": ROW,
    "spec.models[0].max_completion_tokens": ROW,
    "spec.models[0].temperature": ROW,
    "spec.models[0].top_p": ROW,
    "spec.models[0].presence_penalty": ROW,
    "spec.models[0].frequency_penalty": ROW,
    "spec.models[0].seed": ROW,
    "spec.infra.models.generation.context_window": {},
    "spec.infra.models.generation.max_tokens": {},
    "spec.infra.models.generation.max_completion_tokens": {},
    "spec.infra.models.generation.max_output_tokens": {},
    "spec.infra.models.generation.pricing.input_per_million_tokens": {},
    "spec.infra.models.generation.pricing.cached_input_per_million_tokens": {},
    "spec.infra.models.generation.pricing.output_per_million_tokens": {},
}
NUMBERS = [-1, 0, -10**12, 10**30, 2**63, 1e308, float("inf"), float("-inf"), float("nan"), -0.5, 1.5]


# Which numbers each field accepts in validate mode, by the field's kind (the rule, not observed output):
ANY_FINITE = {"hysteresis_ratio", "safety_margin_ratio",  # clamped into range (Q1)
              "temperature", "top_p", "presence_penalty", "frequency_penalty"}  # sampling: the provider's business
ANY_INTEGER = {"seed"}
NON_NEGATIVE_REAL = {"input_per_million_tokens", "cached_input_per_million_tokens", "output_per_million_tokens"}
ZERO_ALLOWED = {  # non-negative integers where 0 means "auto" / "none"
    "spec.context_manager.params.summary_threshold", "spec.working_memory.compaction.summary_threshold",
    "spec.context_manager.params.trimmer.reserve_tokens", "spec.assembler.params.token_budget",
}


def expected_outcome(path: str, value: Any) -> str:
    """``valid`` or ``invalid`` in validate mode; every other numeric field is a positive integer."""
    field = path.rsplit(".", 1)[-1]
    finite = isinstance(value, int) or value == value and abs(value) != float("inf")
    if not finite:
        return "invalid"  # no field takes NaN or an infinity
    if field in ANY_FINITE:
        return "valid"
    if field in NON_NEGATIVE_REAL:
        return "valid" if value >= 0 else "invalid"
    if not isinstance(value, int):
        return "invalid"  # 1.5, -0.5, 1e308 in an integer field
    if field in ANY_INTEGER:
        return "valid"
    return "valid" if value >= 1 or (value == 0 and path in ZERO_ALLOWED) else "invalid"


@pytest.mark.parametrize("value", NUMBERS, ids=repr)
@pytest.mark.parametrize("path", list(NUMERIC_FIELDS))
def test_every_numeric_field_takes_any_number_without_breaking(path: str, value: Any) -> None:
    outcome = check_contract(put({"kind": "Agent", **NUMERIC_FIELDS[path]}, path, value), path)
    # which of the two accepted outcomes this case must give: accepted (and replayed) or a located error
    assert outcome.split("+")[0] == expected_outcome(path, value), outcome


@pytest.mark.parametrize(("path", "value"), [
    ("spec.context_manager.params.keep_turns", 0),
    ("spec.context_manager.params.keep_turns", float("inf")),
    ("spec.context_manager.params.summary_threshold", -1),
    ("spec.context_manager.params.max_messages", -1),
    ("spec.context_manager.params.window_size", float("inf")),
])
def test_values_the_engine_would_reject_are_errors_in_assemble_mode_too(path: str, value: Any) -> None:
    """These used to load in assemble mode and then crash the engine's constructor (a ValueError or
    OverflowError out of replay, "internal error" from the CLI)."""
    doc = put({"kind": "Agent", **NUMERIC_FIELDS[path]}, path, value)
    with pytest.raises(ManifestError) as info:
        load_manifest_text(yaml.safe_dump(doc), file="m.yaml", mode="assemble")
    assert [i.path for i in info.value.issues] == [path]


# --- every wrong type at every field ------------------------------------------------------------

SKILL = {"spec": {"skills": [{"name": "refunds"}]}}
TOOL = {"spec": {"tools": [{"type": "function", "function": {"name": "lookup"}}]}}
LLM = {"spec": {"context_manager": {"params": {"summarizer": {"type": "llm"}}}}}
TYPED_FIELDS: dict[str, tuple[str, dict[str, Any]]] = {
    "spec.system_prompt": ("str", {}),
    "spec.models[0].id": ("str", ROW),
    "spec.models[0].model": ("str", ROW),
    "spec.models[0].on_truncation": ("str", ROW),
    "spec.models[0].kind": ("str", ROW),
    "spec.skills[0].name": ("str", SKILL),
    "spec.skills[0].description": ("str", SKILL),
    "spec.skills[0].body": ("str", SKILL),
    "spec.working_memory.compaction.strategy": ("str", {}),
    "spec.working_memory.compaction.model": ("str", {"spec": {"working_memory": {"compaction": {"strategy": "summarize"}}}}),
    "spec.context_manager.type": ("str", {}),
    "spec.assembler.type": ("str", {}),
    "spec.context_manager.params.summarizer.type": ("str", {}),
    "spec.context_manager.params.summarizer.params.model": ("str", LLM),
    "spec.context_manager.params.summarizer.params.instructions": ("str", LLM),
    "spec.infra.models.mappings.default": ("str", {}),
    "spec.tools[0].type": ("str", TOOL),
    "spec.tools[0].function.name": ("str", TOOL),
    "spec.tools[0].function.description": ("str", TOOL),
    "spec.working_memory.persistent": ("bool", {}),
    "spec.skills[0].activated": ("bool", SKILL),
    "spec.assembler.params.emit_segments": ("bool", {}),
    "spec.assembler.params.always_reassemble": ("bool", {}),
    "spec.tools[0].function.strict": ("bool", TOOL),
    "spec": ("map", {}),
    "spec.context_manager.params": ("map", {"spec": {"context_manager": {"type": "stack"}}}),
    "spec.context_manager.params.trimmer": ("map", {}),
    "spec.working_memory": ("map", {}),
    "spec.working_memory.compaction": ("map", {}),
    "spec.infra": ("map", {}),
    "spec.infra.models": ("map", {}),
    "spec.infra.models.mappings": ("map", {}),
    "spec.infra.models.generation": ("map", {}),
    "spec.infra.models.generation.pricing": ("map", {}),
    "spec.models[0]": ("map", {}),
    "spec.tools[0]": ("map", {}),
    "spec.tools[0].function": ("map", TOOL),
    "spec.tools[0].function.parameters": ("map", TOOL),
    "spec.context": ("map", {}),
    "spec.memory_seeds": ("map", {}),
    "spec.models": ("list", {}),
    "spec.tools": ("list", {}),
    "spec.skills": ("list", {}),
    "spec.infra.models.allowed": ("list", {}),
    "spec.context_manager": ("binding", {}),
    "spec.assembler": ("binding", {}),
    "spec.context_manager.params.summarizer": ("binding", {}),
}
WRONG = {
    "str": [5, 2.5, True, [1], {"a": 1}],
    "bool": ["yes please", 1, 2.5, [True], {"a": 1}],
    "map": ["text", 5, True, [1, 2]],
    "list": ["text", 5, True, {"a": 1}],
    "binding": [5, 2.5, True, [1]],
}
TYPE_CASES = [pytest.param(path, v, id=f"{path}={v!r}") for path, (kind, _) in TYPED_FIELDS.items() for v in WRONG[kind]]


@pytest.mark.parametrize(("path", "value"), TYPE_CASES)
def test_every_wrong_type_at_every_field_is_located_or_harmless(path: str, value: Any) -> None:
    kind, base = TYPED_FIELDS[path]
    outcome = check_contract(put({"kind": "Agent", **base}, path, value), path)
    assert outcome.startswith("invalid"), f"validate accepted {value!r} at {path}"


# --- unknown keys in every closed block -----------------------------------------------------------

UNKNOWN_KEYS = {
    "spec.context_manager.params.trimmer.budget": ({}, "error"),
    "spec.working_memory.keep": ({}, "error"),
    "spec.working_memory.compaction.max_message": ({"spec": {"working_memory": {"compaction": {}}}}, "error"),
    "spec.skills[0].priority": (SKILL, "error"),
    "spec.tools[0].name": (TOOL, "error"),
    "spec.infra.models.generation.pricing.per_token": ({}, "error"),
    "spec.context_manager.skills": ({"spec": {"context_manager": {"type": "stack"}}}, "error"),
    "spec.models[0].stream": (ROW, "warning"),
    "spec.infra.models.region": ({}, "warning"),
    "spec.budget": ({}, "warning"),
    "status": ({}, "warning"),
}


@pytest.mark.parametrize("path", list(UNKNOWN_KEYS))
def test_unknown_keys_are_named_with_their_line(path: str) -> None:
    base, severity = UNKNOWN_KEYS[path]
    text = yaml.safe_dump(put({"kind": "Agent", **base}, path, 1), sort_keys=False)
    try:
        loaded = load_manifest_text(text, file="m.yaml", mode="validate")
        issues = list(loaded.warnings)
        assert severity == "warning"
    except ManifestError as exc:
        issues = exc.issues
        assert severity == "error"
    assert [i.path for i in issues] == [path] and issues[0].line is not None


# --- YAML aliases and plugin aliases --------------------------------------------------------------

BAD_ALIASES = [
    pytest.param("kind: Agent\nspec:\n  context_manager: *nope\n", 3, "undefined alias", id="undefined-alias"),
    pytest.param("kind: Agent\nspec:\n  context_manager: *cm\nlater: &cm stack\n", 3, "undefined alias",
                 id="alias-before-its-anchor"),
    pytest.param("kind: Agent\na: &x stack\nb: &x sliding-window\nspec:\n  context_manager: *x\n", None,
                 "duplicate anchor", id="anchor-defined-twice"),
    pytest.param("kind: Agent\nbase: &b 5\nspec:\n  models:\n    - <<: *b\n      model: gpt-4o\n", None,
                 "expected a mapping", id="merge-of-a-scalar"),
    pytest.param("kind: Agent\na: &a {x: 1}\nspec:\n  models:\n    - <<: [*a, 3]\n      model: gpt-4o\n", None,
                 "expected a mapping", id="merge-list-with-a-scalar"),
    pytest.param("kind: Agent\na: &a 3\nspec:\n  context_manager: !!str *a\n", 4, "invalid YAML", id="tag-on-an-alias"),
    pytest.param("kind: Agent\nspec: &s\n  context_manager: {params: *s}\n", 2, "recursive alias", id="self-reference"),
]


@pytest.mark.parametrize(("text", "line", "fragment"), BAD_ALIASES)
def test_bad_yaml_aliases_are_located_read_errors(text: str, line: int | None, fragment: str) -> None:
    for mode in ("validate", "assemble"):
        with pytest.raises(ManifestReadError) as info:
            load_manifest_text(text, file="m.yaml", mode=mode)
        issue = info.value.issues[0]
        assert fragment in issue.message and issue.file == "m.yaml"
        assert issue.line is not None
        if line is not None:
            assert issue.line == line


@pytest.mark.parametrize(("text", "path"), [
    pytest.param("kind: Agent\nrows: &r [1, 2]\nspec:\n  context_manager: *r\n", "spec.context_manager",
                 id="alias-of-the-wrong-type"),
    pytest.param("kind: Agent\nl: &l [a]\nspec: *l\n", "spec", id="spec-aliased-to-a-list"),
    pytest.param("kind: Agent\nd: &d {type: stack, params: {keep_turns: 2}}\nspec:\n  context_manager:\n    <<: *d\n",
                 "spec.context_manager.params.keep_turns", id="merged-binding-with-a-foreign-param"),
])
def test_aliases_that_expand_to_bad_values_name_the_field(text: str, path: str) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifest_text(text, file="m.yaml", mode="validate")
    assert [i.path for i in info.value.issues] == [path] and info.value.issues[0].line is not None


PLUGIN_MISSPELLINGS = [
    ("spec.context_manager", "summarize"), ("spec.context_manager", "sliding window"),
    ("spec.context_manager", "full history"), ("spec.context_manager", "mas.cm"),
    ("spec.context_manager", "mas.summarizer.llm"), ("spec.context_manager", "assembler"),
    ("spec.context_manager", "summarising-conversation"), ("spec.assembler", "stack"),
    ("spec.assembler", "ctx_assembler2"), ("spec.context_manager.params.summarizer", "stack"),
    ("spec.context_manager.params.summarizer", "gpt-4o"), ("spec.context_manager.params.summarizer", "LLM-summary"),
]


@pytest.mark.parametrize(("path", "name"), PLUGIN_MISSPELLINGS, ids=lambda x: str(x))
def test_misspelt_plugin_aliases_are_errors_listing_the_known_names(path: str, name: str) -> None:
    doc = put({"kind": "Agent"}, path, name)
    for mode in ("validate", "assemble"):
        with pytest.raises(ManifestError) as info:
            load_manifest_text(yaml.safe_dump(doc), file="m.yaml", mode=mode)
        (issue,) = info.value.issues
        assert issue.path == path and issue.line is not None
        assert "unknown" in issue.message and repr(name) in issue.message and "known:" in issue.message


@pytest.mark.parametrize(("written", "canonical"), [
    (" STACK ", "stack"), ("Full-History", "stack"), ("full_history", "stack"), ("MAS.CM.STACK", "stack"),
    ("Sliding_Window", "sliding-window"), ("summarizing", "summarising"), ("mas.cm.summarising", "summarising"),
])
def test_every_documented_alias_spelling_resolves(written: str, canonical: str) -> None:
    loaded = load_manifest_text(yaml.safe_dump({"kind": "Agent", "spec": {"context_manager": written}}), mode="validate")
    assert loaded.settings.context_manager.type == canonical


# --- context_manager and working_memory.compaction together --------------------------------------

CONFLICTS = [
    pytest.param({"context_manager": "stack", "working_memory": {"compaction": {"strategy": "summarize", "keep_turns": 3}}},
                 "stack", {}, id="both-valid"),
    pytest.param({"context_manager": {"type": "sliding-window", "params": {"keep_turns": 2}},
                  "working_memory": {"compaction": {"strategy": "keep_recent", "max_messages": 5}}},
                 "sliding-window", {"keep_turns": 2}, id="different-strategies"),
    pytest.param({"context_manager": "stack", "working_memory": {"compaction": {"strategy": "nonsense"}}},
                 "stack", {}, id="ignored-compaction-with-an-unknown-strategy"),
    pytest.param({"context_manager": {"type": "summarising", "params": {"keep_turns": 4}},
                  "working_memory": {"compaction": {"strategy": "summarize", "keep_turns": 9, "model": "gpt-4o-mini"}}},
                 "summarising", {"keep_turns": 4}, id="same-strategy-different-values"),
]


@pytest.mark.parametrize(("spec", "cm_type", "params"), CONFLICTS)
def test_context_manager_wins_over_compaction_with_a_located_warning(spec: dict, cm_type: str, params: dict) -> None:
    text = yaml.safe_dump({"kind": "Agent", "spec": spec}, sort_keys=False)
    for mode in ("validate", "assemble"):
        loaded = load_manifest_text(text, file="m.yaml", mode=mode)
        assert loaded.settings.context_manager.type == cm_type
        assert dict(loaded.settings.context_manager.params) == params
        assert loaded.settings.context_manager.source == "spec.context_manager"
        (warning,) = [w for w in loaded.warnings if w.path == "spec.working_memory.compaction"]
        assert "context_manager wins" in warning.message and warning.line is not None
    if spec["working_memory"]["compaction"].get("model"):
        assert loaded.settings.summarizer is not None and loaded.settings.summarizer.params.get("model") is None


def test_an_invalid_ignored_compaction_block_still_fails_validate_but_not_assemble() -> None:
    text = "kind: Agent\nspec:\n  context_manager: stack\n  working_memory:\n    compaction: {strategy: summarize, keep_turns: 0}\n"
    with pytest.raises(ManifestError) as info:
        load_manifest_text(text, file="m.yaml", mode="validate")
    assert [(i.path, i.line) for i in info.value.issues] == [("spec.working_memory.compaction.keep_turns", 5)]
    assert load_manifest_text(text, mode="assemble").settings.context_manager.type == "stack"


@pytest.mark.parametrize("cm", [None, "", {}])
def test_an_empty_context_manager_lets_compaction_apply(cm: Any) -> None:
    text = yaml.safe_dump({"kind": "Agent", "spec": {"context_manager": cm,
                                                     "working_memory": {"compaction": {"max_messages": 5}}}})
    loaded = load_manifest_text(text, mode="validate")
    assert (loaded.settings.context_manager.type, dict(loaded.settings.context_manager.params)) == ("stack", {"max_messages": 5})
    assert loaded.settings.context_manager.source == "spec.working_memory.compaction"


# --- encodings and syntax -----------------------------------------------------------------------

ENCODINGS = [
    pytest.param("kind: Agent\nspec: {}\n".encode("utf-16"), "not valid UTF-8", id="utf-16-with-bom"),
    pytest.param("kind: Agent\nspec: {}\n".encode("utf-16-le"), "", id="utf-16-le-without-bom"),
    pytest.param(b"kind: Agent\nspec:\n  system_prompt: a\x00b\n", "unacceptable character", id="nul-byte"),
    pytest.param(b"kind: Agent\nspec:\n  system_prompt: \x80\n", "not valid UTF-8", id="lone-continuation-byte"),
    pytest.param(b"kind: Agent\nspec:\n  system_prompt: \xc0\xaf\n", "not valid UTF-8", id="overlong-encoding"),
    pytest.param(b"kind: Agent\nspec:\n  system_prompt: \xed\xa0\x80\n", "not valid UTF-8", id="encoded-surrogate"),
    pytest.param(b"kind: Agent\nspec:\n  system_prompt: caf\xc3\n", "not valid UTF-8", id="truncated-sequence"),
    pytest.param(b"\xff\xfe\xfd", "not valid UTF-8", id="binary"),
    pytest.param("kind: Agent\nspec:\n  system_prompt: \x1b[31mred\n".encode(), "unacceptable character",
                 id="escape-control-character"),
]


@pytest.mark.parametrize(("data", "fragment"), ENCODINGS)
def test_bad_encodings_are_read_errors_naming_the_file(data: bytes, fragment: str) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifest_text(data, file="m.yaml", mode="validate")
    issue = info.value.issues[0]
    assert issue.file == "m.yaml" and fragment in issue.message


SYNTAX = [
    pytest.param("kind: Agent\nspec:\n\tcontext_manager: stack\n", 3, id="tab-indentation"),
    pytest.param("kind: Agent\nspec:\n  system_prompt: \"unclosed\n", None, id="unclosed-quote"),
    pytest.param("kind: Agent\nspec: {context_manager: stack\n", None, id="unclosed-flow-mapping"),
    pytest.param("kind: Agent\nspec:\n  - a\n  b: c\n", 4, id="list-then-mapping"),
    pytest.param("kind: Agent\nspec:\n  context_manager: stack\n    params: {}\n", 4, id="bad-nesting"),
    pytest.param("kind: Agent\n%TAG ! tag:x\nspec: {}\n", None, id="directive-in-body"),
    pytest.param("kind: Agent\nspec: !<tag:yaml.org,2002:python/none> x\n", 2, id="explicit-python-tag"),
    pytest.param("kind: Agent\nspec: !!set {a, b}\n", None, id="set-where-a-mapping-is-needed"),
]


@pytest.mark.parametrize(("text", "line"), SYNTAX)
def test_yaml_syntax_errors_are_located(text: str, line: int | None) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifest_text(text, file="m.yaml", mode="validate")
    issue = info.value.issues[0]
    assert issue.file == "m.yaml" and issue.line is not None
    if line is not None:
        assert issue.line == line


# --- a 50 MB file -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fifty_mb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "huge.yaml"
    line = b"  - " + b"x" * 95 + b"\n"
    with path.open("wb") as fh:
        fh.write(b"kind: Agent\nspec:\n  memory_seeds: {}\n  skills:\n")
        fh.write(line * (50 * 1024 * 1024 // len(line)))
    return path


def test_a_fifty_megabyte_manifest_is_refused_before_it_is_parsed(fifty_mb: Path) -> None:
    size = fifty_mb.stat().st_size
    assert size >= 50_000_000
    tracemalloc.start()
    try:
        for mode in ("validate", "assemble"):
            with pytest.raises(ManifestReadError) as info:
                load_manifest(fifty_mb, mode=mode)  # type: ignore[arg-type]
            (issue,) = info.value.issues
            assert issue.file == str(fifty_mb) and f"{size:,} bytes" in issue.message and f"{MAX_BYTES:,}" in issue.message
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"refused from its size, not after reading 50 MB (peak {peak:,} bytes)"


def test_fifty_megabytes_of_text_in_memory_is_refused_too(fifty_mb: Path) -> None:
    data = fifty_mb.read_bytes()
    for value in (data, data.decode()):
        with pytest.raises(ManifestReadError, match="too large"):
            load_manifest_text(value, file="huge.yaml")


def test_a_fifty_megabyte_manifest_through_the_console_script(fifty_mb: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps(ROWS))
    for args in (["validate", str(fifty_mb)], ["replay", str(fifty_mb), str(transcript), "--counter", "estimate"]):
        out = subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and "too large" in out.stderr and str(fifty_mb) in out.stderr
        assert "Traceback" not in out.stderr and out.stdout == ""


def test_a_context_file_just_over_the_limit_is_an_error_on_its_field(tmp_path: Path) -> None:
    (tmp_path / "policy.md").write_bytes(b"a" * (MAX_BYTES + 1))
    manifest = tmp_path / "m.yaml"
    manifest.write_text("kind: Agent\nspec:\n  context:\n    policy: ./policy.md\n")
    with pytest.raises(ManifestError) as info:
        load_manifest(manifest, mode="validate")
    assert [(i.path, i.line) for i in info.value.issues] == [("spec.context.policy", 4)]
    assert "too large" in info.value.issues[0].message


# --- the console script on each kind of bad manifest ----------------------------------------------

CLI_CASES = [  # (file content, exit status of validate, exit status of replay, the located line)
    pytest.param("kind: Agent\nspec:\n  context_manager: {type: stack, params: {max_messages: -3}}\n", 1, 1,
                 "m.yaml:3: spec.context_manager.params.max_messages", id="negative-number"),
    pytest.param("kind: Agent\nspec:\n  models: [{id: main, context_window: lots}]\n", 1, 0,
                 "m.yaml:3: spec.models[0].context_window", id="wrong-type-is-lenient-at-runtime"),
    pytest.param("kind: Agent\nspec:\n  context_manager: *nope\n", 2, 2, "m.yaml:3: invalid YAML: found undefined alias",
                 id="bad-alias"),
    pytest.param("kind: Agent\nspec:\n  context_manager: slidingwindow\n", 1, 1,
                 "m.yaml:3: spec.context_manager: unknown context_manager plugin 'slidingwindow'", id="misspelt-plugin"),
    pytest.param(b"kind: Agent\nspec:\n  system_prompt: caf\xe9\n", 2, 2, "m.yaml:3: file is not valid UTF-8", id="latin-1"),
    pytest.param("", 1, 1, "m.yaml: the file is empty", id="empty"),
]


@pytest.mark.parametrize(("content", "validate_code", "replay_code", "line"), CLI_CASES)
def test_the_console_script_prints_one_located_line_and_the_right_exit_code(
        tmp_path: Path, content: str | bytes, validate_code: int, replay_code: int, line: str) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_bytes(content if isinstance(content, bytes) else content.encode())
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps(ROWS))
    for args, code in ((["validate", "m.yaml"], validate_code),
                       (["replay", "m.yaml", "t.json", "--counter", "estimate"], replay_code)):
        out = subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert out.returncode == code, (args, out.stdout, out.stderr)
        assert "Traceback" not in out.stderr and "internal error" not in out.stderr
        if code:
            assert line in out.stdout + out.stderr
        else:
            assert json.loads(out.stdout)["totals"]["checks_failed"] == 0
