"""Calibration: our token counts next to what the provider reported, per call, and a correction factor.

A transcript that records provider usage per call (``Transcript.usage``: OpenAI ``prompt_tokens``,
Anthropic ``input_tokens`` + cache tokens) tells how many input tokens the provider really counted
for the payload that produced each reply. For each such call we count the *same* payload with both
counters (``tiktoken`` and ``estimate``) and show the error. The payload is:

  * the request as logged, when the importer kept it (an :class:`ObservedPayload` whose ``reply``
    is the call's row: ``openai-log``), with its tools;
  * otherwise the transcript rows before the reply, from the last observed compaction on
    (``Transcript.compactions``: the framework had replaced everything before it), with the
    transcript's tools.

The per-model correction factor is ``Σ provider / Σ ours`` over the calls of that model: the
provider counts ``factor`` tokens for each of ours. The budget can apply it (opt-in:
``spec.models[].token_calibration`` in the manifest, ``--token-calibration MODEL=FACTOR`` on the
command line): the input ceiling, in our counter's units, becomes ``max_tokens / factor``.
Everything here is a pure function of the transcript; nothing is cached or global.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from inspector.engine.tokens import make_counter
from inspector.engine.types import Message
from inspector.errors import InspectorError

COUNTERS: tuple[str, ...] = ("tiktoken", "estimate")

CALL_COLUMNS: tuple[str, ...] = (
    "call", "index", "turn", "model", "provider_tokens", "cached_tokens",
    "tiktoken", "tiktoken_error", "tiktoken_error_pct", "estimate", "estimate_error", "estimate_error_pct",
    "messages", "payload",
)
"""Per call: the reply's row (``index``), the provider's input count (``provider_tokens``; of which
``cached_tokens`` were served from a prompt cache), our two counts of the same payload, their error
(ours − provider) and the error in % of the provider's count; ``payload`` says which payload was
counted (``request as logged`` or ``rows since …``)."""

FACTOR_COLUMNS: tuple[str, ...] = (
    "model", "calls", "provider_tokens", "tiktoken", "estimate", "factor_tiktoken", "factor_estimate",
    "mean_abs_error_pct_tiktoken", "mean_abs_error_pct_estimate",
    "slope_tiktoken", "offset_tiktoken", "slope_estimate", "offset_estimate",
    "median_provider_tokens", "factor_offered",
)
"""Per model: the totals, ``factor_<counter>`` = Σ provider ÷ Σ ours, the mean absolute error in %,
and the least-squares line provider ≈ ``offset`` + ``slope`` × ours over the calls (None with fewer
than two distinct counts). When the log leaves out a fixed part of every payload (Claude Code's
system prompt and tool schemas), ``offset`` estimates that part and ``slope`` is the per-token
correction; the factor lumps both together. ``median_provider_tokens`` is the provider's count at the
median call and ``factor_offered`` says whether the factor may be offered as a correction
(:func:`factor_offered`: not when the tiktoken offset is more than half of that median)."""


def provider_input_tokens(usage: Mapping[str, Any] | None) -> int | None:
    """Input tokens the provider counted, from one call's usage; None when it records none.

    OpenAI: ``prompt_tokens`` (cached tokens are already part of it). Anthropic: ``input_tokens``
    + ``cache_creation_input_tokens`` + ``cache_read_input_tokens`` (the three are disjoint)."""
    if not isinstance(usage, Mapping):
        return None

    def num(key: str) -> int | None:
        v = usage.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

    prompt = num("prompt_tokens")
    if prompt is not None:
        return prompt
    base = num("input_tokens")
    if base is None:
        return None
    return base + (num("cache_creation_input_tokens") or 0) + (num("cache_read_input_tokens") or 0)


def cached_input_tokens(usage: Mapping[str, Any] | None) -> int | None:
    """Input tokens served from the provider's prompt cache (OpenAI ``prompt_tokens_details.
    cached_tokens``, Anthropic ``cache_read_input_tokens``); None when not reported."""
    if not isinstance(usage, Mapping):
        return None
    details = usage.get("prompt_tokens_details")
    if isinstance(details, Mapping) and isinstance(details.get("cached_tokens"), int):
        return int(details["cached_tokens"])
    read = usage.get("cache_read_input_tokens")
    return int(read) if isinstance(read, int) and not isinstance(read, bool) else None


@dataclass(frozen=True)
class Calibration:
    """The calibration of one transcript: ``calls`` (columns :data:`CALL_COLUMNS`), ``factors``
    (one row per model, :data:`FACTOR_COLUMNS`) and ``notes`` on what the counts cannot include."""

    calls: pd.DataFrame
    factors: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    def factor(self, model: str | None = None, counter: str = "tiktoken") -> float | None:
        """The correction factor for ``model`` (the only model when None) and ``counter``; None when
        no single model matches or its factor is unknown. Raises :class:`ValueError` for an unknown counter."""
        if counter not in COUNTERS:
            raise ValueError(f"unknown counter {counter!r} (expected one of {', '.join(COUNTERS)})")
        rows = self.factors if model is None else self.factors[self.factors["model"] == model]
        if len(rows) != 1:
            return None
        value = rows.iloc[0][f"factor_{counter}"]
        return None if pd.isna(value) else float(value)


def _call_payload(transcript: Any, index: int, logged: Mapping[int, Any]) -> tuple[
        list[dict[str, Any]] | tuple[int, int], Any, str]:
    """The payload the provider counted for the reply at ``index``: the logged request's messages,
    or the transcript's rows ``(start, index)`` since the last observed compaction."""
    op = logged.get(index)
    if op is not None:
        return list(op.messages), op.tools, "request as logged"
    start = max((c.index for c in getattr(transcript, "compactions", None) or [] if c.index < index), default=0)
    where = f"rows {start}-{index - 1}" + (" (since the observed compaction)" if start else "")
    return (start, index), transcript.tools, where


class _Prefix:
    """Running unit sums of one counter over the transcript's rows, so the count of rows
    ``[start, index)`` is ``counter.total(units, n)`` — the counter's own :meth:`count` rule —
    without reading the rows again for every call (each row is measured once per counter)."""

    def __init__(self, counter: Any, msgs: Sequence[Message]) -> None:
        self.counter, self.msgs, self.sums = counter, msgs, [0]

    def count(self, start: int, index: int) -> int:
        sums, unit = self.sums, self.counter.unit
        while len(sums) <= index:
            sums.append(sums[-1] + unit(self.msgs[len(sums) - 1]))
        return int(self.counter.total(sums[index] - sums[start], index - start))


def calibrate(transcript: Any) -> Calibration:
    """Per call with provider usage: the provider's input count beside ours (see the module doc)."""
    msgs = transcript.messages
    usage: Mapping[int, Any] = getattr(transcript, "usage", None) or {}
    counters: dict[tuple[str, str | None], Any] = {}
    model_default = getattr(transcript, "model", None)
    by_reply = {op.reply: op for op in getattr(transcript, "observed_payloads", None) or []
                if getattr(op, "reply", None) is not None}
    rows: list[dict[str, Any]] = []
    prefixes: dict[tuple[str, str | None], _Prefix] = {}
    turn = 0
    last = 0
    for index in sorted(usage):
        turn += sum(1 for m in msgs[last:index] if m.get("role") == "user")
        last = index
        provider = provider_input_tokens(usage[index])
        if provider is None or not (0 <= index < len(msgs)) or msgs[index].get("role") != "assistant":
            continue
        payload, tools, where = _call_payload(transcript, index, by_reply)
        op = by_reply.get(index)
        model = (getattr(op, "model", None) if op is not None else None) or model_default
        row: dict[str, Any] = {"call": len(rows), "index": index, "turn": turn, "model": model,
                               "provider_tokens": provider, "cached_tokens": cached_input_tokens(usage[index])}
        for kind in COUNTERS:
            key = (kind, model if kind == "tiktoken" else None)
            if key not in counters:
                counters[key] = make_counter(kind, model)
            c = counters[key]
            if isinstance(payload, tuple):  # transcript rows: running sums (linear in the transcript)
                if key not in prefixes:
                    prefixes[key] = _Prefix(c, msgs)
                ours = prefixes[key].count(*payload) + c.count_tools(tools)
            else:
                ours = c.count(payload) + c.count_tools(tools)
            row[kind] = ours
            row[f"{kind}_error"] = ours - provider
            row[f"{kind}_error_pct"] = round(100.0 * (ours - provider) / provider, 2) if provider else None
        row.update(messages=payload[1] - payload[0] if isinstance(payload, tuple) else len(payload), payload=where)
        rows.append(row)
    calls = pd.DataFrame(rows, columns=list(CALL_COLUMNS))
    return Calibration(calls, correction_factors(calls), _notes(transcript, calls))


def correction_factors(calls: pd.DataFrame) -> pd.DataFrame:
    """One row per model: ``factor_<counter> = Σ provider / Σ ours`` (None when ours sums to 0)."""
    out: list[dict[str, Any]] = []
    models = list(dict.fromkeys(calls["model"].tolist())) if len(calls) else []
    for model in models:
        part = calls[calls["model"].isna()] if model is None or (isinstance(model, float) and pd.isna(model)) \
            else calls[calls["model"] == model]
        provider = int(part["provider_tokens"].sum())
        row: dict[str, Any] = {"model": model, "calls": len(part), "provider_tokens": provider}
        for kind in COUNTERS:
            ours = int(part[kind].sum())
            row[kind] = ours
            row[f"factor_{kind}"] = round(provider / ours, 4) if ours else None
            pct = part[f"{kind}_error_pct"].dropna().abs()
            row[f"mean_abs_error_pct_{kind}"] = round(float(pct.mean()), 2) if len(pct) else None
        for kind in COUNTERS:
            slope, offset = _line(part[kind].tolist(), part["provider_tokens"].tolist())
            row[f"slope_{kind}"], row[f"offset_{kind}"] = slope, offset
        median = float(part["provider_tokens"].median())
        row["median_provider_tokens"] = median
        row["factor_offered"] = factor_offered(row, "tiktoken", median)
        out.append(row)
    return pd.DataFrame(out, columns=list(FACTOR_COLUMNS))


def _line(xs: list[Any], ys: list[Any]) -> tuple[float | None, int | None]:
    """Least squares ``y ≈ offset + slope·x`` (exact arithmetic on integer counts); (None, None) when
    the x values do not vary."""
    from fractions import Fraction

    n = len(xs)
    if n < 2 or len(set(xs)) < 2:
        return None, None
    mx, my = Fraction(sum(xs), n), Fraction(sum(ys), n)
    sxx = sum((Fraction(x) - mx) ** 2 for x in xs)
    sxy = sum((Fraction(x) - mx) * (Fraction(y) - my) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    return round(float(slope), 4), round(my - slope * mx)


def _notes(transcript: Any, calls: pd.DataFrame) -> list[str]:
    notes: list[str] = []
    missing = (getattr(transcript, "meta", None) or {}).get("not_recorded")
    if missing:
        notes.append(f"This log does not record the {' or the '.join(missing)}; the provider's count includes "
                     "them and ours cannot, so the factor also absorbs them. The fitted line separates the "
                     "two: offset ≈ what the log leaves out, slope = the per-token correction to apply.")
    if len(calls) == 0:
        notes.append("The transcript records no provider usage per call: nothing to calibrate against.")
    if getattr(transcript, "compactions", None):
        notes.append(f"{len(transcript.compactions)} compaction(s) by the source framework were observed; calls "
                     "after one are counted from the compaction summary on.")
    return notes



def factor_offered(row: Mapping[str, Any], counter: str = "tiktoken", median_provider: float | None = None) -> bool:
    """Whether the per-model factor (Σ provider ÷ Σ ours) may be offered as a correction for one
    :data:`FACTOR_COLUMNS` row: not when the fitted offset is more than half of the provider's count
    at the median call (``median_provider``). Then most of what the provider counted is a fixed part
    the log does not show (Claude Code's system prompt and tool schemas) and the factor would scale
    every recorded token by it; the slope is the per-token correction and the offset the unrecorded
    prefix. With no fitted line (fewer than two distinct counts) the factor is all there is."""
    offset = row.get(f"offset_{counter}")
    if offset is None or (isinstance(offset, float) and offset != offset) or median_provider is None:
        return True
    return not 2 * float(offset) > float(median_provider)


def median_provider_tokens(calls: pd.DataFrame, model: Any) -> float | None:
    """The provider's input count at the median call of ``model`` (None: no call)."""
    part = calls[calls["model"].isna()] if model is None or (isinstance(model, float) and pd.isna(model)) \
        else calls[calls["model"] == model]
    return None if part.empty else float(part["provider_tokens"].median())


@dataclass(frozen=True)
class PrefixEstimate:
    """The unrecorded prefix of a transcript: what the log does not record (``missing``, e.g.
    ``["system prompt", "tool schemas"]``; empty when the log records everything) and, from the
    recorded usage, the fitted offset of provider ≈ offset + slope × ours (``tokens``; None when no
    line could be fitted), with the slope and the number of calls it rests on."""

    missing: tuple[str, ...]
    tokens: int | None
    slope: float | None
    calls: int
    counter: str


def estimate_prefix(transcript: Any, counter: str = "tiktoken", cal: Calibration | None = None) -> PrefixEstimate:
    """The unrecorded prefix of ``transcript`` (``meta["not_recorded"]``, set by the importers of logs
    that leave out the system prompt and tool schemas), estimated as the fitted offset of its
    calibration for ``counter`` (the first model with a fitted line; never below 0)."""
    if counter not in COUNTERS:
        counter = "tiktoken"
    missing = tuple((getattr(transcript, "meta", None) or {}).get("not_recorded") or ())
    cal = cal if cal is not None else calibrate(transcript)
    for _, row in cal.factors.iterrows():
        offset = row[f"offset_{counter}"]
        if offset is not None and not pd.isna(offset):
            return PrefixEstimate(missing, max(0, int(offset)), float(row[f"slope_{counter}"]), int(row["calls"]),
                                  counter)
    return PrefixEstimate(missing, None, None, len(cal.calls), counter)


class PrefixError(InspectorError, ValueError):
    """``--unrecorded-prefix auto`` on a transcript whose usage fits no line, or a value that is neither
    ``auto`` nor a whole number of tokens ≥ 0."""


def resolve_prefix(value: Any, transcript: Any, counter: str = "tiktoken") -> tuple[int, str | None]:
    """``(tokens, source)`` of an unrecorded prefix the user adds to the budget: ``"auto"`` = the fitted
    offset (:func:`estimate_prefix`), an int (or its text) = that many provider tokens, None/0 = none.
    Raises :class:`PrefixError` when ``"auto"`` finds no fit (too little recorded usage) or the value
    is neither ``"auto"`` nor a whole number ≥ 0."""
    if value is None:
        return 0, None
    if isinstance(value, str) and value.strip().lower() == "auto":
        est = estimate_prefix(transcript, counter)
        if est.tokens is None:
            raise PrefixError("--unrecorded-prefix auto: the transcript's recorded usage fits no line (it needs "
                              "provider usage on at least two calls of different sizes); give a number instead")
        return est.tokens, f"estimated: fitted offset of {est.calls} call(s) of recorded usage ({est.counter})"
    try:
        n = int(value) if not isinstance(value, bool) else -1
    except (TypeError, ValueError):
        n = -1
    if n < 0:
        raise PrefixError(f"unrecorded prefix {value!r} must be 'auto' or a whole number of tokens ≥ 0")
    return n, ("given" if n else None)


def advice(cal: Calibration, counter: str = "tiktoken") -> list[str]:
    """What to apply, per model, in words (the one source for every face): the fitted line first,
    then either the factor or — when :func:`factor_offered` says no — the slope as the per-token
    correction and the offset as the unrecorded prefix."""
    out: list[str] = []
    for _, r in cal.factors.iterrows():
        model, factor = r["model"], r[f"factor_{counter}"]
        slope, offset = r[f"slope_{counter}"], r[f"offset_{counter}"]
        fitted = not (slope is None or offset is None or pd.isna(slope) or pd.isna(offset))
        head = (f"{model}: fitted line provider ≈ {int(offset):,} + {slope} × ours ({counter}, {int(r['calls'])} "
                f"calls)" if fitted else f"{model}: no line fitted ({int(r['calls'])} call(s) of one size)")
        median = r["median_provider_tokens"]
        if factor_offered(r, counter, None if pd.isna(median) else float(median)):
            tail = (f"; correction factor ×{factor} (provider tokens per one of ours): apply it with "
                    f"--token-calibration {model}={factor} or spec.models[].token_calibration.{counter}")
        else:
            tail = (f". Do not apply the factor ×{factor}: the offset {int(offset):,} is more than half of the "
                    f"provider's count at the median call ({int(median):,}), so most of each call is a fixed part "
                    f"the log does not show. Apply the slope (--token-calibration {model}={slope}) and add the offset "
                    f"as the unrecorded prefix (--unrecorded-prefix auto, or {max(0, int(offset))})")
        out.append(head + tail + ".")
    return out
