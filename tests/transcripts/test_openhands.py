"""The ``openhands`` importer on a real OpenHands trajectory
(``tests/data/transcripts/openhands_wrong_initial_state.json`` = All-Hands-AI/OpenHands
``tests/runtime/trajs/wrong_initial_state.json``, unmodified) and on events built from OpenHands'
own dataclasses (``SystemMessageAction``, ``CondensationAction``; docs/SAMPLE_LOGS.md).

Guards: detection; an action and its observation become an assistant row with the response's tool
calls and a tool row; the ``model_response`` repeated on the action and on the observation is
counted once; a condensation is an observed compaction; a system action supplies the system row and
the tools; errors name the event.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.calibration import calibrate
from inspector.transcripts import TranscriptError, detect_format, load_transcript, parse_transcript

TRAJ = Path(__file__).parents[1] / "data" / "transcripts" / "openhands_wrong_initial_state.json"


def events() -> list[dict[str, Any]]:
    value: list[dict[str, Any]] = json.loads(TRAJ.read_text(encoding="utf-8"))
    return value


def test_a_trajectory_is_detected() -> None:
    assert detect_format(TRAJ.read_bytes(), "trajectory.json") == "openhands"


def test_actions_and_observations_become_calls_and_results() -> None:
    t = load_transcript(TRAJ)
    assert [m["role"] for m in t.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant",
                                               "tool", "assistant"]
    ev = events()
    first = ev[1]["tool_call_metadata"]["model_response"]["choices"][0]["message"]
    assert t.messages[1]["content"] == first["content"]
    assert t.messages[1]["tool_calls"][0]["id"] == "toolu_01USom24cuiyvAembLhEryrn"
    assert t.messages[2] == {"role": "tool", "content": ev[2]["content"],
                             "tool_call_id": "toolu_01USom24cuiyvAembLhEryrn", "name": "str_replace_editor"}
    assert t.origins[:3] == ["[0] (event 0)", "[1] (event 3)", "[2] (event 4)"]
    assert t.model == "claude-3-5-sonnet-20241022" and not t.irregularities


def test_usage_repeated_on_action_and_observation_is_counted_once() -> None:
    t = load_transcript(TRAJ)
    ev = events()
    per_response = {e["tool_call_metadata"]["model_response"]["id"]: e["tool_call_metadata"]["model_response"]["usage"]
                    for e in ev if "tool_call_metadata" in e}
    assert len(per_response) == 4 and sorted(t.usage) == [1, 3, 5, 7]  # the four assistant rows, no tool row
    assert sum(u["prompt_tokens"] for u in t.usage.values()) == sum(u["prompt_tokens"] for u in per_response.values())
    assert [u["prompt_tokens"] for u in t.usage.values()] == [3475, 3616, 3804, 3933]
    calls = calibrate(t).calls
    assert calls["provider_tokens"].tolist() == [3475, 3616, 3804, 3933]
    assert t.meta["not_recorded"] == ["system prompt", "tool schemas"]


def test_finish_is_the_thought_as_openhands_sends_it() -> None:
    ev = events()
    t = load_transcript(TRAJ)
    finish = ev[-1]
    content = finish["tool_call_metadata"]["model_response"]["choices"][0]["message"]["content"] or ""
    thought = finish["args"]["thought"]
    expected = thought + "\n" + content if thought and thought != content else thought or content
    assert t.messages[-1] == {"role": "assistant", "content": expected}


def test_a_condensation_is_an_observed_compaction_at_the_next_row() -> None:
    ev = events()
    condensation = {"id": 99, "timestamp": "2025-01-27T22:50:00", "source": "agent", "message": "Summary: ...",
                    "action": "condensation",
                    "args": {"forgotten_event_ids": None, "forgotten_events_start_id": 3, "forgotten_events_end_id": 4,
                             "summary": "Listed /workspace.", "summary_offset": 1}}
    t = parse_transcript(json.dumps([*ev[:5], condensation, *ev[5:]]), name="t.json")
    (c,) = t.compactions
    assert (c.index, c.origin) == (5, "[5] (event 99)")  # the row after event 6's tool row: event 7's call
    assert c.detail == "OpenHands condensation: forgot events 3-4; summary of 18 characters inserted at offset 1"
    assert len(t.messages) == len(load_transcript(TRAJ).messages)  # the condensation adds no row


def test_a_system_action_gives_the_system_row_and_the_tools() -> None:
    tool = {"type": "function", "function": {"name": "execute_bash", "description": "Run a command",
                                             "parameters": {"type": "object", "properties": {}}}}
    system = {"id": 0, "timestamp": "2025-06-01T00:00:00", "source": "agent", "message": "You are OpenHands agent.",
              "action": "system", "args": {"content": "You are OpenHands agent.", "tools": [tool],
                                           "openhands_version": "0.40.0", "agent_class": "CodeActAgent"}}
    t = parse_transcript(json.dumps([system, *events()]), name="t.json")
    assert t.messages[0] == {"role": "system", "content": "You are OpenHands agent."}
    assert t.tools == [tool] and "not_recorded" not in t.meta


def test_errors_name_the_event() -> None:
    ev = events()
    ev[2]["tool_call_metadata"]["tool_call_id"] = None
    with pytest.raises(TranscriptError, match=r"t\.json: \[2\] \(event 4\)\.tool_call_metadata\.tool_call_id must be a string"):
        parse_transcript(json.dumps(ev), name="t.json")
    ev = events()
    del ev[1]["tool_call_metadata"]["model_response"]["choices"]
    with pytest.raises(TranscriptError, match=r"\[1\] \(event 3\)\.tool_call_metadata\.model_response\.choices\[0\]"):
        parse_transcript(json.dumps(ev), name="t.json")
