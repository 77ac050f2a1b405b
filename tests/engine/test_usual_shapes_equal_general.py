"""Recording, managers, budget, write-back: the shortcuts taken for the usual
shapes decide exactly what the general code decided for every shape.

* ``call_ids`` tests exact types first (a plain list of plain dicts with string ids); subclasses and
  odd shapes still go through ``isinstance``;
* ``LogRuns.sync`` reads new rows in C (``map``/``compress``/``accumulate``); its facts still equal
  :func:`turn_starts` and the prefix sums of ``history_unit``, however the log grows;
* ``compute_budget`` reads the trimmer's attributes directly, with the defaults for an object
  that lacks some, and takes a positive int threshold (never a bool).
"""

from __future__ import annotations

from collections import UserList
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.budget import compute_budget
from inspector.engine.history import LogRuns, call_ids, turn_starts
from inspector.engine.limits import ModelLimits
from inspector.engine.tokens import EstimateCounter


class MyDict(dict):  # type: ignore[type-arg]
    pass


class MyStr(str):
    pass


def test_call_ids_of_usual_and_unusual_shapes() -> None:
    assert call_ids({"role": "assistant", "tool_calls": [{"id": "a"}, {"id": "b"}]}) == ["a", "b"]
    assert call_ids({"role": "assistant", "tool_calls": [MyDict(id="a"), {"id": MyStr("b")}]}) == ["a", "b"]
    assert call_ids({"role": "assistant", "tool_calls": UserList([{"id": "a"}])}) == []  # not a list
    assert call_ids({"role": "assistant", "tool_calls": ({"id": "a"},)}) == []  # a tuple is not read
    assert call_ids({"role": "assistant", "tool_calls": [{"id": ""}, {"id": 3}, "x", None, {}]}) == []
    assert call_ids({"role": "assistant"}) == []


class SubList(list):  # type: ignore[type-arg]
    pass


def test_call_ids_reads_a_list_subclass() -> None:
    assert call_ids({"role": "assistant", "tool_calls": SubList([{"id": "a"}])}) == ["a"]


ROLES = st.sampled_from(["user", "assistant", "tool", "system"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(ROLES, max_size=6), max_size=6))
def test_logruns_sync_matches_turn_starts_and_units_as_the_log_grows(batches: list[list[str]]) -> None:
    counter = EstimateCounter()
    runs = LogRuns()
    rows: list[dict[str, Any]] = []
    for batch in batches:
        rows.extend({"role": r, "content": f"{r} {len(rows)} " * (len(rows) % 5 + 1)} for r in batch)
        runs.sync(rows, counter)
        assert runs.starts == turn_starts(rows)
        assert runs.n == len(rows)
        for lo in range(len(rows) + 1):
            assert runs.history(lo, len(rows)) == sum(counter.history_unit(m) for m in rows[lo:])


def limits() -> ModelLimits:
    return ModelLimits("m", "m", 100_000, "manifest", 4_000, "manifest", None, None, None)


@dataclass
class Full:
    max_tokens: object = None
    reserve_tokens: object = None
    safety_margin_ratio: object = 0.1


class OnlyCap:
    """A trimmer object with one of the three settings: the others take their defaults."""

    max_tokens = 50_000


def test_compute_budget_reads_a_partial_trimmer_with_the_defaults() -> None:
    partial = compute_budget(limits(), OnlyCap(), fixed=10, tool_tokens=0, summarizing=False)
    full = compute_budget(limits(), Full(max_tokens=50_000), fixed=10, tool_tokens=0, summarizing=False)
    assert partial == full


def test_compute_budget_threshold_is_a_positive_int_never_a_bool() -> None:
    base = compute_budget(limits(), Full(), fixed=10, tool_tokens=0, summarizing=True, summary_threshold=0)
    capped = compute_budget(limits(), Full(), fixed=10, tool_tokens=0, summarizing=True, summary_threshold=500)
    as_bool = compute_budget(limits(), Full(), fixed=10, tool_tokens=0, summarizing=True,
                             summary_threshold=True)
    above = compute_budget(limits(), Full(), fixed=10, tool_tokens=0, summarizing=True,
                           summary_threshold=10 ** 9)
    assert capped.hint == 500 and base.hint > 500
    assert as_bool.hint == base.hint and above.hint == base.hint
