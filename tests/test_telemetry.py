"""Reference telemetry parity: ENGINE.md §5 scenarios 61–63."""

from __future__ import annotations

import pytest

from builders import ask, tool, user
from inspector.engine.managers.summarising import summary_block
from inspector.engine.telemetry import call_cost, context_usage, segments
from inspector.manifest import settings_from_dict


def test_segments_sources_and_remaining_scenario_61() -> None:
    payload = [{"role": "system", "content": "S"}, summary_block(2, "old"), user("q"), ask("1", "2", name="f"), tool("1")]
    payload[3]["tool_calls"][1]["function"]["name"] = "g"
    segs = segments(payload)
    assert [s["source"] for s in segs] == ["context/system", "conversation/summarized", "assembled/user",
                                           "assembled/tool_call", "assembled/tool_result"]
    assert segs[3]["content_preview"] == "tool_calls: f, g"
    usage = context_usage(payload, None, model="gpt-4o", window=1000, reserve=200)
    assert usage["estimated_remaining_tokens"] == max(0, 1000 - usage["estimated_prompt_tokens"] - 200)


def test_skills_are_pinned_parts_without_body_text_scenario_62() -> None:
    settings = settings_from_dict({"kind": "Agent", "spec": {"skills": [
        {"name": "refunds", "description": "Refund rules", "body": "SECRET BODY TEXT", "activated": True}]}}).settings
    sections = {p.section_id for p in settings.parts}
    assert {"skills/catalog", "skills/activated/refunds"} <= sections
    assert all(p.pinned for p in settings.parts)
    usage = context_usage([user("q")], None, model=None, window=1000, reserve=0, parts=settings.parts)
    assert "SECRET BODY TEXT" not in repr(usage["context_parts"])
    assert {p["section_id"] for p in usage["context_parts"]} == sections


def test_cost_formula_scenario_63() -> None:
    assert call_cost(10_000, 500, cached_tokens=2_000, input_per_m=0.30, cached_input_per_m=0.03,
                     output_per_m=2.50) == pytest.approx(0.00371)
    assert call_cost(10_000, 500, input_per_m=0.30, output_per_m=2.50, cache_hit=True) == 0.0
