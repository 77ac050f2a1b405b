"""The ``anthropic`` importer: content blocks → chat-completions rows.

Guards the mapping rules stated in the module docstring: a parallel ask stays ONE ask, the single
message answering it becomes N tool rows, results-plus-text becomes tool rows then a user row,
``input`` is serialised exactly as ``json.dumps`` does, and anything that is not text is kept as
parts, never flattened or dropped.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from inspector.transcripts import TranscriptError, detect_format, list_conversations, parse_transcript


def doc(messages: list[Any], **top: Any) -> str:
    return json.dumps({"model": "claude-x", **top, "messages": messages})


def tool_use(cid: str, name: str, inp: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": name, "input": inp}


def tool_result(cid: str, content: Any = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": cid, "content": content, **extra}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def test_parallel_tool_use_and_grouped_results() -> None:
    messages = [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": [text("Checking both."), tool_use("t1", "weather", {"city": "Paris"}),
                                          tool_use("t2", "weather", {"city": "Rome"})]},
        {"role": "user", "content": [tool_result("t1", "18C"), tool_result("t2", [text("24C")])]},
        {"role": "assistant", "content": [text("Paris 18C, Rome 24C.")]},
    ]
    t = parse_transcript(doc(messages, system="Be brief."), name="a.json")
    assert t.format == "anthropic" and t.model == "claude-x"
    assert t.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": "Checking both.", "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}},
            {"id": "t2", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Rome"}'}}]},
        {"role": "tool", "content": "18C", "tool_call_id": "t1"},
        {"role": "tool", "content": "24C", "tool_call_id": "t2"},
        {"role": "assistant", "content": "Paris 18C, Rome 24C."},
    ]
    assert t.origins == ["system", "messages[0]", "messages[1]", "messages[2].content[0]",
                         "messages[2].content[1]", "messages[3]"]
    assert t.irregularities == []


def test_results_mixed_with_text_become_tool_rows_then_a_user_row() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tool_use("t1", "f", {})]},
        {"role": "user", "content": [tool_result("t1", "done"), text("Thanks, now also do X.")]},
    ]
    t = parse_transcript(doc(messages), name="m.json", format="anthropic")
    assert [m["role"] for m in t.messages] == ["user", "assistant", "tool", "user"]
    assert t.messages[1]["content"] is None, "an ask with no text has no content"
    assert t.messages[3] == {"role": "user", "content": "Thanks, now also do X."}
    assert t.origins[2:] == ["messages[2].content[0]", "messages[2].content[1]"]


def test_input_is_serialised_with_json_dumps_defaults() -> None:
    inp = {"z": 1, "a": [1, 2], "name": "Zoë", "nested": {"b": None, "a": True}}
    t = parse_transcript(doc([{"role": "user", "content": "x"},
                              {"role": "assistant", "content": [tool_use("t", "f", inp)]}]), name="j.json")
    assert t.messages[1]["tool_calls"][0]["function"]["arguments"] == json.dumps(inp)
    assert json.dumps(inp) == '{"z": 1, "a": [1, 2], "name": "Zo\\u00eb", "nested": {"b": null, "a": true}}'


def test_non_text_blocks_are_kept_as_parts_and_reported() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    messages = [
        {"role": "user", "content": [text("What is this?"), image]},
        {"role": "assistant", "content": [thinking, text("A PNG.")]},
        {"role": "user", "content": [text("one"), text("two")]},
    ]
    t = parse_transcript(doc(messages), name="n.json")
    assert t.messages[0]["content"] == [text("What is this?"), image]
    assert t.messages[1]["content"] == [thinking, text("A PNG.")]
    assert t.messages[2]["content"] == [text("one"), text("two")], "several text blocks are not joined"
    assert [(r.kind, r.index) for r in t.irregularities] == [("non_text_content", 0), ("non_text_content", 1)]


def test_system_as_blocks_and_tool_definitions() -> None:
    tools = [{"name": "weather", "description": "Forecast.", "input_schema": {"type": "object", "properties": {}}},
             {"type": "web_search_20250305", "name": "web_search"}]
    t = parse_transcript(doc([{"role": "user", "content": "hi"}], system=[text("Rule one."), text("Rule two.")],
                             tools=tools), name="s.json")
    assert t.messages[0] == {"role": "system", "content": [text("Rule one."), text("Rule two.")]}
    assert t.tools == [{"type": "function", "function": {"name": "weather", "description": "Forecast.",
                                                         "parameters": {"type": "object", "properties": {}}}},
                       {"type": "web_search_20250305", "name": "web_search"}]


def test_is_error_results_are_listed_in_meta() -> None:
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [tool_use("t1", "f", {}), tool_use("t2", "f", {})]},
                {"role": "user", "content": [tool_result("t1", "boom", is_error=True), tool_result("t2")]}]
    t = parse_transcript(doc(messages), name="e.json")
    assert t.meta["error_results"] == [2]


def test_interrupted_ask_followed_by_user_text() -> None:
    messages = [{"role": "user", "content": "bag?"},
                {"role": "assistant", "content": [text("Checking."), tool_use("t1", "bags", {})]},
                {"role": "user", "content": "never mind"}]
    t = parse_transcript(doc(messages), name="i.json")
    assert [(r.kind, r.index) for r in t.irregularities] == [("unanswered_call", 1)]
    assert t.messages[2] == {"role": "user", "content": "never mind"}


def test_unknown_role_with_result_blocks_is_converted_and_reported() -> None:
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [tool_use("t1", "bash", {"commands": "ls"})]},
                {"role": "tool_result", "content": [tool_result("t1", "a.txt", is_error=False)]},
                {"role": "assistant", "content": [text("One file.")]}]
    t = parse_transcript(doc(messages), name="r.json", format="anthropic")
    assert t.messages[2] == {"role": "tool", "content": "a.txt", "tool_call_id": "t1"}
    assert [(r.kind, r.index) for r in t.irregularities] == [("nonstandard_role", 2)]


def test_listing_counts_rows_not_source_messages() -> None:
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [tool_use("a", "f", {}), tool_use("b", "f", {})]},
                {"role": "user", "content": [tool_result("a"), tool_result("b"), text("and?")]}]
    (info,) = list_conversations(doc(messages, system="s").encode())
    assert (info.messages, info.user_turns) == (6, 2)
    assert len(parse_transcript(doc(messages, system="s")).messages) == 6


@pytest.mark.parametrize(("messages", "expected"), [
    ([{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}],
     "x.json: message 0: content[0].tool_use_id is missing"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "ls"}]}],
     "x.json: message 0: content[0].input must be an object"),
    ([{"role": "user", "content": [{"type": "text"}]}], "x.json: message 0: content[0].text is missing"),
    ([{"role": "user", "content": [{"text": "no type"}]}], "x.json: message 0: content[0].type must be a string"),
    ([{"role": "user", "content": 3}], "x.json: message 0: content must be a string or a list"),
    ([{"role": "user"}], "x.json: message 0: content is missing"),
    (["hi"], "x.json: message 0: must be an object"),
])
def test_errors_name_the_message_and_block(messages: list[Any], expected: str) -> None:
    with pytest.raises(TranscriptError) as err:
        parse_transcript(doc(messages), name="x.json", format="anthropic")
    assert str(err.value).startswith(expected)


def test_detection_tells_anthropic_from_openai() -> None:
    blocks = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [tool_use("t", "f", {})]}]
    assert detect_format(json.dumps({"messages": blocks})) == "anthropic"
    assert detect_format(json.dumps({"system": "s", "messages": [{"role": "user", "content": "hi"}]})) == "anthropic"
    assert detect_format(json.dumps(blocks)) == "anthropic"
    openai_like = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    assert detect_format(json.dumps({"messages": openai_like})) == "openai"
    # plain text-only conversations are claimed by openai; both importers agree on them anyway
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert detect_format(json.dumps({"messages": plain})) == "openai"
    assert (parse_transcript(json.dumps({"messages": plain}), format="anthropic").messages
            == parse_transcript(json.dumps({"messages": plain}), format="openai").messages)
