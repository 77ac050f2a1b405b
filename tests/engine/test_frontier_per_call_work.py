"""Per-call work of the frontier strategies (observation-masking, clear-tool-results): what does not
change between the calls of a turn is made once a turn, as for the plain strategies
(docs/performance.md, "Why some code is shaped for speed")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.engine.types import Message


def _turns(n: int, pad: int = 0) -> list[Message]:
    """``n`` turns of one tool round each: user row, ask, its result (``pad`` more characters), reply
    (two calls a turn)."""
    msgs: list[Message] = []
    for t in range(n):
        msgs += [{"role": "user", "content": f"q{t}"},
                 {"role": "assistant", "content": "", "tool_calls": [
                     {"id": f"c{t}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": f"c{t}", "content": f"out {t}" + "x" * pad},
                 {"role": "assistant", "content": "done"}]
    return msgs


@pytest.mark.parametrize(("turns", "matched", "marked"), [(10, 11, 11), (20, 21, 21)])
def test_a_frontier_calls_log_match_and_band_marks_are_made_once_a_turn(
        tmp_path: Path, monkeypatch: Any, turns: int, matched: int, marked: int) -> None:
    """observation-masking, window 3 events, ``turns`` turns of 2 calls (call 2t before turn t's ask,
    2t + 1 before its reply). Calls 0-2 mask nothing (the plain path: the manager's record is the same
    object while the log's length is, so the log match is made on calls 0 and 2, 2 (it was 3 while
    each call had a new record); the band marks on calls 0 and 2, the log grown, 2). From call 3 on
    every call masks (a frontier view): the path is shown one record and one index per log, so the
    match and the marks are made once per log length, i.e. once a turn: call 3 (turn 1), then turns
    2 .. turns-1. Match and marks: 2 + 1 + (turns - 2) = turns + 1.
    (They were made on every frontier call: 2·turns and 2·turns - 1.)"""
    from inspector.engine.assembly import incremental
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript

    counts = {"match": 0, "marks": 0}
    match_log, marks_of = incremental._match_log, incremental.marks_of

    def counting_match(*a: Any, **k: Any) -> Any:
        counts["match"] += 1
        return match_log(*a, **k)

    def counting_marks(*a: Any, **k: Any) -> Any:
        counts["marks"] += 1
        return marks_of(*a, **k)

    monkeypatch.setattr(incremental, "_match_log", counting_match)
    monkeypatch.setattr(incremental, "marks_of", counting_marks)
    path, manifest = tmp_path / "t.json", tmp_path / "m.yaml"
    path.write_text(json.dumps({"messages": _turns(turns)}))
    manifest.write_text(json.dumps({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "m"}, "spec": {
        "models": [{"id": "main", "model": "gpt-4o"}],
        "context_manager": {"type": "observation-masking", "params": {"attention_window": 3}}}}))
    rp = replay(str(manifest), load_transcript(path), counter="estimate")
    # the window of 3 events: call 2t + 1 (log 4t rows, working memory 2) masks results 2, 6, .. below 4t - 1
    assert [len(f.replaced) for f in rp.frames][:6] == [0, 0, 0, 1, 1, 2]
    assert (counts["match"], counts["marks"]) == (matched, marked)


@pytest.mark.parametrize(("name", "before", "last"), [("observation-masking", 172, 9), ("clear-tool-results", 280, 9)])
def test_a_frontier_manager_reads_a_frozen_working_memory_as_its_list_not_through_view_calls(
        monkeypatch: Any, name: str, before: int, last: int) -> None:
    """The engine hands working memory over read-only (``frozen``: a view of its whole list). One
    turn of 12 asks, the manager called before each ask as the engine calls it (observation-masking
    with a window of 3 events, clear-tool-results over a 1-token trigger keeping 2 results): the
    view's ``__len__`` and ``__getitem__`` are called 0 times (each was a Python call per row read
    and per length asked: ``before`` calls over the turn, 16 (masking) and 26 (clearing) a call from
    ask 3 on), and the answers are those of the same rows given as a tuple. The call before ask 11 sends
    the results of asks 0 .. 8 as placeholders (masked: j < k - 2; cleared: all but the last 2 of
    the 11 results, none in the newest group; each 205 characters, longer than its placeholder)."""
    from inspector.engine.managers.base import frozen
    from inspector.engine.managers.clear_tool_results import ClearToolResults
    from inspector.engine.managers.observation_masking import ObservationMasking
    from inspector.engine.types import RowsView

    del before  # (the count before the change, for the record)
    calls = [0]
    length, item = RowsView.__len__, RowsView.__getitem__

    def counting_len(self: RowsView) -> int:
        calls[0] += 1
        return length(self)

    def counting_item(self: RowsView, k: Any) -> Any:
        calls[0] += 1
        return item(self, k)

    def make() -> Any:
        return ObservationMasking(attention_window=3) if name == "observation-masking" else \
            ClearToolResults(trigger=1, keep=2)

    rows = _turns(12, 200)[1:]  # one user turn's working memory grows ask by ask
    rows = [m for k in range(12) for m in (rows[4 * k], rows[4 * k + 1])]
    viewed, plain = make(), make()
    working: list[Message] = []
    past: list[Message] = []  # the log, one list (the engine's)
    monkeypatch.setattr(RowsView, "__len__", counting_len)
    monkeypatch.setattr(RowsView, "__getitem__", counting_item)
    for k in range(12):
        working[:] = rows[:2 * k]
        a = viewed.decide_with_working(past, frozen(working), 0).edits
        assert calls[0] == 0
        b = plain.decide_with_working(past, tuple(working), 0).edits
        assert [(r.index, r.row) for r in a.working] == [(r.index, r.row) for r in b.working]
    assert len(a.working) == last


def _masking_manifest(tmp_path: Path, params: dict[str, Any]) -> Path:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(json.dumps({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "m"}, "spec": {
        "models": [{"id": "main", "model": "gpt-4o"}],
        "context_manager": {"type": "observation-masking", "params": params}}}))
    return manifest


def _masked_replay(tmp_path: Path, turns: int, window: int) -> Any:
    """The replay of :func:`_turns` (``turns`` turns) under observation-masking with ``window`` events,
    estimate counter."""
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript

    path = tmp_path / "t.json"
    path.write_text(json.dumps({"messages": _turns(turns)}))
    return replay(str(_masking_manifest(tmp_path, {"attention_window": window})), load_transcript(path), counter="estimate")


@pytest.mark.parametrize(("turns", "pointed"), [(10, 8), (20, 18)])
def test_a_frontier_standing_over_a_turns_two_calls_gives_the_same_record_and_index(
        tmp_path: Path, monkeypatch: Any, turns: int, pointed: int) -> None:
    """observation-masking, window 4 events, ``turns`` turns of 2 calls. Call 2t (log 4t rows, no
    working memory) masks the results at 4j + 2 < 4t - 4, call 2t + 1 (working memory: ask, result)
    those < 4t - 2: j <= t - 2 both times, so the frontier stands over a turn's two calls and moves
    at each turn. Frontier calls: t >= 2 (t - 1 >= 1 masked), i.e. turns 2 .. turns-1. The manager
    gives the second call of a turn the first one's record (the same object), and the frontier index
    is pointed at a view (a new rows view) once a turn: turns - 2 times (it was pointed on every
    frontier call, 2·(turns - 2)); the second call of a turn gets it as it was."""
    from inspector.engine.assembly.replacing import ReplacingSums

    views: list[Any] = []
    real = ReplacingSums.frontier

    def recording(self: Any, *args: Any) -> Any:
        idx = real(self, *args)
        views.append(idx.rows)
        return idx

    monkeypatch.setattr(ReplacingSums, "frontier", recording)
    rp = _masked_replay(tmp_path, turns, 4)
    assert [len(f.replaced) for f in rp.frames][:8] == [0, 0, 0, 0, 1, 1, 2, 2]
    assert len(views) == 2 * (turns - 2)
    assert sum(1 for k, v in enumerate(views) if k == 0 or v is not views[k - 1]) == pointed


@pytest.mark.parametrize("name", ["observation-masking", "clear-tool-results"])
def test_a_frontier_managers_record_is_the_same_object_while_its_frontier_stands(name: str) -> None:
    """Two calls over the same 12-row log (3 turns of one tool round) whose replacements are the
    same (masking: window 4, the second call's working memory one user row more, so results 2 and 6
    below 12 + w - 4 both times; clearing: a 1-token trigger keeping 1 result, results 2 and 6
    cleared both times): the second call's edit record is the first's object, its view the same
    view; a third call over the log grown by a turn replaces result 10 too: a new record."""
    from inspector.engine.managers.clear_tool_results import ClearToolResults
    from inspector.engine.managers.observation_masking import ObservationMasking

    manager = ObservationMasking(attention_window=4) if name == "observation-masking" else \
        ClearToolResults(trigger=1, keep=1)
    log = _turns(4, 200)  # (results longer than a clearing placeholder: clearing frees tokens)
    past = log[:12]
    first = manager.decide_with_working(past, (), 0).edits
    second = manager.decide_with_working(past, (log[12],), 0).edits
    assert [r.index for r in first.replaced] == [2, 6]
    assert second is first
    past += log[12:]
    third = manager.decide_with_working(past, (), 0).edits
    assert [r.index for r in third.replaced] == [2, 6, 10]
    assert third is not first and third.replaced.table is first.replaced.table


@pytest.mark.parametrize(("placeholder", "measured_before"), [("<MASKED>", 9), ("<{tool} output masked>", 9)])
def test_masked_rows_alike_but_for_their_call_id_have_their_text_encoded_once(
        tmp_path: Path, monkeypatch: Any, placeholder: str, measured_before: int) -> None:
    """observation-masking, window 3 events, 10 turns of one ``bash`` round: the results at 4j + 2
    below 4·9 - 1 = 35 are masked by the end, j = 0 .. 8: 9 placeholder rows, alike but for their
    ``tool_call_id`` (the same text, ``bash`` in each), which the tiktoken counter does not count.
    The placeholder text is encoded once (it was ``measured_before`` times, once per row: the
    counter remembers a short text's tokens), and every placeholder's units are the ones a fresh
    measure gives."""
    from inspector.engine.tokens import TiktokenCounter
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript

    from tests.builders import spy

    measured = spy(monkeypatch, TiktokenCounter, "text_tokens", arg=1)
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"messages": _turns(10)}))
    manifest = _masking_manifest(tmp_path, {"attention_window": 3, "placeholder": placeholder})
    rp = replay(str(manifest), load_transcript(path), counter="tiktoken")
    text = placeholder.replace("{tool}", "bash")
    assert len(rp.frames[-1].replaced) == 9
    assert measured.count(text) == 1 != measured_before
    fresh = TiktokenCounter("gpt-4o")
    sent = [row for f in rp.frames for _ref, _n, _b, why, row in f.segments if why is not None]
    assert sent and all(row["content"] == text for row in sent)
    assert {fresh.unit(dict(row)) for row in sent} == {fresh.unit({"role": "tool", "tool_call_id": "x", "content": text})}


def test_clear_tool_results_encodes_each_placeholder_text_once(tmp_path: Path, monkeypatch: Any) -> None:
    """clear-tool-results, trigger 1 token, keep 1, 10 turns of one ``bash`` round whose results are
    ``out t`` and 400 ``x``: by the last call the results of turns 0 .. 8 are cleared, 9 placeholder
    rows, each a new row; all say ``bash`` and the same size, "[tool result cleared: bash, N tokens]",
    and that text is encoded once (it was 9 times, once per row), as the counter remembers a short
    text's tokens."""
    from inspector.engine.tokens import TiktokenCounter
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript

    from tests.builders import spy

    encoded = spy(monkeypatch, TiktokenCounter, "text_tokens", arg=1)
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"messages": _turns(10, pad=400)}))
    manifest = tmp_path / "m.yaml"
    manifest.write_text(json.dumps({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "m"}, "spec": {
        "models": [{"id": "main", "model": "gpt-4o"}],
        "context_manager": {"type": "clear-tool-results", "params": {"trigger": 1, "keep": 1}}}}))
    rp = replay(str(manifest), load_transcript(path), counter="tiktoken")
    last = [row for _ref, _n, _b, why, row in rp.frames[-1].segments if why is not None]
    assert len(rp.frames[-1].replaced) == 9
    texts = {row["content"] for row in last}
    assert len(texts) == 1 and next(iter(texts)).startswith("[tool result cleared: bash, ")
    assert encoded.count(next(iter(texts))) == 1


@pytest.mark.parametrize(("turns", "synced"), [(10, 9), (20, 19)])
def test_a_frontier_table_is_mapped_to_the_transcript_only_on_calls_that_add_entries(
        tmp_path: Path, monkeypatch: Any, turns: int, synced: int) -> None:
    """observation-masking, window 3 events, ``turns`` turns of 2 calls: calls 0-2 mask nothing, and
    from call 3 on call 2t + 1 masks one result more than call 2t (results 4j + 2 below 4t - 1: the
    table grows by one entry at calls 3, 5, .., 2·turns - 1) while call 2t masks what call 2t - 1 did.
    The replay maps the table's new entries on the calls that add one: ``FrontierTable.sync`` at call 3
    (the first frontier frame), the turns - 2 later ones in place by the recorder's steady path (sync ran
    turns - 1 times, and before that on every frontier call, 2·turns - 3 times: 17, 37); each entry is
    mapped once (the table's copy holds turns - 1 entries, one per masked result). The frames keep the
    table apart, so a span over the log's rows is read in place: the layout is never split into
    replaced and own rows (``_split_replaced`` ran on each of the 2·turns calls)."""
    from inspector.replay import ranges
    from inspector.replay.replaced import FrontierTable
    from tests.builders import spy

    synced_at = spy(monkeypatch, FrontierTable, "sync")
    split = spy(monkeypatch, ranges, "_split_replaced")
    rp = _masked_replay(tmp_path, turns, 3)
    assert [len(f.replaced) for f in rp.frames][:8] == [0, 0, 0, 1, 1, 2, 2, 3]
    assert len(synced_at) == 1 and len(synced_at[0].refs) == synced
    assert rp.frames[-1].replaced.fr is synced_at[0]
    assert split == []


def test_manage_checks_a_managers_record_once_while_it_stands_and_still_refuses_a_stale_one(monkeypatch: Any) -> None:
    """``manage`` checks a record (``check_record``) when it is new: observation-masking, window 4,
    over a 12-row log (3 turns of one round) then the same log with one working row, then the log
    grown by a turn: the first two calls give the same record (results 2 and 6 masked both times),
    so it is checked twice in three calls (it was three times). A record given again over a log of
    another size is still refused by its size (a manager that does not look at the log grown)."""
    from inspector.engine.contracts import EditRecord
    from inspector.engine.managers import base
    from inspector.engine.managers.base import ContextManager, Managed, managed, manage
    from inspector.engine.managers.observation_masking import ObservationMasking
    from tests.builders import spy

    checked = spy(monkeypatch, base, "check_record")
    cm = ObservationMasking(attention_window=4)
    log = _turns(4)
    past = log[:12]
    first = manage(cm, past, 0, []).edits
    assert manage(cm, past, 0, [log[12]]).edits is first and len(checked) == 1
    past += log[12:]
    assert manage(cm, past, 0, []).edits is not first and len(checked) == 2

    class Stale(ContextManager):
        edits_working_memory = True
        record = EditRecord.keep_all(2)

        def decide(self, past: Any, hint: int) -> Managed:
            return managed(past, self.record, base.CMDecision("kept"))

    stale, rows = Stale(), _turns(1)
    manage(stale, rows[:2], 0, [])
    with pytest.raises(ValueError, match="edit record over 2 rows, but the log holds 4"):
        manage(stale, rows, 0, [])


def test_clearing_reads_working_memorys_newest_group_with_its_new_rows_not_walking_it_per_call(
        monkeypatch: Any) -> None:
    """clear-tool-results (trigger 1 token, keep 2) before each of R asks of a one-turn agent: the
    turn's state notes where the newest group starts as it reads each new row (the last ask), so
    ``newest_group_start`` is never called (it walked working memory back to its last ask on each of
    the R - 1 calls over the trigger with working memory); the answers are the rule's (results of
    asks j < k - 2 cleared before ask k: 37 at the last of 40 calls)."""
    from inspector.engine.managers import clear_tool_results as ctr
    from inspector.engine.managers.clear_tool_results import ClearToolResults
    from tests.builders import one_turn_asks, spy

    walked = spy(monkeypatch, ctr, "newest_group_start")
    rows = one_turn_asks(40, "x" * 200)[1:-1]
    cm = ClearToolResults(trigger=1, keep=2)
    past: list[Message] = []
    last: Any = None
    for k in range(40):
        last = cm.decide_with_working(past, tuple(rows[:2 * k]), 0).edits.working
    assert walked == []
    assert [r.index for r in last] == [2 * j + 1 for j in range(37)]


def test_clearing_makes_each_placeholder_text_once_per_tool_and_size(monkeypatch: Any) -> None:
    """clear-tool-results (trigger 1 token, keep 1) over 10 turns of one ``bash`` round whose results
    are all 200 ``x`` (estimate counter: 200 // 4 + 4 = 54 tokens each): 9 results are cleared, 9
    placeholder rows built, and their one text, "[tool result cleared: bash, 54 tokens]", is made
    once (it was made for each row: 9 times)."""
    from inspector.engine.managers.clear_tool_results import ClearToolResults
    from tests.builders import spy

    made = spy(monkeypatch, ClearToolResults, "_placeholder", arg=1)
    log = _turns(10)
    for m in log:
        if m["role"] == "tool":
            m["content"] = "x" * 200
    cm = ClearToolResults(trigger=1, keep=1)
    got = cm.decide_with_working(log, (), 0).edits
    assert [r.row["content"] for r in got.replaced] == ["[tool result cleared: bash, 54 tokens]"] * 9
    assert cm.rows_built == 9 and made == ["bash"]


def _log_facts(st: Any) -> tuple[Any, ...]:
    """What a clear-tool-results log state holds about its log (not its placeholders)."""
    return st.n, st.units, st.results, st.asks, st.answered, st.cands, st.at, st.dup


def _drive(cm: Any, turns: list[list[Message]]) -> list[Message]:
    """Drive ``cm`` as the engine does over ``turns`` (``[user, *working, reply?]``): each turn's first
    call with no working memory, its second with all of it but a text reply; then the turn committed
    to the same log list. Returns the log."""
    log: list[Message] = []
    for user, *work in turns:
        cm.decide_with_working(log, (), 0)
        cm.decide_with_working(log, work[:-1] if work[-1]["role"] == "assistant" and "tool_calls" not in work[-1]
                               else work, 0)
        log += [user, *work]
    return log


def test_clearing_takes_a_committed_turns_facts_over_from_its_working_memory_not_reading_its_rows_again(
        monkeypatch: Any) -> None:
    """clear-tool-results under its trigger over 10 turns of ``[user, ask, result, reply]`` (:func:`_drive`):
    the log's state takes the committed ask and result over from the turn's state, reading only the
    user row and the reply, so the manager reads 2 units on turn 1 and 2 + 2 on each later one:
    2 + 9 × 4 = 38 (reading all four committed rows again: 2 + 9 × 6 = 56)."""
    from inspector.engine.managers.clear_tool_results import ClearToolResults
    from tests.builders import count_unit_reads

    rows = _turns(10)
    cm = ClearToolResults(trigger=10**6)
    reads = count_unit_reads(monkeypatch)
    _drive(cm, [rows[i:i + 4] for i in range(0, 40, 4)])
    assert reads[0] == 38


@pytest.mark.parametrize("paused", [False, True])
def test_a_clearing_log_state_taken_over_from_turns_is_the_state_read_from_the_log(paused: bool) -> None:
    """The log state :func:`_drive` leaves (turns' facts taken over) equals a fresh read of the log:
    units, results, asks, answers, clearable results; with ``paused``, turn 4 stops at its ask and
    turn 5's working memory answers it first (a result whose ask is in the log is clearable too)."""
    from inspector.engine.managers.clear_tool_results import ClearToolResults, _Log

    rows = _turns(10)
    turns = [rows[i:i + 4] for i in range(0, 40, 4)]
    if paused:
        turns[3], turns[4] = turns[3][:2], [turns[4][0], turns[3][2], *turns[4][1:]]
    cm = ClearToolResults(trigger=10**6)
    log = _drive(cm, turns)
    cm.decide_with_working(log, (), 0)
    fresh = _Log((cm.counter, cm.params), frozenset()).sync(log, cm.counter, cm.params)
    assert _log_facts(cm._log) == _log_facts(fresh)
    assert [i for i, _tool, _unit in fresh.cands] == [i for i, m in enumerate(log) if m["role"] == "tool"]


@pytest.mark.parametrize("turns", [10, 20])
def test_a_moving_frontier_reuses_one_swaps_lookup_per_table(tmp_path: Path, monkeypatch: Any, turns: int) -> None:
    """observation-masking, window 3 events, ``turns`` turns of 2 calls: the frontier moves on calls
    3, 5, .., 2·turns - 1 (turns - 1 moves, as in the test above), all over one table. The recorder
    makes two :class:`~inspector.replay.ranges.FrontierSwaps` when it starts (the log's, working
    memory's) and one for the table, and moves that one to each call's frontier: 3 made, not
    2 + turns - 1 (10, 20), one per move."""
    from inspector.replay import ranges
    from tests.builders import spy

    made = spy(monkeypatch, ranges.FrontierSwaps, "__init__", arg=2)
    rp = _masked_replay(tmp_path, turns, 3)
    assert [len(f.replaced) for f in rp.frames][-3:] == [turns - 2, turns - 2, turns - 1]
    assert made == [0, 0, 1]


@pytest.mark.parametrize("rounds", [40, 80])
def test_a_moving_working_memory_frontier_reuses_one_swaps_lookup_per_table(
        tmp_path: Path, monkeypatch: Any, rounds: int) -> None:
    """observation-masking, window 3 events, one turn of ``rounds`` asks (a one-turn agent: its record
    replaces working-memory rows only): call k masks the results of asks 0..k-3, so the frontier of
    working memory's table moves at every call from call 3 on (rounds - 2 moves). The recorder makes
    its two :class:`~inspector.replay.ranges.FrontierSwaps` when it starts and one for the table (at
    call 3, 1 entry), moved to each later call's frontier: 3 made, not 1 + rounds - 2 (39, 79)."""
    from inspector.replay import replay, ranges
    from inspector.transcripts.api import load_transcript
    from tests.builders import one_turn_asks, spy

    made = spy(monkeypatch, ranges.FrontierSwaps, "__init__", arg=2)
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"messages": one_turn_asks(rounds)}))
    rp = replay(str(_masking_manifest(tmp_path, {"attention_window": 3})), load_transcript(path), counter="estimate")
    assert [len(f.replaced) for f in rp.frames][2:5] == [0, 1, 2] and len(rp.frames[-1].replaced) == rounds - 2
    assert made == [0, 0, 1]
