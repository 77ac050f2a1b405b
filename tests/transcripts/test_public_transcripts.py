"""The six third-party transcripts in ../shared, imported for real and checked against SOURCES.md.

Guards: lost or reordered messages, missing origins, counts drifting from what SOURCES.md states,
and irregularities silently repaired instead of reported. The files are read where they live
(never copied into the repo); without them the tests skip, unless CONTEXT_INSPECTOR_SHARED_DATA
requires them (see conftest.need_shared).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from inspector.transcripts import (
    Transcript,
    TranscriptError,
    detect_format,
    iter_transcripts,
    list_conversations,
    load_transcript,
    transcript_to_json,
)

from conftest import TRANSCRIPTS as SHARED
from conftest import need_shared

TAU = "tau-bench/gpt-4o-airline.json"
TAU2 = "tau2-bench/toolorchestra_airline_gpt-5_1trial.json"
SWE = "swe-agent/marshmallow-code__marshmallow-1867.traj"
LETTA = "letta-agent-file/memgpt_agent_with_convo.af"
BASHKIT = "bashkit-eval/eval-anthropic-claude-opus-4-6-2026-02-28-205358.json"
MASLAB = "mas-lab/events.r1.jsonl"

ALLOWED_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}


def shared_file(rel: str) -> Path:
    """The shared file, or skip (fail when the data is required) with the reason."""
    return need_shared(SHARED / rel)


@cache
def _all(rel: str) -> tuple[Transcript, ...]:
    return tuple(iter_transcripts(SHARED / rel))


def all_conversations(rel: str) -> tuple[Transcript, ...]:
    shared_file(rel)
    return _all(rel)


def raw(rel: str) -> Any:
    return json.loads(shared_file(rel).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Expect:
    rel: str
    format: str
    conversations: int
    roles: dict[str, int]
    tool_calls: int
    irregularities: dict[str, int] = field(default_factory=dict)


TABLE = [
    # 200 episodes; SOURCES.md: 5,308 messages. Reused ids are NOT in SOURCES.md: gpt-4o reused
    # call ids inside 49 episodes (73 reuses); the importer reports them, never renames them.
    Expect(TAU, "tau-bench", 200, {"system": 200, "user": 1490, "assistant": 2454, "tool": 1164}, 1164,
           {"truncated_after_tool": 51, "reused_tool_call_id": 73}),
    # 1,320 source messages plus one system row per conversation rebuilt from the policy.
    Expect(TAU2, "tau2-bench", 50, {"system": 50, "user": 234, "assistant": 505, "tool": 581}, 581),
    # ids reused 3+1+1 times; the episode ends on the submit observation.
    Expect(SWE, "swe-agent", 1, {"system": 1, "user": 1, "assistant": 11, "tool": 11}, 11,
           {"reused_tool_call_id": 5, "truncated_after_tool": 1}),
    # 5 recompiled system prompts between a call and its result; 6 Letta-written user envelopes;
    # the file ends on a core_memory_replace result.
    Expect(LETTA, "letta", 1, {"system": 6, "user": 29, "assistant": 28, "tool": 28}, 28,
           {"result_far_from_call": 5, "synthetic_user_message": 6, "truncated_after_tool": 1}),
    # 239 source messages with role "tool_result" became 269 tool rows; 8 runs hit max_turns.
    Expect(BASHKIT, "bashkit", 58, {"user": 58, "assistant": 289, "tool": 269}, 269,
           {"nonstandard_role": 239, "truncated_after_tool": 8}),
    # one conversation per agent: moderator + 3 sub-agents, 10 LLM calls, 11 tool calls.
    Expect(MASLAB, "mas-lab", 4, {"system": 4, "user": 4, "assistant": 10, "tool": 11}, 11),
]
IDS = [e.format for e in TABLE]


@pytest.mark.parametrize("e", TABLE, ids=IDS)
def test_detected_format(e: Expect) -> None:
    path = shared_file(e.rel)
    assert detect_format(path.read_bytes(), path.name) == e.format
    assert load_transcript(path).format == e.format


@pytest.mark.parametrize("e", TABLE, ids=IDS)
def test_counts_match_sources_md(e: Expect) -> None:
    convs = all_conversations(e.rel)
    assert len(convs) == e.conversations
    roles = Counter(m["role"] for t in convs for m in t.messages)
    assert dict(roles) == e.roles
    assert sum(len(m.get("tool_calls") or ()) for t in convs for m in t.messages) == e.tool_calls
    kinds = Counter(r.kind for t in convs for r in t.irregularities)
    assert dict(kinds) == e.irregularities


@pytest.mark.parametrize("e", TABLE, ids=IDS)
def test_every_message_has_an_origin_and_the_openai_shape(e: Expect) -> None:
    for t in all_conversations(e.rel):
        assert len(t.origins) == len(t.messages)
        assert all(isinstance(o, str) and o for o in t.origins)
        assert len(set(t.origins)) == len(t.origins), "two rows claim the same source location"
        for m in t.messages:
            assert set(m) <= ALLOWED_KEYS and "content" in m
            assert m["content"] is None or isinstance(m["content"], (str, list))
            for call in m.get("tool_calls") or ():
                assert call["type"] == "function" and isinstance(call["id"], str)
                assert isinstance(call["function"]["arguments"], str)
                json.loads(call["function"]["arguments"])
            if m["role"] == "tool":
                assert isinstance(m["tool_call_id"], str) and m["tool_call_id"]
        for r in t.irregularities:
            assert r.index is None or 0 <= r.index < len(t.messages)


@pytest.mark.parametrize("e", TABLE, ids=IDS)
def test_conversation_listing_matches_what_selection_imports(e: Expect) -> None:
    path = shared_file(e.rel)
    infos = list_conversations(path)
    convs = all_conversations(e.rel)
    assert [c.index for c in infos] == list(range(e.conversations))
    for info, t in zip(infos, convs, strict=True):
        assert t.conversation == info.index
        assert t.conversations == infos
        assert info.messages == len(t.messages)
        assert info.user_turns == sum(m["role"] == "user" for m in t.messages)
        assert info.label


@pytest.mark.parametrize("e", TABLE, ids=IDS)
def test_conversation_selection_and_out_of_range(e: Expect) -> None:
    path = shared_file(e.rel)
    last = e.conversations - 1
    t = load_transcript(path, conversation=last)
    assert t.conversation == last
    assert t.messages == all_conversations(e.rel)[last].messages
    with pytest.raises(TranscriptError) as err:
        load_transcript(path, conversation=e.conversations)
    assert f"holds {e.conversations} conversation" in str(err.value)
    assert path.name in str(err.value)


@pytest.mark.parametrize("e", TABLE, ids=IDS)
def test_json_view_is_deterministic_and_serialisable(e: Expect) -> None:
    t = load_transcript(shared_file(e.rel))
    first = json.dumps(transcript_to_json(t), sort_keys=False)
    assert first == json.dumps(transcript_to_json(load_transcript(shared_file(e.rel))), sort_keys=False)
    view = json.loads(first)
    assert [m["index"] for m in view["messages"]] == list(range(len(t.messages)))
    assert [m["origin"] for m in view["messages"]] == t.origins


# --- tau-bench --------------------------------------------------------------------------------


def test_tau_bench_quirks() -> None:
    convs = all_conversations(TAU)
    asks = [m for t in convs for m in t.messages if m.get("tool_calls")]
    assert sum(m["content"] is None for m in asks) == 1074
    assert sum(isinstance(m["content"], str) and m["content"] != "" for m in asks) == 90
    assert all(len(m["tool_calls"]) == 1 for m in asks), "the policy allows no parallel calls"
    assert len({c["function"]["name"] for m in asks for c in m["tool_calls"]}) == 14
    tool_rows = [m for t in convs for m in t.messages if m["role"] == "tool"]
    assert max(len(m["content"]) for m in tool_rows) == 8117
    assert all(isinstance(m.get("name"), str) for m in tool_rows), "tool rows keep their extra name"
    systems = {t.messages[0]["content"] for t in convs}
    assert len(systems) == 1 and len(systems.pop()) == 6155
    assert all(t.messages[0]["role"] == "system" and t.messages[1]["role"] == "user" for t in convs)
    assert all(t.tools is None and t.model is None for t in convs)
    assert convs[3].origins[5] == "[3].traj[5]"


def test_tau_bench_endings() -> None:
    convs = all_conversations(TAU)
    ends_user = [t for t in convs if t.messages[-1]["role"] == "user"]
    assert len(ends_user) == 149
    assert sum("###STOP###" in t.messages[-1]["content"] for t in ends_user) == 147
    truncated = [t for t in convs if any(r.kind == "truncated_after_tool" for r in t.irregularities)]
    assert len(truncated) == 51
    after_transfer = [t for t in truncated
                      if t.messages[-2]["tool_calls"][0]["function"]["name"] == "transfer_to_human_agents"]
    assert len(after_transfer) == 48
    capped = sorted((t.meta["task_id"], t.meta["trial"]) for t in truncated if t not in after_transfer)
    assert capped == [(2, 1), (9, 2), (33, 0)]
    assert all(len(t.messages) == 62 for t in truncated if t not in after_transfer)


def test_tau_bench_reused_ids_are_reported_not_renamed() -> None:
    convs = all_conversations(TAU)
    first = convs[0]
    reused = [r for r in first.irregularities if r.kind == "reused_tool_call_id"]
    assert reused, "episode 0 reuses call_oIHazX6yQrB8hUwl4cRilFKj"
    assert sum(1 for t in convs if any(r.kind == "reused_tool_call_id" for r in t.irregularities)) == 49
    ids = [c["id"] for m in first.messages for c in m.get("tool_calls") or ()]
    assert ids.count("call_oIHazX6yQrB8hUwl4cRilFKj") == 2
    # every result still directly follows its own call, so nothing else is reported
    assert not any(r.kind in ("result_far_from_call", "orphan_result", "duplicate_result")
                   for t in convs for r in t.irregularities)


# --- tau2-bench -------------------------------------------------------------------------------


def test_tau2_bench_mapping() -> None:
    convs = all_conversations(TAU2)
    doc = raw(TAU2)
    policy = doc["info"]["environment_info"]["policy"]
    for t in convs:
        assert t.messages[0] == {"role": "system", "content": policy}
        assert t.origins[0] == "info.environment_info.policy"
        assert t.messages[1]["role"] == "assistant", "conversations open with the agent's greeting"
        assert t.messages[-1]["role"] == "user"
        assert "###STOP###" in t.messages[-1]["content"] or "###TRANSFER###" in t.messages[-1]["content"]
        assert t.model == "gpt-4.1-mini-2025-04-14" and t.tools is None
    assert len(policy) == 7676
    t22 = next(t for t in convs if t.meta["task_id"] == "22")
    assert len(t22.messages) == 128 and sum(len(m.get("tool_calls") or ()) for m in t22.messages) == 93
    asks = [m for t in convs for m in t.messages if m.get("tool_calls")]
    assert sum(len(m["tool_calls"]) > 1 for m in asks) == 99
    assert max(len(m["tool_calls"]) for m in asks) == 6
    assert all(isinstance(json.loads(c["function"]["arguments"]), dict) for m in asks for c in m["tool_calls"])
    replies = [m["content"] for t in convs for m in t.messages if m["role"] == "assistant"]
    json_replies = [c for c in replies if isinstance(c, str) and c.lstrip().startswith("{")]
    assert len(json_replies) == 182
    tools = [m for t in convs for m in t.messages if m["role"] == "tool"]
    assert sum(m["content"].startswith("Error") for m in tools) == 6
    assert max(len(m["content"]) for m in tools) == 14880
    assert Counter(t.meta["reward"] for t in convs) == {1.0: 28, 0.0: 22}


def test_tau2_bench_arguments_are_json_dumps_of_the_object() -> None:
    doc = raw(TAU2)
    t = all_conversations(TAU2)[0]
    src = doc["simulations"][0]["messages"]
    for row, origin in zip(t.messages[1:], t.origins[1:], strict=True):
        i = int(origin.rsplit("[", 1)[1].rstrip("]"))
        for call, srccall in zip(row.get("tool_calls") or (), src[i].get("tool_calls") or (), strict=True):
            assert call["function"]["arguments"] == json.dumps(srccall["arguments"])
        if row["role"] == "tool":
            assert row["tool_call_id"] == src[i]["id"]


# --- swe-agent --------------------------------------------------------------------------------


def test_swe_agent_shape() -> None:
    (t,) = all_conversations(SWE)
    assert len(t.messages) == 24 and t.origins[23] == "history[23]"
    names = Counter(c["function"]["name"] for m in t.messages for c in m.get("tool_calls") or ())
    assert names == {"create": 1, "edit": 3, "bash": 4, "find_file": 1, "open": 1, "submit": 1}
    assert t.model == "gpt-4o" and t.tools is None
    assert len(t.messages[0]["content"]) == 1658 and len(t.messages[1]["content"]) == 3661
    assert max(len(m["content"]) for m in t.messages if m["role"] == "tool") == 9063
    assert "\r\n" in t.messages[3]["content"] and t.messages[7]["content"].rstrip().endswith("bash-$")
    ids = Counter(c["id"] for m in t.messages for c in m.get("tool_calls") or ())
    assert ids["call_5iDdbOYybq7L19vqXmR0DPaU"] == 4 and ids["call_submit"] == 1
    reuses = Counter(r.detail.split("'")[1] for r in t.irregularities if r.kind == "reused_tool_call_id")
    assert reuses == {"call_5iDdbOYybq7L19vqXmR0DPaU": 3, "call_q3VsBszvsntfyPkxeHq4i5N1": 1,
                      "call_ahToD2vM0aQWJPkRmy5cumru": 1}
    for i, m in enumerate(t.messages):  # each observation directly follows its own call
        if m["role"] == "tool":
            assert m["tool_call_id"] == t.messages[i - 1]["tool_calls"][0]["id"]


# --- letta ------------------------------------------------------------------------------------


def test_letta_storage_order_and_far_results() -> None:
    (t,) = all_conversations(LETTA)
    far = [r for r in t.irregularities if r.kind == "result_far_from_call"]
    assert [r.index for r in far] == [7, 17, 54, 73, 90]
    for r, ask in zip(far, [5, 15, 52, 71, 88], strict=True):
        assert r.index is not None and f"message {ask}" in r.detail
        assert t.messages[r.index - 1]["role"] == "system"
    assert t.origins[:3] == ["messages[0]", "messages[1]", "messages[2]"]
    assert all(isinstance(m["content"], str) for m in t.messages), "one text block becomes a string"
    calls = Counter(c["function"]["name"] for m in t.messages for c in m.get("tool_calls") or ())
    assert calls == {"send_message": 23, "core_memory_replace": 3, "core_memory_append": 2}
    assert t.model == "gpt-4-0613" and t.meta["context_window"] == 8192
    assert t.tools is not None and len(t.tools) == 6
    assert {tool["function"]["name"] for tool in t.tools} >= {"send_message", "core_memory_replace"}


def test_letta_user_envelopes_and_in_context_payload() -> None:
    (t,) = all_conversations(LETTA)
    assert t.meta["user_envelopes"] == {"heartbeat": 4, "login": 1, "system_alert": 1, "user_message": 23}
    synthetic = [r.index for r in t.irregularities if r.kind == "synthetic_user_message"]
    assert len(synthetic) == 6 and 81 in synthetic
    indices = [89, 81, 80, 82, 83, 84, 85, 86, 87, 88, 90]
    assert t.meta["in_context_message_indices"] == indices
    (payload,) = t.observed_payloads
    assert payload.origin == "in_context_message_indices"
    assert [id(m) for m in payload.messages] == [id(t.messages[i]) for i in indices]
    assert payload.turn == 28  # the 29th user row (index 87) is the last before message 90
    assert "prior messages (69 of 80 total messages) have been hidden" in t.messages[81]["content"]


def test_letta_summary_alert_is_the_observed_compaction() -> None:
    """Letta's own summarisation (message 81, the one summary alert of the file) is listed as an
    observed compaction; no other row is."""
    (t,) = all_conversations(LETTA)
    (c,) = t.compactions
    assert (c.index, c.origin) == (81, "messages[81]")
    assert c.detail.startswith("Letta summary alert")


# --- bashkit ----------------------------------------------------------------------------------


def test_bashkit_blocks_become_rows() -> None:
    convs = all_conversations(BASHKIT)
    doc = raw(BASHKIT)
    parallel = [m for t in convs for m in t.messages if len(m.get("tool_calls") or ()) > 1]
    assert len(parallel) == 23 and max(len(m["tool_calls"]) for m in parallel) == 4
    assert sum(len(t.meta.get("error_results", [])) for t in convs) == 33
    truncated = [t for t in convs if t.messages[-1]["role"] == "tool"]
    assert len(truncated) == 8 and all(t.meta["natural_stop"] is False for t in truncated)
    assert all(t.model == "claude-opus-4-6" and t.tools is None for t in convs)
    for k, t in enumerate(convs):
        src = doc["results"][k]["trace"]["messages"]
        uses = [b for m in src for b in m["content"] if b["type"] == "tool_use"]
        calls = [c for m in t.messages for c in m.get("tool_calls") or ()]
        assert [c["id"] for c in calls] == [b["id"] for b in uses]
        assert [c["function"]["arguments"] for c in calls] == [json.dumps(b["input"]) for b in uses]
        for i, m in enumerate(t.messages):  # a parallel ask is followed by all its results
            if m.get("tool_calls") and i + len(m["tool_calls"]) < len(t.messages) + 1:
                ids = [c["id"] for c in m["tool_calls"]]
                following = [r.get("tool_call_id") for r in t.messages[i + 1:i + 1 + len(ids)]]
                assert following == ids
    first = convs[0]
    assert first.origins[2] == "results[0].trace.messages[2].content[0]"
    assert first.conversations[0].label == "file_ops_project_scaffold (file_operations)"


# --- mas-lab ----------------------------------------------------------------------------------


def test_mas_lab_conversations_per_agent() -> None:
    convs = all_conversations(MASLAB)
    assert [t.conversations[t.conversation].label for t in convs] == [
        "moderator", "itinerary_agent", "schedule_agent", "concierge_agent"]
    assert all(t.conversations[t.conversation].user_turns == 1 for t in convs)
    moderator = convs[0]
    assert moderator.messages[1] == {"role": "user", "content": "What trains run from Celestia to Verdantia?"}
    assert moderator.messages[-1]["role"] == "assistant" and moderator.origins[-1].endswith(".output")
    names = Counter(c["function"]["name"] for t in convs for m in t.messages for c in m.get("tool_calls") or ())
    assert names == {"delegate_to_itinerary_agent": 1, "delegate_to_schedule_agent": 1,
                     "delegate_to_concierge_agent": 1, "query_graph_database": 1, "lookup_schedule": 2,
                     "get_fares": 5}
    fares = [m for m in convs[3].messages if m.get("tool_calls")]
    assert len(fares) == 1 and len(fares[0]["tool_calls"]) == 5, "five get_fares in one assistant message"


def test_mas_lab_observed_payloads() -> None:
    convs = all_conversations(MASLAB)
    payloads = [p for t in convs for p in t.observed_payloads]
    assert len(payloads) == 10, "20 context_assembled events, each context emitted twice"
    assert sum(len(t.meta["duplicate_context_events"]) for t in convs) == 10
    assert max(len(p.messages) for p in payloads) == 8
    assert max(n for t in convs for n in t.meta["observed_total_tokens"]) == 991
    for t in convs:
        for p in t.observed_payloads:
            assert p.turn == 0 and p.origin.startswith("line ")
            # a payload is a prefix of the flat conversation, made of the very same rows
            assert all(a is b for a, b in zip(p.messages, t.messages, strict=False))
        assert t.messages[:-1] == t.observed_payloads[-1].messages
    assert convs[0].observed_payloads[-1].origin == "line 597"
    assert convs[0].meta["duplicate_context_events"][0] == [18, 24]
