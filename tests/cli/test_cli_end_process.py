"""The rule of :func:`inspector.cli.run`: a ``replay`` run as the process ends it once its output is
written and flushed (no interpreter teardown), with the same output, stderr and exit status as
:func:`inspector.cli.main` called from Python; every other path returns as before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from inspector.cli import main

DEMO = ROOT / "inspector" / "samples" / "demo_support.json"
SMALL = ROOT / "sample_manifests" / "small-window.yaml"
TEARDOWN = "teardown ran"
# the process entry, with an atexit hook that says whether the interpreter's teardown ran
ENTRY = ("import atexit, sys; atexit.register(lambda: print(%r, file=sys.stderr)); "
         "from inspector.cli import run; sys.exit(run())" % TEARDOWN)


def _as_process(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, timeout=300,
                          env=env)


def _in_python(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("fmt", ["json", "table", "csv"])
def test_a_replay_run_as_the_process_writes_what_main_writes_and_skips_the_teardown(
        fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("replay", str(SMALL), str(DEMO), "--format", fmt)
    proc = _as_process(*args)
    status, out, err = _in_python(capsys, *args)
    assert (proc.returncode, status) == (0, 0)
    assert proc.stdout == out and out.count("\n") > 5  # every byte written, flushed before the end
    assert TEARDOWN not in proc.stderr  # the process ended before the interpreter's teardown
    assert proc.stderr == err  # the settings in force, as main says them


def test_a_replay_to_a_file_run_as_the_process_writes_the_whole_file(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    proc = _as_process("replay", str(SMALL), str(DEMO), "--payloads", "-o", str(a))
    status, _, _ = _in_python(capsys, "replay", str(SMALL), str(DEMO), "--payloads", "-o", str(b))
    assert (proc.returncode, status, proc.stdout) == (0, 0, "")
    assert TEARDOWN not in proc.stderr
    assert a.read_bytes() == b.read_bytes() and a.stat().st_size > 10_000


@pytest.mark.parametrize("args, status", [
    (("validate", str(SMALL)), 0),  # another command: returns, the teardown runs
    (("replay", str(SMALL), "no-such-transcript.json"), 2),  # a replay that fails returns its status
])
def test_other_commands_and_failed_replays_return_and_the_teardown_runs(args: tuple[str, ...], status: int) -> None:
    proc = _as_process(*args)
    assert proc.returncode == status
    assert TEARDOWN in proc.stderr


def test_main_called_from_python_never_ends_the_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(SMALL), str(DEMO)]) == 0  # this test process is still here to see it
    assert capsys.readouterr().out.startswith("{")


def test_the_replay_json_keeps_each_document_it_wrote_for_the_process_end() -> None:
    """``replays_json(..., keep=kept)`` writes what :func:`~inspector.replay_document.replay_bytes`
    writes and leaves each replay document it wrote in ``kept`` (one per replay, its frames one per
    call), so a replay run as the process ends with them unfreed; without ``keep`` nothing is kept."""
    from inspector.cli.replay import replays_json
    from inspector.replay import replay
    from inspector.replay_document import replay_bytes
    from inspector.transcripts import load_transcript

    t = load_transcript(DEMO)
    rp = replay(str(SMALL), t, counter="estimate")
    kept: list[object] = []
    assert replays_json([(t, rp)], payloads=False, single=True, keep=kept) == replay_bytes(rp)
    assert len(kept) == 1 and len(kept[0]["frames"]) == len(rp.frames) > 5  # type: ignore[index]
    both = replays_json([(t, rp), (t, rp)], payloads=False, single=False, keep=kept)
    assert len(kept) == 3 and both.count(replay_bytes(rp)) == 2
