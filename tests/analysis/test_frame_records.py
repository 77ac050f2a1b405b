"""Frames hold the engine's typed records, and repairs name real transcript messages."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from inspector.engine.budget import Budget
from inspector.replay import CallDecision, FrameRepair, replay
from inspector.transcripts import load_transcript, sample_path

MANIFEST = Path(__file__).resolve().parents[2] / "sample_manifests" / "small-window.yaml"


def _replay(transcript: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return replay(MANIFEST, transcript, counter="estimate", summarizer="drop")


def ask(cid: str, name: str = "lookup", text: str = "") -> dict[str, Any]:
    return {"role": "assistant", "content": text,
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}]}


def result(cid: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def test_a_frame_holds_the_budget_record_and_a_typed_decision() -> None:
    rp = _replay(load_transcript(sample_path("demo_support.json")))
    for f in rp.frames:
        assert isinstance(f.budget, Budget) and isinstance(f.decision, CallDecision)
        # the input budget by its definition (docs/design.md §3.2): ceiling − completion reserve − margin
        assert f.input_budget == f.budget.max_tokens - f.budget.reserve - f.budget.margin
        shown = f.to_json()
        assert shown["budget"]["hint"] == f.budget.hint and shown["cm"]["action"] == f.decision.action
        assert set(shown["cm"]) == {"action", "compressed_turns", "kept_turns", "dropped_turns",
                                    "summarizer_called", "error", "raw_tokens"}
    json.loads(rp.dumps(payloads=True))  # still one strict-JSON document


def test_repairs_name_the_transcript_message_they_concern(tmp_path: Path) -> None:
    """An unanswered ask mid-history, a result with no ask, a second result for one ask: each repair's
    ``ref`` is the transcript index of a message that carries the id the repair names."""
    messages = [
        {"role": "user", "content": "first"},
        ask("c1", text="checking"),  # never answered: stripped
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "second"},
        result("ghost"),  # no ask anywhere: dropped
        ask("c2"),
        result("c2"),
        result("c2", "again"),  # a second answer: dropped
        {"role": "assistant", "content": "all good"},
        {"role": "user", "content": "third"},
        {"role": "assistant", "content": "bye"},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(messages))
    rp = _replay(load_transcript(str(path)))
    seen: set[str] = set()
    for f in rp.frames:
        for r in f.repairs:
            assert isinstance(r, FrameRepair)
            seen.add(r.repair.kind)
            if r.ref is None:
                continue
            msg = rp.messages[r.ref]
            ids = {msg.get("tool_call_id")} | {c["id"] for c in msg.get("tool_calls") or ()}
            assert r.repair.tool_call_id in ids, (r, msg)
            assert f.to_json()["repairs"][f.repairs.index(r)]["ref"] == r.ref
    assert seen, "the transcript was built to need repairs"
    assert all(r.ref is not None for f in rp.frames for r in f.repairs if r.repair.kind != "empty_result_synthesised")


def test_a_derived_view_is_kept_on_its_own_replay() -> None:
    """``Replay.view``: made once per replay (the second read makes nothing), never shared between two."""
    first = _replay(load_transcript(sample_path("demo_support.json")))
    second = _replay(load_transcript(sample_path("demo_support.json")))
    made: list[int] = []

    def make() -> list[int]:
        made.append(1)
        return [len(made)]

    a = first.view("probe", make)
    assert first.view("probe", make) is a and len(made) == 1
    b = second.view("probe", make)
    assert b is not a and len(made) == 2


def test_frames_and_commits_keep_no_list() -> None:
    """A replay keeps every frame alive; a frame's sequences are tuples (read-only, and no object per
    empty field for the garbage collector to walk), and they serialise as the same JSON arrays."""
    rp = _replay(load_transcript(sample_path("demo_support.json")))
    assert any(f.folded for f in rp.frames) or any(c.folded for c in rp.commits), "the sample folds"
    for f in rp.frames:
        for name in ("segments", "trimmed", "folded", "repairs", "warnings", "not_sent"):
            assert type(getattr(f, name)) is tuple, name
        shown = f.to_json()
        assert shown["trimmed"] == [list(r) for r in f.trimmed] and shown["warnings"] == list(f.warnings)
    assert all(type(c.folded) is tuple for c in rp.commits)
    assert '"warnings":[]' in rp.dumps()


def test_frames_of_one_shared_decision_record_share_one_cm_object_in_the_document() -> None:
    """Equal call decisions are one :class:`CallDecision` record (the recorder shares them); the
    document writes one ``cm`` object per record, which its frames share: as many ``cm`` objects as
    distinct records, each equal to its record's fields."""
    rp = _replay(load_transcript(sample_path("demo_support.json")))
    frames = rp.to_json()["frames"]
    records = {id(f.decision) for f in rp.frames}
    assert len(records) < len(rp.frames)  # the demo's calls repeat decisions
    assert len({id(shown["cm"]) for shown in frames}) == len(records)
    for f, shown in zip(rp.frames, frames, strict=True):
        assert shown["cm"] == f.to_json()["cm"] == dict(zip(CallDecision._fields, f.decision))


def test_a_document_writes_each_distinct_budget_once_and_frames_of_equal_budgets_share_it(
        tmp_path: Path, monkeypatch: Any) -> None:
    """A replay document's ``budget`` object is made once per distinct :class:`Budget` value and
    shared by the frames of equal budgets. Two turns of "fix it", one ask each, make four calls; a
    budget's only moving part is ``fixed`` (system + user message + working memory), so the first
    call of each turn (the user message alone) has one budget and the second (plus the ask and its
    result) another: two budgets written for four frames, each frame's as the frame alone writes it."""
    import inspector.replay.records as records
    from tests.builders import spy

    msgs = [{"role": "user", "content": "fix it"}, ask("c1"), result("c1"), {"role": "assistant", "content": "x"},
            {"role": "user", "content": "fix it"}, ask("c2"), result("c2"), {"role": "assistant", "content": "x"}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(msgs))
    rp = _replay(load_transcript(path))
    budgets = [f.budget for f in rp.frames]
    assert len(budgets) == 4 and budgets[0] == budgets[2] and budgets[1] == budgets[3] and budgets[0] != budgets[1]
    written = spy(monkeypatch, records, "_budget_json")
    frames = rp.to_json()["frames"]
    assert written == [budgets[0], budgets[1]]
    assert frames[0]["budget"] is frames[2]["budget"] and frames[1]["budget"] is frames[3]["budget"]
    assert [fr["budget"] for fr in frames] == [f.to_json()["budget"] for f in rp.frames]


def test_a_replay_rounds_each_distinct_payload_cost_once(monkeypatch: Any) -> None:
    """A frame's ``cost_usd`` (tokens × the model's input price, rounded to 10 places) is rounded once
    per distinct payload size. Four turns of "fix it" / "done" under sliding-window keeping one turn:
    the first call sends the user message alone, each later call the previous turn and the user
    message, the same rows again: two sizes, so two ``round`` calls for four frames, each frame's
    cost as computed alone."""
    import builtins

    import inspector.replay.recorder as recorder
    from inspector.manifest import settings_from_dict
    from inspector.transcripts.model import Transcript

    rounded: list[object] = []

    def counting_round(x: float, n: int) -> float:
        rounded.append(x)
        return builtins.round(x, n)

    monkeypatch.setattr(recorder, "round", counting_round, raising=False)
    msgs = [m for _ in range(4) for m in ({"role": "user", "content": "fix it"}, {"role": "assistant", "content": "done"})]
    s = settings_from_dict({"kind": "Agent", "spec": {"models": [{"model": "gpt-4o", "context_window": 128_000}],
                                                      "context_manager": {"type": "sliding-window",
                                                                          "params": {"keep_turns": 1}}}})
    t = Transcript(format="synthetic", path=None, messages=msgs, origins=[str(i) for i in range(8)], tools=None,
                   model="gpt-4o", usage={}, irregularities=[])
    rp = replay(s, t, counter="estimate")
    sizes = [f.payload_tokens for f in rp.frames]
    assert len(sizes) == 4 and sizes[1] == sizes[2] == sizes[3] > sizes[0]
    price = rp.limits["input_cost_per_token"]
    assert price and len(rounded) == 2
    assert [f.cost_usd for f in rp.frames] == [builtins.round(n * price, 10) for n in sizes]


def test_a_frontier_frames_json_reads_its_replaced_view_by_its_counts_not_its_sequence_methods(
        tmp_path: Path, monkeypatch: Any) -> None:
    """Rule: a frontier frame's ``replaced_added`` is its view's entries past ``replaced_kept``, read
    from the table's lists (no ``len`` or slice of the view per frame: a frame with nothing added
    costs what a seed frame costs). One turn of 5 asks under observation-masking, window 3 events:
    the calls' lists are [], [], [], [2], [2, 4], [2, 4, 6] (worked out in
    tests/engine/test_frontier_replacements.py), so frames 3-5 carry the keys, kept 0, 1, 2, each
    adding the one new result; frames 0-2 (an empty view) carry none."""
    from builders import one_turn_asks, spy
    from inspector.engine.managers.observation_masking import MASKED
    from inspector.replay.replaced import ReplacedRefs

    path, manifest = tmp_path / "t.json", tmp_path / "m.yaml"
    path.write_text(json.dumps({"messages": one_turn_asks(5)}))
    manifest.write_text(json.dumps({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "m"}, "spec": {
        "models": [{"id": "main", "model": "gpt-4o"}],
        "context_manager": {"type": "observation-masking", "params": {"attention_window": 3}}}}))
    rp = replay(str(manifest), load_transcript(path), counter="estimate")
    sliced = spy(monkeypatch, ReplacedRefs, "__getitem__")
    counted = spy(monkeypatch, ReplacedRefs, "__len__")
    frames = [f.to_json() for f in rp.frames]
    assert sliced == [] and counted == []
    assert [(f.get("replaced_kept"), f.get("replaced_added")) for f in frames] == [
        (None, None)] * 3 + [(k, [{"ref": r, "reason": MASKED}]) for k, r in ((0, 2), (1, 4), (2, 6))]
    alone = rp.frames[5].to_json(alone=True)
    assert alone["replaced_kept"] == 0 and [r["ref"] for r in alone["replaced_added"]] == [2, 4, 6]


def test_a_frontier_frame_that_added_no_replacement_reads_neither_its_table_nor_its_extra_rows() -> None:
    """Rule: a frame whose replaced rows are the previous frame's (``replaced_kept`` = its table's count,
    no working-memory row replaced) writes ``replaced_added`` [] without reading its table (most calls
    of a frontier replay); with no table entry and no extra row it writes no keys (None). A table of 3
    entries with 1 extra row kept 3: the extra row only."""
    from inspector.replay.records import _added_json
    from inspector.replay.replaced import ReplacedRefs

    class Unread:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"the table's {name} was read")

    table: Any = Unread()
    assert _added_json(ReplacedRefs(table, 3), 3) == []
    assert _added_json(ReplacedRefs(table, 0), 0) is None
    assert _added_json(ReplacedRefs(table, 3, ((9, "masked"),)), 3) == [{"ref": 9, "reason": "masked"}]
