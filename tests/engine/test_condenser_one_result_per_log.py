"""Every call of a turn sees the same log: the condenser works its result out once per log, not per call.

The rule (inspector/engine/managers/condenser.py, ``Condenser.decide``): a result that left the
summary in force as it was (kept under ``max_size``, reused, nothing to fold) is handed out again
while the log (the same list, length and last row), the parameters, the summarizer and the summary
in force stay the same; a condensation changes the summary in force, so the next call on that log
works out a reuse, and a failure is never handed out twice (the next call retries). Operation
counts worked out by hand, not times.

max_size 10, keep_first 2 (tests/engine/test_condenser_hashes_each_row_once.py): over 40 rows the
condensations are at 11, 17, 23, 29 and 35 rows. Three calls per log: 40 logs, each worked out
once, plus once more after each of the 5 condensations: 45 results worked out for 120 calls.
"""

from __future__ import annotations

from typing import Any

import pytest

from builders import counting_summarizer, exchange_rows
from inspector.engine.managers.condenser import Condenser


def spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the results the condenser works out (each starts by finding the summary in force)."""
    worked: list[int] = []
    real = Condenser._in_force

    def counting(self: Condenser, past: Any) -> Any:
        worked.append(len(past))
        return real(self, past)

    monkeypatch.setattr(Condenser, "_in_force", counting)
    return worked


def test_calls_on_the_same_log_work_the_result_out_once_unless_the_summary_in_force_changed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    worked = spy(monkeypatch)
    summarised, summarizer = counting_summarizer()
    cm = Condenser(10, 2, summarizer=summarizer)
    log: list[dict[str, Any]] = []
    actions: dict[int, list[str]] = {}
    for row in exchange_rows(40):
        log.append(row)  # the same list grows, as the engine's committed log does
        actions[len(log)] = [cm.decide(log, 0).decision.action for _ in range(3)]
    assert len(worked) == 45 and len(summarised) == 5
    assert actions[10] == ["condenser-under-max"] * 3
    assert actions[11] == ["condensed", "condensed-reused", "condensed-reused"]
    assert actions[12] == ["condensed-reused"] * 3
    assert [n for n, a in actions.items() if a[0] == "condensed"] == [11, 17, 23, 29, 35]
    cm.max_size = 40  # retuned: the next call works its result out again (a reuse: 12 events)
    assert cm.decide(log, 0).decision.action == "condensed-reused" and len(worked) == 46


def test_a_failed_condensation_is_retried_by_the_next_call_on_the_same_log(monkeypatch: pytest.MonkeyPatch) -> None:
    worked = spy(monkeypatch)
    calls: list[int] = []

    def flaky(msgs: list[dict[str, Any]]) -> str:
        calls.append(len(msgs))
        if len(calls) == 1:
            raise RuntimeError("timeout")
        return "S"

    cm = Condenser(10, 2, summarizer=flaky)
    log = exchange_rows(11)
    got = [cm.decide(log, 0).decision.action for _ in range(4)]
    assert got == ["condenser-failed", "condensed", "condensed-reused", "condensed-reused"]
    assert len(calls) == 2 and len(worked) == 3  # the fourth call is the third's result
