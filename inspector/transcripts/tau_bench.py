"""``tau-bench``: sierra-research/tau-bench historical trajectories.

A JSON array of episodes ``{task_id, trial, reward, info, traj}``; ``traj`` is exact
chat-completions, so it goes through the ``openai`` validator unchanged (origin ``[k].traj[i]``).
One conversation per episode. The file has no tool schemas and does not name the agent model, so
``tools`` and ``model`` are None. Episodes that stop on a tool result (a transfer to a human, or the
30-step cap) are reported as ``truncated_after_tool`` by the shared analysis.

Only the selected episode is validated: the 4 MB file lists in milliseconds, and a malformed
episode does not stop anyone from opening the others.
"""

from __future__ import annotations

from typing import Any

from inspector.transcripts._common import Builder, JsonlText, count_user_turns, require_json, select
from inspector.transcripts.model import ConversationInfo, Transcript, TranscriptError
from inspector.transcripts.openai_chat import normalize_messages

NAME = "tau-bench"


def sniff(obj_or_text: Any, name: str) -> bool:
    """Whether ``obj_or_text`` (a parsed JSON document, or a :class:`JsonlText`) is a non-empty JSON array whose first element has a ``traj`` list.
    ``name`` is the file's name; never raises."""
    return (not isinstance(obj_or_text, JsonlText) and isinstance(obj_or_text, list) and bool(obj_or_text)
            and isinstance(obj_or_text[0], dict) and isinstance(obj_or_text[0].get("traj"), list))


def _episodes(obj_or_text: Any, name: str) -> list[Any]:
    obj = require_json(obj_or_text, name, "a tau-bench trajectory array")
    if not isinstance(obj, list):
        raise TranscriptError(name, "expected a JSON array of tau-bench episodes ({task_id, trial, traj})")
    return obj


def _episode(episodes: list[Any], k: int, name: str) -> dict[str, Any]:
    ep = episodes[k]
    if not isinstance(ep, dict) or not isinstance(ep.get("traj"), list):
        raise TranscriptError(name, f"[{k}] must be an episode object with a 'traj' list")
    return ep


def _label(ep: dict[str, Any], k: int) -> str:
    parts = [f"task {ep.get('task_id', k)}"]
    if ep.get("trial") is not None:
        parts.append(f"trial {ep['trial']}")
    label = " ".join(parts)
    if isinstance(ep.get("reward"), (int, float)):
        label += f" (reward {ep['reward']})"
    return label


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in a tau-bench trajectory array (one per episode), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    episodes = _episodes(obj_or_text, name)
    out = []
    for k in range(len(episodes)):
        ep = _episode(episodes, k, name)
        traj = [m for m in ep["traj"] if isinstance(m, dict)]
        out.append(ConversationInfo(k, _label(ep, k), len(ep["traj"]), count_user_turns(traj)))
    return out


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of a tau-bench trajectory array as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    episodes = _episodes(obj_or_text, name)
    k = select(name, conversation, len(episodes))
    ep = _episode(episodes, k, name)
    messages, usage, dropped = normalize_messages(
        ep["traj"], lambda i, d: TranscriptError(name, f"[{k}].traj[{i}]: {d}"))
    b = Builder()
    for i, msg in enumerate(messages):
        b.add(msg, f"[{k}].traj[{i}]", usage.get(i))
    meta: dict[str, Any] = {key: ep[key] for key in ("task_id", "trial", "reward") if key in ep}
    if dropped:
        meta["dropped_fields"] = dict(sorted(dropped.items()))
    return b.finish(format=NAME, path=path, tools=None, model=None, conversation=k,
                    conversations=conversations(episodes, name=name), meta=meta)
