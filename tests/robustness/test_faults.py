"""Faults: a misbehaving summary model, a corrupt or half-written summary cache, a bad archive snapshot.

Everything runs through the real parts: litellm over HTTP to the local OpenAI-compatible server
(``tests/llm_server.py``, 127.0.0.1 only), the real on-disk cache, real crashes in a child process.

Guards: a provider failure that crashes a replay or silently drops history; a failure recorded
without its reason, or not counted in the totals; a failed call that poisons the hysteresis or disk
cache so the next call does not retry; a cache file that later loads wrong data after a crash; an
archive snapshot that loads as a different conversation.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from builders import asst, user
from inspector.engine.archive import Archive, ArchiveError, _checksum
from inspector.engine import ContextEngine
from inspector.engine.llm import LLMCallError, LLMEngine
from inspector.engine.summarizers.llm import SummaryCache
from inspector.manifest import settings_from_dict
from inspector.replay import replay
from inspector.transcripts import parse_transcript

EXE = Path(sys.executable).with_name("context-inspector")
KEEP = 2


def summarizing(keep_turns: int = KEEP, window: int = 2000):  # noqa: ANN201
    return settings_from_dict({"kind": "Agent", "spec": {
        "context_manager": {"type": "summarising", "params": {"keep_turns": keep_turns, "summarizer": "llm"}},
        "models": [{"model": "acme/model", "context_window": window, "max_tokens": 200}]}})


def three_turns_and_a_question() -> Any:
    """Three long turns and a pending question: the commit of turn 3 needs a summary (3 > keep 2),
    and so does the pending call (the history is over the hint). Two summarizer calls in all."""
    rows: list[dict[str, Any]] = []
    for i in range(1, 4):
        rows += [user(f"question {i} " + "lorem ipsum dolor " * 120), asst(f"answer {i} " + "sit amet " * 120)]
    rows.append(user("and now?"))
    return parse_transcript(json.dumps(rows), name="small.json")


def four_turns_and_a_question() -> Any:
    """Four long turns and a pending question: the commits of turns 3 and 4 each need a summary;
    the pending call does not (only the previous summary is older than keep_turns: reused, Q23).
    Two summarizer calls in all."""
    rows: list[dict[str, Any]] = []
    for i in range(1, 5):
        rows += [user(f"question {i} " + "lorem ipsum dolor " * 120), asst(f"answer {i} " + "sit amet " * 120)]
    rows.append(user("and now?"))
    return parse_transcript(json.dumps(rows), name="small.json")


def live(llm: Any, timeout: float = 5) -> LLMEngine:
    return LLMEngine(model="openai/test-model", api_base=llm.api_base, api_key="x", timeout=timeout)


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# --- the llm summarizer against a misbehaving provider -------------------------------------------

FAULTS = [
    pytest.param("500", "HTTP 500", id="http-500"),
    pytest.param("429", "HTTP 429", id="http-429"),
    pytest.param("malformed", "malformed response", id="malformed-json"),
    pytest.param("empty", "empty content", id="empty-content"),
    pytest.param("stall", "timeout", id="stall-past-timeout"),
]


@pytest.mark.parametrize(("mode", "reason"), FAULTS)
def test_summarizer_fault_is_recorded_with_its_reason_and_the_turn_proceeds(
        llm: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str, reason: str) -> None:
    llm.mode = mode
    monkeypatch.setattr(llm, "stall_seconds", 3.0)
    engine = live(llm, timeout=1 if mode == "stall" else 5)
    cache_dir = tmp_path / "cache"
    tr = three_turns_and_a_question()
    rp = replay(summarizing(), tr, counter="estimate", llm=engine, summary_cache=cache_dir)

    failed_commits = [c for c in rp.commits if c.action == "summarizer-failed"]
    failed_frames = [f for f in rp.frames if f.decision.action == "summarizer-failed"]
    assert len(failed_commits) == 1 and len(failed_frames) == 1
    # the reason, not just "an error"
    for err in [c.error for c in failed_commits] + [f.decision.error for f in failed_frames]:
        assert err is not None and err.startswith(f"LLMCallError: {reason}"), err
    # a failed commit leaves the stored log as it was (nothing folded, nothing lost)
    commit = failed_commits[0]
    assert commit.folded_turns == 0 and list(commit.folded) == []
    assert commit.archive["committed_messages"] == commit.archive["archived_messages"] == 6
    # the next call retried (a second request), then proceeded with the verbatim tail
    assert len(llm.requests) == 2
    frame = failed_frames[0]
    assert frame.decision.summarizer_called and frame.decision.kept_turns == KEEP and frame.check == "ok"
    payload = frame.payload(tr.messages)
    assert not any(str(m.get("content", "")).startswith("[Conversation summary") for m in payload)
    assert any(str(m.get("content", "")).startswith("question 3 ") for m in payload)
    assert payload[-1] == {"role": "user", "content": "and now?"}
    # every failure is counted, and so is every attempt
    totals = rp.totals(include_pending=True)
    assert totals["summarizer_failures"] == 2
    assert totals["summarizer_calls"] == {"in_turn": 1, "commit": 1}
    assert totals["summary_cost_usd"] == 0.0
    # the transcript ends on the user's question: the failed in-turn summary belongs to the pending next
    # call, which the default totals leave out (the agent never made it)
    assert rp.pending_call == len(rp.frames) - 1 and rp.frames[-1] is frame
    default = rp.totals()
    assert default["summarizer_calls"] == {"in_turn": 0, "commit": 1} and default["summarizer_failures"] == 1
    assert default["pending_calls_left_out"] == 1 and default["frames"] == len(rp.frames) - 1
    # nothing was cached for a failed call
    assert not cache_dir.exists() or not any(cache_dir.iterdir())
    # the failure and its reason survive into the exported JSON
    data = json.loads(rp.dumps())
    assert data["totals"]["summarizer_failures"] == 1 and data["frames"][-1]["pending"] is True
    assert reason in next(c["error"] for c in data["commits"] if c["cm"] == "summarizer-failed")


def test_a_failed_summary_is_retried_on_the_next_call_and_leaves_both_caches_untouched(
        llm: Any, tmp_path: Path) -> None:
    cache = SummaryCache(tmp_path / "cache")
    e = ContextEngine(summarizing(window=100_000), counter="estimate", llm=live(llm), summary_cache=cache)

    def turn(i: int) -> Any:
        e.user(user(f"q{i}"))
        e.record(asst(f"a{i}"))
        return e.commit()

    assert [turn(i).action for i in (1, 2)] == ["unchanged", "unchanged"]
    llm.mode = "500"
    rec = turn(3)
    assert rec.action == "summarizer-failed" and rec.error and "HTTP 500" in rec.error
    assert len(e.conversation.committed_messages) == 6, "a failed commit-time summary folds nothing"
    assert e.cm._cache is None, "the hysteresis cache is untouched by the failure"
    assert not cache.folder.exists() or list(cache.folder.glob("*.json")) == []

    llm.mode = "ok"
    rec = turn(4)  # the next commit retries and succeeds
    assert rec.action == "summarized" and rec.error is None
    assert len(llm.requests) == 2
    committed = e.conversation.committed_messages
    assert committed[0]["content"].startswith("[Conversation summary — 2 earlier exchange(s)]")
    assert [m["content"] for m in committed[1:]] == ["q3", "a3", "q4", "a4"]
    assert len(list(cache.folder.glob("*.json"))) == 1
    good = e.cm._cache
    assert good is not None and good.text == llm.reply

    llm.mode = "429"  # a later failure keeps the summary that is already there
    rec = turn(5)
    assert rec.action == "summarizer-failed" and "HTTP 429" in (rec.error or "")
    assert e.cm._cache is good
    assert e.conversation.committed_messages[0] is committed[0]
    assert len(list(cache.folder.glob("*.json"))) == 1
    assert e.summarizer_calls == {"in_turn": 0, "commit": 3}


def test_llm_engine_reports_each_failure_reason_directly(llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm, "stall_seconds", 3.0)
    prompt = [{"role": "user", "content": "hi"}]
    for mode, reason in [("500", "HTTP 500"), ("429", "HTTP 429"), ("malformed", "malformed response"),
                         ("empty", "empty content"), ("stall", "timeout")]:
        llm.mode = mode
        with pytest.raises(LLMCallError) as info:
            live(llm, timeout=1).complete(prompt)
        assert info.value.reason == reason, (mode, str(info.value))
    llm.mode = "ok"
    assert live(llm).complete(prompt).text == llm.reply
    unreachable = LLMEngine(model="openai/x", api_base="http://127.0.0.1:9/v1", api_key="x", timeout=2)
    with pytest.raises(LLMCallError) as info:
        unreachable.complete(prompt)
    assert info.value.reason == "unreachable", str(info.value)  # litellm calls it a 500; it is not


def test_the_cli_records_provider_failures_in_its_json(llm: Any, tmp_path: Path) -> None:
    llm.mode = "500"
    manifest = tmp_path / "m.yaml"
    manifest.write_text("kind: Agent\nspec:\n  context_manager:\n    type: summarising\n    params: {keep_turns: 2}\n"
                        "  models: [{model: acme/model, context_window: 2000, max_tokens: 200}]\n")
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps(three_turns_and_a_question().messages))
    out = subprocess.run([str(EXE), "replay", str(manifest), str(transcript), "--counter", "estimate",
                          "--model", "openai/test-model", "--api-base", llm.api_base],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "CONTEXT_INSPECTOR_API_KEY": "x"})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    # two failures recorded (at the commit, and in the pending next call); the totals count the agent's calls
    assert sum(c["cm"] == "summarizer-failed" for c in data["commits"]) == 1
    assert data["frames"][-1]["pending"] is True and data["frames"][-1]["cm"]["action"] == "summarizer-failed"
    assert data["totals"]["summarizer_failures"] == 1 and data["totals"]["pending_calls_left_out"] == 1
    assert any("HTTP 500" in (c["error"] or "") for c in data["commits"])
    assert len(llm.requests) == 2


# --- the summary cache --------------------------------------------------------------------------

CORRUPTIONS = {
    "truncated": lambda raw: raw[: len(raw) // 2],
    "empty": lambda raw: b"",
    "binary": lambda raw: b"\x00\xff\xfe garbage \x80",
    "other-key": lambda raw: json.dumps({"key": "0" * 64, "model": "m", "text": "someone else's summary"}).encode(),
    "text-not-a-string": lambda raw: json.dumps({**json.loads(raw), "text": ["not", "text"]}).encode(),
    "json-list": lambda raw: b"[1, 2, 3]",
}


@pytest.mark.parametrize("kind", list(CORRUPTIONS))
def test_a_corrupt_cache_file_is_a_miss_and_is_rebuilt(llm: Any, tmp_path: Path, kind: str) -> None:
    cache_dir = tmp_path / "cache"
    tr = four_turns_and_a_question()
    first = replay(summarizing(), tr, counter="estimate", llm=live(llm), summary_cache=cache_dir)
    files = sorted(cache_dir.glob("*.json"))
    assert len(llm.requests) == len(files) == 2
    victim = files[0]
    victim.write_bytes(CORRUPTIONS[kind](victim.read_bytes()))

    second = replay(summarizing(), tr, counter="estimate", llm=live(llm), summary_cache=cache_dir)
    assert len(llm.requests) == 3, "exactly one new model call, for the corrupt entry only"
    assert second.summary_cache_hits == 1
    data = json.loads(victim.read_text(encoding="utf-8"))
    assert data["key"] == victim.stem and data["text"] == llm.reply
    same = lambda rp: [(f["payload"], f["cm"]) for f in rp.to_json(payloads=True)["frames"]]  # noqa: E731
    assert same(second) == same(first), "the rebuilt entry gives the same payloads"

    replay(summarizing(), tr, counter="estimate", llm=live(llm), summary_cache=cache_dir)
    assert len(llm.requests) == 3, "the rebuilt file is a hit"
    assert not list(cache_dir.glob(".tmp-*")), "no temp files left behind"


@pytest.mark.parametrize("crash", [OSError("No space left on device"), KeyboardInterrupt()],
                         ids=["disk-full", "interrupt"])
def test_a_crash_mid_write_leaves_no_file_that_loads_wrong_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash: BaseException) -> None:
    cache = SummaryCache(tmp_path)
    key_new, key_old = SummaryCache.key("m", "i", "new input"), SummaryCache.key("m", "i", "old input")
    cache.put(key_old, "the old, good summary", "m")
    real_dump = json.dump

    def dump_half_then_die(obj: Any, fh: Any, **kw: Any) -> None:
        text = json.dumps(obj)
        fh.write(text[: len(text) // 2])
        fh.flush()
        raise crash

    monkeypatch.setattr(json, "dump", dump_half_then_die)
    with pytest.raises(type(crash)):
        cache.put(key_new, "a summary that never finished writing", "m")
    with pytest.raises(type(crash)):  # overwriting an existing entry fails the same way
        cache.put(key_old, "a replacement that never finished writing", "m")
    monkeypatch.setattr(json, "dump", real_dump)

    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{key_old}.json"], "no partial or temp file"
    assert cache.get(key_new) is None and cache.misses == 1
    assert cache.get(key_old) == "the old, good summary", "the previous entry is intact"
    cache.put(key_new, "now it works", "m")
    assert SummaryCache(tmp_path).get(key_new) == "now it works"


def test_a_process_killed_mid_write_never_leaves_a_loadable_partial_entry(tmp_path: Path) -> None:
    code = f"""
import json, os
from inspector.engine.summarizers.llm import SummaryCache
def dump(obj, fh, **kw):
    text = json.dumps(obj)
    fh.write(text[: len(text) // 2]); fh.flush(); os.fsync(fh.fileno())
    os._exit(9)  # the process dies here: no cleanup, no exception handlers
json.dump = dump
SummaryCache({str(tmp_path)!r}).put(SummaryCache.key("m", "i", "x"), "summary text", "m")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    key = SummaryCache.key("m", "i", "x")
    assert not (tmp_path / f"{key}.json").exists()
    leftovers = list(tmp_path.glob(".tmp-*"))
    assert leftovers, "the kill left its temp file (it is never read as an entry)"
    cache = SummaryCache(tmp_path)
    assert cache.get(key) is None
    cache.put(key, "summary text", "m")
    assert cache.get(key) == "summary text"


def test_an_unwritable_cache_never_costs_the_summary(llm: Any, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "cache"
    not_a_dir.write_text("a file where the cache folder should be")
    with pytest.warns(UserWarning, match="summary cache not written"):
        rp = replay(summarizing(), four_turns_and_a_question(), counter="estimate", llm=live(llm),
                    summary_cache=not_a_dir)
    assert rp.totals()["summarizer_failures"] == 0
    assert [c.action for c in rp.commits][-1] == "summarized"
    assert len(llm.requests) == 2


# --- archive snapshots --------------------------------------------------------------------------

class Echo:
    def summarize(self, msgs: list[dict]) -> str:
        return f"summary of {len(msgs)} messages"


def conversation(cm: Any, turns: int = 6, tag: str = "A", summarizer: Any = "drop") -> ContextEngine:
    e = ContextEngine(settings_from_dict({"kind": "Agent", "spec": {"context_manager": cm}}).settings,
                      counter="estimate", summarizer=summarizer)
    for i in range(turns):
        e.user(user(f"{tag} question {i}"))
        e.record(asst(f"{tag} answer {i}"))
        e.commit()
    return e


MANAGERS = {
    "stack-cap": ({"type": "stack", "params": {"max_messages": 3}}, "drop"),
    "sliding-window": ({"type": "sliding-window", "params": {"keep_turns": 2}}, "drop"),
    "summarising": ({"type": "summarising", "params": {"keep_turns": 2}}, Echo()),
    "summarising-drop": ({"type": "summarising", "params": {"keep_turns": 1}}, "drop"),
    "unbounded-stack": ("stack", "drop"),
}


def snapshot_of(name: str = "summarising", tag: str = "A") -> dict[str, Any]:
    cm, summ = MANAGERS[name]
    return conversation(cm, tag=tag, summarizer=summ).conversation.archive.snapshot()


def resign(snap: dict[str, Any]) -> dict[str, Any]:
    """What a careful forger (or a buggy writer) would do: fix the checksum after editing."""
    snap["checksum"] = _checksum({k: snap.get(k) for k in ("version", "seq", "nodes", "covering", "leaves")})
    return snap


@pytest.mark.parametrize("name", list(MANAGERS))
def test_snapshots_round_trip_exactly(name: str) -> None:
    cm, summ = MANAGERS[name]
    arch = conversation(cm, summarizer=summ).conversation.archive
    text = json.dumps(arch.snapshot())
    for data in (text, text.encode(), json.loads(text)):
        again = Archive.load(data)
        assert again.projection() == arch.projection()
        assert again.archived_messages() == arch.archived_messages()
        assert again.stats() == arch.stats()
        assert again.snapshot() == arch.snapshot()


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 0.9, 0.999])
def test_truncated_snapshot_text_is_refused(fraction: float) -> None:
    text = json.dumps(snapshot_of())
    cut = text[: int(len(text) * fraction)]
    with pytest.raises(ArchiveError, match="not valid JSON"):
        Archive.load(cut)
    with pytest.raises(ArchiveError, match="not valid JSON"):
        Archive.load(cut.encode())


def _drop_last_node(s: dict) -> None:
    s["nodes"].pop()


EDITS = {
    "message-content": lambda s: next(n for n in s["nodes"] if n["kind"] == "leaf")["messages"][0].update(
        content="something else"),
    "message-role": lambda s: next(n for n in s["nodes"] if n["kind"] == "leaf")["messages"][0].update(role="system"),
    "summary-text": lambda s: next(n for n in s["nodes"] if n.get("text")).update(text="a different summary"),
    "turn-number": lambda s: next(n for n in s["nodes"] if n["kind"] == "leaf").update(turn=99),
    "node-dropped": _drop_last_node,
    "nodes-reordered": lambda s: s["nodes"].reverse(),
    "covering-shortened": lambda s: s["covering"].pop(),
    "leaf-list-shortened": lambda s: s["leaves"].pop(),
    "seq-changed": lambda s: s.update(seq=s["seq"] + 1),
    "checksum-removed": lambda s: s.pop("checksum"),
    "checksum-garbled": lambda s: s.update(checksum="0" * 64),
    "extra-message": lambda s: next(n for n in s["nodes"] if n["kind"] == "leaf")["messages"].append(
        {"role": "user", "content": "injected"}),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_hand_edited_or_structurally_truncated_snapshot_is_refused(edit: str) -> None:
    snap = json.loads(json.dumps(snapshot_of()))
    EDITS[edit](snap)
    with pytest.raises(ArchiveError, match="checksum mismatch"):
        Archive.load(snap)


@pytest.mark.parametrize("version", [0, 2, "1", 1.0, None, True, [1]])
def test_wrong_version_is_refused_naming_it(version: Any) -> None:
    snap = snapshot_of()
    snap["version"] = version
    with pytest.raises(ArchiveError, match="unsupported snapshot version"):
        Archive.load(resign(snap))


@pytest.mark.parametrize("data", [None, 5, "just text", "[1, 2]", [], b"\xff\xfe not utf-8"],
                         ids=["none", "int", "text", "json-list", "list", "bad-bytes"])
def test_not_a_snapshot_at_all(data: Any) -> None:
    with pytest.raises(ArchiveError):
        Archive.load(data)


def _first(s: dict, kind: str) -> dict:
    return next(n for n in s["nodes"] if n["kind"] == kind)


INCONSISTENT = {
    "unknown-kind": lambda s: _first(s, "fold").update(kind="banana"),
    "messages-not-a-list": lambda s: _first(s, "leaf").update(messages="abc"),
    "messages-not-objects": lambda s: _first(s, "leaf").update(messages=[1, 2]),
    "empty-leaf": lambda s: _first(s, "leaf").update(messages=[]),
    "duplicate-id": lambda s: s["nodes"].append(copy.deepcopy(s["nodes"][0])),
    "cycle": lambda s: _first(s, "fold")["children"].append(_first(s, "fold")["id"]),
    "unknown-child": lambda s: _first(s, "fold")["children"].append("L999"),
    "unknown-covering-node": lambda s: s["covering"].append("F999"),
    "unknown-leaf": lambda s: s["leaves"].append("L999"),
    "fold-listed-as-leaf": lambda s: s["leaves"].append(_first(s, "fold")["id"]),
    "covering-empty": lambda s: s.update(covering=[]),
    "leaf-covered-twice": lambda s: s["covering"].append(s["covering"][-1]),
    "covering-not-a-list": lambda s: s.update(covering="F1"),
    "nodes-not-a-list": lambda s: s.update(nodes=None),
    "node-not-an-object": lambda s: s["nodes"].append("x"),
    "children-not-a-list": lambda s: _first(s, "fold").update(children=5),
    "id-not-a-string": lambda s: s["nodes"][0].update(id=5),
    "id-beyond-seq": lambda s: s.update(seq=1),
    "seq-not-an-int": lambda s: s.update(seq="13"),
    "turn-not-an-int": lambda s: _first(s, "leaf").update(turn="3"),
    "orphan-leaf": lambda s: (s.update(seq=s["seq"] + 1), s["nodes"].append(
        {"id": f"L{s['seq']}", "kind": "leaf", "turn": 1, "messages": [{"role": "user", "content": "x"}]})),
}


@pytest.mark.parametrize("edit", list(INCONSISTENT))
def test_inconsistent_tree_is_refused_even_with_a_matching_checksum(edit: str) -> None:
    snap = json.loads(json.dumps(snapshot_of("stack-cap")))
    INCONSISTENT[edit](snap)
    with pytest.raises(ArchiveError, match="inconsistent archive tree") as info:
        Archive.load(resign(snap), source="state.json")
    assert str(info.value).startswith("state.json: ")


def test_a_snapshot_never_loads_as_a_different_conversation() -> None:
    a, b = snapshot_of(tag="A"), snapshot_of(tag="B")
    assert a["checksum"] != b["checksum"]
    assert [m["content"] for m in Archive.load(a).archived_messages()][0] == "A question 0"
    assert [m["content"] for m in Archive.load(b).archived_messages()][0] == "B question 0"
    swapped = {**a, "checksum": b["checksum"]}
    with pytest.raises(ArchiveError, match="checksum"):
        Archive.load(swapped)
    spliced = {**b, "nodes": a["nodes"]}
    with pytest.raises(ArchiveError, match="checksum"):
        Archive.load(spliced)
    mixed = json.loads(json.dumps(a))
    mixed["nodes"][-1] = json.loads(json.dumps(b))["nodes"][-1]
    with pytest.raises(ArchiveError, match="checksum"):
        Archive.load(mixed)


def test_restoring_a_bad_snapshot_leaves_the_conversation_as_it_was() -> None:
    e = conversation({"type": "stack", "params": {"max_messages": 3}})
    state = e.conversation.export_state()
    before = list(e.conversation.committed_messages)
    bad = json.loads(json.dumps(state))
    bad["archive"]["nodes"][0]["messages"] = [{"role": "user", "content": "forged"}]
    with pytest.raises(ArchiveError):
        e.conversation.restore_state(bad)
    assert e.conversation.committed_messages == before
    e.conversation.restore_state(json.loads(json.dumps(state)))
    assert e.conversation.committed_messages == before
