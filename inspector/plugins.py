"""Plugin registry: every kind of plugin, by slot, name, aliases and URN.

Five slots: the three a manifest binds (``assembler``, ``context_manager``, ``summarizer``,
:data:`SLOTS`), the transcript importers (asked in registration order by format detection,
:mod:`inspector.transcripts.detect`) and the token counters (``--counter``,
:func:`inspector.engine.tokens.make_counter`).

Name resolution (docs/design.md §2.1), case-insensitive:
  1. exact URN (``mas.cm.stack``);
  2. canonical name or alias (``full-history`` → ``stack``);
  3. any plugin of the slot whose URN ends in ``.<name with - → _>`` (``sliding-window`` →
     ``mas.cm.sliding_window`` even without the alias).

Built-ins are registered by import path and loaded lazily (an importer's target may name a whole
module: ``"inspector.transcripts.openai_chat"``). Third-party packages register without
editing this package, either by calling :func:`register` or through the Python entry-point group
``context_inspector.plugins`` whose objects are :class:`PluginSpec` instances (or lists of them).

A manifest ``ref`` that is not a known name/URN but looks like an import path (``pkg.mod:Class``)
is imported **only** when the caller passes that module in ``allow_imports``: a manifest never runs
code on its own.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.errors import PluginLookupError
from inspector.params import (
    AssemblerParams,
    AutoCompactParams,
    ClearToolResultsParams,
    CondenserParams,
    DropParams,
    LLMSummarizerParams,
    ObservationMaskingParams,
    PluginParams,
    SlidingWindowParams,
    StackParams,
    SummarizingParams,
    TrimmerParams,
    params_table,
)

Slot = Literal["assembler", "context_manager", "summarizer", "importer", "counter"]
SLOTS: tuple[Slot, ...] = ("assembler", "context_manager", "summarizer")
"""The slots a manifest binds (``spec.<slot>``)."""
ALL_SLOTS: tuple[Slot, ...] = (*SLOTS, "importer", "counter")
"""Every slot of the registry: the manifest's, then transcript importers and token counters."""

DEFAULTS: dict[Slot, str] = {"assembler": "assembler", "context_manager": "summarising", "summarizer": "llm"}


__all__ = ["ALL_SLOTS", "BUILTIN_COUNTERS", "BUILTIN_IMPORTERS", "DEFAULTS", "ENTRY_POINT_GROUP", "SLOTS",
           "PluginLookupError", "PluginSpec", "Registry", "Slot", "builtin_params_table", "default_registry", "register"]


@dataclass(frozen=True)
class PluginSpec:
    """One plugin: its slot, canonical name, URN, target (``module:attr`` loaded lazily, or the factory
    itself), aliases, accepted params (from ``params_model`` when it has one) and whether it is built
    in."""

    slot: Slot
    name: str  # canonical
    urn: str
    target: str | Callable[..., Any]  # "module:attr" (loaded lazily) or the factory itself
    aliases: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    """The names the plugin accepts under ``params`` (validation, docs/design.md Q9); derived from
    ``params_model`` when one is given, written by hand only by a third-party plugin without one."""
    builtin: bool = False
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    params_model: type[PluginParams] | None = None
    """The plugin's one params model (:mod:`inspector.params`): names, types, ranges, defaults, docs."""
    actions: tuple[Any, ...] | None = None
    """A context manager's actions (:class:`inspector.vocabulary.Action`); None: read from the loaded
    target's ``actions`` (a strategy declares them in its own module)."""
    reasons: tuple[Any, ...] | None = None
    """A context manager's replacement reasons (:class:`inspector.vocabulary.Reason`); None: read from
    the loaded target's ``reasons``."""

    def declared(self, kind: str) -> tuple[Any, ...]:
        """What the plugin declares under ``kind`` (``actions`` or ``reasons``): the spec's own tuple,
        else the loaded target's attribute of that name (nothing for a target that fails to load)."""
        own = getattr(self, kind)
        if own is not None:
            return tuple(own)
        try:
            return tuple(getattr(self.load(), kind, ()) or ())
        except Exception:  # noqa: BLE001 - a broken third-party plugin declares nothing
            return ()

    def __post_init__(self) -> None:
        if self.params_model is not None:
            object.__setattr__(self, "params", self.params_model.names())

    def load(self) -> Any:
        """The target itself: the factory (or, for ``"module:attr"``, the attribute imported now; for a
        bare ``"module"``, the module, which is what an importer normally is)."""
        if callable(self.target):
            return self.target
        module, _, attr = self.target.partition(":")
        obj: Any = importlib.import_module(module)
        for part in attr.split(".") if attr else ():
            obj = getattr(obj, part)
        return obj


BUILTIN_SPECS: list[PluginSpec] = [  # the built-ins, by import path (loaded only when used)
    PluginSpec("assembler", "assembler", "mas.ctx.assembler", "inspector.engine.assembly.assembler:ContextAssembler",
               ("context-assembler", "ctx-assembler"), builtin=True, params_model=AssemblerParams),
    PluginSpec("context_manager", "summarising", "mas.cm.summarising",
               "inspector.engine.managers.summarising:SummarizingConversation", ("summarizing",),
               builtin=True, params_model=SummarizingParams),
    PluginSpec("context_manager", "sliding-window", "mas.cm.sliding_window",
               "inspector.engine.managers.sliding_window:SlidingWindowConversation", ("sliding_window",),
               builtin=True, params_model=SlidingWindowParams),
    PluginSpec("context_manager", "stack", "mas.cm.stack", "inspector.engine.managers.stack:StackConversation",
               ("full-history", "full_history"), builtin=True, params_model=StackParams),
    PluginSpec("context_manager", "clear-tool-results", "mas.cm.clear_tool_results",
               "inspector.engine.managers.clear_tool_results:ClearToolResults", ("clear_tool_results",),
               builtin=True, params_model=ClearToolResultsParams),
    PluginSpec("context_manager", "observation-masking", "mas.cm.observation_masking",
               "inspector.engine.managers.observation_masking:ObservationMasking", ("observation_masking",),
               builtin=True, params_model=ObservationMaskingParams),
    PluginSpec("context_manager", "auto-compact", "mas.cm.auto_compact",
               "inspector.engine.managers.auto_compact:AutoCompactConversation", ("auto_compact",),
               builtin=True, params_model=AutoCompactParams),
    PluginSpec("context_manager", "condenser", "mas.cm.condenser", "inspector.engine.managers.condenser:Condenser",
               ("llm-summarizing-condenser",), builtin=True, params_model=CondenserParams),
    PluginSpec("summarizer", "llm", "mas.summarizer.llm", "inspector.engine.summarizers.llm:LLMSummarizer",
               builtin=True, params_model=LLMSummarizerParams),
    PluginSpec("summarizer", "drop", "mas.summarizer.drop", "inspector.engine.summarizers.drop:DropSummarizer",
               builtin=True, params_model=DropParams),
]


def _importer(module: str) -> PluginSpec:
    """A built-in transcript importer: the module ``inspector.transcripts.<module>`` (its ``NAME`` is the format)."""
    name = {"litellm_log": "litellm", "anthropic_messages": "anthropic", "openai_chat": "openai"}.get(
        module, module.replace("_", "-"))
    return PluginSpec("importer", name, f"mas.importer.{module}", f"inspector.transcripts.{module}", builtin=True)


BUILTIN_IMPORTERS: list[PluginSpec] = [_importer(m) for m in (
    "tau_bench", "tau2_bench", "swe_agent", "letta", "inspect_ai", "otel_genai", "openhands", "bashkit", "mas_lab",
    "claude_code", "litellm_log", "openai_log", "anthropic_messages", "openai_chat")]
"""The built-in transcript importers in detection order: the most specific shape first, ``openai`` last."""
BUILTIN_COUNTERS: list[PluginSpec] = [
    PluginSpec("counter", "tiktoken", "mas.counter.tiktoken", "inspector.engine.tokens:TiktokenCounter", builtin=True),
    PluginSpec("counter", "estimate", "mas.counter.estimate", "inspector.engine.tokens:EstimateCounter", builtin=True),
]
"""The built-in token counters, in the order ``--counter`` lists them (each made with ``model=``)."""

ENTRY_POINT_GROUP = "context_inspector.plugins"


def builtin_params_table() -> str:
    """The table of every built-in plugin's parameters (and the trimmer's) in docs/guide.md, written
    from their params models; tests/manifest/test_plugin_params.py holds the guide equal to it."""
    rows: list[tuple[str, type[PluginParams]]] = []
    for slot in SLOTS:
        rows += [(f"{slot} `{spec.name}`", spec.params_model) for spec in BUILTIN_SPECS
                 if spec.slot == slot and spec.params_model is not None and spec.params_model.model_fields]
        if slot == "context_manager":
            rows.append(("context_manager `params.trimmer`", TrimmerParams))
    return params_table(rows)


class Registry:
    """Plugins by slot and name (built-ins, entry points, ``register`` calls); names resolve as the module
    docstring says."""

    def __init__(self, specs: Iterable[PluginSpec] = ()) -> None:
        self._specs: dict[Slot, dict[str, PluginSpec]] = {s: {} for s in ALL_SLOTS}
        self._declared: dict[str, tuple[Any, ...]] = {}
        for spec in specs:
            self.register(spec)
        self._entry_points_loaded = False

    def register(self, spec: PluginSpec, *, replace: bool = False) -> None:
        """Add ``spec`` to its slot. Raises :class:`ValueError` when another plugin of that name is
        registered, unless ``replace``."""
        table = self._specs[spec.slot]
        key = spec.name.lower()
        if key in table and not replace and table[key] != spec:
            raise ValueError(f"{spec.slot} plugin {spec.name!r} is already registered")
        table[key] = spec
        self._declared.clear()

    def unregister(self, slot: Slot, name: str) -> None:
        """Forget a plugin (a test's temporary plugin, a host that swaps one out); unknown names are ignored."""
        self._specs[slot].pop(name.lower(), None)
        self._declared.clear()

    def declared(self, kind: str) -> tuple[Any, ...]:
        """Every context manager's declarations of ``kind`` (``actions``, ``reasons``: objects with a
        ``code``), each code once (the first wins), in registration order; kept until the registry
        changes."""
        kept = self._declared.get(kind)
        if kept is None:
            seen: dict[str, Any] = {}
            for spec in self.specs("context_manager"):
                for item in spec.declared(kind):
                    seen.setdefault(item.code, item)
            kept = self._declared[kind] = tuple(seen.values())
        return kept

    def specs(self, slot: Slot) -> list[PluginSpec]:
        """Every plugin of ``slot``, in registration order (the entry points loaded first, once)."""
        self._load_entry_points()
        return list(self._specs[slot].values())

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                obj = ep.load()
            except Exception as exc:  # a broken third-party plugin must not break the built-ins
                import warnings

                warnings.warn(f"plugin entry point {ep.name!r} failed to load: {exc}", stacklevel=2)
                continue
            items = obj if isinstance(obj, (list, tuple)) else [obj]
            for item in items:
                if isinstance(item, PluginSpec):
                    self.register(item, replace=True)

    def find(self, slot: Slot, name: str) -> PluginSpec | None:
        """Resolve a name/alias/URN for ``slot``; None when unknown."""
        wanted = str(name).strip().lower()
        if not wanted:
            return None
        specs = self.specs(slot)
        for spec in specs:
            if spec.urn.lower() == wanted:
                return spec
        for spec in specs:
            if wanted == spec.name.lower() or wanted in (a.lower() for a in spec.aliases):
                return spec
        suffix = "." + wanted.replace("-", "_")
        for spec in specs:
            if spec.urn.lower().replace("-", "_").endswith(suffix):
                return spec
        return None

    def resolve(self, slot: Slot, name: str | None, *, field_path: str | None = None) -> PluginSpec:
        """Like :meth:`find` but an unknown name is an error naming the manifest field."""
        if name is None or str(name).strip() == "":
            name = DEFAULTS[slot]
        spec = self.find(slot, name)
        if spec is None:
            known = sorted(s.name for s in self.specs(slot))
            where = field_path or f"spec.{slot}"
            raise PluginLookupError(f"{where}: unknown {slot} plugin {name!r} (known: {', '.join(known)})")
        return spec

    def resolve_ref(self, slot: Slot, ref: str, *, allow_imports: Iterable[str] = (),
                    field_path: str | None = None) -> PluginSpec:
        """A ``ref`` is a name/URN, or ``module:attr`` imported only when its module is allow-listed."""
        spec = self.find(slot, ref)
        if spec is not None:
            return spec
        where = field_path or f"spec.{slot}.ref"
        if ":" in ref:
            module = ref.split(":", 1)[0]
            allowed = any(module == a or module.startswith(a + ".") for a in allow_imports)
            if not allowed:
                raise PluginLookupError(
                    f"{where}: {ref!r} would import code; pass allow_imports=[{module!r}] to allow it")
            return PluginSpec(slot, ref, ref, ref)
        raise PluginLookupError(f"{where}: unknown {slot} plugin {ref!r}")


@functools.cache
def default_registry() -> Registry:
    """The process-wide registry (built-ins plus entry points), made on first use; one instance that
    :func:`register` adds to and a caller may pass around (``ContextEngine(registry=...)``)."""
    return Registry([*BUILTIN_SPECS, *BUILTIN_IMPORTERS, *BUILTIN_COUNTERS])


def register(spec: PluginSpec, *, replace: bool = False) -> None:
    """Register a third-party plugin in the process-wide registry."""
    default_registry().register(spec, replace=replace)
