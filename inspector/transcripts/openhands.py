"""``openhands``: an OpenHands trajectory, the JSON list of serialised events OpenHands saves
(``openhands/events/serialization/event.py``; e.g. ``tests/runtime/trajs/*.json`` in
All-Hands-AI/OpenHands).

Each event has ``id``, ``timestamp``, ``source`` (``user``/``agent``/``environment``) and either
``action`` + ``args`` or ``observation`` + ``content`` + ``extras``; events the LLM produced or
answered carry ``tool_call_metadata`` ``{function_name, tool_call_id, model_response,
total_calls_in_response}``, where ``model_response`` is litellm's chat completion (``id``,
``model``, ``choices[0].message`` with ``content`` and ``tool_calls``, ``usage``).

Mapping, after OpenHands' own ``ConversationMemory`` (``openhands/memory/conversation_memory.py``):
  * ``system`` action → a ``system`` row (``args.content``; ``args.tools`` are the transcript's tools);
  * ``message`` action → a ``user`` row (source ``user``) or an ``assistant`` row (``args.content``);
  * an agent action with ``tool_call_metadata`` → ONE ``assistant`` row per ``model_response.id``
    (its ``choices[0].message``: content and every tool call of that response), usage kept once at
    that row: the same ``model_response`` is repeated on each action of the response and on each
    observation, and is counted once;
  * ``finish`` → an ``assistant`` row whose content is ``args.thought`` (plus the response's text when
    it differs), as OpenHands sends it back; its response's usage sits there;
  * an observation with ``tool_call_metadata`` → a ``tool`` row (``content`` as recorded,
    ``tool_call_id``, ``name`` = ``function_name``); OpenHands' extra rendering of some observations
    (exit codes, working directory) is not reproduced;
  * ``condensation`` action (``forgotten_event_ids`` or ``forgotten_events_start_id``..``_end_id``,
    ``summary``, ``summary_offset``) → an :class:`ObservedCompaction` at the next imported row;
  * anything else (agent state changes, recalls, user-run commands, null observations) is skipped and
    counted in ``meta["skipped_events"]``.

The file records neither OpenHands' system prompt (older files) nor its tool schemas:
``meta["not_recorded"]`` says so when no ``system`` action is present, so the provider's counts
include a prefix the transcript lacks.
"""

from __future__ import annotations

from typing import Any

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    conversation_info,
    is_numeric_id,
    require_json,
    select,
    wire_tool_calls,
)
from inspector.transcripts.model import (
    ConversationInfo,
    Message,
    ObservedCompaction,
    Transcript,
    TranscriptError,
)

NAME = "openhands"


def _is_event(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("source"), str)
            and (isinstance(value.get("action"), str) or isinstance(value.get("observation"), str)))


def sniff(obj_or_text: Any, name: str) -> bool:
    """Whether ``obj_or_text`` (a parsed JSON document, or a :class:`JsonlText`) is a JSON list whose first events (up to five) are all OpenHands events.
    ``name`` is the file's name; never raises."""
    return (not isinstance(obj_or_text, JsonlText) and isinstance(obj_or_text, list) and bool(obj_or_text)
            and all(_is_event(e) for e in obj_or_text[:5]))


def _events(obj_or_text: Any, name: str) -> list[Any]:
    events = require_json(obj_or_text, name, "an OpenHands trajectory (a JSON list of events)")
    if not isinstance(events, list):
        raise TranscriptError(name, "expected an OpenHands trajectory: a JSON list of events")
    return events


def _where(k: int, event: dict[str, Any]) -> str:
    return f"[{k}] (event {event['id']})" if isinstance(event.get("id"), int) else f"[{k}]"


def _response(event: dict[str, Any], where: str, name: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(tool_call_metadata, model_response)`` of an event, None when it has none."""
    tcm = event.get("tool_call_metadata")
    if tcm is None:
        return None
    if not isinstance(tcm, dict):
        raise TranscriptError(name, f"{where}.tool_call_metadata must be an object")
    mr = tcm.get("model_response")
    if not isinstance(mr, dict):
        raise TranscriptError(name, f"{where}.tool_call_metadata.model_response must be an object")
    return tcm, mr


def _reply_message(mr: dict[str, Any], where: str, name: str) -> dict[str, Any]:
    choices = mr.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
            or not isinstance(choices[0].get("message"), dict):
        raise TranscriptError(name, f"{where}.tool_call_metadata.model_response.choices[0].message is missing")
    message: dict[str, Any] = choices[0]["message"]
    return message


def _text(value: Any, where: str, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TranscriptError(name, f"{where} must be a string")
    return value


def _condensation_detail(args: dict[str, Any]) -> str:
    """How a ``condensation`` action is described: which events it forgot, and its summary (if any)."""
    forgotten = args.get("forgotten_event_ids")
    start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    what = (f"events {start}-{end}" if isinstance(start, int) and isinstance(end, int)
            else f"{len(forgotten)} events" if isinstance(forgotten, list) else "events")
    summary = args.get("summary")
    return f"OpenHands condensation: forgot {what}" + (
        f"; summary of {len(summary)} characters inserted at offset {args.get('summary_offset')}"
        if isinstance(summary, str) else "; no summary")


class _Trajectory:
    """The rows of one trajectory, built event by event (:meth:`event`). Condensations wait in
    ``pending`` for the next row (where the new context starts); ``responses`` maps a model
    response's id to its assistant row, so a response with several tool calls is one row."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.b = Builder()
        self.skipped: dict[str, int] = {}
        self.compactions: list[ObservedCompaction] = []
        self.pending: list[dict[str, Any]] = []  # condensations waiting for the next row
        self.responses: dict[str, int] = {}  # model_response.id -> its assistant row
        self.models: list[str] = []
        self.tools: Any = None
        self.has_system = False

    def add(self, msg: Message, origin: str, usage: Any = None) -> int:
        """Add a row; the waiting condensations are observed at it. Returns its index."""
        index = self.b.add(msg, origin, usage if isinstance(usage, dict) else None)
        for c in self.pending:
            self.compactions.append(ObservedCompaction(index, c["origin"], c["detail"]))
        self.pending.clear()
        return index

    def note_model(self, mr: dict[str, Any]) -> None:
        if isinstance(mr.get("model"), str) and mr["model"] not in self.models:
            self.models.append(mr["model"])

    def skip(self, label: str) -> None:
        self.skipped[label] = self.skipped.get(label, 0) + 1

    def event(self, k: int, event: Any) -> None:
        """Read event ``k``. Raises :class:`TranscriptError` (naming the event) when it is not an
        action or an observation, or a field it needs is malformed."""
        name = self.name
        if not isinstance(event, dict):
            raise TranscriptError(name, f"[{k}] must be an event object")
        where = _where(k, event)
        action, observation = event.get("action"), event.get("observation")
        if isinstance(action, str):
            self.action(action, event, where)
        elif isinstance(observation, str):
            self.observation(observation, event, where)
        else:
            raise TranscriptError(name, f"{where} is neither an action nor an observation")

    def action(self, action: str, event: dict[str, Any], where: str) -> None:
        """An action event: the system prompt, a condensation, a message, the finish, or an agent's tool call."""
        name, source = self.name, event.get("source")
        raw_args = event.get("args")
        args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
        got = _response(event, where, name)
        if action == "system":
            self.has_system = True
            self.add({"role": "system", "content": _text(args.get("content"), f"{where}.args.content", name)}, where)
            if isinstance(args.get("tools"), list):
                self.tools = args["tools"]
        elif action == "condensation":
            self.pending.append({"origin": where, "detail": _condensation_detail(args)})
        elif action == "message" and got is None:
            role = "user" if source == "user" else "assistant"
            self.add({"role": role, "content": _text(args.get("content"), f"{where}.args.content", name)}, where)
        elif action == "finish" and source == "agent":
            self.finish_row(args, got, where)
        elif got is not None and source == "agent":
            self.agent_reply(got[1], where)
        else:
            self.skip(f"action {action}")

    def finish_row(self, args: dict[str, Any], got: tuple[dict[str, Any], dict[str, Any]] | None, where: str) -> None:
        """The agent's finish: one assistant row with its thought (and its response's text, when it differs)."""
        name = self.name
        thought = _text(args.get("thought"), f"{where}.args.thought", name)
        usage = None
        if got is not None:
            _, mr = got
            content = _reply_message(mr, where, name).get("content") or ""
            thought = (thought + "\n" + content if thought and thought != content else thought or content)
            usage = mr.get("usage") if mr.get("id") not in self.responses else None
            self.note_model(mr)
        index = self.add({"role": "assistant", "content": thought}, where, usage)
        if got is not None and isinstance(got[1].get("id"), str):
            self.responses.setdefault(got[1]["id"], index)

    def agent_reply(self, mr: dict[str, Any], where: str) -> None:
        """An agent action with a model response: the response's assistant row, once per response id."""
        rid = mr.get("id")
        if isinstance(rid, str) and rid in self.responses:
            return  # another tool call of a response already imported
        msg = _reply_message(mr, where, self.name)
        content = msg.get("content")
        row: Message = {"role": "assistant", "content": content if isinstance(content, str) and content.strip() else None}
        if msg.get("tool_calls"):
            row["tool_calls"] = wire_tool_calls(msg["tool_calls"], f"{where}.tool_call_metadata."
                                                                   "model_response.choices[0].message", self.name)
        index = self.add(row, where, mr.get("usage"))
        self.note_model(mr)
        if isinstance(rid, str):
            self.responses[rid] = index

    def observation(self, observation: str, event: dict[str, Any], where: str) -> None:
        """An observation: a tool row when it answers a tool call, else skipped (and counted)."""
        name = self.name
        got = _response(event, where, name)
        if got is None:
            self.skip(f"observation {observation}")
            return
        tcm, _ = got
        cid = tcm.get("tool_call_id")
        if not (isinstance(cid, str) and cid) and not is_numeric_id(cid):
            raise TranscriptError(name, f"{where}.tool_call_metadata.tool_call_id must be a string")
        msg: Message = {"role": "tool", "content": _text(event.get("content"), f"{where}.content", name),
                        "tool_call_id": cid}
        if isinstance(tcm.get("function_name"), str):
            msg["name"] = tcm["function_name"]
        self.add(msg, where)

    def meta(self, events: int) -> dict[str, Any]:
        """What the trajectory told beside its rows (with the first model under ``_model``)."""
        meta: dict[str, Any] = {"events": events, "responses": len(self.responses)}
        if self.skipped:
            meta["skipped_events"] = dict(sorted(self.skipped.items()))
        if not self.has_system:
            meta["not_recorded"] = ["system prompt", "tool schemas"]
        if self.pending:
            meta["trailing_condensations"] = len(self.pending)
        if len(self.models) > 1:
            meta["models"] = self.models
        meta["_model"] = self.models[0] if self.models else None
        return meta


def _rows(obj_or_text: Any, name: str) -> tuple[Builder, dict[str, Any], list[ObservedCompaction], list[Any]]:
    """The trajectory's rows, its ``meta``, the condensations observed and its tool schemas."""
    events = _events(obj_or_text, name)
    t = _Trajectory(name)
    for k, event in enumerate(events):
        t.event(k, event)
    return t.b, t.meta(len(events)), t.compactions, t.tools if isinstance(t.tools, list) else []


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in an OpenHands trajectory (the trajectory is one conversation), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    b, _, _, _ = _rows(obj_or_text, name)
    return [conversation_info(0, name, b.messages)]


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of an OpenHands trajectory as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    select(name, conversation, 1)
    b, meta, compactions, tools = _rows(obj_or_text, name)
    model = meta.pop("_model")
    t = b.finish(format=NAME, path=path, tools=tools or None, model=model, conversation=0,
                 conversations=[conversation_info(0, name, b.messages)], meta=meta)
    t.compactions = compactions
    return t
