"""The managers' running view of the committed log.

:class:`~inspector.engine.history.LogRuns` replaces three per-call walks of the whole log — the
user-turn split, the summary trigger's token sum and the summary-reuse fingerprint — by facts
recorded once per appended row. These tests hold it equal to the from-scratch functions on every
prefix of random logs (appended to in random chunks, occasionally replaced as a fold does), and
count how many rows a replay reads so a return to per-call walks is caught (no wall-clock time).
"""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.history import LogRuns, split_user_turns, turn_starts
from inspector.engine.managers.summarising import fingerprint
from inspector.engine.tokens import EstimateCounter
from test_per_call_work import lookups, many_turns

ROW = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t}, st.text(max_size=12)),
    st.builds(lambda t: {"role": "assistant", "content": t}, st.text(max_size=12)),
    st.builds(lambda i: {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": str(i)}}]}, st.integers(0, 5)),
    st.builds(lambda i: {"role": "tool", "tool_call_id": f"c{i}", "content": "r" * i}, st.integers(0, 5)),
    st.builds(lambda t: {"role": "system", "content": t}, st.text(max_size=8)),
)


@settings(max_examples=150, deadline=None)
@given(chunks=st.lists(st.lists(ROW, max_size=6), max_size=8), fold_at=st.integers(0, 8),
       asks=st.lists(st.integers(0, 12), max_size=6), keep=st.integers(0, 9), block=st.booleans(),
       grown=st.lists(ROW, max_size=3))
def test_running_facts_equal_a_fresh_walk_after_every_append(chunks: list[list[dict[str, Any]]], fold_at: int,
                                                             asks: list[int], keep: int, block: bool,
                                                             grown: list[dict[str, Any]]) -> None:
    """Also across a fold: the old list grows in place (a commit), then the projection becomes a new
    list, ``[summary block?] + a suffix`` of it, which grows again before it is read; the facts of
    the rows it keeps are taken over rather than re-read (``read`` counts exactly the new rows)."""
    counter = EstimateCounter()
    runs = LogRuns()
    log: list[dict[str, Any]] = []
    for k, chunk in enumerate(chunks):
        unseen = len(chunk)  # rows the facts have not read: a fold that keeps some read rows adds its own
        if k == fold_at and log:
            seen = len(log)
            log.extend(grown)  # committed rows the facts have not seen yet
            cut = len(log) * keep // 9
            head = [{"role": "system", "content": "[summary of earlier turns]"}] if block else []
            log = head + log[cut:]  # a fold: the projection becomes a new list
            # rows read before the fold and kept by it are taken over, even once the new list has
            # grown past the fold (the committed log when the assembler next looks); else a re-read
            unseen += len(head) + len(grown) if cut < seen else len(log)
        read = runs.read
        log.extend(chunk)
        runs.sync(log, counter)
        assert runs.read - read == unseen
        assert runs.starts == turn_starts(log)
        assert runs.history(0, len(log)) == sum(counter.history_unit(m) for m in log)
        groups = split_user_turns(log)
        for g in [a % (len(groups) + 1) for a in asks] + [0, len(groups)]:
            assert runs.fingerprint(g) == fingerprint(groups[:g])
            lo = runs.turn_start(g)
            assert runs.history(lo, len(log)) == sum(counter.history_unit(m) for m in log[lo:])


def test_a_log_changed_under_its_last_row_is_read_again() -> None:
    counter = EstimateCounter()
    log = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    runs = LogRuns().sync(log, counter)
    log[-1] = {"role": "user", "content": "a longer row"}
    runs.sync(log, counter)
    assert runs.starts == [0, 1] and runs.history(0, 2) == 1 + len("a longer row")


def test_summarising_that_keeps_growing_reads_each_row_a_bounded_number_of_times() -> None:
    """keep_turns above the turn count: the log grows on every commit and the manager is asked on
    every call. Summing the whole log per call (the trigger) was quadratic; doubling the transcript
    must now roughly double the look-ups and field reads."""
    cm = {"type": "summarising", "params": {"keep_turns": 100_000}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small, reads_small, calls_small = lookups(many_turns(1000), cm)
        big, reads_big, calls_big = lookups(many_turns(2000), cm)
    assert calls_big == 2 * calls_small
    assert big / small < 2.3, (small, big)
    assert reads_big / reads_small < 2.3, (reads_small, reads_big)
