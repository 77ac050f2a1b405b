"""Prompt caching over a replay: what the provider's cache would serve on each call, and what it costs.

:func:`account` follows a :class:`~inspector.replay.Replay`'s calls in order through the cache rule
of its model (:func:`inspector.engine.cache.rule_for_model`, or a rule named by the caller) and
prices each call with and without caching (:func:`inspector.engine.cache.prices_for_model`).

The rows a provider sees, in order: one **head** row (the tool schemas, plus the unrecorded prefix
when the replay adds it to the budget), then the payload's rows as the frame records them (its
system row first). A payload row is known by its transcript index, or, for a row the engine made
(a summary, a rebound copy), by its index and content. The rows two consecutive calls share are
read from the frames' segment runs, so each call costs in proportion to the rows that changed.
A row's tokens are the replay counter's count of the payload up to that row minus the count up to
the row before (so the rows sum to the frame's ``payload_tokens``, whatever the counter's rounding).

A **cache break** is a call whose changed rows cut a cached prefix that was still alive (a
compaction, a trim, a sliding window). Its cost is counted on the rows of this call that the
previous call's payload held past the break: the cache would have read them had the prefix been
kept; this call pays them at the write or input rate instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.engine.cache import CachePrices, CacheRule, CallCache, PromptCache, prices_for_model, rule_for_model
from inspector.engine.types import Message

__all__ = ["CacheAccount", "CallCacheCost", "account"]

Run = tuple[int | None, int, Message | None]
"""A frame's payload rows as runs: ``(ref, n, own)``, the transcript rows ``ref .. ref + n − 1`` when
``own`` is None, else one row the engine made (``own``) in place of message ``ref``."""


@dataclass(frozen=True, slots=True)
class CallCacheCost:
    """One call's cache record and its price.

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
        number of breaks, and the litellm price fields that were missing."""
        calls = [c for c in self.calls if include_pending or not c.pending]
        tokens = {name: sum(getattr(c.cache, name) for c in calls) for name in ("input", "cached", "written", "uncached")}
        return {
            "calls": len(calls), **tokens,
            "cache_hit_share": round(tokens["cached"] / tokens["input"], 4) if tokens["input"] else 0.0,
            "cost_usd": _sum([c.cost_usd for c in calls]),
            "uncached_cost_usd": _sum([c.uncached_cost_usd for c in calls]),
            "breaks": sum(1 for c in calls if c.cache.broke_at is not None),
            "resent": sum(c.resent for c in calls),
            "break_cost_usd": _sum([c.break_cost_usd for c in calls]),
            "missing_prices": sorted({name for c in calls for name in c.missing_prices}),
            "rule": self.rule.name, "rule_source": self.rule.source,
        }


def _sum(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else round(sum(v for v in values if v is not None), 8)


def frame_runs(segments: Sequence[Any]) -> tuple[Run, ...]:
    """A frame's segments as :data:`Run` s (the band and synthetic marks dropped: the provider sees rows)."""
    return tuple((ref, n, own) for ref, n, _band, _syn, own in segments)


def common_rows(a: Sequence[Run], b: Sequence[Run]) -> int:
    """How many leading rows the payloads of runs ``a`` and ``b`` share: equal transcript indices, or
    made rows with the same index and content. Walks the runs, not the rows."""
    rows = i = j = oa = ob = 0
    while i < len(a) and j < len(b):
        (ra, na, own_a), (rb, nb, own_b) = a[i], b[j]
        if own_a is not None or own_b is not None:
            if own_a is None or own_b is None or ra != rb or own_a != own_b:
                break
            rows, i, j = rows + 1, i + 1, j + 1
            continue
        if ra is None or rb is None or ra + oa != rb + ob:
            break
        step = min(na - oa, nb - ob)
        rows, oa, ob = rows + step, oa + step, ob + step
        if oa == na:
            i, oa = i + 1, 0
        if ob == nb:
            j, ob = j + 1, 0
    return rows


def rows_from(runs: Sequence[Run], start: int, msgs: Sequence[Message]) -> Iterator[tuple[Any, Message]]:
    """``(key, message)`` of every payload row from row ``start`` on: the key is the transcript index
    of a row sent as it is, or ``(index, "made")`` for a row the engine made."""
    pos = 0
    for ref, n, own in runs:
        if pos + n <= start:
            pos += n
            continue
        if own is not None:
            yield (ref, "made"), own
        elif ref is not None:
            for r in range(ref + max(0, start - pos), ref + n):
                yield r, msgs[r]
        pos += n


class _Follower:
    """The payload rows of consecutive calls, kept incrementally: their keys, the counter's
    cumulative units and the cumulative tokens of the message rows (the head row apart)."""

    def __init__(self, counter: Any, msgs: Sequence[Message]) -> None:
        self.counter, self.msgs = counter, msgs
        self.runs: tuple[Run, ...] = ()
        self.head = -1
        self.keys: list[Any] = []
        self.units: list[int] = [0]
        self.tokens: list[int] = [0]

    def step(self, head: int, runs: tuple[Run, ...]) -> tuple[int, list[int], set[Any]]:
        """Move to the next call: ``(kept, new_rows, dropped)`` in provider rows (head row = row 0):
        the rows unchanged since the previous call, the tokens of the rows after them, and the keys
        of the previous call's rows past ``kept``."""
        same = common_rows(self.runs, runs) if head == self.head else -1
        kept_msgs = max(same, 0)
        dropped = set(self.keys[kept_msgs:])
        del self.keys[kept_msgs:], self.units[kept_msgs + 1:], self.tokens[kept_msgs + 1:]
        unit, total = self.counter.unit, self.counter.total
        new_rows = [] if same >= 0 else [head]
        for key, msg in rows_from(runs, kept_msgs, self.msgs):
            self.keys.append(key)
            self.units.append(self.units[-1] + unit(msg))
            self.tokens.append(total(self.units[-1], len(self.keys)))
            new_rows.append(self.tokens[-1] - self.tokens[-2])
        self.runs, self.head = runs, head
        return (0 if same < 0 else 1 + kept_msgs), new_rows, dropped


def _resent(call: CallCache, follower: _Follower, dropped: set[Any]) -> tuple[int, int]:
    """Tokens, written and uncached, of this call's rows past the break that the previous call sent."""
    assert call.broke_at is not None
    written_end = call.cached + call.written
    head = call.input - follower.tokens[-1]
    in_written = in_uncached = 0
    for k in range(max(call.broke_at - 1, 0), len(follower.keys)):
        if follower.keys[k] in dropped:
            lo, hi = head + follower.tokens[k], head + follower.tokens[k + 1]
            w = max(0, min(hi, written_end) - max(lo, call.cached))
            u = max(0, hi - max(lo, written_end))
            in_written, in_uncached = in_written + w, in_uncached + u
    return in_written, in_uncached


def _break_cost(prices: CachePrices, written: int, uncached: int) -> float | None:
    need = [(written, prices.write), (uncached, prices.input)]
    if (written or uncached) and (prices.read is None or any(n and p is None for n, p in need)):
        return None
    read = prices.read or 0.0
    return round(written * ((prices.write or 0.0) - read) + uncached * ((prices.input or 0.0) - read), 10)


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
    follower = _Follower(_counter(rp), rp.messages)
    prefix = int(rp.limits.get("unrecorded_prefix") or 0)
    cache = PromptCache(cache_rule, _head_rows(rp.frames[0]) if rp.frames else 1)
    pending = rp.pending_call
    calls = []
    for i, frame in enumerate(rp.frames):
        kept, new_rows, dropped = follower.step(prefix + frame.bands.get("tool_schemas", 0), frame_runs(frame.segments))
        call = cache.call(kept, new_rows, times.get(frame.at))
        resent = _resent(call, follower, dropped) if call.broke_at is not None else (0, 0)
        calls.append(CallCacheCost(i, i == pending, call, prices.with_cache(call), prices.without_cache(call),
                                   sum(resent), _break_cost(prices, *resent), prices.missing(call)))
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
