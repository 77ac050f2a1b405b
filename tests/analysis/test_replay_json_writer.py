"""The replay JSON: one writer, each summary text once, read back as the document it writes.

Rules (inspector/json_text.py, inspector/replay/result.py ``Replay.to_json``, docs/guide.md "Replay
JSON"): the text ``replay_dumps`` writes parses to the masked replay document (``json.loads`` equal),
whatever the strategy, with a planted secret masked; a replay document lists each distinct summary
text once (``summaries``, in order of first use) and a frame names its own by ``summary_index`` (a
not-sent summary block's text by ``content_index``); the replay command builds and writes each
document once, each frame written by the writer once. Bug classes: a faster writer that changes
what a file says or lets a secret through; a summary repeated in every frame (a condenser's JSON was
83 % repeated summaries); a document written twice, or a frame dumped again on the fast path.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import inspector.json_text as json_text_module
import inspector.replay_document as replay_document_module
from conftest import ROOT
from inspector.cli import main
from inspector.json_text import json_text
from inspector.manifest import load_manifest, settings_from_dict
from inspector.plugins import default_registry
from inspector.redact import mask_secrets
from inspector.replay import replay
from inspector.replay_document import replay_document, replay_dumps
from inspector.transcripts import load_transcript
from inspector.transcripts.api import parse_transcript

SECRET = "sk-proj-abcdefghijklmnop1234"
DEMO = ROOT / "inspector" / "samples" / "demo_support.json"

# parameters that make each shipped strategy act on the 57-row demo; a strategy not here runs at its defaults
ACTING = {"stack": {"max_messages": 6}, "sliding-window": {"keep_turns": 1},
          "summarising": {"keep_turns": 1, "summary_threshold": 0}, "observation-masking": {"attention_window": 3},
          "auto-compact": {"threshold_tokens": 300, "keep_user_tokens": 0}, "condenser": {"max_size": 6},
          "clear-tool-results": {"trigger": 100, "keep": 0}}
STRATEGIES = [spec.name for spec in default_registry().specs("context_manager")]


def agent(cm: dict[str, Any]) -> Any:
    return settings_from_dict({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "t"},
                               "spec": {"models": [{"id": "main", "model": "gpt-4o"}], "context_manager": cm}})


def transcript(messages: list[dict[str, Any]]) -> Any:
    return parse_transcript(json.dumps({"messages": messages}).encode(), name="t.json")


def demo_with_secret() -> Any:
    doc = json.loads(DEMO.read_text(encoding="utf-8"))
    k = next(i for i, m in enumerate(doc["messages"]) if m["role"] == "tool")
    doc["messages"][k]["content"] = f"lookup done; OPENAI_API_KEY={SECRET} was in the environment"
    return parse_transcript(json.dumps(doc).encode(), name="demo.json")


@pytest.mark.parametrize("name", STRATEGIES)
@pytest.mark.parametrize("payloads", [False, True])
def test_the_written_replay_reads_back_as_the_masked_document_under_every_strategy(name: str, payloads: bool) -> None:
    rp = replay(agent({"type": name, "params": ACTING.get(name, {})}), demo_with_secret(), counter="estimate",
                summarizer="stand-in")
    doc = replay_document(rp, payloads=payloads)
    text = replay_dumps(rp, payloads=payloads)
    assert json.loads(text) == mask_secrets(doc)
    assert SECRET not in text
    assert SECRET in json.dumps(doc) or not payloads  # the payload rows carry it (and a summary may)
    summaries = doc["summaries"]  # unmasked: the texts the frames computed
    assert [f.summary_text for f in rp.frames] == \
        [None if fr["summary_index"] is None else summaries[fr["summary_index"]] for fr in doc["frames"]]
    assert len(set(summaries)) == len(summaries)


def test_a_condenser_replay_writes_each_summary_text_once() -> None:
    """Eight question/answer turns, max_size 4, keep_first 0 (tail: 4 // 2 − 0 − 1 = 1 event). The call
    of turn t sees 2(t − 1) committed rows: turn 4 (6 rows > 4) condenses rows [0, 5) into summary 0,
    view 0 + 1 + 1 = 2 events; turn 5 (8 rows: 1 + 8 − 5 = 4 events) reuses it; turn 6 (10 rows: 6
    events) condenses the summary and rows [5, 9) into summary 1; turn 7 reuses it; turn 8 condenses
    again (summary 2). Three distinct texts, each written once, named by five frames."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You help."}]
    for t in range(1, 9):
        msgs += [{"role": "user", "content": f"Question {t} about order ORD-{t}{t}{t}."},
                 {"role": "assistant", "content": f"Answer {t}: order ORD-{t}{t}{t} shipped."}]
    rp = replay(agent({"type": "condenser", "params": {"max_size": 4, "keep_first": 0}}), transcript(msgs),
                counter="estimate", summarizer="stand-in")
    text = replay_dumps(rp)
    doc = json.loads(text)
    assert [f["summary_index"] for f in doc["frames"]] == [None, None, None, 0, 0, 1, 1, 2]
    assert [f["cm"]["action"] for f in doc["frames"]][3:] == ["condensed", "condensed-reused"] * 2 + ["condensed"]
    assert len(doc["summaries"]) == 3 and len(set(doc["summaries"])) == 3
    assert all(text.count(json_text(s)) == 1 for s in doc["summaries"])
    assert all("summary" not in f for f in doc["frames"])


def test_a_summary_block_not_sent_is_written_as_an_index_into_the_summaries() -> None:
    """The demo under small-window: a summary the trimmer removed (Q18) is listed as not sent; the
    document names its text by ``content_index``, and the one-call export keeps the text itself."""
    from inspector.app import exports

    rp = replay(load_manifest(ROOT / "sample_manifests" / "small-window.yaml"), load_transcript(DEMO),
                counter="estimate", system="manifest", tools="manifest")
    k = next(k for k, f in enumerate(rp.frames) if f.not_sent)
    doc = json.loads(replay_dumps(rp))
    row = doc["frames"][k]["not_sent"][0]
    assert "content" not in row and doc["summaries"][row["content_index"]] == rp.frames[k].not_sent[0]["content"]
    assert json.loads(exports.payload_json(rp, k))["not_sent"][0]["content"] == rp.frames[k].not_sent[0]["content"]


def test_the_replay_command_builds_and_writes_each_document_once(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``--conversation all`` over the two-conversation demo log: two documents built, two written,
    and each frame object passed to the writer exactly once, alone or in a list (nothing in it may
    hold a secret)."""
    built: list[dict[str, Any]] = []
    written: list[dict[str, Any]] = []
    dumped: list[int] = []
    make, write, dump = replay_document, replay_document_module.masked_document_bytes, json_text_module.orjson.dumps

    def counting_make(*a: Any, **k: Any) -> dict[str, Any]:
        built.append(make(*a, **k))
        return built[-1]

    def counting_write(doc: dict[str, Any]) -> bytes:
        written.append(doc)
        return write(doc)

    def counting_dump(value: Any) -> bytes:  # a list's elements are written in the same call
        dumped.extend(id(v) for v in (value if type(value) is list else [value]))
        return dump(value)

    monkeypatch.setattr(replay_document_module, "replay_document", counting_make)
    monkeypatch.setattr(replay_document_module, "masked_document_bytes", counting_write)
    monkeypatch.setattr(json_text_module, "orjson", SimpleNamespace(dumps=counting_dump))
    out = tmp_path / "out.json"
    assert main(["replay", str(ROOT / "inspector" / "samples" / "demo_calls.openai-log.jsonl"),
                 "--conversation", "all", "-o", str(out)]) == 0
    assert len(built) == len(written) == 2 and all(a is b for a, b in zip(built, written, strict=True))
    frames = [f for doc in built for f in doc["frames"]]
    assert frames and all(dumped.count(id(f)) == 1 for f in frames)
    assert len(json.loads(out.read_text(encoding="utf-8"))["replays"]) == 2


def test_what_orjson_refuses_is_written_by_the_standard_encoder() -> None:
    """A key that is not a text, a named tuple, an integer past 64 bits, a lone surrogate: the text
    ``json.dumps`` writes (orjson refuses each); anything else orjson's compact text."""
    from typing import NamedTuple

    class Pair(NamedTuple):
        a: int
        b: int

    for value in ({1: "x"}, [Pair(1, 2)], 2**70, "\ud800"):
        assert json_text(value) == json.dumps(value, ensure_ascii=False)
    assert json_text({"a": [1, 2.5, None, True], "b": "é"}) == '{"a":[1,2.5,null,true],"b":"é"}'


def test_the_replay_command_writes_the_document_as_bytes_never_as_a_text_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``replay -o FILE`` writes the UTF-8 bytes of the one writer (plus the final newline); the text
    writer, which decodes megabytes to be encoded again, is never called."""
    def no_text(doc: dict[str, Any]) -> str:
        raise AssertionError("the replay command made a text copy of its document")

    monkeypatch.setattr(json_text_module, "masked_document_text", no_text)
    monkeypatch.setattr(replay_document_module, "masked_document_text", no_text)
    out = tmp_path / "out.json"
    assert main(["replay", str(DEMO), "--summarizer", "drop", "-o", str(out)]) == 0
    rp = replay(None, load_transcript(DEMO), summarizer="drop")
    assert out.read_bytes() == replay_document_module.replay_bytes(rp) + b"\n"
    assert json.loads(out.read_bytes())["frames"]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_list_of_objects_is_laid_as_its_pieces_and_joined_once_with_the_document(
        n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A top-level list of objects none of which may hold a secret is handed to the document's one
    join as its pieces (the head and the first element's text, then a line break and each next
    element's, the last closing the list: 2n − 1 pieces for n elements), never joined into its own
    line first (a replay's frames line is megabytes, and each join copies it). The text is the
    document layout: one element a line."""
    value = [{"call": k, "tokens": 10 * k} for k in range(n)]
    pieces = json_text_module._list_line(b' "frames": ', value, "strict")
    assert len(pieces) == 2 * n - 1
    assert b"".join(pieces).decode() == ' "frames": [\n  ' + ",\n  ".join(json_text(v) for v in value) + "\n ]"
    assert json.loads(json_text_module.masked_document_text({"frames": value})) == {"frames": value}
