"""The per-call budget record: immutable, and what is remembered between calls never outlives a change
of the settings it was computed from (the call-independent part is computed once
per distinct setting, only ``fixed`` and what follows from it per call)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.budget import Budget, compute_budget
from inspector.engine.limits import ModelLimits
from inspector.params import HYSTERESIS_RATIO, SAFETY_MARGIN_RATIO


def limits(window: int = 100_000, completion: int = 4_000) -> ModelLimits:
    return ModelLimits("m", "m", window, "manifest", completion, "manifest", None, None, None)


@dataclass
class Trimmer:
    """A trimmer-settings object a test can retune between calls (as a live agent's code may)."""

    max_tokens: object = None
    reserve_tokens: object = None
    safety_margin_ratio: object = 0.1


def expected(window: int, completion: int, tmax: object, res: object, ratio: float, fixed: int,
             summarizing: bool, r: float, threshold: int) -> tuple[int, int, int, int, int, int]:
    """docs/design.md §3.2 written out with fractions: (max_tokens, reserve, margin, hard, hint, ceiling)."""
    ok = isinstance(tmax, int) and not isinstance(tmax, bool) and tmax >= 1
    max_tokens = tmax if ok else window
    reserve = max(0, res) if isinstance(res, int) and not isinstance(res, bool) else completion
    ratio = SAFETY_MARGIN_RATIO(ratio)
    margin = math.ceil(max_tokens * Fraction(str(ratio)))
    hard = max(1, max_tokens - reserve - margin - fixed)
    rr = Fraction(str(HYSTERESIS_RATIO(r)))
    hint = max(1, math.floor(hard / (1 + rr))) if summarizing else hard
    if threshold > 0:
        hint = min(threshold, hint)
    ceiling = max(hint, math.floor(hint * (1 + rr))) if summarizing else hint
    return max_tokens, reserve, margin, hard, hint, ceiling  # type: ignore[return-value]


def test_the_budget_record_is_immutable() -> None:
    b = compute_budget(limits(), Trimmer(), fixed=10, tool_tokens=0, summarizing=False)
    assert isinstance(b, Budget)
    with pytest.raises(AttributeError):
        b.hint = 5  # type: ignore[misc]


def test_a_retuned_trimmer_is_read_on_the_next_call() -> None:
    """The remembered part is keyed by the settings' values, so retuning the same object between two
    calls changes the next budget (nothing stale is served)."""
    t = Trimmer(max_tokens=50_000, reserve_tokens=1_000, safety_margin_ratio=0.1)
    first = compute_budget(limits(), t, fixed=100, tool_tokens=0, summarizing=False)
    t.max_tokens, t.safety_margin_ratio = 20_000, 0.2
    second = compute_budget(limits(), t, fixed=100, tool_tokens=0, summarizing=False)
    assert (first.max_tokens, first.margin) == (50_000, 5_000)
    assert (second.max_tokens, second.margin, second.hard) == (20_000, 4_000, 20_000 - 1_000 - 4_000 - 100)


def test_true_is_not_the_integer_one_for_a_remembered_setting() -> None:
    """``max_tokens=True`` is no cap (a bool is not a token count) even right after ``max_tokens=1``,
    which equals it as a dictionary key: what is remembered is keyed by type as well as value."""
    one = compute_budget(limits(), Trimmer(max_tokens=1), fixed=0, tool_tokens=0, summarizing=False)
    true = compute_budget(limits(), Trimmer(max_tokens=True), fixed=0, tool_tokens=0, summarizing=False)
    assert (one.max_tokens, one.max_tokens_source) == (1, "trimmer")
    assert (true.max_tokens, true.max_tokens_source) == (100_000, "window")


def test_an_unhashable_setting_is_computed_not_remembered() -> None:
    t = Trimmer(safety_margin_ratio=[0.2])  # a custom trimmer's odd value: the default ratio applies
    b = compute_budget(limits(), t, fixed=0, tool_tokens=0, summarizing=False)
    assert b.safety_margin_ratio == 0.1 and b.margin == 10_000


@settings(max_examples=300, deadline=None)
@given(window=st.integers(1, 400_000), completion=st.integers(0, 50_000),
       tmax=st.one_of(st.none(), st.booleans(), st.integers(-5, 300_000)),
       res=st.one_of(st.none(), st.booleans(), st.integers(-100, 60_000)),
       ratio=st.sampled_from([0.0, 0.05, 0.1, 0.15, 0.2, 0.33, 0.5, 0.7]),
       fixed=st.integers(0, 200_000), summarizing=st.booleans(),
       r=st.sampled_from([0.0, 0.1, 0.15, 0.25, 1.0]), threshold=st.integers(0, 100_000))
def test_every_call_gets_the_from_scratch_numbers(window: int, completion: int, tmax: object, res: object,
                                                  ratio: float, fixed: int, summarizing: bool, r: float,
                                                  threshold: int) -> None:
    """Property: whatever was remembered from earlier examples (the same process, the same cache), each
    budget equals the formula computed from scratch with exact fractions."""
    b = compute_budget(limits(window, completion), Trimmer(tmax, res, ratio), fixed=fixed, tool_tokens=0,
                       summarizing=summarizing, hysteresis_ratio=r, summary_threshold=threshold)
    assert (b.max_tokens, b.reserve, b.margin, b.hard, b.hint, b.ceiling) == \
        expected(window, completion, tmax, res, ratio, fixed, summarizing, r, threshold)
    assert b.fixed == fixed and b.window == window
