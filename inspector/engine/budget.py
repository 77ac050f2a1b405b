"""The per-call token budget (docs/design.md §3.2): trimmer cap, reserve, margin, fixed parts, hard budget, hint.

The summarising manager gets ``hard / (1 + r)`` as its hint so that its hysteresis ceiling
``hint × (1 + r)`` lands back on the hard budget: a reused summary never pushes the request past
the safety-bounded limit. All three binding forms (omitted, string, object) are normalised before
this runs, so they get the same hint (docs/design.md Q5). Division is exact (no float rounding surprises).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any, NamedTuple

from inspector.engine.limits import ModelLimits
from inspector.errors import InspectorError
from inspector.params import HYSTERESIS_RATIO, SAFETY_MARGIN_RATIO, SUMMARIZING, TRIMMER, Clamp


class Budget(NamedTuple):
    """One call's budget, as the engine computed it (every face shows these numbers, never its own).

    Immutable: a face reads it, never changes it."""

    window: int
    window_source: str
    max_tokens: int  # trimmer cap (input ceiling)
    max_tokens_source: str  # "trimmer" | "window"
    reserve: int
    reserve_source: str
    margin: int
    safety_margin_ratio: float
    tool_tokens: int
    fixed: int  # system band + current user + working memory + tool schemas
    hard: int
    hint: int
    ceiling: int  # hysteresis ceiling (= hint for non-summarising managers)
    calibration: float | None = None  # provider tokens per one of ours, when a correction is in force
    calibration_source: str | None = None  # where that factor was set
    prefix: int = 0  # unrecorded prefix (provider tokens) taken off the input ceiling, a fixed part of every call
    prefix_source: str | None = None  # where that prefix was set (e.g. "estimated: fitted offset …")

    @property
    def trimmer_reserve(self) -> int:
        """What the trimmer holds back from ``max_tokens``: the completion reserve plus the safety margin."""
        return self.reserve + self.margin


_new_tuple = tuple.__new__
"""Builds a :class:`Budget` from its fields in order, all of them given (:func:`compute_budget`)."""


@lru_cache(maxsize=256)
def _exact(text: str) -> tuple[int, int]:
    """A ratio read exactly through its decimal text, as ``(numerator, denominator)`` (parsed once
    per distinct value: a replay asks for the same few ratios on every call, and integer floor and
    ceiling divisions on the pair are exact without building a Fraction per call)."""
    f = Fraction(text)
    return f.numerator, f.denominator


@lru_cache(maxsize=256)
def _unit_ratio(ratio: float) -> tuple[int, int]:
    """``r`` clamped into :data:`~inspector.params.HYSTERESIS_RATIO`, exactly, through its decimal
    text (0.15 means 15/100). Remembered per value: every call's budget asks for it twice."""
    return _exact(str(HYSTERESIS_RATIO(float(ratio))))


def hysteresis_ceiling(hint: int, ratio: float) -> int:
    """The hysteresis ceiling ``floor(hint × (1 + r))``, never below ``hint``, computed exactly.

    The one formula for the ceiling: the budget record and the summarising manager both call it, so
    they never disagree (a float product gives 114 for ``hint=100, r=0.15``; the exact one 115).
    ``r`` is clamped into :data:`~inspector.params.HYSTERESIS_RATIO` and read through its decimal
    text (0.15 means 15/100)."""
    p, q = _unit_ratio(ratio)
    return max(hint, hint * (q + p) // q)


def clamp_ratio(value: Any, default: float = TRIMMER.safety_margin_ratio, clamp: Clamp = SAFETY_MARGIN_RATIO) -> float:
    """``value`` as a ratio inside ``clamp`` (the trimmer's safety margin by default); ``default``
    when it is no number or NaN."""
    try:
        r = float(value)
    except (TypeError, ValueError):
        return default
    if r != r:  # NaN
        return default
    return clamp(r)


class CalibrationError(InspectorError, ValueError):
    """A token calibration that names no model of the replay, or a factor that is not a positive number."""


def resolve_calibration(primary: Any, limits: ModelLimits, counter: str,
                        override: Mapping[str, float] | None = None) -> tuple[float | None, str | None]:
    """The correction factor in force for this engine and where it was set, or ``(None, None)``.

    ``override`` (``{model: factor}``, e.g. from ``--token-calibration``) wins and must name the
    primary model as written or as mapped; naming another model is an error, never a no-op. Otherwise
    the primary ``spec.models[]`` row's ``token_calibration`` gives the factor for ``counter``.
    """
    if override:
        for model, factor in override.items():
            if model not in (limits.model, limits.effective_model):
                known = " / ".join(dict.fromkeys(str(m) for m in (limits.model, limits.effective_model)))
                raise CalibrationError(f"token calibration names model {model!r}, but this replay's model is {known}")
            if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) \
                    or factor <= 0:
                raise CalibrationError(f"token calibration for {model!r} must be a positive number, got {factor!r}")
            return float(factor), f"command line ({model}, {counter} counter)"
    extra = getattr(primary, "extra", None) or {}
    table = extra.get("token_calibration") if isinstance(extra, Mapping) else None
    if isinstance(table, Mapping):
        value = table.get(counter)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
            row = getattr(primary, "id", "main")
            return float(value), f"manifest (spec.models[{row}].token_calibration.{counter})"
    return None, None


@lru_cache(maxsize=64, typed=True)
def _call_independent(window: int, window_source: str, completion: int, completion_source: str, tmax: Any, res: Any,
                      ratio_value: Any, calibration: float | None, prefix: int = 0) -> tuple[int, str, int, str, int, float]:
    """The part of a budget no call changes: ``(max_tokens, its source, reserve, its source, margin,
    safety ratio)`` from the window, the trimmer settings, the calibration and the unrecorded prefix.
    Remembered per distinct input (``typed``: ``True`` is not the integer 1 here), because every call
    of a replay asks with the same inputs and only ``fixed`` moves.

    The unrecorded prefix (provider tokens the transcript never shows, sent on every call) is a fixed
    part of every call: it comes off the ceiling before the calibration converts it into our units,
    ``max_tokens = floor((ceiling − prefix) / calibration)``; the safety margin stays the ratio of the
    ceiling without it (the prefix does not shrink the margin)."""
    if isinstance(tmax, int) and not isinstance(tmax, bool) and tmax >= 1:
        max_tokens, max_src = tmax, "trimmer"
    else:
        max_tokens, max_src = window, "window"
    full = max_tokens
    if prefix > 0:
        max_tokens = max(1, max_tokens - prefix)
    if calibration is not None:
        cp, cq = _exact(str(calibration))
        max_tokens = max(1, max_tokens * cq // cp)
        full = max(1, full * cq // cp)
    if isinstance(res, int) and not isinstance(res, bool):
        reserve, reserve_src = max(0, res), "trimmer"
    else:
        reserve, reserve_src = completion, completion_source
    ratio = clamp_ratio(ratio_value)
    mp, mq = _exact(str(ratio))
    margin = -(-full * mp // mq)  # ceil, exactly
    return max_tokens, max_src, reserve, reserve_src, margin, ratio


def compute_budget(limits: ModelLimits, trimmer: Any, *, fixed: int, tool_tokens: int,
                   summarizing: bool, hysteresis_ratio: float = SUMMARIZING.hysteresis_ratio,
                   summary_threshold: int = SUMMARIZING.summary_threshold,
                   calibration: float | None = None, calibration_source: str | None = None) -> Budget:
    """``trimmer`` is a TrimmerSettings (max_tokens, reserve_tokens, safety_margin_ratio).

    ``calibration`` (provider tokens per one of ours) converts the input ceiling into our counter's
    units: ``max_tokens = floor(ceiling / calibration)``; everything else follows from it as usual.
    ``limits.prefix`` (an unrecorded prefix the user added) comes off the ceiling first (see
    :func:`_call_independent`), so the trimmer's budget, the hard budget and the headroom all leave
    room for it.
    The settings are read on every call (a test may retune them); what follows from them alone is
    computed once per distinct value, the rest (``fixed`` and what depends on it) per call."""
    try:  # a TrimmerSettings has all three; another trimmer object may lack some (the defaults below)
        trim = (trimmer.max_tokens, trimmer.reserve_tokens, trimmer.safety_margin_ratio)
    except AttributeError:
        trim = (getattr(trimmer, "max_tokens", None), getattr(trimmer, "reserve_tokens", None),
                getattr(trimmer, "safety_margin_ratio", TRIMMER.safety_margin_ratio))
    prefix = getattr(limits, "prefix", 0) or 0  # ModelLimits.prefix: the unrecorded prefix added to the budget
    key = (limits.window, limits.window_source, limits.completion, limits.completion_source, *trim, calibration, prefix)
    try:
        max_tokens, max_src, reserve, reserve_src, margin, ratio = _call_independent(*key)
    except TypeError:  # an unhashable setting (a custom trimmer object's own value): computed, not remembered
        max_tokens, max_src, reserve, reserve_src, margin, ratio = _call_independent.__wrapped__(*key)
    hard = max_tokens - reserve - margin - fixed
    if hard < 1:
        hard = 1
    if summarizing:
        rp, rq = _unit_ratio(hysteresis_ratio)
        hint = hard * rq // (rq + rp) or 1  # floor(hard / (1 + r)), exactly, at least 1
    else:
        hint = hard
    # a threshold is an int, not a bool, above 0 (the exact type first: the usual value costs no isinstance)
    st = summary_threshold
    if (type(st) is int or (isinstance(st, int) and not isinstance(st, bool))) and 0 < st < hint:
        hint = st
    ceiling = hysteresis_ceiling(hint, hysteresis_ratio) if summarizing else hint  # the one formula
    # every field given, in order
    return _new_tuple(Budget, (limits.window, limits.window_source, max_tokens, max_src, reserve, reserve_src, margin,
                               ratio, tool_tokens, fixed, hard, hint, ceiling, calibration,
                               calibration_source if calibration else None, prefix,
                               getattr(limits, "prefix_source", None) if prefix else None))
