"""Tool-call ids as providers take them: strings (docs/design.md Q19), one rule for every door.

A number used as a tool-call id (``7``, ``7.0``; never a bool) becomes its string form (``"7"``)
wherever rows enter: at import (every transcript format) and at the engine's boundary
(``ContextEngine.record``), and each conversion is reported. The final check refuses any other
non-string id, so an id the doors did not convert never reaches a provider.
"""

from __future__ import annotations

from typing import Any

__all__ = ["id_text", "is_numeric_id", "stringify_ids"]


def id_text(value: Any) -> str | None:
    """The string form of a non-string scalar id (``7`` → ``"7"``, ``7.0`` → ``"7"``); None when it
    is not one (a string, a bool, None, anything else)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def is_numeric_id(value: Any) -> bool:
    """True for a number used as a tool-call id (not a bool)."""
    return id_text(value) is not None


def stringify_ids(msg: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``msg`` with its numeric call ids and ``tool_call_id`` as strings, and what was converted
    (``["7 → '7'"]``). The row itself is never changed: a converted row is a copy (the caller's dict
    stays as given); an unconverted one is returned as is, with an empty list."""
    calls = msg.get("tool_calls")
    tcid = msg.get("tool_call_id")
    if tcid is None or type(tcid) is str:  # the usual row: nothing to convert, read once (a loop, not a generator)
        if not calls:
            return msg, []
        if type(calls) is list:
            for c in calls:
                if type(c) is not dict or type(c.get("id")) is not str:
                    break
            else:
                return msg, []
    changed: list[str] = []
    out = msg
    if isinstance(calls, list) and any(isinstance(c, dict) and id_text(c.get("id")) is not None for c in calls):
        new_calls = []
        for call in calls:
            text = id_text(call.get("id")) if isinstance(call, dict) else None
            if text is not None:
                changed.append(f"{call['id']!r} → {text!r}")
                call = {**call, "id": text}
            new_calls.append(call)
        out = {**out, "tool_calls": new_calls}
    text = id_text(msg.get("tool_call_id"))
    if text is not None:
        changed.append(f"tool_call_id {msg['tool_call_id']!r} → {text!r}")
        out = {**out, "tool_call_id": text}
    return out, changed
