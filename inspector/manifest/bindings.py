"""Singleton plugin slots: the three binding forms, registry resolution, params checks, the
``working_memory.compaction`` sugar and overlay merging (docs/design.md §2.1, §2.4, §2.6, §3.6a, Q5, Q9).

Every binding is normalised *before* anything looks at it, so omitted, ``stack`` and
``{type: stack}`` are indistinguishable downstream (docs/design.md Q5). Plugin names go through
:func:`inspector.plugins.default_registry` only: this module never knows a class, and an
import path in ``ref`` is honoured only through the caller's ``allow_imports``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.params import AssemblerParams
from inspector.plugins import SLOTS, PluginLookupError, PluginSpec, Slot, default_registry
from inspector.manifest._collect import Collector, Path_, describe, dotted
from inspector.manifest.settings import Binding, Issue, ManifestError

ASSEMBLY_KEYS: tuple[str, ...] = ("trimmer", "working_memory_messages", "max_in_turn_messages", "working_memory_ref")
"""``spec.context_manager.params`` keys read by assembly and stripped before the CM constructor."""
DEPRECATED_KEYS: tuple[str, ...] = ("working_memory_messages", "max_in_turn_messages")
"""Accepted and ignored (docs/design.md Q2)."""

BINDING_KEYS: dict[Slot, tuple[str, ...]] = {
    "assembler": ("type", "ref", "params"),
    "context_manager": ("type", "ref", "params", "memory"),
    "summarizer": ("type", "ref", "params", "model"),
}

COMPACTION_STRATEGIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "keep_recent": ("stack", ("max_messages",)),
    "sliding_window": ("sliding_window", ("window_size",)),
    "summarize": ("summarising", ("summary_threshold", "keep_turns")),
}
"""§2.4 translation: strategy → (context_manager type, compaction keys copied into params)."""

_TRIMMER_HINT = {"token_budget", "max_tokens", "reserve_tokens", "safety_margin_ratio"}

INERT_ASSEMBLER_PARAMS: tuple[str, ...] = tuple(AssemblerParams.inert())
"""``spec.assembler.params`` the reference runtime reads only on its legacy hook path (segment
telemetry, re-injection, part eviction; docs/design.md §3.12), read off the fields the assembler's
params model marks :class:`~inspector.params.Inert`. This engine accepts and type-checks them, so a
reference manifest validates, but they change nothing: validate warns at the field's line."""

Form = Literal["omitted", "string", "object", "malformed"]


@dataclass
class RawBinding:
    """A binding value after shape normalisation, before registry resolution."""

    form: Form
    type: str | None = None
    ref: str | None = None
    params: dict[Any, Any] = field(default_factory=dict)
    model: Any = None  # summarizer shorthand for params.model
    has_model: bool = False

    @property
    def locator(self) -> str | None:
        """What names the plugin: its ``type``, else its ``ref`` (None: neither)."""
        return self.type or self.ref


def normalise_binding(value: Any, slot: Slot, path: Path_, col: Collector) -> RawBinding:
    """Read a slot value in any of its forms (docs/design.md §2.1). Shape problems are errors in validate
    mode; in assemble mode the value counts as malformed and the caller uses the default."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return RawBinding("omitted")
    if isinstance(value, str):
        return RawBinding("string", type=value.strip())
    if not isinstance(value, dict):
        col.invalid(path, f"must be a plugin name or a {{type, ref, params}} object (got {describe(value)})")
        return RawBinding("malformed")
    if not value:
        return RawBinding("omitted")
    allowed = BINDING_KEYS[slot]
    for key in value:
        if key not in allowed:
            col.invalid(path + (key,), f"unknown key (allowed: {', '.join(allowed)})")
    bad = False
    locators: dict[str, str | None] = {}
    for key in ("type", "ref"):
        loc = value.get(key)
        if loc is not None and not isinstance(loc, str):
            col.invalid(path + (key,), f"must be a plugin name (got {describe(loc)})")
            bad = True
        locators[key] = (loc.strip() or None) if isinstance(loc, str) else None
    params = value.get("params")
    if params is not None and not isinstance(params, dict):
        col.invalid(path + ("params",), f"must be a mapping (got {describe(params)})")
        bad = True
    if bad:
        return RawBinding("malformed")
    raw = RawBinding("object", type=locators["type"], ref=locators["ref"], params=dict(params or {}))
    if slot == "summarizer" and "model" in value:
        raw.model, raw.has_model = value["model"], True
    return raw


def _lookup_message(exc: PluginLookupError, where: str) -> str:
    text = str(exc)
    return text[len(where) + 2:] if text.startswith(where + ": ") else text


def resolve_plugin(slot: Slot, raw: RawBinding, path: Path_, col: Collector,
                   allow_imports: Iterable[str] = ()) -> PluginSpec | None:
    """Registry resolution; an unknown name is an error in every mode (never lenient)."""
    registry = default_registry()
    if raw.type is not None:
        where = path if raw.form == "string" else path + ("type",)
        try:
            return registry.resolve(slot, raw.type, field_path=dotted(where))
        except PluginLookupError as exc:
            col.unknown(where, _lookup_message(exc, dotted(where)))
            return None
    if raw.ref is not None:
        where = path + ("ref",)
        try:
            return registry.resolve_ref(slot, raw.ref, allow_imports=tuple(allow_imports), field_path=dotted(where))
        except PluginLookupError as exc:
            col.unknown(where, _lookup_message(exc, dotted(where)))
            return None
    return registry.resolve(slot, None)


def checks_params(spec: PluginSpec) -> bool:
    """Built-ins and plugins that declare params are checked; an import or a third-party plugin
    that declares nothing has an unknown signature and is passed through."""
    return spec.builtin or bool(spec.params)


def check_params(spec: PluginSpec, params: Mapping[Any, Any], path: Path_, col: Collector,
                 *, skip: Iterable[str] = ()) -> set[str]:
    """docs/design.md Q9: a key the plugin does not accept is an error naming the field (the constructor
    would reject it anyway, with a worse message); values are checked by the plugin's params model.

    A wrong value is an error in every mode when the model's ``on_invalid`` is ``error`` (the plugin
    cannot run with it: ``keep_turns: 0``, ``max_messages: -1``); otherwise it is tolerated in
    assemble mode (a warning there) and its key is returned, so the caller leaves it out and the
    plugin's default applies, as the warning says, instead of handing a wrong-typed value on."""
    lenient: set[str] = set()
    if not checks_params(spec):
        return lenient
    skipped = set(skip)
    accepted = sorted(set(spec.params))
    for key, value in params.items():
        if key in skipped:
            continue
        if key not in spec.params:
            what = "context manager" if spec.slot == "context_manager" else spec.slot
            message = f"not a parameter of the {spec.name} {what} (accepts: {', '.join(accepted) or 'none'})"
            if spec.slot == "context_manager" and key in _TRIMMER_HINT:
                message += f"; did you mean params.trimmer.{'max_tokens' if key == 'token_budget' else key}?"
            col.error(path + (key,), message)
            continue
        model = spec.params_model
        if model is None or not isinstance(key, str):
            continue
        problem = model.problem(key, value)
        clamp = model.clamp_of(key)
        if problem is not None and model.on_invalid == "error":
            col.error(path + (key,), problem)  # the plugin cannot run with it: an error in every mode
        elif problem is not None:
            col.invalid(path + (key,), problem)
            lenient.add(key)
        elif clamp is not None and clamp(value) != value:
            col.warn(path + (key,), f"{value} is outside {clamp} and will be clamped", validate_only=True)
        elif key in model.inert():
            col.warn(path + (key,), model.inert()[key], validate_only=True)
    if spec.params_model is not None:
        for key, message in spec.params_model.conflicts(params):
            col.error(path + (key,), message)
    return lenient


def make_binding(spec: PluginSpec | None, raw: RawBinding, params: Mapping[Any, Any], source: str) -> Binding:
    """The resolved :class:`~inspector.manifest.settings.Binding` of ``spec`` with (a copy of) ``params``,
    from ``source``; for an unknown plugin (``spec`` None, an error already recorded) the name as
    written."""
    if spec is None:  # unknown plugin: an error is already recorded; keep the name as written
        name = raw.locator or ""
        return Binding(type=name, urn=name, params=copy.deepcopy(dict(params)), source=source, ref=raw.ref)
    return Binding(type=spec.name, urn=spec.urn, params=copy.deepcopy(dict(params)), source=source, ref=raw.ref,
                   slot=spec.slot)


def build_summarizer(value: Any, path: Path_, col: Collector, source: str,
                     allow_imports: Iterable[str] = ()) -> Binding:
    """docs/design.md §3.6a: absent → registry default ``llm``; string → ``{type}``; missing type →
    default; a binding-level ``model`` is shorthand for ``params.model`` on ``llm``."""
    raw = normalise_binding(value, "summarizer", path, col)
    if raw.form == "malformed":
        source = f"default (malformed {dotted(path)} ignored)"
        raw = RawBinding("omitted")
    elif raw.form == "omitted":
        source = "default"
    spec = resolve_plugin("summarizer", raw, path, col, allow_imports)
    params = dict(raw.params)
    if raw.has_model:
        if spec is not None and spec.params_model is not None and "model" in spec.params_model.model_fields:
            problem = spec.params_model.problem("model", raw.model)
            if problem is not None:
                col.invalid(path + ("model",), problem)
            elif "model" in params and params["model"] != raw.model:
                col.warn(path + ("model",), "ignored: params.model is also set and wins", validate_only=True)
            else:
                params.setdefault("model", raw.model)
        elif spec is not None:
            col.invalid(path + ("model",), f"the {spec.name} summarizer takes no model")
    if spec is not None:
        for key in check_params(spec, raw.params, path + ("params",), col):
            params.pop(key, None)
    return make_binding(spec, raw, params, source)


def compaction_to_context_manager(compaction: Mapping[str, Any] | None) -> dict[str, Any]:
    """The exact §2.4 translation of ``spec.working_memory.compaction`` into a context_manager
    binding. Only keys present (and not null) are copied; an empty block is ``keep_recent``
    without a cap, i.e. an unbounded stack. Unknown strategy → :class:`ManifestError` naming it
    and the allowed list."""
    where = "spec.working_memory.compaction"
    if compaction is None:
        compaction = {}
    if not isinstance(compaction, Mapping):
        raise ManifestError([Issue(where, f"must be a mapping (got {describe(compaction)})")])
    strategy = compaction.get("strategy")
    key: str | None = None
    if strategy is None:
        key = "keep_recent"
    elif isinstance(strategy, str):
        key = strategy.strip().lower().replace("-", "_")
    if key not in COMPACTION_STRATEGIES:
        allowed = ", ".join(COMPACTION_STRATEGIES)
        raise ManifestError([Issue(f"{where}.strategy",
                                   f"unknown compaction strategy {strategy!r} (allowed: {allowed})")])
    cm_type, keys = COMPACTION_STRATEGIES[key]
    params: dict[str, Any] = {k: copy.deepcopy(compaction[k]) for k in keys if compaction.get(k) is not None}
    if key == "summarize" and compaction.get("model") is not None:
        params["summarizer"] = {"type": "llm", "params": {"model": copy.deepcopy(compaction["model"])}}
    return {"type": cm_type, "params": params}


def _as_mapping(binding: Any) -> dict[str, Any] | None:
    if binding is None or (isinstance(binding, str) and not binding.strip()):
        return {}
    if isinstance(binding, str):
        return {"type": binding.strip()}
    if isinstance(binding, dict):
        return copy.deepcopy(binding)
    return None


def _same_plugin(a: Any, b: Any) -> bool:
    if not isinstance(a, str) or not isinstance(b, str):
        return bool(a == b)
    registry = default_registry()
    for slot in SLOTS:
        sa, sb = registry.find(slot, a), registry.find(slot, b)
        if sa is not None or sb is not None:
            return sa is not None and sa == sb
    return a.strip().lower() == b.strip().lower()


def _deep_merge(base: dict[Any, Any], patch: Mapping[Any, Any]) -> dict[Any, Any]:
    out = dict(base)
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def overlay_binding(base: Any, patch: Any) -> Any:
    """Overlay merge of a singleton slot (docs/design.md §2.6). A string (or any non-mapping)
    overlay replaces the binding; a ``type``/``ref`` change replaces the whole binding and drops
    the old params; the same plugin (or a params-only patch) deep-merges ``params`` so nested maps
    keep their siblings (``trimmer.reserve_tokens`` keeps ``trimmer.max_tokens``). Inputs are
    never mutated; a null patch returns a copy of ``base``."""
    if patch is None:
        return copy.deepcopy(base)
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    merged = _as_mapping(base)
    new_locator = patch.get("type") or patch.get("ref")
    if merged is None:
        return copy.deepcopy(dict(patch))
    old_locator = merged.get("type") or merged.get("ref")
    if new_locator and old_locator and not _same_plugin(new_locator, old_locator):
        return copy.deepcopy(dict(patch))
    for key, value in patch.items():
        if key == "params" and isinstance(value, Mapping) and isinstance(merged.get("params"), dict):
            merged["params"] = _deep_merge(merged["params"], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
