"""History structure: user turns and tool-call groups (docs/design.md §1.2, §1.3).

A *user turn* is the unit of recency for every context manager; a *tool-call group* (an ask plus
the contiguous results answering it) is the atomic unit for the trimmer and for stack slicing.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.engine.types import Message


def is_ask(msg: Message) -> bool:
    return msg.get("role") == "assistant" and bool(msg.get("tool_calls"))


def call_ids(msg: Message) -> list[str]:
    """Ids of an ask's calls in declaration order; calls without an id are ignored by pairing."""
    out: list[str] = []
    calls = msg.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict):
            cid = call.get("id")
            if isinstance(cid, str) and cid:
                out.append(cid)
    return out


def split_user_turns(messages: Sequence[Message]) -> list[list[Message]]:
    """Leading non-user rows form one preamble group (it counts as a turn); each ``user`` row opens
    a group holding it and everything up to the next ``user`` row."""
    groups: list[list[Message]] = []
    for msg in messages:
        if msg.get("role") == "user" or not groups:
            groups.append([msg])
        else:
            groups[-1].append(msg)
    return groups


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Start index of every user turn (same grouping as :func:`split_user_turns`)."""
    starts: list[int] = []
    for i, msg in enumerate(messages):
        if msg.get("role") == "user" or not starts:
            starts.append(i)
    return starts


def start_of_tool_group(messages: Sequence[Message], i: int) -> int:
    """Clamp ``i`` into range, then step back over ``tool`` rows to the ask (or first non-tool row)."""
    if not messages:
        return 0
    i = max(0, min(i, len(messages) - 1))
    while i > 0 and messages[i].get("role") == "tool":
        i -= 1
    return i


def leading_group_size(messages: Sequence[Message], start: int = 0) -> int:
    """Size of the group starting at ``start``: an ask plus the whole run of ``tool`` rows after it, else 1.

    The run is the pairing repair's unit too (a mislabelled row in it is rebound or dropped as part
    of that ask's round), so trimming whole groups never leaves a result whose ask has gone."""
    if start >= len(messages):
        return 0
    if not is_ask(messages[start]):
        return 1
    j = start + 1
    while j < len(messages) and messages[j].get("role") == "tool":
        j += 1
    return j - start


def flatten(groups: Sequence[Sequence[Message]]) -> list[Message]:
    return [m for g in groups for m in g]
