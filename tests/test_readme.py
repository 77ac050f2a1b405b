"""The README's examples run as written: every ``context-inspector`` line of its CLI section through the
console script, and its live-loop snippet through real litellm against the local test server."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cli_run import run
from conftest import ROOT, TRANSCRIPTS, need_shared

README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def code_blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.DOTALL)


CLI_LINES = [line for block in code_blocks(section("CLI"), "bash") for line in block.splitlines()
             if line.startswith("context-inspector ")]


def test_the_cli_section_has_an_example_per_command() -> None:
    commands = {shlex.split(line)[1] for line in CLI_LINES}
    assert commands == {"validate", "import", "replay", "compare", "sweep", "calibrate", "app"}


@pytest.mark.parametrize("line", CLI_LINES, ids=[" ".join(shlex.split(x)[1:2]) + f"-{i}" for i, x in
                                                 enumerate(CLI_LINES)])
def test_cli_examples_run_as_written(line: str, tmp_path: Path) -> None:
    args = shlex.split(line)[1:]
    args = [str(ROOT / a) if (ROOT / a).exists() and "/" in a else a for a in args]  # run from anywhere
    out = run(*args, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout or any(p.is_file() for p in tmp_path.iterdir())


# --- every other shell example of the README: run, or skipped with the reason it cannot run here -----

def shell_examples() -> list[str]:
    """Every command of every ``bash`` block in the README (continuation lines joined, comments cut)."""
    out: list[str] = []
    for block in code_blocks(README, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("  #", 1)[0].strip()
            if command:
                out.append(" ".join(command.split()))
    return out


NOT_RUN_HERE = {  # (a test of what the line shows, reason it is not run as written)
    "make run": "starts the Streamlit server and blocks; the app is started the same way by tests/test_packaging.py",
    "make test": "is this very test suite",
    "--dask": "names your own agent.yaml and sessions and a Dask cluster; tests/test_fleet.py runs sweep and "
              "compare with --dask on a 2-worker LocalCluster",
}


@pytest.mark.parametrize("line", shell_examples())
def test_every_shell_example_is_run_or_says_why_not(line: str) -> None:
    if line in {" ".join(x.split()) for x in CLI_LINES}:
        return  # run by test_cli_examples_run_as_written
    reason = next((why for key, why in NOT_RUN_HERE.items() if line.startswith(key) or f" {key} " in line), None)
    assert reason is not None, f"README example neither run by a test nor skipped with a reason: {line}"
    pytest.skip(f"{line.split()[0]} {line.split()[1]}: {reason}")


def shown_sessions() -> list[tuple[str, list[str]]]:
    """The ``$ context-inspector ...`` lines of the CLI section's ``text`` blocks and the lines shown
    under each (what the command prints on stderr)."""
    out: list[tuple[str, list[str]]] = []
    for block in code_blocks(section("CLI"), "text"):
        for line in block.splitlines():
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out and line.strip():
                out[-1][1].append(line)
    return out


@pytest.mark.parametrize(("command", "shown"), shown_sessions(), ids=lambda v: v if isinstance(v, str) else "")
def test_shown_output_is_what_the_command_prints(command: str, shown: list[str]) -> None:
    """The README's transcript of a session is current: each line it shows is a line the command
    prints on stderr today (the table on stdout is not shown)."""
    args = shlex.split(command)[1:]
    for a in args:
        if a.startswith("../shared/"):
            need_shared(TRANSCRIPTS / a.removeprefix("../shared/data/transcripts/"))
    args = [str(TRANSCRIPTS / a.removeprefix("../shared/data/transcripts/")) if a.startswith("../shared/") else
            str(ROOT / a) if (ROOT / a).exists() else a for a in args]
    out = run(*args)
    assert out.returncode == 0, out.stderr
    assert shown and all(line in out.stderr.splitlines() for line in shown), out.stderr


def test_the_live_loop_snippet_runs(llm, tmp_path: Path) -> None:  # noqa: ANN001
    (snippet,) = [b for b in code_blocks(section("Live use: the engine in a real agent loop"), "python")
                  if "litellm.completion" in b]
    tool_name = "lookup_order"
    llm.script = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": tool_name, "arguments": "{\"id\": 7}"}}]},
        {"role": "assistant", "content": "Order 7 ships tomorrow."}]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENAI_API_BASE=llm.api_base, OPENAI_BASE_URL=llm.api_base,
               OPENAI_API_KEY="test-key", LITELLM_LOCAL_MODEL_COST_MAP="True")
    script = tmp_path / "loop.py"
    script.write_text(snippet + "\nprint('calls', len(engine.conversation.committed_messages))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert len(llm.requests) == 2  # the tool call, then the answer
    second = llm.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and tool_name in second[-1]["content"]


def test_the_live_loop_snippet_names_only_fields_the_call_record_has() -> None:
    """The snippet's comments name the record's fields (``call.bands``, ``call.decision``…): each
    must be one an :class:`Assembly` has (``call.cm`` was renamed ``call.decision`` and the README
    kept the old name)."""
    from inspector.engine.assembler import Assembly

    (snippet,) = [b for b in code_blocks(section("Live use: the engine in a real agent loop"), "python")
                  if "litellm.completion" in b]
    named = set(re.findall(r"\bcall\.([a-z_]+)", snippet))
    assert {"bands", "decision", "trimmed", "repairs", "messages", "tools"} <= named
    fields = set(Assembly.__dataclass_fields__) | {n for n in dir(Assembly) if not n.startswith("_")}
    assert named <= fields, named - fields
