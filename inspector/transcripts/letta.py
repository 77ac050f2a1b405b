"""``letta``: a Letta / MemGPT AgentFile (``.af``), in either of the two shapes Letta has written.

* **Current** (Letta's ``AgentFileSchema``, letta-ai/letta ``letta/schemas/agent_file.py``):
  ``{agents: [{id, name, llm_config, tool_ids, in_context_message_ids, messages, ...}], groups,
  blocks, files, sources, tools, mcp_servers, metadata, created_at}``. A file may hold several
  agents (e.g. an agent and its sleep-time memory agent): each agent is one conversation, labelled
  by its ``name``; origins are ``agents[k].messages[i]``. Tools are the file's ``tools`` whose
  ``id`` the agent lists in ``tool_ids``. Some published files are the JSON document encoded once
  more as a JSON string; that string is read as the document it holds.
* **Old** (one agent per file, Letta 0.6): ``{agent_type, llm_config, tools, messages,
  in_context_message_indices, ...}``; origins are ``messages[i]``.

Messages are imported in **storage order**, because that is the only order that holds every
message; it is not the order Letta sent them in: a recompiled ``system`` prompt can sit between a
call and its result, which the shared analysis reports as ``result_far_from_call``. Content is a
list of content blocks: text-only content becomes a string (one block) or text parts; any other
block (Letta's ``reasoning``) keeps the content as a list of parts, reported as
``non_text_content``.

What Letta actually had in context is ``in_context_message_ids`` (current) or
``in_context_message_indices`` (old; non-monotonic: the summary alert precedes older rows); it
becomes an :class:`ObservedPayload` (label ``in-context messages``) holding those rows in that
order, so a replay can be compared with it. User-role rows are JSON envelopes;
``heartbeat``/``login``/``system_alert`` envelopes were written by Letta, not the person, and are
reported as ``synthetic_user_message`` (counts of every envelope type are in
``meta["user_envelopes"]``). A ``system_alert`` whose message says prior messages "have been hidden
from view" and gives "a summary of the previous messages" is Letta's own summarisation
(``package_summarize_message`` in letta/system.py): it is listed in ``Transcript.compactions``.
The visible reply lives in ``send_message`` arguments and stays there. ``model`` is
``llm_config.model``; ``meta["context_window"]`` comes from ``llm_config``. Agent files record no
provider usage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    blocks_to_content,
    count_user_turns,
    is_numeric_id,
    object_with_role,
    require_json,
    select,
    wire_tool_calls,
)
from inspector.transcripts.model import (
    ConversationInfo,
    Message,
    ObservedCompaction,
    ObservedPayload,
    Transcript,
    TranscriptError,
)

NAME = "letta"

_SYNTHETIC_ENVELOPES = frozenset({"heartbeat", "login", "system_alert"})
SUMMARY_MARKERS: tuple[str, str] = ("hidden from view", "summary of the previous")
"""Both phrases appear in every wording of Letta's summary alert (``package_summarize_message``)."""


def _is_current(obj: Any) -> bool:
    agents = obj.get("agents") if isinstance(obj, dict) else None
    return (isinstance(agents, list) and any(isinstance(a, dict) and isinstance(a.get("messages"), list)
                                             for a in agents)
            and ("blocks" in obj or "tools" in obj or "groups" in obj))


def _is_old(obj: Any, name: str) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("messages"), list) and (
        "agent_type" in obj or "in_context_message_indices" in obj or "llm_config" in obj or name.endswith(".af"))


def _unwrap(obj: Any) -> Any:
    """A document that is a JSON string holding a JSON object: the object (else ``obj`` as is)."""
    if isinstance(obj, str) and not isinstance(obj, JsonlText) and obj.lstrip().startswith("{"):
        try:
            return json.loads(obj)
        except (json.JSONDecodeError, RecursionError):
            return obj
    return obj


def sniff(obj_or_text: Any, name: str) -> bool:
    """Whether ``obj_or_text`` (a parsed JSON document, or a :class:`JsonlText`) is a Letta AgentFile in either shape (never JSON Lines).
    ``name`` is the file's name; never raises."""
    if isinstance(obj_or_text, JsonlText):
        return False
    obj = _unwrap(obj_or_text)
    return _is_current(obj) or _is_old(obj, name)


@dataclass
class _Agent:
    label: str
    root: dict[str, Any]  # the agent object (the whole file in the old shape)
    messages: list[Any]
    prefix: str  # origin prefix of its messages
    tools: list[dict[str, Any]] | None


def _agents(obj_or_text: Any, name: str) -> list[_Agent]:
    obj = _unwrap(require_json(obj_or_text, name, "a Letta agent file"))
    if isinstance(obj, dict) and isinstance(obj.get("agents"), list):
        given = obj.get("tools")
        raw_tools: list[Any] = given if isinstance(given, list) else []
        by_id = {t["id"]: t for t in raw_tools if isinstance(t, dict) and isinstance(t.get("id"), str)}
        out: list[_Agent] = []
        for k, agent in enumerate(obj["agents"]):
            if not isinstance(agent, dict) or not isinstance(agent.get("messages"), list):
                raise TranscriptError(name, f"agents[{k}] must be an agent object with a 'messages' list")
            ids = agent.get("tool_ids")
            tools = _tools([by_id[i] for i in ids if isinstance(i, str) and i in by_id]) \
                if isinstance(ids, list) else None
            label = agent["name"] if isinstance(agent.get("name"), str) and agent["name"] else f"agents[{k}]"
            out.append(_Agent(label, agent, agent["messages"], f"agents[{k}].messages", tools))
        return out
    if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
        raise TranscriptError(name, "expected a Letta agent file: an object with an 'agents' list "
                                    "(current shape) or a 'messages' list (old shape)")
    label = obj["name"] if isinstance(obj.get("name"), str) else name
    return [_Agent(label, obj, obj["messages"], "messages", _tools(obj.get("tools")))]


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in a Letta AgentFile (one per agent), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    return [ConversationInfo(k, a.label, len(a.messages),
                             count_user_turns(m for m in a.messages if isinstance(m, dict)))
            for k, a in enumerate(_agents(obj_or_text, name))]


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


def _envelope(content: Any) -> dict[str, Any] | None:
    if not isinstance(content, str) or not content.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("type"), str) else None


def _envelope_text(content: Any) -> Any:
    """The text of a user row whose content is text parts (current files split an envelope from
    notes the client added) or a string."""
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return texts[0] if texts and isinstance(texts[0], str) else None
    return content


def _is_summary(envelope: dict[str, Any]) -> bool:
    text = envelope.get("message")
    return (envelope.get("type") == "system_alert" and isinstance(text, str)
            and all(marker in text for marker in SUMMARY_MARKERS))


def _summary_detail(envelope: dict[str, Any]) -> str:
    detail = "Letta summary alert (a 'system_alert' envelope: prior messages hidden from view, a summary of them)"
    stats = envelope.get("compaction_stats")
    if isinstance(stats, dict):
        told = [f"{key} {stats[key]}" for key in ("trigger", "context_tokens_before", "context_tokens_after")
                if isinstance(stats.get(key), (str, int)) and not isinstance(stats.get(key), bool)]
        if told:
            detail += "; compaction_stats: " + ", ".join(told)
    return detail


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


def _in_context(agent: _Agent, b: Builder, name: str) -> list[int] | None:
    """Row indices Letta had in context, in its order; None when the file does not say."""
    root = agent.root
    ids = root.get("in_context_message_ids")
    if isinstance(ids, list):
        owner = agent.prefix.removesuffix(".messages")
        if not all(isinstance(i, str) for i in ids):
            raise TranscriptError(name, f"{owner}.in_context_message_ids must be a list of message ids (strings)")
        where: dict[str, int] = {m["id"]: i for i, m in enumerate(agent.messages)
                                 if isinstance(m, dict) and isinstance(m.get("id"), str)}
        missing = [i for i in ids if i not in where]
        if missing:
            raise TranscriptError(name, f"{owner}.in_context_message_ids: {missing[0]!r} names no message of the agent")
        return [where[i] for i in ids]
    indices = root.get("in_context_message_indices")
    if isinstance(indices, list):
        valid = [i for i in indices if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(b.messages)]
        if len(valid) != len(indices):
            raise TranscriptError(name, "in_context_message_indices must hold indices of messages")
        return valid
    return None


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of a Letta AgentFile as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    agents = _agents(obj_or_text, name)
    k = select(name, conversation, len(agents))
    agent = agents[k]
    root = agent.root
    b = Builder()
    envelopes: dict[str, int] = {}
    compactions: list[ObservedCompaction] = []
    for i, m in enumerate(agent.messages):
        where = f"{agent.prefix}[{i}]"
        msg = _row(m, where, name)
        index = b.add(msg, where)
        if msg["role"] != "user":
            continue
        envelope = _envelope(_envelope_text(msg["content"]))
        kind = envelope["type"] if envelope is not None else None
        if kind is not None:
            envelopes[kind] = envelopes.get(kind, 0) + 1
        if kind in _SYNTHETIC_ENVELOPES:
            b.note("synthetic_user_message", index, f"a {kind!r} envelope written by Letta, not the user")
        if envelope is not None and _is_summary(envelope):
            compactions.append(ObservedCompaction(index, where, _summary_detail(envelope)))
    llm: dict[str, Any] = root["llm_config"] if isinstance(root.get("llm_config"), dict) else {}
    model = llm.get("model") if isinstance(llm.get("model"), str) else (
        root.get("model") if isinstance(root.get("model"), str) else None)
    observed: list[ObservedPayload] = []
    meta: dict[str, Any] = {}
    rows = _in_context(agent, b, name)
    if rows is not None:
        key = "in_context_message_indices" if "in_context_message_indices" in root else "in_context_message_ids"
        meta[key] = list(root[key])
        if rows:
            users = sum(1 for m in b.messages[: max(rows) + 1] if m["role"] == "user")
            observed.append(ObservedPayload(
                label="in-context messages", turn=users - 1 if users else None,
                messages=[b.messages[i] for i in rows], tools=agent.tools, model=model,
                origin=f"{agent.prefix.removesuffix('messages')}{key}"))
    if envelopes:
        meta["user_envelopes"] = dict(sorted(envelopes.items()))
    if isinstance(llm.get("context_window"), int):
        meta["context_window"] = llm["context_window"]
    for key in ("agent_type", "version"):
        if isinstance(root.get(key), str):
            meta[key] = root[key]
    if agent.prefix != "messages":
        meta["agent"] = agent.label
    t = b.finish(format=NAME, path=path, tools=agent.tools, model=model, conversation=k,
                 conversations=conversations(obj_or_text, name=name), meta=meta, observed=observed)
    t.compactions = compactions
    return t
