"""The edit record a manager returns (:mod:`inspector.engine.contracts`): the history is derived from
it, so are the rows left out, and a working-memory edit never touches the newest group."""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.engine import ContextEngine
from inspector.engine.contracts import EditRecord, Insertion, Replacement, check_record, newest_group_start, record_of
from inspector.engine.managers.base import CMDecision, ContextManager, Managed, manage, managed
from inspector.engine.types import Message, RowsView

SAMPLES = Path(__file__).resolve().parents[2] / "inspector" / "samples" / "manifests"


def rows(n: int) -> list[Message]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"r{i}"} for i in range(n)]


def test_apply_places_kept_rows_replacements_and_blocks_by_log_index() -> None:
    past = rows(6)
    block, new2 = {"role": "user", "content": "summary"}, {"role": "assistant", "content": "cleared"}
    # keep [0, 2) and [4, 6); row 1 replaced; the block before row 4 (after the gap), another at the end
    record = EditRecord(6, ((0, 2), (4, 6)), (Replacement(1, new2, "x"),),
                        (Insertion(4, block), Insertion(6, block, "note")))
    out = list(record.apply(past))
    assert [m["content"] for m in out] == ["r0", "cleared", "summary", "r4", "r5", "summary"]
    assert record.dropped() == ((2, 4),)
    assert record.suffix_start() is None


def test_the_suffix_shape_is_a_view_of_the_log_and_left_out_rows_are_the_prefix() -> None:
    past = rows(5)
    block = {"role": "user", "content": "summary"}
    record = EditRecord.suffix(5, 3, block)
    assert record.suffix_start() == (3, Insertion(3, block))
    assert list(record.apply(past)) == [block, past[3], past[4]]
    result = managed(past, record, CMDecision("summarized"))
    assert result.decision.folded == past[:3] and result.edits is record
    assert EditRecord.keep_all(5).dropped() == () and EditRecord.suffix(5, 5).dropped() == ((0, 5),)


class CountingLog(Sequence[Message]):
    """A log that counts how many of its rows are read (indexing, slicing and iteration alike)."""

    def __init__(self, rows_: list[Message]) -> None:
        self.rows, self.reads = rows_, 0

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, k):  # type: ignore[no-untyped-def]
        got = self.rows[k]
        self.reads += len(got) if isinstance(k, slice) else 1
        return got


def test_the_split_shape_is_a_view_that_reads_only_its_head_rows() -> None:
    """Rule: a record ``log[:h] + [block] + log[k:]`` (the condenser's: first events, summary,
    tail) is of the split shape; its history and its left-out rows are views of the log, so making
    the result reads no row (its history is derived on first read) and reading its history the
    ``h`` head rows and nothing else: 2 reads over a log of 10 000 rows whose middle [2, 9 000) is
    folded, not the 8 998 folded or 1 000 tail rows."""
    log = CountingLog(rows(10_000))
    block = {"role": "system", "content": "[Conversation summary — 1 earlier exchange(s)]\ns"}
    record = EditRecord(10_000, ((0, 2), (9_000, 10_000)), (), (Insertion(9_000, block),))
    assert record.split_shape() == (2, 9_000, Insertion(9_000, block)) and record.suffix_start() is None
    result = managed(log, record, CMDecision("condensed"))
    assert log.reads == 0
    assert len(result.messages) == 1_003 and log.reads == 2
    assert len(result.messages) == 1_003 and log.reads == 2  # derived once, then kept and len(result.decision.folded) == 8_998
    assert list(result.messages) == [*log.rows[:2], block, *log.rows[9_000:]]
    assert list(result.decision.folded) == log.rows[2:9_000]
    # a suffix is the split shape with no head; two insertions or a replacement are not
    assert EditRecord.suffix(5, 3).split_shape() == (0, 3, None)
    assert EditRecord(5, ((0, 1), (3, 5)), (), (Insertion(3, block), Insertion(5, block))).split_shape() is None
    assert EditRecord(5, ((0, 1), (3, 5)), (Replacement(0, block, "x"),)).split_shape() is None
    assert EditRecord(5, ((1, 2), (3, 5))).split_shape() is None  # the head must start the log


@given(st.integers(0, 8), st.lists(st.integers(0, 7), unique=True), st.booleans())
def test_a_manager_returning_rows_is_read_into_the_record_that_gives_them_back(
        n: int, picks: list[int], block: bool) -> None:
    past = rows(n)
    chosen = [past[i] for i in sorted(i for i in picks if i < n)]
    messages: list[Message] = ([{"role": "user", "content": "summary"}] if block else []) + chosen
    record = record_of(past, messages)
    assert [id(m) for m in record.apply(past)] == [id(m) for m in messages]
    kept = {i for a, b in record.kept for i in range(a, b)}
    assert kept | {i for a, b in record.dropped() for i in range(a, b)} == set(range(n))


def working_turn() -> list[Message]:
    def ask(k: int) -> Message:
        return {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": "lookup_order", "arguments": "{}"}}]}

    return [ask(1), {"role": "tool", "tool_call_id": "c1", "content": "a" * 50},
            ask(2), {"role": "tool", "tool_call_id": "c2", "content": "b" * 50}]


def test_the_newest_group_starts_at_the_last_assistant_row_and_cannot_be_edited() -> None:
    wm = working_turn()
    assert newest_group_start(wm) == 2 and newest_group_start([]) == 0
    ok = EditRecord(0, (), working=(Replacement(1, {"role": "tool", "tool_call_id": "c1", "content": "-"}, "r"),))
    check_record(ok, [], wm)
    for index in (2, 3):  # the newest group: the ask being answered and its result
        bad = EditRecord(0, (), working=(Replacement(index, {"role": "tool", "content": "-"}, "r"),))
        with pytest.raises(ValueError, match="newest group starts at 2"):
            check_record(bad, [], wm)
    with pytest.raises(ValueError, match="not a kept row"):
        check_record(EditRecord(2, ((0, 1),), (Replacement(1, {}, "r"),)), rows(2), [])


class ClearWorking(ContextManager):
    """Opts in to working memory: every tool result of the current turn older than its newest
    group is sent as a placeholder."""

    name = "clear-working"
    edits_working_memory = True

    def decide(self, past: Sequence[Message], hint: int) -> Managed:  # pragma: no cover - not called
        raise AssertionError("a working-memory strategy is asked through decide_with_working")

    def decide_with_working(self, past: Sequence[Message], working: Sequence[Message], hint: int) -> Managed:
        assert not isinstance(working, MutableSequence)  # read-only
        newest = newest_group_start(working)
        edits = tuple(Replacement(i, {**m, "content": "[cleared]"}, "tool-result-cleared")
                      for i, m in enumerate(working[:newest]) if m.get("role") == "tool")
        n = len(past)
        return managed(past, EditRecord(n, ((0, n),) if n else (), working=edits), CMDecision("unchanged-under-budget"))


def test_a_working_memory_strategy_clears_an_older_result_of_the_turn_not_the_newest() -> None:
    engine = ContextEngine(SAMPLES / "stack.yaml", counter="estimate")
    engine.cm = ClearWorking()
    engine.user("Where is my order?")
    for m in working_turn():
        engine.record(m)
    call = engine.assemble()
    tools = [m["content"] for m in call.messages if m.get("role") == "tool"]
    assert tools == ["[cleared]", "b" * 50]  # the older result cleared, the newest group's kept
    assert engine.conversation.working[1]["content"] == "a" * 50  # working memory itself untouched


def test_manage_hands_working_memory_read_only_without_a_copy() -> None:
    """A long turn calls the manager once per tool round: copying working memory each time made the
    turn's replay quadratic. The manager gets the engine's own list behind a read-only view of its
    rows at the call (a later row of the turn does not show in it)."""
    seen: list[Sequence[Message]] = []

    class Spy(ClearWorking):
        def decide_with_working(self, past: Sequence[Message], working: Sequence[Message], hint: int) -> Managed:
            seen.append(working)
            return super().decide_with_working(past, working, hint)

    wm = list(working_turn())
    manage(Spy(), [], 0, wm)
    (got,) = seen
    assert not isinstance(got, MutableSequence)
    assert isinstance(got, RowsView) and got.source()[1] is wm  # the list itself, not a copy
    assert [id(m) for m in got] == [id(m) for m in wm]
    wm.append({"role": "assistant", "content": "later"})
    assert len(got) == len(wm) - 1  # the rows of the call, not the grown list
    t = tuple(wm)
    manage(Spy(), [], 0, t)
    assert seen[-1] is t  # a tuple is read-only already: handed as it is


@pytest.mark.parametrize("cls", [Replacement, EditRecord])
def test_a_frozen_record_built_by_its_own_init_takes_every_declared_field_in_order_with_its_default(cls: type) -> None:
    """Replacement and EditRecord write their ``__init__`` by hand (their slots' setters, for speed): its
    parameters must be the declared fields, in order, with the declared defaults, and each one set;
    a field added to the class but not to ``__init__`` fails here."""
    import dataclasses
    import inspect

    fields = dataclasses.fields(cls)
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.default for p in params] == [inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
                                           for f in fields]
    values = [object() for _ in fields]  # distinct markers: each must land in its own field
    made = cls(*values)
    assert [getattr(made, f.name) for f in fields] == values
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, fields[0].name, 1)
    assert made == cls(*values) and hash(made) == hash(cls(*values))
    assert dataclasses.replace(made, **{fields[-1].name: 7}) == cls(*values[:-1], 7)
