"""``openai``: chat-completions messages, the engine's own shape.

Accepted layouts:
  * a JSON array of messages (origin ``[i]``);
  * an object ``{"messages": [...], "tools": [...], "model": ...}`` (origin ``messages[i]``);
  * JSON Lines, one message per line (origin ``line N``; errors name the line);
  * JSON Lines in the fine-tuning layout, one ``{"messages", "tools"}`` conversation per line.

Messages are user-written, so they are validated with pydantic (strict: ``arguments`` must already
be a JSON string) and errors name the field. Validation only checks; the output dicts are built
from the input values, so nothing is coerced. Keys outside the chat-completions shape are dropped
and counted in ``meta["dropped_fields"]``; a message-level ``usage`` object goes to
``Transcript.usage``. Unknown roles are kept and reported, not rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, NotRequired

from pydantic import AfterValidator, BaseModel, ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic needs this TypedDict before Python 3.12

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    conversation_info,
    describe_validation_error,
    first_jsonl_value,
    jsonl_values,
    require_json,
    select,
)
from inspector.transcripts.model import ConversationInfo, Message, Transcript, TranscriptError

NAME = "openai"

_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})


def _check_content(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        for k, part in enumerate(value):
            if not isinstance(part, dict):
                raise ValueError(f"[{k}] must be an object (a content part)")
        return value
    raise ValueError("must be a string, a list of content parts or null")


# TypedDicts, not BaseModels: the rows are checked and kept as the plain dicts every importer produces.
_STRICT = ConfigDict(strict=True, extra="ignore")


@with_config(_STRICT)
class _Function(TypedDict):
    name: str
    arguments: str


@with_config(_STRICT)
class _ToolCall(TypedDict):
    id: str | int  # an integer id is converted to a string at import and reported (Q19)
    type: NotRequired[str]
    function: _Function


@with_config(_STRICT)
class _Message(TypedDict):
    role: str
    content: NotRequired[Annotated[Any, AfterValidator(_check_content)]]
    tool_calls: NotRequired[list[_ToolCall] | None]
    tool_call_id: NotRequired[str | int | None]
    name: NotRequired[str | None]


class _ToolFunction(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None


class _Tool(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")
    type: str
    function: _ToolFunction | None = None


_MESSAGES = TypeAdapter(list[_Message])
_TOOLS = TypeAdapter(list[_Tool])


def normalize_messages(raw: Sequence[Any], fail: Callable[[int, str], TranscriptError]
                       ) -> tuple[list[Message], dict[int, dict[str, Any]], dict[str, int]]:
    """Validate chat-completions messages and return (messages, usage by index, dropped keys).

    ``fail(i, detail)`` builds the error for message ``i`` so each caller can name it its own way
    (a JSONL line, an index, a path inside a larger file). Shared by every importer whose source
    embeds exact chat-completions messages (tau-bench, mas-lab).
    """
    try:
        _MESSAGES.validate_python(raw)
    except ValidationError as exc:
        loc, sentence = describe_validation_error(exc, skip=1)
        index = loc[0] if loc and isinstance(loc[0], int) else 0
        if len(loc) == 1:
            sentence = "must be an object with a role" if not isinstance(raw[index], dict) else sentence
        raise fail(index, sentence) from None
    out: list[Message] = []
    usage: dict[int, dict[str, Any]] = {}
    dropped: dict[str, int] = {}
    for i, m in enumerate(raw):
        role = m["role"]
        msg: Message = {"role": role, "content": m.get("content")}
        calls = m.get("tool_calls")
        if calls:
            msg["tool_calls"] = [
                {"id": c["id"], "type": c.get("type", "function"),
                 "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}
                for c in calls
            ]
        tcid = m.get("tool_call_id")
        if role == "tool" and not tcid:
            raise fail(i, "tool result without tool_call_id")
        if tcid is not None:
            msg["tool_call_id"] = tcid
        if m.get("name") is not None:
            msg["name"] = m["name"]
        for key in m:
            if key not in _MESSAGE_KEYS:
                if key == "usage" and isinstance(m[key], dict):
                    usage[i] = dict(m[key])
                else:
                    dropped[key] = dropped.get(key, 0) + 1
        out.append(msg)
    return out, usage, dropped


def normalize_tools(raw: Any, fail: Callable[[str], TranscriptError]) -> list[dict[str, Any]] | None:
    """Validate an OpenAI ``tools`` array (kept as given: it is already the engine's shape; None
    stays None). A malformed array raises the :class:`TranscriptError` that ``fail`` makes."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise fail("tools must be a list")
    try:
        _TOOLS.validate_python(raw)
    except ValidationError as exc:
        _, sentence = describe_validation_error(exc)
        raise fail(f"tools{sentence if sentence.startswith('[') else ' ' + sentence}") from None
    return [dict(t) for t in raw]


# ---------------------------------------------------------------------------------------------
# sniff / conversations / parse


def _looks_like_message(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("role"), str)


def sniff(obj_or_text: Any, name: str) -> bool:
    """Chat-completions: a list of role dicts, ``{"messages": [...]}``, or role-per-line JSONL."""
    if isinstance(obj_or_text, JsonlText):
        first = first_jsonl_value(obj_or_text)
        return _looks_like_message(first) or (isinstance(first, dict) and isinstance(first.get("messages"), list))
    if isinstance(obj_or_text, list):
        return bool(obj_or_text) and _looks_like_message(obj_or_text[0])
    if isinstance(obj_or_text, dict):
        return isinstance(obj_or_text.get("messages"), list) or _looks_like_message(obj_or_text)
    return False


class _Conv:
    """One conversation located in the source: raw messages, how to name rows and errors."""

    def __init__(self, label: str, raw: list[Any], origin: Callable[[int], str],
                 fail: Callable[[int, str], TranscriptError], tools: Any = None, model: Any = None,
                 tools_fail: Callable[[str], TranscriptError] | None = None) -> None:
        self.label = label
        self.raw = raw
        self.origin = origin
        self.fail = fail
        self.tools = tools
        self.model = model
        self.tools_fail = tools_fail
        self.ignored: list[str] = []  # top-level keys of the object form that are not imported


def _conversations(obj_or_text: Any, name: str) -> list[_Conv]:
    def by_index(i: int, detail: str) -> TranscriptError:
        return TranscriptError(name, detail, index=i)

    if isinstance(obj_or_text, JsonlText) or (_looks_like_message(obj_or_text)):
        rows = jsonl_values(obj_or_text, name) if isinstance(obj_or_text, JsonlText) else [(1, obj_or_text)]
        if rows and isinstance(rows[0][1], dict) and "messages" in rows[0][1] and "role" not in rows[0][1]:
            return [_line_conversation(name, lineno, value) for lineno, value in rows]
        lines = [ln for ln, _ in rows]
        return [_Conv(name, [v for _, v in rows], lambda i: f"line {lines[i]}",
                      lambda i, d: TranscriptError(name, d, line=lines[i]))]
    obj = require_json(obj_or_text, name, "chat-completions messages")
    if isinstance(obj, list):
        return [_Conv(name, obj, lambda i: f"[{i}]", by_index)]
    if isinstance(obj, dict) and "messages" in obj:
        msgs = obj["messages"]
        if not isinstance(msgs, list):
            raise TranscriptError(name, "messages must be a list")
        model = obj.get("model")
        conv = _Conv(name, msgs, lambda i: f"messages[{i}]", by_index, obj.get("tools"),
                     model if isinstance(model, str) else None, lambda d: TranscriptError(name, d))
        conv.ignored = sorted(k for k in obj if k not in ("messages", "tools", "model"))
        return [conv]
    raise TranscriptError(name, "expected a list of chat-completions messages, an object with "
                                "'messages', or JSON Lines with one message per line")


def _line_conversation(name: str, lineno: int, value: Any) -> _Conv:
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        raise TranscriptError(name, "expected an object with a 'messages' list (one conversation per line)",
                              line=lineno)
    model = value.get("model")
    return _Conv(f"line {lineno}", value["messages"], lambda i: f"line {lineno}.messages[{i}]",
                 lambda i, d: TranscriptError(name, f"messages[{i}]: {d}", line=lineno),
                 value.get("tools"), model if isinstance(model, str) else None,
                 lambda d: TranscriptError(name, d, line=lineno))


def _infos(convs: list[_Conv]) -> list[ConversationInfo]:
    return [conversation_info(k, c.label, [m for m in c.raw if isinstance(m, dict)]) for k, c in enumerate(convs)]


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in chat-completions messages (one per conversation of the file (module docstring)), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    return _infos(_conversations(obj_or_text, name))


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of chat-completions messages as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    convs = _conversations(obj_or_text, name)
    k = select(name, conversation, len(convs))
    conv = convs[k]
    messages, usage, dropped = normalize_messages(conv.raw, conv.fail)
    tools = normalize_tools(conv.tools, conv.tools_fail or (lambda d: TranscriptError(name, d)))
    b = Builder()
    b.extend(messages, map(conv.origin, range(len(messages))), usage)
    meta: dict[str, Any] = {}
    if dropped:
        meta["dropped_fields"] = dict(sorted(dropped.items()))
    if conv.ignored:
        meta["ignored_keys"] = conv.ignored
    return b.finish(format=NAME, path=path, tools=tools, model=conv.model, conversation=k,
                    conversations=_infos(convs), meta=meta)
