"""``claude-code``: a Claude Code session log (``~/.claude/projects/<project>/<session>.jsonl``).

One JSON object per line. Conversation lines have ``type`` ``"user"`` or ``"assistant"`` and a
``message`` in the Anthropic Messages shape (``role``, ``content`` as a string or content blocks);
an assistant ``message`` is the API response, with ``id``, ``model`` and ``usage``
(``input_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``, ``output_tokens``).
Other line types (``summary`` titles, ``system`` events, bookkeeping) are skipped and counted in
``meta["skipped_entries"]``; so are ``isSidechain`` lines (a sub-agent's own conversation, which
the main model never saw).

Mapping to chat-completions rows, as for ``anthropic`` requests:
  * one API response is written as several consecutive ``assistant`` lines (one per content
    block) that repeat the same ``message.id`` and ``usage``: they become ONE assistant row (text
    blocks → ``content``, ``tool_use`` blocks → ``tool_calls``) whose usage is kept once, at that
    row (origin ``line N`` or ``lines N-M``). A response without an id is its own row;
  * a ``user`` line: one ``tool`` row per ``tool_result`` block (origin ``line N.content[k]``),
    then one ``user`` row with the remaining blocks if any;
  * API-error lines (``message.model == "<synthetic>"``) never reached the API: their row is kept,
    their zeroed usage is not, and their indices are listed in ``meta["synthetic_replies"]``.

A slash command is two user lines: the command (``<command-message>``/``<command-name>`` tags) and
its expansion right after it (``isMeta: true``); they become ONE user row whose content is the text
parts of both (origin ``lines N-M``; the rows are listed in ``meta["slash_commands"]``), so the
command counts as one user turn.

Claude Code's own compaction: newer logs write a ``system`` entry with ``subtype``
``compact_boundary`` (``compactMetadata``: ``trigger``, ``preTokens``) where the context was
compacted; older ones only a user line whose text begins "This session is being continued from a
previous conversation". Either starts a new context (the model saw the summary, not the rows
before it): the first row after a boundary, or the summary row, is listed in
``Transcript.compactions`` (observed, not replayed), once per compaction. The log does not record Claude Code's system prompt or its tool schemas, so
``meta["not_recorded"]`` says so (the provider's counts include them).
"""

from __future__ import annotations

import json
from typing import Any

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    blocks_to_content,
    conversation_info,
    dumps_arguments,
    first_jsonl_value,
    is_numeric_id,
    lines_or_document,
    select,
)
from inspector.transcripts.model import (
    ConversationInfo,
    Message,
    ObservedCompaction,
    Transcript,
    TranscriptError,
)

NAME = "claude-code"

COMPACTION_PREFIX = "This session is being continued from a previous conversation"
"""How Claude Code's compaction summary message begins."""

SYNTHETIC_MODEL = "<synthetic>"
_ENTRY_TYPES = frozenset({"user", "assistant"})


def _is_entry(value: Any) -> bool:
    return (isinstance(value, dict) and value.get("type") in _ENTRY_TYPES and isinstance(value.get("message"), dict)
            and ("sessionId" in value or "uuid" in value))


def _is_log_line(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str) and (
        "sessionId" in value or "leafUuid" in value or "uuid" in value)


def sniff(obj_or_text: Any, name: str) -> bool:
    """A JSON Lines file whose lines all carry a ``type`` and whose first 50 lines hold a ``user`` or
    ``assistant`` entry with Claude Code's ``sessionId``/``uuid`` envelope (bookkeeping lines such as
    ``summary`` or ``file-history-snapshot`` may come first), or one such line as a whole document."""
    if isinstance(obj_or_text, JsonlText):
        lines = obj_or_text.split("\n", 50)[:50]
        seen_entry = False
        for line in lines:
            s = line.strip()
            if not s:
                continue
            try:
                value = json.loads(s)
            except (json.JSONDecodeError, RecursionError):
                return False
            if not (isinstance(value, dict) and isinstance(value.get("type"), str)):
                return False  # bookkeeping lines (file-history-snapshot, progress, ...) carry a type too
            seen_entry = seen_entry or _is_entry(value)
        return seen_entry or _is_log_line(first_jsonl_value(obj_or_text))
    return _is_entry(obj_or_text)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b["text"] for b in content
                       if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
    return ""


BOUNDARY_SUBTYPE = "compact_boundary"
"""The ``subtype`` of the ``system`` entry newer Claude Code writes where it compacted the context."""

_COMMAND_TAGS = ("<command-message>", "<command-name>")


def _boundary_detail(value: dict[str, Any]) -> str:
    detail = "Claude Code compact_boundary entry"
    meta = value.get("compactMetadata")
    if isinstance(meta, dict):
        told = [f"{key} {meta[key]}" for key in ("trigger", "preTokens", "postTokens")
                if isinstance(meta.get(key), (str, int)) and not isinstance(meta.get(key), bool)]
        if told:
            detail += " (" + ", ".join(told) + ")"
    return detail


def _parts(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def _check_blocks(content: Any, name: str, line: int) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise TranscriptError(name, "message.content must be a string or a list of content blocks", line=line)
    for k, blk in enumerate(content):
        where = f"message.content[{k}]"
        if not isinstance(blk, dict) or not isinstance(blk.get("type"), str):
            raise TranscriptError(name, f"{where} must be a content block with a type", line=line)
        kind = blk["type"]
        if kind == "text" and not isinstance(blk.get("text"), str):
            raise TranscriptError(name, f"{where}.text must be a string", line=line)
        if kind == "tool_use":
            if not (isinstance(blk.get("id"), str) or is_numeric_id(blk.get("id"))):  # a number: converted (Q19)
                raise TranscriptError(name, f"{where}.id must be a string", line=line)
            for key, typ, word in (("name", str, "a string"), ("input", dict, "an object")):
                if not isinstance(blk.get(key), typ):
                    raise TranscriptError(name, f"{where}.{key} must be {word}", line=line)
        if kind == "tool_result" and not (isinstance(blk.get("tool_use_id"), str) or is_numeric_id(blk.get("tool_use_id"))):
            raise TranscriptError(name, f"{where}.tool_use_id must be a string", line=line)


class _Reply:
    """Consecutive assistant lines of one API response, merged."""

    def __init__(self, msg_id: str | None, first: int, message: dict[str, Any]) -> None:
        self.id = msg_id
        self.first = self.last = first
        self.blocks: list[dict[str, Any]] = []
        self.usage = message.get("usage") if isinstance(message.get("usage"), dict) else None
        self.model = message.get("model") if isinstance(message.get("model"), str) else None

    def add(self, line: int, message: dict[str, Any]) -> None:
        content = message["content"]
        if isinstance(content, str):
            self.blocks.append({"type": "text", "text": content})
        else:
            self.blocks.extend(content)
        self.last = line
        if isinstance(message.get("usage"), dict):
            self.usage = message["usage"]  # repeated per line; the last one is the response's final count


class _Session:
    """The rows of one session log, built line by line: :meth:`line` reads one log line, and
    :meth:`finish` closes the last reply and states what the log told (``meta``). Assistant lines
    of one response wait in ``reply`` until the response ends; a ``compact_boundary`` line waits in
    ``boundary`` for the next row; a slash command's row waits in ``command_row`` for its expansion."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.b = Builder()
        self.skipped: dict[str, int] = {}
        self.synthetic: list[int] = []
        self.errors: list[int] = []
        self.compactions: list[ObservedCompaction] = []
        self.models: list[str] = []
        self.reply: _Reply | None = None
        self.boundary: tuple[int, str] | None = None  # a compact_boundary line waiting for the next row
        self.command_row: int | None = None  # the row of a slash command line, while its expansion may follow
        self.merged_commands: list[int] = []

    def place_boundary(self, index: int) -> None:
        """Row ``index`` is the first after a waiting compaction boundary (if any): it starts the new context."""
        self.command_row = None
        if self.boundary is not None:
            self.compactions.append(ObservedCompaction(index, f"line {self.boundary[0]}", self.boundary[1]))
            self.boundary = None

    def flush(self) -> None:
        """Write the waiting reply (if any) as one assistant row: text blocks as content, tool_use blocks as calls."""
        r, self.reply = self.reply, None
        if r is None:
            return
        calls = [{"id": blk["id"], "type": "function",
                  "function": {"name": blk["name"], "arguments": dumps_arguments(blk["input"])}}
                 for blk in r.blocks if blk.get("type") == "tool_use"]
        rest = [blk for blk in r.blocks if blk.get("type") != "tool_use"]
        msg: Message = {"role": "assistant", "content": blocks_to_content(rest)}
        if calls:
            msg["tool_calls"] = calls
        origin = f"line {r.first}" if r.first == r.last else f"lines {r.first}-{r.last}"
        is_synthetic = r.model == SYNTHETIC_MODEL
        index = self.b.add(msg, origin, None if is_synthetic else r.usage)
        self.place_boundary(index)
        if is_synthetic:
            self.synthetic.append(index)
        elif r.model and r.model not in self.models:
            self.models.append(r.model)

    def line(self, lineno: int, value: Any) -> None:
        """Read one log line. Raises :class:`TranscriptError` (naming the line) when it is not a
        JSON object, or a conversation entry's ``message`` or its content blocks are malformed."""
        name = self.name
        if not isinstance(value, dict):
            raise TranscriptError(name, "expected a JSON object", line=lineno)
        kind = value.get("type")
        if kind == "system" and value.get("subtype") == BOUNDARY_SUBTYPE and value.get("isSidechain") is not True:
            self.flush()  # the reply before the boundary belongs to the old context
            self.boundary = (lineno, _boundary_detail(value))
        entry = isinstance(kind, str) and kind in _ENTRY_TYPES  # (a ``type`` that is no string names no entry)
        if not entry or value.get("isSidechain") is True:
            label = "sidechain" if entry else (kind if isinstance(kind, str) else "untyped")
            self.skipped[label] = self.skipped.get(label, 0) + 1
            return
        message = value.get("message")
        if not isinstance(message, dict):
            raise TranscriptError(name, f"a {kind!r} entry needs a 'message' object", line=lineno)
        if "content" not in message:
            raise TranscriptError(name, "message.content is missing", line=lineno)
        _check_blocks(message["content"], name, lineno)
        if kind == "assistant":
            msg_id = message.get("id") if isinstance(message.get("id"), str) else None
            if self.reply is None or msg_id is None or self.reply.id != msg_id:
                self.flush()
                self.reply = _Reply(msg_id, lineno, message)
            self.reply.add(lineno, message)
            return
        self.flush()
        self.user_line(lineno, value, message["content"])

    def user_line(self, lineno: int, value: dict[str, Any], content: Any) -> None:
        """A user line: one tool row per ``tool_result`` block, then one user row with the other blocks."""
        where = f"line {lineno}"
        blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        rest_at: list[int] = []
        for k, blk in enumerate(blocks):
            if blk["type"] != "tool_result":
                rest_at.append(k)
                continue
            value_ = blk.get("content")
            text = value_ if isinstance(value_, str) else blocks_to_content(value_ if isinstance(value_, list) else [])
            index = self.b.add({"role": "tool", "content": "" if text is None else text,
                                "tool_call_id": blk["tool_use_id"]},
                               f"{where}.content[{k}]" if not isinstance(content, str) else where)
            self.place_boundary(index)
            if blk.get("is_error") is True:
                self.errors.append(index)
        if rest_at or not blocks:
            whole = len(rest_at) == len(blocks)
            loc = where if whole else f"{where}.content[{','.join(map(str, rest_at))}]"
            row_content: Any = content if isinstance(content, str) else blocks_to_content([blocks[k] for k in rest_at])
            if value.get("isMeta") is True and whole and self.command_row is not None \
                    and self.command_row == len(self.b.messages) - 1:
                self.merge_command(lineno, row_content)
            else:
                self.user_row(row_content, loc, whole)

    def merge_command(self, lineno: int, row_content: Any) -> None:
        """A slash command's expansion: the same user turn as the command line before it."""
        row = self.command_row
        assert row is not None
        b = self.b
        first = b.origins[row].removeprefix("line ").split("-")[0]
        b.messages[row]["content"] = _parts(b.messages[row]["content"]) + _parts(row_content)
        b.origins[row] = f"lines {first}-{lineno}"
        self.merged_commands.append(row)
        self.command_row = None

    def user_row(self, row_content: Any, loc: str, whole: bool) -> None:
        """One user row; a slash command waits for its expansion, and a compaction (a waiting
        boundary, or Claude Code's summary text) is observed at this row."""
        row_text = _text_of(row_content).lstrip()
        index = self.b.add({"role": "user", "content": row_content}, loc)
        self.command_row = index if row_text.startswith(_COMMAND_TAGS) and whole else None
        summary = row_text.startswith(COMPACTION_PREFIX)
        if self.boundary is not None:
            detail = self.boundary[1] + ("; the summary entry follows" if summary else "")
            self.compactions.append(ObservedCompaction(index, f"line {self.boundary[0]}", detail))
            self.boundary = None
        elif summary:
            self.compactions.append(ObservedCompaction(index, loc, "Claude Code compaction summary "
                                                                   f"(the user entry begins {COMPACTION_PREFIX!r})"))

    def finish(self) -> dict[str, Any]:
        """Close the last reply; the importer's ``meta`` (with the first model under ``_model``)."""
        self.flush()
        meta: dict[str, Any] = {"not_recorded": ["system prompt", "tool schemas"]}
        for key, value in (("skipped_entries", dict(sorted(self.skipped.items()))),
                           ("synthetic_replies", self.synthetic), ("error_results", self.errors),
                           ("slash_commands", self.merged_commands)):
            if value:
                meta[key] = value
        if len(self.models) > 1:
            meta["models"] = self.models
        meta["_model"] = self.models[0] if self.models else None
        return meta


def _rows(obj_or_text: Any, name: str) -> tuple[Builder, dict[str, Any], list[ObservedCompaction]]:
    """The session's rows, its ``meta`` and the compactions observed in it (see the module docstring)."""
    session = _Session(name)
    for lineno, value in lines_or_document(obj_or_text, name):
        session.line(lineno, value)
    meta = session.finish()
    return session.b, meta, session.compactions


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in a Claude Code session log (the session is one conversation), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    b, _, _ = _rows(obj_or_text, name)
    return [conversation_info(0, name, b.messages)]


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of a Claude Code session log as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    select(name, conversation, 1)
    b, meta, compactions = _rows(obj_or_text, name)
    model = meta.pop("_model")
    t = b.finish(format=NAME, path=path, tools=None, model=model, conversation=0,
                 conversations=[conversation_info(0, name, b.messages)], meta=meta)
    t.compactions = compactions
    return t
