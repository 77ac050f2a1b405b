"""Model limits: the context window and completion reserve, each with where it came from.

Window order (docs/design.md §2.3): ``spec.models[primary].context_window`` → infra
``generation.context_window`` → litellm's bundled model info for the model *after infra mapping*
(the JSON model map in litellm's wheel, read without importing litellm; the entry is found in the
order of :func:`model_entry_candidates`: the id, without or with a provider prefix, a provider
variant such as ``anthropic.<id>-v1:0``; the source names the entry when it is not the id as written) →
128 000 with one warning per model name. Prices come from the same entry.
Completion reserve: primary ``max_tokens`` → infra ``generation.max_tokens`` /
``max_completion_tokens`` (capped by ``max_output_tokens``) → 2 000.
"""

from __future__ import annotations

import functools
import re
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
        """True the first time ``key`` is asked, False after."""
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
    """What the engine knows of the model: its name as written and after infra mapping, the context window and
    the completion reserve with where each came from, prices per token (None: unknown), warnings about
    how they were found, and an unrecorded prefix added to every call."""

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
    prefix: int = 0
    """Provider tokens every call carries that the transcript does not record (e.g. Claude Code's own
    system prompt and tool schemas), when the user adds them to the budget; 0 = none added."""
    prefix_source: str | None = None  # where ``prefix`` came from, in words

    def as_dict(self) -> dict[str, Any]:
        """The limits as a JSON-ready dict (the prefix only when one is added)."""
        extra = {"unrecorded_prefix": self.prefix, "unrecorded_prefix_source": self.prefix_source} if self.prefix else {}
        return {
            "model": self.model, "effective_model": self.effective_model,
            "window": self.window, "window_source": self.window_source,
            "completion": self.completion, "completion_source": self.completion_source,
            "input_cost_per_token": self.input_cost_per_token, "output_cost_per_token": self.output_cost_per_token,
            "price_source": self.price_source, **extra,
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


PROVIDER_PREFIXES: tuple[str, ...] = ("anthropic", "openai", "gemini", "mistral", "deepseek", "xai", "cohere")
"""First-party provider prefixes tried, in this order, for an id written without one (``anthropic/…``)."""

_VARIANT = re.compile(r"^([a-z0-9-]+)\.(.+)-v(\d+)(?::(\d+))?$")
"""A provider variant of an id: ``<vendor>.<id>-v<N>[:<M>]`` (Bedrock: ``anthropic.claude-sonnet-4-20250514-v1:0``)."""
_DATED = re.compile(r"^(.+)-(\d{8})$")


@functools.lru_cache(maxsize=1)
def _variants() -> dict[str, tuple[str, ...]]:
    """id → its provider-variant entries in litellm's map (no region prefix, lowest version first)."""
    from inspector.offline import model_map

    found: dict[str, list[tuple[int, int, str]]] = {}
    for key in model_map():
        m = _VARIANT.match(key)
        if m and "/" not in key and m.group(1) not in ("us", "eu", "apac", "global", "jp", "au", "ca"):
            found.setdefault(m.group(2), []).append((int(m.group(3)), int(m.group(4) or 0), key))
    return {k: tuple(key for *_, key in sorted(v)) for k, v in found.items()}


def model_entry_candidates(model: str) -> list[str]:
    """The entries of litellm's map that may describe ``model``, in the order they are tried:

    1. the id as written (``claude-sonnet-4-20250514``; ``openai/gpt-4o``);
    2. without its provider prefix (``openai/gpt-4o`` → ``gpt-4o``);
    3. with a first-party provider prefix (:data:`PROVIDER_PREFIXES`: ``anthropic/claude-…``);
    4. the same id as a provider variant: ``<vendor>.<id>-v1:0`` (Bedrock), ``vertex_ai/<name>@<date>``.

    Every candidate names the same model: the same family and the same date, never a newer or
    older one (a retired id is found under its own name elsewhere in the map, or not at all)."""
    bare = model.rsplit("/", 1)[-1]
    out = [model, bare, *(f"{p}/{bare}" for p in PROVIDER_PREFIXES)]
    out += _variants().get(bare, ())
    dated = _DATED.match(bare)
    if dated:
        out.append(f"vertex_ai/{dated.group(1)}@{dated.group(2)}")
    return list(dict.fromkeys(out))


@functools.lru_cache(maxsize=256)
def litellm_model_entry(model: str) -> tuple[str, dict[str, Any]] | None:
    """``(entry, info)``: the first of :func:`model_entry_candidates` that litellm's bundled model map
    holds, and its info; None if none. Read from the model map litellm ships as data
    (:func:`inspector.offline.model_map`), so litellm stays the source of truth for windows and
    prices without being imported (seconds) here."""
    if model in ("any", "default", ""):
        return None
    from inspector.offline import model_map

    table = model_map()
    for candidate in model_entry_candidates(model):
        info = table.get(candidate)
        if info:
            return candidate, dict(info)
    return None


def litellm_model_info(model: str) -> dict[str, Any] | None:
    """litellm's bundled info for ``model`` (see :func:`litellm_model_entry` for the order); None if unknown."""
    found = litellm_model_entry(model)
    return None if found is None else dict(found[1])


def litellm_source(model: str, entry: str) -> str:
    """``litellm`` when the entry is the id as written (with or without its provider prefix), else
    ``litellm entry <entry>``: which entry was used."""
    return "litellm" if entry in (model, model.rsplit("/", 1)[-1]) else f"litellm entry {entry}"


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
    found = litellm_model_entry(lookup) if lookup else None
    entry_source = litellm_source(lookup, found[0]) if lookup and found else "litellm"

    window = _positive_int(primary.context_window) if primary is not None else None
    window_source = "manifest"
    if window is None:
        window, window_source = _positive_int(generation.get("context_window")), "infra"
    if window is None and found is not None:
        info = found[1]
        window = _positive_int(info.get("max_input_tokens")) or _positive_int(info.get("max_tokens"))
        window_source = entry_source
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
    elif found is not None:
        info = found[1]
        if info.get("input_cost_per_token") is not None:
            in_cost = float(info["input_cost_per_token"])
            oc = info.get("output_cost_per_token")
            out_cost = float(oc) if oc is not None else None
            price_source = entry_source
    return ModelLimits(model, effective, window, window_source, completion, completion_source,
                       in_cost, out_cost, price_source, tuple(notes))
