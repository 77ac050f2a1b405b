"""Observed payloads vs the engine: what the reference runtime sent, and what ours would send.

Some transcripts record the exact ``messages[]`` a runtime sent (mas-lab ``context_assembled``
events, Letta's in-context window). For each such payload we rebuild the same conversation state —
system row, the stored log before the last user message (one archive leaf per user turn, as it was
stored), the current user message, and the in-turn rows after it — and let our engine assemble the
call under the given manifest. The two payloads then sit side by side: counts, tokens, whether they
are identical, and what our engine would have changed (manager action, trims, pairing repairs).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from inspector.engine.assembler import Assembly, ContextEngine, _as_settings
from inspector.engine.history import split_user_turns
from inspector.engine.types import Message


def engine_for_observed(settings: Any, messages: list[Message], tools: list[dict[str, Any]] | None, *,
                        counter: str = "estimate") -> tuple[ContextEngine, Assembly]:
    """Our engine's call for the state the observed payload was assembled from."""
    engine = ContextEngine(settings, counter=counter, summarizer="stand-in",
                           tools=tools if tools is not None else None)
    rest = list(messages)
    if rest and rest[0].get("role") == "system":
        if not (settings.injected_context or settings.memory_seeds or settings.parts):
            engine.conversation.system_message = rest[0]
        rest = rest[1:]
    last_user = max((i for i, m in enumerate(rest) if m.get("role") == "user"), default=None)
    history, current, wm = (rest, None, []) if last_user is None else \
        (rest[:last_user], rest[last_user], rest[last_user + 1:])
    for turn, group in enumerate(split_user_turns(history), start=1):
        engine.conversation.archive.add_leaf(turn, group)
    if current is not None:
        engine.user(current)
    for m in wm:
        engine.record(m)
    return engine, engine.assemble(strict=False)


def compare_observed(manifest: Any, transcript: Any, *, counter: str = "estimate") -> pd.DataFrame:
    """One row per observed payload of ``transcript`` (empty when the format records none)."""
    settings = _as_settings(manifest, ())
    rows = []
    for k, op in enumerate(getattr(transcript, "observed_payloads", []) or []):
        engine, call = engine_for_observed(settings, op.messages, op.tools, counter=counter)
        observed_tokens = engine.counter.count(op.messages) + engine.counter.count_tools(op.tools)
        rows.append({
            "payload": k, "label": op.label, "turn": op.turn,
            "observed_messages": len(op.messages), "engine_messages": len(call.messages),
            "observed_tokens": observed_tokens, "engine_tokens": call.payload_tokens,
            "identical": call.messages == op.messages,
            "cm_action": call.cm.action, "trimmed": call.trimmed_count, "repairs": len(call.repairs),
            "repair_kinds": ", ".join(sorted({r.kind for r in call.repairs})), "check": call.check,
        })
    return pd.DataFrame(rows, columns=["payload", "label", "turn", "observed_messages", "engine_messages",
                                       "observed_tokens", "engine_tokens", "identical", "cm_action", "trimmed",
                                       "repairs", "repair_kinds", "check"])
