"""A sweep's grid: parsing ``--grid`` items, expanding the grid into runs, and applying one run's
settings to a manifest document (docs/design.md, "Grids across strategy types").

Grid keys are dotted manifest paths (``spec.models[0].context_window``) or short names:
``keep_turns``, ``hysteresis_ratio``, ``summary_threshold``, ``max_messages`` (the table
:data:`~inspector.manifest.overrides.SHORT_NAMES` that ``--set`` reads too) and the name of any
parameter of a registered context manager (→ ``spec.context_manager.params.<name>``), and
``context_manager`` (→ ``spec.context_manager``, a string like ``sliding-window`` or a whole
``{type, params}`` mapping). Shallower paths are applied first, so ``context_manager`` ×
``keep_turns`` sets the strategy and then its parameter.

A grid spans strategy types: a strategy parameter (``keep_turns``) applies only to the runs whose
strategy's params model defines it, and no other run ever receives it (docs/design.md Q9: no
strategy is handed a parameter it does not accept). :func:`expand_grid` runs a type once per
combination of the keys that apply to it and says, per run, which settings were not applicable; a
strategy parameter that no strategy of the grid defines, or a whole spec naming a parameter its
type does not define, is an :class:`~inspector.manifest.overrides.OverrideError` naming it.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import yaml

from inspector.compare import check_strategy
from inspector.manifest import Issue, ManifestError, compaction_to_context_manager, set_dotted
from inspector.manifest.overrides import SHORT_NAMES, OverrideError

CM_PARAMS = "spec.context_manager.params."
"""Where a strategy parameter lives in the manifest."""


def resolve_key(key: str) -> str:
    """The dotted manifest path a grid key sets: a short name of :data:`SHORT_NAMES`, or the bare
    name of a registered context manager's parameter, expands; a dotted path is kept as given."""
    key = key.strip()
    if key in SHORT_NAMES:
        return SHORT_NAMES[key]
    return CM_PARAMS + key if key in strategy_parameter_names() else key


def strategy_parameter_names() -> frozenset[str]:
    """Every parameter a registered context manager's params model defines (the names a grid key
    may give bare), without the assembly keys every strategy accepts (``trimmer``, ...)."""
    from inspector.manifest.bindings import ASSEMBLY_KEYS
    from inspector.plugins import default_registry

    names = {p for spec in default_registry().specs("context_manager") for p in spec.params}
    return frozenset(names - set(ASSEMBLY_KEYS))


def strategy_parameter(key: str) -> str | None:
    """The strategy parameter a grid key sets (``keep_turns`` for ``keep_turns`` or
    ``spec.context_manager.params.keep_turns``), or None when the key sets something else (another
    field, a whole ``context_manager``, or an assembly key every strategy accepts)."""
    path = resolve_key(key)
    name = path[len(CM_PARAMS):] if path.startswith(CM_PARAMS) else ""
    return name if name in strategy_parameter_names() else None


def row_strategy(doc: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
    """The context manager a row runs: ``params`` without their strategy parameters applied to
    ``doc``, its ``spec.context_manager`` (or the compaction shorthand, or the default) looked up in
    the registry. Returns the :class:`~inspector.plugins.PluginSpec`, or None when the name is no
    registered plugin (a third-party ``ref``: its constructor checks its parameters)."""
    from inspector.plugins import DEFAULTS, default_registry

    spec = apply_params(doc, {k: v for k, v in params.items() if strategy_parameter(k) is None}).get("spec")
    cm = spec.get("context_manager") if isinstance(spec, Mapping) else None
    if cm is None and isinstance(spec, Mapping) and isinstance(spec.get("working_memory"), Mapping) \
            and isinstance(spec["working_memory"].get("compaction"), Mapping):
        cm = _compaction_type(spec["working_memory"]["compaction"])
    name = cm.get("type") if isinstance(cm, Mapping) else cm
    if name is None and not (isinstance(cm, Mapping) and cm.get("ref")):
        name = DEFAULTS["context_manager"]
    return default_registry().find("context_manager", name) if isinstance(name, str) and name.strip() else None


def _compaction_type(compaction: Mapping[str, Any]) -> str | None:
    """The manager the compaction shorthand stands for (None when it names no known strategy)."""
    try:
        return str(compaction_to_context_manager(dict(compaction))["type"])
    except (ManifestError, KeyError, TypeError):
        return None


def split_settings(doc: Mapping[str, Any], params: Mapping[str, Any]) -> tuple[str | None, dict[str, Any], dict[str, Any]]:
    """``(strategy, applied, not_applicable)`` for one row: the canonical name of the context manager
    it runs (:func:`row_strategy`; None when not a registered one), the settings that reach the
    manifest, and the strategy parameters its params model does not define (they never reach it)."""
    spec = row_strategy(doc, params)
    accepted = None if spec is None or (spec.params_model is None and not spec.params) else set(spec.params)
    applied: dict[str, Any] = {}
    skipped: dict[str, Any] = {}
    for key, value in params.items():
        name = strategy_parameter(key)
        (skipped if name is not None and accepted is not None and name not in accepted else applied)[key] = value
    return (spec.name if spec is not None else None), applied, skipped


def settings_words(settings: Mapping[str, Any]) -> str:
    """Grid settings as one cell: ``name=value`` joined by ``"; "`` (values as :func:`param_value`)."""
    return "; ".join(f"{k}={param_value(v)}" for k, v in settings.items())


def apply_params(doc: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """A new manifest document with every grid value set (``doc`` is never mutated).

    Shallower paths first, so a whole ``context_manager`` is replaced before its params are set.
    When a parameter touches ``spec.context_manager`` and the manifest only has the
    ``working_memory.compaction`` shorthand, the shorthand is first written out as the
    ``context_manager`` it stands for (docs/design.md §2.4), so the rest of it (summarizer model, threshold)
    is kept rather than silently replaced by defaults."""
    out = copy.deepcopy(dict(doc))
    paths = [(resolve_key(k), v) for k, v in params.items()]
    if any(p == "spec.context_manager" or p.startswith("spec.context_manager.") for p, _ in paths):
        out = _materialise_compaction(out)
    for path, value in sorted(paths, key=lambda pv: _depth(pv[0])):  # stable: grid order within a depth
        out = set_dotted(out, path, _yaml_text(value))
    return out


def _depth(path: str) -> int:
    return path.count(".") + path.count("[")


def _yaml_text(value: Any) -> str:
    """A Python value as YAML text that :func:`set_dotted` parses back to the same value."""
    return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True)


def _materialise_compaction(doc: dict[str, Any]) -> dict[str, Any]:
    spec = doc.get("spec")
    if not isinstance(spec, dict) or spec.get("context_manager") is not None:
        return doc
    wm = spec.get("working_memory")
    if not isinstance(wm, dict) or not isinstance(wm.get("compaction"), dict):
        return doc
    spec["context_manager"] = compaction_to_context_manager(wm["compaction"])
    wm.pop("compaction")
    return doc


def param_value(value: Any) -> Any:
    """A grid value as a table cell: scalars as is, mappings/lists as compact JSON text (hashable)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


# --- the grid -------------------------------------------------------------------------------------

def combinations(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid, in ``itertools.product`` order of the keys as given.
    An empty grid is one combination: the manifest as written. Raises :class:`ValueError` when a
    key's values are not a list, or are empty."""
    keys = list(grid)
    for k in keys:
        values = grid[k]
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise ValueError(f"grid {k!r}: expected a list of values, got {values!r}")
    lists = [list(grid[k]) for k in keys]
    for k, values in zip(keys, lists, strict=True):
        if not values:
            raise ValueError(f"grid {k!r} has no values")
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*lists)]


class GridRun(NamedTuple):
    """One run of a grid: the settings it applies, and the grid's strategy parameters its strategy
    does not define, with every value the grid gives them (they never reach it)."""

    params: dict[str, Any]
    not_applicable: dict[str, list[Any]]


def expand_grid(grid: Mapping[str, Sequence[Any]], doc: Mapping[str, Any]) -> list[GridRun]:
    """The runs a grid makes on the manifest document ``doc``: every combination
    (:func:`combinations`) without the strategy parameters its strategy does not define, each
    distinct run once, in combination order. ``context_manager=[stack, sliding-window]`` ×
    ``keep_turns=[2, 4]`` is three runs: ``stack`` (``keep_turns`` not applicable), then
    ``sliding-window`` with 2 and with 4.

    Raises :class:`~inspector.manifest.OverrideError` naming a strategy parameter that no strategy
    of the grid defines, and what :func:`combinations` raises."""
    for value in grid.get("context_manager", ()):  # a whole spec names its own parameters: none may be foreign
        check_strategy(value)
    runs: dict[str, GridRun] = {}
    used: set[str] = set()
    ran: list[str] = []
    for combo in combinations(grid):
        strategy, applied, skipped = split_settings(doc, combo)
        used.update(applied)
        ran += [] if strategy is None or strategy in ran else [strategy]
        run = runs.setdefault(json.dumps([[k, param_value(v)] for k, v in applied.items()]), GridRun(applied, {}))
        for key, value in skipped.items():
            values = run.not_applicable.setdefault(key, [])
            values += [] if value in values else [value]
    for key in grid:
        if key not in used:
            raise OverrideError([Issue(key, _foreign_words(key, ran))])
    return list(runs.values())


def _foreign_words(key: str, ran: Sequence[str]) -> str:
    """Why a strategy parameter applies to no run: the grid's strategies, and those that define it."""
    from inspector.plugins import default_registry

    name = strategy_parameter(key)
    defining = [s.name for s in default_registry().specs("context_manager") if name in s.params]
    return (f"not a parameter of any strategy in the grid ({', '.join(ran) or 'none'}); "
            f"defined by: {', '.join(defining) or 'no registered strategy'}")


def parse_grid(items: Iterable[str]) -> dict[str, list[Any]]:
    """``["keep_turns=2,4,6", "hysteresis_ratio=0,0.1"]`` → ``{"keep_turns": [2, 4, 6], ...}``.

    Each value is parsed as YAML (``4`` is an int, ``null`` None). A right-hand side in brackets is
    one YAML list, and one in braces one YAML mapping (a single value), for values that contain
    commas: ``context_manager=[sliding-window, {type: stack, params: {max_messages: 20}}]`` or
    ``context_manager={type: stack, params: {max_messages: 20}}``. A key given again adds its
    values to the same axis (``--grid 'context_manager={...}' --grid 'context_manager={...}'``).

    Raises :class:`ValueError` (quoting the item) when an item is not ``NAME=VALUES``, or has no
    values or values that cannot be read."""
    from inspector.manifest import parse_value

    grid: dict[str, list[Any]] = {}
    for item in items:
        key, sep, rhs = item.partition("=")
        key, rhs = key.strip(), rhs.strip()
        if not sep or not key:
            raise ValueError(f"--grid {item!r} must look like NAME=V1,V2,...")
        try:
            if rhs.startswith("["):
                values = parse_value(rhs)
                if not isinstance(values, list):
                    raise ValueError("not a list")
            elif rhs.startswith("{"):
                values = [parse_value(rhs)]
                if not isinstance(values[0], dict):
                    raise ValueError("not a mapping")
            else:
                values = [parse_value(v.strip()) for v in rhs.split(",") if v.strip()]
        except (ManifestError, ValueError) as exc:
            raise ValueError(f"--grid {item!r}: cannot read the values ({exc})") from None
        if not values:
            raise ValueError(f"--grid {item!r} has no values")
        grid.setdefault(key, []).extend(values)
    return grid
