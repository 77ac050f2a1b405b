"""The ``otel-genai`` importer: OTLP JSON trace exports in the three GenAI attribute conventions.

Files (tests/data/transcripts/, built from public documentation, see docs/SAMPLE_LOGS.md):
``otel-semconv.otlp.json`` holds the "Tool calls (functions)" and "System instructions" examples of
the GenAI semantic conventions (docs/gen-ai/non-normative/examples-llm-calls.md) with their
attribute values as documented; ``otel-openllmetry.otlp.jsonl`` two OpenLLMetry chat spans (one
export request per line); ``otel-openinference.otlp.json`` two OpenInference LLM spans of one
session in two traces.
Guards: detection; each call's input is an observed payload whose reply is its output row; a call
extending the previous one continues the conversation; grouping by trace, else by
``gen_ai.conversation.id``/``session.id``; usage in the inclusive ``prompt_tokens`` shape calibration
reads; errors name the file, line and span.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.calibration import calibrate, provider_input_tokens
from inspector.transcripts import TranscriptError, detect_format, list_conversations, load_transcript, parse_transcript

DATA = Path(__file__).parents[1] / "data" / "transcripts"
SEMCONV = DATA / "otel-semconv.otlp.json"
OPENLLMETRY = DATA / "otel-openllmetry.otlp.jsonl"
OPENINFERENCE = DATA / "otel-openinference.otlp.json"


def test_otlp_exports_are_detected() -> None:
    for path in (SEMCONV, OPENLLMETRY, OPENINFERENCE):
        assert detect_format(path.read_bytes(), "trace.json") == "otel-genai"


def test_semconv_spans_of_one_trace_are_one_conversation_and_traces_are_separate() -> None:
    infos = list_conversations(SEMCONV)
    assert [(c.label, c.messages, c.user_turns) for c in infos] == [
        ("trace 4bf92f3577b34da6a3ce929d0e0e4736", 4, 1), ("trace 5bf92f3577b34da6a3ce929d0e0e4737", 4, 1)]


def test_semconv_parts_become_rows_and_each_call_is_an_observed_payload() -> None:
    t = load_transcript(SEMCONV)
    call = {"id": "call_VSPygqKTWdrhaFErNvMV18Yl", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'}}
    assert t.messages == [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "content": "rainy, 57°F", "tool_call_id": "call_VSPygqKTWdrhaFErNvMV18Yl"},
        {"role": "assistant", "content": "The weather in Paris is currently rainy with a temperature of 57°F."},
    ]
    assert t.origins[1] == "resourceSpans[0].scopeSpans[0].spans[0].output[0]"
    assert t.origins[2] == "resourceSpans[0].scopeSpans[0].spans[2].input[2]"
    assert [(p.label, p.reply, len(p.messages)) for p in t.observed_payloads] == [
        ("span 00f067aa0ba902b7", 1, 1), ("span 00f067aa0ba902b9", 3, 3)]
    # usage as documented: input 47 then 97, output 17 then 52
    assert t.usage == {1: {"prompt_tokens": 47, "completion_tokens": 17}, 3: {"prompt_tokens": 97, "completion_tokens": 52}}
    assert t.tools is not None and t.tools[0]["function"]["name"] == "get_current_weather"
    assert t.model == "gpt-4-0613" and t.meta["other_spans"] == 1  # the execute_tool span


def test_system_instructions_come_first_in_the_payload() -> None:
    t = load_transcript(SEMCONV, conversation=1)
    assert [(m["role"], m["content"]) for m in t.messages[:2]] == [
        ("system", "You must never tell jokes"), ("system", "You are a helpful bot")]
    assert t.observed_payloads[0].messages == t.messages[:3]


def test_openllmetry_flattened_attributes_one_request_per_line() -> None:
    t = load_transcript(OPENLLMETRY)
    assert [m["role"] for m in t.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert t.messages[2]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    assert t.messages[3] == {"role": "tool", "content": "snow, -3 C", "tool_call_id": "call_1"}
    assert t.origins[3] == "line 2.resourceSpans[0].scopeSpans[0].spans[0].input[3]"
    assert t.usage[4] == {"prompt_tokens": 88, "completion_tokens": 11, "prompt_tokens_details": {"cached_tokens": 64}}
    assert t.tools == [{"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def test_openinference_spans_group_by_session_across_traces() -> None:
    (info,) = list_conversations(OPENINFERENCE)
    assert info.label == "conversation sess-42"
    t = load_transcript(OPENINFERENCE)
    assert [m["role"] for m in t.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert t.messages[1]["content"] == "Define 'gnomon'."  # from message.contents.0.message_content.text
    assert t.messages[2]["tool_calls"][0]["id"] == "toolu_01"
    # llm.token_count.prompt includes the cache read (prompt_details.cache_read)
    assert provider_input_tokens(t.usage[4]) == 470 and t.usage[4]["prompt_tokens_details"] == {"cached_tokens": 380}
    assert t.tools is not None and t.tools[0]["function"]["name"] == "lookup"


def test_usage_reaches_calibration_as_the_request_as_logged() -> None:
    calls = calibrate(load_transcript(SEMCONV)).calls
    assert calls["provider_tokens"].tolist() == [47, 97]
    assert calls["payload"].tolist() == ["request as logged", "request as logged"]


def test_a_call_that_does_not_extend_the_conversation_starts_another() -> None:
    doc: dict[str, Any] = json.loads(SEMCONV.read_text(encoding="utf-8"))
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[3]["traceId"] = spans[0]["traceId"]  # the system-instructions call, now in the first trace, last
    infos = list_conversations(json.dumps(doc).encode())
    assert [c.label for c in infos] == ["trace 4bf92f3577b34da6a3ce929d0e0e4736 part 1",
                                        "trace 4bf92f3577b34da6a3ce929d0e0e4736 part 2"]


def test_errors_name_the_file_line_and_span() -> None:
    lines = OPENLLMETRY.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[1])
    attrs = bad["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    attrs.append({"key": "gen_ai.usage.prompt_tokens", "value": {"intValue": "many"}})
    with pytest.raises(TranscriptError, match=r"t\.jsonl: line 2: resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]"
                                              r"\.attributes\[\d+\]\.value\.intValue must be an integer"):
        parse_transcript(lines[0] + "\n" + json.dumps(bad) + "\n", name="t.jsonl")
    doc = json.loads(SEMCONV.read_text(encoding="utf-8"))
    span = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    next(a for a in span["attributes"] if a["key"] == "gen_ai.input.messages")["value"] = {"stringValue": "[{"}
    with pytest.raises(TranscriptError, match=r"t\.json: resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]: "
                                              r"attribute gen_ai\.input\.messages is not valid JSON"):
        parse_transcript(json.dumps(doc), name="t.json")


def test_openllmetry_list_content_written_as_json_is_read_back_as_parts() -> None:
    """OpenLLMetry json.dumps a list content: one text part reads back as its text, other parts stay parts."""
    lines = OPENLLMETRY.read_text(encoding="utf-8").splitlines()
    doc = json.loads(lines[0])
    attrs = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    content = next(a for a in attrs if a["key"] == "gen_ai.prompt.1.content")
    content["value"] = {"stringValue": json.dumps([{"type": "text", "text": "Weather in Oslo?"}])}
    assert parse_transcript(json.dumps(doc), name="t.json").messages[1]["content"] == "Weather in Oslo?"
    parts = [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]
    content["value"] = {"stringValue": json.dumps(parts)}
    t = parse_transcript(json.dumps(doc), name="t.json")
    assert t.messages[1]["content"] == parts
    assert ("non_text_content", 1) in {(r.kind, r.index) for r in t.irregularities}


def test_an_agent_span_repeating_the_messages_is_not_a_model_call() -> None:
    doc: dict[str, Any] = json.loads(SEMCONV.read_text(encoding="utf-8"))
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    agent = json.loads(json.dumps(spans[2]))  # the second chat span's messages, on an invoke_agent span
    agent["spanId"] = "00f067aa0ba902ba"
    for a in agent["attributes"]:
        if a["key"] == "gen_ai.operation.name":
            a["value"] = {"stringValue": "invoke_agent"}
    spans.insert(0, agent)
    t = parse_transcript(json.dumps(doc), name="t.json")
    assert [p.label for p in t.observed_payloads] == ["span 00f067aa0ba902b7", "span 00f067aa0ba902b9"]
    assert t.meta["other_spans"] == 2 and len(t.conversations) == 2


@pytest.mark.parametrize("value", [{"arrayValue": {"values": [{"stringValue": "chat"}]}}, {"intValue": "3"}])
def test_an_operation_name_that_is_not_a_string_is_an_error_naming_the_span(value: dict[str, Any]) -> None:
    """``gen_ai.operation.name`` is a string in the conventions; an array or a number there is named as
    such (it used to stop the import with an internal TypeError for an array)."""
    attrs = [{"key": "gen_ai.operation.name", "value": value},
             {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps([{"role": "user", "content": "hi"}])}}]
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "s", "attributes": attrs}]}]}]}
    with pytest.raises(TranscriptError, match=r"t\.json: resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]: "
                                              r"attribute gen_ai\.operation\.name must be a string"):
        parse_transcript(json.dumps(doc), name="t.json")


def test_a_tool_call_response_written_with_result_reads_the_same() -> None:
    """The attribute registry's own example writes ``result`` where the JSON schema says ``response``."""
    text = SEMCONV.read_text(encoding="utf-8").replace('\\"response\\": \\"rainy', '\\"result\\": \\"rainy')
    assert '\\"result\\": \\"rainy' in text
    t = parse_transcript(text, name="t.json")
    assert t.messages[2] == {"role": "tool", "content": "rainy, 57°F", "tool_call_id": "call_VSPygqKTWdrhaFErNvMV18Yl"}


def test_messages_written_in_the_chat_completions_shape_are_read_as_such() -> None:
    """Some instrumentations put ``[{role, content}]`` (no ``parts``) in ``gen_ai.input.messages``."""
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    output = [{"role": "assistant", "content": "Paris."}]
    attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
             {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(messages)}},
             {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(output)}},
             {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "14"}}]
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "s", "attributes": attrs}]}]}]}
    t = parse_transcript(json.dumps(doc), name="t.json")
    assert t.messages == [*messages, *output] and t.usage == {1: {"prompt_tokens": 14}}
    attrs[1]["value"] = {"stringValue": json.dumps([{"role": "user", "content": 3}])}
    with pytest.raises(TranscriptError, match=r"t\.json: resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]: "
                                              r"gen_ai\.input\.messages\[0\]: content must be"):
        parse_transcript(json.dumps(doc), name="t.json")
