"""Shared fixtures. Tests never reach the internet: litellm runs offline and talks to 127.0.0.1 only.

Public transcripts (tau-bench, SWE-agent, Letta, ...) are not part of the repository. Tests that read
them call :func:`need_shared`: when ``CONTEXT_INSPECTOR_SHARED_DATA`` names a folder they are
required (a missing file fails the test; ``.ci/run`` sets it when ``../shared`` exists); otherwise
they read ``../shared/data/transcripts`` when it is there and skip with the reason when it is not,
so a clean clone passes anywhere, with or without ``CI=true``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA_ENV = "CONTEXT_INSPECTOR_SHARED_DATA"
SHARED_REQUIRED = bool(os.environ.get(SHARED_DATA_ENV, "").strip())
"""True when the run must have the public transcripts (the variable names their folder)."""
TRANSCRIPTS = Path(os.environ[SHARED_DATA_ENV].strip()) if SHARED_REQUIRED else \
    ROOT.parent / "shared" / "data" / "transcripts"
"""The folder of public transcripts (one sub-folder per source, as in ``shared/data/transcripts``)."""
sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_configure(config: pytest.Config) -> None:
    """Required data that is not there stops the run before collection: tests parametrised over
    :func:`shared_files` would otherwise collect no case at all and pass without reading anything."""
    if SHARED_REQUIRED and not TRANSCRIPTS.is_dir():
        raise pytest.UsageError(f"{SHARED_DATA_ENV}={TRANSCRIPTS} is not a folder of public transcripts "
                                "(see README, 'Test data'; unset it to skip the tests that need them)")


def shared_files() -> list[Path]:
    """Every public transcript file (SOURCES.md aside); empty when the folder is absent."""
    if not TRANSCRIPTS.is_dir():
        return []
    return sorted(p for p in TRANSCRIPTS.rglob("*") if p.is_file() and p.suffix.lower() not in (".md", ".txt"))


def _missing_reason(target: Path) -> str:
    return (f"public transcript data not found: {target} (see README, 'Test data'; set {SHARED_DATA_ENV} "
            "to the transcripts folder to require it)")


def shared_cases() -> list[Any]:
    """:func:`shared_files` for ``parametrize``: without the folder, one case that skips with the
    reason (an empty parameter set would skip with pytest's generic "got empty parameter set")."""
    files = shared_files()
    return files or [pytest.param(None, marks=pytest.mark.skip(reason=_missing_reason(TRANSCRIPTS)))]


def need_shared(path: Path | None = None) -> Path:
    """``path`` (default: the folder) when it exists; otherwise fail when the data is required, else skip."""
    target = TRANSCRIPTS if path is None else path
    if target.exists():
        return target
    reason = _missing_reason(target)
    if SHARED_REQUIRED:
        pytest.fail(f"{SHARED_DATA_ENV} is set but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def fake_llm() -> Iterator["FakeLLM"]:  # noqa: F821
    from llm_server import FakeLLM

    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture()
def llm(fake_llm):  # noqa: ANN001, ANN201
    """The shared fake server reset to a well-behaved state for each test."""
    fake_llm.mode = "ok"
    fake_llm.requests.clear()
    fake_llm.script.clear()
    return fake_llm


TESTS = Path(__file__).resolve().parent
SLOW_PATHS = frozenset({
    "robustness", "notebooks", "app/test_app.py", "app/test_app_browser.py", "app/test_app_sessions.py",
    "package/test_typecheck.py", "package/test_startup.py", "package/test_packaging.py",
})
"""Folders and modules (relative to ``tests/``) left out of the quick subset (``make test-fast`` =
``pytest -m "not slow"``): the robustness, fuzzing and fault batteries and the executed notebooks
(whole folders), the app in AppTest and Chromium, mypy, start-up and packaging."""


def is_slow(path: Path) -> bool:
    """True for a test module in a folder or at a path listed in :data:`SLOW_PATHS`."""
    rel = path.resolve().relative_to(TESTS).as_posix()
    return rel in SLOW_PATHS or rel.split("/", 1)[0] in SLOW_PATHS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item.path):
            item.add_marker(pytest.mark.slow)
