"""Reference-compatible telemetry for one assembled call (docs/design.md §4), for parity with the reference runtime.

``segments`` reproduces the reference's per-message segments (E5 token estimates, sources such as
``conversation/summarized``); ``context_usage`` its usage record (E4 prompt estimate, remaining
tokens, per-part metadata — never part text); ``call_cost`` its cost formula. The inspector's own
bands use the chosen counter; these exist so a team can compare against what the reference logged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from inspector.engine.managers.summarising import is_summary_block
from inspector.engine.types import Message


def _e5(text: str) -> int:
    return max(1, len(text) // 4)


def _segment_text(msg: Message) -> str:
    calls = msg.get("tool_calls")
    if msg.get("role") == "assistant" and isinstance(calls, list) and calls:
        names = [str((c.get("function") or {}).get("name")) for c in calls if isinstance(c, dict)]
        return "tool_calls: " + ", ".join(names)
    c = msg.get("content")
    return c if isinstance(c, str) else ("" if c is None else json.dumps(c, default=str))


def _source(msg: Message, index: int) -> str:
    role = msg.get("role")
    if role == "system":
        return "conversation/summarized" if is_summary_block(msg) else "context/system"
    if role == "assistant" and msg.get("tool_calls"):
        return "assembled/tool_call"
    if role == "tool":
        return "assembled/tool_result"
    return f"assembled/{role}"


def segments(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out = []
    for i, msg in enumerate(messages):
        text = _segment_text(msg)
        preview = text if len(text) <= 120 else text[:120] + "..."
        out.append({"index": i, "role": msg.get("role"), "source": _source(msg, i),
                    "section_id": f"assembled/{i}/{msg.get('role')}", "tokens": _e5(text),
                    "content_preview": preview, "tool_call_id": msg.get("tool_call_id"), "retained": True})
    return out


def estimated_prompt_tokens(messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None) -> int:
    """E4: string content or JSON of non-string content, plus JSON of each tool call, plus JSON of tools."""
    chars = 0
    for m in messages:
        c = m.get("content")
        chars += len(c) if isinstance(c, str) else (len(json.dumps(c)) if c is not None else 0)
        for call in m.get("tool_calls") or ():
            chars += len(json.dumps(call))
    if tools:
        chars += len(json.dumps(list(tools)))
    return chars // 4 + 4 * len(messages)


def context_usage(messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, *, model: str | None,
                  window: int, reserve: int, parts: Sequence[Any] = ()) -> dict[str, Any]:
    est = estimated_prompt_tokens(messages, tools)
    return {
        "model": model, "context_window": window, "estimated_prompt_tokens": est, "completion_reserve": reserve,
        "estimated_remaining_tokens": max(0, window - est - reserve),
        "fill_ratio": est / window if window else None,
        "context_parts": [{"source": p.source, "section_id": p.section_id, "role": p.source, "placement": p.placement,
                           "tokens": _e5(p.content), "pinned": p.pinned} for p in parts],
    }


def call_cost(prompt_tokens: int, completion_tokens: int, *, input_per_m: float, output_per_m: float,
              cached_tokens: int = 0, cached_input_per_m: float | None = None, cache_hit: bool = False) -> float:
    """USD of one call: uncached prompt × input + cached prompt × cached-input (defaults to input) + completion × output."""
    if cache_hit:
        return 0.0
    cached_rate = input_per_m if cached_input_per_m is None else cached_input_per_m
    return ((prompt_tokens - cached_tokens) * input_per_m + cached_tokens * cached_rate
            + completion_tokens * output_per_m) / 1e6
