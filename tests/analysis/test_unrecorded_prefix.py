"""The unrecorded prefix: what a log leaves out of every call (Claude Code's, OpenHands'
system prompt and tool schemas), estimated as the calibration's fitted offset, stated wherever a
budget is shown and, opt-in, added to the budget as a fixed part of every call.

Rules under test: the prefix comes off the input ceiling before the calibration converts it, the
safety margin stays the ratio of the ceiling without it (inspector.engine.budget); the factor is not
offered when the fitted offset is more than half of the provider's count at the median call
(inspector.calibration.factor_offered)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from inspector.calibration import (
    CALL_COLUMNS, PrefixError, advice, calibrate, correction_factors, estimate_prefix, factor_offered, resolve_prefix,
)
from inspector.cli import main
from inspector.engine.budget import compute_budget
from inspector.engine.limits import ModelLimits
from inspector.replay import replay
from inspector.report.figures import band_segments
from inspector.transcripts import load_transcript, sample_path

CC = sample_path("demo_session.claude-code.jsonl")
OAI = sample_path("demo_calls.openai-log.jsonl")
TRIM = SimpleNamespace(max_tokens=None, reserve_tokens=None, safety_margin_ratio=0.1)


def limits(prefix: int = 0) -> ModelLimits:
    return ModelLimits("m", "m", 1000, "manifest", 100, "manifest", None, None, None, prefix=prefix,
                       prefix_source="given" if prefix else None)


def test_prefix_comes_off_the_ceiling_and_the_margin_stays_the_ratio_of_the_window() -> None:
    # window 1000, prefix 300: max_tokens 700; margin ceil(0.1 × 1000) = 100; reserve 100; fixed 50:
    # hard = 700 − 100 − 100 − 50 = 450; the trimmer keeps reserve + margin + prefix = 500 aside
    b = compute_budget(limits(300), TRIM, fixed=50, tool_tokens=0, summarizing=False)
    assert (b.max_tokens, b.margin, b.reserve, b.hard, b.prefix, b.prefix_source) == (700, 100, 100, 450, 300, "given")
    assert b.trimmer_reserve == 200 and b.max_tokens - b.trimmer_reserve == 500
    # without a prefix the budget is as before: 1000, margin 100, hard 1000 − 100 − 100 − 50 = 750
    b0 = compute_budget(limits(0), TRIM, fixed=50, tool_tokens=0, summarizing=False)
    assert (b0.max_tokens, b0.margin, b0.hard, b0.prefix, b0.prefix_source) == (1000, 100, 750, 0, None)


def test_prefix_is_taken_in_provider_tokens_before_the_calibration() -> None:
    # ×2: max_tokens = floor((1000 − 300) / 2) = 350; margin = ceil(0.1 × floor(1000 / 2)) = 50;
    # hard = 350 − 100 − 50 − 50 = 150
    b = compute_budget(limits(300), TRIM, fixed=50, tool_tokens=0, summarizing=False, calibration=2.0,
                       calibration_source="test")
    assert (b.max_tokens, b.margin, b.hard) == (350, 50, 150)


def _calls(ours: list[int], provider: list[int]) -> pd.DataFrame:
    rows = [{**dict.fromkeys(CALL_COLUMNS), "model": "m", "provider_tokens": p, "tiktoken": o, "estimate": o,
             "tiktoken_error_pct": None, "estimate_error_pct": None} for o, p in zip(ours, provider, strict=True)]
    return pd.DataFrame(rows, columns=list(CALL_COLUMNS))


@pytest.mark.parametrize(("provider", "offset", "offered"), [
    ([300, 500], 200, True),   # slope 1, offset 200 = exactly half of the median 400: still offered
    ([301, 501], 201, False),  # offset 201, median 401: 402 > 401, more than half
    ([200, 600], 0, True),     # slope 2 through the origin: the factor is the slope
])
def test_factor_is_withheld_when_the_offset_is_over_half_the_median_call(provider: list[int], offset: int,
                                                                          offered: bool) -> None:
    row = correction_factors(_calls([100, 300], provider)).iloc[0]
    assert row["offset_tiktoken"] == offset
    assert row["median_provider_tokens"] == (provider[0] + provider[1]) / 2
    assert bool(row["factor_offered"]) is offered
    assert factor_offered({"offset_tiktoken": None}, "tiktoken", 10.0)  # no line fitted: the factor is all there is


def test_claude_code_estimate_is_the_fitted_offset() -> None:
    # the sample's calls: ours (tiktoken) 17, 97, 89, 164; provider 15 880, 15 972, 15 962, 16 049.
    # means 91.75 and 15 965.75; Sxx = 10 842.75, Sxy = 12 467.75; slope = 1.1499;
    # offset = 15 965.75 − 1.14987 × 91.75 = 15 860.25 → 15 860
    t = load_transcript(CC)
    cal = calibrate(t)
    assert cal.calls["tiktoken"].tolist() == [17, 97, 89, 164]
    assert cal.calls["provider_tokens"].tolist() == [15_880, 15_972, 15_962, 16_049]
    est = estimate_prefix(t, "tiktoken", cal)
    assert (est.tokens, est.slope, est.calls, est.missing) == (15_860, 1.1499, 4, ("system prompt", "tool schemas"))
    assert resolve_prefix("auto", t) == (15_860, "estimated: fitted offset of 4 call(s) of recorded usage (tiktoken)")
    assert resolve_prefix(12, t) == (12, "given") and resolve_prefix(None, t) == (0, None)
    # the median call is (15 962 + 15 972) / 2 = 15 967; 2 × 15 860 > 15 967: no factor, the slope and the offset
    words = advice(cal)[0]
    assert words.startswith("claude-sonnet-4-20250514: fitted line provider ≈ 15,860 + 1.1499 × ours")
    assert "Do not apply the factor" in words and "--unrecorded-prefix auto" in words
    assert "--token-calibration claude-sonnet-4-20250514=1.1499" in words


@pytest.mark.parametrize("value", ["-1", "lots", True])
def test_a_prefix_must_be_auto_or_a_whole_number(value: Any) -> None:
    with pytest.raises(PrefixError, match="'auto' or a whole number"):
        resolve_prefix(value, load_transcript(CC))


def test_auto_needs_a_fitted_line() -> None:
    t = load_transcript(CC)
    t.usage = dict(list(t.usage.items())[:1])  # one call: no line
    with pytest.raises(PrefixError, match="fits no line"):
        resolve_prefix("auto", t)


def test_replay_adds_the_prefix_as_a_fixed_part_of_every_call() -> None:
    t = load_transcript(CC)
    plain = replay(None, t)
    added = replay(None, t, unrecorded_prefix=1000)
    # the margin is the ratio of the window either way, so each call's headroom drops by exactly 1000
    assert [a.headroom for a in added.frames] == [p.headroom - 1000 for p in plain.frames]
    assert [a.payload_tokens for a in added.frames] == [p.payload_tokens for p in plain.frames]
    f = added.frames[0]
    assert (f.budget.prefix, f.budget.prefix_source) == (1000, "given")
    assert ("prefix", 1000) in band_segments(f) and "prefix" not in dict(band_segments(plain.frames[0]))
    assert f.to_json()["budget"]["prefix"] == 1000 and "prefix" not in plain.frames[0].to_json()["budget"]
    assert "unrecorded prefix: 1,000 tokens added to the budget" in "\n".join(added.stated())
    said = plain.prefix_line()
    assert "≈ 15,860 tokens" in said and "NOT in this budget" in said and said in plain.stated()


def test_a_log_that_records_everything_says_nothing_of_a_prefix() -> None:
    rp = replay(None, load_transcript(OAI))
    assert rp.prefix_line() == "" and rp.unrecorded is None
    assert rp.frames[0].budget.prefix == 0


def test_cli_replay_unrecorded_prefix_auto(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(CC)]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["replay", str(CC), "--unrecorded-prefix", "auto"]) == 0
    captured = capsys.readouterr()
    added = json.loads(captured.out)
    assert [f["headroom"] for f in added["frames"]] == [f["headroom"] - 15_860 for f in plain["frames"]]
    assert "unrecorded prefix: 15,860 tokens added" in captured.err
    assert main(["replay", str(CC), "--unrecorded-prefix", "some"]) == 2


def test_cli_calibrate_leads_with_the_fitted_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(CC)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("claude-sonnet-4-20250514: fitted line provider ≈ 15,860 + 1.1499 × ours")
    assert main(["calibrate", str(CC), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["factors"][0]["factor_offered"] is False and "Do not apply" in doc["advice"][0]
    assert main(["calibrate", str(OAI), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["factors"][0]["factor_offered"] is True and "apply it with --token-calibration" in doc["advice"][0]


def test_a_sweep_counts_the_prefix_against_a_small_window() -> None:
    from pathlib import Path

    from inspector.sweep import sweep

    small = Path(__file__).resolve().parents[2] / "sample_manifests" / "small-window.yaml"  # a 4 000-token window
    runs = [sweep(str(small), [str(CC)], {"keep_turns": [2]}, processes=1, progress=False, unrecorded_prefix=p)
            for p in (None, "auto")]
    # the recorded rows fit (at most 296 tokens); with the 15 860-token prefix no call fits 4 000
    assert [int(r["over_budget"].iloc[0]) for r in runs] == [0, 4]
