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


def _rows(obj_or_text: Any, name: str) -> tuple[Builder, dict[str, Any], list[ObservedCompaction]]:
    rows = lines_or_document(obj_or_text, name)
    b = Builder()
    skipped: dict[str, int] = {}
    synthetic: list[int] = []
    errors: list[int] = []
    compactions: list[ObservedCompaction] = []
    models: list[str] = []
    reply: _Reply | None = None
    boundary: tuple[int, str] | None = None  # a compact_boundary line waiting for the next row
    command_row: int | None = None  # the row of a slash command line, while its expansion may follow
    merged_commands: list[int] = []

    def place_boundary(index: int) -> None:
        nonlocal boundary, command_row
        command_row = None
        if boundary is not None:
            compactions.append(ObservedCompaction(index, f"line {boundary[0]}", boundary[1]))
            boundary = None

    def flush() -> None:
        nonlocal reply
        if reply is None:
            return
        r, reply = reply, None
        calls = [{"id": blk["id"], "type": "function",
                  "function": {"name": blk["name"], "arguments": dumps_arguments(blk["input"])}}
                 for blk in r.blocks if blk.get("type") == "tool_use"]
        rest = [blk for blk in r.blocks if blk.get("type") != "tool_use"]
        msg: Message = {"role": "assistant", "content": blocks_to_content(rest)}
        if calls:
            msg["tool_calls"] = calls
        origin = f"line {r.first}" if r.first == r.last else f"lines {r.first}-{r.last}"
        is_synthetic = r.model == SYNTHETIC_MODEL
        index = b.add(msg, origin, None if is_synthetic else r.usage)
        place_boundary(index)
        if is_synthetic:
            synthetic.append(index)
        elif r.model and r.model not in models:
            models.append(r.model)

    for lineno, value in rows:
        if not isinstance(value, dict):
            raise TranscriptError(name, "expected a JSON object", line=lineno)
        kind = value.get("type")
        if kind == "system" and value.get("subtype") == BOUNDARY_SUBTYPE and value.get("isSidechain") is not True:
            flush()  # the reply before the boundary belongs to the old context
            boundary = (lineno, _boundary_detail(value))
        if kind not in _ENTRY_TYPES or value.get("isSidechain") is True:
            label = "sidechain" if kind in _ENTRY_TYPES else (kind if isinstance(kind, str) else "untyped")
            skipped[label] = skipped.get(label, 0) + 1
            continue
        message = value.get("message")
        if not isinstance(message, dict):
            raise TranscriptError(name, f"a {kind!r} entry needs a 'message' object", line=lineno)
        if "content" not in message:
            raise TranscriptError(name, "message.content is missing", line=lineno)
        content = message["content"]
        _check_blocks(content, name, lineno)
        if kind == "assistant":
            msg_id = message.get("id") if isinstance(message.get("id"), str) else None
            if reply is None or msg_id is None or reply.id != msg_id:
                flush()
                reply = _Reply(msg_id, lineno, message)
            reply.add(lineno, message)
            continue
        flush()
        where = f"line {lineno}"
        if isinstance(content, str):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": content}]
        else:
            blocks = list(content)
        rest_at: list[int] = []
        for k, blk in enumerate(blocks):
            if blk["type"] != "tool_result":
                rest_at.append(k)
                continue
            value_ = blk.get("content")
            text = value_ if isinstance(value_, str) else blocks_to_content(value_ if isinstance(value_, list) else [])
            index = b.add({"role": "tool", "content": "" if text is None else text, "tool_call_id": blk["tool_use_id"]},
                          f"{where}.content[{k}]" if not isinstance(content, str) else where)
            place_boundary(index)
            if blk.get("is_error") is True:
                errors.append(index)
        if rest_at or not blocks:
            rest = [blocks[k] for k in rest_at]
            loc = where if len(rest_at) == len(blocks) else f"{where}.content[{','.join(map(str, rest_at))}]"
            row_content: Any = content if isinstance(content, str) else blocks_to_content(rest)
            row_text = _text_of(row_content).lstrip()
            if (value.get("isMeta") is True and command_row is not None and command_row == len(b.messages) - 1
                    and len(rest_at) == len(blocks)):
                # a slash command's expansion: the same user turn as the command line before it
                first = b.origins[command_row].removeprefix("line ").split("-")[0]
                b.messages[command_row]["content"] = _parts(b.messages[command_row]["content"]) + _parts(row_content)
                b.origins[command_row] = f"lines {first}-{lineno}"
                merged_commands.append(command_row)
                command_row = None
                continue
            index = b.add({"role": "user", "content": row_content}, loc)
            command_row = index if row_text.startswith(_COMMAND_TAGS) and len(rest_at) == len(blocks) else None
            summary = row_text.startswith(COMPACTION_PREFIX)
            if boundary is not None:
                detail = boundary[1] + ("; the summary entry follows" if summary else "")
                compactions.append(ObservedCompaction(index, f"line {boundary[0]}", detail))
                boundary = None
            elif summary:
                compactions.append(ObservedCompaction(index, loc, "Claude Code compaction summary "
                                                                  f"(the user entry begins {COMPACTION_PREFIX!r})"))
            continue
    flush()
    meta: dict[str, Any] = {"not_recorded": ["system prompt", "tool schemas"]}
    if skipped:
        meta["skipped_entries"] = dict(sorted(skipped.items()))
    if synthetic:
        meta["synthetic_replies"] = synthetic
    if errors:
        meta["error_results"] = errors
    if merged_commands:
        meta["slash_commands"] = merged_commands
    if len(models) > 1:
        meta["models"] = models
    meta["_model"] = models[0] if models else None
    return b, meta, compactions


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    b, _, _ = _rows(obj_or_text, name)
    return [conversation_info(0, name, b.messages)]


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    select(name, conversation, 1)
    b, meta, compactions = _rows(obj_or_text, name)
    model = meta.pop("_model")
    t = b.finish(format=NAME, path=path, tools=None, model=model, conversation=0,
                 conversations=[conversation_info(0, name, b.messages)], meta=meta)
    t.compactions = compactions
    return t
