"""observation-masking and clear-tool-results replace rows below a frontier (docs/design.md §3.14):
each placeholder row is built once, a call's record is a view of the manager's table, and the
answers are the rules' own, call by call, however the log and working memory grow."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from builders import UnitsOf, drawn_ask, one_turn_asks, sent_sums, spy, tool
from inspector.engine.contracts import EditRecord, ReplacedBefore, ReplacedRows, Replacement, check_record, \
    newest_group_start
from inspector.engine.managers.clear_tool_results import CLEARED, ClearToolResults
from inspector.engine.managers.observation_masking import MASKED, ObservationMasking, mask_text
from inspector.engine.types import Message
from inspector.replay import replaced_lists

ROOT = Path(__file__).resolve().parents[2]


# --- a conversation driven call by call, as the engine drives a manager ------------------------------

@st.composite
def turns(draw: Any, ids_apart: int = 0) -> list[list[Message]]:
    """Turns of a tool-using agent: a user row, asks (one or two calls, tools ``a``/``b``) each with
    its results, a reply. Call ids are unique (the usual transcript), or with ``ids_apart`` they come
    back every ``ids_apart`` calls (an id asked again, in the log or in working memory); sizes vary."""
    out: list[list[Message]] = []
    k = 0
    for t in range(draw(st.integers(1, 7))):
        rows: list[Message] = [{"role": "user", "content": f"q{t}"}]
        for _r in range(draw(st.integers(0, 3))):
            row, ids = drawn_ask(draw, k, ids_apart)
            k += len(ids)
            rows.append(row)
            rows.extend(tool(i, "x" * draw(st.integers(1, 400))) for i in ids)
        rows.append({"role": "assistant", "content": "done"})
        out.append(rows)
    return out


def calls(convo: list[list[Message]]) -> Any:
    """``(past, working)`` before every assistant row, the log one list growing in place (as the
    engine's): a turn's rows are committed when the next user row comes."""
    past: list[Message] = []
    for rows in convo:
        for j, m in enumerate(rows):
            if m["role"] == "assistant":
                yield past, tuple(rows[1:j])
        past.extend(rows)


def flat(record: EditRecord) -> tuple[list[tuple[int, Message, str]], list[tuple[int, Message, str]]]:
    return [(r.index, r.row, r.reason) for r in record.replaced], [(r.index, r.row, r.reason) for r in record.working]


def names(rows: list[Message]) -> dict[str, str]:
    return {c["id"]: c["function"]["name"] for m in rows for c in m.get("tool_calls") or ()}


def masked_by_rule(past: list[Message], working: tuple[Message, ...], window: int, placeholder: str) -> Any:
    """The OpenHands rule, written out: tool results at event index < n − window, never in working
    memory's newest group."""
    n, rows = len(past), [*past, *working]
    cut = n + len(working) - window
    tools = names(rows)

    def row(m: Message) -> Message:
        return {**m, "content": mask_text(placeholder, tools.get(m["tool_call_id"], "tool"), len(m["content"]))}
    log = [(i, row(past[i]), MASKED) for i in range(min(cut, n)) if past[i]["role"] == "tool"]
    wm = [(j, row(working[j]), MASKED) for j in range(min(cut - n, newest_group_start(working)))
          if working[j]["role"] == "tool"]
    return log, wm


def cleared_by_rule(cm: ClearToolResults, past: list[Message], working: tuple[Message, ...]) -> Any:
    """Anthropic's / LangChain's rule, written out (no clear_tool_inputs): above the trigger, every
    tool result but the last ``keep`` whose ask stands before it (its tool not excluded), oldest
    first, stopped once ``clear_at_least`` is freed; nothing when all of them free less."""
    p, n, rows, count = cm.params, len(past), [*past, *working], cm.counter.count
    if count(rows) <= p.trigger:
        return [], []
    limit = n + newest_group_start(working) if working else n
    results = [i for i, m in enumerate(rows) if m["role"] == "tool"]
    asks = {c["id"]: (i, c["function"]["name"]) for i, m in enumerate(rows) for c in m.get("tool_calls") or ()}
    done, freed = [], 0
    for i in results[:max(0, len(results) - p.keep)]:
        ask = asks.get(rows[i]["tool_call_id"])
        if i >= limit or ask is None or ask[0] >= i or ask[1] in (p.exclude_tools or ()):
            continue
        size = count([rows[i]])
        new = {**rows[i], "content": f"[tool result cleared: {ask[1]}, {size} tokens]"}
        done.append((i, new, CLEARED))
        freed += size - count([new])
        if p.clear_at_least and freed >= p.clear_at_least:
            break
    if freed < p.clear_at_least:
        done = []
    return [d for d in done if d[0] < n], [(i - n, r, w) for i, r, w in done if i >= n]


@settings(max_examples=150, deadline=None)
@given(convo=turns(), window=st.integers(1, 12), placeholder=st.sampled_from(["[{tool} {size}]", "<MASKED>", "[{size}]"]))
def test_masking_with_a_table_kept_across_calls_answers_the_rule_on_every_call(
        convo: Any, window: int, placeholder: str) -> None:
    cm = ObservationMasking(attention_window=window, placeholder=placeholder)
    for past, working in calls(convo):
        got = cm.decide_with_working(past, working, 0).edits
        check_record(got, past, working)
        assert flat(got) == masked_by_rule(past, working, window, placeholder)


@settings(max_examples=100, deadline=None)
@given(convo=turns(ids_apart=3), window=st.integers(1, 12), placeholder=st.sampled_from(["<MASKED>", "[{size}]"]))
def test_a_placeholder_naming_no_tool_masks_by_the_rule_when_call_ids_come_back(
        convo: Any, window: int, placeholder: str) -> None:
    """A placeholder that names no tool reads no ask (only where the results stand): a call id asked
    again, in the log or in working memory, changes nothing it sends, on any call."""
    cm = ObservationMasking(attention_window=window, placeholder=placeholder)
    for past, working in calls(convo):
        got = cm.decide_with_working(past, working, 0).edits
        check_record(got, past, working)
        assert flat(got) == masked_by_rule(past, working, window, placeholder)


@settings(max_examples=150, deadline=None)
@given(convo=turns(), keep=st.integers(0, 4), trigger=st.integers(1, 600), at_least=st.sampled_from([0, 1, 150]),
       exclude=st.sampled_from([None, ["b"]]))
def test_clearing_with_a_table_kept_across_calls_answers_the_rule_on_every_call(
        convo: Any, keep: int, trigger: int, at_least: int, exclude: Any) -> None:
    cm = ClearToolResults(trigger=trigger, keep=keep, clear_at_least=at_least, exclude_tools=exclude)
    for past, working in calls(convo):
        got = cm.decide_with_working(past, working, 0).edits
        check_record(got, past, working)
        assert flat(got) == cleared_by_rule(cm, past, working)


def test_placeholder_rows_are_built_once_per_original_row() -> None:
    """Four rounds of one ask and one result (rows 1..8, results at 2, 4, 6, 8 after the user row 0)
    called once per round: with a window of 2 events, the results at 2, 4, 6 fall out of it one by one
    (at 4, 6 and 8 events... 9 events at the last call) and each is masked on every later call, but
    its placeholder row is made once: 3 rows built for 3 results, the same object on every call."""
    user = {"role": "user", "content": "go"}
    past: list[Message] = []
    working: list[Message] = []
    for k in range(4):
        working += [{"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": "x" * 50}]
    past = [user, *working]  # the turn committed: 9 rows, results at 2, 4, 6, 8
    cm = ObservationMasking(attention_window=2)
    rows_seen: dict[int, int] = {}
    for n in range(3, len(past) + 1):  # the log growing in place, one row a call
        log = past[:n]
        got = cm.decide(log, 0).edits
        for r in got.replaced:
            rows_seen.setdefault(r.index, id(r.row))
            assert id(r.row) == rows_seen[r.index]  # the same row on every call
    assert sorted(rows_seen) == [2, 4, 6] and cm.rows_built == 3


def test_a_frontier_record_is_a_view_of_the_managers_table_not_a_copy_per_call() -> None:
    """Two calls over a log grown in place share one table: the second record's view holds the first's
    entries as they are (the same objects), and its history reads the replaced rows by bisection."""
    rows = [{"role": "user", "content": "go"}]
    for k in range(3):
        rows += [{"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": "x" * 50}]
    log = rows[:5]
    cm = ObservationMasking(attention_window=2)
    first = cm.decide(log, 0).edits.replaced  # 5 events, window 2: the result at 2 masked
    log.extend(rows[5:])
    second = cm.decide(log, 0).edits.replaced  # 7 events: the results at 2 and 4
    assert type(first) is ReplacedBefore and type(second) is ReplacedBefore and first.table is second.table
    assert [r.index for r in second] == [2, 4] and second[0] is first[0] and second.frontier == 5 and second.upto == 2
    history = EditRecord(7, ((0, 7),), second).apply(log)
    assert type(history) is ReplacedRows and history[2] is second[0].row and history[3] is log[3]
    assert history[1:6] == [log[1], second[0].row, log[3], second[1].row, log[5]]


def test_a_replay_writes_each_replacement_once_and_reads_back_every_frames_list(tmp_path: Path) -> None:
    """A one-turn replay masking with a window of 3 events: 5 results (rows 2, 4, 6, 8, 10), one call
    per ask and one before the reply. Each call's list grows by at most one result, so the file lists
    each masked result once (``replaced_added``) however many calls mask it, and
    :func:`replaced_lists` reads every frame's whole list back."""
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript

    msgs = one_turn_asks(5)
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"messages": msgs}))
    manifest = tmp_path / "m.yaml"
    manifest.write_text(json.dumps({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "m"}, "spec": {
        "models": [{"id": "main", "model": "gpt-4o"}],
        "context_manager": {"type": "observation-masking", "params": {"attention_window": 3}}}}))
    rp = replay(str(manifest), load_transcript(path), counter="estimate")
    doc = json.loads(rp.dumps())
    lists = replaced_lists(doc["frames"])
    assert lists == [[{"ref": i, "reason": MASKED} for i, _ in f.replaced] for f in rp.frames]
    # one turn: the call before ask k sees working memory's 2k events (k asks, k results; the user row
    # is the turn's own), and masks a result at event j < 2k - 3 standing before the newest group (the
    # ask at 2k - 2): events 1, 3, 5 are transcript rows 2, 4, 6. So [], [], [], [2], [2, 4], then the
    # call before "done" (10 events, cut 7) [2, 4, 6]
    assert [[r["ref"] for r in cut] for cut in lists] == [[], [], [], [2], [2, 4], [2, 4, 6]]
    added = [r["ref"] for f in doc["frames"] for r in f.get("replaced_added", ())]
    assert added == [2, 4, 6]  # each written once


def test_the_replay_record_of_a_frontier_strategy_grows_linearly() -> None:
    """The benchmark's measure (record entries a replay stores, 250 → 500 synthetic turns) for the
    two strategies that replace rows, acting at both sizes (clear-tool-results' default trigger,
    100 000 tokens, is first passed after 250 turns: a 30 000-token one acts from about turn 70):
    linear is 2 (it was about 4 when every frame listed every row replaced so far)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from replay_scaling import growth

    for cm in ({"type": "observation-masking"}, {"type": "clear-tool-results", "params": {"trigger": 30_000}}):
        assert growth(cm) <= 2.2, cm


def test_a_replacement_view_is_equal_to_the_tuple_it_stands_for() -> None:
    table = [Replacement(1, {"role": "tool", "content": "a"}, MASKED), Replacement(3, {"role": "tool", "content": "b"}, MASKED)]
    view = ReplacedBefore(table, 1)
    assert view == (table[0],) and len(view) == 1 and list(view) == [table[0]] and view.frontier == 2
    assert ReplacedBefore(table, 0).frontier == 0 and ReplacedBefore(table, 2).frontier == 4


def test_a_frontier_frames_shown_rows_are_its_segments_without_the_replaced_ones() -> None:
    """``FrontierSegments.shown`` (what the forgetting analysis reads) against the segments read out
    one by one, on every frame of a 120-turn replay that masks from turn 20 on."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from replay_scaling import run, synth

    from inspector.replay import FrontierSegments, reason_lookup

    _, rp = run(synth(120), {"type": "observation-masking"})
    frontier = [f for f in rp.frames if isinstance(f.segments, FrontierSegments)]
    assert len(frontier) > 100
    for f in frontier:
        why = reason_lookup(f.replaced)
        want = {i for ref, n, _b, syn, own in f.segments if ref is not None
                for i in range(ref, ref + (n if own is None else 1)) if own is None or why(ref) != syn}
        got = {i for lo, hi in f.segments.shown(why) for i in range(lo, hi)}
        assert got == want and len(list(f.segments)) > len(f.segments.runs)


def test_a_replaced_row_the_budget_removes_is_its_transcript_message_trimmed() -> None:
    """observation-masking over 60 synthetic turns in a 6 000-token window: the budget removes old
    rows on most calls, masked ones among them. Each removed placeholder is reported as its
    transcript message trimmed (never as a synthesised row): every message before a call's reply is
    in its payload or in its trimmed ranges, once (the strategy folds nothing)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from replay_scaling import run, synth

    from inspector.replay.ranges import expand_ranges

    _, rp = run(synth(60), {"type": "observation-masking", "params": {"attention_window": 4}}, window=6_000)
    cut = [f for f in rp.frames if f.trimmed and f.replaced]
    assert len(cut) > 30
    for f in rp.frames:
        sent = [r for r in f.refs if r is not None]
        trimmed = expand_ranges(f.trimmed)
        assert f.trimmed_synthetic == 0 and not f.folded
        assert sorted(sent + trimmed) == list(range(min(f.at, len(rp.messages))))


class _CountedWalk(list):  # type: ignore[type-arg]
    """A list that counts the entries handed out by walking it (``iter``), not by slicing it."""

    walked = 0

    def __iter__(self) -> Any:
        for x in super().__iter__():
            _CountedWalk.walked += 1
            yield x


def test_a_frames_added_replacements_are_sliced_from_the_table_not_walked_from_its_start() -> None:
    """A frame's JSON lists the replacements added since the previous frame, ``replaced[kept:]``: over a
    table of 10 000 entries (refs 0, 2, 4, …), the last two plus one working-memory extra are read
    without walking the 9 998 before them (walking them per frame made the document quadratic)."""
    from inspector.replay.replaced import FrontierTable, ReplacedRefs

    fr = FrontierTable([])
    fr.refs, fr.reasons = _CountedWalk(range(0, 20_000, 2)), _CountedWalk([MASKED] * 10_000)
    refs = ReplacedRefs(fr, 10_000, ((20_001, CLEARED),))
    _CountedWalk.walked = 0
    assert refs[9_998:] == [(19_996, MASKED), (19_998, MASKED), (20_001, CLEARED)]
    assert refs[10_000:] == [(20_001, CLEARED)] and refs[3:5] == [(6, MASKED), (8, MASKED)] and refs[5:5] == []
    assert _CountedWalk.walked == 0
    assert refs[9_999:-0] == [] and refs[-2:] == [(19_998, MASKED), (20_001, CLEARED)]



@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=30), st.data())
def test_the_precut_over_a_frontier_index_is_a_bisection_of_the_replaced_logs_sums(units: list[int], data: Any) -> None:
    """``FrontierIndex.fits_back`` (the pre-cut's question: the newest row whose suffix, with the other
    rows, is over the budget) gives what bisecting the replaced log's own running sums gives, for every
    frontier, budget and start, and reads at most one :class:`_FrontierSums` item (its probes are C list
    reads of the two lists it is made of)."""
    from bisect import bisect_left

    from inspector.engine.assembly.replacing import FrontierIndex, ReplacingSums, _FrontierSums
    from inspector.engine.assembly.row_index import RowIndex

    counter: Any = UnitsOf()
    rows: list[Message] = [{"role": "user", "content": "", "u": u} for u in units]
    log = RowIndex(counter).sync(rows)
    replaced = sorted(data.draw(st.sets(st.integers(0, len(rows) - 1), max_size=len(rows))))
    table = [Replacement(i, {"role": "user", "content": "", "u": data.draw(st.integers(1, 9))}, MASKED) for i in replaced]
    view = ReplacedBefore(table, data.draw(st.integers(0, len(table))))
    idx = FrontierIndex(log, view, ReplacingSums().upto(view, log, counter))
    want = sent_sums(rows, view)
    reads = [0]
    real = _FrontierSums.__getitem__

    def counted(self: Any, i: Any) -> Any:
        reads[0] += 1
        return real(self, i)

    _FrontierSums.__getitem__ = counted  # type: ignore[method-assign]
    try:
        for lo in range(len(rows)):
            for budget in range(0, want[-1] + 12, 3):
                reads[0] = 0
                got = idx.fits_back(budget, 1, 5, lo)
                assert got == bisect_left(want, want[-1] + 5 - budget, lo, len(rows)) - 1
                assert reads[0] <= 1
    finally:
        _FrontierSums.__getitem__ = real  # type: ignore[method-assign]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 8), st.integers(0, 3), st.integers(-12, 12) | st.none(), st.integers(-12, 12) | st.none())
def test_a_slice_of_a_frames_replaced_rows_is_the_slice_of_its_list(upto: int, extra: int, lo: int | None,
                                                                    hi: int | None) -> None:
    """``ReplacedRefs[lo:hi]`` (the table's first ``upto`` entries, then working memory's extras) is
    the same slice of the list it stands for, negative and out-of-range bounds included."""
    from inspector.replay.replaced import FrontierTable, ReplacedRefs

    fr = FrontierTable([])
    fr.refs, fr.reasons = list(range(0, 20, 2)), [MASKED] * 10
    refs = ReplacedRefs(fr, upto, tuple((30 + k, CLEARED) for k in range(extra)))
    assert refs[lo:hi] == list(refs)[lo:hi]


# --- one enormous turn: working memory's masks grow like the log's (issue 26) -----------------------

class _CountingRow(dict):  # type: ignore[type-arg]
    """A message that counts its reads (``get``) in a shared one-element list."""

    reads = [0]

    def get(self, key: Any, default: Any = None) -> Any:
        _CountingRow.reads[0] += 1
        return super().get(key, default)


def _one_turn_reads(rounds: int) -> tuple[int, int]:
    """(row reads, placeholder rows built) of observation-masking (window 3 events) called before each
    ask of a one-turn agent of ``rounds`` asks, as the engine calls it: working memory a new tuple of
    the turn's rows on every call, the log empty."""
    rows: list[Message] = []
    for k in range(rounds):
        rows += [_CountingRow(role="assistant", content="", tool_calls=[
            {"id": f"c{k}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]),
            _CountingRow(role="tool", tool_call_id=f"c{k}", content="x" * 20)]
    cm = ObservationMasking(attention_window=3)
    past: list[Message] = []  # the log, one list (the engine's)
    _CountingRow.reads[0] = 0
    for k in range(rounds):
        cm.decide_with_working(past, tuple(rows[:2 * k]), 0)
    return _CountingRow.reads[0], cm.rows_built


def test_a_one_turn_agents_masks_read_each_working_row_a_bounded_number_of_times() -> None:
    """Before ask k working memory holds 2k rows (ask j at 2j, its result at 2j + 1); the window of 3
    events masks the results at 2j + 1 < 2k - 3, i.e. j < k - 2. The default placeholder names no
    tool, so no ask's call ids are read: working memory is read from the first call that reaches
    below the window (k = 2), each row's role once (2 (R - 1) reads over the turn); from k = 2 on the
    newest group is found from the end (the last result's and ask's roles: 2); a result newly masked
    is not read again (its place was found with its role; the placeholder names neither the tool nor
    the size). So rounds R cost 2 (R - 1) + 2 (R - 2) = 4R - 6 reads: 154 at 40, 314 at 80 (8R - 12
    while every new row's asks and a masked result's role were read too; quadratic when every call
    masked working memory from its first row), and R - 3 placeholders are built, once each."""
    assert _one_turn_reads(40) == (154, 37)
    assert _one_turn_reads(80) == (314, 77)


def _masked_turn_replay(tmp_path: Path, rounds: int = 40) -> Any:
    """The replay of one user turn of ``rounds`` asks (40), each answered, then "done", under
    observation-masking with a window of 3 events (estimate counter)."""
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript

    msgs = one_turn_asks(rounds)
    path, manifest = tmp_path / "t.json", tmp_path / "m.yaml"
    path.write_text(json.dumps({"messages": msgs}))
    manifest.write_text(json.dumps({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "m"}, "spec": {
        "models": [{"id": "main", "model": "gpt-4o"}],
        "context_manager": {"type": "observation-masking", "params": {"attention_window": 3}}}}))
    rp = replay(str(manifest), load_transcript(path), counter="estimate")
    return rp


def test_a_one_turn_replays_frames_are_views_of_one_table_of_a_few_runs(tmp_path: Path) -> None:
    """A one-turn replay, 40 asks, window 3 events: from the call before ask 3 on, every frame's
    segments are a frontier view (2 stored runs: the user row and working memory) over one replay
    table, which maps each of the 38 masked results once (the call before "done" masks 40 - 2)."""
    from inspector.replay.replaced import FrontierSegments, stored_entries

    rp = _masked_turn_replay(tmp_path)
    later = rp.frames[3:]
    assert all(type(f.segments) is FrontierSegments and stored_entries(f.segments) == 2 for f in later)
    assert len({id(f.segments.fr) for f in later}) == 1  # type: ignore[attr-defined]
    assert [f.segments.upto for f in later][:3] == [1, 2, 3]  # type: ignore[attr-defined]
    assert len(later[-1].segments.fr.refs) == 38  # type: ignore[attr-defined]
    assert [i for i, _ in rp.frames[-1].replaced] == list(range(2, 78, 2))


def test_clearing_a_one_turn_agents_results_reads_each_working_row_once(monkeypatch: Any) -> None:
    """clear-tool-results (trigger 1 token, keep 2) called before each of R asks of a one-turn agent
    (working memory: ask j at 2j, its 200-character result at 2j + 1; a new tuple each call): the
    call before ask 0 is under the trigger and reads nothing, every later one reads only the 2 rows
    added since the call before, and looks up the asks (``_calls``) of the one of them that has a
    ``tool_calls`` key, once, so R rounds look up R - 1 rows: 39 at 40, 79 at 80 (every call walked
    all of working memory before: 2 + 4 + … rows). The call
    before ask k clears the results of asks j < k - 2, each placeholder built once: R - 3 in all."""
    from inspector.engine.managers import clear_tool_results as ctr

    reads = spy(monkeypatch, ctr, "_calls")

    def run(rounds: int) -> tuple[int, int, int]:
        rows = one_turn_asks(rounds, "x" * 200)[1:-1]  # working memory: the asks and their results
        cm = ClearToolResults(trigger=1, keep=2)
        past: list[Message] = []
        reads.clear()
        last: Any = None
        for k in range(rounds):
            last = cm.decide_with_working(past, tuple(rows[:2 * k]), 0).edits.working
        return len(reads), cm.rows_built, len(last)

    assert run(40) == (39, 37, 37)
    assert run(80) == (79, 77, 77)


def _working_view_reads(tmp_path: Path, monkeypatch: Any, rounds: int) -> tuple[int, int]:
    """(rows written into working memory's kept list, iterations of a working-memory view) over the
    masked turn of ``rounds`` asks."""
    from inspector.engine import contracts

    writes, iterated = [0], [0]
    move, it = contracts.FlatRows.move, contracts.ReplacedRows.__iter__

    def counting_move(self: Any, view: Any, past: Any) -> Any:
        before = list(self.rows) if self.past is past and self.table is view.table else []
        out = move(self, view, past)
        writes[0] += sum(1 for a, b in zip(before, self.rows) if a is not b)
        if not before:
            writes[0] += sum(1 for a, b in zip(past, self.rows) if a is not b)
        return out

    def counting_iter(self: Any) -> Any:
        iterated[0] += 1
        return it(self)

    monkeypatch.setattr(contracts.FlatRows, "move", counting_move)
    monkeypatch.setattr(contracts.ReplacedRows, "__iter__", counting_iter)
    rp = _masked_turn_replay(tmp_path, rounds)
    assert [i for i, _ in rp.frames[-1].replaced] == list(range(2, 2 * rounds - 2, 2))
    return writes[0], iterated[0]


def test_a_masked_turns_working_memory_is_a_view_copied_only_into_a_short_payload(
        tmp_path: Path, monkeypatch: Any) -> None:
    """Rule: the working memory a call sends, under a frontier view of its masks, is a view of it
    (no row copied, nothing moved); only a short payload (under ``VIEW_MIN`` rows, a list) copies it,
    once, through one slice of the kept list moved from the last call's frontier (each newly masked
    row written once). Call k (before ask k; working memory 2k rows, the log empty) masks the
    results of asks 0..k-3. 40 asks: every call is short; calls 3..40 mask, so 38 copies and
    38 rows written. 150 asks: calls k >= 128 send 256 rows or more (a view, never read whole), so
    only calls 3..127 copy: 125 copies, 125 rows written (the old path moved and copied at every
    call: 148 rows written)."""
    from inspector.engine.assembly.incremental import VIEW_MIN

    assert VIEW_MIN == 256
    assert _working_view_reads(tmp_path, monkeypatch, 40) == (38, 38)
    assert _working_view_reads(tmp_path, monkeypatch, 150) == (125, 125)


def _five_turns_masked(tmp_path: Path) -> Any:
    """Five user turns, each one ask, its result and "done" (4 rows a turn), under observation-masking
    with a window of 2 events (estimate counter): two calls a turn."""
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript

    msgs: list[Message] = []
    for t in range(5):
        msgs += [{"role": "user", "content": f"q{t}"},
                 {"role": "assistant", "content": "", "tool_calls": [
                     {"id": f"c{t}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": f"c{t}", "content": f"out {t}"},
                 {"role": "assistant", "content": "done"}]
    path, manifest = tmp_path / "t.json", tmp_path / "m.yaml"
    path.write_text(json.dumps({"messages": msgs}))
    manifest.write_text(json.dumps({"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "m"}, "spec": {
        "models": [{"id": "main", "model": "gpt-4o"}],
        "context_manager": {"type": "observation-masking", "params": {"attention_window": 2}}}}))
    return replay(str(manifest), load_transcript(path), counter="estimate")


def test_a_frontier_frames_replaced_view_is_made_once_per_frontier_not_per_call(
        tmp_path: Path, monkeypatch: Any) -> None:
    """Rule: while the frontier stands (a turn's first call keeps the last call's masks), a frame's
    ``replaced`` is the previous frame's view again (immutable), not a new one. Five turns of one ask,
    window 2 events: turn t's call before its ask masks the results of turns 1..t-2 (the last turn's
    result is one of the 2 newest events), its call before "done" those of turns 1..t-1. So the
    frames' lists hold 1, 1, 2, 2, 3, 3, 4 results (turn 2's second call on): 7 frontier frames,
    4 frontiers, 4 views made (7 before). The 3 frames sharing a view keep all of it without comparing
    it, and a frame whose frontier moved on from the last one's takes the lower of the two counts (the
    recorder's steady path): ``kept_prefix`` runs for the first frontier frame only (4 before, 7 before
    that); ``kept`` is 0 where the frontier moved from a frame of none, else the lower of the two frames' counts."""
    from inspector.replay import recorder, replaced as replaced_mod

    compared = spy(monkeypatch, recorder, "kept_prefix")
    rp = _five_turns_masked(tmp_path)
    assert [len(f.replaced) for f in rp.frames] == [0, 0, 0, 1, 1, 2, 2, 3, 3, 4]
    made = {id(f.replaced) for f in rp.frames if type(f.replaced) is replaced_mod.ReplacedRefs}  # (all kept alive)
    assert len(made) == 4
    assert len(compared) == 1
    assert [f.replaced_kept for f in rp.frames][3:] == [0, 1, 1, 2, 2, 3, 3]
    assert rp.frames[3].replaced is rp.frames[4].replaced and rp.frames[8].replaced is rp.frames[7].replaced


def test_a_frontier_index_shares_the_logs_facts_and_copies_none(tmp_path: Path, monkeypatch: Any) -> None:
    """Rule: the frontier index reads the log index's facts live (it shares the log index's attribute
    dict), so no fact is ever copied or taken over, whether the log grew or the frontier alone moved.
    The five turns above: the index serves 7 frontier calls (turn 2's second call, then both calls of
    turns 3-5), the log longer at 4 of them: ``vars`` read 0 times (2 before: one copy; 4 copies before
    that, 7 before that) and, after every call, each of the log's facts is the index's."""
    from inspector.engine.assembly import replacing
    from inspector.engine.assembly.replacing import ReplacingSums

    read: list[Any] = []

    def counting_vars(obj: Any) -> Any:
        read.append(obj)
        return vars(obj)

    monkeypatch.setattr(replacing, "vars", counting_vars, raising=False)
    served: list[bool] = []
    real = ReplacingSums.frontier

    def recording(self: Any, log: Any, *args: Any) -> Any:
        idx = real(self, log, *args)
        served.append(all(getattr(idx, k) is v for k, v in vars(log).items() if k not in ("rows", "pre")))
        return idx

    monkeypatch.setattr(ReplacingSums, "frontier", recording)
    _five_turns_masked(tmp_path)
    assert len(read) == 0 and served == [True] * 7


def test_a_placeholder_set_again_to_name_the_tool_reads_the_names_of_rows_read_before() -> None:
    """A manager first called with ``<MASKED>`` (no ask's names read), then given a placeholder that
    names the tool: the next call's placeholders name each result's tool (``a``/``b``: the log is read
    again with its names), as a fresh manager's do; window 1, 3 turns of one ask of two calls."""
    convo = [[{"role": "user", "content": f"q{t}"},
              {"role": "assistant", "content": "", "tool_calls": [
                  {"id": f"c{t}{x}", "type": "function", "function": {"name": x, "arguments": "{}"}} for x in "ab"]},
              *({"role": "tool", "tool_call_id": f"c{t}{x}", "content": "r" * 10} for x in "ab"),
              {"role": "assistant", "content": "done"}] for t in range(3)]
    past = [m for rows in convo for m in rows]
    cm = ObservationMasking(attention_window=1)
    assert {r.row["content"] for r in cm.decide_with_working(past, (), 0).edits.replaced} == {"<MASKED>"}
    cm.placeholder = "[{tool} {size}]"
    got = cm.decide_with_working(past, (), 0).edits
    assert flat(got) == masked_by_rule(past, (), 1, "[{tool} {size}]")
    assert [r.row["content"] for r in got.replaced][:2] == ["[a 10]", "[b 10]"]


def test_a_frontier_tables_new_entries_are_each_looked_up_once_in_the_transcript_index() -> None:
    """``FrontierTable.sync`` maps each new entry by one read of the transcript index (no call per entry):
    a 6-row log, transcript = log, a table replacing rows 1 and 4 → refs ``[1, 4]``, 2 reads; one more
    entry (row 5) → refs ``[1, 4, 5]``, 1 read more (3). A message that is not the transcript's at its
    index (a copy), or one standing before the last mapped, makes the table not ok."""
    from inspector.replay.replaced import FrontierTable

    log: list[Message] = [{"role": "user", "content": str(i)} for i in range(6)]
    reads: list[int] = []

    class _Counted(dict[int, int]):
        def get(self, key: int, default: Any = None) -> Any:
            reads.append(key)
            return super().get(key, default)

    ref = _Counted({id(m): i for i, m in enumerate(log)})
    table = [Replacement(1, {"role": "user", "content": MASKED}, MASKED), Replacement(4, {"role": "user"}, MASKED)]
    fr = FrontierTable(table)
    assert fr.sync(log, ref, log) and fr.refs == [1, 4] and len(reads) == 2
    table.append(Replacement(5, {"role": "user"}, MASKED))
    assert fr.sync(log, ref, log) and fr.refs == [1, 4, 5] and len(reads) == 3
    copy = [dict(m) for m in log]
    assert not FrontierTable(table).sync(copy, ref, log)  # copies: not in the index
    behind = FrontierTable([table[1], table[0]])
    assert not behind.sync(log, ref, log)  # row 1 after row 4


def test_a_frontier_call_makes_one_row_units_record(tmp_path: Path, monkeypatch: Any) -> None:
    """Rule: a call assembled over a frontier makes its :class:`RowUnits` once, with its frontier index
    (not the log's first, then a copy). The five masked turns: 10 calls, each assembled incrementally
    (no HITL answer, a positive budget), 10 records made (17 before: one more for each of the 7 frontier
    calls, turn 2's second call on)."""
    from inspector.engine.assembly import assembler, incremental, replacing

    made: list[int] = []
    real = incremental.RowUnits

    def counted(*args: Any) -> Any:
        made.append(1)
        return real(*args)

    monkeypatch.setattr(assembler, "RowUnits", counted)
    monkeypatch.setattr(replacing, "RowUnits", counted)
    rp = _five_turns_masked(tmp_path)
    assert len(rp.frames) == 10 and len(made) == 10
