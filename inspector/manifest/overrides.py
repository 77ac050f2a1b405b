"""Dotted-path overrides (``--set spec.context_manager.params.keep_turns=3``) applied to a raw
manifest document before it is read, so sweeps and CLI tweaks go through the same validation as
the file itself.

Every key is resolved against the manifest schema first (:func:`resolve_override_path`): a short
name (:data:`SHORT_NAMES`, the same for ``--set`` and ``sweep --grid``) expands to its field, a
numeric segment is a list index (``spec.models.0.model`` = ``spec.models[0].model``), and a key
that names no field is an :class:`OverrideError` with a "did you mean" suggestion — an override
never changes nothing in silence."""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from inspector.manifest._collect import describe, dotted as _dotted
from inspector.manifest._yaml import parse_value
from inspector.manifest.settings import Issue, ManifestError, ManifestReadError
from inspector.plugins import Slot, default_registry

BINDING_SLOTS = frozenset({"assembler", "context_manager", "summarizer"})
"""Keys whose string value is shorthand for ``{type: <string>}`` and may be promoted."""

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_PATH = re.compile(r"[^.\[\]]+(?:\[\d+\])*(?:\.[^.\[\]]+(?:\[\d+\])*)*")


SHORT_NAMES: dict[str, str] = {
    "keep_turns": "spec.context_manager.params.keep_turns",
    "hysteresis_ratio": "spec.context_manager.params.hysteresis_ratio",
    "summary_threshold": "spec.context_manager.params.summary_threshold",
    "max_messages": "spec.context_manager.params.max_messages",
    "context_manager": "spec.context_manager",
}
"""Short names accepted by ``--set`` and ``sweep --grid``, and the manifest field each one sets."""


class OverrideError(ManifestReadError):
    """An override or grid key that names no manifest field (a usage error: exit status 2)."""


def parse_path(dotted: str) -> list[str | int]:
    """``spec.models[0].max_tokens`` (or ``spec.models.0.max_tokens``) → ``["spec", "models", 0, "max_tokens"]``."""
    text = dotted.strip()
    if not _PATH.fullmatch(text):
        raise ManifestError([Issue(dotted, "not a dotted field path (e.g. spec.context_manager.params.keep_turns)")])
    return [int(m.group(2)) if m.group(1) is None else int(m.group(1)) if m.group(1).isdigit() else m.group(1)
            for m in _TOKEN.finditer(text)]


_FREE = None  # below this point any key is accepted (open mappings: metadata, tools, models rows, ...)


def _schema() -> dict[str, Any]:
    """The field tree overrides are checked against (built lazily: it reads the plugin registry)."""
    from inspector.manifest.bindings import ASSEMBLY_KEYS, BINDING_KEYS
    from inspector.manifest.models import (
        SPEC_KEYS,
        TOP_LEVEL_KEYS,
        CompactionModel,
        TrimmerModel,
        WorkingMemoryModel,
    )

    reg = default_registry()
    cm_params = sorted({p for spec in reg.specs("context_manager") if spec.builtin for p in spec.params})
    asm_params = sorted({p for spec in reg.specs("assembler") if spec.builtin for p in spec.params})
    summarizer = {k: _FREE for k in BINDING_KEYS["summarizer"]}
    cm: dict[str, Any] = {k: _FREE for k in BINDING_KEYS["context_manager"]}
    cm["params"] = {**{k: _FREE for k in (*cm_params, *ASSEMBLY_KEYS)}, "summarizer": summarizer,
                    "trimmer": {k: _FREE for k in TrimmerModel.model_fields}}
    asm: dict[str, Any] = {k: _FREE for k in BINDING_KEYS["assembler"]}
    asm["params"] = {k: _FREE for k in asm_params}
    spec: dict[str, Any] = {k: _FREE for k in SPEC_KEYS}
    spec.update(context_manager=cm, assembler=asm, working_memory={
        **{k: _FREE for k in WorkingMemoryModel.model_fields}, "compaction": {k: _FREE for k in CompactionModel.model_fields}})
    tree: dict[str, Any] = {k: _FREE for k in TOP_LEVEL_KEYS}
    tree["spec"] = spec
    return tree


def _custom_plugin_params(doc: Mapping[str, Any], parts: Sequence[str | int]) -> bool:
    """Whether ``parts`` is under the params of a binding that is not a built-in (any key may be
    right there: the plugin's own constructor decides)."""
    if len(parts) < 3 or parts[0] != "spec" or parts[2] != "params" or parts[1] not in ("context_manager", "assembler"):
        return False
    spec = doc.get("spec") if isinstance(doc, Mapping) else None
    binding = spec.get(parts[1]) if isinstance(spec, Mapping) else None
    if isinstance(binding, Mapping) and binding.get("ref") and not binding.get("type"):
        return True
    name = binding if isinstance(binding, str) else binding.get("type") if isinstance(binding, Mapping) else None
    if not isinstance(name, str) or not name.strip():
        return False

    slot: Slot = "context_manager" if parts[1] == "context_manager" else "assembler"
    found = default_registry().find(slot, name)
    return found is not None and not found.builtin


def resolve_override_path(key: str, doc: Mapping[str, Any] | None = None) -> list[str | int]:
    """The manifest field an override or grid key sets, as path parts, checked against the schema.

    Short names expand (``keep_turns`` → ``spec.context_manager.params.keep_turns``); ``spec.models.0.x``
    and ``spec.models[0].x`` are the same path. A key that names no field raises
    :class:`OverrideError` naming it, with the closest known names. A key ``doc`` already has is
    accepted as is, and so is any key under the params of a third-party plugin named in ``doc``
    (its constructor checks them)."""
    text = key.strip()
    text = SHORT_NAMES.get(text, text)
    parts = parse_path(text)
    node: Any = _schema()
    here: Any = doc  # the document beside the schema: a key the document already has names something
    for i, part in enumerate(parts):
        if node is _FREE:
            break
        if isinstance(part, int):
            raise OverrideError([Issue(key, f"{_dotted(parts[: i + 1])}: {_dotted(parts[:i]) or 'the document'} "
                                            "is not a list")])
        if part in node:
            node = node[part]
            here = here.get(part) if isinstance(here, Mapping) else None
            continue
        if isinstance(here, Mapping) and part in here:
            break
        if doc is not None and _custom_plugin_params(doc, parts[: i + 1]):
            break
        known = sorted(node)
        if i == 0:
            known = sorted({*known, *SHORT_NAMES})
        close = difflib.get_close_matches(part, known, n=3, cutoff=0.6)
        where = _dotted(parts[:i]) or "the top level"
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else \
            f" (known here: {', '.join(known)})"
        raise OverrideError([Issue(key, f"{part!r} is not a field of {where}{hint}")])
    return parts


def set_dotted(doc: dict[str, Any], dotted: str, value_text: str) -> dict[str, Any]:
    """Return a deep copy of ``doc`` with the value at ``dotted`` set to ``value_text`` parsed as
    YAML (so ``3`` is an int, ``[a, b]`` a list, ``null`` None). ``dotted`` is resolved by
    :func:`resolve_override_path` (short names, ``.0.`` indices, unknown keys refused). Missing intermediate mappings are
    created; a string binding on the way (``context_manager: stack``) is promoted to
    ``{type: stack}`` so its params can be set. ``doc`` is never mutated."""
    if not isinstance(doc, dict):
        raise ManifestError([Issue("", f"cannot set {dotted}: the document is not a mapping")])
    parts = resolve_override_path(dotted, doc)
    dotted = _dotted(parts)
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
