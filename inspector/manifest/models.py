"""Pydantic schemas of the *closed* manifest blocks, and one checker that turns them into issues.

Each block that has a fixed set of keys (trimmer, working_memory, compaction, models[] rows,
skills, tools, infra models) is one strict model here: YAML ``true`` is not an integer, ``"3"`` is
not a number, unknown keys are rejected. :func:`check_block` validates a block, reports every
problem with its full field path, and then *repairs* the block by removing the offending values,
so assemble mode falls back to defaults field by field instead of dropping the whole block. The
open-ended parts (plugin bindings and their params) depend on the registry and live in
``bindings.py``; each plugin's params are checked by its own model (:mod:`inspector.params`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from inspector.manifest._collect import Collector, Path_, describe
from inspector.params import FiniteFloat, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, TrimmerParams


TOP_LEVEL_KEYS: tuple[str, ...] = ("apiVersion", "kind", "metadata", "spec")
"""Keys of an Agent document."""
SPEC_KEYS: tuple[str, ...] = ("system_prompt", "description", "context", "memory_seeds", "skills", "assembler",
                              "context_manager", "working_memory", "models", "tools", "infra")
"""Keys of ``spec`` the inspector reads."""


class _Closed(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class _Open(BaseModel):
    """Known keys are type-checked; other keys are kept (a warning in validate mode)."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


TrimmerModel = TrimmerParams
"""``spec.context_manager.params.trimmer``: the trimmer's params model is the block's schema."""


class CompactionModel(_Closed):
    """``spec.working_memory.compaction`` (docs/design.md §2.4); the strategy value is checked by the translator."""

    strategy: StrictStr | None = None
    max_messages: PositiveInt | None = None
    window_size: PositiveInt | None = None
    summary_threshold: NonNegativeInt | None = None
    keep_turns: PositiveInt | None = None
    model: StrictStr | None = None


class WorkingMemoryModel(_Closed):
    """``spec.working_memory``; ``compaction`` is checked on its own with :class:`CompactionModel`."""

    persistent: StrictBool = True
    compaction: dict[Any, Any] | None = None


class ModelRowModel(_Open):
    """One ``spec.models[]`` row (docs/design.md §2.2). Other sampling fields pass through unchecked."""

    id: StrictStr | None = None
    model: StrictStr | None = None
    max_tokens: PositiveInt | None = None
    context_window: PositiveInt | None = None
    max_completion_tokens: PositiveInt | None = None
    temperature: FiniteFloat | None = None
    top_p: FiniteFloat | None = None
    presence_penalty: FiniteFloat | None = None
    frequency_penalty: FiniteFloat | None = None
    seed: StrictInt | None = None
    on_truncation: StrictStr | None = None
    kind: StrictStr | None = None
    extra: dict[Any, Any] | None = None
    token_calibration: dict[Literal["tiktoken", "estimate"], PositiveFloat] | None = None
    """Opt-in correction factor per token counter (provider tokens per one of ours, from a
    calibration against provider-reported usage); the budget divides its input ceiling by it."""
    prompt_cache: Literal["auto", "none", "openai", "anthropic"] | None = None
    """The provider prompt-cache rule the costs with caching follow (docs/design.md §5.2): ``auto``
    (by the model's provider) or a rule name; ``--cache-rule`` on the command line wins."""


class SkillModel(_Closed):
    """One ``spec.skills[]`` entry (docs/design.md Q7: rendered as pinned system_skills parts)."""

    name: Annotated[StrictStr, Field(min_length=1)]
    description: StrictStr | None = None
    body: StrictStr | None = None
    activated: StrictBool = False


class ToolFunctionModel(_Open):
    """The ``function`` of a tool schema: its name (required), description and JSON-schema parameters."""

    name: Annotated[StrictStr, Field(min_length=1)]
    description: StrictStr | None = None
    parameters: dict[Any, Any] | None = None
    strict: StrictBool | None = None


class ToolModel(_Closed):
    """An OpenAI chat-completions tool schema."""

    type: Literal["function"]
    function: ToolFunctionModel


class PricingModel(_Closed):
    """Prices a manifest states for a model, in currency units per million tokens (each optional)."""

    input_per_million_tokens: NonNegativeFloat | None = None
    cached_input_per_million_tokens: NonNegativeFloat | None = None
    output_per_million_tokens: NonNegativeFloat | None = None


class GenerationModel(_Open):
    """Generation settings of a model entry: its window, output limits, truncation policy and prices."""

    context_window: PositiveInt | None = None
    max_tokens: PositiveInt | None = None
    max_completion_tokens: PositiveInt | None = None
    max_output_tokens: PositiveInt | None = None
    on_truncation: StrictStr | None = None
    pricing: PricingModel | None = None


class InfraModelsModel(_Open):
    """``spec.models`` of an LLMProxy/LLMLocal/Infra document, or ``spec.infra.models`` (docs/design.md §2.3)."""

    mappings: dict[StrictStr, StrictStr] | None = None
    allowed: list[StrictStr] | None = None
    generation: GenerationModel | None = None


class InfraModel(_Open):
    """``spec.infra`` of an Agent document: only its ``models`` block is read."""

    models: dict[Any, Any] | None = None


M = TypeVar("M", bound=BaseModel)

_DROP = object()


def _loc_path(loc: tuple[Any, ...]) -> Path_:
    return tuple(p for p in loc if p != "[key]")


def _message(err: Mapping[str, Any], model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        owner: Any = model
        for part in loc[:-1]:
            fld = owner.model_fields.get(part) if isinstance(part, str) and hasattr(owner, "model_fields") else None
            ann = getattr(fld, "annotation", None) if fld is not None else None
            owner = next((a for a in getattr(ann, "__args__", (ann,)) if isinstance(a, type)
                          and issubclass(a, BaseModel)), None) if ann is not None else None
            if owner is None:
                break
        allowed = ", ".join(owner.model_fields) if owner is not None else ""
        return f"unknown key (allowed: {allowed})" if allowed else "unknown key"
    if kind == "missing":
        return "required"
    if loc and loc[-1] == "[key]":
        return f"key: {err['msg']} (got {describe(loc[-2])})"
    return f"{err['msg']} (got {describe(err.get('input'))})"


def _remove(data: Any, loc: tuple[Any, ...]) -> bool:
    """Mark the value at ``loc`` for removal; False when there is nothing left to remove."""
    if not loc:
        return False
    parent = data
    for part in loc[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return False
    last = loc[-1]
    if isinstance(parent, dict) and last in parent:
        parent[last] = _DROP
        return True
    if isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent):
        parent[last] = _DROP
        return True
    return False


def _prune(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _prune(v) for k, v in data.items() if v is not _DROP}
    if isinstance(data, list):
        return [_prune(v) for v in data if v is not _DROP]
    return data


def check_block(model: type[M], value: Any, path: Path_, col: Collector, *,
                lenient: Literal["warn", "silent"] = "warn", doc: int | None = None,
                warn_extra: bool = True) -> M | None:
    """Validate ``value`` against ``model``, report every problem under ``path``, and return the
    model built from what is valid (None when even that is impossible, e.g. a required key is
    missing or the value is not a mapping). Never raises."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        col.invalid(path, f"must be a mapping (got {describe(value)})", lenient=lenient, doc=doc)
        return None
    data: Any = copy.deepcopy(value)
    reported = False
    for _ in range(50):  # each round removes at least one value, so this terminates
        try:
            result = model.model_validate(data)
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
            progressed = False
            for err in errors:
                loc = tuple(err["loc"])
                if not reported:
                    col.invalid(path + _loc_path(loc), _message(err, model, loc), lenient=lenient, doc=doc)
                target = loc[:-2] if loc and loc[-1] == "[key]" else loc
                if err["type"] == "missing":
                    target = loc[:-1]
                progressed = _remove(data, target) or progressed
            reported = True
            if not progressed:
                return None
            data = _prune(data)
            continue
        if warn_extra:
            _warn_extras(result, path, col, doc)
        return result
    return None


def _warn_extras(obj: BaseModel, path: Path_, col: Collector, doc: int | None) -> None:
    for key in obj.model_extra or {}:
        col.warn(path + (key,), "unknown key, passed through unchecked", doc=doc, validate_only=True)
    for name in type(obj).model_fields:
        child = getattr(obj, name)
        if isinstance(child, BaseModel):
            _warn_extras(child, path + (name,), col, doc)
