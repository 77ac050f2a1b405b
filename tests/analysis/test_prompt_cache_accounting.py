"""Prompt caching over a replay (inspector.prompt_cache): a sliding window caches less than an
uncapped stack, the rows add up to the frames' payload tokens, the incremental accounting equals the
whole-payload reference, the usual Anthropic placement reproduces Claude Code's logs, and breaks are
priced."""

from __future__ import annotations

import copy
import functools
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.cache import anthropic_rule, reference_calls, rule_for_model
from inspector.prompt_cache import account
from inspector.replay import Replay, replay
from inspector.transcripts import load_transcript, sample_path

MANIFESTS = Path(__file__).resolve().parents[2] / "inspector" / "samples" / "manifests"


def _stack_uncapped() -> dict[str, Any]:
    doc = yaml.safe_load((MANIFESTS / "stack.yaml").read_text(encoding="utf-8"))
    doc["spec"]["context_manager"]["params"].pop("max_messages")
    return dict(doc)


@functools.lru_cache(maxsize=None)
def _replay(manifest: str, counter: str = "tiktoken", transcript: str = "demo_support.json") -> Replay:
    source: Any = _stack_uncapped() if manifest == "stack-uncapped" else MANIFESTS / f"{manifest}.yaml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return replay(source, load_transcript(sample_path(transcript)), counter=counter)


@functools.lru_cache(maxsize=None)
def _claude_code() -> Replay:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return replay(None, load_transcript(sample_path("demo_session.claude-code.jsonl")), unrecorded_prefix="auto")


@pytest.mark.parametrize("rule", [None, "anthropic"])
def test_a_sliding_window_caches_fewer_tokens_than_an_uncapped_stack(rule: str | None) -> None:
    """The window shifts the prefix every few turns; the stack only appends."""
    sliding = account(_replay("sliding-window"), rule=rule).totals()
    stack = account(_replay("stack-uncapped"), rule=rule).totals()
    assert sliding["cached"] < stack["cached"]
    assert sliding["cache_hit_share"] < stack["cache_hit_share"]
    assert sliding["cache_breaks"] > 0 and stack["cache_breaks"] == 0


@pytest.mark.parametrize("counter", ["tiktoken", "estimate"])
@pytest.mark.parametrize("manifest", ["sliding-window", "stack-uncapped", "summarising-drop", "small-window"])
def test_each_calls_tokens_add_up_to_its_payload_tokens(manifest: str, counter: str) -> None:
    rp = _replay(manifest, counter)
    acc = account(rp)
    assert [c.cache.input for c in acc.calls] == [f.payload_tokens for f in rp.frames]
    for c in acc.calls:
        assert c.cache.cached + c.cache.written + c.cache.uncached == c.cache.input


def _whole_payloads(rp: Replay) -> list[tuple[list[Any], list[int]]]:
    """Every frame's provider rows from its whole payload: the head row, then each row keyed by its
    transcript index (a made row by its index and content), with the counter's prefix differences."""
    counter, out = rp.token_counter, []
    for frame in rp.frames:
        keys: list[Any] = [("head", frame.bands["tool_schemas"])]
        tokens = [frame.bands["tool_schemas"]]
        units = 0
        own = frame.own
        for k, (ref, msg) in enumerate(zip(frame.refs, frame.payload(rp.messages))):
            keys.append(ref if k not in own else (ref, json.dumps(msg, sort_keys=True, default=str)))
            before = counter.total(units, k)
            units += counter.unit(msg)
            tokens.append(counter.total(units, k + 1) - before)
        out.append((keys, tokens))
    return out


@pytest.mark.parametrize("rule", ["openai", "anthropic"])
@pytest.mark.parametrize("manifest", ["sliding-window", "stack-uncapped", "summarising-drop", "small-window"])
def test_the_incremental_accounting_equals_the_whole_payload_reference(manifest: str, rule: str) -> None:
    rp = _replay(manifest, "estimate")
    acc = account(rp, rule=rule)
    head = 1 + next(n for _r, n, band, _s, _o in rp.frames[0].segments if band == "system")
    assert [c.cache for c in acc.calls] == reference_calls(acc.rule, _whole_payloads(rp), None, head)


def test_the_agent_placement_reads_the_previous_read_plus_write() -> None:
    """FIELD.md: Claude Code logs show read(k) = read(k−1) + write(k−1), the first call writing the
    whole prefix (most of it Claude Code's own system prompt and tools, the unrecorded prefix here)."""
    rp = _claude_code()
    acc = account(rp)
    assert acc.rule.name == "anthropic" and acc.rule.min_tokens == 1_024
    calls = [c.cache for c in acc.calls]
    assert calls[0].cached == 0 and calls[0].written == calls[0].input > rp.limits["unrecorded_prefix"]
    for before, after in zip(calls, calls[1:]):
        assert after.cached == before.cached + before.written
        assert after.written == after.input - before.input and after.uncached == 0


def test_the_lifetime_uses_the_calls_times() -> None:
    rp = _claude_code()
    at = [f.at for f in rp.frames]
    times = {at[0]: 0.0, at[1]: 240.0, at[2]: 240.0 + 360.0, at[3]: 240.0 + 360.0 + 60.0}
    calls = [c.cache for c in account(rp, times=times).calls]
    assert calls[1].cached == calls[0].input  # 4 minutes later: read
    assert (calls[2].cached, calls[2].written) == (0, calls[2].input)  # 6 minutes later: written again
    assert calls[3].cached == calls[2].input


def test_without_times_nothing_expires() -> None:
    calls = [c.cache for c in account(_claude_code()).calls]
    assert all(c.cached > 0 for c in calls[1:])


def test_a_sliding_window_breaks_after_the_system_row_and_prices_the_resent_rows() -> None:
    acc = account(_replay("sliding-window"))
    p = acc.prices
    breaks = [c for c in acc.calls if c.cache.broke_at is not None]
    assert breaks and all(c.cache.broke_at == 2 for c in breaks)  # row 0 head (tools), row 1 system
    for c in breaks:
        assert 0 < c.resent <= c.cache.uncached and c.cache.cached <= c.cache.input - c.resent
        assert p.read is not None and p.input is not None
        assert c.break_cost_usd == pytest.approx(c.resent * (p.input - p.read))
    assert all(c.break_cost_usd == 0.0 and c.resent == 0 for c in acc.calls if c.cache.broke_at is None)


def test_cost_with_and_without_caching() -> None:
    acc = account(_replay("stack-uncapped"))
    p = acc.prices
    assert (p.input, p.read) == (2.5e-06, 1.25e-06)  # litellm's gpt-4o
    for c in acc.calls:
        assert c.uncached_cost_usd == pytest.approx(c.cache.input * 2.5e-06)
        assert c.cost_usd == pytest.approx(c.cache.cached * 1.25e-06 + c.cache.uncached * 2.5e-06)
    totals = acc.totals()
    assert totals["cost_with_caching_usd"] < totals["cost_without_caching_usd"]


def test_a_missing_cache_price_is_no_price() -> None:
    doc = copy.deepcopy(_stack_uncapped())
    doc["spec"]["models"][0]["model"] = "gpt-3.5-turbo"  # litellm has no cache_read_input_token_cost for it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rp = replay(doc, load_transcript(sample_path("demo_support.json")))
    acc = account(rp, rule="openai")
    hit = next(c for c in acc.calls if c.cache.cached)
    assert hit.cost_usd is None and hit.missing_prices == ("cache_read_input_token_cost",)
    assert hit.uncached_cost_usd is not None
    totals = acc.totals()
    assert totals["cost_with_caching_usd"] is None and totals["missing_prices"] == ["cache_read_input_token_cost"]


def test_the_rule_comes_from_the_model_unless_named() -> None:
    rp = _replay("stack-uncapped")
    assert account(rp).rule == rule_for_model("gpt-4o")
    assert account(rp, rule="none").totals()["cached"] == 0
    assert account(_claude_code()).rule == anthropic_rule(source=account(_claude_code()).rule.source)


def _stack_turns(turns: int) -> Replay:
    from tests.analysis.test_forgetting import _settings, _transcript
    from tests.builders import asst, user

    msgs = [m for i in range(turns) for m in (user(f"question {i}"), asst(f"answer {i}"))]
    return replay(_settings({"type": "stack"}), _transcript(msgs), counter="estimate")


def test_the_accounting_reads_each_row_once_and_works_per_run_not_per_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """An uncapped stack over T turns: call k sends rows 0..2k, so the payloads hold T² rows in all.
    The account asks the counter for each transcript row's units once — 2T − 1 rows, the last
    call's payload ending at its user row — and its work per call does not grow with the payload:
    100 → 200 turns at most doubles the Python lines it runs (≤ 2.2), where a walk over each
    payload's rows would quadruple them."""
    from inspector.engine.tokens import _CachedCounter
    from tests.analysis.test_forgetting import _lines_run

    small, big = _stack_turns(100), _stack_turns(200)
    assert [f.message_count for f in big.frames[:3]] == [1, 3, 5]
    from builders import count_unit_reads

    original = _CachedCounter.unit
    reads = count_unit_reads(monkeypatch)
    account(big)
    assert reads[0] == 2 * 200 - 1
    monkeypatch.setattr(_CachedCounter, "unit", original)
    ratio = _lines_run(lambda: account(big)) / _lines_run(lambda: account(small))
    assert ratio <= 2.2, ratio


def test_a_replay_with_no_price_says_its_input_has_no_price_once(tmp_path) -> None:
    """No model named: no price either way, said once ("has no price"), not as two empty costs; and
    no provider, so no cache rule: no share read from the cache either
    (tests/analysis/test_cache_words_without_rule.py)."""
    import json as _json

    from inspector.prompt_cache import cache_totals_words
    from inspector.replay import replay
    from inspector.transcripts import load_transcript

    path = tmp_path / "t.json"
    path.write_text(_json.dumps({"messages": [{"role": "user", "content": "Where is order A-1?"},
                                              {"role": "assistant", "content": "It shipped."}]}))
    words = cache_totals_words(replay(None, load_transcript(path)))
    assert "the one call's input has no price" in words and "no price, no price" not in words
    assert "read from the cache" not in words


_PRICE = st.none() | st.floats(0, 1, allow_nan=False, width=32)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 5_000), st.integers(0, 5_000), st.integers(0, 50),
                          st.integers(0, 500) | st.none(), _PRICE, _PRICE, _PRICE,
                          st.lists(st.sampled_from(["input_cost_per_token", "cache_read_input_token_cost"]),
                                   max_size=2)), max_size=12),
       st.booleans())
def test_an_accounts_totals_are_the_sums_of_its_calls_fields(rows: list[Any], include_pending: bool) -> None:
    """Rule (``CacheAccount.totals``): each token total is the sum of the calls' field, a cost the rounded
    sum of the calls' costs or None when any call's is None, the breaks the calls with a ``broke_at``,
    the missing prices each named once, sorted; the pending call counted only when asked. Worked
    here field by field, as the definition reads, against the totals' column sums."""
    from inspector.engine.cache import NO_CACHE, CachePrices, CallCache
    from inspector.prompt_cache import CacheAccount, CallCacheCost

    calls = tuple(CallCacheCost(i, pending, CallCache(cached + uncached, cached, 0, uncached, broke, 0), cost,
                                plain, resent, brk, tuple(missing))
                  for i, (pending, cached, uncached, resent, broke, cost, plain, brk, missing) in enumerate(rows))
    kept = [c for c in calls if include_pending or not c.pending]

    def total(values: list[float | None]) -> float | None:
        return None if any(v is None for v in values) else round(sum(v for v in values if v is not None), 8)

    t = CacheAccount(NO_CACHE, CachePrices(None, None, None), calls).totals(include_pending=include_pending)
    assert t["calls"] == len(kept)
    for name in ("input", "cached", "written", "uncached"):
        assert t[name] == sum(getattr(c.cache, name) for c in kept)
    assert t["cost_with_caching_usd"] == total([c.cost_usd for c in kept])
    assert t["cost_without_caching_usd"] == total([c.uncached_cost_usd for c in kept])
    assert t["cache_break_cost_usd"] == total([c.break_cost_usd for c in kept])
    assert t["cache_breaks"] == sum(1 for c in kept if c.cache.broke_at is not None)
    assert t["resent"] == sum(c.resent for c in kept)
    assert t["missing_prices"] == sorted({m for c in kept for m in c.missing_prices})
