"""Regression: overrides and misspelt keys that changed nothing, with exit status 0.

Bug class: a setting that names nothing is silently a no-op. ``--set keep_turns=1`` (a short name
``sweep`` documents), ``--set spec.contxt_manager.params.keep_turns=1``, ``sweep --grid
keep_turn=2,4`` and a manifest whose ``spec:`` is misspelt ``spek:`` all ran as if nothing had been
given. Every key is now resolved against the manifest schema; an unknown one is a usage error
(exit 2) with a "did you mean"; ``validate`` refuses documents that are not agent manifests.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from inspector.cli import main
from inspector.manifest import load_manifest
from inspector.manifest.overrides import OverrideError, resolve_override_path

SAMPLE = ROOT / "sample_manifests" / "small-window.yaml"
DEMO = ROOT / "inspector" / "samples" / "demo_support.json"


def show(capsys: pytest.CaptureFixture[str], *sets: str) -> dict:
    args = ["validate", str(SAMPLE), "--show"]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 0
    out = capsys.readouterr().out
    return json.loads(out[out.index("{"):])


def test_short_names_work_in_set_as_in_grid(capsys: pytest.CaptureFixture[str]) -> None:
    before = show(capsys)["context_manager"]["resolved_params"]["keep_turns"]
    after = show(capsys, "keep_turns=1")["context_manager"]["resolved_params"]["keep_turns"]
    assert (before, after) == (3, 1)


def test_list_indices_in_both_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    dotted = show(capsys, "spec.models.0.context_window=5000")["models"][0]["context_window"]
    bracket = show(capsys, "spec.models[0].context_window=5000")["models"][0]["context_window"]
    assert dotted == bracket == 5000
    assert resolve_override_path("spec.models.0.model") == resolve_override_path("spec.models[0].model")


@pytest.mark.parametrize(("key", "suggestion"), [
    ("spec.contxt_manager.params.keep_turns", "context_manager"),
    ("keep_turn", "keep_turns"),
    ("spec.context_manager.params.keep_turn", "keep_turns"),
    ("spek.models", "spec"),
    ("spec.context_manager.params.trimmer.max_tokns", "max_tokens"),
])
def test_an_unknown_set_key_is_a_usage_error_with_a_suggestion(key: str, suggestion: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["validate", str(SAMPLE)], ["replay", str(SAMPLE), str(DEMO), "--counter", "estimate"]):
        assert main([*command, "--set", f"{key}=1"]) == 2
        err = capsys.readouterr().err
        assert "did you mean" in err and repr(suggestion) in err, err
    with pytest.raises(OverrideError):
        load_manifest(SAMPLE, overrides=[f"{key}=1"])


def test_an_unknown_grid_key_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["sweep", str(SAMPLE), str(DEMO), "--grid", "keep_turn=2,4", "--processes", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "did you mean 'keep_turns'" in err, err


@pytest.mark.parametrize("text", ["{}\n", "spek:\n  models: []\n", "kind: Agent\nspek: {}\n"])
def test_validate_refuses_what_is_not_an_agent_manifest(text: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "OK" not in out.splitlines()


def test_validate_refuses_a_transcript(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(DEMO)]) == 1
    err = capsys.readouterr().err
    assert "not an agent manifest" in err and "transcript" in err
