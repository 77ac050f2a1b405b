"""The condenser's work per condensation is the rows it newly folds, never the whole log again.

The rule (inspector/engine/managers/condenser.py): the summary in force keeps the log rows before
its tail, one run of references per condensation (a condensation copies only the rows it newly
folds); their SHA-256 (the reuse check when the log's rows are other objects) is worked out only
when that check needs it, once, so over a growing log of the same rows no row is hashed at all, and
the summarizer is called once per condensation. Operation counts, worked out by hand, not times.

max_size 10, keep_first 2, so the tail is 10 // 2 − 2 − 1 = 2 events. Plain user/assistant rows
(no tool results, so no cut moves): the first condensation is at 11 rows (tail starts at 9); the
view is then 2 + 1 + (n − 9) events, past 10 at n = 17 (tail 15); then every 6 rows: 23 (21),
29 (27), 35 (33). Over 40 rows: 5 condensations, whose runs are 9, 6, 6, 6 and 6 rows (33); the
eager running hash read those 33 rows at the condensations, the one-shot prefix hash
9 + 15 + 21 + 27 + 33 = 105.
"""

from __future__ import annotations

from typing import Any

import pytest

from builders import counting_summarizer, exchange_rows
from inspector.engine.managers import condenser as condenser_module
from inspector.engine.managers.condenser import Condenser, prefix_digest


def test_over_a_growing_log_each_row_is_hashed_once_and_summarised_once_per_condensation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    hashed: list[int] = []
    real = condenser_module.row_digest_bytes

    def counting(m: dict[str, Any]) -> bytes:
        hashed.append(1)
        return real(m)

    monkeypatch.setattr(condenser_module, "row_digest_bytes", counting)
    summarised, summarizer = counting_summarizer()
    cm = Condenser(10, 2, summarizer=summarizer)
    log: list[dict[str, Any]] = []
    actions = []
    for row in exchange_rows(40):
        log.append(row)  # the same list grows, as the engine's committed log does
        actions.append(cm.decide(log, 0).decision.action)
    condensed_at = [i + 1 for i, a in enumerate(actions) if a == "condensed"]
    assert condensed_at == [11, 17, 23, 29, 35]
    assert len(summarised) == 5  # once per condensation, never on a call that reuses the summary
    # folded: 7 rows; then the previous summary and 6 rows, four times
    assert summarised == [7, 7, 7, 7, 7]
    assert hashed == []  # the log keeps the same rows: the reuse check never reads one
    held = cm._condensed
    assert held is not None and [len(run) for run in held.runs] == [9, 6, 6, 6, 6]
    assert held.runs[1][0] is log[9] and held.digest() == prefix_digest(log, 33)


def test_a_copied_log_with_the_same_rows_reuses_the_summary_by_its_running_digest() -> None:
    """The reuse check by content still holds after incremental hashing: a log of copied rows (other
    objects, same text) at 36 rows reuses the summary made at 35 (view 2 + 1 + 3 = 6 ≤ 10)."""
    cm = Condenser(10, 2, summarizer=lambda msgs: "S")
    log: list[dict[str, Any]] = []
    for row in exchange_rows(35):
        log.append(row)
        cm.decide(log, 0)
    hashed: list[int] = []
    real = condenser_module.row_digest_bytes

    def counting(m: dict[str, Any]) -> bytes:
        hashed.append(1)
        return real(m)

    copied = [dict(m) for m in exchange_rows(36)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(condenser_module, "row_digest_bytes", counting)
        assert cm.decide(copied, 0).decision.action == "condensed-reused"
        assert len(hashed) == 33 + 33  # the copy's 33 rows before the tail, and the summary's, once
        cm.decide(copied + [{"role": "user", "content": "r36"}], 0)  # the copy's rows are in force now
        assert len(hashed) == 66
    changed = [dict(m) for m in exchange_rows(36)]
    changed[5]["content"] = "edited"
    assert cm.decide(changed, 0).decision.action == "condensed"  # other text: the summary is not reused
