"""The public entry points: registry, detection, overrides, file handling, the JSON view, errors.

Guards: a caller (CLI, app) getting anything but a TranscriptError for bad input, an override name
that only works in one spelling, and a JSON view that changes between runs.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from inspector.transcripts import (
    ConversationInfo,
    Transcript,
    TranscriptError,
    detect_format,
    iter_transcripts,
    list_conversations,
    list_formats,
    load_transcript,
    parse_transcript,
    register,
    transcript_to_json,
)
from inspector.transcripts import detect as detect_module

CHAT: list[dict[str, Any]] = [{"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "r"},
        {"role": "assistant", "content": "done", "usage": {"total_tokens": 9}}]


def test_format_names_in_detection_order() -> None:
    assert list_formats() == ["tau-bench", "tau2-bench", "swe-agent", "letta", "inspect-ai", "otel-genai", "openhands", "bashkit", "mas-lab",
                              "claude-code", "litellm", "openai-log", "anthropic", "openai"]


@pytest.mark.parametrize("spelling", ["openai", "OpenAI", " openai "])
def test_override_names_are_case_insensitive(spelling: str) -> None:
    assert parse_transcript(json.dumps(CHAT), format=spelling).format == "openai"


@pytest.mark.parametrize("spelling", ["tau2-bench", "TAU2_BENCH", "tau2_bench"])
def test_override_accepts_underscores(spelling: str) -> None:
    data = json.dumps({"info": {}, "simulations": [{"messages": [{"role": "user", "content": "x"}]}]})
    assert parse_transcript(data, format=spelling).format == "tau2-bench"


def test_unknown_format_lists_the_supported_ones() -> None:
    with pytest.raises(TranscriptError) as err:
        parse_transcript(json.dumps(CHAT), name="c.json", format="langchain")
    assert "unknown format 'langchain'" in str(err.value)
    assert all(name in str(err.value) for name in list_formats())


@pytest.mark.parametrize(("data", "text"), [
    (b"", "empty file"),
    (b"   \n\t", "empty file"),
    (b"\xff\xfe\x00", "not UTF-8"),
    (b"[{\"role\": \"user\", \"content\": \"hi\"}", "not JSON or JSON Lines"),
    (b"just some prose", "not JSON or JSON Lines"),
    (b"42", "unrecognised transcript format"),
    (b'{"hello": "world"}', "unrecognised transcript format"),
])
def test_undetectable_input_names_the_file_and_formats(data: bytes, text: str) -> None:
    with pytest.raises(TranscriptError) as err:
        detect_format(data, "in.json")
    assert str(err.value).startswith("in.json: ") and text in str(err.value)
    with pytest.raises(TranscriptError):
        parse_transcript(data, name="in.json")


def test_forcing_the_wrong_format_is_a_clear_error() -> None:
    with pytest.raises(TranscriptError) as err:
        parse_transcript(json.dumps(CHAT), name="c.json", format="tau2-bench")
    assert "simulations" in str(err.value)
    with pytest.raises(TranscriptError) as err:
        parse_transcript("{\"a\": 1}\n{\"b\": 2}\n", name="c.jsonl", format="tau-bench")
    assert "invalid JSON" in str(err.value) and err.value.line == 2


def test_bom_is_accepted() -> None:
    assert parse_transcript(b"\xef\xbb\xbf" + json.dumps(CHAT).encode()).messages[0]["content"] == "hi"


def test_load_transcript_from_paths(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(CHAT), encoding="utf-8")
    for p in (path, str(path)):
        t = load_transcript(p)
        assert t.path == str(path) and t.format == "openai" and len(t.messages) == 4
        assert t.usage == {3: {"total_tokens": 9}}
    with pytest.raises(TranscriptError) as err:
        load_transcript(path, max_bytes=10)
    assert str(err.value) == "chat.json: file is 297 bytes, over the 10-byte limit for a transcript"
    assert err.value.exit_status == 2  # a file that cannot be used at all
    with pytest.raises(TranscriptError) as err:
        load_transcript(tmp_path / "missing.json")
    assert str(err.value).startswith("missing.json: cannot read file")
    with pytest.raises(TranscriptError):
        load_transcript(tmp_path)


def test_list_conversations_accepts_paths_bytes_and_json_text(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(CHAT), encoding="utf-8")
    expected = [ConversationInfo(0, "chat.json", 4, 1)]
    assert list_conversations(path) == expected
    assert list_conversations(str(path)) == expected
    assert list_conversations(json.dumps(CHAT).encode(), name="chat.json") == expected
    assert list_conversations(json.dumps(CHAT)) == [ConversationInfo(0, "<input>", 4, 1)]


def test_iter_transcripts_yields_every_conversation(tmp_path: Path) -> None:
    path = tmp_path / "ft.jsonl"
    path.write_text("\n".join(json.dumps({"messages": CHAT[:k]}) for k in (1, 2, 4)), encoding="utf-8")
    convs = list(iter_transcripts(path))
    assert [len(t.messages) for t in convs] == [1, 2, 4]
    assert [t.conversation for t in convs] == [0, 1, 2]
    assert [r.kind for r in convs[1].irregularities] == ["unanswered_call"]


@pytest.mark.parametrize("bad", [-1, 1, True, "0"])
def test_conversation_index_is_checked(bad: Any) -> None:
    with pytest.raises(TranscriptError) as err:
        parse_transcript(json.dumps(CHAT), name="c.json", conversation=bad)
    assert str(err.value).startswith("c.json: conversation")


def test_json_view() -> None:
    t = parse_transcript(json.dumps({"model": "m", "messages": CHAT}), name="c.json")
    view = transcript_to_json(t)
    assert list(view) == ["format", "path", "conversation", "conversations", "model", "tools", "messages",
                          "irregularities", "usage", "observed_payloads", "meta", "compactions"]
    assert view["messages"][1] == {"index": 1, "origin": "messages[1]", "role": "assistant", "content": None,
                                   "tool_calls": CHAT[1]["tool_calls"]}
    assert view["messages"][2]["tool_call_id"] == "c"
    assert view["usage"] == {"3": {"total_tokens": 9}}
    assert json.dumps(view) == json.dumps(transcript_to_json(t))


def test_error_text_and_pickling() -> None:
    assert str(TranscriptError("demo.json", "boom", index=12)) == "demo.json: message 12: boom"
    assert str(TranscriptError("demo.jsonl", "boom", line=3, index=12)) == "demo.jsonl: line 3: boom"
    assert str(TranscriptError(None, "boom")) == "boom"
    err = pickle.loads(pickle.dumps(TranscriptError("a.json", "boom", line=2)))
    assert isinstance(err, TranscriptError) and str(err) == "a.json: line 2: boom" and err.line == 2
    assert isinstance(TranscriptError("a", "b"), ValueError)


class _Lines:
    """A third-party importer: one user message per line of plain text starting with '>'."""

    NAME = "quoted-lines"

    @staticmethod
    def sniff(obj_or_text: Any, name: str) -> bool:
        return isinstance(obj_or_text, str) and obj_or_text.startswith(">")

    @staticmethod
    def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
        lines = [ln[1:].strip() for ln in obj_or_text.splitlines() if ln.startswith(">")]
        info = ConversationInfo(0, name, len(lines), len(lines))
        return Transcript(format="quoted-lines", path=path, messages=[{"role": "user", "content": ln} for ln in lines],
                          origins=[f"line {i + 1}" for i in range(len(lines))], tools=None, model=None, usage={},
                          irregularities=[], conversations=[info])

    @staticmethod
    def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
        return _Lines.parse(obj_or_text, name=name).conversations


def test_register_a_third_party_importer(monkeypatch: pytest.MonkeyPatch) -> None:
    list_formats()  # load the built-ins, then work on a copy of the registry
    monkeypatch.setattr(detect_module, "_registry", dict(detect_module._registry))
    register(_Lines(), before="openai")
    assert list_formats()[-2:] == ["quoted-lines", "openai"]
    assert detect_format("> hello\n> again") == "quoted-lines"
    assert parse_transcript("> hello\n> again").messages[1] == {"role": "user", "content": "again"}
    with pytest.raises(TypeError):
        register(object())  # type: ignore[arg-type]


def test_a_crashing_importer_still_surfaces_as_transcript_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(_Lines):
        NAME = "broken"

        @staticmethod
        def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
            raise KeyError("oops")

    list_formats()
    monkeypatch.setattr(detect_module, "_registry", dict(detect_module._registry))
    register(Broken(), before="tau-bench")
    with pytest.raises(TranscriptError) as err:
        parse_transcript("> hi", name="q.txt")
    assert str(err.value).startswith("q.txt: malformed broken transcript")
