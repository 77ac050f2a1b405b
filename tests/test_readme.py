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
from conftest import ROOT

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
