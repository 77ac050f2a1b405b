"""A deterministic offline stand-in for the ``llm`` summarizer.

Replays and demos without an API key still need a summary text to show where one would be. This
one is built from the messages themselves (no model), is byte-for-byte deterministic, and is
labelled as such in its text and its ``model`` so no output can pass it off as a real summary.
"""

from __future__ import annotations

from inspector.engine.types import Message

STANDIN_MODEL = "offline-stand-in"
STANDIN_LABEL = "[offline stand-in summary — not produced by a model]"


def _snippet(text: object, n: int = 80) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


class StandInSummarizer:
    model = STANDIN_MODEL
    model_source = "stand-in"
    label = "stand-in"

    def __init__(self, **_: object) -> None:
        self.calls = 0

    def summarize(self, messages: list[Message]) -> str:
        self.calls += 1
        users = [m for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
        tools: list[str] = []
        for m in messages:
            for call in m.get("tool_calls") or ():
                name = (call.get("function") or {}).get("name") if isinstance(call, dict) else None
                if name and name not in tools:
                    tools.append(str(name))
        prior = [m for m in messages if m.get("role") == "system"]
        lines = [STANDIN_LABEL, f"{len(messages)} message(s), {len(users)} user message(s)."]
        if prior:
            lines.append("Earlier summary carried over.")
        for u in users[-5:]:
            lines.append(f"- user: {_snippet(u.get('content'))}")
        if tools:
            lines.append("Tools used: " + ", ".join(tools[:12]) + ".")
        return "\n".join(lines)
