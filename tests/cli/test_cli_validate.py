"""``context-inspector validate`` through a real subprocess: exit 0 (OK on stdout, warnings on
stderr), 1 (one 'error: FILE:LINE: field.path: message' line per error on stderr), 2 (unusable file
or usage error), and never a traceback for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_manifests"
SCRIPT = Path(sys.executable).parent / "context-inspector"


def run(*args: str, via: str = "module") -> subprocess.CompletedProcess[str]:
    cmd = [str(SCRIPT), *args] if via == "script" else [sys.executable, "-m", "inspector", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    return proc


@pytest.mark.parametrize("via", ["module", pytest.param("script", marks=pytest.mark.skipif(
    not SCRIPT.exists(), reason="console script not installed"))])
def test_valid_sample_prints_ok_and_exits_0(via: str) -> None:
    proc = run("validate", str(SAMPLES / "default.yaml"), via=via)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "OK\n", "")


def test_warnings_follow_ok_with_prefix(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("kind: Agent\nspec:\n  budget: {max_llm_calls: 3}\n  context_manager:\n"
                    "    params: {working_memory_messages: 20}\n")
    proc = run("validate", str(path))
    assert proc.returncode == 0
    assert proc.stdout == "OK\n"
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f"warning: {path}:3: spec.budget: ")
    assert lines[1].startswith(f"warning: {path}:5: spec.context_manager.params.working_memory_messages: ")


def test_errors_print_one_located_line_each_and_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("kind: Agent\nspec:\n  context_manager:\n    type: stack\n    params:\n"
                    "      keep_turns: 3\n      max_messages: 0\n")
    proc = run("validate", str(path))
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"error: {path}:6: spec.context_manager.params.keep_turns: not a parameter of the stack context manager "
        "(accepts: max_messages)",
        f"error: {path}:7: spec.context_manager.params.max_messages: Input should be greater than or equal to 1 "
        "(got integer 0)",
    ]


def test_malformed_context_manager_exits_1_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("kind: Agent\nspec:\n  context_manager: 42\n")
    proc = run("validate", str(path))
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: {path}:3: spec.context_manager: ")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        pytest.param("spec:\n  a: [1, 2\n", ":3: invalid YAML", id="yaml-syntax-with-line"),
        pytest.param(b"spec: caf\xe9\n", ":1: file is not valid UTF-8: byte 0xe9 at offset 9", id="not-utf8"),
        pytest.param(b"x: " + b"a" * (5 * 1024 * 1024 + 1), ": file is too large", id="too-large"),
        pytest.param("a: &a [*a]\n", "recursive alias", id="recursive-alias"),
    ],
)
def test_unusable_file_exits_2_naming_the_file(tmp_path: Path, content: str | bytes, fragment: str) -> None:
    path = tmp_path / "agent.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    proc = run("validate", str(path))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {path}") and fragment in proc.stderr
    assert proc.stdout == ""


def test_missing_file_exits_2(tmp_path: Path) -> None:
    proc = run("validate", str(tmp_path / "nope.yaml"))
    assert proc.returncode == 2 and f"{tmp_path / 'nope.yaml'}: cannot read" in proc.stderr


@pytest.mark.parametrize("content", ["", "- a\n"])
def test_empty_or_non_mapping_file_is_invalid_content_exit_1(tmp_path: Path, content: str) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(content)
    assert run("validate", str(path)).returncode == 1


@pytest.mark.parametrize(
    "args",
    [
        (),  # no command
        ("frobnicate",),  # unknown command
        ("validate",),  # missing FILE
        ("validate", "x.yaml", "--set", "no-equals-sign"),
        ("validate", "x.yaml", "--bogus"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    proc = run(*args)
    assert proc.returncode == 2 and "usage:" in proc.stderr


def test_set_override_and_show(tmp_path: Path) -> None:
    sample = str(SAMPLES / "stack.yaml")
    bad = run("validate", sample, "--set", "spec.context_manager.params.keep_turns=3")
    assert bad.returncode == 1 and "spec.context_manager.params.keep_turns" in bad.stderr
    good = run("validate", sample, "--set", "spec.context_manager.params.max_messages=7", "--show")
    assert good.returncode == 0
    first, _, rest = good.stdout.partition("\n")
    assert first == "OK"
    shown = json.loads(rest)
    assert shown["context_manager"]["params"] == {"max_messages": 7}


def test_main_returns_exit_codes_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert main(["validate"]) == 2
    assert main(["validate", str(SAMPLES / "stack.yaml")]) == 0
    assert capsys.readouterr().out.endswith("OK\n")


def test_parser_has_one_handler_per_subcommand() -> None:
    parser = build_parser()
    args = parser.parse_args(["validate", "f.yaml"])
    assert args.command == "validate" and callable(args.handler)
