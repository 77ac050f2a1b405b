"""``letta``: a Letta / MemGPT AgentFile (``.af``) ``{agent_type, llm_config, tools, messages,
in_context_message_indices, ...}``.

Messages are imported in **storage order** (origin ``messages[i]``), because that is the only order
that holds every message; it is not the order Letta sent them in: a recompiled ``system`` prompt
can sit between a call and its result, which the shared analysis reports as
``result_far_from_call``. Content is a list of text blocks; one block becomes a string.

What Letta actually used after its own compaction is ``in_context_message_indices``
(non-monotonic: the summary alert precedes older rows); it becomes an :class:`ObservedPayload`
(label ``in-context messages``) holding those rows in that order, so a replay can be compared with
it. User-role rows are JSON envelopes; ``heartbeat``/``login``/``system_alert`` envelopes were
written by Letta, not the person, and are reported as ``synthetic_user_message`` (counts of every
envelope type are in ``meta["user_envelopes"]``). The visible reply lives in ``send_message``
arguments and stays there. ``tools`` comes from each tool's ``json_schema``; ``model`` from
``llm_config.model``; ``meta["context_window"]`` from ``llm_config``.
"""

from __future__ import annotations

import json
from typing import Any

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    blocks_to_content,
    object_with_role,
    count_user_turns,
    is_numeric_id,
    require_json,
    select,
    wire_tool_calls,
)
from inspector.transcripts.model import ConversationInfo, Message, ObservedPayload, Transcript, TranscriptError

NAME = "letta"

_SYNTHETIC_ENVELOPES = frozenset({"heartbeat", "login", "system_alert"})


def sniff(obj_or_text: Any, name: str) -> bool:
    if isinstance(obj_or_text, JsonlText) or not isinstance(obj_or_text, dict):
        return False
    if not isinstance(obj_or_text.get("messages"), list):
        return False
    return ("agent_type" in obj_or_text or "in_context_message_indices" in obj_or_text
            or "llm_config" in obj_or_text or name.endswith(".af"))


def _root(obj_or_text: Any, name: str) -> tuple[dict[str, Any], list[Any]]:
    obj = require_json(obj_or_text, name, "a Letta agent file")
    if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
        raise TranscriptError(name, "expected a Letta agent file object with a 'messages' list")
    return obj, obj["messages"]


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    root, msgs = _root(obj_or_text, name)
    label = root["name"] if isinstance(root.get("name"), str) else name
    return [ConversationInfo(0, label, len(msgs), count_user_turns(m for m in msgs if isinstance(m, dict)))]


def _row(m: Any, where: str, name: str) -> Message:
    m, role = object_with_role(m, where, name)
    content = m.get("content")
    if isinstance(content, list):
        if not all(isinstance(blk, dict) for blk in content):
            raise TranscriptError(name, f"{where}.content must be a list of content blocks")
        content = blocks_to_content(content)
    elif content is not None and not isinstance(content, str):
        raise TranscriptError(name, f"{where}.content must be a list of blocks, a string or null")
    msg: Message = {"role": role, "content": content}
    calls = m.get("tool_calls")
    if calls:
        msg["tool_calls"] = wire_tool_calls(calls, where, name)
    if role == "tool":
        cid = m.get("tool_call_id")
        if not (isinstance(cid, str) and cid) and not is_numeric_id(cid):  # a number: converted (Q19)
            raise TranscriptError(name, f"{where}: tool result without tool_call_id")
        msg["tool_call_id"] = cid
    if isinstance(m.get("name"), str):
        msg["name"] = m["name"]
    return msg


def _envelope_type(content: Any) -> str | None:
    if not isinstance(content, str) or not content.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, RecursionError):
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else None


def _tools(raw: Any) -> list[dict[str, Any]] | None:
    if not isinstance(raw, list):
        return None
    out: list[dict[str, Any]] = []
    for tool in raw:
        schema = tool.get("json_schema") if isinstance(tool, dict) else None
        if isinstance(schema, dict) and isinstance(schema.get("name"), str):
            fn = {key: schema[key] for key in ("name", "description", "parameters") if key in schema}
            out.append({"type": "function", "function": fn})
    return out or None


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    root, msgs = _root(obj_or_text, name)
    select(name, conversation, 1)
    b = Builder()
    envelopes: dict[str, int] = {}
    for i, m in enumerate(msgs):
        where = f"messages[{i}]"
        msg = _row(m, where, name)
        index = b.add(msg, where)
        if msg["role"] == "user":
            kind = _envelope_type(msg["content"])
            if kind is not None:
                envelopes[kind] = envelopes.get(kind, 0) + 1
            if kind in _SYNTHETIC_ENVELOPES:
                b.note("synthetic_user_message", index, f"a {kind!r} envelope written by Letta, not the user")
    llm: dict[str, Any] = root["llm_config"] if isinstance(root.get("llm_config"), dict) else {}
    model = llm.get("model")
    tools = _tools(root.get("tools"))
    observed: list[ObservedPayload] = []
    meta: dict[str, Any] = {}
    indices = root.get("in_context_message_indices")
    if isinstance(indices, list):
        meta["in_context_message_indices"] = list(indices)
        valid = [i for i in indices if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(b.messages)]
        if len(valid) != len(indices):
            raise TranscriptError(name, "in_context_message_indices must hold indices of messages")
        if valid:
            last = max(valid)
            users = sum(1 for m in b.messages[: last + 1] if m["role"] == "user")
            observed.append(ObservedPayload(
                label="in-context messages", turn=users - 1 if users else None,
                messages=[b.messages[i] for i in valid], tools=tools,
                model=model if isinstance(model, str) else None, origin="in_context_message_indices"))
    if envelopes:
        meta["user_envelopes"] = dict(sorted(envelopes.items()))
    if isinstance(llm.get("context_window"), int):
        meta["context_window"] = llm["context_window"]
    for key in ("agent_type", "version"):
        if isinstance(root.get(key), str):
            meta[key] = root[key]
    return b.finish(format=NAME, path=path, tools=tools, model=model if isinstance(model, str) else None,
                    conversation=0, conversations=conversations(root, name=name), meta=meta, observed=observed)
