"""Transcripts at the edges: enormous messages, 100 000 messages, images and unknown block types,
ids reused across turns, tool results with no id, unknown roles, truncated files.

The importer tests (test_transcripts_*.py) pin each format's mapping and the fuzz test pins the
error contract; this module pushes *sizes and shapes* through the whole path: import, replay
(every strategy, both counters), the exported JSON, and the real console script.

Guards: an input that imports but then crashes the engine or the report; an error for a bad file
that does not say which file and where; a size that makes a replay blow up.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, shared_files
from inspector.manifest import settings_from_dict
from inspector.engine.pairing import PROVIDER_ROLES
from inspector.replay import replay
from inspector.transcripts import Transcript, TranscriptError, load_transcript, parse_transcript, transcript_to_json

EXE = Path(sys.executable).with_name("context-inspector")
SAMPLES = ROOT / "inspector" / "samples"
TEN_MB = 10_000_000

STRATEGIES = {
    "summarising": {"type": "summarising", "params": {"keep_turns": 1}},
    "sliding-window": {"type": "sliding-window", "params": {"keep_turns": 1}},
    "stack": {"type": "stack", "params": {"max_messages": 6}},
}


def settings(cm: Any = None, window: int = 3000):  # noqa: ANN201
    spec: dict[str, Any] = {"models": [{"context_window": window, "max_tokens": 100}]}
    if cm is not None:
        spec["context_manager"] = cm
    return settings_from_dict({"kind": "Agent", "spec": spec})


def replays_cleanly(tr: Transcript, counter: str = "estimate", cm: Any = None, window: int = 3000,
                    dump: bool = True) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rp = replay(settings(cm, window), tr, counter=counter, summarizer="stand-in")
    assert rp.frames, "every transcript has at least one call"
    assert all(f.check == "ok" for f in rp.frames), [f.check for f in rp.frames if f.check != "ok"]
    if dump:
        json.loads(rp.dumps(payloads=True))
    return rp


def run(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=180)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


# --- one enormous message ---------------------------------------------------------------------------

BIG = ("The quick brown fox jumps over the lazy dog. " * 250_000)[:TEN_MB]


def big_openai() -> bytes:
    return json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                       {"role": "user", "content": BIG}, {"role": "assistant", "content": "that was long"},
                       {"role": "user", "content": "still there?"}]).encode()


BIG_LAYOUTS = {  # name: (data, format, index of the big message)
    "openai-list": (big_openai, None, 2),
    "openai-jsonl": (lambda: "\n".join(json.dumps(m) for m in json.loads(big_openai())).encode(), None, 2),
    "anthropic-text-block": (lambda: json.dumps({"model": "claude-x", "messages": [
        {"role": "user", "content": [{"type": "text", "text": BIG}]},
        {"role": "assistant", "content": [{"type": "text", "text": "long"}]}]}).encode(), "anthropic", 0),
    "tool-result": (lambda: json.dumps([
        {"role": "user", "content": "read the log"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "cat", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": BIG},
        {"role": "assistant", "content": "it is long"}]).encode(), None, 2),
}


@pytest.mark.parametrize("layout", list(BIG_LAYOUTS))
def test_a_ten_megabyte_message_imports_whole_and_replays(layout: str) -> None:
    make, fmt, index = BIG_LAYOUTS[layout]
    tr = parse_transcript(make(), name="big.json", format=fmt)
    assert tr.messages[index]["content"] == BIG, "nothing is cut or copied wrong"
    rp = replays_cleanly(tr, dump=False)
    sent = [f for f in rp.frames if index in [r for r in f.refs if r is not None]]
    assert sent, "the message is sent as it is (the trimmer may drop it later, never alter it)"
    assert max(f.payload_tokens for f in rp.frames) >= TEN_MB // 8


def test_a_ten_megabyte_message_with_exact_tokens_and_full_json() -> None:
    tr = parse_transcript(big_openai(), name="big.json")
    rp = replays_cleanly(tr, counter="tiktoken", dump=False)
    over = [f for f in rp.frames if f.headroom < 0]
    assert over and all(f.check == "ok" for f in over), "over budget is reported, not a crash"
    data = json.loads(rp.dumps(payloads=True))
    assert any(row.get("content") == BIG for f in data["frames"] for row in f["payload"])


def test_a_ten_megabyte_message_through_the_console_script(tmp_path: Path) -> None:
    transcript = tmp_path / "big.json"
    transcript.write_bytes(big_openai())
    manifest = tmp_path / "m.yaml"
    manifest.write_text("kind: Agent\nspec:\n  models: [{context_window: 8000, max_tokens: 500}]\n")
    out = run("replay", str(manifest), str(transcript), "--counter", "estimate")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["transcript"]["messages"] == 5 and data["totals"]["over_budget"] >= 1


# --- a hundred thousand messages ------------------------------------------------------------------

def many_turns(n: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(n // 4):
        rows += [{"role": "user", "content": f"question {i}"},
                 {"role": "assistant", "content": None, "tool_calls": [
                     {"id": f"call_{i}", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"q": i})}}]},
                 {"role": "tool", "tool_call_id": f"call_{i}", "content": "result text " * 8},
                 {"role": "assistant", "content": f"answer {i}"}]
    return rows


def one_long_turn(n: int) -> list[dict[str, Any]]:
    """An agent loop: one user request, then tool round after tool round (SWE-agent's shape)."""
    rows: list[dict[str, Any]] = [{"role": "user", "content": "fix the bug"}]
    for i in range((n - 2) // 2):
        rows += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": f"call_{i}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"cmd": f"ls {i}"})}}]},
                 {"role": "tool", "tool_call_id": f"call_{i}", "content": "file.txt " * 8}]
    rows.append({"role": "assistant", "content": "done"})
    return rows


def test_a_hundred_thousand_messages_import_and_replay() -> None:
    data = ("\n".join(json.dumps(m) for m in many_turns(100_000)) + "\n").encode()
    tr = parse_transcript(data, name="huge.jsonl")
    assert len(tr.messages) == 100_000 and tr.irregularities == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rp = replay(settings(window=16_000), tr, counter="estimate", summarizer="stand-in")  # the default manager
    assert len(rp.frames) == 50_000
    totals = rp.totals()
    assert totals["checks_failed"] == 0 and totals["frames"] == 50_000
    assert rp.frames[-1].at == 99_999


@pytest.mark.parametrize("shape", ["one-long-turn", "uncapped-stack"])
def test_replay_output_grows_linearly_with_the_transcript(shape: str) -> None:
    sizes = []
    for n in (400, 800):
        rows = one_long_turn(n) if shape == "one-long-turn" else many_turns(n)
        tr = parse_transcript(json.dumps(rows), name="x.json")
        rp = replays_cleanly(tr, cm=None if shape == "one-long-turn" else "stack", window=2000, dump=False)
        sizes.append(len(rp.dumps()))
    assert sizes[1] / sizes[0] < 2.5, f"output size {sizes[0]:,} -> {sizes[1]:,} bytes for twice the messages"


# --- images and block types nobody expected -------------------------------------------------------

IMAGE_URL = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "iVBORw0KGgo" * 50}}
ODD_OPENAI = [
    {"role": "user", "content": [{"type": "text", "text": "what is this?"}, IMAGE_URL,
                                 {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
                                 {"type": "file", "file": {"file_id": "file-1"}}, {"type": "weird", "payload": [1, 2]}]},
    {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't tell."}]},
    {"role": "user", "content": [IMAGE_URL]},
    {"role": "assistant", "content": "A cat."},
    {"role": "user", "content": [{"type": "text", "text": "and?"}, {}]},
]
ODD_ANTHROPIC = {"model": "claude-x", "messages": [
    {"role": "user", "content": [
        {"type": "text", "text": "see"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "a document"}},
        {"type": "banana", "ripe": True}]},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"}, {"type": "redacted_thinking", "data": "zzz"},
        {"type": "tool_use", "id": "t1", "name": "screenshot", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA="}},
        {"type": "text", "text": "a picture"}]}]},
    {"role": "assistant", "content": [
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"q": "x"}},
        {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}, {"type": "text", "text": "done"}]},
    {"role": "user", "content": "thanks"}]}


@pytest.mark.parametrize("counter", ["estimate", "tiktoken"])
@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("source", ["openai", "anthropic"])
def test_images_and_unknown_blocks_are_kept_reported_and_replayed(source: str, strategy: str, counter: str) -> None:
    raw = ODD_OPENAI if source == "openai" else ODD_ANTHROPIC
    tr = parse_transcript(json.dumps(raw), name="odd.json")
    assert tr.format == source
    kinds = {r.kind for r in tr.irregularities}
    assert "non_text_content" in kinds
    if source == "openai":
        assert tr.messages[0]["content"] == ODD_OPENAI[0]["content"], "parts are kept as they are"
    else:
        assert tr.messages[0]["content"] == ODD_ANTHROPIC["messages"][0]["content"]
    rp = replays_cleanly(tr, counter=counter, cm=STRATEGIES[strategy])
    sent = [row["content"] for f in rp.to_json(payloads=True)["frames"] for row in f["payload"]]
    assert any(isinstance(c, list) and any(isinstance(p, dict) and p.get("type") in ("image_url", "image") for p in c)
               for c in sent), "image parts reach the payload unchanged"


# --- ids reused across turns, results with no id, unknown roles -----------------------------------

def reused_ids(turns: int = 5) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(turns):
        rows += [{"role": "user", "content": f"q{i}"},
                 {"role": "assistant", "content": None, "tool_calls": [
                     {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": json.dumps({"i": i})}}]},
                 {"role": "tool", "tool_call_id": "call_1", "content": f"result {i}"},
                 {"role": "assistant", "content": f"a{i}"}]
    return rows


@pytest.mark.parametrize("counter", ["estimate", "tiktoken"])
@pytest.mark.parametrize("strategy", [*STRATEGIES, "uncapped-stack"])
def test_ids_reused_across_turns_pair_with_their_own_call(strategy: str, counter: str) -> None:
    tr = parse_transcript(json.dumps(reused_ids()), name="reused.json")
    assert [(r.kind, r.index) for r in tr.irregularities] == [("reused_tool_call_id", 4 * i + 1) for i in range(1, 5)]
    rp = replays_cleanly(tr, counter=counter, cm="stack" if strategy == "uncapped-stack" else STRATEGIES[strategy])
    for f in rp.frames:
        payload = f.payload(tr.messages)
        for k, m in enumerate(payload):
            if m.get("role") == "tool":
                ask = payload[k - 1]
                assert ask.get("tool_calls") and json.loads(ask["tool_calls"][0]["function"]["arguments"])["i"] == \
                    int(m["content"].split()[-1]), "each result stays right after the call that produced it"


NO_ID = [
    pytest.param("openai", json.dumps([{"role": "user", "content": "u"}, {"role": "tool", "content": "x"}]),
                 "no-id.json: message 1: tool result without tool_call_id", id="openai-missing"),
    pytest.param("openai", json.dumps([{"role": "user", "content": "u"}, {"role": "tool", "tool_call_id": None, "content": "x"}]),
                 "no-id.json: message 1: tool result without tool_call_id", id="openai-null"),
    pytest.param("openai", json.dumps([{"role": "user", "content": "u"}, {"role": "tool", "tool_call_id": "", "content": "x"}]),
                 "no-id.json: message 1: tool result without tool_call_id", id="openai-empty"),
    # a numeric tool_call_id is converted to a string and reported, not refused (Q19: transcripts/test_numeric_ids_become_strings.py)
    pytest.param("openai", json.dumps({"role": "user", "content": "u"}) + "\n" + json.dumps({"role": "tool", "content": "x"}),
                 "no-id.json: line 2: tool result without tool_call_id", id="openai-jsonl"),
    pytest.param("anthropic", json.dumps({"messages": [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]}),
                 "no-id.json: message 0: content[0].tool_use_id is missing", id="anthropic-missing"),
    pytest.param("anthropic", json.dumps({"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": None, "content": "x"}]}]}),
                 "no-id.json: message 0: content[0].tool_use_id", id="anthropic-null"),
]


@pytest.mark.parametrize(("fmt", "data", "expected"), NO_ID)
def test_a_tool_result_without_an_id_is_an_error_naming_the_message(fmt: str, data: str, expected: str,
                                                                      tmp_path: Path) -> None:
    with pytest.raises(TranscriptError) as info:
        parse_transcript(data, name="no-id.json", format=fmt)
    assert str(info.value).startswith(expected), str(info.value)
    path = tmp_path / "no-id.json"
    path.write_text(data)
    out = run("import", str(path), "--transcript-format", fmt)
    assert out.returncode == 1 and out.stderr.startswith(f"error: {expected}")


def test_unknown_roles_are_kept_reported_and_replayed() -> None:
    rows = [{"role": "user", "content": "u"}, {"role": "developer", "content": "be nice"},
            {"role": "critic", "content": "meh"}, {"role": "", "content": "blank"},
            {"role": "function", "name": "f", "content": "legacy"}, {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "again"}]
    tr = parse_transcript(json.dumps(rows), name="roles.json")
    assert [m["role"] for m in tr.messages] == [r["role"] for r in rows]
    flagged = {r.index for r in tr.irregularities if r.kind == "nonstandard_role"}
    assert {2, 3, 4} <= flagged
    for cm in STRATEGIES.values():  # replayed as recorded; the provider check names the role it rejects (Q19)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rp = replay(settings(cm, 3000), tr, counter="estimate", summarizer="stand-in")
        for f in rp.frames:
            odd = [m.get("role") for m in f.payload(rp.messages) if m.get("role") not in PROVIDER_ROLES]
            assert (f.check == "ok") == (not odd), (f.check, odd)
            if odd:
                assert f"role {odd[0]!r}" in f.check


# --- truncated files ----------------------------------------------------------------------------

FILES = shared_files() + sorted(SAMPLES.glob("*.json"))


@pytest.mark.parametrize("fraction", [0.01, 0.5, 0.999])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name if p.parent != SAMPLES else p.name)
def test_a_truncated_file_is_an_error_naming_it_or_a_shorter_transcript(path: Path, fraction: float,
                                                                         tmp_path: Path) -> None:
    data = path.read_bytes()
    cut = data[: max(1, int(len(data) * fraction))]
    target = tmp_path / path.name
    target.write_bytes(cut)
    try:
        tr = load_transcript(target)
    except TranscriptError as err:
        assert str(err).startswith(f"{path.name}: "), str(err)
        return
    # JSON Lines cut at a line boundary is a valid, shorter file: it must still be fully usable
    assert path.suffix in (".jsonl", ".af", ".traj") or tr.format in ("mas-lab", "openai")
    json.dumps(transcript_to_json(tr))
    replays_cleanly(tr, cm=STRATEGIES["summarising"], dump=False)


def test_a_truncated_file_through_the_console_script(tmp_path: Path) -> None:
    data = (SAMPLES / "demo_support.json").read_bytes()
    target = tmp_path / "cut.json"
    target.write_bytes(data[: len(data) // 2])
    manifest = tmp_path / "m.yaml"
    manifest.write_text("kind: Agent\nspec: {}\n")
    for args in (["import", str(target)], ["replay", str(manifest), str(target), "--counter", "estimate"]):
        out = run(*args)
        assert out.returncode == 1 and out.stderr.startswith("error: cut.json: ") and out.stdout == ""


WRONG_SHAPES = [  # forced to the openai importer: undetectable input is covered by transcripts/test_import_api
    pytest.param('{"messages": "hello"}', "messages must be a list", id="messages-a-string"),
    pytest.param('[{"role": "user", "content": {"text": "hi"}}]', "content must be", id="content-an-object"),
    pytest.param('[{"role": "assistant", "content": null, "tool_calls": {"id": "x"}}]', "tool_calls", id="calls-an-object"),
    pytest.param('[{"role": ["user"], "content": "hi"}]', "message 0: role must be a string", id="role-a-list"),
    pytest.param('[{"role": "user", "content": "hi"}, 42]', "message 1", id="message-a-number"),
    pytest.param('{"messages": [{"role": "user", "content": "hi"}], "tools": "all"}', "tools must be a list", id="tools-a-string"),
    pytest.param('[[{"role": "user", "content": "hi"}]]', "message 0: must be an object", id="nested-list"),
    pytest.param('"just a string"', "expected a list of chat-completions messages", id="json-string"),
    pytest.param("null", "expected a list of chat-completions messages", id="json-null"),
    pytest.param('{"role": "user", "content": "hi"}\n{"role": "user"', "line 2", id="jsonl-truncated-line"),
]


@pytest.mark.parametrize(("data", "fragment"), WRONG_SHAPES)
def test_wrong_shapes_are_errors_naming_the_place(data: str, fragment: str) -> None:
    with pytest.raises(TranscriptError) as info:
        parse_transcript(data, name="shape.json", format="openai")
    assert str(info.value).startswith("shape.json: ") and fragment in str(info.value), str(info.value)
