"""The package and the app type-check (mypy, configured in pyproject.toml): typed code stays typed."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_mypy_finds_no_errors() -> None:
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
