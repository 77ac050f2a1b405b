"""``bashkit``: everruns/bashkit-eval results ``{provider, model, max_turns, results, summary}``.

One conversation per result (``results[k].trace.messages``), in Anthropic content-block form and
converted by the ``anthropic`` converter. Tool results arrive under the **non-standard role
``tool_result``**; their blocks become ``tool`` rows like any Anthropic result, and each such source
message is reported as ``nonstandard_role``. ``task.system`` (null in the shared file) becomes a
leading system row when present. Conversations stopped by ``max_turns`` end on a tool result and
are reported as ``truncated_after_tool``. ``is_error`` results are listed in
``meta["error_results"]``; per-task token totals, which the file does not split per message, are
in ``meta["usage_total"]``. The ``bash`` tool's schema is not in the file, so ``tools`` is None.
"""

from __future__ import annotations

from typing import Any

from inspector.transcripts._common import Builder, JsonlText, require_json, select
from inspector.transcripts.anthropic_messages import convert_messages, count_rows
from inspector.transcripts.model import ConversationInfo, Transcript, TranscriptError

NAME = "bashkit"


def sniff(obj_or_text: Any, name: str) -> bool:
    """Whether ``obj_or_text`` (a parsed JSON document, or a :class:`JsonlText`) is a JSON object whose first result has a ``trace`` with a ``messages`` list.
    ``name`` is the file's name; never raises."""
    if isinstance(obj_or_text, JsonlText) or not isinstance(obj_or_text, dict):
        return False
    results = obj_or_text.get("results")
    if not isinstance(results, list) or not results or not isinstance(results[0], dict):
        return False
    trace = results[0].get("trace")
    return isinstance(trace, dict) and isinstance(trace.get("messages"), list)


def _results(obj_or_text: Any, name: str) -> tuple[dict[str, Any], list[Any]]:
    obj = require_json(obj_or_text, name, "a bashkit-eval results object")
    if not isinstance(obj, dict) or not isinstance(obj.get("results"), list):
        raise TranscriptError(name, "expected a bashkit-eval object with a 'results' list")
    return obj, obj["results"]


def _result(results: list[Any], k: int, name: str) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    res = results[k]
    trace = res.get("trace") if isinstance(res, dict) else None
    if not isinstance(trace, dict) or not isinstance(trace.get("messages"), list):
        raise TranscriptError(name, f"results[{k}] must be an object with trace.messages")
    task = res.get("task") if isinstance(res.get("task"), dict) else {}
    return task, trace, trace["messages"]


def _label(task: dict[str, Any], k: int) -> str:
    label = str(task.get("id", f"result {k}"))
    if isinstance(task.get("category"), str):
        label += f" ({task['category']})"
    return label


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in a bashkit-eval results object (one per result), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    _, results = _results(obj_or_text, name)
    out = []
    for k in range(len(results)):
        task, _, msgs = _result(results, k, name)
        rows, users = count_rows(msgs)
        if isinstance(task.get("system"), str) and task["system"]:
            rows += 1
        out.append(ConversationInfo(k, _label(task, k), rows, users))
    return out


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of a bashkit-eval results object as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    root, results = _results(obj_or_text, name)
    k = select(name, conversation, len(results))
    task, trace, msgs = _result(results, k, name)
    b = Builder()
    if isinstance(task.get("system"), str) and task["system"]:
        b.add({"role": "system", "content": task["system"]}, f"results[{k}].task.system")
    errors: list[int] = []
    prefix = f"results[{k}].trace.messages"
    convert_messages(msgs, b, origin=prefix, fail=lambda i, d: TranscriptError(name, f"{prefix}[{i}]: {d}"),
                     error_results=errors)
    meta: dict[str, Any] = {"task_id": task.get("id")}
    if errors:
        meta["error_results"] = errors
    for key in ("natural_stop", "turns", "tool_call_count"):
        if key in trace:
            meta[key] = trace[key]
    totals = {key: trace[key] for key in ("total_input_tokens", "total_output_tokens") if key in trace}
    if totals:
        meta["usage_total"] = totals
    res = results[k]
    if isinstance(res, dict) and "score" in res:
        meta["score"] = res["score"]
    model = root.get("model")
    return b.finish(format=NAME, path=path, tools=None, model=model if isinstance(model, str) else None,
                    conversation=k, conversations=conversations(root, name=name), meta=meta)
