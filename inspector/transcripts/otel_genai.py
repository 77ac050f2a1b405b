"""``otel-genai``: OpenTelemetry GenAI traces in the OTLP JSON encoding.

Input: an ``ExportTraceServiceRequest`` object ``{"resourceSpans": [{"resource", "scopeSpans":
[{"scope", "spans": [...]}]}]}``, or JSON Lines of them (what the collector's file exporter
writes). A span has ``traceId``, ``spanId``, ``startTimeUnixNano`` and ``attributes`` as
``[{key, value: AnyValue}]`` (``stringValue``, ``intValue`` as a string or a number,
``doubleValue``, ``boolValue``, ``arrayValue``, ``kvlistValue``).

A span is a model call when it carries messages in one of three attribute conventions:

* **GenAI semantic conventions** (open-telemetry/semantic-conventions, gen-ai):
  ``gen_ai.system_instructions`` (parts), ``gen_ai.input.messages`` and ``gen_ai.output.messages``
  (``[{role, parts: [...], name?, finish_reason?}]``, a JSON string or structured),
  ``gen_ai.tool.definitions``; parts ``text`` (``content``), ``tool_call`` (``id``, ``name``,
  ``arguments``), ``tool_call_response`` (``id``, ``response``; the attribute registry's example writes
``result``, read too); any other part (``reasoning``,
  ``blob``, ``uri``, …) is kept as a content part and reported as ``non_text_content``. Messages some
instrumentations write in the chat-completions shape (``{role, content, tool_calls}``, no ``parts``)
are read as chat-completions messages.
  Usage: ``gen_ai.usage.input_tokens`` (which includes cached tokens),
  ``gen_ai.usage.cache_read.input_tokens``, ``gen_ai.usage.output_tokens``.
* **OpenLLMetry** (traceloop): flattened ``gen_ai.prompt.{i}.role|content|tool_call_id|
  tool_calls.{j}.id|name|arguments`` and ``gen_ai.completion.{i}.*``; tools
  ``llm.request.functions.{i}.name|description|parameters`` (or ``gen_ai.request.functions``);
  usage ``gen_ai.usage.input_tokens`` or ``gen_ai.usage.prompt_tokens``,
  ``gen_ai.usage.output_tokens`` or ``gen_ai.usage.completion_tokens``,
  ``gen_ai.usage.cache_read_input_tokens``. A ``content`` that OpenLLMetry wrote as a JSON list of
  typed parts is read back as those parts.
* **OpenInference** (Arize Phoenix): ``llm.input_messages.{i}.message.role|content|name|
  tool_call_id|contents.{j}.message_content.type|text|tool_calls.{j}.tool_call.id|
  function.name|function.arguments`` and ``llm.output_messages.{i}.message.*``; tools
  ``llm.tools.{i}.tool.json_schema``; usage ``llm.token_count.prompt`` (cached tokens are part of
  it, as ``llm.token_count.prompt_details.cache_read``), ``llm.token_count.completion``.

Spans whose ``gen_ai.operation.name`` is ``invoke_agent``, ``create_agent``, ``execute_tool`` or
``embeddings`` are not model calls (an agent span may repeat its messages) and are counted with the
others. Conversations: spans are grouped by ``gen_ai.conversation.id`` (OpenInference: ``session.id``),
else by trace, and read in start-time order. As in ``openai-log``, each call whose input
*extends* the conversation so far continues it (its new messages are appended, then its first
output message); one that does not starts a new conversation. A tool call or result recorded
without an id gets the empty id (nothing is invented; the pairing check reports it). Every call's input is kept as an
:class:`ObservedPayload` (label ``span <spanId>``, ``reply`` = its output's row), and its usage
sits at that row as ``prompt_tokens`` (all input tokens, cached included), ``completion_tokens``
and ``prompt_tokens_details.cached_tokens``. Spans without messages are counted in
``meta["other_spans"]``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    conversation_info,
    dumps_arguments,
    first_jsonl_value,
    is_numeric_id,
    lines_or_document,
    require_json,
    select,
)
from inspector.transcripts.model import ConversationInfo, Message, ObservedPayload, Transcript, TranscriptError
from inspector.transcripts.openai_chat import normalize_messages

NAME = "otel-genai"

_MESSAGE_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages")
_FLAT = re.compile(r"^(gen_ai\.prompt|gen_ai\.completion|llm\.input_messages|llm\.output_messages)\.(\d+)\.(.+)$")


def _is_request(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("resourceSpans"), list)


def sniff(obj_or_text: Any, name: str) -> bool:
    """Whether ``obj_or_text`` (a parsed JSON document, or a :class:`JsonlText`) is an OTLP JSON export request with GenAI spans (the first line of JSON Lines, or the whole
    document).
    ``name`` is the file's name; never raises."""
    if isinstance(obj_or_text, JsonlText):
        return _is_request(first_jsonl_value(obj_or_text))
    return _is_request(obj_or_text)


# ---------------------------------------------------------------------------------------------
# OTLP JSON


def any_value(value: Any, where: str, name: str) -> Any:
    """An OTLP ``AnyValue`` as a Python value. Raises :class:`TranscriptError` (naming ``where``) when
    it is not an AnyValue object or its integer is not one."""
    if not isinstance(value, dict):
        raise TranscriptError(name, f"{where} must be an AnyValue object")
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        raw = value["intValue"]
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise TranscriptError(name, f"{where}.intValue must be an integer, got {raw!r}") from None
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        items = (value["arrayValue"] or {}).get("values") or []
        return [any_value(v, f"{where}.arrayValue.values[{k}]", name) for k, v in enumerate(items)]
    if "kvlistValue" in value:
        pairs = (value["kvlistValue"] or {}).get("values") or []
        return {p.get("key"): any_value(p.get("value"), f"{where}.kvlistValue.values[{k}]", name)
                for k, p in enumerate(pairs) if isinstance(p, dict)}
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


@dataclass
class _Span:
    where: str  # locator of the span in the file
    line: int | None
    trace: str
    span_id: str
    start: int
    attrs: dict[str, Any]


def _spans(obj_or_text: Any, name: str) -> list[_Span]:
    out: list[_Span] = []
    docs: list[tuple[int | None, Any]]
    if isinstance(obj_or_text, JsonlText):
        docs = list(lines_or_document(obj_or_text, name))
    else:
        docs = [(None, require_json(obj_or_text, name, "an OTLP JSON trace export"))]
    for line, doc in docs:
        def fail(detail: str, line: int | None = line) -> TranscriptError:
            return TranscriptError(name, detail, line=line)

        if not _is_request(doc):
            raise fail("expected an OTLP trace export object with a 'resourceSpans' list")
        for r, rs in enumerate(doc["resourceSpans"]):
            scopes = rs.get("scopeSpans") if isinstance(rs, dict) else None
            if not isinstance(scopes, list):
                raise fail(f"resourceSpans[{r}].scopeSpans must be a list")
            for s, ss in enumerate(scopes):
                spans = ss.get("spans") if isinstance(ss, dict) else None
                if not isinstance(spans, list):
                    raise fail(f"resourceSpans[{r}].scopeSpans[{s}].spans must be a list")
                for k, span in enumerate(spans):
                    where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{k}]"
                    if not isinstance(span, dict):
                        raise fail(f"{where} must be a span object")
                    raw = span.get("attributes") or []
                    if not isinstance(raw, list):
                        raise fail(f"{where}.attributes must be a list")
                    attrs: dict[str, Any] = {}
                    for a, kv in enumerate(raw):
                        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
                            raise fail(f"{where}.attributes[{a}] must be {{key, value}}")
                        try:
                            attrs[kv["key"]] = any_value(kv.get("value"), f"{where}.attributes[{a}].value", name)
                        except TranscriptError as exc:
                            raise fail(exc.detail) from None
                    start = span.get("startTimeUnixNano", 0)
                    try:
                        start_ns = int(start)
                    except (TypeError, ValueError):
                        raise fail(f"{where}.startTimeUnixNano must be an integer") from None
                    out.append(_Span(where, line, str(span.get("traceId") or ""), str(span.get("spanId") or ""),
                                     start_ns, attrs))
    return out


# ---------------------------------------------------------------------------------------------
# the three conventions → chat-completions rows


def _json_attr(value: Any, key: str, sp: _Span, name: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            raise TranscriptError(name, f"{sp.where}: attribute {key} is not valid JSON", line=sp.line) from None
    return value


def _id(value: Any) -> Any:
    """A tool-call id as recorded (a number is converted later and reported, Q19); "" when none."""
    return value if isinstance(value, str) or is_numeric_id(value) else ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _semconv_rows(messages: Any, key: str, sp: _Span, name: str) -> list[Message]:
    """``[{role, parts}]`` → rows: one ``tool`` row per ``tool_call_response`` part, the other
    parts on one row of the message's role."""
    if not isinstance(messages, list):
        raise TranscriptError(name, f"{sp.where}: attribute {key} must be a list of messages", line=sp.line)
    rows: list[Message] = []
    for i, m in enumerate(messages):
        where = f"{sp.where}: {key}[{i}]"
        if isinstance(m, dict) and "parts" not in m and "content" in m:
            # written in the chat-completions shape ({role, content, tool_calls}) instead of parts
            def fail(_: int, detail: str, where: str = where) -> TranscriptError:
                return TranscriptError(name, f"{where}: {detail}", line=sp.line)

            rows += normalize_messages([m], fail)[0]
            continue
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("parts"), list):
            raise TranscriptError(name, f"{where} must be {{role, parts: [...]}}", line=sp.line)
        content: list[Any] = []
        calls: list[dict[str, Any]] = []
        for j, part in enumerate(m["parts"]):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise TranscriptError(name, f"{where}.parts[{j}] must be a part with a type", line=sp.line)
            kind = part["type"]
            if kind == "text":
                content.append({"type": "text", "text": _text(part.get("content", ""))})
            elif kind == "tool_call":
                if not isinstance(part.get("name"), str):
                    raise TranscriptError(name, f"{where}.parts[{j}].name must be a string", line=sp.line)
                calls.append({"id": _id(part.get("id")),
                              "type": "function", "function": {"name": part["name"],
                                                               "arguments": dumps_arguments(part.get("arguments") or {})}})
            elif kind == "tool_call_response":
                response = part["response"] if "response" in part else part.get("result", "")  # registry example: "result"
                rows.append({"role": "tool", "content": _text(response),
                             "tool_call_id": _id(part.get("id"))})
            else:
                content.append(dict(part))
        if content or calls or not rows:
            msg: Message = {"role": m["role"], "content": _content(content)}
            if calls:
                msg["tool_calls"] = calls
            if isinstance(m.get("name"), str):
                msg["name"] = m["name"]
            rows.append(msg)
    return rows


def _content(parts: list[Any]) -> Any:
    if not parts:
        return None
    if len(parts) == 1 and parts[0].get("type") == "text":
        return parts[0]["text"]
    return parts


def _flat_messages(attrs: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """``prefix.{i}.rest`` attributes grouped by ``i`` into ``{rest: value}``."""
    out: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        found = _FLAT.match(key)
        if found and found.group(1) == prefix:
            out.setdefault(int(found.group(2)), {})[found.group(3)] = value
    return dict(sorted(out.items()))


def _indexed(fields: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    pattern = re.compile(rf"^{re.escape(prefix)}\.(\d+)\.(.+)$")
    for key, value in fields.items():
        found = pattern.match(key)
        if found:
            out.setdefault(int(found.group(1)), {})[found.group(2)] = value
    return dict(sorted(out.items()))


def _maybe_parts(content: Any) -> Any:
    """OpenLLMetry writes list content as a JSON string: read it back when it is a list of typed parts."""
    if isinstance(content, str) and content.startswith("["):
        try:
            value = json.loads(content)
        except (json.JSONDecodeError, RecursionError):
            return content
        if isinstance(value, list) and value and all(isinstance(p, dict) and isinstance(p.get("type"), str)
                                                     for p in value):
            if len(value) == 1 and value[0].get("type") == "text" and isinstance(value[0].get("text"), str):
                return value[0]["text"]
            return value
    return content


def _flat_rows(attrs: dict[str, Any], prefix: str, sp: _Span, name: str) -> list[Message]:
    openinference = prefix.startswith("llm.")
    rows: list[Message] = []
    for i, fields in _flat_messages(attrs, prefix).items():
        if openinference:
            fields = {k.removeprefix("message."): v for k, v in fields.items()}
        role = fields.get("role")
        if not isinstance(role, str):
            raise TranscriptError(name, f"{sp.where}: {prefix}.{i} has no role", line=sp.line)
        content: Any = fields.get("content")
        if openinference and content is None:
            parts = []
            for _, p in _indexed(fields, "contents").items():
                p = {k.removeprefix("message_content."): v for k, v in p.items()}
                if p.get("type") == "text" and isinstance(p.get("text"), str):
                    parts.append({"type": "text", "text": p["text"]})
                elif isinstance(p.get("type"), str):
                    parts.append(p)
            content = _content(parts)
        elif not openinference:
            content = _maybe_parts(content)
        msg: Message = {"role": role, "content": content}
        calls = []
        for j, c in _indexed(fields, "tool_calls").items():
            if openinference:
                c = {k.removeprefix("tool_call."): v for k, v in c.items()}
                fn_name, args, cid = c.get("function.name"), c.get("function.arguments"), c.get("id")
            else:
                fn_name, args, cid = c.get("name"), c.get("arguments"), c.get("id")
            if not isinstance(fn_name, str):
                raise TranscriptError(name, f"{sp.where}: {prefix}.{i} tool_calls.{j} has no function name",
                                      line=sp.line)
            calls.append({"id": _id(cid), "type": "function",
                          "function": {"name": fn_name, "arguments": dumps_arguments(args if args is not None else {})}})
        if calls:
            msg["tool_calls"] = calls
        if role == "tool":
            cid = fields.get("tool_call_id")
            msg["tool_call_id"] = _id(cid)
        if isinstance(fields.get("name"), str):
            msg["name"] = fields["name"]
        rows.append(msg)
    return rows


def _tools(attrs: dict[str, Any], sp: _Span, name: str) -> list[dict[str, Any]] | None:
    if "gen_ai.tool.definitions" in attrs:
        defs = _json_attr(attrs["gen_ai.tool.definitions"], "gen_ai.tool.definitions", sp, name)
        if isinstance(defs, list):
            return [{"type": "function", "function": {k: d[k] for k in ("name", "description", "parameters")
                                                      if d.get(k) is not None}}
                    for d in defs if isinstance(d, dict) and isinstance(d.get("name"), str)]
    for prefix in ("llm.request.functions", "gen_ai.request.functions"):
        found = _indexed(attrs, prefix)
        if found:
            out = []
            for f in found.values():
                if not isinstance(f.get("name"), str):
                    continue
                fn: dict[str, Any] = {"name": f["name"]}
                if isinstance(f.get("description"), str):
                    fn["description"] = f["description"]
                if f.get("parameters") is not None:
                    fn["parameters"] = _json_attr(f["parameters"], f"{prefix}.parameters", sp, name)
                out.append({"type": "function", "function": fn})
            return out
    found = _indexed(attrs, "llm.tools")
    if found:
        out = []
        for t in found.values():
            schema = _json_attr(t.get("tool.json_schema"), "llm.tools.tool.json_schema", sp, name)
            if isinstance(schema, dict):
                out.append(schema if "function" in schema else {"type": "function", "function": schema})
        return out
    return None


def _num(attrs: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        v = attrs.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            return v
    return None


def _usage(attrs: dict[str, Any]) -> dict[str, Any] | None:
    prompt = _num(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
    if prompt is None:
        return None
    usage: dict[str, Any] = {"prompt_tokens": prompt}
    completion = _num(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion")
    if completion is not None:
        usage["completion_tokens"] = completion
    cached = _num(attrs, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
                  "llm.token_count.prompt_details.cache_read")
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return usage


@dataclass
class _Call:
    span: _Span
    convention: str
    messages: list[Message]
    reply: Message | None
    tools: list[dict[str, Any]] | None
    model: str | None
    usage: dict[str, Any] | None


_NOT_MODEL_CALLS = frozenset({"invoke_agent", "create_agent", "execute_tool", "embeddings"})
"""``gen_ai.operation.name`` values of spans that are not one model call (an agent span may carry the
agent's messages too; they are not a payload the model was sent)."""


def _call(sp: _Span, name: str) -> _Call | None:
    a = sp.attrs
    op = a.get("gen_ai.operation.name")
    if op is not None and not isinstance(op, str):  # the conventions make it a string (an array is no name)
        raise TranscriptError(name, f"{sp.where}: attribute gen_ai.operation.name must be a string", line=sp.line)
    if op in _NOT_MODEL_CALLS:
        return None
    if any(k in a for k in _MESSAGE_KEYS):
        convention = "gen_ai semantic conventions"
        messages: list[Message] = []
        if "gen_ai.system_instructions" in a:
            parts = _json_attr(a["gen_ai.system_instructions"], "gen_ai.system_instructions", sp, name)
            messages += _semconv_rows([{"role": "system", "parts": parts}], "gen_ai.system_instructions", sp, name)
        if "gen_ai.input.messages" in a:
            messages += _semconv_rows(_json_attr(a["gen_ai.input.messages"], "gen_ai.input.messages", sp, name),
                                      "gen_ai.input.messages", sp, name)
        out = _semconv_rows(_json_attr(a["gen_ai.output.messages"], "gen_ai.output.messages", sp, name),
                            "gen_ai.output.messages", sp, name) if "gen_ai.output.messages" in a else []
    elif any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in a):
        convention = "OpenLLMetry"
        messages = _flat_rows(a, "gen_ai.prompt", sp, name)
        out = _flat_rows(a, "gen_ai.completion", sp, name)
    elif any(k.startswith(("llm.input_messages.", "llm.output_messages.")) for k in a):
        convention = "OpenInference"
        messages = _flat_rows(a, "llm.input_messages", sp, name)
        out = _flat_rows(a, "llm.output_messages", sp, name)
    else:
        return None
    reply = out[0] if out else None
    if reply is not None and reply["role"] != "assistant":
        reply = {**reply, "role": "assistant"}
    model = next((a[k] for k in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
                  if isinstance(a.get(k), str)), None)
    return _Call(sp, convention, messages, reply, _tools(a, sp, name), model, _usage(a))


# ---------------------------------------------------------------------------------------------
# conversations


@dataclass
class _Session:
    key: str
    calls: list[_Call] = field(default_factory=list)
    flat: list[Message] = field(default_factory=list)


def _sessions(obj_or_text: Any, name: str) -> tuple[list[_Session], int]:
    spans = _spans(obj_or_text, name)
    groups: dict[str, list[_Call]] = {}
    other = 0
    for sp in spans:
        call = _call(sp, name)
        if call is None:
            other += 1
            continue
        conv = sp.attrs.get("gen_ai.conversation.id") or sp.attrs.get("session.id")
        key = f"conversation {conv}" if isinstance(conv, str) and conv else f"trace {sp.trace}"
        groups.setdefault(key, []).append(call)
    sessions: list[_Session] = []
    for key, calls in groups.items():
        calls.sort(key=lambda c: c.span.start)
        cur: _Session | None = None
        for call in calls:
            if cur is None or len(call.messages) < len(cur.flat) or call.messages[: len(cur.flat)] != cur.flat:
                cur = _Session(key)
                sessions.append(cur)
            cur.calls.append(call)
            cur.flat = [*call.messages, *([call.reply] if call.reply is not None else [])]
    return sessions, other


def _label(s: _Session, parts: dict[str, int], seen: dict[str, int]) -> str:
    seen[s.key] = seen.get(s.key, 0) + 1
    return s.key if parts[s.key] == 1 else f"{s.key} part {seen[s.key]}"


def _infos(sessions: list[_Session]) -> list[ConversationInfo]:
    parts: dict[str, int] = {}
    for s in sessions:
        parts[s.key] = parts.get(s.key, 0) + 1
    seen: dict[str, int] = {}
    return [conversation_info(k, _label(s, parts, seen), s.flat) for k, s in enumerate(sessions)]


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in OTLP JSON GenAI traces (one per conversation the spans continue (module docstring)), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    return _infos(_sessions(obj_or_text, name)[0])


def _origin(sp: _Span) -> str:
    return sp.where if sp.line is None else f"line {sp.line}.{sp.where}"


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of OTLP JSON GenAI traces as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    sessions, other = _sessions(obj_or_text, name)
    k = select(name, conversation, len(sessions))
    session = sessions[k]
    b = Builder()
    observed: list[ObservedPayload] = []
    users = 0
    for call in session.calls:
        where = _origin(call.span)
        for j in range(len(b.messages), len(call.messages)):
            users += call.messages[j]["role"] == "user"
            b.add(call.messages[j], f"{where}.input[{j}]")
        at = None
        if call.reply is not None:
            at = b.add(call.reply, f"{where}.output[0]", call.usage)
        observed.append(ObservedPayload(label=f"span {call.span.span_id}", turn=users - 1 if users else None,
                                        messages=call.messages, tools=call.tools, model=call.model,
                                        origin=f"{where}.attributes", reply=at))
    models = list(dict.fromkeys(c.model for c in session.calls if c.model))
    tools = next((c.tools for c in reversed(session.calls) if c.tools is not None), None)
    meta: dict[str, Any] = {"calls": len(session.calls),
                            "conventions": sorted({c.convention for c in session.calls})}
    if other:
        meta["other_spans"] = other
    if len(models) > 1:
        meta["models"] = models
    return b.finish(format=NAME, path=path, tools=tools, model=models[0] if models else None, conversation=k,
                    conversations=_infos(sessions), meta=meta, observed=observed)
