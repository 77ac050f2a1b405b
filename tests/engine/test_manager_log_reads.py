"""The committed log is read once per row by the whole engine, and the stack manager's per-turn result.

The write-back's recency check and the manager's decision read the same running facts
(:meth:`ContextManager.log_runs`), so a commit reads its new rows once, not once per reader; the
stack manager returns the result it made for the same log (same list, length and last row) again.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import ask, asst, tool, user
from inspector.engine import ContextEngine
from inspector.engine.history import LogRuns, split_user_turns
from inspector.engine.managers.sliding_window import SlidingWindowConversation
from inspector.engine.managers.stack import StackConversation
from inspector.manifest import settings_from_dict


def turn(k: int, rounds: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [user(f"question {k}")]
    for r in range(rounds):
        rows += [ask(f"c{k}_{r}"), tool(f"c{k}_{r}", f"result {k} {r}")]
    return [*rows, asst(f"answer {k}")]


@pytest.mark.parametrize("cm", [{"type": "sliding-window", "params": {"keep_turns": 3}},
                                {"type": "summarising", "params": {"keep_turns": 3, "summarizer": "drop"}}])
def test_each_committed_row_is_read_once_by_the_whole_engine(cm: dict[str, Any],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Every running-facts object the engine syncs is counted (the real ``sync`` runs): over a
    conversation that folds at every commit, the rows read add up to the rows committed, once each
    (a fold's kept rows are taken over, not read again; a drop adds no summary row to read)."""
    synced: dict[int, LogRuns] = {}
    real = LogRuns.sync

    def counting(self: LogRuns, rows: Any, counter: object = None) -> LogRuns:
        synced[id(self)] = self
        return real(self, rows, counter)

    monkeypatch.setattr(LogRuns, "sync", counting)
    settings_ = settings_from_dict({"kind": "Agent", "spec": {
        "context_manager": cm, "models": [{"model": "gpt-4o", "context_window": 120_000}]}}).settings
    engine = ContextEngine(settings_, counter="estimate", summarizer="drop")
    committed = 0
    folds = 0
    for k in range(12):
        rows = turn(k, k % 3)
        engine.user(rows[0])
        for m in rows[1:]:
            if m["role"] == "assistant":
                engine.assemble(strict=False)
            engine.record(m)
        rec = engine.commit()
        committed += rec.committed_rows
        folds += rec.action != "unchanged"
    engine.assemble(strict=False)  # a call after the last fold reads the new log too
    assert folds >= 8, "the conversation was built to fold at most commits"
    assert sum(r.read for r in synced.values()) == committed


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3), st.booleans()), min_size=1, max_size=12))
def test_stack_gives_the_whole_log_on_every_call(steps: list[tuple[int, int, bool]]) -> None:
    """Property: a stack manager (no cap) stepped through a growing log, asked one to three times
    between commits, sometimes over a copied list: every answer is the whole log with its user-turn
    count; calls over an unchanged log get the very same result, a new or longer log a new one."""
    cm = StackConversation()
    log: list[dict[str, Any]] = []
    for k, (rounds, calls, copy) in enumerate(steps):
        log.extend(turn(k, rounds))  # a commit grows the same list in place
        if copy:
            log = list(log)  # a fold, a restore: another list object with the same rows
        first = None
        for _ in range(calls):
            got = cm.decide(log, 1)
            assert list(got.messages) == log
            assert got.decision.action == "unchanged-under-budget"
            assert got.decision.kept_turns == len(split_user_turns(log))
            if first is None:
                first = got
            assert got is first
        assert cm.decide(log + [user("more")], 1) is not first


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3), st.integers(1, 4)), min_size=1, max_size=12))
def test_sliding_window_answers_as_a_fresh_manager_on_every_call(steps: list[tuple[int, int, int]]) -> None:
    """Property: one sliding-window manager asked repeatedly over a growing log, with ``keep_turns``
    sometimes retuned between two calls over the same log, answers exactly as a new manager with that
    setting asked once (what it remembers per turn never outlives the log or the setting)."""
    cm = SlidingWindowConversation(keep_turns=2)
    log: list[dict[str, Any]] = []
    for k, (rounds, calls, keep) in enumerate(steps):
        log.extend(turn(k, rounds))
        for c in range(calls):
            if c == 1:
                cm.keep_turns = keep  # retuned between two calls of one turn
            got = cm.decide(log, 1)
            fresh = SlidingWindowConversation(keep_turns=cm.keep_turns).decide(list(log), 1)
            assert list(got.messages) == list(fresh.messages)
            assert got.decision == fresh.decision
