"""The one JSON writer of what leaves the process as JSON for users: a replay document, a sweep's or
a comparison's rows, imported transcripts, one call's payload.

:func:`json_text` writes a value with orjson (compact: no space after ``,`` or ``:``; non-ASCII
written as is, like ``json.dumps(..., ensure_ascii=False)``); :func:`document_text` lays a document
out one top-level field a line and one element a line of a top-level list of objects or of texts (a
frame, a commit, a summary), so a diff of two documents shows the elements that differ;
:func:`masked_document_text` is that text with secrets masked, masking only what
:func:`~inspector.redact.json_may_hold_secret` says may hold one (docs/performance.md), and
:func:`masked_document_bytes` the same as UTF-8 bytes, what a command writes to its file.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any, AnyStr

import orjson

__all__ = ["document_text", "json_text", "masked_document_bytes", "masked_document_text", "rows_text"]


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


def _wrapped(opening: AnyStr, separator: AnyStr, texts: list[AnyStr], closing: AnyStr) -> AnyStr:
    """``opening + separator.join(texts) + closing`` made by one join: a long replay's frames are
    megabytes of text, and each concatenation of the joined text would copy it again."""
    if len(texts) < 2:
        return opening + separator.join(texts) + closing
    return separator.join([opening + texts[0]] + texts[1:-1] + [texts[-1] + closing])


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
    """``document_text(mask_secrets(doc))``, the same text: :func:`masked_document_bytes` read back
    as text (a lone surrogate the standard library's encoder wrote is kept as it is)."""
    return b"".join(_masked_parts(doc, "surrogatepass")).decode("utf-8", "surrogatepass")


def masked_document_bytes(doc: dict[str, Any]) -> bytes:
    """``document_text(mask_secrets(doc))`` encoded in UTF-8, made by writing each field first and
    masking only what :func:`~inspector.redact.json_may_hold_secret` says may hold a secret: a
    top-level list written one element a line by its elements' digit-free shapes (:func:`_list_line`),
    any other field as written, with its key. Each element is walked by the masker at most once, and
    most not at all. The text is kept as orjson writes it, UTF-8 bytes, up to the file: a text copy
    of megabytes of frames (and one more to encode it again) is never made. Raises
    :class:`UnicodeEncodeError` for a text UTF-8 cannot hold (a lone surrogate)."""
    return b"".join(_masked_parts(doc, "strict"))


def _masked_parts(doc: dict[str, Any], errors: str) -> list[bytes]:
    """The pieces of :func:`masked_document_bytes` (to join once: a frames line of megabytes is
    copied once); ``errors`` is how a text the standard library's encoder wrote is encoded."""
    from inspector.redact import json_may_hold_secret, mask_secrets

    parts = [b"{\n"]
    for key, value in doc.items():
        if len(parts) > 1:
            parts.append(b",\n")
        head = f" {json_text(key)}: "
        if _one_per_line(value):
            parts += _list_line(head.encode("utf-8", errors), value, errors)
        else:
            line = head + json_text(value)
            if json_may_hold_secret(line):  # the key too: a secret-named key masks its value
                line = head + _body(mask_secrets({key: value})[key])
            parts.append(line.encode("utf-8", errors))
    parts.append(b"\n}")
    return parts


_DIGITS = b"0123456789"
_ROW = "\ue000row\ue000"
"""An element put between a list's elements so that one orjson call writes them all: orjson writes
it as is (no escape, no digit), so between two elements it reads ``,"\ue000row\ue000",``."""
_ROW_SEP = b',"' + _ROW.encode() + b'",'


def _list_line(head: bytes, value: list[Any], errors: str) -> list[bytes]:
    """``head`` and the list ``value`` written one element a line, each element that may hold a
    secret masked (the line's pieces, to join).

    The list is written by one orjson call with :data:`_ROW` between its elements, each of which
    orjson writes as it writes it alone; when the text splits at the separator into exactly as many
    pieces as elements, the pieces are the elements' texts (every separator put in is found: a
    quote inside a text is escaped, so no element's text ends inside one). (One call per element made
    orjson touch fresh memory for each, about two pages a frame: half of the writing's time.)
    A replay's frames differ mostly in their numbers: with its ASCII digits removed, a 2 000-turn
    replay's 4 000 frames have a handful of distinct texts ("shapes"). Each shape is tested once, and
    an element may hold a secret only when its shape may (a text's digit-free form says True wherever
    the text does: :func:`~inspector.redact.json_may_hold_secret`), so megabytes of frames are
    scanned as a few kilobytes. Otherwise (an element that holds the separator, a shape that may
    hold a secret, a list orjson refuses) the elements are written and tested one by one."""
    n = len(value)
    interleaved: list[Any] = [_ROW] * (2 * n - 1)
    interleaved[::2] = value
    try:
        joined = orjson.dumps(interleaved)
    except TypeError:
        return _element_line(head, value, errors)
    rows = joined.split(_ROW_SEP)
    if len(rows) != n:  # an element holds the separator
        return _element_line(head, value, errors)
    rows[0] = rows[0][1:]  # the list's brackets (one row: both), then each row is one element's text
    rows[-1] = rows[-1][:-1]
    if _any_may_hold(_distinct_shapes(rows)):
        return _element_line(head, value, errors, rows)
    # the line's pieces, joined once with the document's (a joined line would be copied again there)
    rows[0] = head + b"[\n  " + rows[0]
    rows[-1] += b"\n ]"
    pieces = [b",\n  "] * (2 * n - 1)
    pieces[::2] = rows
    return pieces


_FEW = 32
"""How many distinct shapes :func:`_distinct_shapes` lists before it hashes them."""


def _distinct_shapes(rows: list[bytes]) -> Collection[bytes]:
    """The distinct digit-free shapes of ``rows`` (each row's text with its ASCII digits removed), found
    by comparing each with the few found so far while there are at most :data:`_FEW` (a replay's
    thousands of frames have a handful of shapes): hashing reads every byte of every shape, while a
    comparison of two texts of unequal length reads none and of equal texts compares memory; each
    shape is dropped once compared (megabytes of shapes are never held at once). Past :data:`_FEW`
    distinct shapes, a set of them all."""
    seen: list[bytes] = []
    for row in rows:
        shape = row.translate(None, _DIGITS)
        if shape not in seen:
            if len(seen) == _FEW:
                return {r.translate(None, _DIGITS) for r in rows}
            seen.append(shape)
    return seen


_TAIL = 64
"""How many closing bytes of a text :func:`_any_may_hold` files it under."""


def _any_may_hold(shapes: Collection[bytes]) -> bool:
    """``any(json_may_hold_secret(s.decode()) for s in shapes)``, longest first, a text string
    (``"…"``) that ends a longer shape found False after its opening quote not scanned: every match
    of a pattern lies past that quote (none starts with ``"``), so inside the longer shape too. A
    replay document lists each summary bare and as its summary block (the same text after a header
    line): each summary's tens of kilobytes are scanned once."""
    from inspector.redact import json_may_hold_secret

    clear: dict[bytes, list[bytes]] = {}  # shapes found False, by their closing bytes
    for shape in sorted(shapes, key=len, reverse=True):
        end = shape[-_TAIL:]
        if len(shape) > _TAIL and shape[:1] == b'"' and any(t.endswith(shape[1:]) for t in clear.get(end, ())):
            continue
        if json_may_hold_secret(shape.decode()):
            return True
        clear.setdefault(end, []).append(shape)
    return False


def _element_line(head: bytes, value: list[Any], errors: str, raw: list[bytes] | None = None) -> list[bytes]:
    """:func:`_list_line` element by element: each element written alone (unless ``raw`` holds their
    texts already), and masked when its own digit-free shape, then its own text, may hold a secret."""
    from inspector.redact import json_may_hold_secret, mask_secrets

    try:
        raw = [orjson.dumps(x) for x in value] if raw is None else raw
    except TypeError:
        texts = [json_text(x) for x in value]
        if json_may_hold_secret("\n".join(texts)):
            texts = [json_text(mask_secrets(x)) if json_may_hold_secret(t) else t
                     for x, t in zip(value, texts, strict=True)]
        raw = [t.encode("utf-8", errors) for t in texts]
        return [_wrapped(head + b"[\n  ", b",\n  ", raw, b"\n ]")]
    verdict = {shape: json_may_hold_secret(shape.decode()) for shape in {b.translate(None, _DIGITS) for b in raw}}
    if any(verdict.values()):  # each element whose shape may hold one, tested on its own
        raw = [json_text(mask_secrets(x)).encode("utf-8", errors)
               if verdict[b.translate(None, _DIGITS)] and json_may_hold_secret(b.decode()) else b
               for x, b in zip(value, raw, strict=True)]
    return [_wrapped(head + b"[\n  ", b",\n  ", raw, b"\n ]")]
