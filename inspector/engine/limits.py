"""Model limits: the context window and completion reserve, each with where it came from.

Window order (docs/design.md §2.3): ``spec.models[primary].context_window`` → infra
``generation.context_window`` → litellm's bundled model info for the model *after infra mapping*
(the JSON model map in litellm's wheel, read without importing litellm) → 128 000 with one warning per model name.
Completion reserve: primary ``max_tokens`` → infra ``generation.max_tokens`` /
``max_completion_tokens`` (capped by ``max_output_tokens``) → 2 000.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspector.errors import InspectorError

FALLBACK_WINDOW = 128_000
FALLBACK_COMPLETION = 2_000
MAX_MAPPING_DEPTH = 10

class OncePerKey:
    """Which keys have been seen: ``first(key)`` is True once per key. An explicit, named object
    instead of a bare module flag, so the state a warning depends on is visible where it is used."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def first(self, key: str) -> bool:
        if key in self._seen:
            return False
        self._seen.add(key)
        return True


UNKNOWN_WINDOW_WARNED = OncePerKey()
"""Scenario 13: one "no context window known" warning per model name and process, however many
engines resolve it (a sweep builds one per run)."""


class ModelResolutionError(InspectorError, ValueError):
    """Infra mappings form a cycle or a chain deeper than 10."""


@dataclass(frozen=True, slots=True)
class ModelLimits:
    model: str | None  # primary model as written
    effective_model: str | None  # after infra mapping
    window: int
    window_source: str  # "manifest" | "infra" | "litellm" | "fallback"
    completion: int
    completion_source: str  # "manifest" | "infra" | "default"
    input_cost_per_token: float | None  # USD, None = unknown
    output_cost_per_token: float | None
    price_source: str | None
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model, "effective_model": self.effective_model,
            "window": self.window, "window_source": self.window_source,
            "completion": self.completion, "completion_source": self.completion_source,
            "input_cost_per_token": self.input_cost_per_token, "output_cost_per_token": self.output_cost_per_token,
            "price_source": self.price_source,
        }


def resolve_mapped_model(name: str | None, mappings: Mapping[str, str]) -> str | None:
    """Follow ``spec.models.mappings`` chains (``default → haiku → bedrock/…``) with cycle detection."""
    if name is None:
        return None
    seen = [name]
    current = name
    for _ in range(MAX_MAPPING_DEPTH + 1):
        nxt = mappings.get(current)
        if nxt is None or nxt == current:
            return current
        if nxt in seen:
            raise ModelResolutionError(f"infra model mappings form a cycle: {' → '.join([*seen, nxt])}")
        seen.append(nxt)
        current = nxt
    raise ModelResolutionError(f"infra model mapping chain deeper than {MAX_MAPPING_DEPTH}: {' → '.join(seen)}")


@functools.lru_cache(maxsize=256)
def litellm_model_info(model: str) -> dict[str, Any] | None:
    """litellm's bundled info for ``model`` (tried as given, then its last path segment); None if unknown.

    Read from the model map litellm ships as data (:func:`inspector.offline.model_map`), so litellm
    stays the source of truth for windows and prices without being imported (seconds) here."""
    if model in ("any", "default", ""):
        return None
    from inspector.offline import model_map

    table = model_map()
    for candidate in dict.fromkeys((model, model.rsplit("/", 1)[-1])):
        info = table.get(candidate)
        if info:
            return dict(info)
    return None


def _positive_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int) and v >= 1:
        return v
    if isinstance(v, float) and v >= 1 and v.is_integer():
        return int(v)
    return None


def resolve_limits(settings: Any, *, warn: bool = True) -> ModelLimits:
    """``settings`` is a :class:`inspector.manifest.ContextSettings` (duck-typed: ``primary_model()``, ``infra``)."""
    primary = settings.primary_model()
    infra = settings.infra
    generation: Mapping[str, Any] = dict(infra.generation) if infra is not None else {}
    mappings: Mapping[str, str] = dict(infra.mappings) if infra is not None else {}
    model = primary.model if primary is not None and primary.model not in (None, "") else None
    effective = resolve_mapped_model(model, mappings) if model else None
    notes: list[str] = []

    info: dict[str, Any] | None = None
    lookup = effective if effective not in (None, "any", "default") else None

    window = _positive_int(primary.context_window) if primary is not None else None
    window_source = "manifest"
    if window is None:
        window, window_source = _positive_int(generation.get("context_window")), "infra"
    if window is None and lookup:
        info = litellm_model_info(lookup)
        if info:
            window = _positive_int(info.get("max_input_tokens")) or _positive_int(info.get("max_tokens"))
            window_source = "litellm"
    if window is None:
        window, window_source = FALLBACK_WINDOW, "fallback"
        name = str(lookup or model or "<no model>")
        msg = f"no context window known for model {name!r}: using {FALLBACK_WINDOW}"
        notes.append(msg)
        if warn and (lookup or model) and UNKNOWN_WINDOW_WARNED.first(name):
            warnings.warn(msg, stacklevel=2)

    completion = _positive_int(primary.max_tokens) if primary is not None else None
    completion_source = "manifest"
    if completion is None:
        completion = _positive_int(generation.get("max_tokens")) or _positive_int(generation.get("max_completion_tokens"))
        completion_source = "infra"
        cap = _positive_int(generation.get("max_output_tokens"))
        if completion is not None and cap is not None:
            completion = min(completion, cap)
    if completion is None:
        completion, completion_source = FALLBACK_COMPLETION, "default"

    in_cost = out_cost = None
    price_source = None
    pricing = generation.get("pricing") if isinstance(generation.get("pricing"), Mapping) else None
    if pricing and pricing.get("input_per_million_tokens") is not None:
        in_cost = float(pricing["input_per_million_tokens"]) / 1e6
        out = pricing.get("output_per_million_tokens")
        out_cost = float(out) / 1e6 if out is not None else None
        price_source = "infra"
    elif lookup:
        info = info if info is not None else litellm_model_info(lookup)
        if info and info.get("input_cost_per_token") is not None:
            in_cost = float(info["input_cost_per_token"])
            oc = info.get("output_cost_per_token")
            out_cost = float(oc) if oc is not None else None
            price_source = "litellm"
    return ModelLimits(model, effective, window, window_source, completion, completion_source,
                       in_cost, out_cost, price_source, tuple(notes))
