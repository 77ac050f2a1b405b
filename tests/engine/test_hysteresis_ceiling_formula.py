"""Regression: the hysteresis ceiling was computed twice and the two disagreed by one.

Bug class: one rule, two formulas. ``Budget.ceiling`` used exact fractions and the summarising
manager a float product, so for ``r = 0.15, hint = 100`` one said 115 and the other 114. Both now
call :func:`inspector.engine.budget.hysteresis_ceiling`; this checks them against the exact
definition ``floor(hint × (1 + r))`` over many ratios and hints.
"""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from inspector.engine.budget import compute_budget, hysteresis_ceiling
from inspector.engine.limits import ModelLimits
from inspector.engine.managers.summarising import SummarizingConversation
from inspector.manifest import TrimmerSettings


def manager_ceiling(hint: int, ratio: float) -> int:
    cm = SummarizingConversation(keep_turns=1, hysteresis_ratio=ratio)
    past = [{"role": "user", "content": "x" * (8 * hint)}, {"role": "assistant", "content": "y"},
            {"role": "user", "content": "z"}]
    cm.manage_history(past, hint)
    assert cm.last_decision is not None and cm.last_decision.ceiling is not None
    return cm.last_decision.ceiling


def budget_for_hint(hint: int, ratio: float) -> int:
    """A budget whose hint is exactly ``hint`` (summary_threshold caps it) and its ceiling."""
    limits = ModelLimits("m", "m", 10**7, "manifest", 0, "manifest", None, None, None)
    b = compute_budget(limits, TrimmerSettings(None, 0, 0.0), fixed=0, tool_tokens=0, summarizing=True,
                       hysteresis_ratio=ratio, summary_threshold=hint)
    assert b.hint == hint
    return b.ceiling


def test_the_reported_case_agrees_at_115() -> None:
    assert hysteresis_ceiling(100, 0.15) == 115
    assert manager_ceiling(100, 0.15) == budget_for_hint(100, 0.15) == 115


@given(hint=st.integers(1, 100_000), cents=st.integers(0, 100))
def test_manager_and_budget_ceilings_equal_the_exact_formula(hint: int, cents: int) -> None:
    ratio = cents / 100
    exact = max(hint, math.floor(hint * (1 + Fraction(cents, 100))))
    assert manager_ceiling(hint, ratio) == budget_for_hint(hint, ratio) == exact
