"""Output hygiene of the console script: progress only on a terminal, one-line warnings, every error
on stderr with ``error:``, one exit code for any missing input file, and terminal tables that fit
100 columns, end with a totals row, use plain words and thousands separators — each checked
against the machine-readable (CSV) output of the same run."""

from __future__ import annotations

import csv
import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from cli_run import DEMO, EXE, SMALL, run, tau_bench_file
from conftest import ROOT
from inspector.vocabulary import ACTION_WORDS, COLUMN_WORDS


@pytest.fixture(scope="module")
def tb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tau_bench_file(tmp_path_factory.mktemp("tb") / "tb6.json", 6)


# --- progress -------------------------------------------------------------------------------------

def run_with_terminal_stderr(*args: str) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (as in an interactive shell) and stdout on a pipe."""
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="100", TERM="xterm")
    cmd = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "inspector"]
    proc = subprocess.Popen([*cmd, *args], stdout=subprocess.PIPE, stderr=slave, env=env, text=False)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    out = proc.stdout.read().decode() if proc.stdout else ""
    code = proc.wait(timeout=300)
    os.close(master)
    return code, out, b"".join(chunks).decode(errors="replace")


def test_progress_is_drawn_on_a_terminal(tb: Path) -> None:
    code, out, err = run_with_terminal_stderr("sweep", str(SMALL), str(tb), "--grid", "keep_turns=1,2,3",
                                              "--processes", "1", "--summarizer", "drop", "--format", "csv")
    assert code == 0, err
    assert "sweeping" in err and "18" in err  # 6 conversations × 3 settings
    assert "\x1b[" in err  # drawn in place with terminal control sequences
    assert "sweeping" not in out and len(list(csv.DictReader(io.StringIO(out)))) == 18


@pytest.mark.parametrize(("cmd", "label"), [
    (["compare", "{m}", "{t}", "--conversation", "all", "--strategy", "a=stack", "--strategy", "b=sliding-window",
      "--format", "json"], "comparing"),
    (["replay", "{m}", "{t}", "--conversation", "all"], "replaying"),
    (["import", "{t}", "--conversation", "all"], "importing"),
])
def test_compare_replay_and_import_draw_progress_on_a_terminal(tb: Path, cmd: list[str], label: str) -> None:
    code, out, err = run_with_terminal_stderr(*[a.format(m=SMALL, t=tb) for a in cmd],
                                              *(["--counter", "estimate", "--summarizer", "drop"]
                                                if cmd[0] != "import" else []))
    assert code == 0, err
    assert label in err and "\x1b[" in err
    assert label not in out and "\x1b[" not in out  # stdout (piped) holds only the result


STATED = ["policy", "agent", "summarizer", "prompt cache"]
"""The lines a replaying command writes on stderr to say what was in force, in this order (a command
may leave some out: a sweep states no agent)."""


@pytest.mark.parametrize("cmd", [
    ["sweep", "{m}", "{t}", "--grid", "keep_turns=1,2", "--processes", "1", "--summarizer", "drop"],
    ["compare", "{m}", "{t}", "--conversation", "all", "--strategy", "a=stack", "--strategy", "b=sliding-window",
     "--summarizer", "drop"],
    ["replay", "{m}", "{t}", "--conversation", "all", "--summarizer", "drop"],
])
def test_nothing_is_drawn_when_piped(tb: Path, cmd: list[str]) -> None:
    out = run(*[a.format(m=SMALL, t=tb) for a in cmd], "--counter", "estimate")
    assert out.returncode == 0 and "\x1b[" not in out.stderr and "\r" not in out.stderr
    # piped, stderr holds only the plain statement of what was in force (policy, agent, summarizer, cache rule)
    labels = [line.split(":")[0] for line in out.stderr.splitlines()]
    assert labels and labels == [s for s in STATED if s in labels]


# --- warnings and errors --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_a_payload_failing_the_provider_check_is_said_in_every_format(fmt: str, tmp_path: Path) -> None:
    """Q19 through the console script: a row with a role no provider accepts is sent as recorded, and
    the check's reason (naming the role) reaches the user even where the table has no check column."""
    path = tmp_path / "wizard.json"
    path.write_text('[{"role": "user", "content": "u"}, {"role": "wizard", "content": "abracadabra"}, '
                    '{"role": "assistant", "content": "ok"}]')
    out = run("replay", str(path), "--counter", "estimate", "--summarizer", "drop", "--format", fmt)
    assert out.returncode == 0, out.stderr
    warned = [line for line in out.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warned) == 1 and "wizard.json conversation 0: 1 call(s) fail the provider check" in warned[0]
    assert "'wizard'" in warned[0]
    # the agent line says plainly that no model is named (it used to read "model (none) (none (...))")
    assert "· model none (neither the manifest nor the transcript names one) ·" in out.stderr


def test_a_warning_is_one_clean_line(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("kind: Agent\nspec:\n  models: [{id: main, model: acme/unknown-model-xyz}]\n"
                        "  context_manager: {type: summarising, params: {summarizer: drop}}\n")
    out = run("replay", str(manifest), str(DEMO), "--counter", "estimate")
    assert out.returncode == 0
    lines = [line for line in out.stderr.splitlines() if line.split(":")[0] not in STATED]
    assert lines == ["warning: no context window known for model 'acme/unknown-model-xyz': using 128000"]


def test_manifest_errors_of_replay_go_to_stderr_not_into_the_json(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("kind: Agent\nspec:\n  context_manager: slidingwindow\n")
    target = tmp_path / "out.json"
    out = run("replay", str(manifest), str(DEMO))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith(f"error: {manifest}:3: spec.context_manager: ")
    redirected = run("replay", str(manifest), str(DEMO), "-o", str(target))
    assert redirected.returncode == 1 and not target.exists()


@pytest.mark.parametrize("command", ["replay", "compare", "observed", "sweep"])
def test_a_missing_manifest_and_a_missing_transcript_exit_alike(command: str, tmp_path: Path) -> None:
    extra = {"compare": ["--strategy", "a=stack"], "sweep": ["--grid", "keep_turns=1"]}.get(command, [])
    no_manifest = run(command, str(tmp_path / "nope.yaml"), str(DEMO), *extra)
    no_transcript = run(command, str(SMALL), str(tmp_path / "nope.json"), *extra)
    assert no_manifest.returncode == no_transcript.returncode == 2
    for out, name in ((no_manifest, "nope.yaml"), (no_transcript, "nope.json")):
        assert out.stdout == "" and out.stderr.startswith("error: ") and name in out.stderr
        assert len(out.stderr.splitlines()) == 1


def test_every_error_line_starts_with_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    cases = [run("import", str(bad)), run("replay", str(SMALL), str(bad)),
             run("compare", str(SMALL), str(DEMO), "--strategy", "a=stack", "--strategy", "a=stack"),
             run("sweep", str(SMALL), str(DEMO), "--grid", "keep_turns")]
    for out in cases:
        assert out.returncode in (1, 2) and out.stderr.startswith("error: "), out.stderr
        assert out.stdout == ""


# --- tables ---------------------------------------------------------------------------------------

def csv_and_table(*args: str) -> tuple[list[dict[str, str]], list[str]]:
    c = run(*args, "--format", "csv")
    t = run(*args, "--format", "table")
    assert c.returncode == t.returncode == 0, c.stderr + t.stderr
    return list(csv.DictReader(io.StringIO(c.stdout))), t.stdout.splitlines()


REPLAY = ("replay", str(SMALL), str(DEMO), "--summarizer", "drop", "--counter", "estimate")


def test_tables_fit_100_columns_and_wide_shows_more() -> None:
    _, lines = csv_and_table(*REPLAY)
    assert max(len(line) for line in lines) <= 100
    wide = run(*REPLAY, "--format", "table", "--wide").stdout.splitlines()
    assert max(len(line) for line in wide) > 100
    end = next(i for i, line in enumerate(wide) if line.split()[:1] == ["call"])
    header_words = " ".join(wide[1:end + 1])  # a heading wraps over as many lines as its longest needs
    for key in ("system", "tool_schemas", "input_budget", "cost_usd"):
        word = COLUMN_WORDS[key].split()[0]
        assert word in header_words


def test_the_totals_row_sums_the_calls() -> None:
    rows, lines = csv_and_table(*REPLAY)
    total = next(line for line in lines if line.lstrip().startswith("total")).split()
    # a transcript ending without a reply (the demo ends on a tool result): its last row is the pending
    # next call, shown (starred, with a note) but not counted
    pending = [k for k, r in enumerate(rows) if r["pending"] == "True"]
    assert pending in ([], [len(rows) - 1])
    for k in pending:
        assert any(line.startswith(f"{k}* ") for line in lines)
        assert any(line.startswith(f"* call {k} (next call, never made): ") for line in lines)
    rows = [r for r in rows if r["pending"] == "False"]
    # default columns: call, turn, tokens sent, kept history, headroom, context manager, trimmed,
    # repairs, forgotten, check; the totals row: sum, largest, least, sum, sum (blank where a total means nothing)
    expected = ["total", sum(int(r["payload_tokens"]) for r in rows), max(int(r["history"]) for r in rows),
                min(int(r["headroom"]) for r in rows), sum(int(r["trimmed"]) for r in rows),
                sum(int(r["repairs"]) for r in rows), sum(int(r["forgotten"]) for r in rows)]
    assert total == [expected[0], *(f"{v:,}" for v in expected[1:])]


def test_numbers_have_thousands_separators_and_actions_plain_words() -> None:
    rows, lines = csv_and_table(*REPLAY)
    end = next(i for i, line in enumerate(lines) if line.startswith("total"))
    body = lines[end - len(rows): end]  # the call rows, before the totals row
    for r, line in zip(rows, body, strict=True):
        assert f"{int(r['payload_tokens']):,}" in line
        assert ACTION_WORDS[r["cm_action"]] in line and r["cm_action"] not in line
    assert any(int(r["payload_tokens"]) >= 1000 for r in rows)


def test_every_action_has_plain_words() -> None:
    from inspector.vocabulary import cm_actions

    assert set(cm_actions()) == set(ACTION_WORDS)
    assert all("-" not in words for words in ACTION_WORDS.values())


@pytest.mark.parametrize("args", [(), ("replay",), ("sweep", str(SMALL), str(DEMO)),
                                  ("replay", str(SMALL), str(DEMO), "--counter", "bpe")])
def test_usage_errors_say_the_hint_first_then_one_usage_line(args: tuple[str, ...]) -> None:
    out = run(*args)
    lines = out.stderr.splitlines()
    assert out.returncode == 2 and out.stdout == ""
    assert len(lines) == 2 and lines[0].startswith("error: ") and lines[1].startswith("usage: context-inspector")
    assert lines[1].endswith("--help says more)")


def test_a_table_too_wide_leaves_columns_out_and_says_so_never_cuts_a_number() -> None:
    from inspector.cli.output import TABLE_WIDTH, Column, render_table

    columns = [Column(f"metric_{i}", "sum") for i in range(20)]
    rows = [{c.key: 1_234_567 + i for i, c in enumerate(columns)} for _ in range(3)]
    text = render_table(rows, columns)
    lines = text.splitlines()
    assert all(len(line) <= TABLE_WIDTH for line in lines)
    start = next(i for i, line in enumerate(lines) if line.startswith("(not shown, too wide: "))
    note = " ".join(lines[start:])
    assert note.endswith("--wide shows every column)")
    hidden = note.split(": ", 1)[1].split(";")[0].split(", ")
    shown = [c for c in columns if c.key.replace("_", " ") not in hidden]
    assert 0 < len(shown) < len(columns)
    row = lines[1].split()
    assert row == [f"{1_234_567 + columns.index(c):,}" for c in shown]  # every shown number is whole
