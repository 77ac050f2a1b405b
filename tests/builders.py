"""Message builders shared by the tests, following docs/design.md §1 (messages, turns, tool-call groups).

Every call returns fresh dicts, so tests can rely on object identity (the engine keeps the same
dict objects for rows it passes through unchanged).
"""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]


def system(content: Any = "sys") -> Message:
    return {"role": "system", "content": content}


def user(content: Any = "hi") -> Message:
    return {"role": "user", "content": content}


def asst(content: Any = "ok") -> Message:
    """A plain (text-only) assistant message."""
    return {"role": "assistant", "content": content}


def call(cid: str | None, name: str = "f", args: str = "{}") -> dict[str, Any]:
    """One entry of ``tool_calls``; ``cid=None`` builds a call without an id."""
    c: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": args}}
    if cid is not None:
        c["id"] = cid
    return c


def ask(*ids: str, content: Any = "", name: str = "f", args: str = "{}") -> Message:
    """An assistant tool ask with one call per id (a parallel ask when several)."""
    return {"role": "assistant", "content": content, "tool_calls": [call(i, name, args) for i in ids]}


def tool(cid: str, content: Any = "result") -> Message:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def toolturn(cid: str, content: str = "result") -> list[Message]:
    """``[user "ask", assistant ask(id), tool(id, content), assistant "done"]``."""
    return [user("ask"), ask(cid), tool(cid, content), asst("done")]


def tool_group(cid: str, arg_len: int = 20) -> list[Message]:
    """An ask + its result with payloads of ``arg_len`` characters (the reference's budget tests)."""
    return [ask(cid, name="get_metrics", args="x" * arg_len), tool(cid, "y" * arg_len)]


def T(i: int, width: int = 0) -> list[Message]:  # noqa: N802 - the spec's name
    """A user turn ``[user "u<i>…", assistant "a<i>…"]``; ``width`` pads each content to that length."""
    return [user(f"u{i}".ljust(width, "x")), asst(f"a{i}".ljust(width, "x"))]


def roles(messages: list[Message]) -> list[Any]:
    return [m.get("role") for m in messages]


def result_ids(messages: list[Message]) -> list[Any]:
    """``tool_call_id`` of every tool row, in order."""
    return [m.get("tool_call_id") for m in messages if m.get("role") == "tool"]
