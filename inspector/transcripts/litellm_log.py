"""``litellm``: litellm's standard logging payload, one JSON object per line.

``StandardLoggingPayload`` (litellm ``types/utils.py``, built by ``get_standard_logging_object_payload``
in ``litellm_core_utils/litellm_logging.py``) is what litellm callbacks and the litellm proxy log
per call: ``id``, ``trace_id``, ``session_id``, ``call_type``, ``status`` (``success``/``failure``),
``model``, ``messages`` (the request's chat-completions messages, a ``system`` argument put first),
``response`` (the chat completion: ``choices[0].message``, ``usage``), ``model_parameters`` (the
request's other parameters, ``tools`` among them), ``prompt_tokens``, ``completion_tokens``,
``total_tokens``, ``response_cost``, ``startTime``.

Mapping, as ``openai-log``: calls are read in order and a call whose ``messages`` begin with every
row of the conversation so far continues it (the new messages, then the reply, origin
``line N.messages[j]`` and ``line N.response.choices[0].message``); calls of different
``session_id`` never share a conversation. Every request is kept as the observed payload of its
reply, with ``model_parameters.tools``. Usage at the reply's row is the response's ``usage``
(OpenAI shape: ``prompt_tokens`` includes cached tokens, ``prompt_tokens_details.cached_tokens``),
or, when the response has none, the payload's ``prompt_tokens``/``completion_tokens``/
``total_tokens``. Lines with ``status`` ``failure`` (no reply) and calls that are not chat
completions (``messages`` not a list) are skipped and counted in ``meta["skipped_calls"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspector.transcripts._common import JsonlText, conversation_info, first_jsonl_value, lines_or_document
from inspector.transcripts.model import ConversationInfo, Transcript, TranscriptError
from inspector.transcripts.openai_chat import normalize_messages, normalize_tools
from inspector.transcripts.openai_log import CallChain, LoggedCall, build_chain, chain_calls

NAME = "litellm"


def _is_payload(value: Any) -> bool:
    return (isinstance(value, dict) and "messages" in value and "response" in value
            and isinstance(value.get("call_type"), str) and ("model_parameters" in value or "status" in value))


def sniff(obj_or_text: Any, name: str) -> bool:
    """Whether ``obj_or_text`` (a parsed JSON document, or a :class:`JsonlText`) is a litellm standard logging payload (the first line of JSON Lines, or the whole document).
    ``name`` is the file's name; never raises."""
    if isinstance(obj_or_text, JsonlText):
        return _is_payload(first_jsonl_value(obj_or_text))
    return _is_payload(obj_or_text)


def _read(line: int, value: Any, name: str) -> LoggedCall | str:
    """The call of one line, or why it was skipped."""
    def fail(detail: str) -> TranscriptError:
        return TranscriptError(name, detail, line=line)

    if not isinstance(value, dict):
        raise fail("expected a standard logging payload object")
    if value.get("status") == "failure":
        return "failure"
    if not isinstance(value.get("messages"), list):
        return f"call_type {value.get('call_type')}"
    msgs: Callable[[int, str], TranscriptError] = lambda i, d: fail(f"messages[{i}]: {d}")  # noqa: E731
    messages, _, _ = normalize_messages(value["messages"], msgs)
    params = value.get("model_parameters")
    if params is not None and not isinstance(params, dict):
        raise fail("model_parameters must be an object")
    tools = normalize_tools((params or {}).get("tools"), lambda d: fail(f"model_parameters.{d}"))
    resp = value.get("response")
    choices = resp.get("choices") if isinstance(resp, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
            or not isinstance(choices[0].get("message"), dict):
        raise fail("response.choices[0].message is missing (a successful chat call has a reply)")
    raw_reply = dict(choices[0]["message"])
    raw_reply.setdefault("role", "assistant")
    replies, _, _ = normalize_messages([raw_reply], lambda i, d: fail(f"response.choices[0].message: {d}"))
    usage = resp.get("usage") if isinstance(resp, dict) else None
    if usage is not None and not isinstance(usage, dict):
        raise fail("response.usage must be an object")
    if usage is None:
        usage = {k: value[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")
                 if isinstance(value.get(k), int) and not isinstance(value.get(k), bool)} or None
    model = value.get("model") if isinstance(value.get("model"), str) else None
    session = value.get("session_id")
    return LoggedCall(line, messages, tools, model, replies[0], usage, request="", reply_at="response.choices[0].message",
                      key=session if isinstance(session, str) else "")


def _chains(obj_or_text: Any, name: str) -> tuple[list[CallChain], dict[str, int]]:
    calls: list[LoggedCall] = []
    skipped: dict[str, int] = {}
    for line, value in lines_or_document(obj_or_text, name):
        got = _read(line, value, name)
        if isinstance(got, str):
            skipped[got] = skipped.get(got, 0) + 1
        else:
            calls.append(got)
    return chain_calls(calls), skipped


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in a litellm standard logging payload log (one per chain of calls that extend each other), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    return [conversation_info(k, c.label, c.flat) for k, c in enumerate(_chains(obj_or_text, name)[0])]


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of a litellm standard logging payload log as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    chains, skipped = _chains(obj_or_text, name)
    return build_chain(chains, conversation, format=NAME, name=name, path=path,
                       meta={"skipped_calls": skipped} if skipped else None)
