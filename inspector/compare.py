"""Side by side: the same transcript replayed under several context strategies.

A strategy is a ``context_manager`` value (``"sliding-window"``, ``{type: stack, params: {...}}``)
applied to the base manifest, or a whole manifest file. Each replay is independent (its own
engine, counter cache and hysteresis state), so the comparison is fair and deterministic.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from inspector.replay import Replay, replay

PRESETS: dict[str, Any] = {
    "summarising": {"type": "summarising", "params": {"keep_turns": 10}},
    "sliding-window": {"type": "sliding-window", "params": {"keep_turns": 10}},
    "stack": {"type": "stack"},
}


def strategy_manifest(base_raw: Mapping[str, Any], spec: Any, *, file: str | None = None) -> Any:
    """The base manifest document with ``spec.context_manager`` replaced by ``spec`` (validated leniently)."""
    from inspector.manifest import load_manifest, settings_from_dict

    if isinstance(spec, str) and spec.strip().endswith((".yaml", ".yml")) and Path(spec.strip()).is_file():
        return load_manifest(spec.strip())
    if isinstance(spec, str):
        try:
            spec = yaml.safe_load(spec)
        except yaml.YAMLError as exc:
            raise ValueError(f"strategy is not valid YAML: {exc}") from exc
    doc = copy.deepcopy(dict(base_raw))
    doc.setdefault("spec", {})
    if not isinstance(doc["spec"], dict):
        doc["spec"] = {}
    doc["spec"]["context_manager"] = spec
    doc["spec"].get("working_memory", {}).pop("compaction", None) if isinstance(doc["spec"].get("working_memory"), dict) else None
    return settings_from_dict(doc, file=file)


def compare(manifest: Any, transcript: Any, strategies: Mapping[str, Any] | Iterable[tuple[str, Any]], **replay_kw: Any
            ) -> dict[str, Replay]:
    from inspector.manifest import load_manifest

    loaded = load_manifest(manifest) if isinstance(manifest, (str, Path)) else manifest
    items = strategies.items() if isinstance(strategies, Mapping) else strategies
    out: dict[str, Replay] = {}
    for name, spec in items:
        out[name] = replay(strategy_manifest(loaded.raw, spec, file=loaded.file), transcript, **replay_kw)
    return out
