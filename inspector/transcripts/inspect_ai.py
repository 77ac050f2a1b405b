"""``inspect-ai``: an Inspect AI eval log, ``.json`` or ``.eval`` (UKGovernmentBEIS/inspect_ai).

Layouts (``inspect_ai/log/_log.py`` ``EvalLog``/``EvalSample``, ``log/_recorders/eval.py``):
  * ``.json``: one ``EvalLog`` object ``{version, status, eval, plan, results, stats, samples}``;
  * ``.eval``: a zip holding ``header.json`` (the ``EvalLog`` without samples; ``_journal/start.json``
    while the run is in progress) and one ``samples/{id}_epoch_{epoch}.json`` per sample, or, for a
    large sample, its chunked shape under ``samples/{id}_epoch_{epoch}/`` (see :func:`_unchunk`), in
    the order of ``summaries.json`` when present. :func:`eval_zip_document` reads it into the
    ``.json`` shape, so both read alike.

Each sample (one ``id`` × ``epoch``) is one conversation, labelled ``sample {id} epoch {epoch}``:
its ``messages`` (``ChatMessageSystem|User|Assistant|Tool``: ``role``, ``content`` as a string or
content parts, assistant ``tool_calls`` ``{id, function, arguments: object}``, tool
``tool_call_id`` and ``function``) become chat-completions rows (origin ``samples[k].messages[i]``
or ``samples/<member>.messages[i]``). Long strings a log stores once as ``attachment://<hash>``
(``sample.attachments``; older logs: ``transcript.content``) are put back.

Model calls: each ``model`` event of ``sample.events`` (older logs: ``transcript.events``) is one
call: its ``input`` (or ``input_refs`` ranges into the sample's message pool,
``events_data.messages`` or, in older logs, ``message_pool``) is kept as an
:class:`ObservedPayload` with the event's ``tools``, and its ``output.usage`` is kept at the reply's
row. The reply is the assistant row whose ``id`` is the output message's id or, in logs whose
messages have no ids, the next assistant row with the same content and tool calls. Calls whose reply
is not among the sample's messages (a scorer's or a sub-agent's) are counted in
``meta["model_calls_elsewhere"]``.

Usage (``ModelUsage``): since inspect_ai 0.3.184 ``input_tokens`` excludes the cached tokens
(``input_tokens_cache_read``, ``input_tokens_cache_write``); before it, the OpenAI and Grok
providers included the cache reads in it. The row's usage names the three disjoint parts as
calibration reads them: ``input_tokens`` (uncached), ``cache_read_input_tokens``,
``cache_creation_input_tokens``, plus ``output_tokens`` and, when recorded, ``total_tokens``,
``reasoning_tokens``, ``total_cost``. Compaction events (``event: "compaction"``) do not say
which message they replaced, so they are listed in ``meta["compaction_events"]``, not placed.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.transcripts._common import (
    Builder,
    JsonlText,
    blocks_to_content,
    dumps_arguments,
    is_numeric_id,
    require_json,
    select,
)
from inspector.transcripts.model import ConversationInfo, Message, ObservedPayload, Transcript, TranscriptError, \
    TranscriptReadError

NAME = "inspect-ai"

ZIP_MAGIC = b"PK\x03\x04"
MAX_UNZIPPED_BYTES = 1_000_000_000
"""An ``.eval`` whose members would unpack to more than this is refused (a zip bomb guard)."""

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, ValueError, OSError, EOFError,
               NotImplementedError, RuntimeError, KeyError)
"""What reading a damaged, encrypted or oddly compressed zip can raise."""

ATTACHMENT = "attachment://"
CACHE_EXCLUDED_SINCE = (0, 3, 184)
"""The inspect_ai release from which ``input_tokens`` excludes cached tokens for every provider."""
_CACHE_INCLUDED_PROVIDERS = frozenset({"openai", "openai-api", "grok"})


# ---------------------------------------------------------------------------------------------
# the .eval zip


def eval_zip_document(data: bytes, name: str) -> dict[str, Any]:
    """An ``.eval`` zip as the ``.json`` log's object: the header plus ``samples`` (each sample's
    object gains ``"_member"``, its path in the zip, for origins). Raises
    :class:`TranscriptReadError` when ``data`` is not a readable zip, and :class:`TranscriptError`
    when it unpacks to too much or a member is not the JSON the log needs."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except _ZIP_ERRORS as exc:
        raise TranscriptReadError(name, f"not a readable zip ({exc})") from None
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        if sum(i.file_size for i in infos.values()) > MAX_UNZIPPED_BYTES:
            raise TranscriptError(name, f"the zip unpacks to more than {MAX_UNZIPPED_BYTES:,} bytes")

        def member(path: str) -> Any:
            try:
                return json.loads(zf.read(path).decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
                raise TranscriptError(name, f"{path}: not JSON ({exc})") from None
            except _ZIP_ERRORS as exc:
                raise TranscriptError(name, f"{path}: cannot unzip ({exc})") from None

        head_path = "header.json" if "header.json" in infos else "_journal/start.json"
        if head_path not in infos:
            raise TranscriptReadError(name, "a zip archive that is not an Inspect AI .eval log (no header.json or "
                                          "_journal/start.json; the only zipped format read): unzip it or export "
                                          "the conversation as JSON")
        doc = member(head_path)
        if not isinstance(doc, dict):
            raise TranscriptError(name, f"{head_path} must be an object")
        monoliths = [p for p in infos if _MONOLITH.fullmatch(p)]
        shells = [p for p in infos if _SHELL.fullmatch(p)]
        order: list[str] = []
        if "summaries.json" in infos:
            summaries = member("summaries.json")
            if isinstance(summaries, list):
                order = [f"samples/{s.get('id')}_epoch_{s.get('epoch')}" for s in summaries if isinstance(s, dict)]
        ranked = {p: n for n, p in enumerate(order)}
        keyed = [(p.removesuffix(".json"), p) for p in monoliths] + [(p.removesuffix("/sample.json"), p) for p in shells]
        keyed.sort(key=lambda kp: ranked.get(kp[0], len(ranked)))
        samples = []
        for key, path in keyed:
            sample = member(path)
            if not isinstance(sample, dict):
                raise TranscriptError(name, f"{path} must be a sample object")
            if path.endswith("/sample.json"):
                sample = _unchunk(key, sample, infos, member, name)
            samples.append({**sample, "_member": key if path.endswith("/sample.json") else path})
        return {**doc, "samples": samples}


_MONOLITH = re.compile(r"samples/[^/]+\.json")
_SHELL = re.compile(r"samples/[^/]+/sample\.json")


def _unchunk(prefix: str, shell: dict[str, Any], infos: Any, member: Any, name: str) -> dict[str, Any]:
    """A chunked sample (``samples/{id}_epoch_{epoch}/``: ``sample.json`` shell with ``message_refs``,
    ``messages/``, ``events/``, ``calls/``, ``attachments/`` chunks named by their first index; inspect_ai
    ``log/_recorders/chunked/``) as the single-entry sample: the final messages are the shell's
    ``message_refs`` ranges into the message sequence, which is also the events' message pool;
    attachments are a list referenced as ``attachment://<index>``."""
    def sequence(kind: str) -> list[Any]:
        found = re.compile(re.escape(f"{prefix}/{kind}/") + r"(\d+)\.json")
        starts = sorted((int(m.group(1)), p) for p in infos if (m := found.fullmatch(p)))
        items: list[Any] = []
        for _, path in starts:
            chunk = member(path)
            if not isinstance(chunk, list):
                raise TranscriptError(name, f"{path} must be a list (a chunk of the {kind} sequence)")
            items.extend(chunk)
        return items

    pool = sequence("messages")
    refs = shell.get("message_refs")
    messages: list[Any] = []
    for r in refs if isinstance(refs, list) else []:
        if not (isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r)):
            raise TranscriptError(name, f"{prefix}/sample.json: message_refs must hold [start, end] ranges")
        messages.extend(pool[r[0]:r[1]])
    attachments = sequence("attachments")
    return {**shell, "messages": messages, "events": sequence("events"),
            "events_data": {"messages": pool, "calls": sequence("calls")},
            "attachments": {str(i): text for i, text in enumerate(attachments)}}


# ---------------------------------------------------------------------------------------------
# sniff / conversations


def _is_log(obj: Any) -> bool:
    return (isinstance(obj, dict) and isinstance(obj.get("eval"), dict) and "version" in obj
            and ("samples" in obj or "plan" in obj or "status" in obj)
            and isinstance(obj["eval"].get("task", obj["eval"].get("model")), str))


def sniff(obj_or_text: Any, name: str) -> bool:
    """Whether ``obj_or_text`` (a parsed JSON document, or a :class:`JsonlText`) is an Inspect AI eval log object (``version`` and an ``eval`` naming its task and model).
    ``name`` is the file's name; never raises."""
    return not isinstance(obj_or_text, JsonlText) and _is_log(obj_or_text)


def _samples(obj_or_text: Any, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    log = require_json(obj_or_text, name, "an Inspect AI eval log")
    if not _is_log(log):
        raise TranscriptError(name, "expected an Inspect AI eval log: an object with 'version' and an 'eval' "
                                    "object naming its task and model")
    samples = log.get("samples")
    if samples is None:
        return log, []
    if not isinstance(samples, list):
        raise TranscriptError(name, "samples must be a list")
    for k, s in enumerate(samples):
        if not isinstance(s, dict) or not isinstance(s.get("messages"), list):
            raise TranscriptError(name, f"{_where(s, k)} must be a sample object with a 'messages' list")
    return log, samples


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _where(sample: Any, k: int) -> str:
    member = sample.get("_member") if isinstance(sample, dict) else None
    return member if isinstance(member, str) else f"samples[{k}]"


def _label(sample: dict[str, Any], k: int) -> str:
    if "id" in sample:
        return f"sample {sample['id']} epoch {sample.get('epoch', 1)}"
    return f"samples[{k}]"


def _infos(samples: list[dict[str, Any]]) -> list[ConversationInfo]:
    return [ConversationInfo(k, _label(s, k), len(s["messages"]),
                             sum(1 for m in s["messages"] if isinstance(m, dict) and m.get("role") == "user"))
            for k, s in enumerate(samples)]


def conversations(obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
    """The conversations in an Inspect AI eval log (one per sample), each with its label,
    rows and user turns, for a chooser. Raises :class:`TranscriptError` (naming the field or line)
    when the file is malformed."""
    return _infos(_samples(obj_or_text, name)[1])


# ---------------------------------------------------------------------------------------------
# messages


def _resolve(value: Any, attachments: dict[str, Any]) -> Any:
    """``attachment://<hash>`` strings replaced by their text (unknown hashes kept as they are)."""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            text = attachments.get(value[len(ATTACHMENT):])
            return text if isinstance(text, str) else value
        return value
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _row(m: Any, where: str, name: str) -> Message:
    if not isinstance(m, dict) or not isinstance(m.get("role"), str):
        raise TranscriptError(name, f"{where} must be a chat message with a role")
    role = m["role"]
    content = m.get("content")
    if isinstance(content, list):
        if not all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in content):
            raise TranscriptError(name, f"{where}.content must be a string or a list of typed content parts")
        content = blocks_to_content(content)
    elif content is not None and not isinstance(content, str):
        raise TranscriptError(name, f"{where}.content must be a string or a list of content parts")
    msg: Message = {"role": role, "content": content}
    calls = m.get("tool_calls")
    if calls:
        if not isinstance(calls, list):
            raise TranscriptError(name, f"{where}.tool_calls must be a list")
        wire = []
        for c, call in enumerate(calls):
            if (not isinstance(call, dict) or not (isinstance(call.get("id"), str) or is_numeric_id(call.get("id")))
                    or not isinstance(call.get("function"), str)):
                raise TranscriptError(name, f"{where}.tool_calls[{c}] must be {{id, function, arguments}}")
            wire.append({"id": call["id"], "type": "function",
                         "function": {"name": call["function"], "arguments": dumps_arguments(call.get("arguments", {}))}})
        msg["tool_calls"] = wire
    if role == "tool":
        cid = m.get("tool_call_id")
        if not (isinstance(cid, str) and cid) and not is_numeric_id(cid):  # a number: converted (Q19)
            raise TranscriptError(name, f"{where}: tool message without tool_call_id")
        msg["tool_call_id"] = cid
        if isinstance(m.get("function"), str):
            msg["name"] = m["function"]
    return msg


def _same_reply(row: Message, out: Message) -> bool:
    return row.get("content") == out.get("content") and row.get("tool_calls") == out.get("tool_calls")


# ---------------------------------------------------------------------------------------------
# usage


def _version(log: dict[str, Any]) -> tuple[int, ...] | None:
    packages = log["eval"].get("packages")
    text = packages.get("inspect_ai") if isinstance(packages, dict) else None
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", text) if isinstance(text, str) else None
    return tuple(int(x) for x in found.groups()) if found else None


def _num(usage: dict[str, Any], key: str) -> int | None:
    v = usage.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def call_usage(raw: Any, *, cache_included: bool) -> dict[str, Any] | None:
    """A ``ModelUsage`` in the disjoint parts calibration reads (see the module doc); None when
    the call recorded no input count."""
    if not isinstance(raw, dict):
        return None
    given = _num(raw, "input_tokens")
    if given is None:
        return None
    read, write = _num(raw, "input_tokens_cache_read"), _num(raw, "input_tokens_cache_write")
    uncached = max(given - (read or 0), 0) if cache_included else given
    out: dict[str, Any] = {"input_tokens": uncached}
    if read is not None:
        out["cache_read_input_tokens"] = read
    if write is not None:
        out["cache_creation_input_tokens"] = write
    for key in ("output_tokens", "total_tokens", "reasoning_tokens"):
        if _num(raw, key) is not None:
            out[key] = raw[key]
    if isinstance(raw.get("total_cost"), (int, float)) and not isinstance(raw.get("total_cost"), bool):
        out["total_cost"] = raw["total_cost"]
    return out


def _cache_included(log: dict[str, Any], model: str | None) -> bool:
    version = _version(log)
    if version is None or version >= CACHE_EXCLUDED_SINCE:
        return False
    provider = (model or "").split("/", 1)[0]
    return provider in _CACHE_INCLUDED_PROVIDERS


def _tools(raw: Any) -> list[dict[str, Any]] | None:
    if not isinstance(raw, list):
        return None
    out = []
    for t in raw:
        if isinstance(t, dict) and isinstance(t.get("name"), str):
            fn = {k: t[k] for k in ("name", "description", "parameters") if k in t}
            out.append({"type": "function", "function": fn})
    return out


# ---------------------------------------------------------------------------------------------
# parse


@dataclass
class _Calls:
    observed: list[ObservedPayload] = field(default_factory=list)
    usage: dict[int, dict[str, Any]] = field(default_factory=dict)
    elsewhere: int = 0
    tools: list[dict[str, Any]] | None = None
    models: list[str] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)


def _reply_row(raw_reply: dict[str, Any], reply: Message, at: dict[Any, int], rows: Sequence[Message],
               cursor: int) -> int | None:
    """The assistant row a model call's reply is: found by message id, or (in a log without message
    ids) the first assistant row from ``cursor`` on with the same reply; None when it is no
    assistant row of the sample (the call's reply went elsewhere)."""
    index = at.get(raw_reply.get("id")) if isinstance(raw_reply.get("id"), str) else None
    if index is None and not at:
        index = next((n for n in range(cursor, len(rows))
                      if rows[n]["role"] == "assistant" and _same_reply(rows[n], reply)), None)
    if index is None or rows[index]["role"] != "assistant":
        return None
    return index


def _call_input(event: dict[str, Any], ev: str, pool: list[Any], attachments: dict[str, Any],
                name: str) -> list[Message]:
    """A model event's input rows: its ``input_refs`` ranges of the sample's message pool when it
    has them, else its ``input``. Raises :class:`TranscriptError` when a ref is not a ``[start, end]`` range."""
    refs = event.get("input_refs")
    given = event.get("input")
    raw_input: list[Any] = given if isinstance(given, list) else []
    if isinstance(refs, list) and refs:
        raw_input = []
        for r in refs:
            if not (isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r)):
                raise TranscriptError(name, f"{ev}.input_refs must hold [start, end] ranges")
            raw_input.extend(pool[r[0]:r[1]])
    return [_row(_resolve(m, attachments), f"{ev}.input[{i}]", name) for i, m in enumerate(raw_input)]


def _model_calls(log: dict[str, Any], sample: dict[str, Any], where: str, rows: list[Message],
                 ids: list[Any], attachments: dict[str, Any], name: str) -> _Calls:
    """The sample's model calls, matched to its assistant rows: each call's input as an observed
    payload, its usage at its reply's row, the tools and models seen, compaction events, and how
    many calls' replies are not rows of the sample (failed, or another conversation's)."""
    out = _Calls()
    transcript = _obj(sample.get("transcript"))
    events = sample.get("events") if isinstance(sample.get("events"), list) else transcript.get("events")
    if not isinstance(events, list):
        return out
    key = "events" if isinstance(sample.get("events"), list) else "transcript.events"
    data = sample.get("events_data")
    pool = data.get("messages") if isinstance(data, dict) else sample.get("message_pool")
    pool = pool if isinstance(pool, list) else []
    at = {i: n for n, i in enumerate(ids) if isinstance(i, str)}
    cursor = 0  # next row to match by content (logs without message ids)
    for j, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        if event.get("event") == "compaction":
            out.compactions.append({k: event[k] for k in ("type", "tokens_before", "tokens_after", "source")
                                    if k in event})
            continue
        if event.get("event") != "model":
            continue
        ev = f"{where}.{key}[{j}]"
        output = _obj(event.get("output"))
        choices = output.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
                or not isinstance(choices[0].get("message"), dict):
            out.elsewhere += 1  # a failed call: no reply
            continue
        raw_reply = _resolve(choices[0]["message"], attachments)
        reply = _row({**raw_reply, "role": "assistant"}, f"{ev}.output.choices[0].message", name)
        index = _reply_row(raw_reply, reply, at, rows, cursor)
        if index is None:
            out.elsewhere += 1
            continue
        cursor = index + 1
        payload = _call_input(event, ev, pool, attachments, name)
        tools = _tools(_resolve(event.get("tools"), attachments))
        model = event.get("model") if isinstance(event.get("model"), str) else None
        if model and model not in out.models:
            out.models.append(model)
        users = sum(1 for m in rows[:index] if m["role"] == "user")
        out.observed.append(ObservedPayload(label=f"model call {len(out.observed) + 1}", turn=users - 1 if users else None,
                                            messages=payload, tools=tools, model=model, origin=f"{ev}.input", reply=index))
        usage = call_usage(output.get("usage"), cache_included=_cache_included(log, model))
        if usage is not None:
            out.usage[index] = usage
        if tools:
            out.tools = tools
    return out


def parse(obj_or_text: Any, *, name: str, path: str | None = None, conversation: int = 0) -> Transcript:
    """Conversation ``conversation`` of an Inspect AI eval log as a :class:`Transcript` (``path``
    recorded on it). Raises :class:`TranscriptError` (naming the field or line) when the file is
    malformed or holds no such conversation."""
    log, samples = _samples(obj_or_text, name)
    k = select(name, conversation, len(samples))
    sample = samples[k]
    where = _where(sample, k)
    transcript = _obj(sample.get("transcript"))
    attachments = _obj(sample.get("attachments") if isinstance(sample.get("attachments"), dict)
                       else transcript.get("content"))
    b = Builder()
    ids: list[Any] = []
    for i, m in enumerate(sample["messages"]):
        msg = _row(_resolve(m, attachments), f"{where}.messages[{i}]", name)
        b.add(msg, f"{where}.messages[{i}]")
        ids.append(m.get("id"))
    calls = _model_calls(log, sample, where, b.messages, ids, attachments, name)
    b.usage.update(calls.usage)
    default_model = log["eval"].get("model")
    model = calls.models[0] if calls.models else (default_model if isinstance(default_model, str) else None)
    meta: dict[str, Any] = {"task": log["eval"].get("task"), "sample_id": sample.get("id"),
                            "epoch": sample.get("epoch"), "model_calls": len(calls.observed)}
    version = _version(log)
    if version is not None:
        meta["inspect_ai"] = ".".join(map(str, version))
    if calls.elsewhere:
        meta["model_calls_elsewhere"] = calls.elsewhere
    if len(calls.models) > 1:
        meta["models"] = calls.models
    if calls.compactions:
        meta["compaction_events"] = calls.compactions
    return b.finish(format=NAME, path=path, tools=calls.tools, model=model, conversation=k,
                    conversations=_infos(samples), meta=meta, observed=calls.observed)
