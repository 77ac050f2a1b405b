"""Provider prompt-cache rules (inspector.engine.cache): hand-computed prefixes, minimum lengths,
breakpoints, the lifetime, prices; the incremental cache equals the whole-payload reference."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.cache import (
    NO_CACHE,
    CachePrices,
    CacheRule,
    CacheRuleError,
    CallCache,
    PromptCache,
    anthropic_rule,
    openai_rule,
    prices_for_model,
    reference_calls,
    round10,
    rule_for_model,
)

OPENAI = openai_rule()
ANTHROPIC = anthropic_rule()


def first_call(rule: CacheRule, rows: list[int], head: int = 1) -> tuple[PromptCache, CallCache]:
    cache = PromptCache(rule, head)
    return cache, cache.call(0, rows)


# --- OpenAI: automatic prefix caching in 128-token steps from 1 024 tokens -------------------------------

def test_openai_a_common_prefix_of_1300_tokens_reads_1280() -> None:
    cache, first = first_call(OPENAI, [1_300, 200])
    assert first == CallCache(1_500, 0, 0, 1_500)
    second = cache.call(1, [50])  # the 1 300-token row unchanged, the 200-token row replaced
    assert (second.cached, second.written, second.uncached) == (1_280, 0, 70)


def test_openai_a_1023_token_prefix_reads_nothing_and_1024_reads_all_of_it() -> None:
    cache, _ = first_call(OPENAI, [1_023, 10])
    assert cache.call(1, [5]).cached == 0
    cache, _ = first_call(OPENAI, [1_024, 10])
    assert cache.call(1, [5]).cached == 1_024


def test_openai_a_prompt_under_1024_tokens_is_not_stored() -> None:
    cache, _ = first_call(OPENAI, [1_000])
    assert cache.call(1, [500]).cached == 0  # the 1 000-token prompt was never stored
    assert cache.call(2, [10]).cached == 1_408  # the 1 500-token one was: 11 steps of 128


def test_openai_writes_are_never_billed() -> None:
    cache, first = first_call(OPENAI, [5_000])
    assert first.written == 0 and cache.call(1, [100]).written == 0


# --- Anthropic: breakpoints after the head and on the last row ---------------------------------------------

def test_anthropic_first_call_writes_the_whole_prefix_up_to_the_last_breakpoint() -> None:
    _, first = first_call(ANTHROPIC, [1_500, 300, 200])
    assert first == CallCache(2_000, 0, 2_000, 0)


def test_anthropic_read_of_each_call_is_the_previous_read_plus_its_write() -> None:
    """FIELD.md: in Claude Code logs the read of call k equals the read plus the write of call k−1,
    and the write is just the rows added since."""
    cache, first = first_call(ANTHROPIC, [18_764])
    calls = [first]
    rows = 1
    for added in ([120, 800], [90, 4_000], [60, 35]):  # each call adds a reply and a tool result
        calls.append(cache.call(rows, added))
        rows += len(added)
    for before, after in itertools.pairwise(calls):
        assert after.cached == before.cached + before.written
    assert [c.written for c in calls] == [18_764, 920, 4_090, 95]
    assert all(c.uncached == 0 for c in calls)


def test_anthropic_minimum_cacheable_length_1024() -> None:
    _, short = first_call(ANTHROPIC, [600, 423])  # 1 023 tokens up to the last breakpoint
    assert short == CallCache(1_023, 0, 0, 1_023)
    _, enough = first_call(ANTHROPIC, [600, 424])
    assert enough.written == 1_024


def test_anthropic_a_head_below_the_minimum_is_not_stored_but_the_last_breakpoint_is() -> None:
    cache, first = first_call(ANTHROPIC, [700, 2_000])
    assert first.written == 2_700
    changed = cache.call(1, [2_100])  # the message changed: the 700-token head was never stored alone
    assert (changed.cached, changed.written) == (0, 2_800)


def test_anthropic_the_head_breakpoint_survives_a_compaction() -> None:
    cache, _ = first_call(ANTHROPIC, [1_200, 3_000, 4_000])
    after = cache.call(1, [500])  # the history replaced by a 500-token summary
    assert (after.cached, after.written, after.uncached) == (1_200, 500, 0)
    assert (after.broke_at, after.lost) == (1, 7_000)


def test_anthropic_haiku_minimum_is_2048() -> None:
    haiku = anthropic_rule(min_tokens=2_048)
    _, short = first_call(haiku, [1_500, 547])
    assert short.written == 0
    _, enough = first_call(haiku, [1_500, 548])
    assert enough.written == 2_048


def test_anthropic_lookback_finds_an_entry_at_most_20_rows_before_the_breakpoint() -> None:
    cache, _ = first_call(ANTHROPIC, [2_000, 10])  # entries at 1 and 2 rows
    near = cache.call(2, [1] * 20)  # last breakpoint at 22 rows: the 2-row entry is 20 rows back
    assert near.cached == 2_010
    cache, _ = first_call(ANTHROPIC, [2_000, 10])
    far = cache.call(2, [1] * 21)  # 21 rows back: only the head breakpoint's entry is found
    assert far.cached == 2_000 and far.written == 31


def test_at_most_four_breakpoints() -> None:
    with pytest.raises(CacheRuleError, match="at most 4"):
        anthropic_rule(tail_marks=4)


def test_two_tail_marks_write_up_to_the_last_row() -> None:
    _, first = first_call(anthropic_rule(tail_marks=2), [1_100, 50, 60])
    assert first == CallCache(1_210, 0, 1_210, 0)


# --- the lifetime, measured with the calls' times ----------------------------------------------------------

def test_anthropic_calls_4_minutes_apart_read_and_6_minutes_apart_write_again() -> None:
    cache = PromptCache(ANTHROPIC)
    cache.call(0, [2_000, 500], at=0.0)
    assert cache.call(2, [100], at=240.0).cached == 2_500
    late = cache.call(3, [100], at=240.0 + 360.0)
    assert (late.cached, late.written) == (0, 2_700)


def test_a_hit_refreshes_the_lifetime() -> None:
    cache = PromptCache(ANTHROPIC)
    cache.call(0, [2_000], at=0.0)
    assert cache.call(1, [10], at=280.0).cached == 2_000  # refreshed at 280 s
    assert cache.call(2, [10], at=560.0).cached == 2_010  # 280 s after the refresh, 560 s after the write


def test_the_lifetime_boundary_is_inclusive_at_exactly_five_minutes() -> None:
    cache = PromptCache(ANTHROPIC)
    cache.call(0, [2_000], at=0.0)
    assert cache.call(1, [10], at=300.0).cached == 2_000
    cache = PromptCache(ANTHROPIC)
    cache.call(0, [2_000], at=0.0)
    assert cache.call(1, [10], at=300.5).cached == 0


def test_without_times_entries_never_expire() -> None:
    cache = PromptCache(OPENAI)
    cache.call(0, [2_000])
    assert cache.call(1, [10]).cached == 1_920


def test_openai_entries_expire_after_the_ttl() -> None:
    cache = PromptCache(OPENAI)
    cache.call(0, [2_000], at=0.0)
    assert cache.call(1, [10], at=301.0).cached == 0


# --- breaks ------------------------------------------------------------------------------------------------

def test_appending_rows_is_no_break() -> None:
    cache, _ = first_call(ANTHROPIC, [1_500, 500])
    assert cache.call(2, [10]).broke_at is None


def test_a_sliding_prefix_breaks_at_the_first_changed_row() -> None:
    cache, _ = first_call(OPENAI, [1_100, 400, 300])
    moved = cache.call(1, [300, 20])  # row 1 dropped: the rest shifted
    assert (moved.broke_at, moved.lost) == (1, 1_792 - 1_024)  # 1 800 readable as 1 792; 1 100 as 1 024
    assert moved.cached == 1_024


def test_a_change_past_an_expired_prefix_is_no_break() -> None:
    cache = PromptCache(ANTHROPIC)
    cache.call(0, [2_000, 500], at=0.0)
    assert cache.call(1, [10], at=1_000.0).broke_at is None


def test_none_caches_nothing() -> None:
    cache, first = first_call(NO_CACHE, [5_000])
    again = cache.call(1, [5])
    assert first == CallCache(5_000, 0, 0, 5_000) and again == CallCache(5_005, 0, 0, 5_005)


def test_a_call_cannot_keep_more_rows_than_the_previous_one_had() -> None:
    cache, _ = first_call(OPENAI, [10, 10])
    with pytest.raises(CacheRuleError, match="3 unchanged rows, but the previous call had 2"):
        cache.call(3, [])


# --- rule choice and prices from litellm's model map ---------------------------------------------------------

def test_rule_follows_the_litellm_provider() -> None:
    assert rule_for_model("gpt-4o").name == "openai"
    claude = rule_for_model("claude-sonnet-4-20250514")
    assert claude.name == "anthropic" and claude.min_tokens == 1_024 and claude.head_mark and claude.tail_marks == 1
    assert rule_for_model("claude-3-5-haiku-20241022").min_tokens == 2_048
    assert rule_for_model("no-such-model-xyz").name == "none"


def test_a_rule_name_overrides_the_provider() -> None:
    assert rule_for_model("gpt-4o", "none").name == "none"
    assert rule_for_model("gpt-4o", "anthropic").name == "anthropic"
    with pytest.raises(CacheRuleError, match="unknown cache rule 'lru'"):
        rule_for_model("gpt-4o", "lru")


def test_prices_are_litellm_fields() -> None:
    p = prices_for_model("claude-sonnet-4-20250514")
    assert (p.input, p.read, p.write) == (3e-06, 3e-07, 3.75e-06)
    call = CallCache(10_000, 6_000, 3_000, 1_000)
    assert p.with_cache(call) == pytest.approx(6_000 * 3e-07 + 3_000 * 3.75e-06 + 1_000 * 3e-06)
    assert p.without_cache(call) == pytest.approx(0.03)


def test_a_missing_price_is_no_price_not_zero() -> None:
    openai_like = CachePrices(2.5e-06, None, None)
    assert openai_like.with_cache(CallCache(2_000, 0, 0, 2_000)) == pytest.approx(0.005)
    assert openai_like.with_cache(CallCache(2_000, 1_024, 0, 976)) is None
    assert openai_like.missing(CallCache(2_000, 1_024, 0, 976)) == ("cache_read_input_token_cost",)
    assert prices_for_model("no-such-model-xyz").without_cache(CallCache(1, 0, 0, 1)) is None


# --- a cost rounded to ten places: round10 is round(x, 10), cheaper -----------------------------------------

@settings(max_examples=400, deadline=None)
@given(x=st.one_of(st.floats(allow_nan=False), st.floats(0.0, 200.0),
                   st.integers(0, 10 ** 13).map(lambda k: k / 10 ** 10 + 0.5e-10)))  # the last: half-way points
def test_round10_is_round_to_ten_places(x: float) -> None:
    assert repr(round10(x)) == repr(round(x, 10))


@pytest.mark.parametrize("x", [0.12782, 0.0639375, 51622 * 2.5e-06, 0.00000000015, 0.00000000025, 109.9, 110.0,
                               0.5e-10, 1.5e-10, -0.25, 0.0, -0.0, float("inf"), float("nan"), 3, 0])
def test_round10_at_half_way_points_and_range_ends(x: float) -> None:
    assert repr(round10(x)) == repr(round(x, 10))  # an int stays an int (3, not 3.0)


def test_costs_write_no_decimal_digits_for_a_cost_away_from_a_half_way_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call's two costs (51 622 tokens at $2.5e-06, 50 688 of them read at $1.25e-06) are far from a
    half-way point at ten places: neither is rounded by ``round(x, 10)`` (which writes decimal digits)."""
    import inspector.engine.cache as cache_module

    places: list[object] = []

    def spy(x: float, *ndigits: int) -> object:
        if ndigits:
            places.append(x)
        return round(x, *ndigits)

    monkeypatch.setattr(cache_module, "round", spy, raising=False)
    with_cache, without, missing = CachePrices(2.5e-06, 1.25e-06, None).costs(CallCache(51_622, 50_688, 0, 934))
    assert (with_cache, without, missing) == (0.065695, 0.129055, ())
    assert places == []


# --- the incremental cache is the reference ------------------------------------------------------------------

call_steps = st.lists(
    st.tuples(st.floats(0.0, 1.0), st.lists(st.integers(0, 1_500), max_size=6),
              st.one_of(st.none(), st.floats(0.0, 400.0))),
    min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(steps=call_steps, rule=st.sampled_from([OPENAI, ANTHROPIC, anthropic_rule(tail_marks=2, min_tokens=512),
                                                 CacheRule("anthropic", min_tokens=100, head_mark=True, tail_marks=1,
                                                           lookback=2), NO_CACHE]),
       head=st.integers(1, 2))
def test_incremental_equals_the_whole_payload_reference(steps: list[tuple[float, list[int], float | None]],
                                                       rule: CacheRule, head: int) -> None:
    fresh = itertools.count()
    keys: list[int] = []
    tokens: list[int] = []
    payloads, times, kept_counts, added = [], [], [], []
    clock = 0.0
    for share, new, gap in steps:
        kept = int(share * len(keys))
        keys = keys[:kept] + [next(fresh) for _ in new]  # changed rows are new rows
        tokens = tokens[:kept] + new
        clock += gap or 0.0
        payloads.append((list(keys), list(tokens)))
        times.append(None if gap is None else clock)
        kept_counts.append(kept)
        added.append(new)
    cache = PromptCache(rule, head)
    incremental = [cache.call(k, new, at) for k, new, at in zip(kept_counts, added, times)]
    assert incremental == reference_calls(rule, payloads, times, head)
    for call, (_, toks) in zip(incremental, payloads):
        assert call.cached + call.written + call.uncached == call.input == sum(toks)
        assert min(call.cached, call.written, call.uncached, call.lost) >= 0


@pytest.mark.parametrize("rule", [OPENAI, ANTHROPIC])
def test_call_prefix_asks_for_a_handful_of_rows_whatever_the_payload_size(rule: CacheRule) -> None:
    """A window that shifts every row after the head still costs a call a few look-ups, not one per row."""
    asked: list[int] = []

    def upto(j: int) -> int:
        asked.append(j)
        return 1_000 * j

    cache = PromptCache(rule, head=2)
    first = cache.call_prefix(0, 10_000, upto)
    asked.clear()
    shifted = cache.call_prefix(2, 10_000, upto)
    assert len(asked) <= 4
    assert first.input == shifted.input == 10_000_000
    assert shifted.broke_at == 2
    assert shifted.cached == (1_920 if rule is OPENAI else 2_000)  # the 2 000-token head: 15 steps of 128, or whole


def test_with_no_model_the_rule_says_so_in_words() -> None:
    rule = rule_for_model(None)
    assert rule.name == "none"
    assert rule.source == "no model named, so no provider: no cache rule"
    assert "None" not in rule_for_model("acme/unknown-model-x").source
