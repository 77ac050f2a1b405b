"""No return to quadratic: per-call work of a replay does not grow with the history.

Wall-clock time is never asserted. What is counted is the work the reference path did per payload
row — token-unit look-ups (each payload row's units read from the counter's cache) and reads of a
message's fields (every row any stage walks: the messages are dicts that count their reads) — on the two
shapes that used to be quadratic: one user turn with thousands of tool rounds (everything is
working memory) and an uncapped ``stack`` over many turns (the trimmer cuts on every call). Doubling
the transcript must roughly double the count; the same measurement on the reference path shows
the count does catch quadratic growth.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

from inspector.engine import ContextEngine
from inspector.engine.tokens import EstimateCounter
from inspector.manifest import settings_from_dict

from builders import spy


class Row(dict):  # type: ignore[type-arg]
    """A message that counts how often any stage reads one of its fields (a row walked)."""

    reads = 0

    def get(self, key: Any, default: Any = None) -> Any:
        Row.reads += 1
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        Row.reads += 1
        return super().__getitem__(key)


class CountingCounter(EstimateCounter):
    """The real ``estimate`` counter, counting how often a message's units are looked up."""

    def __init__(self) -> None:
        super().__init__()
        self.lookups = 0

    def unit(self, msg: dict) -> int:
        self.lookups += 1
        return super().unit(msg)

    def history_unit(self, msg: dict) -> int:
        self.lookups += 1
        return super().history_unit(msg)


def one_enormous_turn(rounds: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [{"role": "user", "content": "fix the bug"}]
    for i in range(rounds):
        rows += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": f"call_{i}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"i": i})}}]},
                 {"role": "tool", "tool_call_id": f"call_{i}", "content": "file.txt " * 8}]
    rows.append({"role": "assistant", "content": "done"})
    return rows


def many_turns(turns: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(turns):
        rows += [{"role": "user", "content": f"question {i}"},
                 {"role": "assistant", "content": None, "tool_calls": [
                     {"id": f"call_{i}", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": f"call_{i}", "content": "result text " * 8},
                 {"role": "assistant", "content": f"answer {i}"}]
    return rows


def lookups(rows: list[dict[str, Any]], cm: dict[str, Any], *, incremental: bool = True) -> tuple[int, int, int]:
    """Drive an engine through ``rows`` as a replay does; return (unit look-ups, field reads, calls)."""
    counter, _engine, calls = drive(rows, cm, incremental=incremental)
    return counter.lookups, Row.reads, calls


def drive(rows: list[dict[str, Any]], cm: dict[str, Any], *, incremental: bool = True,
          summarizer: Any = "drop") -> tuple[CountingCounter, ContextEngine, int]:
    """Drive an engine through ``rows`` as a replay does (``Row.reads`` counts from 0)."""
    rows = [Row(m) for m in rows]
    Row.reads = 0
    s = settings_from_dict({"kind": "Agent", "spec": {
        "context_manager": {**cm, "params": {**cm.get("params", {}), "trimmer": {"max_tokens": 2000, "reserve_tokens": 200}}},
        "models": [{"model": "gpt-4o", "context_window": 2000}]}}).settings
    counter = CountingCounter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = ContextEngine(s, counter=counter, summarizer=summarizer)
        engine.assembler.incremental = incremental
        calls = 0
        for m in rows:
            if m["role"] == "user":
                if engine.conversation.current_user is not None:
                    engine.commit()
                engine.user(m)
                continue
            if m["role"] == "assistant":
                call = engine.assemble()
                assert call.check == "ok"
                calls += 1
            engine.record(m)
    return counter, engine, calls


SHAPES = {
    "one enormous turn (stack)": (one_enormous_turn, {"type": "stack"}),
    "one enormous turn (summarising)": (one_enormous_turn, {"type": "summarising", "params": {"keep_turns": 2}}),
    "many turns, uncapped stack": (many_turns, {"type": "stack"}),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_token_lookups_grow_linearly_with_the_transcript(shape: str) -> None:
    make, cm = SHAPES[shape]
    small, reads_small, calls_small = lookups(make(2500), cm)
    big, reads_big, calls_big = lookups(make(5000), cm)
    assert calls_big >= 2 * calls_small - 1
    assert big / small < 2.3, f"{small:,} -> {big:,} look-ups for twice the transcript"
    assert big / calls_big < 40, f"{big / calls_big:.0f} look-ups per call"
    assert reads_big / reads_small < 2.3, f"{reads_small:,} -> {reads_big:,} field reads for twice the transcript"
    assert reads_big / calls_big < 120, f"{reads_big / calls_big:.0f} field reads per call"


@pytest.mark.parametrize("shape", list(SHAPES))
def test_each_row_has_its_facts_derived_once_per_index(shape: str) -> None:
    """A row's facts (units, role, ask, call ids, group and unit boundaries) are derived when it
    enters working memory and again when it is committed — never per call. Re-deriving the payload's
    rows on every call (thousands of calls here, hundreds of rows each) would exceed this by orders
    of magnitude; so would re-indexing the log from scratch at each commit."""
    make, cm = SHAPES[shape]
    rows = make(1500)
    _counter, engine, calls = drive(rows, cm)
    assert calls >= 1500
    assert engine.assembler.rows_indexed <= 2 * len(rows), f"{engine.assembler.rows_indexed:,} rows indexed"


@pytest.mark.parametrize("shape", ["one enormous turn (stack)", "one enormous turn (summarising)"])
def test_the_count_catches_quadratic_growth(shape: str) -> None:
    """The reference path reads all of working memory on every call: in one enormous turn the same
    counts grow more than 3× when the transcript doubles, so the assertion above would fail on a
    return to it. (Over many turns the reference's counts stay linear — the pre-cut already bounded
    them — and its quadratic part was the frames' JSON, which ``test_robust_transcripts`` measures.)"""
    make, cm = SHAPES[shape]
    small, reads_small, _ = lookups(make(300), cm, incremental=False)
    big, reads_big, _ = lookups(make(600), cm, incremental=False)
    fast_small, fast_reads_small, _ = lookups(make(300), cm)
    fast_big, fast_reads_big, _ = lookups(make(600), cm)
    assert max(big / small, reads_big / reads_small) > 3, (small, big, reads_small, reads_big)
    assert fast_big / fast_small < 2.3 and fast_reads_big / fast_reads_small < 2.3


class Echo:
    """A summarizer that reads no row: the condenser's block without the summarizer's own reads."""

    def summarize(self, msgs: list[dict[str, Any]]) -> str:
        return f"summary of {len(msgs)} messages"


CONDENSER = {"type": "condenser", "params": {"max_size": 80, "keep_first": 2}}
"""The condenser's record is ``log[:2] + [summary] + log[k:]`` (a kept head, the block, a tail of
40 to 80 events), not a suffix of the log: the incremental path reads its head rows and block and
what changed, the reference path every row of the tail on every call."""


@pytest.mark.parametrize("summarizer", [Echo(), "drop"])
def test_the_condenser_reads_its_head_rows_and_what_changed_not_its_tail(summarizer: Any) -> None:
    """Rule: a record of the shape ``log[:h] + [block?] + log[k:]`` takes the incremental path. Per
    call the assembly looks up the units of the 2 head rows and the block (each twice: the pre-cut
    and the layout), the system and user rows and what changed — never the 39 to 79 tail rows the
    reference reads (each looked up at least once: > 39 per call). Doubling the transcript doubles
    the counts; each row's facts are derived at most twice (working memory, then the log)."""
    rows_small, rows_big = many_turns(1000), many_turns(2000)
    counter, engine_small, calls_small = drive(rows_small, CONDENSER, summarizer=summarizer)
    small, reads_small = counter.lookups, Row.reads
    counter, engine_big, calls_big = drive(rows_big, CONDENSER, summarizer=summarizer)
    big, reads_big = counter.lookups, Row.reads
    assert calls_big == 2 * calls_small == 4000
    assert engine_small.assembler.rows_indexed <= 2 * len(rows_small)
    assert engine_big.assembler.rows_indexed <= 2 * len(rows_big), f"{engine_big.assembler.rows_indexed:,} rows indexed"
    assert big / calls_big < 20, f"{big / calls_big:.0f} look-ups per call"
    assert big / small < 2.1 and reads_big / reads_small < 2.1, (small, big, reads_small, reads_big)
    counter, _engine, ref_calls = drive(rows_small, CONDENSER, summarizer=summarizer, incremental=False)
    assert counter.lookups / ref_calls > 39, f"the reference reads its tail: {counter.lookups / ref_calls:.0f} look-ups per call"


def rounds_per_turn(turns: int, rounds: int) -> list[dict[str, Any]]:
    """``turns`` user turns of ``rounds`` tool rounds each then an answer: ``rounds + 1`` calls a turn."""
    rows: list[dict[str, Any]] = []
    for t in range(turns):
        rows.append({"role": "user", "content": f"question {t}"})
        for r in range(rounds):
            rows += [{"role": "assistant", "content": None, "tool_calls": [
                         {"id": f"call_{t}_{r}", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": f"call_{t}_{r}", "content": "result text " * 8}]
        rows.append({"role": "assistant", "content": f"answer {t}"})
    return rows


def test_the_log_match_and_the_split_shape_are_read_once_a_turn(monkeypatch: Any) -> None:
    """Rule: every call of a turn sees the same edit record over the same log, so where the manager's
    result sits in the log (``_match_log``) is found once a turn, and the record's split shape is read
    once a record (the assembler keeps it with the frozen record it read it from) and never by the
    manager's result (:func:`~inspector.engine.managers.base.managed` derives its history only when
    it is read, and the incremental path reads the record). Hand-worked for an uncapped ``stack``
    (one record a turn, no write-back fold), 3 turns of 2 tool rounds: 3 calls a turn, 9 calls; 3
    matches (not 9); 3 shape reads (once a call would make it 9, a history derived per result 12)."""
    from inspector.engine.assembly import incremental
    from inspector.engine.contracts import EditRecord

    matches, shapes = [0], [0]
    match_log, split_shape = incremental._match_log, EditRecord.split_shape

    def counting_match(*args: Any) -> Any:
        matches[0] += 1
        return match_log(*args)

    def counting_shape(self: EditRecord) -> Any:
        shapes[0] += 1
        return split_shape(self)

    monkeypatch.setattr(incremental, "_match_log", counting_match)
    monkeypatch.setattr(EditRecord, "split_shape", counting_shape)
    _counter, _engine, calls = drive(rounds_per_turn(3, 2), {"type": "stack"})
    assert calls == 9
    assert matches[0] == 3
    assert shapes[0] == 3


def _count_fold_kind_reads(monkeypatch: Any) -> tuple[list[int], list[int]]:
    """Counters of ``vocabulary.fold_kind`` derivations and registry reads, as the engine makes them."""
    from inspector.engine import engine as engine_module

    derived, read = [0], [0]
    fold_kind, registered = engine_module.fold_kind, engine_module.registered_actions

    def counting(action: str) -> str:
        derived[0] += 1
        return fold_kind(action)

    def reading() -> Any:
        read[0] += 1
        return registered()

    monkeypatch.setattr(engine_module, "fold_kind", counting)
    monkeypatch.setattr(engine_module, "registered_actions", reading)
    return derived, read


def test_a_write_back_of_the_running_managers_own_action_reads_no_registry(monkeypatch: Any) -> None:
    """Rule: the fold kind of an action the running manager declares is its own declaration's, read
    without the plugin registry (which would load every other strategy's module at the first fold).
    Hand-worked: a sliding window of 2 turns over 7 user turns commits turns 1 to 6 (the 7th is still
    open); turns 3, 4, 5 and 6 each leave 3 turns over the cap, so 4 folds, all ``window-slid``
    (declared by the sliding window with fold kind ``window``): 0 derivations, 0 registry reads."""
    derived, read = _count_fold_kind_reads(monkeypatch)
    _counter, engine, _calls = drive(rounds_per_turn(7, 1), {"type": "sliding-window", "params": {"keep_turns": 2}})
    archive = engine.conversation.archive
    assert archive.stats()["folds"] == 4
    assert {n.fold_kind for n in archive.nodes.values() if n.kind == "fold"} == {"window"}
    assert derived[0] == 0 and read[0] == 0


def test_a_write_back_derives_an_undeclared_actions_fold_kind_once_per_action(monkeypatch: Any) -> None:
    """Rule: an action the running manager does not declare takes the registry's fold kind, derived
    (``vocabulary.fold_kind``, a table built afresh on each read) once while the action and the
    registered actions stay the same, not at every fold. The same 4 folds as above, the sliding
    window declaring nothing: 1 derivation (4 without the memo)."""
    from inspector.engine.managers.sliding_window import SlidingWindowConversation
    from inspector.plugins import default_registry

    monkeypatch.setattr(SlidingWindowConversation, "actions", ())
    # the registry keeps what the strategies declare until it changes: a memo of its own for this
    # test, so the declarations read with no sliding-window actions do not outlive it
    monkeypatch.setattr(default_registry(), "_declared", {})
    derived, _read = _count_fold_kind_reads(monkeypatch)
    _counter, engine, _calls = drive(rounds_per_turn(7, 1), {"type": "sliding-window", "params": {"keep_turns": 2}})
    assert engine.conversation.archive.stats()["folds"] == 4
    assert derived[0] == 1


def test_summarising_under_its_trigger_gives_every_call_of_a_turn_one_record(monkeypatch: Any) -> None:
    """Rule: a summarising manager that keeps the whole log hands every call of a turn the same
    (frozen) record, so the assembler finds it in the log once a turn. Hand-worked: 3 turns of 2
    tool rounds, far under the trigger and the 10-turn cap: 9 calls, 3 matches (9 with a new record
    per call)."""
    from inspector.engine.assembly import incremental

    matches = [0]
    match_log = incremental._match_log

    def counting_match(*args: Any) -> Any:
        matches[0] += 1
        return match_log(*args)

    monkeypatch.setattr(incremental, "_match_log", counting_match)
    _counter, _engine, calls = drive(rounds_per_turn(3, 2), {"type": "summarising", "params": {"keep_turns": 10}})
    assert calls == 9
    assert matches[0] == 3


def test_a_summary_block_in_the_committed_log_is_laid_as_one_row_between_spans(monkeypatch: Any) -> None:
    """Rule: once a compaction is written back its summary block is a row of the committed log; the
    layout lays it as one ``summary`` row between the log range's spans (its units from the log's
    sums), never row by row. Hand-worked: auto-compact at 150 tokens over 6 turns of 1 tool round
    (2 calls a turn, 12 calls): calls 1-7 are under the trigger (one span each), calls 8 and 12
    compact (a record with an inserted block: the reference path), and calls 9-11 see the block in
    the log: 10 range layouts, 0 row-by-row (3 before), each of calls 9-11 laying
    ``[span, block, span]`` for the log range."""
    from inspector.engine.assembly import incremental
    from inspector.engine.types import Span

    layouts: list[Any] = []
    by_rows = spy(monkeypatch, incremental, "_layout_rows")
    ranges = incremental._layout_ranges

    def recording(*args: Any) -> Any:
        out = ranges(*args)
        layouts.append(out[0])
        return out

    monkeypatch.setattr(incremental, "_layout_ranges", recording)
    _counter, engine, calls = drive(rounds_per_turn(6, 1), {"type": "auto-compact", "params": {
        "threshold_tokens": 150, "keep_user_tokens": 8}}, summarizer=Echo())
    assert calls == 12
    assert by_rows == [] and len(layouts) == 10
    for layout in layouts[7:]:
        shape = [p.band if isinstance(p, Span) else (p.band, p.synthetic) for p in layout[:3]]
        assert shape == ["history", ("summary", "summary"), "history"], shape
    assert engine.conversation.committed_messages[1]["content"].startswith("[Conversation summary")
