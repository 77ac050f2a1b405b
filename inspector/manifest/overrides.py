"""Dotted-path overrides (``--set spec.context_manager.params.keep_turns=3``) applied to a raw
manifest document before it is read, so sweeps and CLI tweaks go through the same validation as
the file itself."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from typing import Any

from inspector.manifest._collect import describe, dotted as _dotted
from inspector.manifest._yaml import parse_value
from inspector.manifest.settings import Issue, ManifestError

BINDING_SLOTS = frozenset({"assembler", "context_manager", "summarizer"})
"""Keys whose string value is shorthand for ``{type: <string>}`` and may be promoted."""

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_PATH = re.compile(r"[^.\[\]]+(?:\[\d+\])*(?:\.[^.\[\]]+(?:\[\d+\])*)*")


def parse_path(dotted: str) -> list[str | int]:
    """``spec.models[0].max_tokens`` → ``["spec", "models", 0, "max_tokens"]``."""
    text = dotted.strip()
    if not _PATH.fullmatch(text):
        raise ManifestError([Issue(dotted, "not a dotted field path (e.g. spec.context_manager.params.keep_turns)")])
    return [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _TOKEN.finditer(text)]


def set_dotted(doc: dict[str, Any], dotted: str, value_text: str) -> dict[str, Any]:
    """Return a deep copy of ``doc`` with the value at ``dotted`` set to ``value_text`` parsed as
    YAML (so ``3`` is an int, ``[a, b]`` a list, ``null`` None). Missing intermediate mappings are
    created; a string binding on the way (``context_manager: stack``) is promoted to
    ``{type: stack}`` so its params can be set. ``doc`` is never mutated."""
    if not isinstance(doc, dict):
        raise ManifestError([Issue("", f"cannot set {dotted}: the document is not a mapping")])
    parts = parse_path(dotted)
    value = parse_value(value_text)
    out = copy.deepcopy(doc)
    node: Any = out
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        where = _dotted(parts[: i + 1])
        if isinstance(part, int):
            if not isinstance(node, list) or not 0 <= part < len(node):
                raise ManifestError([Issue(where, f"cannot set {dotted}: no list item [{part}]")])
            child = node[part]
        else:
            if not isinstance(node, dict):
                raise ManifestError([Issue(where, f"cannot set {dotted}: not a mapping")])
            child = node.get(part)
        if child is None or (isinstance(child, str) and not child.strip() and isinstance(nxt, str)):
            if isinstance(nxt, int):
                raise ManifestError([Issue(where, f"cannot set {dotted}: {where} is not a list")])
            child = {}
        elif isinstance(child, str) and part in BINDING_SLOTS and isinstance(nxt, str):
            child = {"type": child.strip()}
        elif not isinstance(child, (dict, list)):
            raise ManifestError([Issue(where, f"cannot set {dotted}: {where} is a {describe(child)}, not a mapping")])
        node[part] = child
        node = child
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or not 0 <= last < len(node):
            raise ManifestError([Issue(dotted, f"cannot set {dotted}: no list item [{last}]")])
        node[last] = value
    else:
        if not isinstance(node, dict):
            raise ManifestError([Issue(dotted, f"cannot set {dotted}: the parent is not a mapping")])
        node[last] = value
    return out


def apply_overrides(doc: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Apply ``PATH=VALUE`` strings in order (the CLI's repeated ``--set``)."""
    for item in overrides:
        path, sep, value = item.partition("=")
        if not sep or not path.strip():
            raise ManifestError([Issue("", f"override {item!r} must look like PATH=VALUE")])
        doc = set_dotted(doc, path.strip(), value)
    return doc
