"""Entry points: load or parse a transcript, list its conversations, print the normalised view.

Guarantee: for any input these functions return a result or raise :class:`TranscriptError`; no
other exception escapes for bad input (a fuzz test holds them to it). Importers raise precise
errors themselves; the last-resort guard below only turns an unforeseen shape into a
TranscriptError that names the file and format instead of a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from inspector.transcripts.detect import Importer, detect_in, get_importer, read_input
from inspector.transcripts.model import ConversationInfo, Transcript, TranscriptError, TranscriptReadError

DEFAULT_MAX_BYTES = 200_000_000

T = TypeVar("T")


def _guard(importer: Importer, name: str, call: Callable[[], T]) -> T:
    try:
        return call()
    except TranscriptError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as exc:
        raise TranscriptError(name, f"malformed {importer.NAME} transcript ({type(exc).__name__}: {exc})") from exc


def _prepare(data: bytes | str, name: str, format: str | None) -> tuple[Importer, Any]:
    importer = get_importer(format, file=name) if format is not None else None
    obj_or_text = read_input(data, name)
    return (importer or detect_in(obj_or_text, name)), obj_or_text


def parse_transcript(data: bytes | str, *, name: str = "<input>", format: str | None = None,
                     conversation: int = 0, path: str | None = None) -> Transcript:
    """Import one conversation from bytes or text. ``format`` (a name from ``list_formats()``)
    skips detection; ``conversation`` selects within multi-conversation files."""
    importer, obj_or_text = _prepare(data, name, format)
    return _guard(importer, name, lambda: importer.parse(obj_or_text, name=name, path=path,
                                                         conversation=conversation))


def _read(path: str | os.PathLike[str], max_bytes: int) -> tuple[bytes, str, Path]:
    """The file's bytes and its base name; ``sample:NAME`` names a bundled sample. A file that cannot
    be used at all (missing, unreadable, over the size limit) is a :class:`TranscriptReadError`."""
    from inspector.bundled import resolve_sample

    try:
        p = resolve_sample(path)
    except FileNotFoundError as exc:
        raise TranscriptReadError(str(path), str(exc)) from None
    name = p.name or str(p)
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise TranscriptReadError(name, f"file is {size:,} bytes, over the {max_bytes:,}-byte limit for a "
                                            "transcript")
        return p.read_bytes(), name, p
    except OSError as exc:
        raise TranscriptReadError(name, f"cannot read file: {exc.strerror or exc}") from None


def load_transcript(path: str | os.PathLike[str], *, format: str | None = None, conversation: int = 0,
                    max_bytes: int = DEFAULT_MAX_BYTES) -> Transcript:
    """Import one conversation from a file. Errors name the file by its base name."""
    data, name, p = _read(path, max_bytes)
    return parse_transcript(data, name=name, format=format, conversation=conversation, path=str(p))


def list_conversations(path_or_data: str | os.PathLike[str] | bytes, *, format: str | None = None,
                       max_bytes: int = DEFAULT_MAX_BYTES, name: str | None = None) -> list[ConversationInfo]:
    """The conversations of a file (a path) or of raw data; counts match what selecting each
    conversation imports. ``bytes`` are data; a ``str`` is data when it starts like JSON (``{`` or
    ``[``) and names no existing file, otherwise a path."""
    if isinstance(path_or_data, str) and path_or_data.lstrip()[:1] in ("{", "[") \
            and not os.path.exists(path_or_data):
        path_or_data = path_or_data.encode("utf-8", "surrogatepass")
    if isinstance(path_or_data, (bytes, bytearray)):
        data, label = bytes(path_or_data), name or "<input>"
    else:
        data, label, _ = _read(path_or_data, max_bytes)
    importer, obj_or_text = _prepare(data, label, format)
    return _guard(importer, label, lambda: importer.conversations(obj_or_text, name=label))


def iter_transcripts(path: str | os.PathLike[str], *, format: str | None = None,
                     max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[Transcript]:
    """Every conversation of a file, reading and decoding it once (batch analysis of a 200-episode
    benchmark file would otherwise re-parse 4 MB per episode)."""
    data, name, resolved = _read(path, max_bytes)
    importer, obj_or_text = _prepare(data, name, format)
    infos = _guard(importer, name, lambda: importer.conversations(obj_or_text, name=name))
    for info in infos:
        def parse_one(k: int = info.index) -> Transcript:
            return importer.parse(obj_or_text, name=name, path=str(resolved), conversation=k)

        yield _guard(importer, name, parse_one)


def _message_json(index: int, origin: str, msg: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"index": index, "origin": origin, "role": msg.get("role"), "content": msg.get("content")}
    for key in ("tool_calls", "tool_call_id", "name"):
        if key in msg:
            row[key] = msg[key]
    return row


def transcript_to_json(t: Transcript) -> dict[str, Any]:
    """The normalised OpenAI-shape view printed by ``context-inspector import``.

    Deterministic: the same transcript always gives the same dict (keys in a fixed order, usage
    sorted by message index with string keys so it survives ``json.dumps``).
    """
    payloads = [
        {"label": p.label, "turn": p.turn, "origin": p.origin, "model": p.model, "reply": p.reply,
         "message_count": len(p.messages), "tool_count": None if p.tools is None else len(p.tools),
         "messages": [dict(m) for m in p.messages]}
        for p in t.observed_payloads
    ]
    return {
        "format": t.format,
        "path": t.path,
        "conversation": t.conversation,
        "conversations": [{"index": c.index, "label": c.label, "messages": c.messages, "user_turns": c.user_turns}
                          for c in t.conversations],
        "model": t.model,
        "tools": t.tools,
        "messages": [_message_json(i, o, m) for i, (o, m) in enumerate(zip(t.origins, t.messages, strict=True))],
        "irregularities": [{"kind": r.kind, "index": r.index, "detail": r.detail} for r in t.irregularities],
        "usage": {str(i): t.usage[i] for i in sorted(t.usage)},
        "observed_payloads": payloads,
        "meta": t.meta,
        "compactions": [{"index": c.index, "origin": c.origin, "detail": c.detail} for c in t.compactions],
    }


def sample_path(name: str = "demo_support.json") -> Path:
    """Path of a bundled demo transcript (``inspector/samples/``). Raises :class:`FileNotFoundError`
    when no bundled sample has that name."""
    root = resources.files("inspector") / "samples" / name
    path = Path(str(root))
    if not path.is_file():
        raise FileNotFoundError(f"no bundled sample {name!r}")
    return path
