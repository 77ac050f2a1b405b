"""Rooms their size: limits a newcomer can hold in their head, over ``inspector/`` and ``app.py``.

* no module over :data:`MODULE_LINES` lines, no function or method over :data:`FUNCTION_LINES` lines
  (decorators and docstring included: the lines a reader scrolls);
* every public module-level function and class, and every public method, has a docstring saying what
  it takes, returns and raises (docs/contributing.md).

Each check is also run on a planted offender, so a check that finds nothing cannot pass by accident.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

MODULE_LINES = 600
FUNCTION_LINES = 80


def sources() -> list[Path]:
    """The package's modules (the wheel's link to app.py excluded: app.py is checked under its own name)."""
    return [p for p in sorted((ROOT / "inspector").rglob("*.py")) if "_app" not in p.parts] + [ROOT / "app.py"]


def long_modules(paths: list[Path], limit: int = MODULE_LINES) -> list[str]:
    """``path: N lines`` for every module longer than ``limit`` lines."""
    out = []
    for p in paths:
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out.append(f"{p.relative_to(ROOT) if p.is_relative_to(ROOT) else p}: {n} lines")
    return out


def long_functions(source: str, name: str, limit: int = FUNCTION_LINES) -> list[str]:
    """``name:line function N lines`` for every function or method of ``source`` longer than ``limit``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            n = (node.end_lineno or node.lineno) - first + 1
            if n > limit:
                out.append(f"{name}:{node.lineno} {node.name} {n} lines")
    return out


def undocumented(source: str, name: str) -> list[str]:
    """``name:line qualified.name`` for every public function, class or method without a docstring."""
    out: list[str] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                if ast.get_docstring(node) is None:
                    out.append(f"{name}:{node.lineno} {prefix}{node.name}")
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(source).body, "")
    return out


def test_no_module_is_longer_than_600_lines() -> None:
    assert long_modules(sources()) == []


def test_no_function_is_longer_than_80_lines() -> None:
    found = [f for p in sources() for f in long_functions(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))]
    assert found == []


def test_every_public_function_class_and_method_has_a_docstring() -> None:
    found = [f for p in sources() for f in undocumented(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))]
    assert found == []


def test_the_module_check_finds_a_601_line_module(tmp_path: Path) -> None:
    at_limit, over = tmp_path / "at.py", tmp_path / "over.py"
    at_limit.write_text("x = 1\n" * 600)
    over.write_text("x = 1\n" * 601)
    assert long_modules([at_limit, over]) == [f"{over}: 601 lines"]


@pytest.mark.parametrize(("body_lines", "found"), [(78, False), (79, True)])
def test_the_function_check_counts_the_def_line_and_the_decorators(body_lines: int, found: bool) -> None:
    # one decorator + the def line + the body: 80 lines with a 78-line body (at the limit), 81 with 79 (over)
    source = "@staticmethod\ndef f():\n" + "    x = 1\n" * body_lines
    assert bool(long_functions(source, "m")) is found


def test_the_docstring_check_finds_a_bare_public_method_and_skips_private_names() -> None:
    source = ('class A:\n    """A."""\n    def ok(self):\n        """Ok."""\n    def bare(self):\n        pass\n'
              "    def _private(self):\n        pass\ndef _helper():\n    pass\ndef public():\n    pass\n")
    assert undocumented(source, "m") == ["m:5 A.bare", "m:11 public"]
