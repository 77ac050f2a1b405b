"""The package's seams, checked from its source (docs/architecture.md).

* Errors: every exception class the package defines derives from :class:`inspector.errors.InspectorError`,
  so a face catches one class.
* The import graph (read with :mod:`ast`, lazy imports included): no cycle between modules or
  packages, layers flow one way (:data:`FLOORS`), no private module or name used outside its package.
* Dead code: vulture at 80 % confidence (configured in pyproject.toml) finds nothing.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from conftest import ROOT

from inspector.errors import InspectorError

PACKAGE = ROOT / "inspector"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "_app" not in p.parts}


def test_every_error_the_package_defines_derives_from_the_one_root() -> None:
    defined: list[str] = []
    for name, path in package_modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
        if not classes:
            continue
        module = importlib.import_module(name)
        for cls_name in classes:
            cls = getattr(module, cls_name)
            if inspect.isclass(cls) and issubclass(cls, BaseException):
                defined.append(f"{name}.{cls_name}")
                assert issubclass(cls, InspectorError), f"{name}.{cls_name} is not an InspectorError"
    # the kinds the issue lists are all there (a rename would otherwise pass silently)
    wanted = {"TranscriptError", "ManifestError", "ManifestReadError", "OverrideError", "UnknownPluginError",
              "ModelResolutionError", "LLMCallError", "CalibrationError", "ProviderPayloadError", "ArchiveError",
              "FleetError", "UsageError", "PluginLookupError"}
    assert wanted <= {d.rsplit(".", 1)[1] for d in defined}


# --- the import graph ------------------------------------------------------------------------------

FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("floor", ("inspector", "inspector.errors", "inspector.params", "inspector.plugins", "inspector.vocabulary",
               "inspector.ids", "inspector.redact", "inspector.json_text", "inspector.offline", "inspector.bundled")),
    ("inputs", ("inspector.manifest", "inspector.transcripts")),
    ("engine", ("inspector.engine",)),
    ("replay", ("inspector.policy", "inspector.replay", "inspector.observed", "inspector.calibration")),
    ("analysis", ("inspector.forgetting", "inspector.compare", "inspector.fleet", "inspector.sweep", "inspector.grid",
                  "inspector.planted", "inspector.tuning", "inspector.prompt_cache", "inspector.prompt_cache_rows",
                  "inspector.replay_document",
                  "inspector.forgetting_index")),
    ("report", ("inspector.report", "inspector.live")),
    ("faces", ("inspector.cli", "inspector.notebook", "inspector.__main__", "inspector.app")),
)
"""The layer map, written once (docs/architecture.md draws it): a module may import its own floor
or a lower one, never a higher one. A prefix names a package and everything in it."""


def floor_of(module: str) -> int:
    best: tuple[int, int] | None = None  # (length of the matching prefix, floor)
    for level, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if module == prefix or (prefix != "inspector" and module.startswith(prefix + ".")):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), level)
    assert best is not None, f"{module} is on no floor of FLOORS: place it"
    return best[1]


def imports_of(name: str, path: Path, modules: set[str]) -> list[tuple[str, str, int]]:
    """``(target module, imported name, line)`` for every import of the package's own code, at
    module level or inside a function (a lazy import is still an edge)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    base = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name.split(".")[0] == "inspector"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")[: len(base.split(".")) - node.level + 1]
                module = ".".join(parts + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "inspector":
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                out.append((sub, "", node.lineno) if sub in modules else (module, alias.name, node.lineno))
    return out


def graph() -> dict[str, list[tuple[str, str, int]]]:
    mods = package_modules()
    return {name: [e for e in imports_of(name, path, set(mods)) if e[0] != name] for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative enough for ~100 nodes)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_modules() -> None:
    edges = {m: {t for t, _, _ in es} for m, es in graph().items()}
    assert cycles(edges) == []


def test_no_import_cycle_between_packages() -> None:
    def pkg(module: str) -> str:
        parts = module.split(".")
        return ".".join(parts[:2])  # inspector.engine, inspector.manifest, inspector.cli, ...

    edges: dict[str, set[str]] = {}
    for m, es in graph().items():
        edges.setdefault(pkg(m), set()).update(pkg(t) for t, _, _ in es if pkg(t) != pkg(m))
    assert cycles(edges) == []


def test_layers_flow_one_way() -> None:
    mods = package_modules()
    upward = [f"{mods[m].relative_to(ROOT)}:{line}: {m} (floor {FLOORS[floor_of(m)][0]}) imports {t} "
              f"(floor {FLOORS[floor_of(t)][0]})"
              for m, es in graph().items() for t, _, line in es if floor_of(t) > floor_of(m)]
    assert upward == []


def test_no_private_name_is_imported_from_another_package() -> None:
    def pkg(module: str) -> str:
        return module.rpartition(".")[0] if module.count(".") >= 2 else module

    mods = package_modules()
    reaches = []
    for m, es in graph().items():
        for target, name, line in es:
            private_module = any(p.startswith("_") and not p.startswith("__") for p in target.split("."))
            private_name = name.startswith("_") and not name.startswith("__")
            if (private_module or private_name) and pkg(target) != pkg(m):
                reaches.append(f"{mods[m].relative_to(ROOT)}:{line}: {m} imports {target} {name}".rstrip())
    assert reaches == []


def test_vulture_finds_no_dead_code_at_80_percent() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "vulture"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_action_set_and_the_vocabulary_are_derived_from_the_strategies_declarations() -> None:
    """One source: each registered strategy declares its actions in its own class; the action set
    and every word table are what those declarations say, and a code declared twice means the same."""
    from inspector.plugins import default_registry
    from inspector.vocabulary import (
        ACTION_WORDS,
        CM_ACTIONS,
        DROP_ACTIONS,
        FOLD_KINDS,
        SUMMARY_ACTIONS,
        cm_actions,
    )

    declared = [a for spec in default_registry().specs("context_manager") for a in spec.declared("actions")]
    by_code: dict[str, object] = {}
    for action in declared:
        assert by_code.setdefault(action.code, action) == action, f"{action.code} declared twice, differently"
    assert CM_ACTIONS == cm_actions() and set(CM_ACTIONS) == set(by_code)
    assert {"summarized", "reused", "window-slid", "stack-capped"} <= set(CM_ACTIONS)  # the seeds' own
    assert ACTION_WORDS == {code: a.words for code, a in by_code.items()}  # type: ignore[attr-defined]
    assert SUMMARY_ACTIONS | DROP_ACTIONS <= set(CM_ACTIONS) and not SUMMARY_ACTIONS & DROP_ACTIONS
    assert SUMMARY_ACTIONS | DROP_ACTIONS <= set(FOLD_KINDS)  # every summary or drop folds


def test_fold_kinds_are_the_archives_kinds() -> None:
    from typing import get_args

    from inspector.engine.archive import FoldKind
    from inspector.vocabulary import FOLD_KINDS

    assert set(FOLD_KINDS.values()) <= set(get_args(FoldKind))


# --- state lives on instances -------------------------------------------------

def test_no_module_rebinds_a_global_and_nothing_is_bolted_onto_an_object() -> None:
    """No ``global`` statement (a warned-once flag, a lazily made singleton) and no attribute set on
    an object that does not declare it (``# type: ignore[attr-defined]``): such state belongs to an
    instance (``Replay.views``, a summarizer's own flag, a named ``OncePerKey``)."""
    found = []
    for name, path in package_modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{name}:{node.lineno} global" for node in ast.walk(tree) if isinstance(node, ast.Global)]
        found += [f"{name}:{k} attr-defined" for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                  if "type: ignore[attr-defined]" in line]
    assert found == []


def test_the_check_finds_a_planted_global() -> None:
    tree = ast.parse("_flag = False\ndef f():\n    global _flag\n    _flag = True\n")
    assert any(isinstance(node, ast.Global) for node in ast.walk(tree))
