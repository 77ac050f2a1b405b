"""The app offers every registered strategy and says when forgetting is an estimate (issue 30).

The *Manifest* view's *Context strategy* select box lists the registry's context managers (a
strategy registered since included), the one in force chosen; choosing another rewrites
``spec.context_manager`` in the editor at its defaults and the page re-validates. Wherever the app
shows forgetting for a replay whose summaries the offline stand-in wrote (the header above every
view, Side by side, Fleet), it says so in the package's words; not when no summary is written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import PositiveInt
from streamlit.testing.v1 import AppTest

from inspector.app import words
from inspector.params import Doc, PluginParams
from inspector.plugins import PluginSpec, default_registry, register
from inspector.vocabulary import STANDIN_ESTIMATE_WORDS

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
ESTIMATE = words.plain_md(STANDIN_ESTIMATE_WORDS)  # as a caption writes it


def start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def show(at: AppTest, view: str) -> AppTest:
    at.segmented_control(key="view").set_value(view).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def offered(at: AppTest) -> list[str]:
    """The strategy types the select box offers (each option reads "type — what it does")."""
    return [str(o).split(" — ", 1)[0] for o in at.selectbox(key="manifest_strategy").options]


def estimate_said(at: AppTest) -> int:
    return sum(c.value == ESTIMATE for c in at.caption)


class ThrowAwayParams(PluginParams):
    """``throw-away``: a test's strategy, registered the way docs/contributing.md shows."""

    depth: Annotated[PositiveInt, Doc("a number it never reads")] = 7


@pytest.fixture
def throw_away() -> Iterator[str]:
    register(PluginSpec("context_manager", "throw-away", "test.cm.throw_away", "inspector.engine.managers.stack:"
                        "StackConversation", params_model=ThrowAwayParams))
    yield "throw-away"
    default_registry().unregister("context_manager", "throw-away")


def test_the_select_box_offers_the_registry_s_strategies_the_one_in_force_chosen(throw_away: str) -> None:
    at = show(start(), "manifest")
    registry = [spec.name for spec in default_registry().specs("context_manager")]
    assert offered(at) == registry and offered(at)[-1] == throw_away and len(registry) >= 8
    assert at.selectbox(key="manifest_strategy").value == "summarising"  # support-demo.yaml's
    params = next(d.value for d in at.dataframe if list(d.value.columns) == ["parameter", "value", "default",
                                                                              "meaning"])
    assert params.set_index("parameter").loc["keep_turns", ["value", "default"]].tolist() == ["2", "10"]


def test_choosing_clear_tool_results_writes_its_defaults_and_the_page_revalidates() -> None:
    at = show(start(), "manifest")
    before = str(at.text_area(key="manifest_yaml").value)
    at.selectbox(key="manifest_strategy").select("clear-tool-results").run()
    assert not at.exception and [e.value for e in at.error] == []
    text = str(at.text_area(key="manifest_yaml").value)
    block = text[text.index("  context_manager:\n"):text.index("  tools:\n")]
    assert block == ("  context_manager:\n    type: clear-tool-results\n    params:\n      trigger: 100000\n"
                     "      keep: 3\n      clear_at_least: 0\n      exclude_tools: null\n"
                     "      clear_tool_inputs: false\n      placeholder: null\n")
    assert text.replace(block, "") == before.replace(before[before.index("  context_manager:\n"):
                                                            before.index("  tools:\n")], "")
    assert [s.value for s in at.success] == ["Valid manifest."]
    assert at.selectbox(key="manifest_strategy").value == "clear-tool-results"
    params = next(d.value for d in at.dataframe if "parameter" in d.value.columns).set_index("parameter")
    assert params.loc["trigger", "value"] == "100000" and params.loc["keep", "value"] == "3"
    assert estimate_said(at) == 0  # clearing tool results writes no summary


def test_the_estimate_is_said_for_the_demo_s_stand_in_summaries_and_not_for_a_sliding_window() -> None:
    at = start()
    assert estimate_said(at) == 1  # the header, above This call
    show(at, "compare")  # the manifest's own (summarising) beside two that do not summarise
    assert estimate_said(at) == 2  # the header and Side by side's totals
    at.selectbox(key="manifest_sample").select("sliding-window.yaml").run()
    assert not at.exception
    show(at, "call")
    assert estimate_said(at) == 0


def tau_bench_file(episodes: int) -> bytes:
    """A tiny multi-conversation tau-bench file: episode k has k + 1 user turns."""
    out = []
    for k in range(episodes):
        traj: list[dict[str, str]] = [{"role": "system", "content": "You are an airline agent."}]
        for i in range(k + 1):
            traj += [{"role": "user", "content": f"episode {k} question {i}"},
                     {"role": "assistant", "content": f"episode {k} answer {i}"}]
        out.append({"task_id": k, "trial": 0, "reward": 1.0, "traj": traj})
    return json.dumps(out).encode()


@pytest.mark.parametrize(("strategies", "said"), [(["summarising", "stack"], 1), (["sliding-window", "stack"], 0)])
def test_the_fleet_says_the_estimate_only_when_a_strategy_summarises_with_the_stand_in(
        strategies: list[str], said: int) -> None:
    at = start()
    at.file_uploader(key="transcript_upload").set_value(("tau.json", tau_bench_file(3), "application/json")).run()
    show(at, "compare")
    at.multiselect(key="cmp_strategies").set_value(strategies).run()
    show(at, "fleet")
    at.button(key="fleet_go").click().run()
    assert not at.exception and [e.value for e in at.error] == []
    assert estimate_said(at) == 1 + said  # the header's (the manifest's own summarises), then the fleet's
    runs = next(d.value for d in at.dataframe if "summarizer" in d.value.columns)
    assert set(runs["summarizer"]) == ({"offline stand-in (not a model)", "none"} if said else {"none"})
