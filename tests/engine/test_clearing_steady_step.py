"""clear-tool-results' steady clearing call (:meth:`ClearToolResults._step`) and the check of the record
it gives (:func:`check_record`'s frontier part): the same answers as the general path on every call,
and the work they save held by counts (never time)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import UnitsOf, drawn_ask, one_turn_asks, spy, tool
from inspector.engine import contracts
from inspector.engine.contracts import EditRecord, ReplacedBefore, Replacement, check_record, newest_group_start
from inspector.engine.managers import clear_tool_results as ctr
from inspector.engine.managers.base import manage
from inspector.engine.managers.clear_tool_results import ClearToolResults
from inspector.engine.tokens import make_counter
from inspector.engine.types import Message


@st.composite
def agent(draw: Any) -> list[list[Message]]:
    """Turns of a tool-using agent: a user row, up to 8 asks (one or two calls, tools ``a``/``b``), each
    answered (sizes vary), a reply; now and then an ask left unanswered or answered before it is asked."""
    out: list[list[Message]] = []
    k = 0
    for t in range(draw(st.integers(1, 5))):
        rows: list[Message] = [{"role": "user", "content": f"q{t}"}]
        for _r in range(draw(st.integers(0, 8))):
            row, ids = drawn_ask(draw, k)
            k += len(ids)
            rows.append(row)
            answered = ids[:-1] if draw(st.integers(0, 9)) == 0 else ids
            rows.extend(tool(i, "x" * draw(st.sampled_from([5, 40, 300]))) for i in answered)
        rows.append({"role": "assistant", "content": "done"})
        out.append(rows)
    return out


def calls(convo: list[list[Message]]) -> Any:
    """``(past, working)`` before every assistant row, the log one list growing in place and working
    memory one list per turn growing in place (as the engine's)."""
    past: list[Message] = []
    for rows in convo:
        working: list[Message] = []
        for m in rows[1:]:
            if m["role"] == "assistant":
                yield past, working
            working.append(m)
        past.extend(rows)


def answer(cm: ClearToolResults, past: list[Message], working: list[Message]) -> tuple[Any, ...]:
    """A call's action and its record's replacements by value (two managers build their own rows)."""
    got = manage(cm, past, 0, working)
    rec = got.edits
    return (got.decision.action, rec.size, rec.kept, [(r.index, r.row, r.reason) for r in rec.replaced],
            [(r.index, r.row, r.reason) for r in rec.working])


@settings(max_examples=200, deadline=None)
@given(convo=agent(), keep=st.integers(0, 4), trigger=st.integers(1, 900), at_least=st.sampled_from([0, 0, 50]),
       exclude=st.sampled_from([None, None, ["b"]]), counter=st.sampled_from(["estimate", "tiktoken"]))
def test_the_steady_step_answers_as_the_general_path_on_every_call(
        convo: Any, keep: int, trigger: int, at_least: int, exclude: Any, counter: str) -> None:
    """A manager with its steady step and one whose step always declines (every call through
    :meth:`_frontier`), driven through the engine's ``manage`` (the record checked) call by call over
    random turns: the same action and the same replacements (by value) on every call."""
    fast = ClearToolResults(trigger=trigger, keep=keep, clear_at_least=at_least, exclude_tools=exclude)
    slow = ClearToolResults(trigger=trigger, keep=keep, clear_at_least=at_least, exclude_tools=exclude)
    fast.counter, slow.counter = make_counter(counter), make_counter(counter)
    slow._step = lambda *a: None  # type: ignore[method-assign]
    for past, working in calls(convo):
        assert answer(fast, past, working) == answer(slow, past, working)
    assert fast.rows_built == slow.rows_built  # (each placeholder built once either way)


def _one_turn(rounds: int, monkeypatch: Any) -> dict[str, int]:
    """A one-turn agent of ``rounds`` asks (tiktoken, trigger 1 token, keep 3) driven through ``manage``:
    the general path's calls, the check's walks and the placeholders built over the calls after the
    first three clearing ones (the steady calls)."""
    frontier = spy(monkeypatch, ClearToolResults, "_frontier", 1)
    grow = spy(monkeypatch, ClearToolResults, "_grow", 1)
    walks = spy(monkeypatch, contracts, "newest_group_start")
    swaps: list[Any] = []
    rows = one_turn_asks(rounds, "x" * 200)[1:-1]
    cm = ClearToolResults(trigger=1, keep=3)
    cm.counter = counter = make_counter("tiktoken")
    original = counter.with_content
    counter.with_content = lambda m, s: swaps.append(m) or original(m, s)  # type: ignore[method-assign]
    past: list[Message] = []
    working: list[Message] = []
    for k in range(rounds):
        if k == 8:  # (the first clearing calls behind: the steady ones from here)
            for seen in (frontier, grow, walks, swaps):
                seen.clear()
            built = cm.rows_built
        manage(cm, past, 0, working)
        working.extend(rows[2 * k:2 * k + 2])
    return {"frontier": len(frontier), "grow": len(grow), "walks": len(walks), "swaps": len(swaps),
            "built": cm.rows_built - built}


def test_a_steady_clearing_call_builds_its_one_new_placeholder_and_walks_nothing(monkeypatch: Any) -> None:
    """The call before ask k (k >= 4) clears the results of asks j < k - 3: one more than the call
    before. From the 9th call on, every call is the steady step's: no call of the general path
    (``_frontier``), none of ``_grow`` (the one new row built in the step, by one ``with_content``), and
    the check finds the newest group right after the view's end (no walk of working memory): R - 8
    calls, R - 8 rows, however long the turn."""
    for rounds in (40, 120):
        n = rounds - 8
        assert _one_turn(rounds, monkeypatch) == {"frontier": 0, "grow": 0, "walks": 0, "swaps": n, "built": n}


def test_a_log_frontier_moves_on_through_the_step_once_the_turns_are_committed(monkeypatch: Any) -> None:
    """Turns of one ask each (keep 3, additive counter, trigger 1): from the 5th turn the bound stands
    among the log's results and each call clears one more of them. The step answers every such call
    (no ``_frontier`` call), its log view one longer each time, each placeholder built once."""
    frontier = spy(monkeypatch, ClearToolResults, "_frontier", 1)
    cm = ClearToolResults(trigger=1, keep=3)
    cm.counter = UnitsOf()
    past: list[Message] = []
    uptos = []
    for t in range(30):
        ask = {"role": "assistant", "content": "", "u": 5, "tool_calls": [
            {"id": f"c{t}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}
        res = {"role": "tool", "tool_call_id": f"c{t}", "content": "r", "u": 50}
        if t == 6:
            frontier.clear()
        rec = manage(cm, past, 0, [ask, res]).edits
        uptos.append(rec.replaced.upto if type(rec.replaced) is ReplacedBefore else 0)
        past.extend([{"role": "user", "content": "q", "u": 1}, ask, res, {"role": "assistant", "content": "ok", "u": 1}])
    assert frontier == []
    assert uptos[6:] == list(range(4, 28))  # (the call of turn t: t + 1 results, the log's first t - 2 cleared)
    assert cm.rows_built == uptos[-1]


# --- the check's frontier part --------------------------------------------------------------------------

def _by_rule(log: list[int], wm: list[int], size: int, working: list[Message]) -> str | None:
    """The check written out for a frontier record keeping every row, by its views' two ends (a
    frontier's rows stand in order): the log view's in the log, working memory's before its newest
    group (the fault's words, or None)."""
    for i in (log[0], log[-1]) if log else ():
        if not 0 <= i < size:
            return "is not a kept row"
    newest = newest_group_start(working)
    for i in (wm[0], wm[-1]) if wm else ():
        if not 0 <= i < newest:
            return "is not an older row of the current turn"
    return None


@settings(max_examples=400, deadline=None)
@given(roles=st.lists(st.sampled_from(["assistant", "tool", "user"]), max_size=12),
       log=st.lists(st.integers(-2, 9), max_size=4), wm=st.lists(st.integers(-2, 13), max_size=4),
       sort=st.booleans(), size=st.integers(0, 8))
def test_the_checks_frontier_part_answers_as_the_rule(roles: list[str], log: list[int], wm: list[int], sort: bool,
                                                     size: int) -> None:
    """Views over tables of any indices (in order or not) and working memory of any roles: the check
    raises, naming the fault, exactly when the rule finds one, and passes otherwise (its frontier part
    reads the row after the view's end, then walks back from working memory's end)."""
    if sort:
        log, wm = sorted(log), sorted(wm)
    working: list[Message] = [{"role": r, "content": ""} for r in roles]
    past: list[Message] = [{"role": "user", "content": ""}] * size
    table = [Replacement(i, {"role": "tool", "content": ""}, "r") for i in log]
    wtable = [Replacement(i, {"role": "tool", "content": ""}, "r") for i in wm]
    record = EditRecord(size, ((0, size),) if size else (), ReplacedBefore(table, len(table)), (),
                        ReplacedBefore(wtable, len(wtable)))
    fault = _by_rule(log, wm, size, working)
    if fault is None:
        check_record(record, past, working)
    else:
        with pytest.raises(ValueError, match=fault):
            check_record(record, past, working)
