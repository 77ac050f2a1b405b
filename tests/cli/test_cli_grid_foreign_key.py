"""The command line refuses a grid key (or a strategy spec's parameter) that no strategy of the run
defines: exit status 2, the key named on stderr, before any replay (docs/design.md Q9)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from cli_run import run

ROOT = Path(__file__).resolve().parents[2]
COMMON = ["sample:small-window", "sample:demo_support", "--counter", "estimate"]


def test_sweep_names_the_key_no_strategy_of_the_grid_defines() -> None:
    proc = run("sweep", *COMMON, "--grid", "context_manager=[stack, sliding-window]", "--grid", "hysteresis_ratio=0,0.1")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "error: hysteresis_ratio: not a parameter of any strategy in the grid (stack, sliding-window)" in proc.stderr


def _guide_example() -> list[str]:
    """The whole-spec grid example of docs/guide.md's sweep section, as its arguments."""
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8").replace("\\\n", " ")
    line = next(ln for ln in text.splitlines() if "--grid 'context_manager={type: stack" in ln)
    return shlex.split(line.split("  #", 1)[0])[1:]


def test_sweep_rows_say_which_settings_applied() -> None:
    """The guide's example, as written: stack once (keep_turns not applicable), the window with 3 and 4."""
    args = _guide_example()
    assert args[:3] == ["sweep", "sample:small-window", "sample:demo_support"]
    proc = run(*args, "--counter", "estimate", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = [(r["strategy"], r["settings_applied"], r["settings_not_applicable"]) for r in json.loads(proc.stdout)["rows"]]
    assert rows == [
        ("stack", 'context_manager={"params": {"max_messages": 20}, "type": "stack"}', "keep_turns=[3, 4]"),
        ("sliding-window", "context_manager=sliding-window; keep_turns=3", ""),
        ("sliding-window", "context_manager=sliding-window; keep_turns=4", ""),
    ]


def test_compare_names_a_foreign_parameter_of_a_strategy_spec() -> None:
    proc = run("compare", *COMMON, "--strategy", "x={type: stack, params: {keep_turns: 4}}")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "keep_turns: not a parameter of the stack context manager (accepts: max_messages)" in proc.stderr
