"""The importers' output types: one flat OpenAI-shape conversation plus where every row came from.

Why these shapes: the engine consumes OpenAI chat-completions dicts (docs/design.md §1.1) and a replay
must be able to point back at the source file for every message it shows (docs/design.md §5), so an
import keeps *every* message, in order, with an ``origin`` locator. What a source does oddly
(reused ids, results far from their call, roles the API would reject) is reported as an
:class:`Irregularity` and never repaired here: repair is the engine's job, and the inspector has
to show what the transcript really contained.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspector.errors import EXIT_USAGE, InspectorError

Message = dict[str, Any]
"""OpenAI chat-completions dict: ``role``, ``content`` (str | list of parts | None), ``tool_calls``
(``[{id, type: "function", function: {name, arguments: JSON string}}]``), ``tool_call_id``, ``name``.
Importers emit no other keys; ``content`` is always present (``None`` when the source had none)."""

STANDARD_ROLES: frozenset[str] = frozenset({"system", "developer", "user", "assistant", "tool"})
"""Roles the chat-completions API accepts today; any other role is kept and reported."""


@dataclass(frozen=True)
class Irregularity:
    """Something in the source a strict provider or pairing check would object to, kept as found.

    ``kind`` is one of: ``reused_tool_call_id``, ``result_far_from_call``, ``orphan_result``,
    ``duplicate_result``, ``unanswered_call``, ``truncated_after_tool``, ``nonstandard_role``,
    ``non_text_content``, ``tool_calls_on_non_assistant``, ``multiple_tool_call_ids``,
    ``synthetic_user_message``, ``tool_call_id_converted`` (a numeric id made a string, Q19). ``index`` is the message index in ``Transcript.messages`` (None
    when the finding is about the file as a whole).
    """

    kind: str
    index: int | None
    detail: str


@dataclass(frozen=True)
class ConversationInfo:
    """One conversation of a multi-conversation file; ``messages`` and ``user_turns`` count the
    imported (OpenAI-shape) rows, so they equal what selecting that conversation yields."""

    index: int
    label: str
    messages: int
    user_turns: int


@dataclass
class ObservedPayload:
    """A payload the source framework says it actually sent to the model (ground truth to compare
    a replay with). ``turn`` is the 0-based user turn of the selected conversation it was sent in,
    counted by ``user`` rows of ``Transcript.messages`` (None before the first user row)."""

    label: str
    turn: int | None
    messages: list[Message]
    tools: list[dict[str, Any]] | None
    model: str | None
    origin: str
    reply: int | None = None
    """Index in ``Transcript.messages`` of the reply the provider gave to this payload, when the
    source links them (a request/response log); None otherwise."""


@dataclass(frozen=True)
class ObservedCompaction:
    """A point where the source framework itself compacted the conversation: from ``index`` on,
    the model no longer saw the rows before it, only what this row says about them.

    ``index`` is the row (in ``Transcript.messages``) that starts the new context (e.g. Claude
    Code's "This session is being continued from a previous conversation…" user entry);
    ``origin`` locates it in the source; ``detail`` says how it was recognised."""

    index: int
    origin: str
    detail: str


@dataclass
class Transcript:
    """One imported conversation. ``origins[i]`` locates ``messages[i]`` in the source file;
    ``usage`` maps a message index to the provider-reported usage the file holds for it."""

    format: str
    path: str | None
    messages: list[Message]
    origins: list[str]
    tools: list[dict[str, Any]] | None
    model: str | None
    usage: dict[int, dict[str, Any]]
    irregularities: list[Irregularity]
    conversation: int = 0
    conversations: list[ConversationInfo] = field(default_factory=list)
    observed_payloads: list[ObservedPayload] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    compactions: list[ObservedCompaction] = field(default_factory=list)
    """Compactions the source framework performed (observed, not replayed), in row order."""


class TranscriptError(InspectorError, ValueError):
    """Bad or unsupported input. ``str()`` names the file and, when known, the line or message
    index, e.g. ``demo.json: message 12: tool_calls[0].function.arguments must be a string``.

    This is the only exception the importers raise for anything wrong with the input, so callers
    (CLI, app) can show it to the user as is.
    """

    def __init__(self, file: str | None, message: str, *, line: int | None = None,
                 index: int | None = None) -> None:
        self.file = file
        self.detail = message
        self.line = line
        self.index = index
        parts: list[str] = []
        if file:
            parts.append(file)
        if line is not None:
            parts.append(f"line {line}")
        elif index is not None:
            parts.append(f"message {index}")
        parts.append(message)
        super().__init__(": ".join(parts))

    def __reduce__(self) -> tuple[Any, ...]:  # keep picklable despite keyword-only arguments
        return (_rebuild_error, (self.file, self.detail, self.line, self.index, type(self)))


class TranscriptReadError(TranscriptError):
    """The file cannot be used at all: missing, unreadable, over the size limit, not UTF-8 text (a
    zip archive such as an Inspect AI ``.eval`` log). The CLI exits 2 for it, as for an unreadable
    manifest; content that was read but is invalid stays a :class:`TranscriptError` (exit 1)."""

    exit_status = EXIT_USAGE


def _rebuild_error(file: str | None, message: str, line: int | None, index: int | None,
                   kind: type[TranscriptError] = TranscriptError) -> TranscriptError:
    return kind(file, message, line=line, index=index)
