"""Calibration: per call, our counts of the payload the provider counted beside its reported usage,
the error, the per-model correction factor, and the budget applying a factor when asked (opt-in).

Expected counts are computed here from tiktoken and the estimate formula directly, and provider
counts are read from the test files, so nothing is taken from the code under test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.calibration import calibrate, provider_input_tokens
from inspector.cli import main
from inspector.engine.budget import CalibrationError
from inspector.manifest import ManifestError, load_manifest, load_manifest_text
from inspector.replay import replay
from inspector.transcripts import load_transcript, sample_path

CC = sample_path("demo_session.claude-code.jsonl")  # fields and their sources: docs/SAMPLE_LOGS.md
OAI = sample_path("demo_calls.openai-log.jsonl")
SMALL = Path(__file__).resolve().parents[2] / "sample_manifests" / "small-window.yaml"


def _enc() -> Any:
    from inspector.offline import apply_offline_defaults

    apply_offline_defaults()
    import tiktoken

    return tiktoken.get_encoding("o200k_base")  # gpt-4o-mini's encoding


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_openai_log_calibration_numbers() -> None:
    enc = _enc()
    first_session = [v for v in _lines(OAI) if v["request"]["messages"][0]["role"] == "system"]
    cal = calibrate(load_transcript(OAI))
    assert len(cal.calls) == len(first_session)
    for (_, row), v in zip(cal.calls.iterrows(), first_session, strict=True):
        msgs = v["request"]["messages"]
        provider = v["response"]["usage"]["prompt_tokens"]
        tik = sum(3 + len(enc.encode(m["content"])) for m in msgs)
        est = sum(len(m["content"]) for m in msgs) // 4 + 4 * len(msgs)
        assert row["provider_tokens"] == provider
        assert (row["tiktoken"], row["tiktoken_error"]) == (tik, tik - provider)
        assert (row["estimate"], row["estimate_error"]) == (est, est - provider)
        assert row["tiktoken_error_pct"] == round(100.0 * (tik - provider) / provider, 2)
        assert row["payload"] == "request as logged" and row["messages"] == len(msgs)
    f = cal.factors.iloc[0]
    assert f["model"] == "gpt-4o-mini" and f["calls"] == len(first_session)
    assert f["factor_tiktoken"] == round(cal.calls["provider_tokens"].sum() / cal.calls["tiktoken"].sum(), 4)
    assert f["factor_estimate"] == round(cal.calls["provider_tokens"].sum() / cal.calls["estimate"].sum(), 4)
    assert cal.factor("gpt-4o-mini", "tiktoken") == f["factor_tiktoken"]
    assert cal.notes == []


def test_claude_code_calibration_counts_from_the_compaction_on() -> None:
    t = load_transcript(CC)
    cal = calibrate(t)
    raw = {v["message"]["id"]: v["message"]["usage"] for v in _lines(CC)
           if v.get("type") == "assistant" and not v.get("isSidechain")}
    expected_provider = sorted(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
                               for u in raw.values())
    assert sorted(cal.calls["provider_tokens"]) == expected_provider
    boundary = t.compactions[0].index
    for _, row in cal.calls.iterrows():
        start = boundary if row["index"] > boundary else 0
        payload = t.messages[start:row["index"]]
        assert row["messages"] == len(payload)
        est = sum(len(m["content"]) if isinstance(m["content"], str) else 0 for m in payload)
        est += sum(len(c["function"]["name"]) + len(c["function"]["arguments"])
                   for m in payload for c in m.get("tool_calls") or [])
        assert row["estimate"] == est // 4 + 4 * len(payload)
    assert any("system prompt" in n for n in cal.notes) and any("compaction" in n for n in cal.notes)


def test_no_usage_means_nothing_to_calibrate(tmp_path: Path) -> None:
    p = tmp_path / "chat.json"
    p.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]))
    cal = calibrate(load_transcript(p))
    assert cal.calls.empty and cal.factors.empty and cal.factor() is None
    assert main(["calibrate", str(p)]) == 1


@given(st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7))
def test_provider_input_tokens_rule(prompt: int, inp: int, create: int, read: int) -> None:
    anthropic = {"input_tokens": inp, "cache_creation_input_tokens": create, "cache_read_input_tokens": read}
    assert provider_input_tokens(anthropic) == inp + create + read
    assert provider_input_tokens({"prompt_tokens": prompt, "prompt_tokens_details": {"cached_tokens": read}}) == prompt
    assert provider_input_tokens({"completion_tokens": prompt}) is None


# --- the budget applies a factor, opt-in --------------------------------------------------------------

def test_budget_divides_the_input_ceiling_by_the_factor() -> None:
    t = load_transcript(OAI)
    plain = replay(load_manifest(SMALL), t, counter="estimate", summarizer="drop")
    cal = replay(load_manifest(SMALL), t, counter="estimate", summarizer="drop", calibration={"gpt-4o": 1.25})
    window = plain.frames[0].budget.window
    assert all(f.budget.calibration is None and f.budget.max_tokens == window for f in plain.frames)
    for f in cal.frames:
        assert f.budget.max_tokens == math.floor(window / 1.25)
        assert f.budget.calibration == 1.25 and "command line" in f.budget.calibration_source
        assert f.input_budget == math.floor(window / 1.25) - f.budget.reserve - f.budget.margin


def test_manifest_token_calibration_applies_to_its_counter_only() -> None:
    loaded = load_manifest(SMALL, overrides=["spec.models[0].token_calibration={tiktoken: 2.0}"])
    t = load_transcript(OAI)
    tik = replay(loaded, t, counter="tiktoken", summarizer="drop")
    est = replay(loaded, t, counter="estimate", summarizer="drop")
    window = tik.frames[0].budget.window
    assert tik.frames[0].budget.max_tokens == window // 2
    assert "token_calibration.tiktoken" in tik.frames[0].budget.calibration_source
    assert est.frames[0].budget.max_tokens == window and est.frames[0].budget.calibration is None


def test_calibration_that_names_no_model_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(CalibrationError, match="'gpt-9'"):
        replay(load_manifest(SMALL), load_transcript(OAI), counter="estimate", summarizer="drop",
               calibration={"gpt-9": 1.1})
    assert main(["replay", str(SMALL), str(OAI), "--token-calibration", "gpt-9=1.1"]) == 1
    assert "gpt-9" in capsys.readouterr().err
    assert main(["replay", str(SMALL), str(OAI), "--token-calibration", "gpt-4o=-2"]) == 2


def test_manifest_rejects_a_bad_token_calibration() -> None:
    text = ("apiVersion: mas/v1\nkind: Agent\nmetadata: {name: a}\nspec:\n  models:\n"
            "    - {id: main, model: gpt-4o, token_calibration: {tiktokn: 1.1}}\n")
    with pytest.raises(ManifestError) as err:
        load_manifest_text(text, file="m.yaml", mode="validate")
    assert "spec.models[0].token_calibration" in str(err.value)


def test_cli_calibrate_json(capsys: pytest.CaptureFixture[str]) -> None:
    """Numbers worked out by hand from the sample log (not from ``calibrate()``): its first session
    has three gpt-4o-mini calls whose responses report 32, 56 and 94 prompt tokens; our tiktoken
    counts of the logged requests are 3 + the content tokens per message: 27, 49, 85; the estimate
    is chars // 4 + 4 per message: 32, 59, 98. Factor = Σ provider / Σ ours, rounded to 4 places:
    182 / 161 = 1.130434… → 1.1304 (not an even division), 182 / 189 = 0.962962… → 0.963."""
    assert main(["calibrate", str(OAI), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    calls = [(c["provider_tokens"], c["tiktoken"], c["tiktoken_error"], c["estimate"], c["estimate_error"])
             for c in out["calls"]]
    assert calls == [(32, 27, -5, 32, 0), (56, 49, -7, 59, 3), (94, 85, -9, 98, 4)]
    # where each call stands: its reply's row (2, 4, 6), its turn (one user row per request), the model,
    # the cache reads the response reports (0), the rows of the logged request (2, 4, 6)
    assert [(c["call"], c["index"], c["turn"], c["model"], c["cached_tokens"], c["messages"], c["payload"])
            for c in out["calls"]] == [(k, 2 * k + 2, k + 1, "gpt-4o-mini", 0, 2 * k + 2, "request as logged")
                                       for k in range(3)]
    assert [c["estimate_error_pct"] for c in out["calls"]] == [0.0, 5.36, 4.26]  # 0/32, 3/56, 4/94
    assert [c["tiktoken_error_pct"] for c in out["calls"]] == [-15.62, -12.5, -9.57]  # -5/32, -7/56, -9/94
    (f,) = out["factors"]
    assert (f["model"], f["calls"], f["provider_tokens"], f["tiktoken"], f["estimate"]) == (
        "gpt-4o-mini", 3, 182, 161, 189)
    assert (f["factor_tiktoken"], f["factor_estimate"]) == (1.1304, 0.963)
    assert f["mean_abs_error_pct_tiktoken"] == 12.56  # (15.62 + 12.5 + 9.57) / 3 = 12.563…
    # least squares through (27, 32), (49, 56), (85, 94): slope 1830.67 / 1714.67 = 1.0677, offset 3.37 → 3
    assert (f["slope_tiktoken"], f["offset_tiktoken"]) == (1.0677, 3)
    # through (32, 32), (59, 56), (98, 94): slope 2074 / 2202 = 0.9419, offset 1.33 → 1; errors (0 + 5.36 + 4.26) / 3
    assert (f["slope_estimate"], f["offset_estimate"], f["mean_abs_error_pct_estimate"]) == (0.9419, 1, 3.21)
    assert out["notes"] == []


def _budget_max_tokens(window: int, calibration: float | None) -> int:
    from inspector.engine.budget import compute_budget
    from inspector.engine.limits import ModelLimits
    from inspector.manifest.settings import TrimmerSettings

    limits = ModelLimits("m", "m", window, "manifest", 0, "manifest", None, None, None)
    return compute_budget(limits, TrimmerSettings(None, 0, 0.0), fixed=0, tool_tokens=0, summarizing=False,
                          calibration=calibration).max_tokens


@pytest.mark.parametrize(("window", "factor", "max_tokens"), [
    (4000, None, 4000),
    (4000, 2.0, 2000),  # an even division
    (4000, 1.1304, 3538),  # 4000 / 1.1304 = 3538.57…: floored, never rounded up (3539 would overflow)
    (1000, 3.0, 333),  # 333.33…
    (1000, 0.963, 1038),  # a factor below 1 raises the ceiling: 1038.42… → 1038
    (10, 7.0, 1),  # 1.43 → 1
    (10, 11.0, 1),  # 0.91 floors to 0: the ceiling never goes below one token
    (10, 5000.0, 1),
])
def test_the_calibrated_ceiling_is_the_floor_of_the_window_over_the_factor_and_at_least_one(
        window: int, factor: float | None, max_tokens: int) -> None:
    assert _budget_max_tokens(window, factor) == max_tokens


def test_fitted_line_separates_the_unrecorded_prefix() -> None:
    # the sample's usage was constructed as 15 860 (Claude Code's unlogged system prompt and tools)
    # + 1.15 × our tiktoken count of the logged rows, rounded per call (docs/SAMPLE_LOGS.md)
    cal = calibrate(load_transcript(CC))
    f = cal.factors.iloc[0]
    assert abs(f["slope_tiktoken"] - 1.15) < 0.01
    assert abs(f["offset_tiktoken"] - 15_860) <= 2
    assert f["factor_tiktoken"] > 40  # the plain ratio lumps the prefix in: why the line is reported
    # the OpenAI sample's calls lie on one line too (provider = ours + messages + 3): the fit passes through them
    oai = calibrate(load_transcript(OAI))
    line = oai.factors.iloc[0]
    pairs = zip(oai.calls["tiktoken"], oai.calls["provider_tokens"], strict=True)
    assert all(abs(line["offset_tiktoken"] + line["slope_tiktoken"] * x - y) <= 2 for x, y in pairs)


def test_correction_factors_are_per_model_and_unknown_where_nothing_was_counted() -> None:
    """Σ provider / Σ ours per model, a call of no known model grouped on its own, no factor where
    ours sums to 0, the mean absolute error over the calls that have one (numbers by hand)."""
    import pandas as pd

    from inspector.calibration import CALL_COLUMNS, FACTOR_COLUMNS, Calibration, correction_factors

    rows = [{"model": "a", "provider_tokens": 110, "tiktoken": 100, "estimate": 0, "tiktoken_error_pct": 10.0,
             "estimate_error_pct": None},
            {"model": None, "provider_tokens": 50, "tiktoken": 40, "estimate": 45, "tiktoken_error_pct": 25.0,
             "estimate_error_pct": 11.11},
            {"model": "a", "provider_tokens": 220, "tiktoken": 200, "estimate": 0, "tiktoken_error_pct": -10.0,
             "estimate_error_pct": None}]
    calls = pd.DataFrame([{c: r.get(c) for c in CALL_COLUMNS} for r in rows], columns=list(CALL_COLUMNS))
    f = correction_factors(calls)
    assert list(f.columns) == list(FACTOR_COLUMNS) and len(f) == 2
    a, unknown = f.iloc[0], f.iloc[1]
    assert (a["model"], a["calls"], a["provider_tokens"], a["tiktoken"], a["estimate"]) == ("a", 2, 330, 300, 0)
    assert a["factor_tiktoken"] == 1.1 and pd.isna(a["factor_estimate"])  # 330 / 300; ours 0: no factor
    assert a["mean_abs_error_pct_tiktoken"] == 10.0 and pd.isna(a["mean_abs_error_pct_estimate"])
    # two calls at different counts are enough for a line: (100, 110), (200, 220) → slope 1.1, offset 0
    assert (a["slope_tiktoken"], a["offset_tiktoken"]) == (1.1, 0)
    assert pd.isna(a["slope_estimate"])  # ours is 0 both times: the x values do not vary, no line
    assert pd.isna(unknown["model"]) and unknown["calls"] == 1
    assert (unknown["factor_tiktoken"], unknown["factor_estimate"]) == (1.25, 1.1111)  # 50 / 40, 50 / 45
    cal = Calibration(calls, f)
    assert cal.factor("a") == 1.1 and cal.factor("a", "estimate") is None and cal.factor("b") is None
    assert cal.factor() is None  # two models: name one
    assert Calibration(calls.iloc[:1], correction_factors(calls.iloc[:1])).factor() == 1.1
    with pytest.raises(ValueError, match=r"^unknown counter 'x' \(expected one of tiktoken, estimate\)$"):
        cal.factor("a", "x")
    assert correction_factors(calls.iloc[:0]).empty


def test_calibrate_places_each_call_and_counts_the_payload_the_provider_saw() -> None:
    """A transcript with every case, numbers by hand under the estimate (E1 = C // 4 + 4n; E3 for
    the one tool: ``[{"type": "function", "function": {"name": "f"}}]`` is 49 characters: 49 // 4 + 4 = 16):

    * usage at row 1 (no logged request): the rows before it, the transcript's model and tools;
    * usage at row 2 (a user row) and row 9 (no such row): no call, but the turn count runs on;
    * usage at row 3, an Anthropic count (30 + 0 created + 5 read = 35) with a logged request: its
      rows, its model and its tools (none);
    * usage at row 5, after a compaction at row 4: the rows from the compaction on."""
    from types import SimpleNamespace

    from inspector.calibration import calibrate

    rows = [("user", "abcd"), ("assistant", "efgh"), ("user", "ijkl"), ("assistant", "mnop"), ("user", "qrst"),
            ("assistant", "uvwx")]
    msgs = [{"role": r, "content": c} for r, c in rows]
    tool = {"type": "function", "function": {"name": "f"}}
    op = SimpleNamespace(reply=3, messages=msgs[:3], tools=None, model="m-op")
    t = SimpleNamespace(messages=msgs, model="gpt-4o", tools=[tool], observed_payloads=[op],
                        compactions=[SimpleNamespace(index=4)], meta=None, usage={
                            1: {"prompt_tokens": 20},
                            2: {"prompt_tokens": 7},
                            3: {"input_tokens": 30, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 5},
                            5: {"prompt_tokens": 12, "prompt_tokens_details": {"cached_tokens": 4}},
                            6: {"prompt_tokens": 1},  # one past the last row: no such reply
                            9: {"prompt_tokens": 1}})
    cal = calibrate(t)
    import pandas as pd

    got = [(r.call, r.index, r.turn, r.model, r.provider_tokens, None if pd.isna(r.cached_tokens) else int(r.cached_tokens),
            r.estimate, r.estimate_error,
            r.estimate_error_pct, r.messages, r.payload) for r in cal.calls.itertuples()]
    assert got == [
        (0, 1, 1, "gpt-4o", 20, None, 5 + 16, 1, 5.0, 1, "rows 0-0"),
        (1, 3, 2, "m-op", 35, 5, 12 // 4 + 12, -20, -57.14, 3, "request as logged"),
        (2, 5, 3, "gpt-4o", 12, 4, 5 + 16, 9, 75.0, 1, "rows 4-4 (since the observed compaction)"),
    ]
    f = cal.factors
    assert f["model"].tolist() == ["gpt-4o", "m-op"]
    assert f["factor_estimate"].tolist() == [0.7619, 2.3333]  # 32 / 42, 35 / 15
    assert cal.notes == ["1 compaction(s) by the source framework were observed; calls after one are counted "
                         "from the compaction summary on."]


@pytest.mark.parametrize("usage", [{"prompt_tokens": -1}, {"prompt_tokens": True}, {"prompt_tokens": "12"},
                                   {"input_tokens": -3}, {"input_tokens": 2.5}, None, [1]])
def test_a_count_that_is_not_a_non_negative_integer_is_no_count(usage: Any) -> None:
    assert provider_input_tokens(usage) is None


def test_an_anthropic_count_ignores_parts_that_are_not_counts() -> None:
    assert provider_input_tokens({"input_tokens": 10, "cache_creation_input_tokens": -4,
                                  "cache_read_input_tokens": "7"}) == 10


def test_what_a_calibration_cannot_count_is_said_in_notes() -> None:
    from types import SimpleNamespace

    import pandas as pd

    from inspector.calibration import CALL_COLUMNS, FACTOR_COLUMNS

    msgs = [{"role": "user", "content": "abcd"}, {"role": "assistant", "content": "efgh"}]
    none = calibrate(SimpleNamespace(messages=msgs, usage={}, model=None, tools=None, observed_payloads=[],
                                     compactions=[], meta={}))
    assert list(none.calls.columns) == list(CALL_COLUMNS) and list(none.factors.columns) == list(FACTOR_COLUMNS)
    assert none.notes == ["The transcript records no provider usage per call: nothing to calibrate against."]
    log = calibrate(SimpleNamespace(messages=msgs, usage={1: {"prompt_tokens": 0}}, model="m", tools=None,
                                    observed_payloads=[], compactions=[],
                                    meta={"not_recorded": ["system prompt", "tool schemas"]}))
    assert log.notes == [
        "This log does not record the system prompt or the tool schemas; the provider's count includes them and "
        "ours cannot, so the factor also absorbs them. The fitted line separates the two: offset ≈ what the log "
        "leaves out, slope = the per-token correction to apply."]
    row = log.calls.iloc[0]
    assert row["provider_tokens"] == 0 and pd.isna(row["estimate_error_pct"])  # no percentage of nothing


def test_a_reply_that_opens_the_transcript_is_a_call_with_nothing_before_it() -> None:
    """An assistant row at index 0 with recorded usage (an agent that speaks first) is a call: its
    payload is the empty prefix of the transcript (0 messages), turn 0, and the provider's count
    (7) stands beside ours; a row 0 that is not a reply is no call."""
    from types import SimpleNamespace

    msgs = [{"role": "assistant", "content": "Hello, how can I help?"}, {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "ok"}]
    cal = calibrate(SimpleNamespace(messages=msgs, usage={0: {"prompt_tokens": 7}, 2: {"prompt_tokens": 30}},
                                    model="gpt-4o", tools=None, observed_payloads=[], compactions=[], meta={}))
    got = [(int(r["index"]), int(r["turn"]), int(r["messages"]), int(r["provider_tokens"]))
           for _, r in cal.calls.iterrows()]
    assert got == [(0, 0, 0, 7), (2, 1, 2, 30)]
    user_first = calibrate(SimpleNamespace(messages=msgs[1:], usage={0: {"prompt_tokens": 7}}, model="gpt-4o",
                                           tools=None, observed_payloads=[], compactions=[], meta={}))
    assert user_first.calls.empty
