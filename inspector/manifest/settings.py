"""The public result of reading a manifest: normalised settings with every default resolved.

Everything downstream (engine, replay, report, app, CLI) reads these frozen dataclasses and never
the raw YAML, so the three forms of a binding (omitted, name, object) and the compaction sugar
cannot behave differently (docs/design.md Q5). Containers are plain dicts and tuples on purpose: the
objects must deep-copy and pickle (Streamlit caches them), which ``MappingProxyType`` would break.
"""

from __future__ import annotations

import base64
import datetime as _dt
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.errors import EXIT_USAGE, InspectorError, PluginLookupError
from inspector.params import TRIMMER, PluginParams
from inspector.plugins import Slot, default_registry

Severity = Literal["error", "warning"]
Mode = Literal["assemble", "validate"]


@dataclass(frozen=True)
class Issue:
    """One validation error or warning, located as precisely as the source allows."""

    path: str
    """Dotted field path, e.g. ``spec.context_manager.params.keep_turns`` ("" = the whole file)."""
    message: str
    line: int | None = None
    """1-based YAML line of the field (or of its nearest written ancestor) when known."""
    file: str | None = None
    severity: Severity = "error"

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line is not None else f"{self.file}: "
        elif self.line is not None:
            where = f"line {self.line}: "
        from inspector.redact import mask_text  # an error may quote a pasted key: never show it

        text = f"{where}{self.path}: {self.message}" if self.path else f"{where}{self.message}"
        return mask_text(text)


class ManifestError(InspectorError, ValueError):
    """A manifest that cannot be used. ``issues`` holds every error found (validate mode collects
    them all); ``warnings`` the warnings gathered before giving up, so a caller that catches the
    error can still show them."""

    def __init__(self, issues: Sequence[Issue] | str, *, warnings: Sequence[Issue] = ()) -> None:
        if isinstance(issues, str):
            issues = [Issue("", issues)]
        self.issues: list[Issue] = list(issues)
        self.warnings: list[Issue] = list(warnings)
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(i) for i in self.issues) or "invalid manifest"


class ManifestReadError(ManifestError):
    """The file itself is unusable: unreadable, too large, not UTF-8, or not well-formed YAML
    (syntax, alias bomb, recursion, nesting). The CLI maps it to exit status 2, content errors to 1."""

    exit_status = EXIT_USAGE


class UnknownPluginError(ManifestError, PluginLookupError):
    """A well-formed but unknown plugin name (never lenient, docs/design.md §2.1). Also a
    :class:`PluginLookupError`, so code written against the registry catches it too."""


@dataclass(frozen=True)
class ModelRow:
    """One ``spec.models[]`` row (docs/design.md §2.2). ``extra`` keeps every other field as written
    (temperature, top_p, max_completion_tokens, on_truncation, kind, ...)."""

    id: str
    model: str | None
    max_tokens: int | None
    """Completion budget, also the default completion reserve."""
    context_window: int | None
    """None = auto (infra generation > catalog > 128 000, resolved by the engine)."""
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class InfraModels:
    """Infra model resolution inputs (docs/design.md §2.3), merged from LLMProxy/LLMLocal/Infra documents
    and ``spec.infra.models``; the engine resolves mapping chains and windows from these."""

    mappings: Mapping[str, str] = field(default_factory=dict)
    allowed: tuple[str, ...] = ()
    """Advisory only."""
    generation: Mapping[str, Any] = field(default_factory=dict)
    """context_window, max_tokens, max_completion_tokens, max_output_tokens, on_truncation,
    pricing{...}; invalid numbers are dropped so the engine never sees them."""


@dataclass(frozen=True)
class Binding:
    """A resolved plugin binding for one slot."""

    type: str
    """Canonical registry name (``summarising``, ``sliding-window``, ``stack``, ``assembler``,
    ``llm``, ``drop``) or the ``module:attr`` ref of an allow-listed import."""
    urn: str
    params: Mapping[str, Any]
    """For a context manager: strategy params only (assembly keys and ``summarizer`` removed),
    as written, aliases kept (``window_size`` stays ``window_size``)."""
    source: str
    """Where it came from: ``default``, ``spec.context_manager``, ``spec.working_memory.compaction``,
    ``default (malformed spec.context_manager ignored)``, ..."""
    ref: str | None = None
    slot: Slot | None = None
    """The registry slot the binding fills (how its params model is found); None for a hand-made binding."""

    @functools.cached_property
    def typed_params(self) -> PluginParams | None:
        """The validated params model the plugin runs with (:meth:`inspector.params.PluginParams.of`:
        defaults filled, aliases folded, clamps applied); None for a plugin without a params model."""
        spec = default_registry().find(self.slot, self.type) if self.slot is not None else None
        return None if spec is None or spec.params_model is None else spec.params_model.of(self.params)


@dataclass(frozen=True)
class TrimmerSettings:
    """``spec.context_manager.params.trimmer`` (docs/design.md §2.1, §3.2). None = automatic."""

    max_tokens: int | None = None
    """Input ceiling (alias ``token_budget``); None = the resolved model window."""
    reserve_tokens: int | None = None
    """Completion reserve, floored at 0; None = the effective completion budget."""
    safety_margin_ratio: float = TRIMMER.safety_margin_ratio
    """Fraction of ``max_tokens`` held back, clamped to :data:`~inspector.params.SAFETY_MARGIN_RATIO`."""


@dataclass(frozen=True)
class PartSpec:
    """A system-band part declared by the manifest (skills, docs/design.md Q7); pinned parts are never
    summarised or trimmed."""

    content: str
    section_id: str
    placement: str
    priority: int
    pinned: bool
    source: str


def resolved_params(binding: Binding) -> dict[str, Any]:
    """The parameters a plugin will actually run with (docs/design.md §2.5), from its params model
    (:meth:`inspector.params.PluginParams.resolve`: defaults filled, sliding-window aliases folded
    into ``keep_turns`` with precedence keep_turns > window_size > max_turns, clamps applied).
    A plugin without a params model: the params as written."""
    typed = binding.typed_params
    return dict(binding.params) if typed is None else typed.resolved()


@dataclass(frozen=True)
class ContextSettings:
    """Everything the engine needs from a manifest, normalised (docs/design.md §2)."""

    assembler: Binding
    context_manager: Binding
    summarizer: Binding | None
    """Only for context managers that take one (summarising): default ``{type: llm}``."""
    trimmer: TrimmerSettings
    models: tuple[ModelRow, ...]
    infra: InfraModels
    injected_context: tuple[str, ...]
    """System-band lines: ``system_prompt`` first, then ``[key] text`` per ``spec.context`` chunk."""
    memory_seeds: tuple[tuple[str, str], ...]
    parts: tuple[PartSpec, ...]
    tools: tuple[Mapping[str, Any], ...] | None
    """OpenAI tool schemas; None when the manifest declares none (a transcript's tools may apply)."""
    persistent: bool
    deprecated: tuple[str, ...]
    warnings: tuple[str, ...]
    sample: bool = False
    """The manifest is a bundled sample (``metadata.context-inspector/sample: true``, decision Q25):
    it describes another agent, so by default a replay keeps the transcript's system text and tools."""

    def primary_model(self) -> ModelRow | None:
        """First row whose id is ``main`` (a row without id counts as main), else the first row.
        Budgets always use this row even when a cheaper ``summarizer`` row exists (docs/design.md §2.2)."""
        for row in self.models:
            if row.id == "main":
                return row
        return self.models[0] if self.models else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able normalised view with every default resolved, in a fixed key order, so CLI
        output and app tables are deterministic and diffable."""
        primary = self.primary_model()
        return {
            "assembler": _binding_dict(self.assembler),
            "context_manager": _binding_dict(self.context_manager),
            "summarizer": _binding_dict(self.summarizer) if self.summarizer is not None else None,
            "trimmer": {
                "max_tokens": self.trimmer.max_tokens,
                "reserve_tokens": self.trimmer.reserve_tokens,
                "safety_margin_ratio": self.trimmer.safety_margin_ratio,
            },
            "models": [
                {"id": r.id, "model": r.model, "max_tokens": r.max_tokens, "context_window": r.context_window,
                 "extra": jsonable(dict(r.extra))}
                for r in self.models
            ],
            "primary_model": primary.id if primary is not None else None,
            "infra": {
                "mappings": jsonable(dict(self.infra.mappings)),
                "allowed": list(self.infra.allowed),
                "generation": jsonable(dict(self.infra.generation)),
            },
            "injected_context": list(self.injected_context),
            "memory_seeds": [{"key": k, "text": t} for k, t in self.memory_seeds],
            "parts": [
                {"section_id": p.section_id, "placement": p.placement, "priority": p.priority,
                 "pinned": p.pinned, "source": p.source, "content": p.content}
                for p in self.parts
            ],
            "tools": jsonable([dict(t) for t in self.tools]) if self.tools is not None else None,
            "persistent": self.persistent,
            "deprecated": list(self.deprecated),
            "warnings": list(self.warnings),
            **({"sample": True} if self.sample else {}),  # only a sample says so: other outputs stay as they were
        }


def _binding_dict(b: Binding) -> dict[str, Any]:
    return {
        "type": b.type,
        "urn": b.urn,
        "ref": b.ref,
        "source": b.source,
        "params": jsonable(dict(b.params)),
        "resolved_params": jsonable(resolved_params(b)),
    }


def jsonable(value: Any) -> Any:
    """Convert YAML-constructed values (dates, bytes, sets, non-string keys, non-finite floats)
    into strict-JSON values; ``json.dumps(..., allow_nan=False)`` always succeeds on the result."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=repr)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return str(value)


@dataclass(frozen=True)
class LoadedManifest:
    """A manifest read from YAML (or a dict) together with its normalised settings."""

    raw: dict[str, Any]
    """The Agent document as loaded (unchanged)."""
    settings: ContextSettings
    warnings: tuple[Issue, ...]
    """Every warning, deprecations included, located like errors."""
    file: str | None
    documents: tuple[dict[str, Any], ...] = ()
    """Every YAML document of the file (the Agent one and LLMProxy/LLMLocal/Infra ones)."""
