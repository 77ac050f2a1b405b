"""The recommendation weighs cost against forgetting, on sweeps whose right answer is known.

Bug classes: recommending the grid minimum although it forgets a fact a larger setting keeps;
ties broken toward less context; claiming a saving (or a trade-off) where the grid cannot tell
settings apart; hysteresis prose that contradicts the table.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

from inspector.manifest import load_manifest
from inspector.planted import planted_conversation
from inspector.report.recommend import hysteresis_effect, recommend
from inspector.sweep import METRIC_COLUMNS, sweep
from inspector.transcripts.model import Transcript

MANIFEST = "sample_manifests/small-window.yaml"


def _row(kt: int, **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"transcript": "a", "keep_turns": kt}
    row.update(dict.fromkeys(METRIC_COLUMNS, 0))
    row.update(user_turns=12, frames=20, tokens_sent=1000 * kt, peak_payload=100 * kt, input_budget=5000,
               min_headroom=5000 - 100 * kt, payload_cost_usd=0.01 * kt, summary_cost_usd=0.0, cost_usd=0.01 * kt,
               messages_dropped=max(0, 10 - kt), forgotten_ids="[]", summary_cost_basis="reported",
               summarizer="llm", counter="estimate", error=None)
    row.update(over)
    return row


def test_constructed_grid_where_only_keep_turns_6_and_up_keep_the_fact() -> None:
    rows = [_row(kt, forgotten=1 if kt < 6 else 0, forgotten_calls=1 if kt < 6 else 0, needing_calls=1,
                 forgotten_ids=json.dumps(["SEC-88213"] if kt < 6 else []))
            for kt in (1, 2, 3, 4, 6, 8, 10)]
    rec = recommend(pd.DataFrame(rows))
    assert rec.setting == {"keep_turns": 6}
    assert [c["setting"]["keep_turns"] for c in rec.cheaper] == [1, 2, 3, 4]
    assert all(c["why"] == "forgets more" and c["forgets"] == ["SEC-88213"] for c in rec.cheaper)
    assert "keep_turns = 1 would cost $0.0100" in rec.text and "`SEC-88213`" in rec.text
    # a stated tolerance of one forgotten reference lets the cheapest setting through
    assert recommend(pd.DataFrame(rows), tolerance=1).setting == {"keep_turns": 1}
    with pytest.raises(ValueError):
        recommend(pd.DataFrame(rows), tolerance=-1)


def test_the_minimum_is_recommended_when_it_forgets_nothing_more() -> None:
    rows = [_row(kt, forgotten=2, needing_calls=3, forgotten_ids='["a@b.co"]') for kt in (1, 4, 8)]
    rec = recommend(pd.DataFrame(rows))
    assert rec.setting == {"keep_turns": 1} and rec.cheaper == []
    assert "forgets least is keep_turns = 8" in rec.text  # ties on forgetting: the bar is set by more context


def test_real_sweep_keep_turns_at_least_the_gap_keeps_the_planted_fact() -> None:
    conv = planted_conversation(0, turns=14, facts=1, gap=6, restate_every=0)
    grid = {"context_manager": ["sliding-window"], "keep_turns": [1, 2, 4, 6, 8]}
    df = sweep(MANIFEST, [conv.transcript], grid, overrides=["spec.models[0].context_window=100000"], processes=1,
               progress=False)
    assert df["error"].isna().all()
    fact = conv.facts[0].text
    for _, row in df.iterrows():
        lost = json.loads(row["forgotten_ids"])
        assert (fact in lost) == (row["keep_turns"] < 6), row["keep_turns"]
    rec = recommend(df)
    assert rec.setting == {"context_manager": "sliding-window", "keep_turns": 6}
    assert f"`{fact}`" in rec.text


def _one_turn() -> Transcript:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing test in tests/test_api.py please."}]
    for i in range(4):
        cid = f"c{i}"
        msgs.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"cmd": f"step {i}"})}}]})
        msgs.append({"role": "tool", "tool_call_id": cid, "content": "output " * 50})
    msgs.append({"role": "assistant", "content": "Done."})
    return Transcript(format="openai-chat", path="one-turn", messages=msgs, origins=[""] * len(msgs), tools=None,
                      model=None, usage={}, irregularities=[])


def test_one_turn_transcript_cannot_discriminate_and_says_so() -> None:
    df = sweep(MANIFEST, [_one_turn()], {"keep_turns": [1, 2, 3]}, processes=1, progress=False)
    rec = recommend(df)
    assert not rec.discriminates
    assert rec.setting == {"keep_turns": 3}  # ties go to more context
    assert "cannot discriminate" in rec.text and "at most 1 user turn" in rec.text
    assert "price of that saving" not in rec.text and "% less" not in rec.text


def test_hysteresis_words_follow_the_data() -> None:
    rows = [_row(kt, hysteresis_ratio=r, summarizer_in_turn=calls) for kt, r, calls in
            [(2, 0.0, 1), (2, 0.3, 4), (4, 0.0, 0), (4, 0.3, 2)]]
    text = hysteresis_effect(pd.DataFrame(rows))
    assert "calls rise (1 → 6" in text and "higher in 2" in text and "lowers it" in text
    rows = [_row(2, hysteresis_ratio=r, summarizer_in_turn=c) for r, c in [(0.0, 5), (0.3, 2)]]
    assert "calls fall (5 → 2" in hysteresis_effect(pd.DataFrame(rows))
