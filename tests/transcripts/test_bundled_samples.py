"""The bundled demo transcripts (inspector/samples/): the OpenAI and Anthropic copies must import to
the same conversation, and the conversation must exercise what the demo is for (parallel calls, a
long output, an interrupted round, multi-step ReAct turns, a pending user message).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from inspector.transcripts import Transcript, detect_format, load_transcript, sample_path

OPENAI = "demo_support.json"
ANTHROPIC = "demo_support.anthropic.json"


@pytest.fixture(scope="module")
def demo() -> Transcript:
    return load_transcript(sample_path(OPENAI))


@pytest.fixture(scope="module")
def demo_anthropic() -> Transcript:
    return load_transcript(sample_path(ANTHROPIC))


def test_formats_are_detected() -> None:
    assert detect_format(sample_path(OPENAI).read_bytes()) == "openai"
    assert detect_format(sample_path(ANTHROPIC).read_bytes()) == "anthropic"


def test_both_copies_import_to_the_same_conversation(demo: Transcript, demo_anthropic: Transcript) -> None:
    assert demo.format == "openai" and demo_anthropic.format == "anthropic"
    assert demo.messages == demo_anthropic.messages
    assert demo.tools == demo_anthropic.tools
    assert demo.irregularities == demo_anthropic.irregularities


def test_shape_of_the_demo(demo: Transcript) -> None:
    msgs = demo.messages
    assert msgs[0]["role"] == "system" and len(msgs[0]["content"]) > 500
    assert sum(m["role"] == "user" for m in msgs) == 14
    assert msgs[-1]["role"] == "user", "ends with a user message awaiting a reply"
    asks = [m for m in msgs if m.get("tool_calls")]
    assert max(len(m["tool_calls"]) for m in asks) == 3 and sum(len(m["tool_calls"]) >= 2 for m in asks) == 2
    longest = max(len(m["content"]) for m in msgs if m["role"] == "tool")
    assert 5_000 <= longest <= 7_000
    # exactly one interrupted round: an ask the user talks over
    (irr,) = demo.irregularities
    assert irr.kind == "unanswered_call" and irr.index is not None
    assert msgs[irr.index + 1]["role"] == "user"
    # at least two ReAct turns: ask → result → ask → result → answer under one user message
    turns: list[list[dict[str, Any]]] = []
    for m in msgs[1:]:
        if m["role"] == "user":
            turns.append([])
        else:
            turns[-1].append(m)
    multi_step = [t for t in turns if sum(bool(m.get("tool_calls")) for m in t) >= 2
                  and t[-1]["role"] == "assistant" and not t[-1].get("tool_calls")]
    assert len(multi_step) >= 2


def test_calls_match_the_declared_tools(demo: Transcript) -> None:
    assert demo.tools is not None
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in demo.tools}
    used: Counter[str] = Counter()
    for m in demo.messages:
        for call in m.get("tool_calls") or ():
            name = call["function"]["name"]
            args = json.loads(call["function"]["arguments"])
            assert name in schemas
            assert set(schemas[name]["required"]) <= set(args) <= set(schemas[name]["properties"])
            used[name] += 1
    assert len(used) >= 10


def test_sample_path_rejects_unknown_names() -> None:
    with pytest.raises(FileNotFoundError):
        sample_path("nope.json")
