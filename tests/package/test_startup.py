"""Fast start: the commands that need no live model never import litellm, model windows and prices
still come from litellm's own data, and importing the package leaves the host environment alone.

Guards the bug class "a heavy optional dependency imported at start-up" (litellm costs ~5 s) and
"a library that configures its host on import". Start-up speed itself is shown by
benchmarks/cli_startup.py, never asserted here (wall-clock times are not test material)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cli_run import DEMO, SMALL
from conftest import ROOT

DROP = ROOT / "sample_manifests" / "summarising-drop.yaml"


def imported_modules(*args: str, code: str | None = None) -> set[str]:
    """Top-level names of every module the process imported, from ``python -X importtime``."""
    env = {k: v for k, v in os.environ.items() if k not in ("LITELLM_LOCAL_MODEL_COST_MAP", "TIKTOKEN_CACHE_DIR")}
    env["PYTHONPATH"] = str(ROOT)
    cmd = [sys.executable, "-X", "importtime", *(["-c", code] if code else ["-m", "inspector", *args])]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    assert "inspector" in names  # the measurement worked
    return names


@pytest.mark.parametrize("args", [
    pytest.param(("validate", str(SMALL)), id="validate"),
    pytest.param(("replay", str(DROP), str(DEMO)), id="replay-demo-drop-json"),
    pytest.param(("replay", str(DROP), str(DEMO), "--format", "table"), id="replay-demo-drop-table"),
    pytest.param(("replay", str(SMALL), str(DEMO), "--summarizer", "drop"), id="replay-small-window-drop"),
])
def test_commands_without_a_live_model_never_import_litellm(args: tuple[str, ...]) -> None:
    names = imported_modules(*args)
    assert "litellm" not in names
    assert "streamlit" not in names and "plotly" not in names


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_a_replay_does_not_import_pandas_either(fmt: str) -> None:
    """pandas costs about half a second to import; the terminal table is built from plain rows."""
    assert "pandas" not in imported_modules("replay", str(DROP), str(DEMO), "--format", fmt)


def test_importing_the_package_changes_no_environment_variable() -> None:
    code = ("import os, json; before = dict(os.environ); import inspector, inspector.replay, inspector.cli, "
            "inspector.engine.tokens as t; t.make_counter('tiktoken').text_tokens('hello world'); "
            "print(json.dumps([before == dict(os.environ), sorted(set(os.environ) ^ set(before))]))")
    env = {k: v for k, v in os.environ.items() if k not in ("LITELLM_LOCAL_MODEL_COST_MAP", "TIKTOKEN_CACHE_DIR")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    same, changed = json.loads(proc.stdout)
    assert same, f"changed: {changed}"


def test_the_package_import_does_not_import_litellm() -> None:
    assert "litellm" not in imported_modules(code="import inspector, inspector.replay, inspector.engine.limits")


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4o-mini", "gemini-2.5-flash", "vertex_ai/gemini-2.5-flash",
                                   "claude-3-5-haiku-20241022", "openai/gpt-4o"])
def test_windows_and_prices_are_litellms_own(model: str) -> None:
    """litellm stays the source of truth: the JSON read without importing it gives the numbers
    litellm.get_model_info gives (litellm imported here, offline, as the independent reference)."""
    from inspector.engine.limits import litellm_model_info

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    ours = litellm_model_info(model)
    try:
        theirs = litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - litellm raises for names it does not know
        theirs = None
    if theirs is None:
        assert ours is None or ours.get("max_input_tokens") is not None
        return
    assert ours is not None
    for key in ("max_input_tokens", "input_cost_per_token", "output_cost_per_token"):
        assert ours.get(key) == theirs.get(key), key


def test_unknown_models_have_no_info() -> None:
    from inspector.engine.limits import litellm_model_info

    assert litellm_model_info("acme/not-a-model-xyz") is None
    assert litellm_model_info("default") is None
