"""Working memory and turns: one buffer, two phases (docs/design.md §3.10).

* **in-flight** — ``working``: the current turn's asks, tool results and assistant text, visible to
  the next in-turn LLM call and never compacted by the context manager (the trimmer may drop whole
  old groups of it only after history is exhausted);
* **committed** — the :class:`~inspector.engine.archive.Archive`, whose covering-set projection is
  ``committed_messages``.

The HITL fix is kept: finalising a turn paused for approval still commits what it executed, and
``last_user_text`` is cleared at commit so a second finalize cannot duplicate the user row.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.engine.archive import Archive
from inspector.engine.history import call_ids
from inspector.engine.types import Message


class WorkingMemoryError(ValueError):
    """A tool result with no id and no open call to attach it to."""


@dataclass
class Conversation:
    """The per-agent conversation state the assembler reads (what the reference calls ctx)."""

    injected_context: list[str] = field(default_factory=list)
    memory_seeds: list[tuple[str, str]] = field(default_factory=list)
    system_message: Message | None = None  # an exact system row (e.g. a transcript's) used instead of the band
    archive: Archive = field(default_factory=Archive)
    working: list[Message] = field(default_factory=list)
    current_user: Message | None = None
    turn_index: int = 0
    open_call_id: str | None = None
    mutations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last_user_text(self) -> str:
        if self.current_user is None:
            return ""
        c = self.current_user.get("content")
        return c if isinstance(c, str) else ("" if c is None else json.dumps(c, default=str))

    @property
    def committed_messages(self) -> list[Message]:
        return self.archive.projection()

    def _log(self, action: str, **kw: Any) -> None:
        self.mutations.append({"action": action, "turn_index": self.turn_index, **kw})

    # -- turn lifecycle -------------------------------------------------------------------------
    def note_user_input(self, user: str | Message) -> None:
        """Start a turn. A dict is kept as the exact user row (so a replay can map it back)."""
        self._log("turn_start")
        self.current_user = dict(role="user", content=user) if isinstance(user, str) else user
        self.turn_index += 1
        self.working = []
        self.open_call_id = None
        self._log("wm_clear")

    def record(self, msg: Message) -> None:
        """Append one in-flight row exactly as given (an assistant message or a tool result)."""
        if msg.get("role") == "assistant" and msg.get("tool_calls"):
            ids = call_ids(msg)
            self.open_call_id = ids[0] if len(ids) == 1 else None
        elif msg.get("role") == "tool" and msg.get("tool_call_id") == self.open_call_id:
            self.open_call_id = None
        self.working.append(msg)
        self._log("wm_append", role=msg.get("role"), op="TOOL_CALL" if msg.get("role") == "tool" else "LLM_CALL")

    def record_tool_calls(self, calls: list[tuple[str, str, Any]], text: str = "") -> Message:
        """Record an ask: ``calls`` = [(id, name, arguments)], arguments JSON-encoded when not a string."""
        msg: Message = {"role": "assistant", "content": text, "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for cid, name, args in calls]}
        self.record(msg)
        return msg

    def record_tool_result(self, content: str, tool_call_id: str | None = None) -> Message | None:
        cid = tool_call_id or self.open_call_id
        if not cid:
            raise WorkingMemoryError("tool result has no tool_call_id and no call is open")
        last = self.working[-1] if self.working else None
        if last is not None and last.get("role") == "tool" and last.get("tool_call_id") == cid \
                and last.get("content") == content:
            return None  # already synced
        msg: Message = {"role": "tool", "tool_call_id": cid, "content": content}
        self.record(msg)
        return msg

    def record_text(self, text: str) -> Message | None:
        if not text or not text.strip():
            return None
        msg: Message = {"role": "assistant", "content": text}
        self.record(msg)
        return msg

    def commit_rows(self, text: str | None = None) -> list[Message]:
        """``note_agent_response`` minus the write-back: move the turn into the archive as one leaf."""
        rows: list[Message] = []
        if self.current_user is not None and self.last_user_text.strip():
            rows.append(self.current_user)
        self.current_user = None  # cleared: a second finalize of the same turn cannot duplicate it
        rows.extend(self.working)
        if text and text.strip():
            prev = rows[-1] if rows else (self.committed_messages[-1] if self.committed_messages else None)
            same = (prev is not None and prev.get("role") == "assistant" and not prev.get("tool_calls")
                    and isinstance(prev.get("content"), str) and prev["content"].strip() == text.strip())
            if not same:
                rows.append({"role": "assistant", "content": text})
        if rows:
            self.archive.add_leaf(self.turn_index, rows)
        self._log("turn_commit", committed_count=len(self.committed_messages), wm_count=len(self.working))
        self.working = []
        self.open_call_id = None
        return rows

    # -- persistence ----------------------------------------------------------------------------
    def export_state(self) -> dict[str, Any]:
        return {"archive": self.archive.snapshot(), "turn_index": self.turn_index,
                "working": copy.deepcopy(self.working), "open_call_id": self.open_call_id}

    def restore_state(self, state: Mapping[str, Any]) -> None:
        self.archive = Archive.load(state["archive"])
        self.turn_index = int(state.get("turn_index", 0))
        self.working = copy.deepcopy(list(state.get("working", [])))
        self.open_call_id = state.get("open_call_id")

    def clear_committed(self) -> None:
        self.archive = Archive()


class WorkingMemoryRegistry:
    """In-process store for ``spec.working_memory.persistent``: (session or context id, agent id) → state.

    A new bucket never inherits another bucket's state, even when the conversation object is reused.
    """

    def __init__(self) -> None:
        self._store: dict[tuple[str, str], dict[str, Any]] = {}

    def before_turn(self, conv: Conversation, key: str, agent_id: str, *, persistent: bool) -> None:
        saved = self._store.get((key, agent_id)) if persistent else None
        if saved is None:
            conv.clear_committed()
            conv.working = []
        else:
            conv.restore_state(saved)

    def after_finalize(self, conv: Conversation, key: str, agent_id: str, *, persistent: bool) -> None:
        if persistent:
            self._store[(key, agent_id)] = conv.export_state()

    def reset(self, key: str, agent_id: str) -> None:
        self._store.pop((key, agent_id), None)
