"""Start-up of the command line: how long a command takes before and including its work.

Measures, in one run on this machine (median of N runs each, wall clock of a fresh process):

- ``python -c pass``                      the interpreter alone (the floor)
- ``python -c "import litellm"``          what every command used to pay first
- ``context-inspector validate``          a sample manifest
- ``context-inspector replay`` (JSON)     the bundled 24-message demo, ``drop`` summarizer
- ``context-inspector replay`` (table)    the same, as a terminal table (pandas + rich)

and checks with ``python -X importtime`` that the three commands import no litellm. Prints the
figures and their ratios to the interpreter floor (ratios hold up better than seconds on a shared
machine). Run: ``python benchmarks/cli_startup.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import os
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
    e = {k: v for k, v in os.environ.items() if k not in ("LITELLM_LOCAL_MODEL_COST_MAP", "TIKTOKEN_CACHE_DIR")}
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    e["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # the litellm import line must stay offline too
    return e


CASES: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import litellm'": [sys.executable, "-c", "import litellm"],
    "validate": [sys.executable, "-m", "inspector", "validate", str(SMALL)],
    "replay demo, drop, JSON": [sys.executable, "-m", "inspector", "replay", str(DROP), str(DEMO)],
    "replay demo, drop, table": [sys.executable, "-m", "inspector", "replay", str(DROP), str(DEMO), "--format", "table"],
}
CHECKED = ("validate", "replay demo, drop, JSON", "replay demo, drop, table")


def wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env(), cwd=ROOT, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def imports_litellm(cmd: list[str]) -> bool:
    proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, text=True, env=env(), cwd=ROOT)
    return any(line.rsplit("|", 1)[-1].strip().split(".")[0] == "litellm"
               for line in proc.stderr.splitlines() if line.startswith("import time:"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="runs per command (the median is shown)")
    runs = ap.parse_args().runs
    figures = {name: wall(cmd, runs) for name, cmd in CASES.items()}
    floor = figures["python -c pass"]
    print(f"median of {runs} runs, fresh process each, {os.cpu_count()} CPU(s)")
    print(f"{'command':<30} {'seconds':>8} {'× python':>9}  imports litellm")
    for name, seconds in figures.items():
        flag = ("yes" if imports_litellm(CASES[name]) else "no") if name in CHECKED else ""
        print(f"{name:<30} {seconds:>8.2f} {seconds / floor:>9.1f}  {flag}")
    worst = max(figures[n] for n in CHECKED)
    print(f"slowest checked command: {worst:.2f} s (target < 1 s); "
          f"import litellm alone: {figures[next(iter(n for n in CASES if 'litellm' in n))]:.2f} s")


if __name__ == "__main__":
    main()
