"""``openai-log``: a log of chat-completions calls, one call per JSON line: this project's own simple
format (no public tool writes exactly this envelope; real logs are read by ``litellm``,
``otel-genai``, ``inspect-ai``, ``openhands`` and ``claude-code``). It is kept because it is the
smallest log pairing a request with its usage (the bundled sample and the ``calibrate`` example).

Each line is ``{"request": <chat-completions request body>, "response": <chat completion>}``:
the request as sent (``model``, ``messages``, ``tools``) and the response as received
(``choices[0].message``, ``usage.prompt_tokens`` …). The two inner objects are the OpenAI API's
own; the ``request``/``response`` envelope is the minimal pairing a proxy or an SDK hook writes.

Mapping: calls are read in order and every request that *extends* the conversation so far (its
``messages`` begin with every row already imported) continues it: its new messages are appended
(origin ``line N.request.messages[j]``), then the reply (origin ``line N.response.choices[0].message``)
with the response's ``usage`` kept at the reply's row. A request that does not extend it starts a
new conversation (a file may hold many sessions). Every request is also kept as an
:class:`ObservedPayload` (label ``request line N``, ``reply`` = the reply's row): the exact
payload the provider counted, so a calibration compares like with like. Message validation is the
``openai`` importer's (:func:`normalize_messages`), so errors name the line and field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    conversation_info,
    first_jsonl_value,
    lines_or_document,
    select,
)
from inspector.transcripts.model import ConversationInfo, Message, ObservedPayload, Transcript, TranscriptError
from inspector.transcripts.openai_chat import normalize_messages, normalize_tools

NAME = "openai-log"


def _is_call(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("request"), dict)
            and isinstance(value["request"].get("messages"), list) and isinstance(value.get("response"), dict))


def sniff(obj_or_text: Any, name: str) -> bool:
    """JSON Lines (or one object) of ``{"request": {"messages": [...]}, "response": {...}}``."""
    if isinstance(obj_or_text, JsonlText):
        return _is_call(first_jsonl_value(obj_or_text))
    return _is_call(obj_or_text)


@dataclass
class LoggedCall:
    """One logged model call: the request's rows, tools and model, the reply row and its usage;
    ``line`` locates it (origins begin ``line N``)."""

    line: int
    messages: list[Message]
    tools: list[dict[str, Any]] | None
    model: str | None
    reply: Message
    usage: dict[str, Any] | None
    request: str = "request"  # origin of the request inside the line ("" = the line itself)
    reply_at: str = "response.choices[0].message"  # origin of the reply inside the line
    key: str = ""  # calls with different keys never share a conversation


@dataclass
class CallChain:
    """Consecutive calls each of whose requests extends the conversation so far."""

    calls: list[LoggedCall] = field(default_factory=list)
    rows: int = 0  # messages imported so far (prefix length)
    flat: list[Message] = field(default_factory=list)

    @property
    def label(self) -> str:
        """How the chain is named in a chooser: the line of its call, or its first and last lines."""
        first, last = self.calls[0].line, self.calls[-1].line
        return f"line {first}" if first == last else f"lines {first}-{last}"


def chain_calls(calls: list[LoggedCall]) -> list[CallChain]:
    """Calls in order → conversations: a call continues the latest conversation of its ``key``
    when its request begins with every row of it, else it starts a new one."""
    chains: list[CallChain] = []
    latest: dict[str, CallChain] = {}
    for call in calls:
        cur = latest.get(call.key)
        if cur is None or call.messages[: cur.rows] != cur.flat or len(call.messages) < cur.rows:
            cur = CallChain()
            chains.append(cur)
            latest[call.key] = cur
        cur.calls.append(call)
        cur.flat = [*call.messages, call.reply]
        cur.rows = len(cur.flat)
    return chains


def build_chain(chains: list[CallChain], conversation: int, *, format: str, name: str, path: str | None,
                meta: dict[str, Any] | None = None) -> Transcript:
    """The selected conversation: new request rows then the reply per call, every request kept as
    the observed payload of its reply, usage at the reply's row."""
    k = select(name, conversation, len(chains))
    chain = chains[k]
    b = Builder()
    observed: list[ObservedPayload] = []
    users = 0
    for call in chain.calls:
        where = f"line {call.line}"
        request = f"{where}.{call.request}" if call.request else where
        for j in range(len(b.messages), len(call.messages)):
            msg = call.messages[j]
            users += msg["role"] == "user"
            b.add(msg, f"{request}.messages[{j}]")
        at = b.add(call.reply, f"{where}.{call.reply_at}", call.usage)
        observed.append(ObservedPayload(label=f"request {where}", turn=users - 1 if users else None,
                                        messages=call.messages, tools=call.tools, model=call.model,
                                        origin=request, reply=at))
    models = list(dict.fromkeys(c.model for c in chain.calls if c.model))
    tools = next((c.tools for c in reversed(chain.calls) if c.tools is not None), None)
    info: dict[str, Any] = {"calls": len(chain.calls), **(meta or {})}
    if len(models) > 1:
        info["models"] = models
    infos = [conversation_info(n, c.label, c.flat) for n, c in enumerate(chains)]
    return b.finish(format=format, path=path, tools=tools, model=models[0] if models else None, conversation=k,
                    conversations=infos, meta=info, observed=observed)


def _read_call(line: int, value: Any, name: str) -> LoggedCall:
    def fail(detail: str) -> TranscriptError:
        return TranscriptError(name, detail, line=line)

    if not isinstance(value, dict):
        raise fail("expected an object with 'request' and 'response'")
    req, resp = value.get("request"), value.get("response")
    if not isinstance(req, dict):
        raise fail("request must be an object (the chat-completions request body)")
    if not isinstance(req.get("messages"), list):
        raise fail("request.messages must be a list")
    if not isinstance(resp, dict):
        raise fail("response must be an object (the chat completion)")
    msgs: Callable[[int, str], TranscriptError] = lambda i, d: fail(f"request.messages[{i}]: {d}")  # noqa: E731
    messages, _, _ = normalize_messages(req["messages"], msgs)
    tools = normalize_tools(req.get("tools"), lambda d: fail(f"request.{d}"))
    choices = resp.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
            or not isinstance(choices[0].get("message"), dict):
        raise fail("response.choices[0].message is missing (a failed call has no reply to import)")
    raw_reply = dict(choices[0]["message"])
    raw_reply.setdefault("role", "assistant")
    replies, _, _ = normalize_messages([raw_reply], lambda i, d: fail(f"response.choices[0].message: {d}"))
    usage = resp.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise fail("response.usage must be an object")
    model = req.get("model") if isinstance(req.get("model"), str) else (
        resp.get("model") if isinstance(resp.get("model"), str) else None)
    return LoggedCall(line, messages, tools, model, replies[0], usage)


def _chains(obj_or_text: Any, name: str) -> list[CallChain]:
    return chain_calls([_read_call(line, value, name) for line, value in lines_or_document(obj_or_text, name)])


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in a log of chat-completions calls (one per chain of calls that extend each other), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    return [conversation_info(k, c.label, c.flat) for k, c in enumerate(_chains(obj_or_text, name))]


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of a log of chat-completions calls as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    return build_chain(_chains(obj_or_text, name), conversation, format=NAME, name=name, path=path)
