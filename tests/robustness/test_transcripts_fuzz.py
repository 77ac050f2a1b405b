"""Fuzz: any input yields a Transcript or a TranscriptError, never another exception.

Guards the importers' one error contract (the CLI and the app show TranscriptError text to the
user; anything else would be a traceback) and the invariants every successful import keeps: one
origin per message, only chat-completions keys, a listing that agrees with what selection yields,
and a JSON view that serialises. Strategies go from raw bytes to skeletons of each format filled
with message-like junk, so the deep paths of every importer are reached.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.transcripts import (
    Transcript,
    TranscriptError,
    list_conversations,
    list_formats,
    parse_transcript,
    transcript_to_json,
)

# FUZZ_EXAMPLES=3000 for a longer local hunt; the default keeps the suite fast.
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
ALLOWED_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}

KEYS = ["role", "content", "tool_calls", "tool_call_id", "tool_call_ids", "id", "name", "type", "text",
        "function", "arguments", "input", "tool_use_id", "is_error", "messages", "system", "tools", "model",
        "usage", "kind", "agent_id", "llm_call_id", "call_id", "output", "next_step", "traj", "simulations",
        "history", "results", "trace", "task", "info", "in_context_message_indices", "llm_config"]
ROLES = st.sampled_from(["user", "assistant", "tool", "system", "tool_result", "function", "developer", ""])
BLOCK_TYPES = st.sampled_from(["text", "tool_use", "tool_result", "image", "thinking", "image_url", ""])
short_text = st.text(max_size=12)
scalars = st.none() | st.booleans() | st.integers(-3, 100) | st.floats(allow_nan=True) | short_text

json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(KEYS) | short_text, inner, max_size=5),
    max_leaves=25,
)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The strategy, or null, or any JSON value: the wrong type in the right place."""
    return st.none() | strategy | json_values


small_dicts = st.dictionaries(short_text, scalars, max_size=2)
text_parts = st.lists(st.fixed_dictionaries({"type": BLOCK_TYPES, "text": short_text}), max_size=2)
blocks = st.fixed_dictionaries({"type": BLOCK_TYPES}, optional={
    "text": maybe(short_text), "id": maybe(short_text), "name": maybe(short_text), "input": maybe(small_dicts),
    "tool_use_id": maybe(short_text), "content": maybe(short_text | text_parts), "is_error": st.booleans()})
functions = st.fixed_dictionaries({}, optional={"name": maybe(short_text), "arguments": maybe(short_text)})
calls = st.fixed_dictionaries({}, optional={
    "id": maybe(short_text), "type": st.just("function"), "name": maybe(short_text),
    "arguments": maybe(short_text | small_dicts), "function": maybe(functions)})
message_dicts = st.fixed_dictionaries({"role": ROLES}, optional={
    "content": st.none() | short_text | st.lists(blocks, max_size=3) | st.integers(),
    "tool_calls": st.none() | st.lists(calls, max_size=3),
    "tool_call_id": maybe(short_text), "id": maybe(short_text),
    "tool_call_ids": maybe(st.lists(short_text, max_size=2)),
    "name": maybe(short_text), "usage": maybe(st.dictionaries(short_text, st.integers(), max_size=2))})
messages = st.lists(message_dicts | json_values, max_size=6)

skeletons = st.one_of(
    st.builds(lambda m: [{"task_id": 1, "trial": 0, "reward": 1.0, "traj": m}], messages),
    st.builds(lambda m, p: {"info": {"environment_info": {"policy": p}}, "tasks": [], "simulations": [{"messages": m}]},
              messages, maybe(short_text)),
    st.builds(lambda m: {"trajectory": [], "history": m, "replay_config": "{}"}, messages),
    st.builds(lambda m, ix: {"agent_type": "memgpt_agent", "messages": m, "in_context_message_indices": ix,
                             "llm_config": {"model": "x"}}, messages, maybe(st.lists(st.integers(-1, 6), max_size=4))),
    st.builds(lambda m, s: {"model": "m", "results": [{"task": {"id": "t", "system": s}, "trace": {"messages": m}}]},
              messages, maybe(short_text)),
    st.builds(lambda m, s, t: {"system": s, "tools": t, "messages": m},
              messages, maybe(short_text), maybe(st.lists(json_values, max_size=2))),
    st.builds(lambda m: {"messages": m}, messages),
    messages,
)

# the trace, agent-file, eval and event importers: their containers, with the same junk inside
parts = st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_call", "tool_call_response", "x"])},
                                       optional={"content": maybe(short_text), "id": maybe(short_text),
                                                 "name": maybe(short_text), "arguments": maybe(small_dicts),
                                                 "response": maybe(short_text)}), max_size=3)
semconv_messages = st.lists(st.fixed_dictionaries({"role": ROLES}, optional={"parts": maybe(parts),
                                                                               "content": maybe(short_text)})
                            | json_values, max_size=4)
attribute_values = (st.builds(lambda v: {"stringValue": json.dumps(v)}, semconv_messages | messages)
                    | st.builds(lambda v: {"stringValue": v}, short_text)
                    | st.builds(lambda v: {"intValue": v}, st.integers(-2, 50) | short_text) | json_values)
attribute_keys = st.sampled_from(["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                                  "gen_ai.tool.definitions", "gen_ai.prompt.0.role", "gen_ai.prompt.0.content",
                                  "gen_ai.completion.0.role", "gen_ai.completion.0.tool_calls.0.name",
                                  "llm.input_messages.0.message.role", "llm.output_messages.0.message.content",
                                  "llm.tools.0.tool.json_schema", "llm.request.functions.0.parameters",
                                  "gen_ai.usage.input_tokens", "gen_ai.conversation.id", "gen_ai.operation.name"])
spans = st.fixed_dictionaries({"attributes": st.lists(st.fixed_dictionaries({"key": attribute_keys,
                                                                               "value": attribute_values}), max_size=6)
                                             | json_values},
                              optional={"traceId": maybe(short_text), "spanId": maybe(short_text),
                                        "startTimeUnixNano": maybe(short_text | st.integers())})
otlp = st.builds(lambda s: {"resourceSpans": [{"scopeSpans": [{"spans": s}]}]}, st.lists(spans | json_values, max_size=4))
letta_current = st.builds(
    lambda m, ids, tools, tool_ids: {"agents": [{"name": "a", "messages": m, "in_context_message_ids": ids,
                                                 "tool_ids": tool_ids, "llm_config": {"model": "x"}}],
                                     "tools": tools, "blocks": []},
    messages, maybe(st.lists(short_text, max_size=3)), maybe(st.lists(json_values, max_size=2)),
    maybe(st.lists(short_text, max_size=2)))
model_events = st.fixed_dictionaries({"event": st.sampled_from(["model", "compaction", "x"])}, optional={
    "input": maybe(messages), "input_refs": maybe(st.lists(st.lists(st.integers(-2, 6), max_size=3), max_size=2)),
    "output": maybe(st.fixed_dictionaries({}, optional={"choices": maybe(st.lists(st.fixed_dictionaries(
        {}, optional={"message": maybe(message_dicts)}), max_size=2)), "usage": maybe(small_dicts)})),
    "tools": maybe(st.lists(json_values, max_size=2)), "model": maybe(short_text)})
inspect_logs = st.builds(
    lambda m, ev, pool, att, ver: {"version": 2, "status": "success",
                                   "eval": {"task": "t", "model": "openai/m", "packages": {"inspect_ai": ver}},
                                   "samples": [{"id": 1, "epoch": 1, "messages": m, "events": ev,
                                                "events_data": {"messages": pool, "calls": []}, "attachments": att}]},
    messages, maybe(st.lists(model_events | json_values, max_size=4)), maybe(messages),
    maybe(st.dictionaries(short_text, short_text, max_size=2)), maybe(short_text))
oh_events = st.lists(st.fixed_dictionaries({"source": st.sampled_from(["user", "agent", "environment"])}, optional={
    "id": maybe(st.integers(0, 9)), "action": st.sampled_from(["message", "run", "finish", "system", "condensation"]),
    "observation": st.sampled_from(["run", "null"]), "args": maybe(small_dicts), "content": maybe(short_text),
    "tool_call_metadata": maybe(st.fixed_dictionaries({}, optional={
        "tool_call_id": maybe(short_text), "function_name": maybe(short_text),
        "model_response": maybe(st.fixed_dictionaries({}, optional={
            "id": maybe(short_text), "usage": maybe(small_dicts),
            "choices": maybe(st.lists(st.fixed_dictionaries({}, optional={"message": maybe(message_dicts)}),
                                      max_size=2))}))}))}) | json_values, min_size=1, max_size=6)
new_skeletons = st.one_of(otlp, letta_current, inspect_logs, oh_events)
cc_lines = st.lists(st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system", "file-history-snapshot"]), "sessionId": st.just("s")},
    optional={"subtype": st.just("compact_boundary"), "isMeta": st.booleans(), "isSidechain": st.booleans(),
              "compactMetadata": maybe(small_dicts),
              "message": maybe(st.fixed_dictionaries({"role": ROLES}, optional={
                  "content": maybe(st.sampled_from(["<command-name>/x</command-name>", "This session is being "
                                                    "continued from a previous conversation"]) | st.lists(blocks, max_size=2)),
                  "id": maybe(st.sampled_from(["m1", "m2"])), "usage": maybe(small_dicts)}))}), min_size=1, max_size=6)
litellm_rows = st.lists(st.builds(
    lambda m, r, p, st_: {"call_type": "completion", "status": st_, "messages": m, "response": r, "model_parameters": p},
    messages | json_values, maybe(st.fixed_dictionaries({}, optional={"choices": maybe(st.lists(
        st.fixed_dictionaries({}, optional={"message": maybe(message_dicts)}), max_size=2)),
        "usage": maybe(small_dicts)})), maybe(small_dicts), st.sampled_from(["success", "failure"])) | json_values,
    min_size=1, max_size=4)

event = st.fixed_dictionaries(
    {"kind": st.sampled_from(["context_assembled", "llm_call_end", "x"]),
     "agent_id": st.sampled_from(["a", "b"]) | json_values},
    optional={"messages": messages | short_text, "llm_call_id": st.sampled_from(["", "c1", "c2"]),
              "call_id": st.sampled_from(["c1", "c2"]), "output": maybe(short_text),
              "next_step": st.sampled_from(["STOP", "TOOL_CALL"])})
mas_events = st.lists(event | json_values, min_size=1, max_size=6)
fine_tuning_rows = st.lists(json_values | messages.map(lambda m: {"messages": m}), min_size=1, max_size=5)


def check(data: bytes | str, fmt: str | None) -> None:
    """The contract: a Transcript that keeps the invariants, or a TranscriptError."""
    try:
        t = parse_transcript(data, name="fuzz", format=fmt)
    except TranscriptError as err:
        assert str(err)
        # the last-resort guard in api.py chains the unexpected exception; importers never do
        assert err.__cause__ is None, f"unforeseen {type(err.__cause__).__name__} behind: {err}"
        return
    assert isinstance(t, Transcript)
    assert len(t.messages) == len(t.origins)
    assert all(isinstance(o, str) and o for o in t.origins)
    for m in t.messages:
        assert set(m) <= ALLOWED_KEYS and "role" in m and "content" in m
    for r in t.irregularities:
        assert r.index is None or 0 <= r.index < len(t.messages)
    info = t.conversations[t.conversation]
    assert (info.messages, info.user_turns) == (len(t.messages), sum(m["role"] == "user" for m in t.messages))
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    assert list_conversations(raw, format=fmt, name="fuzz") == t.conversations
    json.dumps(transcript_to_json(t))


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes(data: bytes) -> None:
    check(data, None)


@FUZZ
@given(json_values, st.sampled_from([None, *list_formats()]))
def test_arbitrary_json(value: Any, fmt: str | None) -> None:
    check(json.dumps(value), fmt)


@FUZZ
@given(skeletons, st.sampled_from([None, *list_formats()]))
def test_format_skeletons_with_junk_messages(value: Any, fmt: str | None) -> None:
    check(json.dumps(value), fmt)


@FUZZ
@given(new_skeletons, st.sampled_from([None, "otel-genai", "letta", "inspect-ai", "openhands"]))
def test_trace_agent_file_eval_and_event_skeletons_with_junk(value: Any, fmt: str | None) -> None:
    check(json.dumps(value), fmt)


@FUZZ
@given(litellm_rows | st.lists(otlp, min_size=1, max_size=3) | cc_lines,
       st.sampled_from([None, "litellm", "otel-genai", "claude-code"]))
def test_litellm_otlp_and_claude_code_json_lines(rows: list[Any], fmt: str | None) -> None:
    check("\n".join(json.dumps(r) for r in rows), fmt)


@FUZZ
@given(mas_events | fine_tuning_rows, st.sampled_from([None, "openai", "mas-lab"]))
def test_json_lines(rows: list[Any], fmt: str | None) -> None:
    check("\n".join(json.dumps(r) for r in rows), fmt)


@FUZZ
@given(st.text(max_size=200))
def test_arbitrary_text(text: str) -> None:
    check(text, None)
