"""Identifiers in text: the facts a model must still see to act correctly.

Shared by the offline stand-in summarizer (which keeps the sentences that carry them) and the
forgetting detector (:mod:`inspector.forgetting`, which reports those a call needed but could no
longer see). The rules are deliberately small and documented; pass your own extractor (any
callable ``str -> Iterable[Identifier]``) where a function takes ``extractor=``.

Rules of :func:`extract_identifiers`, applied in this order (a span claimed by an earlier rule is
not matched again by a later one). Two masks come first: they claim spans that are never reported,
because on real transcripts they are a key or a format word, not a fact an agent needs to act
(measured on hand-labelled references, docs/forgetting-precision.md):

* a **key** — a field name in double quotes followed by a colon (``"address1":``, ``"zip" :``,
  ``\\"first_name\\":`` in escaped JSON): a letter or ``_``, then up to 39 letters, ``_`` or ``-``,
  then at most two digits. Its value is read as usual. A quoted id used as a key
  (``"credit_card_9525117":``, ``"SEC-88213":``) is not a field name and stays an identifier;
* an **exception name** — a word ending in ``Error``, ``Exception`` or ``Warning``
  (``ValueError``, ``FieldInstanceResolutionError``).

1. **url** — ``http://`` or ``https://`` up to whitespace or a closing bracket/quote.
2. **email** — ``local@domain.tld``.
3. **path** — a file path: two or more ``/``-separated segments (``/var/log/app.log``,
   ``src/app/models.py``, ``~/x/y``), or one file name with a known code/data extension
   (``setup.py``, ``report.csv``).
4. **quoted** — text between double quotes, backticks or typographic quotes, 3–60 characters,
   not spanning a line (``"blue-green rollout"``). Single quotes are ignored (apostrophes).
5. **quantity** — a number with a unit or currency (``45 GB``, ``3.5 ms``, ``$1,200``, ``20 %``),
   a clock time (``14:30``, ``9:05 pm``) or an ISO date (``2024-05-01``).
6. **id** — a token of 4+ characters mixing letters and digits, optionally with ``-``, ``_``,
   ``#`` or ``.`` inside (``SEC-88213``, ``#W2378156``, ``HAT204``, ``v2.3.1``), or a bare number of
   5+ digits (an order or ticket number).
7. **word** — a rare, code-like word: ``snake_case`` with at least one underscore between letters,
   or ``camelCase``/``PascalCase`` with an inner capital (``retryBudget``, ``SchemaOpts``).

Matching is case-insensitive on the identifier's text (:attr:`Identifier.key`). Ordinary words,
small numbers and single letters are never identifiers, nor is a word glued to an escape sequence
(``\nPlease`` in JSON-escaped text), which keeps false alarms rare.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.engine.types import Message


@dataclass(frozen=True, slots=True)
class Identifier:
    """One identifier found in a text: its exact ``text`` and the rule (``kind``) that found it."""

    text: str
    kind: str

    @property
    def key(self) -> str:
        """The text compared when deciding whether a payload still shows this identifier."""
        return self.text.casefold()


Extractor = Callable[[str], Iterable[Identifier]]

_EXT = ("py|js|ts|tsx|jsx|json|yaml|yml|toml|md|txt|csv|log|cfg|ini|sh|go|rs|java|rb|c|h|cpp|hpp|html|css|sql|"
        "xml|ipynb|traj|jsonl|pdf|png|jpg")
_UNITS = (r"%|percent|ms|s|sec|secs|seconds?|minutes?|mins?|hours?|hrs?|h|days?|weeks?|months?|years?|"
          r"kb|mb|gb|tb|kib|mib|gib|b|bytes|k|m|km|kg|g|lbs?|usd|eur|gbp|dollars?|euros?|tokens|rpm|rps|qps|"
          r"nights?|bags?|passengers?|seats?|items?")
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # masks: spans claimed first and never reported (their kind starts with "_")
    ("_key", re.compile(r'\\?"[A-Za-z_][A-Za-z_-]{0,39}\d{0,2}\\?"(?=\s*:)')),
    ("_exception", re.compile(r"(?<![\w.])(?:[A-Z][A-Za-z0-9]*)?(?:Error|Exception|Warning)\b")),
    ("url", re.compile(r"https?://[^\s<>()\[\]{}\"'`]+[^\s<>()\[\]{}\"'`.,;:!?]")),
    ("email", re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")),
    ("path", re.compile(r"(?<![\w/.~-])(?:~?/)?(?:[\w.-]+/)+[\w.-]*\w|(?<![\w/.-])[\w-]+\.(?:" + _EXT + r")\b")),
    ("quoted", re.compile(r"\"([^\"\n]{3,60})\"|`([^`\n]{3,60})`|“([^”\n]{3,60})”")),
    ("quantity", re.compile(
        r"(?<![\w.])(?:[$€£]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:" + _UNITS + r")(?![\w])|"
        r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?)", re.IGNORECASE)),
    ("id", re.compile(r"(?<![\w#@\\-])#?(?=[\w.#-]*\d)(?=[\w.#-]*[A-Za-z])[A-Za-z0-9](?:[\w#-]*[A-Za-z0-9])?"
                      r"(?:\.[A-Za-z0-9](?:[\w-]*[A-Za-z0-9])?)*"
                      r"|(?<![\w.,-])\d{5,}(?![\w.,-]*\d)")),
    ("word", re.compile(r"(?<!\\)\b(?:[A-Za-z]+_[A-Za-z][A-Za-z0-9_]*|[a-z]+[A-Z][A-Za-z0-9]*|"
                        r"[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b")),
)


_DIGIT = re.compile(r"\d")
_ASCII_UPPER = re.compile(r"[A-Z]")


def _has_digit(t: str) -> bool:
    r"""``\d`` occurs in ``t``: ten substring searches (C, no regex engine) find an ASCII digit; only a
    non-ASCII text without one is asked the regex (a Unicode digit)."""
    return any(d in t for d in "0123456789") or (not t.isascii() and _DIGIT.search(t) is not None)


def _has_ascii_upper(t: str) -> bool:
    """``[A-Z]`` occurs in ``t`` (an ASCII text: it differs from its lower case)."""
    return t != t.lower() if t.isascii() else _ASCII_UPPER.search(t) is not None


_GUARDS: dict[str, Callable[[str], bool]] = {
    "_key": lambda t: '"' in t and ":" in t,
    "_exception": lambda t: "Error" in t or "Exception" in t or "Warning" in t,
    "url": lambda t: "://" in t,
    "email": lambda t: "@" in t,
    "path": lambda t: "/" in t or "." in t,
    "quoted": lambda t: '"' in t or "`" in t or "“" in t,
    "quantity": _has_digit,
    "id": _has_digit,
    "word": lambda t: "_" in t or _has_ascii_upper(t),
}
"""A character each rule's every match contains (a rule whose character a text lacks cannot match
it, so its scan is skipped: the same identifiers, without running every pattern over long prose)."""

_TRIGGERS = ':@/."`_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'
_NOT_TRIGGER = bytes(c for c in range(128) if chr(c) not in _TRIGGERS)
_NOT_TRIGGER_UTF8 = _NOT_TRIGGER + bytes(range(128, 256))  # every byte of a non-ASCII character too
_NOT_DIGIT = bytes(c for c in range(128) if not "0" <= chr(c) <= "9")
_NOT_UPPER = bytes(c for c in range(128) if not "A" <= chr(c) <= "Z")
_ASCII_BYTES = bytes(range(128))


def _guards(text: str) -> dict[str, bool] | None:
    """The answers of :data:`_GUARDS` for ``text`` from one pass over it (None when it holds none of
    the characters any guard asks for: then no rule can match): the text's ASCII guard characters
    are kept by one byte translation (of its UTF-8 when it is not ASCII; C, about a nanosecond a
    character) and each guard asks that short remainder instead of the whole text. A non-ASCII
    text adds what only its non-ASCII characters can hold: ``“`` (quoted) and a non-ASCII digit
    (``\\d`` matches any Unicode digit), looked for among those characters alone (kept by a second
    translation)."""
    curly = False
    if text.isascii():
        rest = text.encode("ascii").translate(None, _NOT_TRIGGER)
        if not rest:
            return None
        digit = bool(rest.translate(None, _NOT_DIGIT))
    else:
        raw = text.encode("utf-8", "surrogatepass")
        rest = raw.translate(None, _NOT_TRIGGER_UTF8)
        digit = bool(rest.translate(None, _NOT_DIGIT)) or \
            _DIGIT.search(raw.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")) is not None
        curly = "“" in text
        if not rest and not digit and not curly:
            return None
    return {
        "_key": b'"' in rest and b":" in rest,
        "_exception": (b"E" in rest or b"W" in rest) and ("Error" in text or "Exception" in text or "Warning" in text),
        "url": b":" in rest and b"/" in rest and "://" in text,
        "email": b"@" in rest,
        "path": b"/" in rest or b"." in rest,
        "quoted": b'"' in rest or b"`" in rest or curly,
        "quantity": digit,
        "id": digit,
        "word": b"_" in rest or bool(rest.translate(None, _NOT_UPPER)),
    }


_NOT_TRIGGER_BUT_NUL = _NOT_TRIGGER_UTF8[1:]  # NUL is byte 0, the first deleted: kept, it parts the texts
_ASCII_BUT_NUL = _ASCII_BYTES[1:]


def may_hold_identifiers(texts: Sequence[str]) -> list[bool]:
    """For each of ``texts``, whether :func:`extract_identifiers` may find anything in it: False
    exactly where :func:`_guards` says None (the text holds no guard character, so no rule can
    match), worked out for all the texts at once: they are joined by NUL, and one byte translation
    of the joined UTF-8 keeps the ASCII guard characters and the NULs (a second one, for a
    non-ASCII text, its non-ASCII characters), split at the NULs into one remainder a text. A text
    that holds a NUL itself is asked one by one (:func:`_guards`), as are all when one does."""
    joined = "\x00".join(texts)
    raw = joined.encode("utf-8", "surrogatepass")
    kept = raw.translate(None, _NOT_TRIGGER_BUT_NUL).split(b"\x00")
    if len(kept) != len(texts):  # a text holds a NUL (or there are none)
        return [_guards(t) is not None for t in texts]
    if joined.isascii():
        return [bool(k) for k in kept]
    foreign = raw.translate(None, _ASCII_BUT_NUL).split(b"\x00")  # each text's non-ASCII characters
    seen: dict[bytes, bool] = {b"": False}
    out = []
    for k, f in zip(kept, foreign, strict=True):
        if k:
            out.append(True)
            continue
        may = seen.get(f)
        if may is None:  # what only a non-ASCII character holds: “ (quoted) or a Unicode digit
            chars = f.decode("utf-8", "surrogatepass")
            may = seen[f] = "“" in chars or _DIGIT.search(chars) is not None
        out.append(may)
    return out


_ZEROED = str.maketrans("123456789", "000000000")


def digit_shape(text: str) -> str:
    """``text`` with each ASCII digit made ``0``: every rule reads the ten digits alike (each
    pattern's classes hold all of them or none, and no rule counts a value), so
    :func:`extract_identifiers` finds identifiers in a text exactly when it finds them in its shape
    (at the same places, of the same kinds): texts that differ only in their numbers (``lookup
    {"q": 17}``, ``{"q": 18}``) need one search between them."""
    return text.translate(_ZEROED)


def _rules_for(text: str) -> list[tuple[str, re.Pattern[str]]]:
    """The rules whose guard holds for ``text``, in rule order, from :func:`_guards` (none when it
    holds no guard character, the usual prose of a tool result)."""
    has = _guards(text)
    return [] if has is None else [(kind, rx) for kind, rx in _RULES if has[kind]]


def extract_identifiers(text: str) -> list[Identifier]:
    """The identifiers in ``text`` by the module's rules, in order of first appearance, each once.

    Deterministic; never raises on any string."""
    if not text:
        return []
    rules = _rules_for(text)
    if not rules:
        return []
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Identifier]] = []
    seen: set[str] = set()
    for kind, rx in rules:
        for m in rx.finditer(text):
            start, end = m.span()
            if any(a < end and start < b for a, b in taken):
                continue
            value = next((g for g in m.groups() if g), None) if m.groups() else None
            value = (value if value is not None else m.group(0)).strip()
            if kind == "id" and len(value.lstrip("#")) < 4:
                continue
            if kind == "quoted" and not value.strip(" .,"):
                continue
            taken.append((start, end))
            if kind[0] == "_":
                continue
            ident = Identifier(value, kind)
            if ident.key not in seen:
                seen.add(ident.key)
                found.append((start, ident))
    return [i for _, i in sorted(found, key=lambda p: p[0])]


def message_text(msg: Message) -> str:
    """Everything a model reads in one message, as one string: its content (parts joined) and the
    name and arguments of each tool call. Used for both extraction and visibility checks."""
    content = msg.get("content")
    if type(content) is str and "tool_calls" not in msg:  # the usual row: its content is its text
        return content
    parts, calls = message_parts(msg)
    return "\n".join(parts + [f"{name} {args}" for name, args in calls])


def message_parts(msg: Message) -> tuple[list[str], list[tuple[str, str]]]:
    """One read of a message: its content parts and its tool calls' (name, arguments), which
    :func:`message_text` joins (``"\n".join(parts)`` alone is the text without the tool calls)."""
    parts: list[str] = []
    content = msg.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                text = block.get("text")
                parts.append(text if isinstance(text, str) else json.dumps(block, ensure_ascii=False, default=str))
            else:
                parts.append(str(block))
    elif content is not None:
        parts.append(json.dumps(content, ensure_ascii=False, default=str))
    return parts, tool_call_texts(msg)


def tool_call_texts(msg: Message) -> list[tuple[str, str]]:
    """(name, arguments) of each tool call of ``msg``; arguments as given (usually JSON text)."""
    out: list[tuple[str, str]] = []
    calls = msg.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            args = fn.get("arguments")
            out.append((str(fn.get("name") or ""),
                        args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)))
    return out


def _argument_values(v: Any) -> Iterator[Any]:
    """The leaves of decoded JSON arguments (every value not a dict or a list), depth first in
    their order. A module-level generator, not a closure over itself: a recursive inner function is
    a reference cycle, which only the cyclic collector frees (:func:`argument_identifiers` runs once
    per tool call of every analysis, inside :func:`~inspector.replay.run.gc_paused`)."""
    if isinstance(v, dict):
        for x in v.values():
            yield from _argument_values(x)
    elif isinstance(v, list):
        for x in v:
            yield from _argument_values(x)
    else:
        yield v


def argument_identifiers(arguments: str, extractor: Extractor = extract_identifiers) -> list[Identifier]:
    """Identifiers in tool-call arguments: each string value of the JSON arguments is read as text,
    and a short value with no spaces (3–60 characters, e.g. ``"ABC123"`` or ``"economy"``) counts as
    a quoted identifier itself. Arguments that are not JSON are read as plain text. Each key once,
    where it first occurs."""
    try:
        data: Any = json.loads(arguments)
    except (ValueError, TypeError):
        return list(extractor(arguments or ""))
    found: dict[str, Identifier] = {}
    for v in _argument_values(data):
        if isinstance(v, str):
            for ident in extractor(v):
                found.setdefault(ident.key, ident)
            s = v.strip()
            if 3 <= len(s) <= 60 and not any(c.isspace() for c in s):
                quoted = Identifier(s, "quoted")
                found.setdefault(quoted.key, quoted)
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) >= 10_000:
            number = Identifier(str(v), "id")
            found.setdefault(number.key, number)
    return list(found.values())
