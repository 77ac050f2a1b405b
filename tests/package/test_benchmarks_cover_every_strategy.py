"""The end-to-end and scaling benchmarks run every context manager the plugin registry holds.

Rule (benchmarks/replay_scaling.py :func:`strategies`, read by benchmarks/end_to_end.py): the
strategy list is derived from the registry, one entry per registered context manager, in
registration order, each spec naming that manager; settings are given by registry name only for the
managers that need them to act, and every such name is registered. Bug class: a hand-written list
that misses a strategy registered later.
"""

from __future__ import annotations

import sys

from conftest import ROOT

from inspector.plugins import default_registry

sys.path.insert(0, str(ROOT / "benchmarks"))

import replay_scaling  # noqa: E402


def test_the_benchmarks_strategies_are_the_registrys_context_managers() -> None:
    names = [spec.name for spec in default_registry().specs("context_manager")]
    assert [cm["type"] for cm in replay_scaling.strategies().values()] == names
    assert set(replay_scaling.SETTINGS) <= set(names)

