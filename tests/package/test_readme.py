"""The README's and the docs' examples run as written: every ``context-inspector`` line of the README's
CLI section through the console script, every other shell example of README.md and docs/*.md run or
skipped with the reason, the sessions the user guide shows checked against what the commands print,
and the guide's live-loop snippet through real litellm against the local test server."""

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
GUIDE = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
DOCUMENTS = {"README.md": README, **{f"docs/{p.name}": p.read_text(encoding="utf-8")
                                     for p in sorted((ROOT / "docs").glob("*.md"))}}


def section(title: str, text: str = README) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def code_blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.DOTALL)


CLI_LINES = [line for block in code_blocks(section("CLI"), "bash") for line in block.splitlines()
             if line.startswith("context-inspector ")]


def test_the_cli_section_has_an_example_per_command() -> None:
    commands = {shlex.split(line)[1] for line in CLI_LINES}
    assert commands == {"samples", "validate", "import", "replay", "compare", "sweep", "observed", "calibrate", "app"}


def test_cli_examples_run_as_written_in_order_from_an_empty_folder(tmp_path: Path) -> None:
    """One folder for the whole block, as a reader types it (``samples copy`` makes the file that
    ``validate`` then reads); no checkout path: the samples are named ``sample:NAME``."""
    assert not any("sample_manifests/" in line or "inspector/samples/" in line for line in CLI_LINES)
    for line in CLI_LINES:
        before = set(tmp_path.iterdir())
        out = run(*shlex.split(line)[1:], cwd=tmp_path)
        assert out.returncode == 0, (line, out.stderr)
        assert out.stdout or set(tmp_path.iterdir()) - before, line


ONE_MINUTE = [" ".join(line.split("  #", 1)[0].split())
              for block in code_blocks(section("Your own transcript in one minute"), "bash")
              for line in block.splitlines() if line.startswith("context-inspector ")]


def test_your_own_transcript_in_one_minute_runs_on_a_session_of_your_own(tmp_path: Path) -> None:
    """The README's first steps, on a Claude Code session and a manifest copied out of the samples as
    a user's own files (the app with ``--dry-run``: it would block)."""
    assert {shlex.split(line)[1] for line in ONE_MINUTE} == {"replay", "compare", "app"}
    for copy in (["demo_session.claude-code", "my-session.jsonl"], ["small-window", "my-agent.yaml"]):
        assert run("samples", "copy", *copy, cwd=tmp_path).returncode == 0
    for line in ONE_MINUTE:
        args = shlex.split(line)[1:] + (["--dry-run"] if shlex.split(line)[1] == "app" else [])
        out = run(*args, cwd=tmp_path)
        assert out.returncode == 0 and out.stdout, (line, out.stderr)
        assert "my-session.jsonl" in out.stdout or "total" in out.stdout, line


# --- every other shell example of the README: run, or skipped with the reason it cannot run here -----

def shell_examples() -> list[str]:
    """Every command of every ``bash`` block in the README and docs/*.md (continuation lines joined,
    comments cut)."""
    out: list[str] = []
    for block in (b for text in DOCUMENTS.values() for b in code_blocks(text, "bash")):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("  #", 1)[0].strip()
            if command:
                out.append(" ".join(command.split()))
    return out


NOT_RUN_HERE = {  # (a test of what the line shows, reason it is not run as written)
    "make run": "starts the Streamlit server and blocks; the app is started the same way by tests/package/test_packaging.py",
    "make test": "is this very test suite",
    "--dask": "names your own agent.yaml and sessions and a Dask cluster; tests/analysis/test_fleet.py runs sweep and "
              "compare with --dask on a 2-worker LocalCluster",
    "--grid context_manager=sliding-window": "the guide's whole-spec grid: tests/cli/test_cli_grid_foreign_key.py runs "
                                             "it as written, with --format json, and checks its three rows",
}


@pytest.mark.parametrize("line", shell_examples())
def test_every_shell_example_is_run_or_says_why_not(line: str) -> None:
    if line in {" ".join(x.split()) for x in CLI_LINES} | set(ONE_MINUTE):
        return  # run by test_cli_examples_run_as_written or test_your_own_transcript_in_one_minute
    reason = next((why for key, why in NOT_RUN_HERE.items()
                   if line.startswith(key) or f" {key} " in line or line.endswith(f" {key}")), None)
    assert reason is not None, f"example neither run by a test nor skipped with a reason: {line}"
    pytest.skip(f"{line.split()[0]} {line.split()[1]}: {reason}")


def shown_sessions() -> list[tuple[str, list[str]]]:
    """The ``$ context-inspector ...`` lines of the ``text`` blocks of the user guide's CLI section and
    the lines shown under each (what the command prints on stderr)."""
    out: list[tuple[str, list[str]]] = []
    for block in code_blocks(section("The CLI in depth", GUIDE), "text"):
        for line in block.splitlines():
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out and line.strip():
                out[-1][1].append(line)
    return out


def test_the_guide_shows_the_two_sessions() -> None:
    assert [c.split()[1] for c, _ in shown_sessions()] == ["replay", "replay"]


@pytest.mark.parametrize(("command", "shown"), shown_sessions(), ids=lambda v: v if isinstance(v, str) else "")
def test_shown_output_is_what_the_command_prints(command: str, shown: list[str]) -> None:
    """The guide's transcript of a session is current: each line it shows is a line the command
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
    (snippet,) = [b for b in code_blocks(section("Live use: the engine in a real agent loop", GUIDE), "python")
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
    from inspector.engine import Assembly

    (snippet,) = [b for b in code_blocks(section("Live use: the engine in a real agent loop", GUIDE), "python")
                  if "litellm.completion" in b]
    named = set(re.findall(r"\bcall\.([a-z_]+)", snippet))
    assert {"bands", "decision", "trimmed", "repairs", "messages", "tools"} <= named
    fields = set(Assembly.__dataclass_fields__) | {n for n in dir(Assembly) if not n.startswith("_")}
    assert named <= fields, named - fields
