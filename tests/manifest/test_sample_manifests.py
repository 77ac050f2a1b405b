"""Every bundled sample manifest validates (no errors, no warnings) and means what its comments say."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.manifest import load_manifest, validate_file

SAMPLES = Path(__file__).resolve().parents[2] / "sample_manifests"
NAMES = ["default", "summarising-drop", "summarising-llm", "sliding-window", "stack", "compaction-sugar",
         "small-window", "support-demo"]


def test_all_samples_are_present() -> None:
    assert {p.stem for p in SAMPLES.glob("*.yaml")} >= set(NAMES)


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_sample_validates_cleanly(path: Path) -> None:
    errors, warnings = validate_file(path)
    assert errors == [] and warnings == [], [str(i) for i in errors + warnings]
    s = load_manifest(path).settings
    assert s.injected_context and s.injected_context[1].startswith("[")  # system prompt + context lines
    assert s.tools is not None and len(s.tools) >= 2


# Each row: sample, (cm type, source), summarizer (type, params) or None, CM params as written.
EXPECTED = [
    ("default", ("summarising", "default"), ("llm", {}), {}),
    ("summarising-drop", ("summarising", "spec.context_manager"), ("drop", {}),
     {"keep_turns": 6, "hysteresis_ratio": 0.1}),
    ("summarising-llm", ("summarising", "spec.context_manager"),
     ("llm", {"model": "summarizer"}), {"keep_turns": 4, "hysteresis_ratio": 0.1, "summary_threshold": 0}),
    ("sliding-window", ("sliding-window", "spec.context_manager"), None, {"keep_turns": 5}),
    ("stack", ("stack", "spec.context_manager"), None, {"max_messages": 40}),
    ("compaction-sugar", ("summarising", "spec.working_memory.compaction"), ("llm", {"model": "gpt-4o-mini"}),
     {"summary_threshold": 0, "keep_turns": 4}),
    ("small-window", ("summarising", "spec.context_manager"), ("llm", {}), {"keep_turns": 3}),
    ("support-demo", ("summarising", "spec.context_manager"), ("llm", {}), {"keep_turns": 2, "hysteresis_ratio": 0.25}),
]


@pytest.mark.parametrize(("name", "cm", "summarizer", "params"), EXPECTED, ids=[e[0] for e in EXPECTED])
def test_sample_settings(name: str, cm: tuple, summarizer: tuple | None, params: dict) -> None:
    s = load_manifest(SAMPLES / f"{name}.yaml").settings
    assert (s.context_manager.type, s.context_manager.source) == cm
    got = (s.summarizer.type, {k: v for k, v in s.summarizer.params.items() if k != "instructions"}) \
        if s.summarizer else None
    assert got == summarizer
    assert dict(s.context_manager.params) == params


def test_summarising_llm_uses_a_cheaper_summary_model_but_budgets_from_main() -> None:
    s = load_manifest(SAMPLES / "summarising-llm.yaml").settings
    rows = {r.id: r.model for r in s.models}
    assert rows == {"main": "gpt-4o", "summarizer": "gpt-4o-mini"}
    primary = s.primary_model()
    assert primary is not None and primary.model == "gpt-4o"
    assert s.summarizer is not None and s.summarizer.params["model"] == "summarizer"


def test_small_window_forces_an_early_budget() -> None:
    s = load_manifest(SAMPLES / "small-window.yaml").settings
    primary = s.primary_model()
    assert primary is not None
    assert (primary.model, primary.context_window, primary.max_tokens) == ("gpt-4o", 4000, 1000)
    assert s.trimmer.safety_margin_ratio == 0.1 and s.context_manager.params["keep_turns"] == 3
