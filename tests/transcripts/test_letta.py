"""The ``letta`` importer on Letta's current agent-file schema (``{agents: [...], tools, blocks, ...}``,
several agents per file) and on the old single-agent shape.

Files: ``tests/data/transcripts/memgpt_agent_with_convo.current.af`` is the current
letta-ai/agent-file ``memgpt_agent/memgpt_agent_with_convo.af`` byte for byte;
``lettabot-builder.trimmed.af`` is ``agents/@letta-ai/lettabot-builder/lettabot-builder.af``
trimmed (see docs/SAMPLE_LOGS.md: the sleep-time agent's first 10 messages, long strings cut).
Guards: every agent is one conversation; tools come from the file's ``tools`` named by the agent's
``tool_ids``; ``in_context_message_ids`` is the observed payload; Letta's summary alert is an
observed compaction; a file that is a JSON string holding the document reads the same; the old
shape still reads; errors name the agent or the id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.transcripts import TranscriptError, detect_format, list_conversations, load_transcript, parse_transcript

DATA = Path(__file__).parents[1] / "data" / "transcripts"
CONVO = DATA / "memgpt_agent_with_convo.current.af"
BUILDER = DATA / "lettabot-builder.trimmed.af"


def doc(path: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


def test_current_agent_files_are_detected_as_letta() -> None:
    for path in (CONVO, BUILDER):
        assert detect_format(path.read_bytes(), "upload.json") == "letta"


def test_every_agent_of_a_file_is_one_conversation_named_by_the_agent() -> None:
    infos = list_conversations(BUILDER)
    # agents[0] holds system, user, assistant; agents[1] (trimmed) 10 messages, 3 of them user rows
    assert [(c.index, c.label, c.messages, c.user_turns) for c in infos] == [
        (0, "lettabot-builder", 3, 1), (1, "Nameless Agent-sleeptime", 10, 3)]


def test_a_conversation_is_the_selected_agents_messages_in_storage_order() -> None:
    raw = doc(BUILDER)["agents"][1]["messages"]
    t = load_transcript(BUILDER, conversation=1)
    assert t.conversation == 1
    assert [m["role"] for m in t.messages] == [m["role"] for m in raw]
    assert t.origins[3] == "agents[1].messages[3]"
    assert t.messages[3] == {"role": "tool", "content": raw[3]["content"][0]["text"],
                             "tool_call_id": "toolu_012sT5117xednME679mwib9n", "name": "memory_finish_edits"}
    assert t.messages[2]["tool_calls"] == [{"id": "toolu_012sT5117xednME679mwib9n", "type": "function",
                                            "function": {"name": "memory_finish_edits", "arguments": "{}"}}]
    # Letta's native reasoning block is kept as a part and reported, not dropped
    assert [p["type"] for p in t.messages[2]["content"]] == ["reasoning", "text"]
    assert ("non_text_content", 2) in {(r.kind, r.index) for r in t.irregularities}


def test_tools_are_the_files_tools_the_agent_names_in_tool_ids() -> None:
    d = doc(BUILDER)
    schemas = {t["id"]: t["json_schema"]["name"] for t in d["tools"]}
    for k in (0, 1):
        t = load_transcript(BUILDER, conversation=k)
        assert t.tools is not None
        assert [x["function"]["name"] for x in t.tools] == [schemas[i] for i in d["agents"][k]["tool_ids"]]
    assert load_transcript(BUILDER, conversation=1).model == "claude-sonnet-4-5-20250929"
    assert load_transcript(BUILDER, conversation=0).model == "claude-opus-4-6"


def test_in_context_message_ids_are_the_observed_payload_in_their_order() -> None:
    d = doc(BUILDER)
    t = load_transcript(BUILDER, conversation=1)
    ids = [m["id"] for m in d["agents"][1]["messages"]]
    (p,) = t.observed_payloads
    assert p.origin == "agents[1].in_context_message_ids"
    assert p.messages == [t.messages[ids.index(i)] for i in d["agents"][1]["in_context_message_ids"]]
    assert p.turn == 2  # three user rows before the last in-context row


def test_letta_summary_alert_is_an_observed_compaction() -> None:
    t = load_transcript(BUILDER, conversation=1)
    (c,) = t.compactions
    assert (c.index, c.origin) == (1, "agents[1].messages[1]")
    assert "context_tokens_before 183758" in c.detail and "context_tokens_after 115710" in c.detail
    assert ("synthetic_user_message", 1) in {(r.kind, r.index) for r in t.irregularities}
    assert load_transcript(BUILDER, conversation=0).compactions == []


def test_a_file_that_is_the_document_encoded_as_a_json_string_reads_the_same() -> None:
    text = CONVO.read_text(encoding="utf-8")
    wrapped = json.dumps(text)
    assert detect_format(wrapped, "x.af") == "letta"
    a, b = parse_transcript(text, name="x.af"), parse_transcript(wrapped, name="x.af")
    assert (a.messages, a.tools, a.model) == (b.messages, b.tools, b.model)
    assert a.model == "gpt-4o-mini" and a.tools is not None and len(a.tools) == 3


def test_an_agent_with_no_messages_is_an_empty_conversation() -> None:
    d = doc(CONVO)
    d["agents"].append({**d["agents"][0], "name": "idle", "messages": [], "in_context_message_ids": []})
    infos = list_conversations(json.dumps(d).encode())
    assert [(c.label, c.messages) for c in infos] == [("memgpt_agent", 1), ("idle", 0)]
    t = parse_transcript(json.dumps(d), name="x.af", conversation=1)
    assert t.messages == [] and t.observed_payloads == []


def test_the_old_single_agent_shape_still_reads() -> None:
    old = {"agent_type": "memgpt_agent", "llm_config": {"model": "gpt-4o", "context_window": 8192},
           "in_context_message_indices": [0, 1], "tools": [],
           "messages": [{"role": "system", "content": [{"type": "text", "text": "sys"}]},
                        {"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    t = parse_transcript(json.dumps(old), name="a.af")
    assert t.format == "letta" and t.origins == ["messages[0]", "messages[1]"]
    assert t.meta["context_window"] == 8192 and "agent" not in t.meta
    assert t.observed_payloads[0].origin == "in_context_message_indices"


def test_errors_name_the_agent_or_the_message_id() -> None:
    d = doc(CONVO)
    bad = {**d, "agents": [d["agents"][0], {"name": "x"}]}
    with pytest.raises(TranscriptError, match=r"x\.af: agents\[1\] must be an agent object with a 'messages' list"):
        parse_transcript(json.dumps(bad), name="x.af")
    bad = {**d, "agents": [{**d["agents"][0], "in_context_message_ids": ["message-404"]}]}
    with pytest.raises(TranscriptError, match=r"agents\[0\]\.in_context_message_ids: 'message-404' names no message"):
        parse_transcript(json.dumps(bad), name="x.af")
    with pytest.raises(TranscriptError, match="out of range: the file holds 1 conversation"):
        parse_transcript(json.dumps(d), name="x.af", conversation=1)
    with pytest.raises(TranscriptError, match=r"an 'agents' list \(current shape\)"):
        parse_transcript("[1]", name="x.af", format="letta")
