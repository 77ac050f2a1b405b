"""The end-to-end benchmark's (d) lines say how many calls the context manager and the trimmer changed.

Rule (benchmarks/end_to_end.py :func:`changed_of`): "m/t of n", where m counts the calls whose payload
replaces a row or leaves out more rows than the trimmer cut, t the calls the trimmer cut, n all calls.
Bug class: a regime switch inside the measured range (a strategy that starts clearing between 2 500
and 5 000 rounds) that the output does not show, so a ratio above 2 reads as growth.
"""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import end_to_end  # noqa: E402
from replay_scaling import one_enormous_turn  # noqa: E402

from inspector.replay import replay  # noqa: E402


def test_clearing_calls_are_the_managers_and_a_window_that_holds_the_turn_trims_none() -> None:
    # 7 rounds then "done": 8 calls; call k (k = 0..7) sees the results of rounds 0..k-1. With keep=2
    # and a 1-token trigger, the results before the 2nd-last are cleared: k - 2 of them, so calls 3..7
    # (5 calls) replace a row; a 400k window holds the turn, so the trimmer cuts nothing.
    s = end_to_end.settings({"type": "clear-tool-results", "params": {"trigger": 1, "keep": 2}}, window=400_000)
    assert end_to_end.changed_of(replay(s, one_enormous_turn(7), counter="tiktoken")) == "5/0 of 8"


def test_under_its_trigger_a_manager_changes_no_call() -> None:
    s = end_to_end.settings({"type": "clear-tool-results", "params": {"trigger": 10**9}}, window=400_000)
    assert end_to_end.changed_of(replay(s, one_enormous_turn(7), counter="tiktoken")) == "0/0 of 8"
