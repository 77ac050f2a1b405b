"""``tau2-bench``: sierra-research/tau2-bench results ``{timestamp, info, tasks, simulations}``.

tau2's own message schema is close to chat-completions but not equal, so each row is mapped:
  * tool calls are flat ``{id, name, arguments: OBJECT, requestor}`` → ``{id, type: "function",
    function: {name, arguments: json.dumps(arguments)}}``;
  * a tool result links to its call through ``id`` → ``tool_call_id``;
  * ``turn_idx``/``requestor`` are dropped (position already orders rows).
There is no system message: the agent prompt is rebuilt from ``info.environment_info.policy`` as a
leading ``system`` row whose origin says so (the reference replays need the policy the agent was
given). A conversation that opens with the assistant's greeting keeps it: that is a preamble turn
for the replay (docs/design.md §5, step 6). One conversation per simulation; ``model`` is
``info.agent_info.llm``; ``tools`` comes from ``environment_info.tool_defs`` when the file has them.
"""

from __future__ import annotations

from typing import Any

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    dumps_arguments,
    is_numeric_id,
    object_with_role,
    plain_content,
    require_json,
    select,
)
from inspector.transcripts.model import ConversationInfo, Message, Transcript, TranscriptError

NAME = "tau2-bench"


def sniff(obj_or_text: Any, name: str) -> bool:
    """Whether ``obj_or_text`` (a parsed JSON document, or a :class:`JsonlText`) is a JSON object with a ``simulations`` list and ``tasks`` or ``info``.
    ``name`` is the file's name; never raises."""
    return (not isinstance(obj_or_text, JsonlText) and isinstance(obj_or_text, dict)
            and isinstance(obj_or_text.get("simulations"), list)
            and ("tasks" in obj_or_text or "info" in obj_or_text))


def _root(obj_or_text: Any, name: str) -> tuple[dict[str, Any], list[Any]]:
    obj = require_json(obj_or_text, name, "a tau2-bench results object")
    if not isinstance(obj, dict) or not isinstance(obj.get("simulations"), list):
        raise TranscriptError(name, "expected a tau2-bench results object with a 'simulations' list")
    return obj, obj["simulations"]


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _simulation(sims: list[Any], k: int, name: str) -> dict[str, Any]:
    sim = sims[k]
    if not isinstance(sim, dict) or not isinstance(sim.get("messages"), list):
        raise TranscriptError(name, f"simulations[{k}] must be an object with a 'messages' list")
    return sim


def _label(sim: dict[str, Any], k: int) -> str:
    label = f"task {sim.get('task_id', k)} trial {sim.get('trial', 0)}"
    reward = _get(sim, "reward_info", "reward")
    if isinstance(reward, (int, float)):
        label += f" (reward {reward})"
    return label


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in a tau2-bench results object (one per simulation), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    root, sims = _root(obj_or_text, name)
    system = 1 if isinstance(_get(root, "info", "environment_info", "policy"), str) else 0
    out = []
    for k in range(len(sims)):
        sim = _simulation(sims, k, name)
        msgs = sim["messages"]
        users = sum(1 for m in msgs if isinstance(m, dict) and m.get("role") == "user")
        out.append(ConversationInfo(k, _label(sim, k), len(msgs) + system, users))
    return out


def _tools(raw: Any) -> list[dict[str, Any]] | None:
    if not isinstance(raw, list):
        return None
    out: list[dict[str, Any]] = []
    for tool in raw:
        if not isinstance(tool, dict):
            continue
        if isinstance(tool.get("function"), dict):
            out.append(dict(tool))
        elif isinstance(tool.get("name"), str):
            fn = {key: tool[key] for key in ("name", "description", "parameters") if key in tool}
            out.append({"type": "function", "function": fn})
    return out or None


def _row(m: Any, where: str, name: str) -> Message:
    m, role = object_with_role(m, where, name)
    msg: Message = {"role": role, "content": plain_content(m, where, name)}
    calls = m.get("tool_calls")
    if calls:
        if not isinstance(calls, list):
            raise TranscriptError(name, f"{where}.tool_calls must be a list")
        out = []
        for c, call in enumerate(calls):
            if not (isinstance(call, dict) and (isinstance(call.get("id"), str) or is_numeric_id(call.get("id")))
                    and isinstance(call.get("name"), str)):
                raise TranscriptError(name, f"{where}.tool_calls[{c}] must be an object with string id and name")
            out.append({"id": call["id"], "type": "function",
                        "function": {"name": call["name"], "arguments": dumps_arguments(call.get("arguments", {}))}})
        msg["tool_calls"] = out
    if role == "tool":
        cid = m.get("id", m.get("tool_call_id"))
        if not (isinstance(cid, str) and cid) and not is_numeric_id(cid):  # a number: converted (Q19)
            raise TranscriptError(name, f"{where}: tool result without id")
        msg["tool_call_id"] = cid
    return msg


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of a tau2-bench results object as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    root, sims = _root(obj_or_text, name)
    k = select(name, conversation, len(sims))
    sim = _simulation(sims, k, name)
    b = Builder()
    policy = _get(root, "info", "environment_info", "policy")
    if isinstance(policy, str):
        b.add({"role": "system", "content": policy}, "info.environment_info.policy")
    for i, m in enumerate(sim["messages"]):
        where = f"simulations[{k}].messages[{i}]"
        usage = m.get("usage") if isinstance(m, dict) and isinstance(m.get("usage"), dict) else None
        b.add(_row(m, where, name), where, usage)
    model = _get(root, "info", "agent_info", "llm")
    meta: dict[str, Any] = {key: sim[key] for key in ("task_id", "trial", "termination_reason") if key in sim}
    reward = _get(sim, "reward_info", "reward")
    if reward is not None:
        meta["reward"] = reward
    if isinstance(policy, str):
        meta["system_prompt_from"] = "info.environment_info.policy"
    return b.finish(format=NAME, path=path, tools=_tools(_get(root, "info", "environment_info", "tool_defs")),
                    model=model if isinstance(model, str) else None, conversation=k,
                    conversations=conversations(root, name=name), meta=meta)
