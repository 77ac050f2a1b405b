"""Side by side: the same transcript replayed under several context strategies.

A strategy is a ``context_manager`` value (``"sliding-window"``, ``{type: stack, params: {...}}``)
applied to the base manifest, a whole manifest file, or None: the base manifest as it is (its own
context manager, :data:`OWN_STRATEGY`). Each replay is independent (its own
engine, counter cache and hysteresis state), so the comparison is fair and deterministic.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from inspector.plugins import PluginSpec, default_registry
from inspector.replay import Replay, replay

def _preset(spec: PluginSpec) -> dict[str, Any]:
    params = spec.params_model.preset_params() if spec.params_model is not None else {}
    return {"type": spec.name, **({"params": params} if params else {})}


def presets() -> dict[str, Any]:
    """One preset per registered context manager (built-ins first, then any registered since),
    written from its params model (the fields it names as its preset): read from the registry on
    every call, so a strategy registered by a third party is offered too."""
    return {spec.name: _preset(spec) for spec in default_registry().specs("context_manager")}


def __getattr__(name: str) -> Any:
    """``PRESETS``: :func:`presets` as the module-level table faces import (read afresh on each
    access). Raises :class:`AttributeError` for any other name."""
    if name == "PRESETS":
        return presets()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

OWN_STRATEGY = "manifest's own"
"""The name Side by side gives the manifest's own context manager (the manifest as loaded, strategy None)."""

DEFAULT_STRATEGIES: tuple[str, ...] = (OWN_STRATEGY, "sliding-window", "stack")
"""What Side by side compares first: the manifest's own strategy in the first column, then two presets."""


def own_strategy_yaml(loaded: Any) -> str:
    """The manifest's own context manager as YAML, to show beside its column: as written under
    ``spec.context_manager``, else the binding it resolved to (``working_memory.compaction``, or the
    default), with where that came from."""
    raw = (getattr(loaded, "raw", None) or {}).get("spec") or {}
    written = raw.get("context_manager") if isinstance(raw, dict) else None
    if written:
        return yaml.safe_dump(written, sort_keys=False)
    cm = loaded.settings.context_manager
    body = {"type": cm.type, **({"params": dict(cm.params)} if cm.params else {})}
    return f"# from {cm.source}\n" + yaml.safe_dump(body, sort_keys=False)


def infra_docs(loaded: Any) -> list[dict[str, Any]]:
    """The LLMProxy/LLMLocal/Infra documents loaded beside the Agent one (kept when a strategy is swapped)."""
    return [d for d in getattr(loaded, "documents", ()) if isinstance(d, dict)
            and str(d.get("kind", "")) in ("LLMProxy", "LLMLocal", "Infra")]


def foreign_parameters(spec: Any) -> list[str]:
    """The parameters a ``context_manager`` value names that its strategy's params model does not
    define (docs/design.md Q9), in the order written; ``[]`` for a string, a manifest file, a
    third-party plugin (its constructor checks them) or anything that is not a ``{type, params}`` mapping."""
    from inspector.manifest.bindings import ASSEMBLY_KEYS
    from inspector.plugins import default_registry

    if not isinstance(spec, Mapping) or not isinstance(spec.get("params"), Mapping) or not isinstance(spec.get("type"), str):
        return []
    found = default_registry().find("context_manager", spec["type"])
    if found is None or (found.params_model is None and not found.params):
        return []
    return [str(k) for k in spec["params"] if k not in found.params and k not in ASSEMBLY_KEYS]


def check_strategy(spec: Any) -> None:
    """Refuse a ``context_manager`` value that names a parameter its strategy does not define: no
    foreign parameter reaches a strategy. Raises :class:`~inspector.manifest.OverrideError` (exit
    status 2) naming the parameter and what the strategy accepts."""
    from inspector.manifest import Issue
    from inspector.manifest.overrides import OverrideError
    from inspector.plugins import default_registry

    foreign = foreign_parameters(spec)
    if foreign:
        found = default_registry().find("context_manager", spec["type"])
        accepts = ", ".join(found.params) if found is not None else ""
        raise OverrideError([Issue(f"context_manager.params.{k}", f"not a parameter of the {spec['type']} context "
                                   f"manager (accepts: {accepts or 'none'})") for k in foreign])


def strategy_manifest(base_raw: Mapping[str, Any], spec: Any, *, file: str | None = None,
                      infra_documents: Sequence[Mapping[str, Any]] = ()) -> Any:
    """The base manifest document with ``spec.context_manager`` replaced by ``spec`` (validated
    leniently), as loaded settings; ``spec`` may be a manifest file, YAML text or a mapping. Raises
    :class:`ValueError` when ``spec`` is not valid YAML, :class:`~inspector.manifest.OverrideError`
    when it names a parameter its strategy does not define (:func:`check_strategy`), and what
    reading the manifest raises."""
    from inspector.manifest import load_manifest, settings_from_dict

    if isinstance(spec, str) and spec.strip().endswith((".yaml", ".yml")) and Path(spec.strip()).is_file():
        return load_manifest(spec.strip())
    if isinstance(spec, str):
        try:
            spec = yaml.safe_load(spec)
        except yaml.YAMLError as exc:
            raise ValueError(f"strategy is not valid YAML: {exc}") from exc
    check_strategy(spec)
    doc = copy.deepcopy(dict(base_raw))
    doc.setdefault("spec", {})
    if not isinstance(doc["spec"], dict):
        doc["spec"] = {}
    doc["spec"]["context_manager"] = spec
    wm = doc["spec"].get("working_memory")
    if isinstance(wm, dict):
        wm.pop("compaction", None)  # the strategy under test replaces the sugar too
    base_dir = Path(file).parent if file else None  # spec.context file references resolve as in the base
    return settings_from_dict(doc, file=file, base_dir=base_dir, infra_documents=[dict(d) for d in infra_documents])


def compare(manifest: Any, transcript: Any, strategies: Mapping[str, Any] | Iterable[tuple[str, Any]], *,
            client: Any = None, **replay_kw: Any) -> dict[str, Replay]:
    """``{name: replay}`` of ``transcript`` under each strategy. ``client`` (a
    ``distributed.Client``) runs the replays on that Dask cluster, one task each
    (:func:`inspector.fleet.replay_on`); the replays are the same."""
    from inspector.manifest import load_manifest

    loaded = load_manifest(manifest) if isinstance(manifest, (str, Path)) else manifest
    items = strategies.items() if isinstance(strategies, Mapping) else strategies
    manifests = {name: loaded if spec is None else
                 strategy_manifest(loaded.raw, spec, file=loaded.file, infra_documents=infra_docs(loaded))
                 for name, spec in items}
    if client is not None:  # the Dask hook
        from inspector.fleet import replay_on

        return replay_on(client, manifests, transcript, **replay_kw)
    return {name: replay(m, transcript, **replay_kw) for name, m in manifests.items()}
