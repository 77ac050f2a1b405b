"""Reference telemetry parity: segments and usage with the E4/E5 estimates (docs/design.md §4)."""

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

def test_context_usage_numbers_worked_out_by_hand() -> None:
    # E4: floor(C/4) + 4 per message; C = 40 + 20 string chars + 32 (JSON of the list content
    # '[{"type": "text", "text": "hi"}]') + 78 (JSON of the one tool call) + 49 (JSON of the tools)
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    payload = [user("x" * 40), {"role": "assistant", "content": "y" * 20},
               {"role": "user", "content": [{"type": "text", "text": "hi"}]},
               {"role": "assistant", "content": None, "tool_calls": [call]}]
    tools = [{"type": "function", "function": {"name": "f"}}]
    usage = context_usage(payload, tools, model="m", window=1_000, reserve=200)
    assert usage["estimated_prompt_tokens"] == (40 + 20 + 32 + 78 + 49) // 4 + 4 * 4 == 70
    assert usage["estimated_remaining_tokens"] == 1_000 - 70 - 200 == 730
    assert usage["fill_ratio"] == 0.07
    # remaining never goes negative
    assert context_usage(payload, tools, model="m", window=100, reserve=200)["estimated_remaining_tokens"] == 0


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
