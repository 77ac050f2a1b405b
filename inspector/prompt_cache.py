"""Prompt caching over a replay: what the provider's cache would serve on each call, and what it costs.

:func:`account` follows a :class:`~inspector.replay.Replay`'s calls in order through the cache rule
of its model (:func:`inspector.engine.cache.rule_for_model`, or a rule named by the caller) and
prices each call with and without caching (:func:`inspector.engine.cache.prices_for_model`).

The rows a provider sees, in order: one **head** row (the tool schemas, plus the unrecorded prefix
when the replay adds it to the budget), then the payload's rows as the frame records them (its
system row first). A payload row is known by its transcript index, or, for a row the engine made
(a summary, a rebound copy), by its index and content. The rows two consecutive calls share, and
the tokens of any leading rows, are read from the frames' segment runs and running sums of the
counter's units over the transcript, so a call costs in proportion to its runs, not its rows (a
sliding window changes every row after the system row on every shift). The tokens of the first
rows are the replay counter's count of them (so a call's rows add up to its frame's
``payload_tokens``, whatever the counter's rounding).

A **cache break** is a call whose changed rows cut a cached prefix that was still alive (a
compaction, a trim, a sliding window). Its cost is counted on the rows of this call that the
previous call's payload held past the break: the cache would have read them had the prefix been
kept; this call pays them at the write or input rate instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from inspector.engine.cache import (
    RULE_NAMES,
    CachePrices,
    CacheRule,
    NO_CACHE,
    CacheRuleError,
    CallCache,
    PromptCache,
    prices_for_model,
    round10,
    rule_for_model,
)
from inspector.prompt_cache_rows import CallRows, RowUnits, resent_tokens, shared_rows
from inspector.vocabulary import CACHE_WORDS

__all__ = ["CACHE_COLUMNS", "CACHE_RULE_CHOICES", "CALL_CACHE_COLUMNS", "NO_CACHE_RULE", "TOTALS_CACHE_COLUMNS",
           "CacheAccount",
           "CallCacheCost", "RuleChoice", "account",
           "add_cache_to_document", "cache_calibration", "cache_frame_rows", "cache_line", "cache_metrics",
           "recorded_cache",
           "cache_totals_words", "replay_cache", "rule_choice"]

NO_CACHE_RULE = NO_CACHE.name
"""The name of the rule under which nothing is cached (``none``): a run, a table row or an account under it
has no prompt caching, and the faces say so instead of cache hits, breaks and a cost "with caching"."""


class CallCacheCost(NamedTuple):
    """One call's cache record and its price (immutable: a :class:`~typing.NamedTuple`, built once per
    call of every replay's account).

    ``frame``: the index of the call in :attr:`Replay.frames <inspector.replay.Replay.frames>`;
    ``pending``: whether it is the pending next call, never made. ``cache``: the provider's
    :class:`~inspector.engine.cache.CallCache` (cached, written, uncached, ``broke_at`` counted in
    rows with the head row as row 0). ``cost_usd``: the input's cost with caching;
    ``uncached_cost_usd``: without caching; each None when a price it needs is unknown
    (``missing_prices`` names the litellm fields). ``resent``: at a cache break, the tokens of this
    call's rows past the break that the previous call sent too (0 otherwise); ``break_cost_usd``:
    what they cost this call above the cache-read rate, i.e. what the break cost versus keeping
    the prefix (0.0 without a break, None when a price is unknown)."""

    frame: int
    pending: bool
    cache: CallCache
    cost_usd: float | None
    uncached_cost_usd: float | None
    resent: int
    break_cost_usd: float | None
    missing_prices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CacheAccount:
    """The prompt-cache accounting of one replay: the ``rule`` and ``prices`` used and one
    :class:`CallCacheCost` per frame (``calls``, in frame order)."""

    rule: CacheRule
    prices: CachePrices
    calls: tuple[CallCacheCost, ...]

    def totals(self, *, include_pending: bool = False) -> dict[str, Any]:
        """Sums over the calls the agent made (the pending next call only with ``include_pending``):
        input, cached, written and uncached tokens, the cache-hit share (cached ÷ input), the costs
        with and without caching and of the breaks (None when a price is unknown for any call), the
        number of breaks, and the litellm price fields that were missing. The keys of the costs,
        share and breaks are the codes of :data:`inspector.vocabulary.CACHE_WORDS`."""
        calls = [c for c in self.calls if include_pending or not c.pending]
        # the records' fields as columns, transposed in one C call (each column then summed in C)
        _frames, _pending, caches, with_cache, without, resent, break_cost, missing = list(zip(*calls)) or [()] * 8
        inp, cached, written, uncached, broke_at, _lost = list(zip(*caches)) or [()] * 6
        tokens = {"input": sum(inp), "cached": sum(cached), "written": sum(written), "uncached": sum(uncached)}
        return {
            "calls": len(calls), **tokens,
            "cache_hit_share": round(tokens["cached"] / tokens["input"], 4) if tokens["input"] else 0.0,
            "cost_with_caching_usd": _sum(with_cache),
            "cost_without_caching_usd": _sum(without),
            "cache_breaks": len(broke_at) - broke_at.count(None),
            "resent": sum(resent),
            "cache_break_cost_usd": _sum(break_cost),
            "missing_prices": sorted(set().union(*missing)),
            "rule": self.rule.name, "rule_source": self.rule.source,
        }


def _sum(values: Sequence[float | None]) -> float | None:
    return None if None in values else round(sum(values), 8)  # type: ignore[arg-type]


def _break_cost(prices: CachePrices, written: int, uncached: int) -> float | None:
    if (written or uncached) and (prices.read is None or (written and prices.write is None)
                                  or (uncached and prices.input is None)):
        return None
    read = prices.read or 0.0
    return round10(written * ((prices.write or 0.0) - read) + uncached * ((prices.input or 0.0) - read))


def _break_coster(prices: CachePrices) -> Callable[[int, int], float | None]:
    """:func:`_break_cost` under ``prices``, its rates above the read rate found once when the read and
    input prices are known (the same sums, in the same order; no write price: None once a call wrote)."""
    read, write, inp = prices.read, prices.write, prices.input
    if read is None or inp is None:
        return functools.partial(_break_cost, prices)
    above_w, above_i = (write or 0.0) - read, inp - read
    if write is None:  # (OpenAI's rule writes nothing, so its breaks are priced here)
        return lambda written, uncached: None if written else round10(written * above_w + uncached * above_i)
    return lambda written, uncached: round10(written * above_w + uncached * above_i)


def account(rp: Any, *, rule: str | None = None, times: Mapping[int, float] | None = None) -> CacheAccount:
    """The prompt-cache accounting of replay ``rp`` (:class:`~inspector.replay.Replay`).

    ``rule``: a cache rule name (:data:`inspector.engine.cache.RULE_NAMES`) instead of the one the
    model's provider implies. ``times``: each transcript row's time in seconds (transcript index →
    seconds), for the entries' lifetime; a call happens at its reply's time. Default: the
    transcript's ``meta["timestamps"]`` when it has one, else no times (entries never expire).
    Raises :class:`~inspector.engine.cache.CacheRuleError` for an unknown rule name."""
    model = rp.limits.get("effective_model") or rp.limits.get("model")
    cache_rule = rule_for_model(model, rule)
    prices = prices_for_model(model)
    if rp.limits.get("input_cost_per_token") is not None:  # the replay's own input price (infra may set it)
        prices = CachePrices(float(rp.limits["input_cost_per_token"]), prices.read, prices.write, prices.source)
    if times is None:
        found = (getattr(rp.transcript, "meta", None) or {}).get("timestamps")
        times = found if isinstance(found, Mapping) else {}
    units = RowUnits(_counter(rp), rp.messages)
    if rp.frames:  # the rows before the last call's reply, summed in one pass (not a few rows a call)
        units.extend(rp.frames[-1].at)
    prefix = int(rp.limits.get("unrecorded_prefix") or 0)
    cache = PromptCache(cache_rule, _head_rows(rp.frames[0]) if rp.frames else 1)
    pending = rp.pending_call
    calls: list[CallCacheCost] = []
    prev: CallRows | None = None
    no_break, break_cost_of = _break_cost(prices, 0, 0), _break_coster(prices)
    get_time = times.get if times else None
    call_prefix, costs, append = cache.call_prefix, prices.costs, calls.append
    new_cost = tuple.__new__  # CallCacheCost(*fields) without the named tuple's Python-level __new__
    for i, frame in enumerate(rp.frames):
        cur = CallRows(prefix + frame.bands.get("tool_schemas", 0), frame.segments, units)
        kept = 0 if prev is None or prev.head != cur.head else 1 + shared_rows(prev, cur)
        call = call_prefix(kept, 1 + cur.rows, cur.tokens_upto, None if get_time is None else get_time(frame.at))
        if call.broke_at is not None and prev is not None:
            written, uncached = resent_tokens(call, cur, prev)
            resent, break_cost = written + uncached, break_cost_of(written, uncached)
        else:
            resent, break_cost = 0, no_break
        with_cache, without_cache, missing = costs(call)
        append(new_cost(CallCacheCost, (i, i == pending, call, with_cache, without_cache, resent, break_cost, missing)))
        prev = cur
    return CacheAccount(cache_rule, prices, tuple(calls))


def _head_rows(frame: Any) -> int:
    """The head row plus the frame's leading system rows: where the head breakpoint goes."""
    n = 1
    for _ref, count, band, _syn, _own in frame.segments:
        if band != "system":
            break
        n += count
    return n


def _counter(rp: Any) -> Any:
    """The replay's own counter (its per-message cache is reused), or a fresh one of the same kind."""
    if rp.token_counter is not None:
        return rp.token_counter
    from inspector.engine.tokens import make_counter

    return make_counter(rp.counter, rp.limits.get("effective_model"))


# --- the rule in force, and the account every face reads -------------------------------------------

CACHE_RULE_CHOICES: tuple[str, ...] = ("auto", *RULE_NAMES)
"""What ``--cache-rule`` and a manifest's ``spec.models[].prompt_cache`` accept: ``auto`` (the rule
the model's provider implies, :func:`~inspector.engine.cache.rule_for_model`) or a rule name."""


@dataclass(frozen=True, slots=True)
class RuleChoice:
    """Which cache rule a replay is accounted under: ``name``, a rule name, or None for the one the
    model's provider implies; ``why``, where that was set, in words."""

    name: str | None
    why: str


def _choice(value: Any, why: str) -> RuleChoice:
    if value not in CACHE_RULE_CHOICES:
        raise CacheRuleError(f"unknown cache rule {value!r}: expected one of {', '.join(CACHE_RULE_CHOICES)}")
    return RuleChoice(None if value == "auto" else str(value), why)


def rule_choice(rp: Any, option: str | None = None) -> RuleChoice:
    """The cache rule chosen for replay ``rp``: ``option`` (the command line's ``--cache-rule``) when
    given, else the primary ``spec.models[]`` row's ``prompt_cache`` in the manifest, else ``auto``
    (by the model's provider). Raises :class:`~inspector.engine.cache.CacheRuleError` when the value
    is not one of :data:`CACHE_RULE_CHOICES`."""
    if option is not None:
        return _choice(option, f"set by --cache-rule {option}")
    settings = getattr(rp, "settings", None)
    primary = settings.primary_model() if settings is not None else None
    if primary is not None and (primary.extra or {}).get("prompt_cache") is not None:
        value = primary.extra["prompt_cache"]
        return _choice(value, f"set in the manifest: spec.models[{primary.id}].prompt_cache {value}")
    return RuleChoice(None, "auto: by the model's provider")


def replay_cache(rp: Any, option: str | None = None) -> CacheAccount:
    """The :func:`account` of replay ``rp`` under the rule :func:`rule_choice` picks, made once per
    replay and rule and kept as one of the replay's views, so every face of one replay reads the
    same account. Raises :class:`~inspector.engine.cache.CacheRuleError` for an unknown rule name."""
    choice = rule_choice(rp, option)
    made: CacheAccount = rp.view(f"prompt_cache:{choice.name or 'auto'}", lambda: account(rp, rule=choice.name))
    return made


def cache_line(rp: Any, option: str | None = None) -> str:
    """The policy line every face prints above a replay: the cache rule in force and why
    (``prompt cache: rule openai (auto: by the model's provider; litellm entry gpt-4o: ...)``)."""
    return f"prompt cache: rule {replay_cache(rp, option).rule.name} ({_rule_why(rp, option)})"


def _rule_why(rp: Any, option: str | None) -> str:
    """Why the rule in force applies: where it was chosen (:func:`rule_choice`), and for ``auto``
    the rule's own source (the model's litellm entry and provider, or that there is none)."""
    choice = rule_choice(rp, option)
    return choice.why if choice.name is not None else f"{choice.why}; {replay_cache(rp, option).rule.source}"


# --- what the faces show -----------------------------------------------------------------------------

def add_cache_to_document(doc: dict[str, Any], rp: Any, option: str | None = None) -> dict[str, Any]:
    """Put the prompt cache into replay JSON ``doc`` (made from ``rp``): a ``cache`` object on every
    frame (rule, cached, written, uncached, broke_at, lost, cost_with_caching_usd,
    cost_without_caching_usd, cache_break_cost_usd, resent) and ``totals.cache`` (:meth:`CacheAccount.totals` and the rule's
    ``rule_choice`` in words). Every other key keeps its place. Returns ``doc``."""
    acct = replay_cache(rp, option)
    rule = acct.rule.name
    # each record unpacked in C (a document writes thousands): the object's keys in the order above
    for frame, (_i, _pending, call, cost, uncached_cost, resent, break_cost, _missing) in zip(
            doc["frames"], acct.calls, strict=True):
        _input, cached, written, uncached, broke_at, lost = call
        frame["cache"] = {"rule": rule, "cached": cached, "written": written, "uncached": uncached,
                          "broke_at": broke_at, "lost": lost, "cost_with_caching_usd": cost,
                          "cost_without_caching_usd": uncached_cost, "cache_break_cost_usd": break_cost,
                          "resent": resent}
    doc["totals"]["cache"] = {**acct.totals(), "rule_choice": rule_choice(rp, option).why}
    return doc


def cache_frame_rows(rp: Any, option: str | None = None) -> list[dict[str, Any]]:
    """Per frame, the :data:`CALL_CACHE_COLUMNS` of the replay's CSV and table: ``cache_rule``,
    ``cached_tokens``, ``cache_written_tokens``, ``uncached_tokens``, ``cache_broke_at``,
    ``cache_break_cost_usd`` and ``cost_with_caching_usd`` (the call's input cost with caching; None
    without a price)."""
    acct = replay_cache(rp, option)
    return [{"cache_rule": acct.rule.name, "cached_tokens": c.cache.cached, "cache_written_tokens": c.cache.written,
             "uncached_tokens": c.cache.uncached, "cache_broke_at": c.cache.broke_at,
             "cache_break_cost_usd": c.break_cost_usd, "cost_with_caching_usd": c.cost_usd} for c in acct.calls]


def _money(value: float | None) -> str:
    return "no price" if value is None else f"${value:,.4f}"


def cache_totals_words(rp: Any, option: str | None = None) -> str:
    """The line under a replay's table: the input cost of the calls the agent made with prompt
    caching and without it, the share of input tokens read from the cache and the cache breaks.
    Under the rule ``none`` nothing is cached: the cost without prompt caching, once, and why no
    rule applies (``without prompt caching (rule none: ...): the 2 calls' input costs $0.0065``)."""
    t = replay_cache(rp, option).totals()
    with_caching, without = t["cost_with_caching_usd"], t["cost_without_caching_usd"]
    calls = "the one call's" if t["calls"] == 1 else f"the {t['calls']:,} calls'"
    if t["rule"] == NO_CACHE_RULE:  # no share read from cache, no breaks, and both costs are the same
        cost = "has no price" if without is None else f"costs {_money(without)}"
        words = f"without prompt caching (rule none: {_rule_why(rp, option)}): {calls} input {cost}"
        if t["missing_prices"]:
            words += f" (the model map lacks {', '.join(t['missing_prices'])})"
        return words
    cost = "has no price" if with_caching is None and without is None else \
        f"costs {_money(with_caching)}, {_money(without)} without caching"
    words = (f"with prompt caching (rule {t['rule']}): {calls} input {cost}; "
             f"{t['cached']:,} of {t['input']:,} input tokens ({100 * t['cache_hit_share']:.0f} %) read from the cache")
    if t["cache_breaks"]:
        words += (f"; {t['cache_breaks']:,} cache break(s) resent {t['resent']:,} cached tokens, costing "
                  f"{_money(t['cache_break_cost_usd'])} more")
    if t["missing_prices"]:
        words += f" (the model map lacks {', '.join(t['missing_prices'])})"
    return words


TOTALS_CACHE_COLUMNS: tuple[str, ...] = ("cost_with_caching_usd", "cost_without_caching_usd", "cache_hit_share",
                                         "cache_breaks", "cache_break_cost_usd")
"""A run's cache totals as the faces show them (Side by side's rows, the notebooks' caching table);
every cache code and its words: :data:`inspector.vocabulary.CACHE_WORDS`."""

CACHE_COLUMNS: tuple[str, ...] = (*TOTALS_CACHE_COLUMNS, "cached_tokens", "cache_input_tokens", "cache_rule")
"""The prompt-cache columns of a compare, sweep or fleet run row (:func:`cache_metrics`): the totals
and the token sums a group's exact cache-hit share is computed from, and the rule in force."""

CALL_CACHE_COLUMNS: tuple[str, ...] = ("cache_rule", "cached_tokens", "cache_written_tokens", "uncached_tokens",
                                       "cache_broke_at", "cache_break_cost_usd", "cost_with_caching_usd")
"""The prompt-cache columns of one call in a replay's CSV and table (:func:`cache_frame_rows`)."""


def cache_metrics(rp: Any, option: str | None = None) -> dict[str, Any]:
    """The :data:`CACHE_COLUMNS` of one replay, over the calls the agent made
    (:data:`inspector.vocabulary.CACHE_WORDS` says what each holds): both costs include the summarizer's cost (None when part of one has no
    price)."""
    t = replay_cache(rp, option).totals()
    summary = rp.totals()["summary_cost_usd"]

    def whole(cost: float | None) -> float | None:
        return None if cost is None or summary is None else round(cost + summary, 8)

    return {"cost_with_caching_usd": whole(t["cost_with_caching_usd"]),
            "cost_without_caching_usd": whole(t["cost_without_caching_usd"]),
            "cache_hit_share": t["cache_hit_share"], "cache_breaks": t["cache_breaks"],
            "cache_break_cost_usd": t["cache_break_cost_usd"], "cached_tokens": t["cached"],
            "cache_input_tokens": t["input"], "cache_rule": t["rule"]}


# --- checked against the provider's own record -------------------------------------------------------

def recorded_cache(usage: Mapping[str, Any] | None) -> tuple[int | None, int | None]:
    """``(read, written)`` cache tokens one call's recorded provider usage reports: read from
    :func:`inspector.calibration.cached_input_tokens` (Anthropic ``cache_read_input_tokens``, OpenAI
    ``prompt_tokens_details.cached_tokens``), written from Anthropic's
    ``cache_creation_input_tokens``; each None when not recorded."""
    from inspector.calibration import cached_input_tokens

    written = usage.get("cache_creation_input_tokens") if isinstance(usage, Mapping) else None
    if not isinstance(written, int) or isinstance(written, bool):
        written = None
    return cached_input_tokens(usage), written


def _own_agent_replay(transcript: Any) -> Any:
    """The transcript replayed as its own agent, with its unrecorded prefix (the fitted offset)
    added when the log leaves out the system prompt or tools and the usage fits a line."""
    from inspector.calibration import estimate_prefix
    from inspector.replay import replay

    est = estimate_prefix(transcript)
    return replay(None, transcript, unrecorded_prefix="auto" if est.missing and est.tokens is not None else None)


def _error(pairs: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """Mean absolute error of ``(predicted, recorded)`` pairs in tokens, and relative to the mean
    recorded count in % (None when nothing was recorded)."""
    if not pairs:
        return {"calls": 0, "mean_abs_error": None, "mean_rel_error_pct": None}
    mae = sum(abs(p - r) for p, r in pairs) / len(pairs)
    recorded = sum(r for _p, r in pairs) / len(pairs)
    return {"calls": len(pairs), "mean_abs_error": round(mae, 1),
            "mean_rel_error_pct": round(100 * mae / recorded, 2) if recorded else None}


def cache_calibration(transcript: Any, option: str | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Our predicted cache tokens beside the ones the provider recorded, per call, and the error.

    ``transcript`` is replayed as its own agent (:func:`~inspector.replay.replay` with no manifest,
    the unrecorded prefix added when the log leaves one out) and accounted under ``option``'s rule
    (:func:`rule_choice`). Returns ``(rows, summary)``: one row per call whose usage records cache
    tokens (``call``, ``index`` of its reply, ``predicted_cached``, ``recorded_cached``,
    ``predicted_written``, ``recorded_written``), and ``{"rule", "rule_source", "cached": error,
    "written": error}`` where an error is the mean absolute error in tokens and relative to the mean
    recorded count (``mean_rel_error_pct``) over the calls that record it. Empty rows and an empty
    summary when the transcript records no cache tokens. Raises what replaying raises."""
    usage: Mapping[int, Any] = getattr(transcript, "usage", None) or {}
    recorded = {i: recorded_cache(u) for i, u in usage.items()}
    recorded = {i: r for i, r in recorded.items() if r != (None, None)}
    if not recorded:
        return [], {}
    rp = _own_agent_replay(transcript)
    acct = replay_cache(rp, option)
    rows = []
    for c, frame in zip(acct.calls, rp.frames, strict=True):
        if c.pending or frame.at not in recorded:
            continue
        read, written = recorded[frame.at]
        rows.append({"call": c.frame, "index": frame.at, "predicted_cached": c.cache.cached, "recorded_cached": read,
                     "predicted_written": c.cache.written, "recorded_written": written})
    summary = {"rule": acct.rule.name, "rule_source": acct.rule.source,
               "cached": _error([(r["predicted_cached"], r["recorded_cached"]) for r in rows
                                 if r["recorded_cached"] is not None]),
               "written": _error([(r["predicted_written"], r["recorded_written"]) for r in rows
                                  if r["recorded_written"] is not None])}
    return rows, summary
