"""The compaction demo compares every registered strategy (issue 30: "the notebooks offer every
strategy"), read from the registry, with the defaults that could never act in the demo fitted to it
by one rule in the package (:func:`inspector.report.walkthrough.every_strategy`): a token threshold
above the input budget, or an event count above the conversation's messages, becomes half of it; a
dial the manifest's own manager also has takes the manifest's value. A throw-away strategy
registered here shows the list is derived, not written, and holds the rule's boundary (a default
equal to the budget can be reached, so it stays)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import NonNegativeInt, PositiveInt

from inspector.compare import compare
from inspector.manifest import load_manifest
from inspector.params import Doc, StackParams
from inspector.plugins import PluginSpec, default_registry, register
from inspector.replay import replay
from inspector.report import cache_view
from inspector.report import walkthrough as story
from inspector.transcripts import load_transcript

ROOT = Path(__file__).resolve().parents[2]
NAME = "throw-away-stack"
BUDGET = 7_200 - 1_000 - 720  # support-demo.yaml: window − completion reserve − ceil(10 % margin)
MESSAGES = 57  # demo_support.json


class ThrowAwayParams(StackParams):
    """``throw-away-stack``: the stack, with three preset dials sized against the demo."""

    preset = ("at_budget", "over_budget", "over_messages", "over_turns")
    # what each dial counts is declared (the unit), not read from its words: these say none
    at_budget: Annotated[PositiveInt, Doc("a trigger", "tokens")] = BUDGET
    over_budget: Annotated[PositiveInt, Doc("a trigger", "tokens")] = BUDGET + 1
    over_messages: Annotated[NonNegativeInt, Doc("the most recent ones", "events")] = MESSAGES + 1
    over_turns: Annotated[NonNegativeInt, Doc("a count of N tokens in words, declared as turns", "turns")] = 10**6


@pytest.fixture
def throw_away() -> Iterator[None]:
    register(PluginSpec("context_manager", NAME, "test.cm.throw_away_stack",
                        "inspector.engine.managers.stack:StackConversation", params_model=ThrowAwayParams))
    yield
    default_registry().unregister("context_manager", NAME)


@pytest.fixture(scope="module")
def demo() -> tuple[Any, Any, Any]:
    loaded = load_manifest(ROOT / "sample_manifests" / "support-demo.yaml")
    transcript = load_transcript(ROOT / "inspector" / "samples" / "demo_support.json")
    return loaded, transcript, replay(loaded, transcript)


def _registered() -> list[str]:
    return [spec.name for spec in default_registry().specs("context_manager")]


def test_every_registered_strategy_is_compared_and_defaults_that_never_act_are_fitted(demo: Any) -> None:
    loaded, _transcript, rp = demo
    specs, fits = story.every_strategy(loaded, rp)
    assert list(specs) == _registered() and len(specs) >= 7
    assert specs["summarising"] == loaded.raw["spec"]["context_manager"]  # the manifest's own, as written
    got = {(f.strategy, f.field): (f.default, f.value) for f in fits}
    assert got == {("sliding-window", "keep_turns"): (10, 2),  # the manifest's own keep_turns
                   ("clear-tool-results", "trigger"): (100_000, BUDGET // 2),  # 2 740
                   ("observation-masking", "attention_window"): (100, MESSAGES // 2),  # 28
                   ("condenser", "max_size"): (240, MESSAGES // 2)}
    assert specs["clear-tool-results"] == {"type": "clear-tool-results", "params": {"trigger": 2_740, "keep": 3}}
    words = story.strategies_intro(loaded, specs, fits)
    assert words.count("\n* **") == len(specs) - 1
    assert ("`trigger` 2,740 (fitted to this demo: its default, 100,000 tokens, is above this demo's 5,480-token "
            "input budget and would never be reached; half the budget instead)") in words


def test_a_strategy_registered_later_is_compared_too_and_the_fit_keeps_a_reachable_default(
        demo: Any, throw_away: None) -> None:
    loaded, transcript, rp = demo
    specs, fits = story.every_strategy(loaded, rp)
    assert list(specs)[-1] == NAME and list(specs) == _registered()
    assert specs[NAME]["params"] == {"at_budget": BUDGET, "over_budget": BUDGET // 2, "over_messages": MESSAGES // 2,
                                     "over_turns": 10**6}  # turns are never fitted, whatever the words say
    assert {f.field for f in fits if f.strategy == NAME} == {"over_budget", "over_messages"}
    replays = compare(loaded, transcript, specs)
    table = story.strategy_table(replays)
    assert list(table["strategy"]) == _registered()  # one row per registered strategy
    caching = cache_view.strategy_cache_table(replays)
    assert list(caching.columns) == _registered()  # and the caching table covers every one
