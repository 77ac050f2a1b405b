"""The ``openai`` importer: layouts, lossless round trips, irregularity reports, errors, speed.

Guards: a message changed or dropped on the way in, a pairing problem "fixed" instead of reported,
an error that does not say where (JSONL line, message index, field), and a slow path that would
make a 100 000-message transcript take minutes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from inspector.transcripts import TranscriptError, detect_format, list_conversations, parse_transcript


def ask(*calls: tuple[str, str, dict[str, Any]], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for cid, name, args in calls]}


def result(cid: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


CONVERSATION = [
    {"role": "system", "content": "You are helpful."},
    user("Weather in Paris and Rome?"),
    ask(("c1", "weather", {"city": "Paris"}), ("c2", "weather", {"city": "Rome"}), content="Checking both."),
    result("c1", "18C"),
    result("c2", "24C"),
    say("Paris 18C, Rome 24C."),
    {"role": "user", "content": [{"type": "text", "text": "And this photo?"},
                                 {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}],
     "name": "dana"},
    say("A cat."),
]


def test_list_object_and_jsonl_layouts_round_trip() -> None:
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
    as_list = parse_transcript(json.dumps(CONVERSATION), name="a.json")
    obj = {"model": "gpt-4o", "tools": tools, "messages": CONVERSATION}
    as_object = parse_transcript(json.dumps(obj), name="b.json")
    as_jsonl = parse_transcript("\n".join(json.dumps(m) for m in CONVERSATION) + "\n", name="c.jsonl")
    for t in (as_list, as_object, as_jsonl):
        assert t.format == "openai"
        assert t.messages == CONVERSATION
    assert as_list.origins[:2] == ["[0]", "[1]"]
    assert as_object.origins[2] == "messages[2]"
    assert as_object.tools == tools and as_object.model == "gpt-4o"
    assert as_jsonl.origins[-1] == f"line {len(CONVERSATION)}"
    assert as_list.tools is None and as_list.model is None


def test_parallel_calls_stay_one_ask_with_contiguous_results() -> None:
    t = parse_transcript(json.dumps(CONVERSATION), name="p.json")
    assert len(t.messages[2]["tool_calls"]) == 2
    assert [m.get("tool_call_id") for m in t.messages[3:5]] == ["c1", "c2"]
    kinds = [r.kind for r in t.irregularities]
    assert kinds == ["non_text_content"], "only the image part is unusual here"


def test_jsonl_with_blank_lines_keeps_true_line_numbers() -> None:
    text = "\n" + json.dumps(user("a")) + "\n\n   \n" + json.dumps(say("b")) + "\r\n"
    t = parse_transcript(text, name="x.jsonl")
    assert t.origins == ["line 2", "line 5"]
    assert t.messages == [user("a"), say("b")]


def test_fine_tuning_jsonl_is_one_conversation_per_line() -> None:
    lines = [{"messages": [user("a"), say("b")]}, {"messages": [user("c"), say("d"), user("e")], "tools": []}]
    data = "\n".join(json.dumps(x) for x in lines).encode()
    infos = list_conversations(data)
    assert [(c.label, c.messages, c.user_turns) for c in infos] == [("line 1", 2, 1), ("line 2", 3, 2)]
    t = parse_transcript(data, name="ft.jsonl", conversation=1)
    assert t.messages == lines[1]["messages"] and t.origins[0] == "line 2.messages[0]"


def test_usage_and_unknown_fields() -> None:
    msgs = [user("hi"), {**say("hello"), "usage": {"prompt_tokens": 12, "completion_tokens": 3}, "refusal": None,
                         "audio": None}]
    t = parse_transcript(json.dumps({"messages": msgs, "temperature": 0}), name="u.json")
    assert t.messages == [user("hi"), say("hello")]
    assert t.usage == {1: {"prompt_tokens": 12, "completion_tokens": 3}}
    assert t.meta["dropped_fields"] == {"audio": 1, "refusal": 1}
    assert t.meta["ignored_keys"] == ["temperature"]


# One row per irregularity kind: (messages, expected [(kind, index)]). Nothing may be repaired.
IRREGULAR = [
    # the same id declared twice, each answered right away (SWE-agent style)
    ([user("u"), ask(("x", "f", {})), result("x"), ask(("x", "f", {})), result("x"), say("done")],
     [("reused_tool_call_id", 3)]),
    # two calls in one message with the same id
    ([user("u"), ask(("x", "f", {}), ("x", "g", {})), result("x"), result("x"), say("done")],
     [("reused_tool_call_id", 1), ("duplicate_result", 3)]),
    # a system row between the call and its result (Letta storage order)
    ([user("u"), ask(("a", "f", {})), {"role": "system", "content": "recompiled"}, result("a"), say("ok")],
     [("result_far_from_call", 3)]),
    # a result for an id nobody declared
    ([user("u"), result("ghost"), say("ok")], [("orphan_result", 1)]),
    # the user speaks before the result (interrupted round)
    ([user("u"), ask(("a", "f", {})), user("never mind"), say("ok")], [("unanswered_call", 1)]),
    # the transcript stops right after the ask
    ([user("u"), ask(("a", "f", {}))], [("unanswered_call", 1)]),
    # the transcript stops after a result, with no reply
    ([user("u"), ask(("a", "f", {})), result("a")], [("truncated_after_tool", 2)]),
    # a role the API would reject, kept as is
    ([user("u"), {"role": "function", "content": "legacy", "name": "f"}, say("ok")], [("nonstandard_role", 1)]),
    # an image part in user content
    ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}, say("ok")],
     [("non_text_content", 0)]),
    # tool calls on a user row (tau2 lets users call tools)
    ([{"role": "user", "content": "u", "tool_calls": [{"id": "a", "type": "function",
                                                        "function": {"name": "f", "arguments": "{}"}}]},
      result("a"), say("ok")], [("tool_calls_on_non_assistant", 0)]),
    # a clean conversation reports nothing
    (CONVERSATION[:6], []),
]


@pytest.mark.parametrize(("messages", "expected"), IRREGULAR)
def test_irregularities_are_reported_and_kept(messages: list[dict[str, Any]], expected: list[tuple[str, int]]) -> None:
    t = parse_transcript(json.dumps(messages), name="irr.json")
    assert t.messages == messages, "importing must not repair anything"
    assert [(r.kind, r.index) for r in t.irregularities] == expected
    assert all(r.detail for r in t.irregularities)


def test_unanswered_call_detail_names_what_came_next() -> None:
    t = parse_transcript(json.dumps([user("u"), ask(("a", "f", {})), user("stop")]), name="i.json")
    (irr,) = t.irregularities
    assert "'a'" in irr.detail and "next message 2 is 'user'" in irr.detail


# (input, expected error text)
ERRORS = [
    (json.dumps([user("u"), {"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}]),
     "demo.json: message 1: tool_calls[0].function.arguments must be a string"),
    (json.dumps([user("u"), {"role": "tool", "content": "x"}]),
     "demo.json: message 1: tool result without tool_call_id"),
    (json.dumps([user("u"), {"content": "no role"}]), "demo.json: message 1: role is missing"),
    (json.dumps([{"role": "user", "content": 5}]), "demo.json: message 0: content must be a string"),
    (json.dumps([{"role": "user", "content": ["text"]}]), "demo.json: message 0: content[0] must be an object"),
    (json.dumps([user("u"), "hello"]), "demo.json: message 1: must be an object"),
    (json.dumps([user("u"), ask(("a", "f", {}))]).replace('"id": "a", ', ""),
     "demo.json: message 1: tool_calls[0].id is missing"),
    (json.dumps({"messages": {"role": "user"}}), "demo.json: messages must be a list"),
    (json.dumps({"messages": [user("u")], "tools": {"a": 1}}), "demo.json: tools must be a list"),
    (json.dumps({"messages": [user("u")], "tools": [{"type": "function", "function": {}}]}),
     "demo.json: tools[0].function.name is missing"),
]


@pytest.mark.parametrize(("data", "message"), ERRORS)
def test_errors_name_the_message_and_field(data: str, message: str) -> None:
    with pytest.raises(TranscriptError) as err:
        parse_transcript(data, name="demo.json", format="openai")
    assert str(err.value).startswith(message)


@pytest.mark.parametrize(("lines", "line", "text"), [
    ([json.dumps(user("a")), json.dumps(say("b")), '{"role": "user", "content": '], 3, "invalid JSON"),
    ([json.dumps(user("a")), json.dumps({"role": "assistant", "content": 7})], 2, "content must be"),
    ([json.dumps(user("a")), "", json.dumps({"role": "tool", "content": "x"})], 3, "tool result without tool_call_id"),
    ([json.dumps(user("a")), "[1, 2]"], 2, "must be an object"),
    ([json.dumps(user("a")), json.dumps(user("b")) + " trailing"], 2, "invalid JSON"),
])
def test_jsonl_errors_name_the_line(lines: list[str], line: int, text: str) -> None:
    with pytest.raises(TranscriptError) as err:
        parse_transcript("\n".join(lines), name="chat.jsonl")
    assert err.value.line == line
    assert str(err.value).startswith(f"chat.jsonl: line {line}: ")
    assert text in str(err.value)


def test_detection_prefers_openai_for_role_lists() -> None:
    assert detect_format(json.dumps(CONVERSATION)) == "openai"
    assert detect_format(json.dumps({"messages": CONVERSATION})) == "openai"
    assert detect_format(json.dumps(user("one line of JSONL"))) == "openai"


def test_hundred_thousand_message_jsonl_imports_whole_and_clean() -> None:
    """A 100 000-message log imports every row with its line origin and no irregularity (its speed is a
    benchmark concern: tests never assert wall-clock times)."""
    rows: list[str] = []
    for i in range(25_000):
        rows.append(json.dumps(user(f"question {i}")))
        rows.append(json.dumps(ask((f"call_{i}", "lookup", {"q": i, "page": 1}))))
        rows.append(json.dumps(result(f"call_{i}", "result text " * 8)))
        rows.append(json.dumps(say(f"answer {i}")))
    data = ("\n".join(rows) + "\n").encode()
    t = parse_transcript(data, name="big.jsonl")
    assert len(t.messages) == 100_000 and t.origins[-1] == "line 100000"
    assert t.irregularities == []
