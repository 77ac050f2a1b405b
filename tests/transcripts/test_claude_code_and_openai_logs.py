"""The ``claude-code`` and ``openai-log`` importers, on the bundled sample logs built to the
formats' public descriptions (docs/SAMPLE_LOGS.md) and on small inline cases.

Guards: one API response split over several Claude Code lines is ONE assistant row whose usage is
kept once; tool results become tool rows; side-chain and bookkeeping lines are skipped and counted;
Claude Code's compaction summary is an observed compaction; an OpenAI log's calls chain into one
conversation while each request extends the previous one, each request is kept as the observed
payload of its reply, and usage sits at the reply's row. Bad lines are errors naming the line.
Property: a response split over any number of lines imports exactly as the same response on one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.transcripts import (
    TranscriptError,
    detect_format,
    list_conversations,
    load_transcript,
    parse_transcript,
    sample_path,
)

CC = sample_path("demo_session.claude-code.jsonl")  # fields and their sources: docs/SAMPLE_LOGS.md
OAI = sample_path("demo_calls.openai-log.jsonl")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def jsonl(values: list[Any]) -> str:
    return "\n".join(json.dumps(v) for v in values) + "\n"


# --- claude-code -------------------------------------------------------------------------------------

def test_claude_code_is_detected() -> None:
    assert detect_format(CC.read_bytes(), CC.name) == "claude-code"


def test_claude_code_rows_follow_the_conversation_lines() -> None:
    raw = lines(CC)
    t = load_transcript(CC)
    main = [(n, v) for n, v in enumerate(raw, start=1)
            if v.get("type") in ("user", "assistant") and not v.get("isSidechain")]
    # expected rows built independently: assistant lines sharing message.id merge; tool_result → tool row
    expected: list[tuple[str, str]] = []
    last_id = None
    for n, v in main:
        m = v["message"]
        if v["type"] == "assistant":
            if m["id"] == last_id:
                continue
            last_id = m["id"]
            expected.append(("assistant", m["id"]))
        else:
            last_id = None
            blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text"}]
            expected += [("tool", b["tool_use_id"]) for b in blocks if b["type"] == "tool_result"]
            if any(b["type"] != "tool_result" for b in blocks):
                expected.append(("user", ""))
    assert [m["role"] for m in t.messages] == [r for r, _ in expected]
    tool_ids = [m["tool_call_id"] for m in t.messages if m["role"] == "tool"]
    assert tool_ids == [i for r, i in expected if r == "tool"]
    assert t.model == next(v["message"]["model"] for _, v in main if v["type"] == "assistant")
    assert t.tools is None and t.meta["not_recorded"] == ["system prompt", "tool schemas"]


def test_claude_code_split_response_is_one_ask_with_usage_once() -> None:
    raw = lines(CC)
    t = load_transcript(CC)
    split = [n for n, v in enumerate(raw, start=1) if v.get("type") == "assistant" and v["message"]["id"] == "msg_01A"]
    assert len(split) == 2
    k = t.origins.index(f"lines {split[0]}-{split[1]}")
    ask = t.messages[k]
    assert ask["content"] == "Let me run the test first."
    assert [c["function"]["name"] for c in ask["tool_calls"]] == ["Bash"]
    assert json.loads(ask["tool_calls"][0]["function"]["arguments"]) == raw[split[1] - 1]["message"]["content"][0]["input"]
    # usage is kept once per API response, at the reply's row
    responses = {v["message"]["id"]: v["message"]["usage"] for v in raw
                 if v.get("type") == "assistant" and not v.get("isSidechain")}
    assert len(t.usage) == len(responses)
    assert t.usage[k] == responses["msg_01A"]
    assert all(t.messages[i]["role"] == "assistant" for i in t.usage)


def test_claude_code_skipped_lines_are_counted() -> None:
    raw = lines(CC)
    t = load_transcript(CC)
    counts: dict[str, int] = {}
    for v in raw:
        if v.get("isSidechain"):
            counts["sidechain"] = counts.get("sidechain", 0) + 1
        elif v["type"] not in ("user", "assistant"):
            counts[v["type"]] = counts.get(v["type"], 0) + 1
    assert t.meta["skipped_entries"] == counts
    assert not any("sub-agent" in str(m.get("content")) for m in t.messages)
    assert "Search the repo" not in json.dumps(t.messages)


@pytest.mark.parametrize("kind", [["user"], {"a": 1}, 3, None])
def test_claude_code_a_line_whose_type_is_no_string_is_skipped_as_untyped(kind: Any) -> None:
    """A ``type`` that is a list, an object, a number or null names no conversation entry: the line is
    skipped and counted as "untyped", as a line with no type is (an unhashable one used to stop the import)."""
    raw = lines(CC)
    bad = {**raw[-1], "type": kind}
    t = parse_transcript(jsonl([*raw, bad]), name="cc.jsonl", format="claude-code")
    before = load_transcript(CC)
    assert t.messages == before.messages
    assert t.meta["skipped_entries"] == {**before.meta["skipped_entries"],
                                         "untyped": before.meta["skipped_entries"].get("untyped", 0) + 1}


def test_claude_code_compaction_boundary_is_an_observed_compaction() -> None:
    raw = lines(CC)
    t = load_transcript(CC)
    boundary = next(n for n, v in enumerate(raw, start=1) if v.get("type") == "user"
                    and isinstance(v["message"]["content"], str)
                    and v["message"]["content"].startswith("This session is being continued from a previous"))
    assert [(c.index, c.origin) for c in t.compactions] == [(t.origins.index(f"line {boundary}"), f"line {boundary}")]
    assert t.messages[t.compactions[0].index]["role"] == "user"


def test_claude_code_tool_error_and_synthetic_reply() -> None:
    sid = {"sessionId": "s", "uuid": "u"}
    doc = jsonl([
        {**sid, "type": "user", "message": {"role": "user", "content": "hi"}},
        {**sid, "type": "assistant", "message": {"id": "m1", "role": "assistant", "model": "<synthetic>",
                                                 "content": [{"type": "text", "text": "API Error"}],
                                                 "usage": {"input_tokens": 0, "output_tokens": 0}}},
        {**sid, "type": "assistant", "message": {"id": "m2", "role": "assistant", "model": "claude-x",
                                                 "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                              "input": {"command": "false"}}],
                                                 "usage": {"input_tokens": 10, "output_tokens": 2}}},
        {**sid, "type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "exit 1", "is_error": True}]}},
    ])
    t = parse_transcript(doc, name="s.jsonl")
    assert t.format == "claude-code" and t.model == "claude-x"
    assert t.meta["synthetic_replies"] == [1] and 1 not in t.usage and t.usage[2]["input_tokens"] == 10
    assert t.meta["error_results"] == [3]


@pytest.mark.parametrize(("entry", "words"), [
    ({"type": "user", "sessionId": "s", "uuid": "u"}, "needs a 'message' object"),
    ({"type": "user", "sessionId": "s", "uuid": "u", "message": {"role": "user", "content": 3}},
     "message.content must be a string or a list"),
    ({"type": "assistant", "sessionId": "s", "uuid": "u", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "x", "input": "not an object"}]}}, "content[0].input must be an object"),
])
def test_claude_code_bad_line_names_the_line(entry: dict[str, Any], words: str) -> None:
    good = {"type": "user", "sessionId": "s", "uuid": "u0", "message": {"role": "user", "content": "hi"}}
    with pytest.raises(TranscriptError) as err:
        parse_transcript(jsonl([good, entry]), name="s.jsonl", format="claude-code")
    assert str(err.value).startswith("s.jsonl: line 2: ") and words in str(err.value)


# --- openai-log --------------------------------------------------------------------------------------

def test_openai_log_is_detected_and_lists_its_sessions() -> None:
    assert detect_format(OAI.read_bytes(), OAI.name) == "openai-log"
    raw = lines(OAI)
    infos = list_conversations(OAI)
    # independent expectation: a new session starts where a request does not extend the previous call
    sessions, prev = [], None
    for n, v in enumerate(raw, start=1):
        msgs = v["request"]["messages"]
        if prev is None or msgs[: len(prev)] != prev:
            sessions.append([n])
        else:
            sessions[-1].append(n)
        reply = {k: v["response"]["choices"][0]["message"][k] for k in ("role", "content")}
        prev = msgs + [reply]
    assert [i.label for i in infos] == [f"line {s[0]}" if len(s) == 1 else f"lines {s[0]}-{s[-1]}" for s in sessions]


def test_openai_log_rows_usage_and_observed_requests() -> None:
    raw = lines(OAI)
    t = load_transcript(OAI)
    first = [v for v in raw if v["request"]["messages"][0]["role"] == "system"]
    last = first[-1]
    expected = [{"role": m["role"], "content": m["content"]} for m in last["request"]["messages"]]
    expected.append({"role": "assistant", "content": last["response"]["choices"][0]["message"]["content"]})
    assert t.messages == expected
    assert len(t.observed_payloads) == len(first)
    for op, v in zip(t.observed_payloads, first, strict=True):
        assert op.messages == v["request"]["messages"]
        assert t.messages[op.reply]["content"] == v["response"]["choices"][0]["message"]["content"]
        assert t.usage[op.reply] == v["response"]["usage"]
    assert t.model == last["request"]["model"]


def test_openai_log_second_session() -> None:
    raw = lines(OAI)
    t = load_transcript(OAI, conversation=1)
    v = raw[-1]
    assert [m["content"] for m in t.messages] == [m["content"] for m in v["request"]["messages"]] + \
        [v["response"]["choices"][0]["message"]["content"]]
    assert t.origins[-1] == f"line {len(raw)}.response.choices[0].message"


def test_openai_log_failed_call_names_the_line() -> None:
    good = {"request": {"messages": [{"role": "user", "content": "hi"}]},
            "response": {"choices": [{"message": {"role": "assistant", "content": "yo"}}]}}
    bad = {"request": {"messages": [{"role": "user", "content": "hi"}]}, "response": {"error": {"message": "x"}}}
    with pytest.raises(TranscriptError) as err:
        parse_transcript(jsonl([good, bad]), name="calls.jsonl")
    assert str(err.value).startswith("calls.jsonl: line 2: response.choices[0].message is missing")
    bad_msg = {"request": {"messages": [{"role": "user", "content": 5}]}, "response": good["response"]}
    with pytest.raises(TranscriptError) as err:
        parse_transcript(jsonl([bad_msg]), name="calls.jsonl", format="openai-log")
    assert "line 1" in str(err.value) and "request.messages[0]" in str(err.value)


# --- properties ----------------------------------------------------------------------------------------

_blocks = st.lists(st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=20)),
    st.builds(lambda k, q: {"type": "tool_use", "id": f"t{k}", "name": "Bash", "input": {"q": q}},
              st.integers(0, 10**6), st.text(max_size=10)),
), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(_blocks, st.data())
def test_a_response_split_over_any_number_of_lines_imports_as_one_line(blocks: list[dict[str, Any]],
                                                                       data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.sets(st.integers(1, len(blocks) - 1), max_size=len(blocks) - 1))) \
        if len(blocks) > 1 else []
    parts = [blocks[a:b] for a, b in zip([0, *cuts], [*cuts, len(blocks)], strict=True)]
    usage = {"input_tokens": 7, "output_tokens": 1}

    def line(content: list[dict[str, Any]]) -> dict[str, Any]:
        return {"type": "assistant", "sessionId": "s", "uuid": "u",
                "message": {"id": "m", "role": "assistant", "model": "claude-x", "content": content, "usage": usage}}

    user = {"type": "user", "sessionId": "s", "uuid": "u0", "message": {"role": "user", "content": "go"}}
    split = parse_transcript(jsonl([user, *[line(p) for p in parts]]), name="s.jsonl")
    whole = parse_transcript(jsonl([user, line(blocks)]), name="s.jsonl")
    assert split.messages == whole.messages and split.usage == whole.usage == {1: usage}
    assert split.origins[1] == ("line 2" if len(parts) == 1 else f"lines 2-{1 + len(parts)}")
