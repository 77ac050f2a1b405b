"""One frozen params model per built-in plugin: the single written source of its parameters.

A plugin's parameters (names, value types, ranges, defaults, clamps, one-line docs) are declared
once, as the fields of a :class:`PluginParams` subclass, and everything else is derived from it:

* the registry's accepted names (``PluginSpec.params``, :mod:`inspector.plugins`);
* the manifest's value checks and their messages (:meth:`PluginParams.problem`), and whether an
  invalid value is an error in every mode or falls back to the default (``on_invalid``);
* the resolved defaults ``validate --show`` prints (:meth:`PluginParams.resolve`);
* the constructors' defaults and checks (:meth:`PluginParams.build`, :data:`SUMMARIZING` & co.), and
  the plugins a manifest binds, built from the validated model itself (``from_params``,
  :mod:`inspector.engine.builders`: checked once, no default restated);
* the strategy presets of the compare view (:meth:`PluginParams.preset`);
* the parameter table in docs/guide.md (:func:`params_table`, held equal by tests/manifest/test_plugin_params.py).

A clamp (the hysteresis ratio into [0, 1], the safety margin into [0, 0.5]) is a :class:`Clamp`
marker on its field: validation warns with its range, and the engine reads the same object.

This module sits on the floor (it imports only pydantic), so the manifest and the engine both
build on it without importing each other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, TypeVar, get_args

import annotated_types
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError
from pydantic.fields import FieldInfo

__all__ = ["AssemblerParams", "AutoCompactParams", "Clamp", "ClearToolResultsParams", "CondenserParams", "DropParams",
           "HYSTERESIS_RATIO", "Inert", "LLMSummarizerParams", "ObservationMaskingParams", "PluginParams", "SAFETY_MARGIN_RATIO", "SlidingWindowParams", "StackParams", "SummarizingParams",
           "TrimmerParams", "Unit", "describe", "params_table", "unit_of"]

PositiveInt = Annotated[StrictInt, Field(ge=1)]
NonNegativeInt = Annotated[StrictInt, Field(ge=0)]
FiniteFloat = Annotated[float, Field(strict=True, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]
PositiveFloat = Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0)]


@dataclass(frozen=True)
class Clamp:
    """A valid value outside ``[lo, hi]`` is moved to the nearest end (validate warns, naming the range)."""

    lo: float
    hi: float

    def __call__(self, value: float) -> float:
        """``value`` moved into the range; a NaN reads as ``lo`` (never propagates into a budget)."""
        return min(self.hi, max(self.lo, value)) if value == value else self.lo

    def __str__(self) -> str:
        return f"[{_num(self.lo)}, {_num(self.hi)}]"


@dataclass(frozen=True)
class Inert:
    """A parameter accepted (so reference manifests validate) that changes nothing here; ``why`` is
    the reason validate gives at its line."""

    why: str


Unit = Literal["tokens", "events", "rows", "turns", "tool uses"]
"""What a count setting counts: the one place a face reads it (:func:`unit_of`), never from the doc's words."""


def Doc(text: str, unit: Unit | None = None) -> Any:  # noqa: N802 - reads as a marker, like Field
    """A field's one-line doc (kept as its ``description``, shown in the table of docs/guide.md) and,
    for a count, what it counts (``unit``, kept in the field's JSON-schema extras: :func:`unit_of`)."""
    return Field(description=text, json_schema_extra={"unit": unit} if unit else None)


def unit_of(model: type[BaseModel], field: str) -> Unit | None:
    """What ``model``'s ``field`` counts (its :func:`Doc` ``unit``), or None when it is no count or no field."""
    info = model.model_fields.get(field)
    extra = info.json_schema_extra if info is not None else None
    unit = extra.get("unit") if isinstance(extra, dict) else None
    return unit if unit in get_args(Unit) else None  # type: ignore[return-value]


HYSTERESIS_RATIO = Clamp(0.0, 1.0)
"""The hysteresis ratio's range (docs/design.md §3.5); the budget and the summarising manager clamp with it."""
SAFETY_MARGIN_RATIO = Clamp(0.0, 0.5)
"""The trimmer's safety-margin ratio range (docs/design.md §3.2)."""

P = TypeVar("P", bound="PluginParams")


def describe(value: object) -> str:
    """Short type-and-value description for messages (never dumps a huge value)."""
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list",
            dict: "mapping", type(None): "null"}.get(type(value), type(value).__name__)
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{kind} {text}" if kind not in ("list", "mapping", "null") else kind


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


class PluginParams(BaseModel):
    """Base of every params model: strict (YAML ``true`` is no integer, ``"3"`` no number), closed
    (an unknown name is rejected) and frozen (an instance is a resolved, read-only configuration)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    on_invalid: ClassVar[Literal["error", "default"]] = "error"
    """What assemble mode does with a written value of the wrong type or range: ``error`` (the
    plugin cannot run with it, so every mode refuses it) or ``default`` (a warning; the default applies)."""
    sub_plugins: ClassVar[tuple[str, ...]] = ()
    """Accepted names that hold another plugin's binding (checked by that plugin's model)."""
    folds: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """``{field: (alias, ...)}``: the first written of field, then its aliases, sets the field."""
    preset: ClassVar[tuple[str, ...]] = ()
    """The fields the compare view's preset of this plugin writes out (with their defaults)."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every name the plugin accepts under ``params``."""
        return (*cls.model_fields, *cls.sub_plugins)

    @classmethod
    def problem(cls, key: str, value: Any) -> str | None:
        """What is wrong with ``value`` for the field ``key`` (the validator's words, then the value),
        or None when it is valid or ``key`` is no field of this model."""
        if key not in cls.model_fields:
            return None
        try:
            cls.model_validate({key: value})
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            return f"{err['msg']} (got {describe(value)})"
        return None

    @classmethod
    def conflicts(cls, written: Mapping[Any, Any]) -> list[tuple[str, str]]:
        """``[(field, what is wrong)]`` for written values that are valid one by one but not together
        (``validate`` reports each at its field); none for a model without such a rule."""
        del written
        return []

    @classmethod
    def clamp_of(cls, key: str) -> Clamp | None:
        """The :class:`Clamp` on field ``key`` (None: no clamp, or no such field)."""
        fld = cls.model_fields.get(key)
        return next((m for m in fld.metadata if isinstance(m, Clamp)), None) if fld is not None else None

    @classmethod
    def inert(cls) -> dict[str, str]:
        """``{name: why}`` of the parameters accepted with no effect here."""
        return {name: m.why for name, fld in cls.model_fields.items() for m in fld.metadata if isinstance(m, Inert)}

    @classmethod
    def build(cls: type[P], owner: str, **values: Any) -> P:
        """The checked, clamped configuration a constructor runs with. A value of the wrong type or
        range raises ``ValueError("<owner>: <name> must be <kind> <range> (got <value>)")``."""
        for key, value in values.items():
            if key in cls.model_fields and cls.problem(key, value) is not None:
                raise ValueError(f"{owner}: {key} must be {_kind(cls, key, nullable=value is None)} (got {value!r})")
        made = cls.model_validate(values)
        clamped = {k: c(getattr(made, k)) for k in cls.model_fields if (c := cls.clamp_of(k)) is not None}
        return made.model_copy(update=clamped) if clamped else made

    @classmethod
    def resolve(cls, written: Mapping[Any, Any]) -> dict[str, Any]:
        """The values the plugin will run with: defaults, overridden by each valid written value,
        aliases folded into their field (the aliases then leave the view), clamps applied."""
        return cls.of(written).resolved()

    def resolved(self) -> dict[str, Any]:
        """This configuration's values by name, without the aliases folded into another field."""
        hidden = {a for aliases in type(self).folds.values() for a in aliases}
        return {k: v for k, v in self.model_dump().items() if k not in hidden}

    @classmethod
    def of(cls: type[P], written: Mapping[Any, Any]) -> P:
        """The validated configuration for params as a manifest writes them: defaults, overridden by
        each valid written value (an invalid one is left out: validation has reported it), aliases
        folded into their field, clamps applied."""
        values: dict[str, Any] = {}
        for key in cls.model_fields:
            if isinstance(key, str) and written.get(key) is not None and cls.problem(key, written[key]) is None:
                values[key] = written[key]
        for target, aliases in cls.folds.items():
            chosen = next((values[k] for k in (target, *aliases) if k in values), None)
            for k in (target, *aliases):
                values.pop(k, None)
            if chosen is not None:
                values[target] = chosen
        return cls.build(cls.__name__, **values)

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every field's default, aliases folded (:meth:`resolve` of nothing written)."""
        return cls.resolve({})

    @classmethod
    def preset_params(cls) -> dict[str, Any]:
        """The compare view's preset of this plugin: the :attr:`preset` fields with their defaults."""
        defaults = cls.defaults()
        return {k: defaults[k] for k in cls.preset}


def _kind(model: type[PluginParams], key: str, *, nullable: bool = True) -> str:
    """``an integer >= 1``, ``a number``, ``true or false``, ``a string`` (``or null`` when optional
    and ``nullable``: a constructor's message about a number does not offer null)."""
    fld = model.model_fields[key]
    text = str(fld.annotation)
    kind = "a list of strings" if "list" in text else "an integer" if "int" in text else \
        "a number" if "float" in text else "true or false" if "bool" in text else \
        "a string" if "str" in text else "a value"
    for meta in _constraints(fld.annotation, fld.metadata):
        for op, attr in ((">=", "ge"), (">", "gt"), ("<=", "le"), ("<", "lt")):
            bound = getattr(meta, attr, None)
            if bound is not None:
                kind += f" {op} {_num(bound)}"
    clamp = model.clamp_of(key)
    if clamp is not None:
        kind += f", clamped into {clamp}"
    if nullable and type(None) in get_args(fld.annotation):
        kind += " or null"
    return kind


def _constraints(annotation: Any, metadata: list[Any]) -> list[Any]:
    """The annotated-types bounds (``Ge(1)``…) of a field, wherever pydantic keeps them: the field's
    own metadata, an ``Annotated`` alias, or an alias inside ``X | None`` (there as a ``FieldInfo``)."""
    found: list[Any] = []

    def take(items: Any) -> None:
        for m in items or ():
            if isinstance(m, FieldInfo):
                take(m.metadata)
            elif isinstance(m, annotated_types.GroupedMetadata):
                take(list(m))
            elif isinstance(m, annotated_types.BaseMetadata):
                found.append(m)

    take(metadata)
    take(getattr(annotation, "__metadata__", ()))
    for arg in get_args(annotation):
        take(getattr(arg, "__metadata__", ()))
    return found


# --- the built-in plugins' models ----------------------------------------------------------------

_LEGACY_HOOK = ("has no effect in this engine (the reference runtime reads it only on its legacy hook path); "
                "accepted so reference manifests validate")


class AssemblerParams(PluginParams):
    """``spec.assembler.params`` of the default ``assembler``."""

    on_invalid: ClassVar[Literal["error", "default"]] = "default"
    emit_segments: Annotated[StrictBool, Inert(_LEGACY_HOOK), Doc("reference runtime: emit segment telemetry")] = True
    always_reassemble: Annotated[StrictBool, Inert(_LEGACY_HOOK),
                                 Doc("reference runtime: re-inject parts on every call")] = False
    token_budget: Annotated[NonNegativeInt | None, Inert(_LEGACY_HOOK),
                            Doc("reference runtime: part eviction budget")] = None


class SummarizingParams(PluginParams):
    """``summarising`` (the default manager): fold older turns into one summary block."""

    sub_plugins: ClassVar[tuple[str, ...]] = ("summarizer",)
    preset: ClassVar[tuple[str, ...]] = ("keep_turns",)
    keep_turns: Annotated[PositiveInt, Doc("last N user turns kept verbatim", "turns")] = 10
    summary_threshold: Annotated[NonNegativeInt, Doc("> 0: an earlier absolute trigger in tokens "
                                                     "(capped by the automatic one)", "tokens")] = 0
    hysteresis_ratio: Annotated[FiniteFloat, HYSTERESIS_RATIO,
                                Doc("reuse the summary until the view passes hint × (1 + ratio)")] = 0.1


class SlidingWindowParams(PluginParams):
    """``sliding-window``: the last N user turns verbatim (``keep_turns`` > ``window_size`` > ``max_turns``)."""

    folds: ClassVar[Mapping[str, tuple[str, ...]]] = {"keep_turns": ("window_size", "max_turns")}
    preset: ClassVar[tuple[str, ...]] = ("keep_turns",)
    keep_turns: Annotated[PositiveInt, Doc("last N user turns kept verbatim", "turns")] = 10
    window_size: Annotated[PositiveInt | None, Doc("alias of keep_turns (the reference's name)")] = None
    max_turns: Annotated[PositiveInt | None, Doc("alias of keep_turns")] = None


class StackParams(PluginParams):
    """``stack`` (alias ``full-history``): everything, optionally capped."""

    max_messages: Annotated[PositiveInt | None, Doc("keep the last N rows (null = no cap)", "rows")] = None


def placeholder_fields(*names: str) -> AfterValidator:
    """A validator for a placeholder text that may name only ``names`` as ``{name}`` fields: a
    misspelt field (``{toks}``) would be sent to the model as written, so it is refused, naming the
    fields allowed."""
    allowed = set(names)

    def check(text: str | None) -> str | None:
        unknown = sorted(set(re.findall(r"\{([^{}]*)\}", text or "")) - allowed)
        if unknown:
            raise ValueError(f"unknown field {{{unknown[0]}}} in the placeholder; it may name "
                             + " and ".join(f"{{{n}}}" for n in names))
        return text

    return AfterValidator(check)


class ClearToolResultsParams(PluginParams):
    """``clear-tool-results`` (Anthropic's ``clear_tool_uses_20250919``, LangChain's ``ClearToolUsesEdit``):
    over ``trigger`` input tokens, the oldest tool results become a placeholder."""

    preset: ClassVar[tuple[str, ...]] = ("trigger", "keep")
    trigger: Annotated[PositiveInt, Doc("clear when the input (log + working memory) exceeds N tokens", "tokens")] = 100_000
    keep: Annotated[NonNegativeInt, Doc("the last N tool uses keep their results", "tool uses")] = 3
    clear_at_least: Annotated[NonNegativeInt, Doc("> 0: clear oldest first until N tokens are freed; "
                                                  "clear nothing when the candidates free fewer", "tokens")] = 0
    exclude_tools: Annotated[list[StrictStr] | None, Doc("tool names whose results are never cleared "
                                                         "(null = none)")] = None
    clear_tool_inputs: Annotated[StrictBool, Doc("blank the cleared calls' arguments too (ids kept)")] = False
    placeholder: Annotated[StrictStr | None, placeholder_fields("tool", "tokens"),
                           Doc("text sent for a cleared result, {tool} and {tokens} filled in "
                               "(null = a note naming the tool and the tokens cleared)")] = None


class ObservationMaskingParams(PluginParams):
    """``observation-masking`` (OpenHands' ``ObservationMaskingCondenser``): every tool result more
    than ``attention_window`` events (rows of the log and working memory) from the end is sent as
    ``placeholder``."""

    preset: ClassVar[tuple[str, ...]] = ("attention_window",)
    attention_window: Annotated[PositiveInt, Doc("the N most recent events (rows) whose tool results "
                                                 "are sent as they are", "events")] = 100
    placeholder: Annotated[StrictStr, placeholder_fields("tool", "size"),
                           Doc("what a masked tool result is sent as ({tool} and {size} "
                               "name the tool and the characters masked)")] = "<MASKED>"


class CondenserParams(PluginParams):
    """``condenser`` (OpenHands' ``LLMSummarizingCondenser``): past ``max_size`` events (log rows),
    keep the first ``keep_first`` and a tail, summarise the middle, down to ``max_size // 2`` events."""

    sub_plugins: ClassVar[tuple[str, ...]] = ("summarizer",)
    preset: ClassVar[tuple[str, ...]] = ("max_size", "keep_first")
    max_size: Annotated[PositiveInt, Doc("condense when the history holds more than N events (rows)", "events")] = 240
    keep_first: Annotated[NonNegativeInt, Doc("first N events always kept verbatim", "events")] = 2


class LLMSummarizerParams(PluginParams):
    """``llm`` summarizer: compress older turns with a model."""

    on_invalid: ClassVar[Literal["error", "default"]] = "default"
    model: Annotated[StrictStr | None, Doc("a spec.models[] id or a LiteLLM id "
                                           "(null = the summarizer row, else the agent's)")] = None
    instructions: Annotated[StrictStr | None, Doc("the system prompt of the summary call (null = the package's)")] = None


class DropParams(PluginParams):
    """``drop`` summarizer: discard older turns, no parameters."""


class TrimmerParams(PluginParams):
    """``spec.context_manager.params.trimmer`` (docs/design.md §2.1, §3.2): null = automatic."""

    max_tokens: Annotated[PositiveInt | None, Doc("input ceiling (null = the model window)")] = None
    token_budget: Annotated[PositiveInt | None, Doc("alias of max_tokens (max_tokens wins)")] = None
    reserve_tokens: Annotated[StrictInt | None, Doc("completion reserve, floored at 0 "
                                                    "(null = the completion budget)")] = None
    safety_margin_ratio: Annotated[FiniteFloat, SAFETY_MARGIN_RATIO, Doc("fraction of max_tokens held back")] = 0.1


class AutoCompactParams(PluginParams):
    """``auto-compact`` (Claude Code / Codex): at the trigger, the history becomes the newest user
    messages up to ``keep_user_tokens`` and one summary of the rest. The trigger is
    ``threshold_tokens`` input tokens, else ``threshold_ratio`` of the window (0.9 when neither is
    written); at most one of the two may be written."""

    sub_plugins: ClassVar[tuple[str, ...]] = ("summarizer",)
    preset: ClassVar[tuple[str, ...]] = ("keep_user_tokens",)
    threshold_ratio: Annotated[FiniteFloat | None, Field(gt=0, le=1),
                               Doc("compact when input tokens reach this fraction of the window "
                                   "(null = 0.9 unless threshold_tokens is set)")] = None
    threshold_tokens: Annotated[PositiveInt | None, Doc("compact when input tokens reach N "
                                                        "(instead of threshold_ratio)", "tokens")] = None
    keep_user_tokens: Annotated[NonNegativeInt, Doc("newest user messages kept verbatim, up to N tokens "
                                                    "(0 = none; Codex keeps 20 000)", "tokens")] = 0

    @classmethod
    def conflicts(cls, written: Mapping[Any, Any]) -> list[tuple[str, str]]:
        """``threshold_tokens`` written beside ``threshold_ratio``: the trigger is one or the other."""
        if written.get("threshold_ratio") is not None and written.get("threshold_tokens") is not None:
            return [("threshold_tokens", "set threshold_ratio or threshold_tokens, not both")]
        return []

    @classmethod
    def build(cls, owner: str, **values: Any) -> AutoCompactParams:
        """As :meth:`PluginParams.build`; raises ``ValueError`` naming ``threshold_tokens`` when both
        triggers are given."""
        for key, message in cls.conflicts(values):
            raise ValueError(f"{owner}: {key}: {message}")
        return super().build(owner, **values)

    @classmethod
    def of(cls, written: Mapping[Any, Any]) -> AutoCompactParams:
        """As :meth:`PluginParams.of`; of two triggers written (an error ``validate`` reports), the
        ratio is kept."""
        clash = {key for key, _ in cls.conflicts(written)}
        return super().of({k: v for k, v in written.items() if k not in clash})

    @property
    def ratio(self) -> float:
        """The ratio in force: ``threshold_ratio``, else 0.9 (unused when ``threshold_tokens`` is set)."""
        return 0.9 if self.threshold_ratio is None else self.threshold_ratio


ASSEMBLER = AssemblerParams()
SUMMARIZING = SummarizingParams()
SLIDING_WINDOW = SlidingWindowParams()
STACK = StackParams()
AUTO_COMPACT = AutoCompactParams()
CLEAR_TOOL_RESULTS = ClearToolResultsParams()
TRIMMER = TrimmerParams()
CONDENSER = CondenserParams()
"""Default instances: the constructors' keyword defaults read these (one place for each number)."""


def params_table(rows: list[tuple[str, type[PluginParams]]]) -> str:
    """A Markdown table of ``(where, model)`` rows: parameter, kind, default, what it does."""
    out = ["| plugin | parameter | value | default | meaning |", "|---|---|---|---|---|"]
    for where, model in rows:
        for name, fld in model.model_fields.items():
            default = "null" if fld.default is None else str(fld.default).lower() \
                if isinstance(fld.default, bool) else str(fld.default)
            doc = (fld.description or "") + (" — no effect here" if name in model.inert() else "")
            out.append(f"| {where} | `{name}` | {_kind(model, name)} | `{default}` | {doc} |")
    return "\n".join(out)
