"""Secret masking for everything the inspector prints, exports or shows.

Transcripts pasted from production and manifests from other teams carry API keys, bearer tokens
and env-style secrets. Every output path (CLI JSON/tables, app views and downloads, notebooks)
passes through :func:`mask_secrets` / :func:`mask_text`. Masking keeps a short prefix so two
different keys stay distinguishable (``sk-…****``) but never enough to reuse one.

What counts as a secret:
* values of keys named like ``api_key``, ``apikey``, ``token``, ``secret``, ``password``,
  ``authorization``, ``access_key``, ``private_key``, ``client_secret`` (any case, ``-``/``_``);
* in free text: ``Bearer <token>``, ``sk-…``/``sk-proj-…``/``sk-ant-…`` keys, GitHub tokens
  (``ghp_``, ``github_pat_``), Slack tokens (``xox?-``), AWS access key ids (``AKIA…``), Google API
  keys (``AIza…``), JWTs, ``Authorization: Basic …``, the password in ``scheme://user:password@host``,
  and env/config-style assignments ``SOMETHING_KEY=…``/``…_TOKEN: …``/``SECRET_KEY=…``, the key bare or
  quoted (``"api_key": "…"`` in JSON or a dict repr). An assignment whose value is one short word of
  letters (``password: required``) is prose and stays.

Patterns are bounded so masking stays linear in the text length (no regex backtracking blow-up on
hostile input such as a 10 MB message of ``a-a-a-…``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

MASK = "****"

_SECRET_KEY = re.compile(
    r"^(?:.*[-_])?(api[-_]?key|apikey|token|access[-_]?token|refresh[-_]?token|secret|client[-_]?secret|password|"
    r"passwd|passphrase|authorization|auth[-_]?token|access[-_]?key|secret[-_]?key|secret[-_]?access[-_]?key|"
    r"private[-_]?key|bearer)$",
    re.IGNORECASE,
)
# env/config-style assignments: a key (bare or quoted) then ``=``/``:`` then the value. The key must
# start a run of key characters (the look-behind), so the scan stays linear on ``a-a-a-…``.
_ASSIGNMENT_KEY = re.compile(r"(?<![A-Za-z0-9_\-])([A-Za-z0-9_\-]{1,64})[\"']?[ \t]*[=:][ \t]*[\"']?")
_ASSIGNMENT_VALUE = re.compile(r"[^\s\"',;]{4,}")
_SECRET_NAME = re.compile(
    r"(?i)(?:API[_-]?KEY|TOKEN|SECRET(?:[_-]?ACCESS)?[_-]?KEY|PRIVATE[_-]?KEY|SECRET|PASSWORD|PASSWD|PASSPHRASE)$")
_PATTERNS = [
    re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9\-._~+/]{8,}=*)"),
    re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:basic|digest)\s+)([A-Za-z0-9+/=._~\-]{4,})"),
    # scheme://user:PASSWORD@host
    re.compile(r"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]{0,30}://[^\s:/@\"']{1,128}:)([^\s@/\"']{1,256})(?=@)"),
    re.compile(r"\b(sk-(?:proj-|ant-(?:api\d+-)?)?)([A-Za-z0-9_\-]{12,})"),
    re.compile(r"\b(gh[pousr]_)([A-Za-z0-9]{20,})"),
    re.compile(r"\b(github_pat_)([A-Za-z0-9_]{20,})"),
    re.compile(r"\b(xox[abprs]-)([A-Za-z0-9\-]{10,})"),
    re.compile(r"\b(AKIA)([0-9A-Z]{16})\b"),
    re.compile(r"\b(AIza)([0-9A-Za-z\-_]{30,})"),
    re.compile(r"\b(eyJ)([A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})"),
]


def _mask_value(value: str) -> str:
    v = value.strip()
    if not v or v.endswith(MASK):  # empty, or already masked (masking twice changes nothing)
        return value
    keep = 3 if len(v) >= 12 else 0
    return v[:keep] + "…" + MASK if keep else MASK


# A necessary condition of every pattern above and of an assignment (its ``=``/``:``), in one scan: a
# text without any of these has nothing to mask (most of a replay document's strings).
_MAYBE = re.compile(r"(?i:bearer|authorization)|://|sk-|gh[pousr]_|github_pat_|xox[abprs]-|AKIA|AIza|eyJ|[=:]")
_SHORT = 256


def mask_text(text: str) -> str:
    """Mask secrets found in free text (message contents, YAML, log lines)."""
    if not text or not isinstance(text, str):
        return text
    if len(text) <= _SHORT:
        return _mask_short(text)
    return _mask_text(text)


@functools.lru_cache(maxsize=1 << 14)
def _mask_short(text: str) -> str:
    """:func:`_mask_text` remembered for short texts (a replay document repeats its few words —
    actions, sources, reasons — thousands of times)."""
    return _mask_text(text)


def _mask_text(text: str) -> str:
    if _MAYBE.search(text) is None:
        return text
    out = text
    for pat in _PATTERNS:
        out = pat.sub(_mask_match, out)
    return _mask_assignments(out)


def _mask_match(m: re.Match[str]) -> str:
    if m.string.startswith("…" + MASK, m.end(2)):  # the visible prefix of an already masked value
        return m.group(0)
    return m.group(1) + _mask_value(m.group(2))


def _mask_assignments(text: str) -> str:
    """``KEY=value`` / ``"key": "value"`` with a secret-like key name. A value made only of letters
    and shorter than 16 characters is prose, not a secret (``api_key: unknown key``,
    ``password: required``), and stays as is."""
    parts: list[str] = []
    pos = 0
    for m in _ASSIGNMENT_KEY.finditer(text):
        if m.start() < pos or not _SECRET_NAME.search(m.group(1)):
            continue
        v = _ASSIGNMENT_VALUE.match(text, m.end())
        if v is None:
            continue
        value = v.group(0)
        if value.isalpha() and len(value) < 16:
            continue
        parts += [text[pos:m.end()], _mask_value(value)]
        pos = v.end()
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


def is_secret_key(key: Any) -> bool:
    """True when ``key`` is a string whose name says it holds a secret (``api_key``, ``DB_PASSWORD``…)."""
    return isinstance(key, str) and _secret_name(key)


@functools.lru_cache(maxsize=4096)
def _secret_name(key: str) -> bool:
    """The key rule for one key name (answered once per distinct name)."""
    return bool(_SECRET_KEY.match(key.strip()))


# What a JSON text (``json.dumps(..., ensure_ascii=False)``) must contain for :func:`mask_secrets` to
# change the value it encodes: a needle of a text pattern (:data:`_MAYBE` without its bare ``[=:]``;
# none holds a character JSON escapes), or the end of a secret-like name — a dict key (:data:`_SECRET_KEY`,
# whose names all end so) or an assignment's key (:data:`_SECRET_NAME`) — then, across whitespace raw or
# JSON-escaped and an optional quote (escaped inside a string), ``=`` or ``:``. An escape ``\uXXXX`` is
# matched with any of its hex digits left out, so a text with its digits removed says True wherever the
# text does (:func:`json_may_hold_secret`).
_ESCAPED_SPACE = r"(?:\s|\\[tnrfb]|\\u[0-9a-fA-F]{0,4})*"
_NAME_END = _ESCAPED_SPACE + r"(?:\\?[\"'])?" + _ESCAPED_SPACE + "[=:]"
_NAME_WORDS = ("key", "token", "secret", "passw(?:or)?d", "passphrase")
# The test runs on the text lowered, each needle on its own pattern (a literal, or a literal prefix,
# which ``re`` finds by a fast scan — about twice as fast as ``in`` for a needle of three or four
# letters; one pattern of alternatives would be tried at every position), lowered needles being a
# superset of the case-sensitive ones. An ignore-case pattern also matches four non-ASCII letters to
# ASCII ones (İ ı → i, ſ → s, K → k), so a non-ASCII text has them replaced first.
_LOWER_NEEDLES = ("bearer", "authorization", "://", "sk-", "github_pat_", "xox", "akia", "aiza", "eyj")
_LOWER_PATTERNS = (*(re.compile(re.escape(n)) for n in _LOWER_NEEDLES), re.compile(r"gh[pousr]_"),
                   *(re.compile(w + _NAME_END) for w in _NAME_WORDS))
_ASCII_FOLDS = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))
_MATTERS = frozenset("\u0130\u0131\u017f\u212a" + "".join(c for c in map(chr, range(0x80, 0x3001)) if c.isspace()))
"""The non-ASCII characters a pattern may read: the four fold letters and the blanks ``\\s`` matches
(the highest is U+3000)."""
_ASCII_BYTES = bytes(range(0x80))
_NON_ASCII_TO_SOH = bytes(range(0x80)) + b"\x01" * 0x80


def json_may_hold_secret(text: str) -> bool:
    """False only when :func:`mask_secrets` would return the value that JSON ``text`` (written by
    ``json.dumps`` with ``ensure_ascii=False``) encodes unchanged: no text in it holds the start of a
    secret pattern and no key name or ``KEY=``-style assignment in it is secret-like. True means
    "mask it to see" (most texts that say True hold no secret). A few scans of ``text``, so a writer
    can dump first and walk with :func:`mask_secrets` only the values this says may need it.

    ``text`` with its ASCII digits removed says True wherever ``text`` does (no needle holds a digit,
    and an escape ``\\uXXXX`` is matched without its digits): a writer can test one digit-free text
    for the many texts that differ only in their numbers (the frames of a replay)."""
    low = text.lower() if text.isascii() else _ascii_form(text)
    return any(p.search(low) is not None for p in _LOWER_PATTERNS)


def _ascii_form(text: str) -> str:
    """A text of ASCII characters that :func:`json_may_hold_secret` answers for as it does for
    ``text``, lowered: no pattern holds a non-ASCII character, so one that is neither a blank
    (``\\s``) nor one of the four letters an ignore-case pattern folds to ASCII (:data:`_ASCII_FOLDS`)
    can be in no match, and each of its UTF-8 bytes is written ``\\x01`` (in no match either;
    replaced, not removed, so its neighbours do not meet). Most non-ASCII texts hold only such
    characters (a summary's dashes and ellipses): the scans then read one byte a character, not
    two. A text holding a blank or a fold letter has the four letters replaced instead."""
    raw = text.encode("utf-8", "surrogatepass")
    foreign = raw.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")
    if _MATTERS.isdisjoint(foreign):
        return raw.translate(_NON_ASCII_TO_SOH).decode("ascii").lower()
    for letter, ascii_letter in _ASCII_FOLDS:  # str.replace scans fast; str.translate is slow on long texts
        text = text.replace(letter, ascii_letter)
    return text.lower()


_SCALARS = (int, float, bool, type(None))


_KEY_IS_SECRET: dict[str, bool] = {}  # :func:`_secret_name` by key name, for the walk below


def mask_secrets(obj: Any) -> Any:
    """A copy of ``obj`` (dicts, lists, strings) with secret-named values and secret-looking text masked."""
    t = type(obj)
    if t is str:
        return mask_text(obj)
    if t in _SCALARS:  # numbers, booleans and null hold no secret
        return obj
    if t is dict or isinstance(obj, Mapping):
        return _mask_mapping(obj)
    if t is list or t is tuple or isinstance(obj, (list, tuple)):
        return [v if type(v) in _SCALARS else mask_secrets(v) for v in obj]
    if isinstance(obj, str):
        return mask_text(obj)
    return obj


def _mask_mapping(obj: Mapping[Any, Any]) -> dict[Any, Any]:
    """One mapping of :func:`mask_secrets`: a value under a secret-named key is masked whole (numbers
    included), any other text is masked where it looks like a secret, other scalars are kept."""
    out = {}
    known = _KEY_IS_SECRET
    for k, v in obj.items():
        secret = known.get(k) if type(k) is str else None
        if secret is None:
            secret = is_secret_key(k)
            if type(k) is str and len(known) < 4096:
                known[k] = secret
        tv = type(v)
        if secret and isinstance(v, (str, int, float)) and tv is not bool and v not in ("", None):
            out[k] = _mask_value(str(v))
        elif tv in _SCALARS:
            out[k] = v
        elif tv is str:
            out[k] = mask_text(v)
        else:
            out[k] = mask_secrets(v)
    return out
