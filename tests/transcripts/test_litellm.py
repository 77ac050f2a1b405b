"""The ``litellm`` importer: litellm's standard logging payload, one JSON object per line.

``tests/data/transcripts/litellm-standard-logging.jsonl`` was written by litellm itself: two real
``litellm.completion`` calls (a tool call, then the answer) against the local test server
(tests/llm_server.py), each ``kwargs["standard_logging_object"]`` a custom logger received, one per
line (docs/SAMPLE_LOGS.md). Guards: detection ahead of the generic ``openai`` reader; calls chain
into one conversation; each request is the observed payload of its reply, with
``model_parameters.tools``; the response's usage sits at the reply's row; failed calls are skipped
and counted; errors name the line; calls of different sessions never share a conversation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.calibration import calibrate
from inspector.transcripts import TranscriptError, detect_format, list_conversations, load_transcript, parse_transcript

LOG = Path(__file__).parents[1] / "data" / "transcripts" / "litellm-standard-logging.jsonl"


def payloads() -> list[dict[str, Any]]:
    return [json.loads(x) for x in LOG.read_text(encoding="utf-8").splitlines() if x.strip()]


def jsonl(values: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(v) + "\n" for v in values)


def test_the_payload_log_is_detected() -> None:
    assert detect_format(LOG.read_bytes(), "calls.jsonl") == "litellm"


def test_calls_chain_into_one_conversation_with_the_reply_after_each_request() -> None:
    t = load_transcript(LOG)
    p = payloads()
    assert [m["role"] for m in t.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert t.messages[:2] == p[0]["messages"]
    assert t.messages[2]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    assert t.messages[4]["content"] == "It is snowing in Oslo."
    assert t.origins == ["line 1.messages[0]", "line 1.messages[1]", "line 1.response.choices[0].message",
                         "line 2.messages[3]", "line 2.response.choices[0].message"]


def test_each_request_is_the_observed_payload_of_its_reply_with_its_tools() -> None:
    t = load_transcript(LOG)
    p = payloads()
    assert [(o.reply, len(o.messages)) for o in t.observed_payloads] == [(2, 2), (4, 4)]
    assert t.observed_payloads[1].tools == p[1]["model_parameters"]["tools"]
    assert t.model == "gpt-4o-mini"


def test_the_responses_usage_is_at_the_reply_row_for_calibration() -> None:
    t = load_transcript(LOG)
    assert sorted(t.usage) == [2, 4]
    assert all(u["prompt_tokens"] == 11 for u in t.usage.values())  # what the test server reported
    calls = calibrate(t).calls
    assert calls["provider_tokens"].tolist() == [11, 11] and calls["payload"].tolist() == ["request as logged"] * 2


def test_without_a_response_usage_the_payload_counts_are_used() -> None:
    p = payloads()
    del p[0]["response"]["usage"]
    t = parse_transcript(jsonl(p[:1]), name="x.jsonl")
    assert t.usage == {2: {"prompt_tokens": p[0]["prompt_tokens"], "completion_tokens": p[0]["completion_tokens"],
                           "total_tokens": p[0]["total_tokens"]}}


def test_failed_calls_are_skipped_and_counted() -> None:
    p = payloads()
    failed = {**p[0], "status": "failure", "response": {}, "error_str": "simulated 500"}
    t = parse_transcript(jsonl([failed, *p]), name="x.jsonl")
    assert t.meta["skipped_calls"] == {"failure": 1} and len(t.messages) == 5


def test_different_sessions_are_different_conversations() -> None:
    p = payloads()
    p[1]["session_id"] = "other"
    infos = list_conversations(jsonl(p).encode())
    assert [(c.label, c.messages) for c in infos] == [("line 1", 3), ("line 2", 5)]


def test_errors_name_the_line() -> None:
    p = payloads()
    p[1]["messages"][1] = {"role": "user", "content": 5}
    with pytest.raises(TranscriptError, match=r"x\.jsonl: line 2: messages\[1\]: content must be"):
        parse_transcript(jsonl(p), name="x.jsonl")
    p = payloads()
    p[0]["response"] = {"choices": []}
    with pytest.raises(TranscriptError, match=r"x\.jsonl: line 1: response\.choices\[0\]\.message is missing"):
        parse_transcript(jsonl(p), name="x.jsonl")
