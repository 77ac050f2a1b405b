"""``swe-agent``: a SWE-agent ``.traj`` file ``{environment, trajectory, history, info, replay_config}``.

``history`` is the model-facing message list (origin ``history[i]``); ``trajectory`` is a parallel
per-step view without messages and is not imported. Rows are chat-completions except that a
result names its call in a **list** ``tool_call_ids``: one id becomes ``tool_call_id``; several
ids keep the first and report ``multiple_tool_call_ids`` (the others then show as unanswered).
SWE-agent reuses call ids across turns; each result still follows its own call, and the shared
analysis reports every reuse as ``reused_tool_call_id`` (pairing keyed on id alone would
mis-pair them). ``thought``/``action``/``agent``/``message_type`` are dropped. ``model`` comes
from ``replay_config.agent.model.name`` (``replay_config`` may be a JSON string); the file holds no
tool schemas.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    count_user_turns,
    is_numeric_id,
    object_with_role,
    plain_content,
    require_json,
    select,
    wire_tool_calls,
)
from inspector.transcripts.model import ConversationInfo, Message, Transcript, TranscriptError

NAME = "swe-agent"


def sniff(obj_or_text: Any, name: str) -> bool:
    """Whether ``obj_or_text`` (a parsed JSON document, or a :class:`JsonlText`) is a JSON object with a ``history`` list and a ``trajectory``, ``replay_config`` or
    ``environment`` key (or a ``.traj`` file name).
    ``name`` is the file's name; never raises."""
    if isinstance(obj_or_text, JsonlText) or not isinstance(obj_or_text, dict):
        return False
    if not isinstance(obj_or_text.get("history"), list):
        return False
    return ("trajectory" in obj_or_text or "replay_config" in obj_or_text
            or name.endswith(".traj") or "environment" in obj_or_text)


def _root(obj_or_text: Any, name: str) -> tuple[dict[str, Any], list[Any]]:
    obj = require_json(obj_or_text, name, "a SWE-agent .traj object")
    if not isinstance(obj, dict) or not isinstance(obj.get("history"), list):
        raise TranscriptError(name, "expected a SWE-agent trajectory object with a 'history' list")
    return obj, obj["history"]


def _replay_config(root: dict[str, Any]) -> dict[str, Any]:
    rc = root.get("replay_config")
    if isinstance(rc, str):
        try:
            rc = json.loads(rc)
        except (json.JSONDecodeError, RecursionError):
            return {}
    return rc if isinstance(rc, dict) else {}


def _model(root: dict[str, Any]) -> str | None:
    agent = _replay_config(root).get("agent")
    model = agent.get("model") if isinstance(agent, dict) else None
    model_name = model.get("name") if isinstance(model, dict) else None
    return model_name if isinstance(model_name, str) else None


def _label(root: dict[str, Any], name: str) -> str:
    agent = _replay_config(root).get("agent")
    label = agent.get("name") if isinstance(agent, dict) else None
    return label if isinstance(label, str) else PurePath(name).stem


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in a SWE-agent trajectory (the trajectory is one conversation), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    root, history = _root(obj_or_text, name)
    return [ConversationInfo(0, _label(root, name), len(history),
                             count_user_turns(m for m in history if isinstance(m, dict)))]


def _row(m: Any, i: int, name: str, b: Builder) -> Message:
    where = f"history[{i}]"
    m, role = object_with_role(m, where, name)
    msg: Message = {"role": role, "content": plain_content(m, where, name)}
    calls = m.get("tool_calls")
    if calls:
        msg["tool_calls"] = wire_tool_calls(calls, where, name)
    if role == "tool":
        ids = m.get("tool_call_ids")
        if ids is None and (isinstance(m.get("tool_call_id"), str) or is_numeric_id(m.get("tool_call_id"))):
            ids = [m["tool_call_id"]]
        if (not isinstance(ids, list) or not ids
                or not all((isinstance(x, str) and x) or is_numeric_id(x) for x in ids)):  # numbers: converted (Q19)
            raise TranscriptError(name, f"{where}: tool result without tool_call_ids")
        msg["tool_call_id"] = ids[0]
        if len(ids) > 1:
            b.note("multiple_tool_call_ids", len(b.messages),
                   f"one observation answers {len(ids)} calls {ids!r}; kept under the first id")
    return msg


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of a SWE-agent trajectory as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    root, history = _root(obj_or_text, name)
    select(name, conversation, 1)
    b = Builder()
    for i, m in enumerate(history):
        b.add(_row(m, i, name, b), f"history[{i}]")
    meta: dict[str, Any] = {}
    info = root.get("info")
    if isinstance(info, dict):
        for key in ("exit_status", "model_stats"):
            if key in info:
                meta[key] = info[key]
    trajectory = root.get("trajectory")
    if isinstance(trajectory, list):
        meta["trajectory_steps"] = len(trajectory)
    return b.finish(format=NAME, path=path, tools=None, model=_model(root), conversation=0,
                    conversations=conversations(root, name=name), meta=meta)
