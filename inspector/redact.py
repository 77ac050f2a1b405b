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
  keys (``AIza…``), JWTs, and env-style assignments ``SOMETHING_KEY=…``/``…_TOKEN: …``/``…_SECRET=…``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MASK = "****"

_SECRET_KEY = re.compile(
    r"^(?:.*[-_])?(api[-_]?key|apikey|token|access[-_]?token|refresh[-_]?token|secret|client[-_]?secret|password|"
    r"passwd|authorization|auth[-_]?token|access[-_]?key|secret[-_]?access[-_]?key|private[-_]?key|bearer)$",
    re.IGNORECASE,
)
_PATTERNS = [
    re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9\-._~+/]{8,}=*)"),
    re.compile(r"\b(sk-(?:proj-|ant-(?:api\d+-)?)?)([A-Za-z0-9_\-]{12,})"),
    re.compile(r"\b(gh[pousr]_)([A-Za-z0-9]{20,})"),
    re.compile(r"\b(github_pat_)([A-Za-z0-9_]{20,})"),
    re.compile(r"\b(xox[abprs]-)([A-Za-z0-9\-]{10,})"),
    re.compile(r"\b(AKIA)([0-9A-Z]{16})\b"),
    re.compile(r"\b(AIza)([0-9A-Za-z\-_]{30,})"),
    re.compile(r"\b(eyJ)([A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})"),
    re.compile(r"(?i)\b([A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)\s*[=:]\s*[\"']?)([^\s\"',;]{4,})"),
]


def _mask_value(value: str) -> str:
    v = value.strip()
    if not v:
        return value
    keep = 3 if len(v) >= 12 else 0
    return v[:keep] + "…" + MASK if keep else MASK


def mask_text(text: str) -> str:
    """Mask secrets found in free text (message contents, YAML, log lines)."""
    if not text or not isinstance(text, str):
        return text
    out = text
    for pat in _PATTERNS:
        out = pat.sub(lambda m: m.group(1) + _mask_value(m.group(2)), out)
    return out


def is_secret_key(key: Any) -> bool:
    return isinstance(key, str) and bool(_SECRET_KEY.match(key.strip()))


def mask_secrets(obj: Any) -> Any:
    """A copy of ``obj`` (dicts, lists, strings) with secret-named values and secret-looking text masked."""
    if isinstance(obj, str):
        return mask_text(obj)
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if is_secret_key(k) and isinstance(v, (str, int, float)) and not isinstance(v, bool) and v not in ("", None):
                out[k] = _mask_value(str(v))
            else:
                out[k] = mask_secrets(v)
        return out
    if isinstance(obj, (list, tuple)):
        return [mask_secrets(v) for v in obj]
    return obj
