"""Help that teaches, through the console script: every subcommand has a description, help on every
argument, its defaults shown and two or three examples; ``sweep --help`` lists the short grid
names; ``--format`` is the output format everywhere and a transcript format given there (or the
other way round) gets a hint."""

from __future__ import annotations

import argparse
import re

import pytest

from cli_run import DEMO, SMALL, run
from inspector.cli import build_parser
from inspector.sweep import SHORT_NAMES
from inspector.transcripts import list_formats


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    return dict(action.choices)


COMMANDS = sorted(subparsers())


def test_the_command_set() -> None:
    assert set(COMMANDS) == {"validate", "import", "replay", "compare", "sweep", "observed", "calibrate", "app",
                             "samples"}


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_a_description_and_two_or_three_examples(command: str) -> None:
    out = run(command, "--help")
    assert out.returncode == 0 and out.stderr == ""
    usage, _, rest = out.stdout.partition("\n\n")
    assert usage.startswith(f"usage: context-inspector {command}")
    description = rest.split("\n\n")[0]
    assert len(description.split()) >= 12, description
    examples = out.stdout.split("examples:\n", 1)[1].strip().splitlines()
    assert 2 <= len(examples) <= 3
    assert all(e.strip().startswith(f"context-inspector {command}") for e in examples)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_argument_has_help_and_every_default_is_shown(command: str) -> None:
    p = subparsers()[command]
    text = p.format_help()
    for action in p._actions:  # noqa: SLF001
        if isinstance(action, argparse._HelpAction):  # noqa: SLF001
            continue
        assert action.help, f"{command}: {action.dest} has no help"
        if action.option_strings and action.default not in (None, False, [], argparse.SUPPRESS):
            shown = action.default.text if hasattr(action.default, "text") else action.default
            flat = " ".join(text.split())
            assert f"default: {shown}" in flat or "(default:" in " ".join(action.help.split()), \
                f"{command}: default of {action.dest} not shown"


def test_sweep_help_lists_the_short_grid_names() -> None:
    out = run("sweep", "--help").stdout
    for short, path in SHORT_NAMES.items():
        assert re.search(rf"^\s+{re.escape(short)}\s+{re.escape(path)}$", out, re.MULTILINE), short


def test_conversation_defaults_say_what_they_select() -> None:
    flat = {c: " ".join(run(c, "--help").stdout.split()) for c in ("replay", "sweep")}
    assert "(default: 0)" in flat["replay"] and "(default: all)" in flat["sweep"]


@pytest.mark.parametrize("command", ["import", "replay", "compare", "sweep", "observed"])
def test_format_is_the_output_format_and_a_transcript_format_there_gets_a_hint(command: str) -> None:
    args = {"import": [str(DEMO)], "replay": [str(SMALL), str(DEMO)],
            "compare": [str(SMALL), str(DEMO), "--strategy", "a=stack"],
            "sweep": [str(SMALL), str(DEMO), "--grid", "keep_turns=1"], "observed": [str(SMALL), str(DEMO)]}[command]
    out = run(command, *args, "--format", "openai")
    assert out.returncode == 2 and out.stdout == ""
    assert "'openai' is a transcript format: use --transcript-format openai" in out.stderr
    assert "--format FORMAT" in run(command, "--help").stdout
    assert "--transcript-format NAME" in run(command, "--help").stdout


def test_an_output_format_given_as_the_transcript_format_gets_a_hint() -> None:
    out = run("replay", str(SMALL), str(DEMO), "--transcript-format", "csv")
    assert out.returncode == 2 and "'csv' is an output format: use --format csv" in out.stderr


def test_transcript_format_help_lists_every_format() -> None:
    flat = " ".join(run("replay", "--help").stdout.split())
    assert all(f in flat for f in list_formats())


def test_top_level_help_lists_every_command_with_examples() -> None:
    out = run("--help").stdout
    for command in COMMANDS:
        assert re.search(rf"^\s+{command}\s+\S", out, re.MULTILINE), command
    assert "examples:" in out
