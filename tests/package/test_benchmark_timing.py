"""How the end-to-end benchmark times what it compares (benchmarks/end_to_end.py).

Rules: a CLI command's figure is its CPU after its start-up, subtracted in the same process
(benchmarks/cli_after_startup.py, :func:`end_to_end.cli`); timed cases take turns, each keeping its
cheapest round (:func:`end_to_end.taking_turns`). Bug class: a figure moved by another process's
start-up, or by a slow stretch of the shared machine that fell on every call of one case only.
"""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import end_to_end  # noqa: E402


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


def test_timed_cases_take_turns_and_each_keeps_its_cheapest_round() -> None:
    """Rule (:func:`end_to_end.taking_turns`): the cases run one call each per round, in their order,
    for ``times`` rounds, each from a collected heap after ``before``; each case's figure is its
    cheapest round and its result the last one. Worked example on a clock that advances by the
    durations scripted per call: a takes 5 then 3, b takes 2 then 4, so a → 3 and b → 2, and the
    calls ran a, b, a, b (not a, a, b, b)."""
    ran: list[str] = []
    durations = iter([5.0, 2.0, 3.0, 4.0])
    now = [0.0]

    def clock() -> float:
        return now[0]

    def case(name: str):
        def fn() -> str:
            ran.append(name)
            now[0] += next(durations)
            return f"{name}{len(ran)}"
        return fn

    befores: list[int] = []
    got = end_to_end.taking_turns({"a": case("a"), "b": case("b")}, 2, before=lambda: befores.append(1), clock=clock)
    assert ran == ["a", "b", "a", "b"] and len(befores) == 4
    assert got == {"a": (3.0, "a3"), "b": (2.0, "b4")}
