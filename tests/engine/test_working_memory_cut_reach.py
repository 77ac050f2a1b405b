"""The trimmer's working-memory cut under an additive counter is found over the running sums (``reach``):
the first group start from which the rest fits, by a C bisection of the sums' lists, the answer the
group-by-group walk of the reference gives (issue 26: a clearing call in a trimming window read its
frontier sums item by item, ~30 Python reads a call)."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from builders import UnitsOf, sent_sums, spy
from inspector.engine.contracts import ReplacedBefore, Replacement
from inspector.engine.managers.clear_tool_results import CLEARED
from inspector.engine.types import Message


def _rows(units: list[int]) -> list[Message]:
    return [{"role": "user", "content": "", "u": u} for u in units]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=30), st.integers(-3, 200))
@example([], 0)
@example([0, 0, 4], 0)
@example([3, 5], 9)
def test_reach_is_the_first_row_whose_running_sum_reaches_x_or_one_past_the_end(units: list[int], x: int) -> None:
    """``RowIndex.reach(x)``: the smallest r in [0, n] with units(0, r) >= x, n + 1 when none
    (worked out by walking the sums: [0, 0, 4] reaches 0 at row 0 and 4 at row 3; [3, 5] never reaches 9)."""
    from inspector.engine.assembly.row_index import RowIndex

    idx = RowIndex(UnitsOf()).sync(_rows(units))
    total, want = 0, None
    for r in range(len(units) + 1):
        if total >= x:
            want = r
            break
        if r < len(units):
            total += units[r]
    assert idx.reach(x) == (want if want is not None else len(units) + 1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=30), st.data())
def test_reach_over_a_frontier_index_reads_the_replaced_rows_sums_and_no_item_of_them(units: list[int],
                                                                                        data: Any) -> None:
    """``FrontierIndex.reach`` answers over the rows as sent (those below the frontier replaced) what
    walking their sums answers, for every frontier and target, reading no :class:`_FrontierSums` item."""
    from inspector.engine.assembly.replacing import FrontierIndex, ReplacingSums, _FrontierSums
    from inspector.engine.assembly.row_index import RowIndex

    counter: Any = UnitsOf()
    rows = _rows(units)
    log = RowIndex(counter).sync(rows)
    replaced = sorted(data.draw(st.sets(st.integers(0, len(rows) - 1), max_size=len(rows))))
    table = [Replacement(i, {"role": "user", "content": "", "u": data.draw(st.integers(0, 9))}, CLEARED)
             for i in replaced]
    view = ReplacedBefore(table, data.draw(st.integers(0, len(table))))
    idx = FrontierIndex(log, view, ReplacingSums().upto(view, log, counter))
    sums = sent_sums(rows, view)
    with pytest.MonkeyPatch.context() as mp:
        reads = spy(mp, _FrontierSums, "__getitem__", 1)
        for x in range(-1, sums[-1] + 3):
            assert idx.reach(x) == bisect_left(sums, x)  # (len(rows) + 1 when no sum reaches x)
    assert reads == []


def _turn(sizes: list[tuple[int, int]]) -> list[Message]:
    """One turn's working memory: an ask of unit ``a`` and its result of unit ``r`` per pair."""
    out: list[Message] = []
    for k, (a, r) in enumerate(sizes):
        out.append({"role": "assistant", "content": "", "u": a,
                    "tool_calls": [{"id": f"c{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
        out.append({"role": "tool", "tool_call_id": f"c{k}", "content": "", "u": r})
    return out


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 30)), min_size=1, max_size=25), st.integers(1, 400))
@example([(1, 10), (1, 10), (1, 10)], 12)  # keeps the last group only: 22 from row 2 is over, 11 from row 4 fits
@example([(2, 3)], 1)  # nothing fits: the last group is kept all the same (the reference's walk stops there)
def test_the_working_memory_cut_by_reach_keeps_what_the_reference_walk_keeps(sizes: list[tuple[int, int]],
                                                                             max_tokens: int) -> None:
    """Under an additive counter with ``pin_reach`` given, ``trim_with_sums`` keeps and records as removed
    the rows :func:`trim_messages_to_budget` (the reference's group-by-group walk) does, and never asks
    ``pin_sum`` for the cut."""
    from inspector.engine.assembly.row_index import RowIndex
    from inspector.engine.history import leading_group_size
    from inspector.engine.trim import RowSums, trim_messages_to_budget, trim_with_sums

    counter: Any = UnitsOf()
    head: list[Message] = [{"role": "user", "content": "go", "u": 1}]
    pin = _turn(sizes)
    idx = RowIndex(counter).sync(pin)
    chain, i = [], 0
    while i < len(pin):
        chain.append(i)
        i += leading_group_size(pin, i)
    asked = [0]

    def pin_sum(lo: int, hi: int) -> int:
        asked[0] += 1
        return idx.units(lo, hi)

    sums = RowSums(msg_sum=lambda lo, hi: sum(m["u"] for m in head[lo:hi]), msg_total=1,
                   pin_units=idx.unit, pin_sum=pin_sum, pin_total=idx.units(0, len(pin)), pin_chain=chain,
                   pin_reach=idx.reach)
    ref = trim_messages_to_budget(head, max_tokens=max_tokens, reserve=0, fixed=0, pin_tail=pin, counter=counter)
    out = trim_with_sums(head, max_tokens=max_tokens, reserve=0, fixed=0, pin_tail=pin, counter=counter, sums=sums)
    assert list(out.messages) == list(ref.messages)
    assert list(out.removed) == list(ref.removed) and out.tokens == ref.tokens
    assert asked[0] <= 1  # (the cut's own units, once; the bisection asks none)
