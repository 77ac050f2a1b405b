"""Shared fixtures. Tests never reach the internet: litellm runs offline and talks to 127.0.0.1 only."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
TRANSCRIPTS = SHARED / "data" / "transcripts"
sys.path.insert(0, str(Path(__file__).resolve().parent))


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
