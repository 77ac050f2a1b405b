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

    @property
    def last_user_text(self) -> str:
        """The current user row's content as text (JSON for structured content; empty when there is none)."""
        if self.current_user is None:
            return ""
        c = self.current_user.get("content")
        return c if type(c) is str or isinstance(c, str) else ("" if c is None else json.dumps(c, default=str))

    @property
    def committed_messages(self) -> list[Message]:
        """The committed log the next call sees (the archive's projection)."""
        return self.archive.projection()

    # -- turn lifecycle -------------------------------------------------------------------------
    def note_user_input(self, user: str | Message) -> None:
        """Start a turn. A dict is kept as the exact user row (so a replay can map it back)."""
        self.current_user = dict(role="user", content=user) if isinstance(user, str) else user
        self.turn_index += 1
        self.working = []
        self.open_call_id = None

    def record(self, msg: Message) -> None:
        """Append one in-flight row exactly as given (an assistant message or a tool result)."""
        role = msg.get("role")
        if role == "assistant":
            if msg.get("tool_calls"):
                ids = call_ids(msg)
                self.open_call_id = ids[0] if len(ids) == 1 else None
        elif role == "tool" and self.open_call_id is not None and msg.get("tool_call_id") == self.open_call_id:
            self.open_call_id = None
        self.working.append(msg)

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
        self.working = []
        self.open_call_id = None
        return rows

    # -- persistence ----------------------------------------------------------------------------
    def export_state(self) -> dict[str, Any]:
        """The state to persist between processes: the archive's snapshot, the turn index, working memory and
        the open call id."""
        return {"archive": self.archive.snapshot(), "turn_index": self.turn_index,
                "working": copy.deepcopy(self.working), "open_call_id": self.open_call_id}

    def restore_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`export_state` gave. Raises :class:`~inspector.engine.archive.ArchiveError` for
        a snapshot that does not load."""
        self.archive = Archive.load(state["archive"])
        self.turn_index = int(state.get("turn_index", 0))
        self.working = copy.deepcopy(list(state.get("working", [])))
        self.open_call_id = state.get("open_call_id")

    def clear_committed(self) -> None:
        """Forget the committed log (a new, empty archive)."""
        self.archive = Archive()
