"""Run the real console script in a subprocess (the way users run it), and small test inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import ROOT

EXE = Path(sys.executable).with_name("context-inspector")
DEMO = ROOT / "inspector" / "samples" / "demo_support.json"
SMALL = ROOT / "sample_manifests" / "small-window.yaml"


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``context-inspector ARGS`` with this checkout first on the path; never a traceback."""
    cmd = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "inspector"]
    full_env = dict(os.environ if env is None else env)
    full_env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [full_env.get("PYTHONPATH")])])
    proc = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=full_env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def tau_bench_file(path: Path, episodes: int, *, long_from: int | None = None) -> Path:
    """A multi-conversation tau-bench file: episode k has k + 2 user turns; from episode
    ``long_from`` on, the last question is so long (pinned: the current user turn is never cut)
    that a 4 000-token window goes over budget."""
    out: list[dict[str, Any]] = []
    for k in range(episodes):
        traj: list[dict[str, Any]] = [{"role": "system", "content": "You are an airline agent."}]
        huge = long_from is not None and k >= long_from
        for i in range(k + 2):
            q = f"episode {k} question {i}"
            if huge and i == k + 1:
                q += " " + " ".join(f"detail{j}" for j in range(5000))
            traj += [{"role": "user", "content": q}, {"role": "assistant", "content": f"episode {k} answer {i}"}]
        out.append({"task_id": k, "trial": 0, "reward": 1.0, "traj": traj})
    path.write_text(json.dumps(out))
    return path
