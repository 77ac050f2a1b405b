"""Start-up of the command line: how long a command takes before and including its work.

Measures, in one run on this machine (median of N runs each, wall clock of a fresh process):

- ``python -c pass``                      the interpreter alone (the floor)
- ``python -c "import litellm"``          what every command used to pay first
- ``context-inspector validate``          a sample manifest
- ``context-inspector replay`` (JSON)     the bundled 24-message demo, ``drop`` summarizer
- ``context-inspector replay`` (table)    the same, as a terminal table (rich; no pandas)
- ``context-inspector replay`` (estimate) the JSON replay with ``--counter estimate``: the
                                          difference to the JSON line is tiktoken building its
                                          encoding (once per process)

and checks with ``python -X importtime`` that the checked commands import no litellm (and whether
they import pandas). Prints wall-clock and CPU seconds (user + system of the child process, which a
busy shared machine inflates far less than wall-clock) and their ratios to the interpreter floor.
Run: ``python benchmarks/cli_startup.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "inspector" / "samples" / "demo_support.json"
DROP = ROOT / "sample_manifests" / "summarising-drop.yaml"
SMALL = ROOT / "sample_manifests" / "small-window.yaml"


def env() -> dict[str, str]:
    """The user's situation: bytecode is cached (as after ``pip install``; a PYTHONDONTWRITEBYTECODE
    in the calling shell would make every run compile the package from source), offline defaults
    left to the CLI."""
    drop = ("LITELLM_LOCAL_MODEL_COST_MAP", "TIKTOKEN_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")
    e = {k: v for k, v in os.environ.items() if k not in drop}
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    e["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # the litellm import line must stay offline too
    return e


CASES: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import litellm'": [sys.executable, "-c", "import litellm"],
    "validate": [sys.executable, "-m", "inspector", "validate", str(SMALL)],
    "replay demo, drop, JSON": [sys.executable, "-m", "inspector", "replay", str(DROP), str(DEMO)],
    "replay demo, drop, table": [sys.executable, "-m", "inspector", "replay", str(DROP), str(DEMO), "--format", "table"],
    "replay demo, drop, estimate": [sys.executable, "-m", "inspector", "replay", str(DROP), str(DEMO),
                                    "--counter", "estimate"],
}
CHECKED = ("validate", "replay demo, drop, JSON", "replay demo, drop, table", "replay demo, drop, estimate")


def measure(cmd: list[str], runs: int) -> tuple[float, float]:
    """Median wall-clock and median CPU seconds (user + system) of ``runs`` fresh processes."""
    walls, cpus = [], []
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env(), cwd=ROOT, check=True)  # warm-up: writes bytecode
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env(), cwd=ROOT, check=True)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def imported(cmd: list[str]) -> set[str]:
    """Top-level names of the modules ``cmd`` imports (``python -X importtime``)."""
    proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, text=True, env=env(), cwd=ROOT)
    return {line.rsplit("|", 1)[-1].strip().split(".")[0]
            for line in proc.stderr.splitlines() if line.startswith("import time:")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="runs per command (the median is shown)")
    runs = ap.parse_args().runs
    figures = {name: measure(cmd, runs) for name, cmd in CASES.items()}
    floor_wall, floor_cpu = figures["python -c pass"]
    print(f"median of {runs} runs, fresh process each, {os.cpu_count()} CPU(s), "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{'command':<30} {'wall s':>7} {'× python':>9} {'CPU s':>6} {'× python':>9}  litellm  pandas")
    for name, (seconds, cpu) in figures.items():
        mods = imported(CASES[name]) if name in CHECKED else set()
        flags = (f"{'yes' if 'litellm' in mods else 'no':<7}  {'yes' if 'pandas' in mods else 'no'}"
                 if name in CHECKED else "")
        print(f"{name:<30} {seconds:>7.2f} {seconds / floor_wall:>9.1f} {cpu:>6.2f} {cpu / max(floor_cpu, 1e-3):>9.1f}  {flags}")
    worst = max(figures[n][0] for n in CHECKED)
    tiktoken = figures["replay demo, drop, JSON"][1] - figures["replay demo, drop, estimate"][1]
    print(f"slowest checked command: {worst:.2f} s wall (target < 1 s); tiktoken's encoding build "
          f"≈ {tiktoken:.2f} CPU s of the JSON replay; import litellm alone: "
          f"{figures[next(iter(n for n in CASES if 'litellm' in n))][0]:.2f} s")


if __name__ == "__main__":
    main()
