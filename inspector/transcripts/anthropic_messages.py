"""``anthropic``: a Messages API request ``{"model", "system", "messages", "tools"}``.

Mapping to chat-completions rows (one source message may yield several rows):
  * ``system`` (string or text blocks) → a leading ``system`` row (origin ``system``);
  * an assistant message → ONE row: its text blocks become ``content`` (``None`` when there is no
    text), its ``tool_use`` blocks become ``tool_calls`` in order, ``input`` serialised with
    ``json.dumps`` (default separators, key order kept). A parallel ask therefore stays one ask;
  * a user message → first one ``tool`` row per ``tool_result`` block (origin
    ``messages[i].content[k]``), then one ``user`` row with the remaining blocks if there are any.
    So the single message that answers N parallel calls becomes N tool rows, and a message mixing
    results and text becomes tool rows followed by a user row;
  * text-only content becomes a string when it is one block; images, thinking and unknown blocks
    keep the content as a list of parts (reported as ``non_text_content``);
  * ``is_error`` has no chat-completions field: the indices of such tool rows are listed in
    ``meta["error_results"]``.

The converter is shared with ``bashkit`` (same blocks, non-standard ``tool_result`` role).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from inspector.transcripts._common import (
    Builder,
    blocks_to_content,
    conversation_info,
    describe_validation_error,
    dumps_arguments,
    is_numeric_id,
    require_json,
    select,
)
from inspector.transcripts.model import STANDARD_ROLES, ConversationInfo, Message, Transcript, TranscriptError

NAME = "anthropic"

_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "document",
                               "server_tool_use", "web_search_tool_result"})


def _check_content(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for k, block in enumerate(value):
            if not isinstance(block, dict):
                raise ValueError(f"[{k}] must be an object (a content block)")
            if not isinstance(block.get("type"), str):
                raise ValueError(f"[{k}].type must be a string")
        return value
    raise ValueError("must be a string or a list of content blocks")


class _Message(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    role: str
    content: Any

    @field_validator("content")
    @classmethod
    def _content_shape(cls, value: Any) -> Any:
        return _check_content(value)


def _tool_id(value: Any) -> Any:
    """A string, or a number the Builder converts to a string and reports (Q19)."""
    if isinstance(value, str) or is_numeric_id(value):
        return value
    raise ValueError("must be a string")


class _Text(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    text: str


class _ToolUse(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    id: Any
    name: str
    input: dict[str, Any]

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: Any) -> Any:
        return _tool_id(value)


class _ToolResult(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    tool_use_id: Any
    content: Any = None
    is_error: bool | None = None

    @field_validator("tool_use_id")
    @classmethod
    def _id_shape(cls, value: Any) -> Any:
        return _tool_id(value)

    @field_validator("content")
    @classmethod
    def _content_shape(cls, value: Any) -> Any:
        return None if value is None else _check_content(value)


_BLOCK_MODELS: dict[str, type[BaseModel]] = {"text": _Text, "tool_use": _ToolUse, "tool_result": _ToolResult}


def _validate(model: type[BaseModel], value: Any, prefix: str) -> str | None:
    """None when valid, else a sentence naming the field under ``prefix``."""
    try:
        model.model_validate(value)
    except ValidationError as exc:
        loc, sentence = describe_validation_error(exc)
        return f"{prefix}.{sentence}" if prefix and loc else (f"{prefix} {sentence}" if prefix else sentence)
    return None


def convert_messages(raw: Sequence[Any], b: Builder, *, origin: str,
                     fail: Callable[[int, str], TranscriptError], error_results: list[int]) -> None:
    """Append the rows of Anthropic-style ``raw`` messages to ``b`` (see the module docstring).

    ``origin`` is the path of the message list in the source (``messages``); ``fail(i, detail)``
    builds the error for source message ``i``.
    """
    for i, m in enumerate(raw):
        where = f"{origin}[{i}]"
        if not isinstance(m, dict):
            raise fail(i, "must be an object with role and content")
        problem = _validate(_Message, m, "")
        if problem:
            raise fail(i, problem)
        role: str = m["role"]
        content = m["content"]
        usage = m.get("usage") if isinstance(m.get("usage"), dict) else None
        first_row = len(b.messages)
        if isinstance(content, str):
            b.add({"role": role, "content": content}, where, usage)
        else:
            for k, block in enumerate(content):
                model = _BLOCK_MODELS.get(block["type"])
                if model is not None:
                    problem = _validate(model, block, f"content[{k}]")
                    if problem:
                        raise fail(i, problem)
            if role == "assistant":
                _assistant(content, b, where, usage)
            else:
                _non_assistant(role, content, b, where, usage, error_results)
        if role not in STANDARD_ROLES and len(b.messages) > first_row:
            b.note("nonstandard_role", first_row, f"source role {role!r} is not a Messages API role"
                   + (" (its tool_result blocks became tool rows)" if b.messages[first_row]["role"] == "tool" else ""))


def _assistant(content: list[dict[str, Any]], b: Builder, where: str, usage: dict[str, Any] | None) -> None:
    calls = [{"id": blk["id"], "type": "function",
              "function": {"name": blk["name"], "arguments": dumps_arguments(blk["input"])}}
             for blk in content if blk["type"] == "tool_use"]
    rest = [blk for blk in content if blk["type"] != "tool_use"]
    msg: Message = {"role": "assistant", "content": blocks_to_content(rest)}
    if calls:
        msg["tool_calls"] = calls
    b.add(msg, where, usage)


def _non_assistant(role: str, content: list[dict[str, Any]], b: Builder, where: str,
                   usage: dict[str, Any] | None, error_results: list[int]) -> None:
    rest_at: list[int] = []
    for k, blk in enumerate(content):
        if blk["type"] != "tool_result":
            rest_at.append(k)
            continue
        value = blk.get("content")
        text = value if isinstance(value, str) else blocks_to_content(value or [])
        index = b.add({"role": "tool", "content": "" if text is None else text, "tool_call_id": blk["tool_use_id"]},
                      f"{where}.content[{k}]")
        if blk.get("is_error") is True:
            error_results.append(index)
    if rest_at or not content:
        if len(rest_at) == len(content):
            loc = where
        elif len(rest_at) == 1:
            loc = f"{where}.content[{rest_at[0]}]"
        else:
            loc = f"{where}.content[{','.join(map(str, rest_at))}]"
        b.add({"role": role, "content": blocks_to_content([content[k] for k in rest_at])}, loc, usage)


def count_rows(raw: Sequence[Any]) -> tuple[int, int]:
    """(rows, user rows) that :func:`convert_messages` yields, without validating (for listings)."""
    rows = users = 0
    for m in raw:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        role = m.get("role")
        if role == "assistant" or not isinstance(content, list):
            rows += 1
            users += role == "user"
            continue
        results = sum(1 for blk in content if isinstance(blk, dict) and blk.get("type") == "tool_result")
        rows += results
        if results < len(content) or not content:
            rows += 1
            users += role == "user"
    return rows, users


def convert_tools(raw: Any, fail: Callable[[str], TranscriptError]) -> list[dict[str, Any]] | None:
    """Anthropic tool definitions → OpenAI ``tools`` (``input_schema`` becomes ``parameters``).
    Server tools without a schema (``{"type": "web_search_…"}``) are kept as given. None stays None;
    a malformed list raises the :class:`TranscriptError` that ``fail`` makes."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise fail("tools must be a list")
    out: list[dict[str, Any]] = []
    for k, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise fail(f"tools[{k}] must be an object")
        if "input_schema" not in tool and "type" in tool:
            out.append(dict(tool))
            continue
        if not isinstance(tool.get("name"), str):
            raise fail(f"tools[{k}].name must be a string")
        schema = tool.get("input_schema", {})
        if not isinstance(schema, dict):
            raise fail(f"tools[{k}].input_schema must be an object")
        fn: dict[str, Any] = {"name": tool["name"]}
        if isinstance(tool.get("description"), str):
            fn["description"] = tool["description"]
        fn["parameters"] = schema
        out.append({"type": "function", "function": fn})
    return out


# ---------------------------------------------------------------------------------------------


def _scan(messages: list[Any]) -> tuple[bool, bool]:
    """(Anthropic markers, chat-completions markers) among the first messages."""
    anthropic = openai = False
    for m in messages[:500]:
        if not isinstance(m, dict):
            continue
        if m.get("role") in ("tool", "system", "developer") or "tool_calls" in m or "tool_call_id" in m:
            openai = True
        content = m.get("content")
        if isinstance(content, list):
            for blk in content:
                if isinstance(blk, dict):
                    t = blk.get("type")
                    if t in _ANTHROPIC_BLOCKS or (t == "image" and "source" in blk):
                        anthropic = True
    return anthropic, openai


def sniff(obj_or_text: Any, name: str) -> bool:
    """Messages API: a top-level ``system`` key, ``input_schema`` tools or Anthropic-only blocks,
    and nothing that only chat-completions has (``tool``/``system`` rows, ``tool_calls``)."""
    if isinstance(obj_or_text, dict) and isinstance(obj_or_text.get("messages"), list):
        anthropic, openai = _scan(obj_or_text["messages"])
        if openai:
            return False
        tools = obj_or_text.get("tools")
        if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools):
            return True
        return anthropic or "system" in obj_or_text
    if isinstance(obj_or_text, list) and obj_or_text and isinstance(obj_or_text[0], dict) and "role" in obj_or_text[0]:
        anthropic, openai = _scan(obj_or_text)
        return anthropic and not openai
    return False


def _layout(obj_or_text: Any, name: str) -> tuple[list[Any], dict[str, Any]]:
    obj = require_json(obj_or_text, name, "an Anthropic Messages request")
    if isinstance(obj, list):
        return obj, {}
    if isinstance(obj, dict) and isinstance(obj.get("messages"), list):
        return obj["messages"], obj
    raise TranscriptError(name, "expected an object with a 'messages' list (Anthropic Messages API)")


def _system_rows(system: Any, name: str) -> list[Message]:
    if system is None or system == "" or system == []:
        return []
    if isinstance(system, str):
        return [{"role": "system", "content": system}]
    if isinstance(system, list):
        for k, blk in enumerate(system):
            if not isinstance(blk, dict) or not isinstance(blk.get("type"), str):
                raise TranscriptError(name, f"system[{k}] must be a content block")
        return [{"role": "system", "content": blocks_to_content(system)}]
    raise TranscriptError(name, "system must be a string or a list of text blocks")


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in a Messages API request (the request is one conversation), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    messages, top = _layout(obj_or_text, name)
    rows, users = count_rows(messages)
    rows += len(_system_rows(top.get("system"), name))
    return [ConversationInfo(0, name, rows, users)]


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of a Messages API request as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    messages, top = _layout(obj_or_text, name)
    select(name, conversation, 1)
    b = Builder()
    for row in _system_rows(top.get("system"), name):
        b.add(row, "system")
    errors: list[int] = []
    convert_messages(messages, b, origin="messages", fail=lambda i, d: TranscriptError(name, d, index=i),
                     error_results=errors)
    tools = convert_tools(top.get("tools"), lambda d: TranscriptError(name, d))
    model = top.get("model")
    meta: dict[str, Any] = {"error_results": errors} if errors else {}
    return b.finish(format=NAME, path=path, tools=tools, model=model if isinstance(model, str) else None,
                    conversation=0, conversations=[conversation_info(0, name, b.messages)], meta=meta)
