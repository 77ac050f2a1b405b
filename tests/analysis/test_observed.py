"""Observed payloads (mas-lab, Letta) against what our engine would send for the same state."""

from __future__ import annotations

from conftest import TRANSCRIPTS, need_shared
from inspector.manifest import settings_from_dict
from inspector.observed import compare_observed, engine_for_observed
from inspector.transcripts import load_transcript

MAS = TRANSCRIPTS / "mas-lab" / "events.r1.jsonl"
LETTA = TRANSCRIPTS / "letta-agent-file" / "memgpt_agent_with_convo.af"


def need(path):  # noqa: ANN001, ANN201
    return need_shared(path)


def stack():  # noqa: ANN201
    return settings_from_dict({"kind": "Agent", "spec": {"context_manager": "stack"}}).settings


def test_uncapped_stack_with_a_big_window_resends_exactly_what_was_observed() -> None:
    df = compare_observed(stack(), load_transcript(need(MAS)))
    assert len(df) == 4 and df["check"].eq("ok").all()
    assert df["identical"].all(), df.to_string()
    assert (df["observed_tokens"] == df["engine_tokens"]).all()


def test_a_tight_window_shows_what_our_engine_would_cut() -> None:
    tight = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": "sliding-window", "params": {
        "keep_turns": 1, "trimmer": {"max_tokens": 1500, "reserve_tokens": 200}}}}}).settings
    df = compare_observed(tight, load_transcript(need(LETTA)))
    assert len(df) == 1
    row = df.iloc[0]
    assert not row["identical"] and row["engine_tokens"] < row["observed_tokens"]
    assert row["check"] == "ok"


def test_state_is_rebuilt_from_the_payload() -> None:
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "q2"}, {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "r"}]
    engine, call = engine_for_observed(stack(), msgs, None)
    assert [m["content"] for m in engine.conversation.committed_messages] == ["q1", "a1"]
    assert engine.conversation.last_user_text == "q2" and len(engine.conversation.working) == 2
    assert call.messages == msgs


def test_observed_command(tmp_path) -> None:  # noqa: ANN001
    import json
    import subprocess
    import sys
    from pathlib import Path

    from conftest import ROOT

    exe = Path(sys.executable).with_name("context-inspector")
    out = subprocess.run([str(exe), "observed", str(ROOT / "sample_manifests" / "stack.yaml"), str(need(MAS)),
                          "--format", "json"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["payloads"]) == 4
    none = subprocess.run([str(exe), "observed", str(ROOT / "sample_manifests" / "stack.yaml"),
                           str(ROOT / "inspector" / "samples" / "demo_support.json")], capture_output=True, text=True,
                          timeout=180)
    assert none.returncode == 1 and "no observed payloads" in none.stderr
