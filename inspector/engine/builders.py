"""The manifest's bindings made into plugin objects: the context manager, its summarizer, the assembler.

A binding (:class:`~inspector.manifest.settings.Binding`) carries the params as written and, for a
plugin with a params model, the validated model (:attr:`~inspector.manifest.settings.Binding.typed_params`:
defaults filled, aliases folded, clamps applied). A plugin that offers ``from_params(model)`` is
built from that model: it is validated once, in the model, and no default is restated here. A
plugin without one (a third party's) is called with the written params as keywords. A written name
the plugin does not accept is a :class:`TypeError` naming the field, as a constructor would raise.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any

from inspector.engine.llm import LLMEngine
from inspector.engine.managers.base import ContextManager
from inspector.engine.tokens import TokenCounter
from inspector.manifest import ContextSettings
from inspector.manifest.settings import Binding
from inspector.params import PluginParams
from inspector.plugins import PluginSpec, Registry, Slot, default_registry

__all__ = ["build_assembler", "build_context_manager", "build_summarizer"]


def build_context_manager(settings: ContextSettings, counter: TokenCounter, *, registry: Registry | None = None,
                          summarizer: Any = "manifest", llm: LLMEngine | None = None,
                          summary_cache: Any = None, allow_imports: Iterable[str] = ()) -> ContextManager:
    """The manifest's context manager, counting with ``counter``, with its summarizer bound when it
    takes one (docs/design.md §3.6a).

    ``summarizer`` overrides the manifest's choice: ``"manifest"`` (default), ``"drop"``,
    ``"stand-in"`` (the labelled offline stand-in) or a summarizer object. Raises
    :class:`TypeError` when the plugin rejects its params or is no context manager, and
    :class:`~inspector.errors.PluginLookupError` when the binding names no known plugin.
    """
    reg = registry or default_registry()
    binding = settings.context_manager
    spec = _spec(reg, "context_manager", binding, "spec.context_manager", allow_imports)
    cls = spec.load()
    cm: ContextManager = _construct(cls, spec, binding, "spec.context_manager.params")
    if not isinstance(cm, ContextManager) and not hasattr(cm, "manage_history"):
        raise TypeError(f"spec.context_manager: {cls.__name__} is not a context manager")
    cm.counter = counter
    if getattr(cm, "accepts_summarizer", False):
        cm.bind_summarizer(build_summarizer(settings, summarizer=summarizer, llm=llm, cache=summary_cache,
                                            registry=reg, allow_imports=allow_imports))
    return cm


def build_summarizer(settings: ContextSettings, *, summarizer: Any = "manifest", llm: LLMEngine | None = None,
                     cache: Any = None, registry: Registry | None = None, allow_imports: Iterable[str] = ()) -> Any:
    """The summarizer the manifest binds (``llm`` when it binds none), or the override ``summarizer``:
    ``"drop"``, ``"stand-in"``, or an object returned as it is (``"manifest"`` and None read the
    manifest). ``llm`` is the engine a model-calling summarizer calls through, ``cache`` its summary
    cache. Raises :class:`TypeError` when the plugin rejects its params."""
    from inspector.engine.summarizers.drop import DropSummarizer
    from inspector.engine.summarizers.standin import StandInSummarizer

    if summarizer == "drop":
        return DropSummarizer()
    if summarizer in ("stand-in", "standin"):
        return StandInSummarizer()
    if summarizer not in (None, "manifest"):
        return summarizer
    reg = registry or default_registry()
    binding = settings.summarizer
    if binding is None:
        spec = reg.resolve("summarizer", None, field_path="spec.context_manager.params.summarizer")
        binding = Binding(type=spec.name, urn=spec.urn, params={}, source="default", slot="summarizer")
    else:
        spec = _spec(reg, "summarizer", binding, "spec.context_manager.params.summarizer", allow_imports)
    context = {"llm": llm, "models": settings.models, "cache": cache}
    return _construct(spec.load(), spec, binding, "spec.context_manager.params.summarizer.params", context)


def build_assembler(settings: ContextSettings, *, registry: Registry | None = None,
                    allow_imports: Iterable[str] = ()) -> Any:
    """The manifest's assembler (the default :class:`~inspector.engine.assembly.assembler.ContextAssembler`
    unless ``spec.assembler`` names another). Raises :class:`TypeError` when it has no ``assemble()``
    or rejects its params."""
    binding = settings.assembler
    spec = _spec(registry or default_registry(), "assembler", binding, "spec.assembler", allow_imports)
    obj = _construct(spec.load(), spec, binding, "spec.assembler.params")
    if not hasattr(obj, "assemble"):
        raise TypeError(f"spec.assembler: {type(obj).__name__} has no assemble()")
    return obj


def _spec(reg: Registry, slot: Slot, binding: Binding, where: str, allow_imports: Iterable[str]) -> PluginSpec:
    """The plugin a binding names: its ``ref`` (an allow-listed import) when its type is no known
    name, else its type through the registry."""
    if binding.ref and reg.find(slot, binding.type) is None:
        field_path = f"{where}.ref" if slot == "summarizer" else None
        return reg.resolve_ref(slot, binding.ref, allow_imports=allow_imports, field_path=field_path)
    return reg.resolve(slot, binding.type, field_path=where)


def _typed(spec: PluginSpec, binding: Binding) -> PluginParams | None:
    """The binding's validated params model for ``spec``: the one the binding carries when it is of
    ``spec``'s model (the usual case), else made from the written params with ``spec``'s model (a
    registry other than the default one); None for a plugin without a model."""
    model = spec.params_model
    if model is None:
        return None
    typed = binding.typed_params
    return typed if type(typed) is model else model.of(binding.params)


def _construct(cls: Any, spec: PluginSpec, binding: Binding, where: str,
               context: Mapping[str, Any] | None = None) -> Any:
    """``cls.from_params(model, **context)`` for a plugin with a params model and ``from_params``;
    else ``cls(**params)`` with the written params (and ``llm=`` from ``context`` when its signature
    names it). Raises :class:`TypeError` naming ``where`` for a name the plugin rejects."""
    params = dict(binding.params)
    typed = _typed(spec, binding)
    from_params = getattr(cls, "from_params", None)
    try:
        if typed is not None and from_params is not None:
            unknown = sorted(k for k in params if k not in spec.params)
            if unknown:
                raise TypeError(f"unexpected keyword argument(s) {', '.join(map(repr, unknown))}")
            return from_params(typed, **(context or {}))
        # a plugin without a params model takes the written params, and the engine when it asks for one
        names = inspect.signature(cls).parameters if context else {}
        return cls(**params, **({"llm": context["llm"]} if context and "llm" in names else {}))
    except TypeError as exc:
        raise TypeError(f"{where}: {cls.__name__} rejected {sorted(params)}: {exc}") from exc
