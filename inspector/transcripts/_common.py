"""Machinery shared by the importers: decoding, JSON/JSONL reading, the flat-conversation builder,
and the one analysis pass that reports irregularities for every format alike.

Why one analysis pass: each format has its own quirks, but "is this result next to its call?" has
a single answer in the OpenAI shape all importers produce. Running the same O(n) pass on every
import keeps the reports comparable across formats and keeps importers free of pairing logic.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from inspector.ids import is_numeric_id, stringify_ids
from inspector.transcripts.model import (
    STANDARD_ROLES,
    ConversationInfo,
    Irregularity,
    Message,
    ObservedPayload,
    Transcript,
    TranscriptError,
    TranscriptReadError,
)


class JsonlText(str):
    """Input text that is not one JSON document (so possibly JSON Lines).

    Importers receive either the parsed JSON value or this marker type, so a JSON document that
    happens to be a bare string is never mistaken for JSONL text. ``json_error`` keeps the reason
    the whole text did not parse, for importers that need a single document.
    """

    json_error: json.JSONDecodeError | None

    def __new__(cls, text: str, json_error: json.JSONDecodeError | None = None) -> JsonlText:
        obj = super().__new__(cls, text)
        obj.json_error = json_error
        return obj


ARCHIVE_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
"""A zip archive's first bytes (an Inspect AI ``.eval`` log is one)."""


def _not_text(head: bytes, offset: int) -> str:
    if head.startswith(ARCHIVE_MAGIC):
        return ("a zip archive that is not an Inspect AI .eval log (the only zipped format read): unzip it "
                "or export the conversation as JSON")
    if head.startswith(b"\x1f\x8b"):
        return "a gzip-compressed file, not a transcript (decompress it first)"
    return f"not UTF-8 text (invalid byte at offset {offset}): not a transcript in any supported format"


def decode(data: bytes | bytearray | memoryview | str, name: str) -> str:
    """Bytes to text: UTF-8 (a leading BOM is dropped); anything else is a TranscriptError."""
    if isinstance(data, str):
        text = data
    elif not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"transcript data must be bytes or str, not {type(data).__name__}")
    else:
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TranscriptReadError(name, _not_text(bytes(data[:4]), exc.start)) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise TranscriptError(name, "empty file")
    return text


def parse_input(text: str) -> Any:
    """The JSON value of ``text``, or ``JsonlText(text)`` when it is not a single JSON document."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        return JsonlText(text, exc)
    except RecursionError:
        return JsonlText(text, None)


def require_json(obj_or_text: Any, name: str, what: str) -> Any:
    """The parsed document, or a TranscriptError naming the JSON syntax error and its line."""
    if isinstance(obj_or_text, JsonlText):
        err = obj_or_text.json_error
        if err is None:
            raise TranscriptError(name, f"invalid JSON (nested too deeply); expected {what}")
        raise TranscriptError(name, f"invalid JSON: {err.msg} (column {err.colno}); expected {what}",
                              line=err.lineno)
    return obj_or_text


_DECODER: Any = json.JSONDecoder()  # ``scan_once`` is not in the typeshed stubs
_JSON_SPACE = " \t\r"


def _split_lines(text: str) -> list[str]:
    # Not str.splitlines(): JSON strings may legally hold raw U+2028 / U+0085, which it splits on.
    return text.split("\n")


def first_jsonl_value(text: str) -> Any:
    """The JSON value on the first non-blank line of ``text`` (None if it does not parse)."""
    for line in _split_lines(text):
        if line.strip(_JSON_SPACE):
            try:
                return json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                return None
    return None


def jsonl_values(text: str, name: str) -> list[tuple[int, Any]]:
    """``(line number, value)`` for every non-blank line. Raises :class:`TranscriptError` naming the
    first line that is not one JSON value (worded by ``json.loads``: what is wrong, and where)."""
    out: list[tuple[int, Any]] = []
    scan = _DECODER.scan_once
    for lineno, line in enumerate(_split_lines(text), start=1):
        s = line.strip(_JSON_SPACE)
        if not s:
            continue
        try:
            value, end = scan(s, 0)
            if end == len(s):
                out.append((lineno, value))
                continue
        except (StopIteration, ValueError, RecursionError):
            pass
        try:
            json.loads(line)
        except json.JSONDecodeError as exc:
            raise TranscriptError(name, f"invalid JSON: {exc.msg} (column {exc.colno})", line=lineno) from None
        except RecursionError:
            raise TranscriptError(name, "invalid JSON: nested too deeply", line=lineno) from None
        raise TranscriptError(name, "invalid JSON", line=lineno)  # pragma: no cover - loads agreed with scan
    return out


def lines_or_document(obj_or_text: Any, name: str) -> list[tuple[int, Any]]:
    """JSONL rows for formats stored one object per line; a one-line file parses as a single JSON
    document, so a bare object is accepted as line 1. Returns ``(line number, value)`` pairs;
    raises :class:`TranscriptError` when the input is neither."""
    if isinstance(obj_or_text, JsonlText):
        return jsonl_values(obj_or_text, name)
    if isinstance(obj_or_text, dict):
        return [(1, obj_or_text)]
    raise TranscriptError(name, "expected JSON Lines (one JSON object per line)")


def dumps_arguments(value: Any) -> str:
    """Tool-call arguments as the JSON string OpenAI uses. A string is kept verbatim (it already is
    the wire form); anything else is ``json.dumps`` with default separators and key order."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


# ---------------------------------------------------------------------------------------------
# pydantic errors → one readable sentence naming the field

_PHRASES = {
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "bool_type": "must be a boolean",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "missing": "is missing",
    "literal_error": "has an unexpected value",
}


def loc_path(loc: Iterable[str | int]) -> str:
    """``("tool_calls", 0, "function", "arguments")`` → ``tool_calls[0].function.arguments``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def describe_validation_error(exc: ValidationError, *, skip: int = 0) -> tuple[tuple[Any, ...], str]:
    """The first error as (its loc, a sentence): ``tool_calls[0].function.arguments must be a
    string``. ``skip`` drops leading loc parts the caller reports itself (e.g. a list index)."""
    err = exc.errors(include_url=False)[0]
    loc = tuple(err.get("loc", ()))
    field = loc_path(loc[skip:])
    kind = err.get("type", "")
    if kind == "value_error":
        phrase = str(err.get("msg", "")).removeprefix("Value error, ")
    else:
        phrase = _PHRASES.get(kind) or str(err.get("msg", "is invalid")).lower()
    if not field:
        return loc, phrase
    # a validator naming a sub-path ("[2] must be an object") continues the field path
    return loc, (f"{field}{phrase}" if phrase.startswith(("[", ".")) else f"{field} {phrase}")


# ---------------------------------------------------------------------------------------------
# content helpers


def blocks_to_content(blocks: Sequence[Any]) -> str | list[Any] | None:
    """Provider content blocks → chat-completions content.

    Text-only content becomes a string when it is one block (what the model saw) or a list of
    ``{"type": "text", "text"}`` parts when it is several (joining would invent separators). Any
    other block (image, thinking, unknown) keeps the whole content as a list of parts, unchanged,
    and the analysis reports it as ``non_text_content``.
    """
    if not blocks:
        return None
    if all(isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) for b in blocks):
        if len(blocks) == 1:
            return str(blocks[0]["text"])
        return [{"type": "text", "text": b["text"]} for b in blocks]
    return [dict(b) if isinstance(b, dict) else b for b in blocks]


def object_with_role(m: Any, where: str, name: str) -> tuple[dict[str, Any], str]:
    """The row as a dict and its role, or a TranscriptError naming where it is."""
    if not isinstance(m, dict):
        raise TranscriptError(name, f"{where} must be an object")
    role = m.get("role")
    if not isinstance(role, str):
        raise TranscriptError(name, f"{where}.role must be a string")
    return m, role


def plain_content(m: dict[str, Any], where: str, name: str) -> Any:
    """OpenAI-like content: a string, a list of parts, or null (kept as is). Raises
    :class:`TranscriptError` (naming ``where``) for anything else."""
    content = m.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise TranscriptError(name, f"{where}.content must be a string, a list or null")
    return content


def count_user_turns(messages: Iterable[Mapping[str, Any]]) -> int:
    """How many of ``messages`` are user rows."""
    return sum(1 for m in messages if m.get("role") == "user")


def select(name: str, conversation: int, total: int) -> int:
    """``conversation`` when it is an index among ``total`` conversations. Raises
    :class:`TranscriptError` when it is not an integer, the file holds none, or it is out of range
    (saying how many there are)."""
    if isinstance(conversation, bool) or not isinstance(conversation, int):
        raise TranscriptError(name, f"conversation must be an integer, got {conversation!r}")
    if total == 0:
        raise TranscriptError(name, "the file holds no conversations")
    if not 0 <= conversation < total:
        raise TranscriptError(
            name, f"conversation {conversation} is out of range: the file holds {total} "
                  f"conversation{'s' if total != 1 else ''} (0-{total - 1})")
    return conversation


# ---------------------------------------------------------------------------------------------
# irregularity analysis (one pass, O(n))


def analyse(messages: Sequence[Message]) -> list[Irregularity]:
    """Report what a strict provider or pairing validator would object to, without changing
    anything. Results are matched to the *latest* earlier call declaring their id, so reused ids
    (SWE-agent) still pair with their own call. Returns the irregularities in transcript order of
    the rows that show them, then the calls never answered and a transcript that ends on a result."""
    found: list[Irregularity] = []
    pairing = _Pairing(found)
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in STANDARD_ROLES or isinstance(msg.get("content"), list):  # else the row's shape is fine
            found.extend(_row_shape(i, msg, role))
        calls = msg.get("tool_calls")
        if calls:
            pairing.declare(i, role, calls)
        elif role == "tool":
            pairing.result(i, msg.get("tool_call_id"))
        else:
            pairing.run_ask = None
    for j, cid in pairing.pending:
        nxt = _next_non_tool(messages, j)
        where = "the transcript ends first" if nxt is None else f"next message {nxt} is {messages[nxt].get('role')!r}"
        found.append(Irregularity("unanswered_call", j, f"call {cid!r} has no result; {where}"))
    if messages and messages[-1].get("role") == "tool":
        found.append(Irregularity("truncated_after_tool", len(messages) - 1,
                                  "the transcript ends on a tool result with no assistant reply after it"))
    return found


def _row_shape(i: int, msg: Message, role: Any) -> list[Irregularity]:
    """Row ``i``'s own shape: a role chat completions does not know, content parts that are not text."""
    out: list[Irregularity] = []
    if role not in STANDARD_ROLES:
        out.append(Irregularity("nonstandard_role", i, f"role {role!r} is not a chat-completions role"))
    content = msg.get("content")
    if isinstance(content, list):
        kinds = sorted({str(p.get("type")) if isinstance(p, dict) else type(p).__name__
                        for p in content if not (isinstance(p, dict) and p.get("type") == "text")})
        if kinds:
            out.append(Irregularity("non_text_content", i, "content has non-text parts: " + ", ".join(kinds)))
    return out


class _Pairing:
    """Tool calls and their results, row by row, reporting into ``found``: ``declared`` maps an id
    to the latest message declaring it, ``pending`` holds the (ask index, id) pairs without a result
    yet (in order), and ``run_ask`` is the ask whose contiguous run of tool rows we are in."""

    def __init__(self, found: list[Irregularity]) -> None:
        self.found = found
        self.declared: dict[str, int] = {}
        self.pending: dict[tuple[int, str], None] = {}
        self.answered: set[tuple[int, str]] = set()
        self.run_ask: int | None = None

    def declare(self, i: int, role: Any, calls: Sequence[Any]) -> None:
        """Row ``i`` asks ``calls``: reported when not an assistant row, or when it reuses an id."""
        found, declared = self.found, self.declared
        if role != "assistant":
            found.append(Irregularity("tool_calls_on_non_assistant", i, f"a {role!r} message carries tool_calls"))
        seen_here: set[str] = set()
        for call in calls:
            cid = call.get("id") if isinstance(call, dict) else None
            if not isinstance(cid, str) or not cid:
                continue
            if cid in seen_here:
                found.append(Irregularity("reused_tool_call_id", i, f"call id {cid!r} appears twice in this message"))
            elif cid in declared:
                found.append(Irregularity("reused_tool_call_id", i,
                                          f"call id {cid!r} was already declared by message {declared[cid]}"))
            seen_here.add(cid)
            declared[cid] = i
            self.pending[(i, cid)] = None
        self.run_ask = i

    def result(self, i: int, cid: Any) -> None:
        """Row ``i`` is the result for ``cid``: reported when it matches no earlier call, answers
        one twice, or stands outside the run of results right after its call."""
        if not isinstance(cid, str) or cid not in self.declared:
            self.found.append(Irregularity("orphan_result", i, f"tool_call_id {cid!r} matches no earlier tool call"))
            return
        j = self.declared[cid]
        key = (j, cid)
        if key in self.answered:
            self.found.append(Irregularity("duplicate_result", i, f"second result for {cid!r} (called by message {j})"))
            return
        self.answered.add(key)
        self.pending.pop(key, None)
        if self.run_ask != j:
            self.found.append(Irregularity(
                "result_far_from_call", i,
                f"result for {cid!r} is not in the run of tool results right after its call (message {j})"))


def _next_non_tool(messages: Sequence[Message], j: int) -> int | None:
    for k in range(j + 1, len(messages)):
        if messages[k].get("role") != "tool":
            return k
    return None


# ---------------------------------------------------------------------------------------------
# builder


class Builder:
    """Collects one flat conversation: every row with its origin, usage and importer notes.

    Importers only ever append; ``finish`` runs the shared analysis and assembles the Transcript,
    so no importer can forget an origin or skip the irregularity report.
    """

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.origins: list[str] = []
        self.usage: dict[int, dict[str, Any]] = {}
        self.notes: list[Irregularity] = []

    def add(self, message: Message, origin: str, usage: Mapping[str, Any] | None = None) -> int:
        """Append ``message`` (read from ``origin``, with the provider's ``usage`` of
        the call it replies to, if any); returns its index."""
        index = len(self.messages)
        self.messages.append(message)
        self.origins.append(origin)
        if usage:
            self.usage[index] = dict(usage)
        return index

    def extend(self, messages: Sequence[Message], origins: Iterable[str],
               usage: Mapping[int, Mapping[str, Any]]) -> None:
        """:meth:`add` for each of ``messages`` in order, with its origin from ``origins`` and its
        usage from ``usage`` (by position in ``messages``), in a few list operations."""
        start = len(self.messages)
        self.messages += messages
        self.origins += origins
        for i, u in usage.items():
            if u:
                self.usage[start + i] = dict(u)

    def note(self, kind: str, index: int | None, detail: str) -> None:
        """Record an irregularity the importer saw at row ``index`` (None: the whole file)."""
        self.notes.append(Irregularity(kind, index, detail))

    def finish(self, *, format: str, path: str | None, tools: list[dict[str, Any]] | None,
               model: str | None, conversation: int, conversations: list[ConversationInfo],
               meta: dict[str, Any] | None = None,
               observed: list[ObservedPayload] | None = None) -> Transcript:
        """The :class:`Transcript` of the rows added, with the irregularities the
        importer noted and those :func:`analyse` finds (non-string ids converted first), ordered by row."""
        self.notes += stringify_tool_call_ids(self.messages)
        merged: list[Irregularity] = []
        seen: set[tuple[str, int | None]] = set()
        for irr in [*self.notes, *analyse(self.messages)]:
            key = (irr.kind, irr.index)
            if irr.kind == "nonstandard_role" and key in seen:
                continue  # the importer already reported the source role for this row
            seen.add(key)
            merged.append(irr)
        merged.sort(key=lambda r: (r.index is None, r.index if r.index is not None else 0))
        return Transcript(format=format, path=path, messages=self.messages, origins=self.origins,
                          tools=tools, model=model, usage=self.usage, irregularities=merged,
                          conversation=conversation, conversations=conversations,
                          observed_payloads=observed or [], meta=meta or {})


def stringify_tool_call_ids(messages: list[Message]) -> list[Irregularity]:
    """Convert integer (or other numeric) tool-call ids and ``tool_call_id`` values to strings in
    place, as the reference does (Q19, the rule in :mod:`inspector.ids`), and report each converted
    row as ``tool_call_id_converted``. Providers reject non-string ids, so keeping them would send an
    invalid payload."""
    found: list[Irregularity] = []
    for i, msg in enumerate(messages):
        tcid = msg.get("tool_call_id")
        if (tcid is None or type(tcid) is str) and not msg.get("tool_calls"):
            continue  # the usual row (no call to read): stringify_ids's own first test, without the call
        new, changed = stringify_ids(msg)
        if changed:
            msg.update(new)
            found.append(Irregularity("tool_call_id_converted", i,
                                      "non-string id converted to a string: " + ", ".join(changed)))
    return found


def conversation_info(index: int, label: str, messages: Sequence[Mapping[str, Any]]) -> ConversationInfo:
    """The chooser's entry for conversation ``index``: its label, rows and user turns."""
    return ConversationInfo(index=index, label=label, messages=len(messages), user_turns=count_user_turns(messages))


def wire_tool_calls(calls: Any, where: str, name: str) -> list[dict[str, Any]]:
    """Source tool calls already in the OpenAI wire shape (SWE-agent, Letta), re-built with only
    the keys the engine reads; anything else is an error naming the call."""
    if not isinstance(calls, list):
        raise TranscriptError(name, f"{where}.tool_calls must be a list")
    out: list[dict[str, Any]] = []
    for c, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if (not isinstance(call, dict) or not isinstance(fn, dict)
                or not (isinstance(call.get("id"), str) or is_numeric_id(call.get("id")))
                or not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments"), str)):
            raise TranscriptError(
                name, f"{where}.tool_calls[{c}] must be {{id, function: {{name, arguments: string}}}}")
        out.append({"id": call["id"], "type": call.get("type") or "function",
                    "function": {"name": fn["name"], "arguments": fn["arguments"]}})
    return out
