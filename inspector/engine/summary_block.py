"""The summary-block format: the one system message a summarising manager puts where the turns it folded
used to be, and which other tools (the stand-in summarizer, the replay's records, the incremental
assembly) recognise by its header line ``[Conversation summary — N earlier exchange(s)]``.

Building a block, telling one apart from any other message, and reading its body and its count all live
here, so the manager that writes blocks and the summarizers that read them share one definition.
"""

from __future__ import annotations

import re

from inspector.engine.types import Message

SUMMARY_PREFIX = "[Conversation summary — "
"""How a summary block's header line begins."""

__all__ = ["SUMMARY_PREFIX", "is_summary_block", "summary_block", "summary_body", "summary_turns"]


def summary_block(turns: int, text: str) -> Message:
    """The summary block for ``text`` standing in for ``turns`` earlier exchanges: a system message whose
    first line is the header (a data format other tools recognise by its prefix)."""
    return {"role": "system", "content": f"{SUMMARY_PREFIX}{turns} earlier exchange(s)]\n{text}"}


def is_summary_block(msg: Message) -> bool:
    """True when ``msg`` is a system message whose string content starts with the header."""
    if msg.get("role") != "system":  # most rows: one look-up
        return False
    c = msg.get("content")
    return isinstance(c, str) and c.startswith(SUMMARY_PREFIX)


def summary_body(msg: Message) -> str:
    """The text of a summary block without its header line ("" when there is no second line)."""
    c = str(msg.get("content") or "")
    return c.split("\n", 1)[1] if "\n" in c else ""


def summary_turns(msg: Message) -> int:
    """How many earlier exchanges a summary block says it covers (0 when its header has no count)."""
    m = re.match(re.escape(SUMMARY_PREFIX) + r"(\d+) ", str(msg.get("content") or ""))
    return int(m.group(1)) if m else 0
