"""The one JSON writer of what leaves the process as JSON for users: a replay document, a sweep's or
a comparison's rows, imported transcripts, one call's payload.

:func:`json_text` writes a value with orjson (compact: no space after ``,`` or ``:``; non-ASCII
written as is, like ``json.dumps(..., ensure_ascii=False)``); :func:`document_text` lays a document
out one top-level field a line and one element a line of a top-level list of objects or of texts (a
frame, a commit, a summary), so a diff of two documents shows the elements that differ;
:func:`masked_document_text` is that text with secrets masked, masking only what
:func:`~inspector.redact.json_may_hold_secret` says may hold one (docs/performance.md).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["document_text", "json_text", "masked_document_text", "rows_text"]


def json_text(value: Any) -> str:
    """``value`` as compact JSON text (orjson). What orjson refuses — a dict key that is not a text,
    a text holding a lone UTF-16 surrogate, an integer beyond 64 bits, a type JSON has no form for —
    is written by the standard library's encoder instead (non-ASCII as is, an unknown type as its
    ``str``), so the writer never fails where ``json.dumps`` did not. NaN and infinities are written
    as ``null`` (strict JSON; ``json.dumps`` wrote ``NaN``, which JSON does not have)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value, ensure_ascii=False, default=str)


def _one_per_line(value: Any) -> bool:
    """Whether a top-level field's value is written one element a line: a non-empty list of objects
    (frames, commits, rows) or of texts (summaries)."""
    if type(value) is not list or not value:
        return False
    kind = type(value[0])
    return (kind is dict or kind is str) and all(type(x) is kind for x in value)


def _wrapped(opening: str, separator: str, texts: list[str], closing: str) -> str:
    """``opening + separator.join(texts) + closing`` made by one join: a long replay's frames are
    megabytes of text, and each concatenation of the joined text would copy it again."""
    if len(texts) < 2:
        return opening + separator.join(texts) + closing
    return separator.join([opening + texts[0], *texts[1:-1], texts[-1] + closing])


def _rows(texts: list[str]) -> str:
    return _wrapped("[\n  ", ",\n  ", texts, "\n ]") if texts else "[\n\n ]"


def _body(value: Any) -> str:
    """One top-level field's value as :func:`document_text` writes it."""
    return _rows([json_text(x) for x in value]) if _one_per_line(value) else json_text(value)


def rows_text(rows: list[Any]) -> str:
    """A JSON array as text, one element a line (a fleet summary's rows)."""
    return "[\n" + ",\n".join(" " + json_text(x) for x in rows) + "\n]"


def document_text(doc: dict[str, Any]) -> str:
    """A JSON object as text, each top-level field on its own line and each element of a top-level
    list of objects or of texts on its own line (valid JSON that ``json.loads`` reads back as ``doc``)."""
    return _wrapped("{\n", ",\n", [f" {json_text(key)}: {_body(value)}" for key, value in doc.items()], "\n}")


def masked_document_text(doc: dict[str, Any]) -> str:
    """``document_text(mask_secrets(doc))``, the same text, made by writing each field first and
    masking only what :func:`~inspector.redact.json_may_hold_secret` says may hold a secret: a
    top-level list written one element a line by its elements' digit-free shapes (:func:`_list_line`),
    any other field as written, with its key. Each element is walked by the masker at most once, and
    most not at all."""
    from inspector.redact import json_may_hold_secret, mask_secrets

    lines = []
    for key, value in doc.items():
        head = f" {json_text(key)}: "
        if _one_per_line(value):
            line = _list_line(head, value)
        else:
            line = head + json_text(value)
            if json_may_hold_secret(line):  # the key too: a secret-named key masks its value
                line = head + _body(mask_secrets({key: value})[key])
        lines.append(line)
    return _wrapped("{\n", ",\n", lines, "\n}")


_DIGITS = b"0123456789"


def _list_line(head: str, value: list[Any]) -> str:
    """``head`` and the list ``value`` written one element a line, each element that may hold a
    secret masked.

    A replay's frames differ mostly in their numbers: with its ASCII digits removed, a 2 000-turn
    replay's 4 000 frames have a handful of distinct texts ("shapes"). Each shape is tested once, and
    an element may hold a secret only when its shape may (a text's digit-free form says True wherever
    the text does: :func:`~inspector.redact.json_may_hold_secret`), so megabytes of frames are
    scanned as a few kilobytes. A list orjson refuses is written and tested element by element."""
    from inspector.redact import json_may_hold_secret, mask_secrets

    try:
        raw = [orjson.dumps(x) for x in value]
    except TypeError:
        texts = [json_text(x) for x in value]
        if json_may_hold_secret("\n".join(texts)):
            texts = [json_text(mask_secrets(x)) if json_may_hold_secret(t) else t
                     for x, t in zip(value, texts, strict=True)]
        return _wrapped(head + "[\n  ", ",\n  ", texts, "\n ]")
    verdict = {shape: json_may_hold_secret(shape.decode()) for shape in {b.translate(None, _DIGITS) for b in raw}}
    texts = [b.decode() for b in raw]
    if any(verdict.values()):  # rarely: each element whose shape may hold one, tested on its own
        texts = [json_text(mask_secrets(x)) if verdict[b.translate(None, _DIGITS)] and json_may_hold_secret(t) else t
                 for x, b, t in zip(value, raw, texts, strict=True)]
    return _wrapped(head + "[\n  ", ",\n  ", texts, "\n ]")
