"""``mas-lab``: an outshift-open/mas-lab event trace (JSON Lines, one event per line).

The ground truth here is the ``context_assembled`` event: its ``messages`` are the exact
chat-completions payload the reference sent at one LLM call. Each becomes an
:class:`ObservedPayload` (origin ``line N``). The reference emits every context twice, first with
``llm_call_id: ""`` and again with the real id; an empty-id event whose messages equal the next
event's is the same call, so it is folded into it and listed in
``meta["duplicate_context_events"]`` as ``[duplicate line, kept line]`` (a differing one is kept
as its own payload). The reference's own token estimate for each payload is in
``meta["observed_total_tokens"]``, aligned with ``observed_payloads``.

Conversations are per agent, as the trace is: each sub-agent sees its delegated task as its
``user`` message. An agent's flat conversation is its first context extended by every later
context (each later one normally starts with the earlier one; a context that does not is appended
after the common prefix and its line listed in ``meta["rewritten_contexts"]``), then the final
answer from the ``llm_call_end`` of its last call (origin ``line N.output``). Conversations are
ordered by each agent's first context; rows shared between contexts are the same dict objects.
The trace names no model and holds no tool schemas.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    count_user_turns,
    first_jsonl_value,
    lines_or_document,
    select,
)
from inspector.transcripts.model import ConversationInfo, Message, ObservedPayload, Transcript, TranscriptError
from inspector.transcripts.openai_chat import normalize_messages

NAME = "mas-lab"

_TOOL_STEPS = frozenset({"TOOL_CALL", "PARALLEL_TOOL_CALLS"})


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("kind"), str) and ("agent_id" in value or "run_id" in value)


def sniff(obj_or_text: Any, name: str) -> bool:
    """Whether ``obj_or_text`` (a parsed JSON document, or a :class:`JsonlText`) is a mas-lab event (the first line of JSON Lines, or the whole document).
    ``name`` is the file's name; never raises."""
    if isinstance(obj_or_text, JsonlText):
        return _is_event(first_jsonl_value(obj_or_text))
    return _is_event(obj_or_text)


@dataclass
class _Snapshot:
    line: int
    llm_call_id: str
    raw: list[Any]
    total_tokens: Any
    messages: list[Message] = field(default_factory=list)
    duplicate_of: int | None = None  # line of the folded empty-id copy


@dataclass
class _Agent:
    agent_id: str
    snapshots: list[_Snapshot] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    rewritten: list[int] = field(default_factory=list)


def _read(obj_or_text: Any, name: str) -> tuple[list[_Agent], dict[str, tuple[int, Any, Any]], int]:
    """Agents with their snapshots (deduplicated), the llm_call_end events by call id, event count."""
    rows = lines_or_document(obj_or_text, name)
    agents: dict[str, _Agent] = {}
    ends: dict[str, tuple[int, Any, Any]] = {}
    for lineno, ev in rows:
        if not isinstance(ev, dict):
            raise TranscriptError(name, "each line must be a JSON object (an event)", line=lineno)
        kind = ev.get("kind")
        if kind == "llm_call_end" and isinstance(ev.get("call_id"), str):
            ends[ev["call_id"]] = (lineno, ev.get("output"), ev.get("next_step"))
        if kind != "context_assembled":
            continue
        agent_id = ev.get("agent_id")
        if not isinstance(agent_id, str):
            raise TranscriptError(name, "context_assembled event without a string agent_id", line=lineno)
        raw = ev.get("messages")
        if isinstance(raw, str):  # some exporters embed the payload as a JSON string
            try:
                raw = json.loads(raw)
            except (json.JSONDecodeError, RecursionError):
                raise TranscriptError(name, "context_assembled messages is not valid JSON", line=lineno) from None
        if not isinstance(raw, list):
            raise TranscriptError(name, "context_assembled messages must be a list", line=lineno)
        call_id = ev.get("llm_call_id")
        snap = _Snapshot(lineno, call_id if isinstance(call_id, str) else "", raw, ev.get("total_tokens"))
        agent = agents.setdefault(agent_id, _Agent(agent_id))
        prev = agent.snapshots[-1] if agent.snapshots else None
        if prev is not None and prev.llm_call_id == "" and snap.llm_call_id and prev.raw == snap.raw:
            snap.duplicate_of = prev.line
            agent.snapshots[-1] = snap
        else:
            agent.snapshots.append(snap)
    return list(agents.values()), ends, len(rows)


def _build(agent: _Agent, ends: dict[str, tuple[int, Any, Any]], name: str) -> None:
    """Normalise every snapshot and stitch the agent's flat conversation (see module docstring)."""
    raw_flat: list[Any] = []
    for snap in agent.snapshots:
        def fail(i: int, detail: str, line: int = snap.line) -> TranscriptError:
            return TranscriptError(name, f"messages[{i}]: {detail}", line=line)

        normalised, _, _ = normalize_messages(snap.raw, fail)
        common = 0
        limit = min(len(raw_flat), len(snap.raw))
        while common < limit and raw_flat[common] == snap.raw[common]:
            common += 1
        if common < len(raw_flat):
            agent.rewritten.append(snap.line)
        # rows already in the flat conversation are shared, so identity maps payload rows back
        snap.messages = agent.messages[:common] + normalised[common:]
        for j in range(common, len(snap.raw)):
            raw_flat.append(snap.raw[j])
            agent.messages.append(normalised[j])
            agent.origins.append(f"line {snap.line}.messages[{j}]")
    if agent.snapshots:
        end = ends.get(agent.snapshots[-1].llm_call_id)
        if end is not None:
            lineno, output, next_step = end
            if isinstance(output, str) and output and next_step not in _TOOL_STEPS:
                agent.messages.append({"role": "assistant", "content": output})
                agent.origins.append(f"line {lineno}.output")


def _agents(obj_or_text: Any, name: str) -> tuple[list[_Agent], int]:
    agents, ends, events = _read(obj_or_text, name)
    for agent in agents:
        _build(agent, ends, name)
    return agents, events


def _infos(agents: list[_Agent]) -> list[ConversationInfo]:
    return [ConversationInfo(k, a.agent_id, len(a.messages), count_user_turns(a.messages))
            for k, a in enumerate(agents)]


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in a mas-lab event trace (one per agent), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    return _infos(_agents(obj_or_text, name)[0])


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of a mas-lab event trace as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    agents, events = _agents(obj_or_text, name)
    k = select(name, conversation, len(agents))
    agent = agents[k]
    b = Builder()
    for msg, origin in zip(agent.messages, agent.origins, strict=True):
        b.add(msg, origin)
    observed = []
    for n, snap in enumerate(agent.snapshots, start=1):
        users = count_user_turns(snap.messages)
        observed.append(ObservedPayload(
            label=f"{agent.agent_id} LLM call {n}", turn=users - 1 if users else None,
            messages=snap.messages, tools=None, model=None, origin=f"line {snap.line}"))
    meta: dict[str, Any] = {
        "agent_id": agent.agent_id,
        "events": events,
        "llm_call_ids": [s.llm_call_id for s in agent.snapshots],
        "observed_total_tokens": [s.total_tokens for s in agent.snapshots],
        "duplicate_context_events": [[s.duplicate_of, s.line] for s in agent.snapshots if s.duplicate_of is not None],
    }
    if agent.rewritten:
        meta["rewritten_contexts"] = agent.rewritten
    return b.finish(format=NAME, path=path, tools=None, model=None, conversation=k,
                    conversations=_infos(agents), meta=meta, observed=observed)
