"""The forgetting totals over calls (``forgetting_totals``, docs/design.md §3.13), counted by hand.

Bug class guarded (mutmut survivors of 5 December 2026): a total under another key, an identifier
listed twice, the ratio multiplied or rounded to another precision, 1.0 (or a division by zero)
when no call needed an identifier.
"""

from __future__ import annotations

from inspector.forgetting import CallNeeds, Forgotten, forgetting_totals


def _lost(call: int, identifier: str) -> Forgotten:
    return Forgotten(call, identifier, "code", ("next_reply",), 0, "dropped")


def test_totals_count_pairs_calls_and_distinct_identifiers_in_order_of_first_loss() -> None:
    # calls 1 and 2 lose ORD-1 (twice the same identifier), call 2 also SEC-2; calls 1-3 needed one
    # an earlier message held, call 4 none: 3 pairs over 3 needing calls, 2 calls that forgot
    needs = [CallNeeds(1, 1, 1, [_lost(1, "ORD-1")]), CallNeeds(2, 3, 2, [_lost(2, "ORD-1"), _lost(2, "SEC-2")]),
             CallNeeds(3, 1, 1, []), CallNeeds(4, 0, 0, [])]
    assert forgetting_totals(needs) == {"forgotten": 3, "forgotten_calls": 2, "needing_calls": 3,
                                        "forgotten_per_call": 1.0, "forgotten_ids": ["ORD-1", "SEC-2"]}


def test_the_ratio_is_rounded_to_four_places() -> None:
    # 2 forgotten over 3 needing calls: 0.666666… → 0.6667
    needs = [CallNeeds(1, 1, 1, [_lost(1, "ORD-1")]), CallNeeds(2, 1, 1, [_lost(2, "ORD-1")]), CallNeeds(3, 1, 1, [])]
    assert forgetting_totals(needs)["forgotten_per_call"] == 0.6667


def test_with_no_needing_call_the_ratio_is_zero() -> None:
    assert forgetting_totals([CallNeeds(1, 0, 0, [])]) == {"forgotten": 0, "forgotten_calls": 0, "needing_calls": 0,
                                                          "forgotten_per_call": 0.0, "forgotten_ids": []}
