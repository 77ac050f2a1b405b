"""Regressions: defaults that disagreed across faces (Q22) and folds counted as summarizer calls (Q20).

Bug class: the same inputs giving different numbers on different faces. ``replay``/``compare`` used
tiktoken and the manifest's summarizer (an ``llm`` one with no model silently dropped), ``sweep``
estimate and the stand-in, the app tiktoken and the stand-in; ``--summarizer stand-in`` turned an
explicit ``drop`` into summaries. Now one :data:`~inspector.policy.DEFAULT_POLICY` serves every
face and is printed; ``drop`` stays drop. And a ``drop`` replay no longer reports "summarizer
calls": those were folds, counted and shown separately.
"""

from __future__ import annotations

import json

import pytest

from conftest import ROOT
from inspector.cli import build_parser, main
from inspector.manifest import load_manifest
from inspector.policy import DEFAULT_POLICY, ReplayPolicy, summarizer_choice
from inspector.replay import replay
from inspector.app import inputs
from inspector.sweep import sweep_one
from inspector.transcripts import load_transcript

DEMO = ROOT / "inspector" / "samples" / "demo_support.json"
DROP = ROOT / "sample_manifests" / "summarising-drop.yaml"
LLM = ROOT / "sample_manifests" / "small-window.yaml"  # summarizer: llm, no model configured


def test_the_default_policy() -> None:
    assert (DEFAULT_POLICY.counter, DEFAULT_POLICY.summarizer) == ("tiktoken", "auto")
    assert "counter tiktoken" in DEFAULT_POLICY.describe() and "summarizer auto" in DEFAULT_POLICY.describe()
    with pytest.raises(ValueError, match="summarizer"):
        ReplayPolicy(summarizer="wizard")


@pytest.mark.parametrize("command", ["replay", "compare", "sweep", "observed"])
def test_every_cli_command_defaults_to_the_policy(command: str) -> None:
    extra = {"compare": ["--strategy", "a=stack"], "sweep": ["--grid", "keep_turns=1"]}.get(command, [])
    args = build_parser().parse_args([command, str(DEMO), *extra])
    assert args.counter is None and getattr(args, "summarizer", None) is None  # None = DEFAULT_POLICY's
    from inspector.cli.options import policy_from_args

    assert policy_from_args(args) == DEFAULT_POLICY


def test_replay_sweep_and_app_agree_by_default() -> None:
    loaded = load_manifest(LLM)
    t = load_transcript(DEMO)
    rp = replay(loaded, t)
    row = sweep_one(loaded.raw, t, {}, manifest_file=str(LLM))
    assert rp.counter == row["counter"] == "tiktoken"
    assert rp.summarizer_label == row["summarizer"] == "offline stand-in (not a model)"
    assert row["tokens_sent"] == rp.totals()["payload_tokens"]
    assert inputs.effective_summarizer(loaded.settings, "stand-in") == summarizer_choice(loaded.settings, "auto",
                                                                                       live=False)


@pytest.mark.parametrize("mode", ["auto", "stand-in", "manifest", "drop"])
def test_drop_stays_drop(mode: str) -> None:
    rp = replay(load_manifest(DROP), load_transcript(DEMO), counter="estimate", summarizer=mode)
    assert not any(f.summary_text for f in rp.frames) and not any(f.summary_sent for f in rp.frames)
    assert rp.summarizer_label == "drop"


def test_folds_are_not_summarizer_calls(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(LLM), str(DEMO), "--counter", "estimate", "--summarizer", "drop"]) == 0
    captured = capsys.readouterr()
    totals = json.loads(captured.out)["totals"]
    assert totals["summarizer_calls"] == {"in_turn": 0, "commit": 0}
    assert totals["folds"]["in_turn"] + totals["folds"]["commit"] > 0
    assert totals["summary_cost_usd"] == 0
    assert "policy: counter estimate · summarizer drop" in captured.err
    # an llm summarizer without a live model, run as the manifest says: folds, no call, labelled
    rp = replay(load_manifest(LLM), load_transcript(DEMO), counter="estimate", summarizer="manifest")
    assert rp.totals()["summarizer_calls"] == {"in_turn": 0, "commit": 0} and sum(rp.folds().values()) > 0
    assert "no call" in rp.summarizer_label
