"""The end-to-end benchmark's same-mix context halves exactly the parameters counted in tokens.

Rule (benchmarks/end_to_end.py :func:`half_scale`): every parameter whose params model counts it in
tokens (``unit_of(...) == "tokens"``) is halved (floor), written or default; a zero or unset one stays;
parameters counted in anything else (turns, events, a fraction of the window) stay as they are.
Bug class: a same-mix run whose trigger is not scaled with its window, which would compare two
different mixes of decisions again.
"""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import end_to_end  # noqa: E402


def test_a_default_trigger_is_halved_and_a_zero_amount_stays() -> None:
    assert end_to_end.half_scale({"type": "clear-tool-results"}) == {
        "type": "clear-tool-results", "params": {"trigger": 50_000}}  # clear_at_least 0 stays


def test_an_odd_written_trigger_is_halved_down_and_the_other_parameters_stay() -> None:
    cm = {"type": "clear-tool-results", "params": {"trigger": 30_001, "keep": 5, "exclude_tools": ["grep"]}}
    assert end_to_end.half_scale(cm)["params"] == {"trigger": 15_000, "keep": 5, "exclude_tools": ["grep"]}


def test_parameters_in_turns_events_or_a_fraction_of_the_window_stay() -> None:
    for cm in ({"type": "summarising", "params": {"keep_turns": 10, "summarizer": "drop"}},
               {"type": "observation-masking"},
               {"type": "auto-compact", "params": {"threshold_ratio": 0.8}}):
        assert end_to_end.half_scale(cm) == cm


def test_a_written_token_amount_of_auto_compact_is_halved() -> None:
    cm = {"type": "auto-compact", "params": {"threshold_tokens": 90_001, "keep_user_tokens": 20_000}}
    assert end_to_end.half_scale(cm)["params"] == {"threshold_tokens": 45_000, "keep_user_tokens": 10_000}


def test_the_cli_rounds_run_with_bytecode_cached_as_after_pip_install(monkeypatch) -> None:
    """Rule (benchmarks/end_to_end.py :func:`cli`): the timed ``context-inspector`` children run in
    :func:`cli_startup.env`, which drops a caller's PYTHONDONTWRITEBYTECODE (users' installs hold
    bytecode; compiling the package at every start-up only widens the start-up subtracted) and keeps
    the checkout first on the path. Checked on the commands the child is given: each gets that env."""
    seen: list[dict[str, str]] = []
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setattr(end_to_end.subprocess, "run", lambda *a, env, **k: seen.append(env))
    end_to_end.cli({"a": (["validate", "x"], None), "b": (["replay", "m", "t"], None)}, times=2)
    assert len(seen) == 4
    assert all("PYTHONDONTWRITEBYTECODE" not in env for env in seen)
    assert all(env["PYTHONPATH"].split(end_to_end.os.pathsep)[0] == str(ROOT) for env in seen)


def test_a_command_after_its_start_up_runs_in_one_process_and_writes_what_the_command_writes(tmp_path) -> None:
    """Rule (benchmarks/cli_after_startup.py, read by :func:`end_to_end.cli`): the child runs the warm-up
    command, reports the CPU seconds it has spent so far on the descriptor it was given, then runs the
    timed command as ``context-inspector`` does; what it writes last is the command's own output, and
    the figure it reports is more than nothing and less than the whole child's CPU (the difference is
    the command's cost after its start-up, what the benchmark keeps). Real processes, a bundled sample."""
    import resource
    import subprocess

    import cli_startup

    manifest, transcript = str(cli_startup.DROP), str(cli_startup.DEMO)
    one_turn = tmp_path / "one.json"
    one_turn.write_text('{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}')
    env = cli_startup.env()
    plain = subprocess.run([sys.executable, "-m", "inspector", "replay", manifest, transcript], env=env, cwd=ROOT,
                           capture_output=True, check=True).stdout
    read, write = end_to_end.os.pipe()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cli_after_startup.py"), str(write),
                            "replay", manifest, str(one_turn), "--", "replay", manifest, transcript],
                           env=env, cwd=ROOT, capture_output=True, pass_fds=(write,))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    end_to_end.os.close(write)
    with end_to_end.os.fdopen(read, "rb") as pipe:
        reported = float(pipe.read())
    assert child.returncode == 0, child.stderr.decode()
    assert child.stdout.endswith(plain) and len(child.stdout) > len(plain)  # the warm-up's output, then the command's
    whole = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    assert 0 < reported < whole


def test_the_cli_figure_of_a_warmed_command_is_its_cpu_after_the_warm_up(monkeypatch) -> None:
    """Rule (:func:`end_to_end.cli`): a command given a warm-up is charged the child's CPU seconds minus
    what the child reported for its warm-up; one without is charged the whole child; the cheapest
    round wins. Worked example with the rusage and the child's report stubbed: rounds whose children
    spend 0.9 and 0.7 s, reporting 0.5 and 0.4 s of warm-up, give min(0.4, 0.3) = 0.3 s."""
    spent = iter([0.0, 0.9, 0.9, 1.6])  # RUSAGE_CHILDREN before/after, two rounds

    class Usage:
        def __init__(self, t: float) -> None:
            self.ru_utime, self.ru_stime = t, 0.0

    monkeypatch.setattr(end_to_end.resource, "getrusage", lambda who: Usage(next(spent)))
    reports = iter([0.5, 0.4])
    monkeypatch.setattr(end_to_end, "after_startup", lambda args, warm, env: next(reports))
    got = end_to_end.cli({"json": (["replay", "m", "t"], ["replay", "m", "one"])}, times=2)
    assert abs(got["json"] - 0.3) < 1e-9
