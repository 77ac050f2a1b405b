"""A deterministic offline stand-in for the ``llm`` summarizer: extractive, labelled, priced as an estimate.

Replays and demos without an API key still need a summary that behaves like one: this one keeps
the *sentences* of the folded messages that carry an identifier (:mod:`inspector.engine.identifiers`:
ids, emails, paths, times, quantities, ...) or a decision ("confirmed", "will", "cancel", ...),
and carries the previous summary's sentences forward, so a fact folded early survives later folds
as it would in a good model summary. When the kept sentences exceed ``max_chars``, sentences with
no identifier go first, then tool traffic, then the agent's words, then the user's (oldest first
within each). No model is called; the same input gives the same text,
byte for byte; the first line says it is a stand-in, and ``model`` is ``offline-stand-in``, so no
output can pass it off as a real summary.

Each call also records an *estimated* usage (prompt = the prompt the ``llm`` summarizer would send,
completion = the text, both by the character estimate), so a replay can price the summaries a real
model would have written at ``price_model``'s rates — an estimate, and labelled so where shown.
"""

from __future__ import annotations

import re
from typing import Any

from inspector.engine.identifiers import extract_identifiers, message_text
from inspector.engine.summarizers import PricedUsage
from inspector.engine.summary_block import is_summary_block, summary_body
from inspector.engine.types import Message

STANDIN_MODEL = "offline-stand-in"
STANDIN_LABEL = "[offline stand-in summary — not produced by a model]"

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[A-Z0-9#])|\n+")
_DECISION = re.compile(r"\b(decid\w*|confirm\w*|agree\w*|approv\w*|cancel\w*|refund\w*|book\w*|chose|chosen|"
                       r"will|must|should|need to|instead|resolved|escalat\w*|scheduled|deadline|prefer\w*)\b",
                       re.IGNORECASE)
_MAX_SENTENCE = 240


def _sentences(text: str) -> list[str]:
    out = []
    for s in _SENTENCE.split(text or ""):
        s = " ".join(s.split())
        if s:
            out.append(s if len(s) <= _MAX_SENTENCE else s[: _MAX_SENTENCE - 1] + "…")
    return out


def _carried(msg: Message) -> list[str]:
    """The kept sentences of a previous summary block (its ``- `` lines; any other summary's sentences)."""
    body = summary_body(msg)
    lines = body.splitlines()
    if lines and lines[0] == STANDIN_LABEL:
        return [ln[2:] for ln in lines if ln.startswith("- ")]
    return [f"earlier: {s}" for s in _sentences(body)]


def _rank(sentence: str) -> int:
    """Keep order under the size cap: what the user said outlasts the agent's words, which outlast
    tool traffic; a sentence with no identifier (a decision only) goes first."""
    if not extract_identifiers(sentence.split(": ", 1)[-1]):
        return 0
    who = sentence.split(":", 1)[0]
    return {"user": 3, "agent": 2, "earlier": 2}.get(who, 1)


def _who(msg: Message) -> str:
    role = msg.get("role")
    return {"user": "user", "assistant": "agent", "tool": "tool result"}.get(str(role), str(role))


class StandInSummarizer(PricedUsage):
    """The labelled offline stand-in for a summary model: an extractive summary of at most ``max_chars``
    characters, with usage estimated as a model call would report it (priced at ``price_model``'s
    rates)."""

    model = STANDIN_MODEL
    model_source = "stand-in"
    label = "stand-in"

    def __init__(self, max_chars: int = 2000, price_model: str | None = None) -> None:
        self.max_chars = max_chars
        self.price_model = price_model  # the summary model whose rates price the estimated usage
        self.calls = 0
        self.usage: list[dict[str, Any]] = []  # estimated, one entry per call

    def summarize(self, messages: list[Message]) -> str:
        """Label line, counts line, then ``- `` lines: carried-forward sentences, then new ones."""
        self.calls += 1
        kept: list[tuple[str, int]] = []  # (sentence, rank: dropped lowest first when over max_chars)
        seen: set[str] = set()

        def keep(sentence: str) -> None:
            if sentence not in seen:
                seen.add(sentence)
                kept.append((sentence, _rank(sentence)))

        users = 0
        for m in messages:
            if is_summary_block(m):
                for s in _carried(m):
                    keep(s)
                continue
            users += m.get("role") == "user"
            for s in _sentences(message_text(m)):
                if extract_identifiers(s) or _DECISION.search(s):
                    keep(f"{_who(m)}: {s}")
        size = sum(len(s) + 3 for s, _ in kept)
        while kept and size > self.max_chars:
            low = min(r for _, r in kept)
            drop = next(i for i, (_, r) in enumerate(kept) if r == low)  # the oldest of the lowest rank
            size -= len(kept.pop(drop)[0]) + 3
        lines = [STANDIN_LABEL, f"{len(messages)} message(s), {users} user message(s); "
                 f"{len(kept)} sentence(s) with identifiers or decisions kept."]
        lines += [f"- {s}" for s, _ in kept]
        text = "\n".join(lines)
        self.usage.append({"prompt_tokens": _estimate_prompt(messages), "completion_tokens": len(text) // 4 + 4,
                           "estimated": True})
        return text


def _estimate_prompt(messages: list[Message]) -> int:
    from inspector.engine.summarizers.llm import build_prompt
    from inspector.engine.tokens import EstimateCounter

    return EstimateCounter().count(build_prompt(messages))
