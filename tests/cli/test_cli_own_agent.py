"""Through the console script: ``context-inspector replay TRANSCRIPT`` with no
manifest replays every shared transcript as its own agent — its system text is the first payload
row, its tool schemas are the tools sent, and its recorded model's window (litellm's model map) is
the window — and ``compare``, ``sweep`` and ``observed`` take the transcript alone as well.

Expectations come from the transcript as imported (``context-inspector import``) and from the model
map, never from the replay under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_run import DEMO, run
from conftest import TRANSCRIPTS, need_shared, shared_cases
from inspector.engine.limits import litellm_model_info

FILES = [DEMO, *shared_cases()]


def imported(path: Path) -> dict[str, Any]:
    out = run("import", str(path))
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}" if p else "no-shared-data")
def test_replay_without_a_manifest_is_the_transcripts_own_agent(path: Path) -> None:
    t = imported(path)
    out = run("replay", str(path), "--payloads", "--counter", "estimate", "--summarizer", "drop")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    first = doc["frames"][0]["payload"][0]
    system = next((m["content"] for m in t["messages"] if m["role"] == "system"), None)
    if system is None:
        assert first["role"] != "system"
    else:
        assert (first["role"], first["content"]) == ("system", system)
    assert (doc["settings"]["tools"] or None) == (t.get("tools") or None)
    agent = doc["settings"]["agent"]
    info = litellm_model_info(t["model"]) if t.get("model") else None
    if t.get("model"):
        assert (agent["model"], agent["model_source"]) == (t["model"], "transcript")
    if info:
        assert agent["window"] == (info.get("max_input_tokens") or info.get("max_tokens"))
        assert agent["window_source"] == "litellm"
        assert all(f["budget"]["window"] == agent["window"] for f in doc["frames"])
    assert "agent: system text " in out.stderr and "policy: " in out.stderr


def test_compare_sweep_and_observed_take_the_transcript_alone() -> None:
    swe = need_shared(TRANSCRIPTS / "swe-agent" / "marshmallow-code__marshmallow-1867.traj")
    common = ("--counter", "estimate", "--summarizer", "drop", "--format", "json")
    compare = run("compare", str(swe), "--strategy", "w=sliding-window", "--strategy", "s=stack", *common)
    assert compare.returncode == 0, compare.stderr
    assert [r["strategy"] for r in json.loads(compare.stdout)["strategies"]] == ["w", "s"]
    assert "agent: system text from the transcript" in compare.stderr
    sweep = run("sweep", str(swe), "--grid", "keep_turns=2,4", "--processes", "1", *common)
    assert sweep.returncode == 0, sweep.stderr
    assert [r["keep_turns"] for r in json.loads(sweep.stdout)["rows"]] == [2, 4]
    letta = need_shared(TRANSCRIPTS / "letta-agent-file" / "memgpt_agent_with_convo.af")
    observed = run("observed", str(letta), *common)
    assert observed.returncode == 0, observed.stderr
    rows = json.loads(observed.stdout)["payloads"]
    assert rows and all(r["system"] == "" and r["tools"] == "" for r in rows)  # own prompt and tools: no difference
