"""The package and the app type-check (mypy, configured in pyproject.toml): typed code stays typed."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_mypy_finds_no_errors() -> None:
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_engine_package_passes_mypy_strict() -> None:
    """The engine is the contract every face relies on, so it is held to ``--strict`` (no untyped
    defs, no implicit ``Any`` returns, no unused ignores); docs/architecture.md says so."""
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "inspector/engine"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
