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

