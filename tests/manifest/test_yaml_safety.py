"""YAML safety: the reader rejects hostile or broken input with a located ManifestError (never
another exception type, never Python object construction, never exponential work)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from inspector.manifest import (
    ManifestError,
    ManifestReadError,
    load_manifest,
    load_manifest_text,
)
from inspector.manifest._yaml import MAX_BYTES, MAX_DEPTH

BILLION_LAUGHS = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10)) + "spec: {}\n"


@pytest.mark.parametrize(
    ("data", "error_type", "line", "fragment"),
    [
        pytest.param(BILLION_LAUGHS, ManifestReadError, None, "alias expansion", id="billion-laughs"),
        pytest.param("a: &a [*a]\n", ManifestReadError, 1, "recursive alias", id="recursive-sequence"),
        pytest.param("a: &a {b: *a}\n", ManifestReadError, 1, "recursive alias", id="recursive-mapping"),
        pytest.param("spec: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5), ManifestReadError, 1, "nesting",
                     id="deep-flow-nesting"),
        pytest.param("spec: " + "[" * 5000 + "]" * 5000, ManifestReadError, None, "nesting", id="very-deep-nesting"),
        pytest.param("spec:\n  a: [1, 2\n", ManifestReadError, 3, "invalid YAML", id="syntax-error"),
        pytest.param("spec:\n  a: 1\n   b: 2\n", ManifestReadError, 3, "invalid YAML", id="bad-indentation"),
        pytest.param("x: !!python/object/apply:os.system ['echo hi']\n", ManifestReadError, 1,
                     "could not determine a constructor", id="python-tag-refused"),
        pytest.param("when: 2021-02-30\n", ManifestReadError, None, "invalid YAML value", id="bad-timestamp"),
        pytest.param("a: \x01\n", ManifestReadError, 1, "unacceptable character", id="control-character"),
        pytest.param(b"spec:\n  x: caf\xe9\n", ManifestReadError, 2, "not valid UTF-8: byte 0xe9 at offset 14",
                     id="latin-1-bytes"),
        pytest.param("a: '\ud800'\n", ManifestReadError, 1, "unpaired surrogate", id="lone-surrogate"),
        pytest.param("", ManifestError, None, "empty", id="empty"),
        pytest.param("# only a comment\n", ManifestError, None, "empty", id="comment-only"),
        pytest.param("---\n---\n", ManifestError, None, "empty", id="empty-documents"),
        pytest.param("- a\n- b\n", ManifestError, 1, "top level must be a mapping", id="top-level-list"),
        pytest.param("just text\n", ManifestError, 1, "top level must be a mapping", id="top-level-scalar"),
        pytest.param("kind: LLMProxy\nspec: {}\n", ManifestError, 1, "no Agent document", id="no-agent-document"),
        pytest.param("spec:\n  a: 1\n  b: 2\n  a: 3\n", ManifestError, 4, "duplicate key 'a'", id="duplicate-key"),
    ],
)
def test_bad_input_is_a_located_manifest_error(data: str | bytes, error_type: type, line: int | None,
                                                fragment: str) -> None:
    with pytest.raises(error_type) as info:
        load_manifest_text(data, file="m.yaml", mode="validate")
    issue = info.value.issues[0]
    assert fragment in issue.message
    assert issue.file == "m.yaml"
    if line is not None:
        assert issue.line == line


def test_alias_bomb_is_rejected_before_it_expands() -> None:
    """Refused from its alias structure: expanded, the document would take gigabytes; the refusal
    allocates a few megabytes at most (memory measured, not time)."""
    tracemalloc.start()
    try:
        with pytest.raises(ManifestReadError):
            load_manifest_text(BILLION_LAUGHS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000, f"peak {peak:,} bytes"


def test_syntax_and_read_errors_are_read_errors_but_content_errors_are_not() -> None:
    with pytest.raises(ManifestReadError):
        load_manifest_text("a: [")
    with pytest.raises(ManifestError) as info:
        load_manifest_text("- 1\n")
    assert not isinstance(info.value, ManifestReadError)


def test_benign_aliases_and_merge_keys_are_fine() -> None:
    text = """\
base_tool: &tool
  type: function
  function: {name: lookup, parameters: {type: object}}
kind: Agent
spec:
  tools:
    - *tool
  models:
    - &row {id: main, model: gpt-4o}
    - <<: *row
      id: summarizer
      model: gpt-4o-mini
"""
    loaded = load_manifest_text(text, mode="assemble")
    assert [r.id for r in loaded.settings.models] == ["main", "summarizer"]
    assert loaded.settings.tools is not None and loaded.settings.tools[0]["function"]["name"] == "lookup"


def test_text_over_the_size_limit_is_rejected_naming_the_size() -> None:
    with pytest.raises(ManifestReadError, match="too large"):
        load_manifest_text("x: " + "a" * MAX_BYTES)


def test_file_over_the_size_limit_is_rejected_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as fh:
        fh.truncate(MAX_BYTES + 1)
    with pytest.raises(ManifestReadError) as info:
        load_manifest(big)
    issue = info.value.issues[0]
    assert issue.file == str(big) and f"{MAX_BYTES + 1:,} bytes" in issue.message


@pytest.mark.parametrize("make", [lambda p: p / "missing.yaml", lambda p: p, lambda p: Path(f"{p}/a\x00b.yaml")],
                         ids=["missing", "directory", "nul-in-path"])
def test_unreadable_path_is_a_read_error(tmp_path: Path, make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ManifestReadError, match="cannot read"):
        load_manifest(make(tmp_path))


def test_utf8_bom_is_accepted() -> None:
    assert load_manifest_text(b"\xef\xbb\xbfkind: Agent\nspec: {}\n").raw == {"kind": "Agent", "spec": {}}


def test_multi_document_file_reads_infra_documents(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("""\
kind: Agent
metadata: {name: a}
spec:
  models: [{model: default}]
  infra:
    models:
      mappings: {haiku: bedrock/anthropic.claude-3-haiku}
---
kind: LLMProxy
spec:
  models:
    mappings: {default: haiku}
    allowed: [haiku]
    generation:
      context_window: 200000
      max_output_tokens: 4096
      pricing: {input_per_million_tokens: 0.3, output_per_million_tokens: 2.5}
""")
    loaded = load_manifest(path, mode="validate")
    infra = loaded.settings.infra
    assert dict(infra.mappings) == {"default": "haiku", "haiku": "bedrock/anthropic.claude-3-haiku"}
    assert infra.allowed == ("haiku",)
    assert dict(infra.generation) == {"context_window": 200000, "max_output_tokens": 4096,
                                      "pricing": {"input_per_million_tokens": 0.3,
                                                  "output_per_million_tokens": 2.5}}
    assert loaded.raw["kind"] == "Agent" and len(loaded.documents) == 2


def test_errors_in_an_infra_document_name_the_document_and_line() -> None:
    text = "kind: Agent\nspec: {}\n---\nkind: LLMLocal\nspec:\n  models:\n    generation: {context_window: -1}\n"
    with pytest.raises(ManifestError) as info:
        load_manifest_text(text, mode="validate")
    (issue,) = info.value.issues
    assert (issue.path, issue.line) == ("documents[1].spec.models.generation.context_window", 7)
