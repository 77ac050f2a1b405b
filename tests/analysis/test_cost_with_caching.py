"""Cost with prompt caching, as the faces read it (inspector.prompt_cache): the rule chosen (option,
manifest, provider), the per-call and total numbers worked out by hand on a two-call transcript, the
sweep's and the tuner's cost with caching, and calibrate's predicted cache tokens beside Claude
Code's recorded ones.

The two-call transcript: a system text of 1 290 tokens and a user message of 10 (call 0: 1 300
tokens), then a reply and a second user message (call 1: 1 319 tokens, the first 1 300 unchanged).
Model gpt-4o: input $2.5 per million tokens, cache read $1.25 per million (litellm's map)."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from inspector.engine.cache import CacheRuleError
from inspector.prompt_cache import (
    CACHE_COLUMNS,
    add_cache_to_document,
    cache_calibration,
    cache_metrics,
    recorded_cache,
    replay_cache,
    rule_choice,
)
from inspector.replay import Replay, replay
from inspector.report.recommend import recommend
from inspector.sweep import by_setting, cost_column, sweep_one
from inspector.transcripts import load_transcript, sample_path
from tests.builders import two_calls

INPUT, READ = 2.5e-06, 1.25e-06


def _quiet_replay(manifest: Any, path: Path) -> Replay:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return replay(manifest, load_transcript(path))


@pytest.fixture()
def rp(tmp_path: Path) -> Replay:
    made = _quiet_replay(None, two_calls(tmp_path / "two.json"))
    assert [f.payload_tokens for f in made.frames] == [1_300, 1_319]  # the premise of every number below
    return made


def test_openai_reads_the_shared_1300_tokens_in_128_token_steps(rp: Replay) -> None:
    calls = replay_cache(rp).calls
    assert (calls[0].cache.cached, calls[0].cache.uncached) == (0, 1_300)
    assert (calls[1].cache.cached, calls[1].cache.written, calls[1].cache.uncached) == (1_280, 0, 39)
    assert calls[1].cost_usd == pytest.approx(1_280 * READ + 39 * INPUT)  # $0.0016975
    assert calls[1].uncached_cost_usd == pytest.approx(1_319 * INPUT)


def test_anthropic_writes_the_first_call_and_reads_it_back(rp: Replay) -> None:
    calls = replay_cache(rp, "anthropic").calls
    assert (calls[0].cache.cached, calls[0].cache.written) == (0, 1_300)
    assert (calls[1].cache.cached, calls[1].cache.written, calls[1].cache.uncached) == (1_300, 19, 0)
    assert calls[0].cost_usd is None  # gpt-4o has no cache-write price: no price, never 0
    assert calls[0].missing_prices == ("cache_creation_input_token_cost",)


def test_the_replay_json_gets_a_cache_object_per_call_and_totals(rp: Replay) -> None:
    doc = add_cache_to_document(rp.to_json(), rp)
    first, second = (f["cache"] for f in doc["frames"])
    assert list(second) == ["rule", "cached", "written", "uncached", "broke_at", "lost", "cost_with_caching_usd",
                            "cost_without_caching_usd", "cache_break_cost_usd", "resent"]
    assert (second["rule"], second["cached"], second["uncached"], second["broke_at"]) == ("openai", 1_280, 39, None)
    assert first["cached"] == 0
    totals = doc["totals"]["cache"]
    assert (totals["cached"], totals["input"], totals["cache_hit_share"]) == (1_280, 2_619, 0.4887)
    assert totals["cost_with_caching_usd"] == pytest.approx(1_300 * INPUT + 1_280 * READ + 39 * INPUT)
    assert totals["cost_without_caching_usd"] == pytest.approx(2_619 * INPUT)
    assert totals["rule_choice"] == "auto: by the model's provider"


def test_the_account_is_made_once_per_replay_and_rule(rp: Replay) -> None:
    assert replay_cache(rp) is replay_cache(rp, "auto") is replay_cache(rp)
    assert replay_cache(rp, "none") is not replay_cache(rp)
    assert replay_cache(rp, "none").totals()["cached"] == 0


def test_the_option_beats_the_manifest_which_beats_the_provider(tmp_path: Path) -> None:
    manifest = {"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "a"},
                "spec": {"models": [{"id": "main", "model": "gpt-4o", "prompt_cache": "none"}]}}
    made = _quiet_replay(manifest, two_calls(tmp_path / "two.json"))
    assert rule_choice(made).name == "none"
    assert rule_choice(made).why == "set in the manifest: spec.models[main].prompt_cache none"
    assert replay_cache(made).rule.name == "none"
    assert rule_choice(made, "openai").why == "set by --cache-rule openai"
    assert replay_cache(made, "auto").rule.name == "openai"  # auto given: by the provider, whatever the manifest
    with pytest.raises(CacheRuleError, match="unknown cache rule 'openia'"):
        rule_choice(made, "openia")


def test_sweep_rows_carry_the_cost_with_caching(tmp_path: Path) -> None:
    row = sweep_one(None, load_transcript(two_calls(tmp_path / "two.json")), {})
    assert set(CACHE_COLUMNS) <= set(row)
    assert (row["cache_rule"], row["cached_tokens"], row["cache_input_tokens"], row["cache_breaks"]) == \
        ("openai", 1_280, 2_619, 0)
    assert row["cache_hit_share"] == 0.4887
    assert row["cost_with_caching_usd"] == pytest.approx(1_300 * INPUT + 1_280 * READ + 39 * INPUT + row["summary_cost_usd"])


def test_cache_metrics_add_the_summarizers_cost(rp: Replay) -> None:
    m = cache_metrics(rp)
    summary = rp.totals()["summary_cost_usd"]
    assert m["cost_with_caching_usd"] == pytest.approx(replay_cache(rp).totals()["cost_with_caching_usd"] + summary)
    assert m["cost_without_caching_usd"] == pytest.approx(replay_cache(rp).totals()["cost_without_caching_usd"] + summary)


def _row(keep: int, transcript: str = "a", **kw: Any) -> dict[str, Any]:
    row = {"transcript": transcript, "conversation": 0, "keep_turns": keep, "user_turns": 4, "frames": 10,
           "tokens_sent": 1_000, "peak_payload": 300, "input_budget": 1_000, "min_headroom": 700, "over_budget": 0,
           "summarizer_calls": 0, "summarizer_in_turn": 0, "summarizer_commit": 0, "summarizer_failures": 0,
           "messages_summarised": 0, "messages_dropped": 0, "folded": 0, "trimmed": 0, "repairs": 0,
           "checks_failed": 0, "forgotten": 0, "forgotten_calls": 0, "needing_calls": 0, "forgotten_per_call": 0.0,
           "forgotten_ids": "[]", "payload_cost_usd": 0.01 * keep, "summary_cost_usd": 0.0, "cost_usd": 0.01 * keep,
           "cost_with_caching_usd": 0.004 * keep, "cost_without_caching_usd": 0.01 * keep, "cache_hit_share": 0.5,
           "cache_breaks": keep, "cache_break_cost_usd": 0.0, "cached_tokens": 500,
           "cache_input_tokens": 1_000, "cache_rule": "openai", "summary_cost_basis": "none (no summary calls)",
           "summarizer": "offline stand-in (not a model)", "counter": "tiktoken", "pending_call": False,
           "error": None}
    row.update(kw)
    return row


def test_by_setting_sums_the_cost_with_caching_and_recomputes_the_share() -> None:
    df = pd.DataFrame([_row(1), _row(1, "b", cached_tokens=100, cache_input_tokens=3_000), _row(2),
                       _row(2, "b", cost_with_caching_usd=None)])
    agg = by_setting(df)
    one, two = agg.iloc[0], agg.iloc[1]
    assert one.cost_with_caching_usd == pytest.approx(0.008) and one.cache_breaks == 2
    assert one.cache_hit_share == 0.15  # (500 + 100) / (1 000 + 3 000)
    assert two.cost_with_caching_usd is None  # one transcript has no price: no partial sum
    assert cost_column(by_setting(pd.DataFrame([_row(1), _row(2)]))) == "cost_with_caching_usd"
    assert cost_column(agg) == "cost_usd"  # not every setting priced with caching: the cost without it


def test_the_tuner_ranks_on_the_cost_with_caching_and_says_so() -> None:
    rec = recommend(pd.DataFrame([_row(3, cost_without_caching_usd=0.031), _row(1, cost_with_caching_usd=0.05)]))
    assert rec.metric == "cost_with_caching_usd" and rec.setting == {"keep_turns": 3}  # $0.012 with caching beats $0.05
    assert "Ranked by total cost with prompt caching" in rec.text
    assert "$0.0120 over 10 LLM call(s)" in rec.text
    assert "Without prompt caching it would cost $0.0310." in rec.text  # the row's cost_without_caching_usd


# --- calibrate: predicted beside recorded ------------------------------------------------------------

RECORDED = [(0, 15_876), (15_880, 87), (15_860, 99), (15_962, 81)]
"""(cache_read_input_tokens, cache_creation_input_tokens) of the four replies of
inspector/samples/demo_session.claude-code.jsonl, read from the file."""


@functools.lru_cache(maxsize=None)
def _claude_code_calibration() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cache_calibration(load_transcript(sample_path("demo_session.claude-code.jsonl")))


def test_recorded_cache_tokens_are_read_from_the_usage() -> None:
    assert recorded_cache({"input_tokens": 3, "cache_read_input_tokens": 7, "cache_creation_input_tokens": 5}) == (7, 5)
    assert recorded_cache({"prompt_tokens": 9, "prompt_tokens_details": {"cached_tokens": 4}}) == (4, None)
    assert recorded_cache({"prompt_tokens": 9}) == (None, None)


def test_calibrate_sets_the_predicted_cache_tokens_beside_claude_codes_recorded_ones() -> None:
    rows, summary = _claude_code_calibration()
    assert [(r["recorded_cached"], r["recorded_written"]) for r in rows] == RECORDED
    assert summary["rule"] == "anthropic"
    # the usual placement: call k reads what call k − 1 read and wrote
    for before, after in zip(rows, rows[1:]):
        assert after["predicted_cached"] == before["predicted_cached"] + before["predicted_written"]
    errors = [abs(r["predicted_cached"] - r["recorded_cached"]) for r in rows]
    mean_recorded = sum(r for r, _w in RECORDED) / 4
    assert summary["cached"]["calls"] == 4
    assert summary["cached"]["mean_abs_error"] == round(sum(errors) / 4, 1)
    assert summary["cached"]["mean_rel_error_pct"] == round(100 * sum(errors) / 4 / mean_recorded, 2)
    assert summary["cached"]["mean_rel_error_pct"] < 1.0  # within a percent of the provider's own record


def test_a_log_without_cache_tokens_gives_nothing_to_compare(tmp_path: Path) -> None:
    assert cache_calibration(load_transcript(two_calls(tmp_path / "two.json"))) == ([], {})
