"""Regression: a user's transcript replayed as someone else's agent (Q21).

Bug class: the replay describes the wrong agent. With a sample manifest, a SWE-agent, Letta or
tau-bench transcript was sent the sample's "Acme" system prompt, its two tools and its 4 000-token
window, so every number described a different agent. Now a replay uses the transcript's own system
text, tools and recorded model unless the manifest declares its own and the user keeps them, and
states what is in force and where each part came from.
"""

from __future__ import annotations

import json
import warnings

import pytest

from conftest import ROOT, TRANSCRIPTS, need_shared
from inspector.cli import main
from inspector.engine.limits import litellm_model_info
from inspector.manifest import load_manifest
from inspector.observed import compare_observed
from inspector.replay import replay
from inspector.transcripts import load_transcript

SAMPLE = ROOT / "sample_manifests" / "small-window.yaml"
DEMO = ROOT / "inspector" / "samples" / "demo_support.json"
SHARED = sorted(p for p in TRANSCRIPTS.glob("*/*") if p.is_file() and p.suffix not in (".md", ".txt")) \
    if TRANSCRIPTS.is_dir() else []


def own_system(t) -> str | None:  # noqa: ANN001
    first = next((m for m in t.messages if m.get("role") == "system"), None)
    return first.get("content") if first else None


@pytest.mark.parametrize("path", [DEMO, *SHARED], ids=lambda p: p.parent.name)
@pytest.mark.parametrize("with_sample", [False, True], ids=["no-manifest", "sample-manifest"])
def test_a_transcript_replays_as_its_own_agent(path, with_sample: bool) -> None:  # noqa: ANN001
    t = load_transcript(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rp = replay(load_manifest(SAMPLE) if with_sample else None, t, counter="estimate")
    assert rp.frames
    first = rp.frames[0].payload(rp.messages)[0]
    system = own_system(t)
    if system is not None:
        assert first["role"] == "system" and first["content"] == system
        assert rp.agent.system == "transcript"
    else:
        assert first["role"] != "system" and rp.agent.system == "none"
    assert "Acme" not in json.dumps(first)
    assert (list(rp.settings.tools) if rp.settings.tools else None) == (t.tools or None)
    if not with_sample and t.model:
        info = litellm_model_info(t.model)
        assert rp.agent.model == t.model and rp.agent.model_source == "transcript"
        if info:
            assert rp.agent.window == (info.get("max_input_tokens") or info.get("max_tokens"))
            assert rp.agent.window_source == "litellm"
    if with_sample:  # Q21: the model (and window) the manifest names stays
        assert (rp.agent.model, rp.agent.window) == ("gpt-4o", 4000)
    described = rp.agent.describe()
    assert "system text" in described and "tools" in described and "window" in described


def test_the_user_can_keep_the_manifests_prompt_and_tools() -> None:
    t = load_transcript(DEMO)
    rp = replay(load_manifest(SAMPLE), t, counter="estimate", system="manifest", tools="manifest")
    first = rp.frames[0].payload(rp.messages)[0]
    assert first["role"] == "system" and "Acme" in first["content"]
    assert [x["function"]["name"] for x in rp.settings.tools] == ["lookup_order", "search_kb"]
    assert rp.agent.system == "manifest" and rp.agent.tools == "manifest"


def test_a_users_own_manifest_keeps_its_declared_prompt(tmp_path) -> None:  # noqa: ANN001
    mine = tmp_path / "mine.yaml"
    from inspector.bundled import unmarked

    mine.write_text(unmarked(SAMPLE.read_text()))  # the same content without the sample marker (Q25): the user's own
    rp = replay(load_manifest(mine), load_transcript(DEMO), counter="estimate")
    assert "Acme" in rp.frames[0].payload(rp.messages)[0]["content"]
    rp = replay(load_manifest(mine), load_transcript(DEMO), counter="estimate", system="transcript",
                tools="transcript", model="transcript")
    assert rp.frames[0].payload(rp.messages)[0]["content"] == own_system(rp.transcript)
    assert rp.agent.model == "gpt-4o-2024-08-06" and rp.agent.window_source == "litellm"


def test_cli_replay_without_a_manifest_states_the_agent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(DEMO), "--counter", "estimate", "--payloads"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["frames"][0]["payload"][0]["content"] == own_system(load_transcript(DEMO))
    assert doc["settings"]["agent"]["model"] == "gpt-4o-2024-08-06"
    assert doc["settings"]["agent"]["system"] == "transcript"
    assert "agent: system text from the transcript" in captured.err and "policy:" in captured.err
    assert main(["replay", str(SAMPLE), str(DEMO), "--counter", "estimate", "--payloads", "--system", "manifest",
                 "--tools", "manifest"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "Acme" in doc["frames"][0]["payload"][0]["content"]


def test_compare_and_sweep_take_the_transcript_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(DEMO), "--counter", "estimate", "--strategy", "w=sliding-window",
                 "--strategy", "s=stack", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)["strategies"]) == 2 and "gpt-4o-2024-08-06" in captured.err
    assert main(["sweep", str(DEMO), "--counter", "estimate", "--grid", "keep_turns=2,4", "--processes", "1",
                 "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 2


LETTA = TRANSCRIPTS / "letta-agent-file" / "memgpt_agent_with_convo.af"


def test_observed_says_what_differs() -> None:
    t = load_transcript(need_shared(LETTA))
    own = compare_observed(None, t, counter="estimate")
    assert own["system"].eq("").all() and own["tools"].eq("").all()
    forced = compare_observed(load_manifest(SAMPLE), t, counter="estimate", policy=None, sample=False)
    row = forced.iloc[0]
    assert not row["identical"] and "system" in row["differs"] and "tools" in row["differs"]
    assert "different system text" in row["system"] and "only ours: lookup_order" in row["tools"]
