"""The benchmarks run: ``benchmarks/strategies.py --quick`` prints one table per input with a row for
every context manager the registry holds, and the figures obey the rules that hold whatever the code's
numbers are (timings are never asserted: wall clock is not test material)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT

from inspector.plugins import default_registry


def tables(out: str) -> dict[str, list[dict[str, str]]]:
    """The markdown tables of the benchmark's output, by the ``### title`` above each, as rows of
    ``{column: cell}``."""
    found: dict[str, list[dict[str, str]]] = {}
    title, head = "", None
    for line in out.splitlines():
        if line.startswith("### "):
            title, head = line[4:], None
            found[title] = []
        elif line.startswith("|") and title:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if head is None:
                head = cells
            elif not set(line) <= set("|-"):
                found[title].append(dict(zip(head, cells, strict=True)))
    return found


def test_strategies_benchmark_has_a_row_per_registered_strategy_and_stack_sends_the_most() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "strategies.py"), "--quick"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "load average" in proc.stdout
    found = tables(proc.stdout)
    assert len(found) == 2, proc.stdout  # the agent transcript and the one-turn run
    registered = [spec.name for spec in default_registry().specs("context_manager")]
    for title, rows in found.items():
        assert [r["strategy"] for r in rows] == registered, title
        sent = {r["strategy"]: int(r["tokens sent"].replace(",", "")) for r in rows}
        # an uncapped stack keeps every row the budget allows: no strategy sends more
        assert all(sent["stack"] >= n for n in sent.values()), (title, sent)
