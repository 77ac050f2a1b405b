"""The bundled demo demonstrates: the demo conversation under the sample manifest
designed with it (``support-demo.yaml``, what the app and ``context-inspector app`` open by
default) shows every mechanism in one conversation, so it cannot silently stop showing one.

Bug classes: a demo edit (or an engine change) after which the summary is never sent, the trigger
is never crossed inside a turn, nothing is trimmed, repaired or forgotten, or Side by side shows
identical columns; the manifest's own strategy missing from Side by side.

Numbers are worked out from the budget rule (docs/design.md §3.2) on the frames' own band counts: input
budget = 7 200 − 1 000 (reserve) − 720 (margin) = 5 480; hard = 5 480 − fixed (system, user,
working memory, tool schemas); trigger (hint) = ⌊hard ÷ 1.25⌋; hysteresis ceiling = ⌊hint × 1.25⌋.

Note: a summary is computed at a commit, never inside a call, in this engine: every commit folds
the log back to the summary and the last ``keep_turns`` turns (Q4), so over the trigger the only
thing older than ``keep_turns`` is that summary, which is reused as is (Q23).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from inspector.bundled import DEMO_MANIFEST
from inspector.compare import DEFAULT_STRATEGIES, OWN_STRATEGY, PRESETS, compare, own_strategy_yaml
from inspector.engine.managers.summarising import is_summary_block
from inspector.forgetting import call_needs
from inspector.manifest import load_manifest
from inspector.replay import replay
from inspector.app import inputs, side_by_side
from inspector.transcripts import load_transcript, sample_path

ROOT = Path(__file__).resolve().parents[2]
INPUT_BUDGET = 7200 - 1000 - 720


@pytest.fixture(scope="module")
def loaded() -> Any:
    return load_manifest(ROOT / "sample_manifests" / DEMO_MANIFEST)


@pytest.fixture(scope="module")
def rp(loaded: Any) -> Any:
    # the default policy (tiktoken); the offline stand-in, as the app uses when no model is configured
    return replay(loaded, load_transcript(sample_path()), summarizer="stand-in")


def test_the_app_and_the_cli_open_the_demo_under_its_own_manifest() -> None:
    assert inputs.DEFAULT_MANIFEST == DEMO_MANIFEST == "support-demo.yaml"
    assert inputs.DEFAULT_TRANSCRIPT == sample_path().name == "demo_support.json"


def test_tool_schemas_are_small_relative_to_the_window(rp: Any) -> None:
    f = rp.frames[0]
    assert f.budget.window == 7200 and f.bands["tool_schemas"] == 1313
    assert f.bands["tool_schemas"] < f.budget.window / 5  # Q21: the transcript's own 15 schemas are sent


def test_a_summary_is_computed_at_a_commit_and_sent_on_the_next_call(rp: Any) -> None:
    first = next(c for c in rp.commits if c.folded_turns)
    assert (first.turn, first.action, first.folded_turns, first.summarizer_called) == (3, "summarized", 1, True)
    k = next(k for k, f in enumerate(rp.frames) if f.turn > first.turn)
    assert k == 7
    f = rp.frames[k]
    assert f.bands["summary"] == 236
    payload = f.payload(rp.messages)
    assert sum(is_summary_block(m) for m in payload) == 1  # the block itself is in what is sent


def test_inside_turn_4_working_memory_grows_until_the_history_crosses_the_trigger(rp: Any) -> None:
    before, at = rp.frames[7], rp.frames[8]
    assert before.turn == at.turn == 4 and (before.step, at.step) == (0, 1)
    # call 7: fixed 294 + 25 + 0 + 1 313 = 1 632; hard 5 480 − 1 632 = 3 848; trigger ⌊3 848 ÷ 1.25⌋ = 3 078
    assert (before.budget.fixed, before.budget.hard, before.budget.hint) == (1632, 3848, 3078)
    # call 8: the two flight statuses add 639 tokens of working memory: fixed 2 271; hard 3 209;
    # trigger ⌊3 209 ÷ 1.25⌋ = 2 567; ceiling ⌊2 567 × 1.25⌋ = 3 208
    assert at.bands["working_memory"] == 639
    assert (at.budget.fixed, at.budget.hard, at.budget.hint, at.budget.ceiling) == (2271, 3209, 2567, 3208)
    # the history in view (summary 236 + kept turns 2 719 = 2 955) is the same at both calls
    assert before.decision.raw_tokens == at.decision.raw_tokens == 236 + 2719 == 2955
    assert before.decision.action == "unchanged-under-budget"  # 2 955 ≤ 3 078
    assert at.decision.action == "reused" and not at.decision.summarizer_called  # 2 567 < 2 955 ≤ 3 208


def test_the_reused_summary_is_sent(rp: Any) -> None:
    f = rp.frames[8]
    assert f.bands["summary"] == 236 and not f.trimmed and not f.trimmed_synthetic
    assert f.payload_tokens == 294 + 236 + 2719 + 25 + 639 + 1313 == 5226 <= INPUT_BUDGET


def test_one_more_result_and_the_trimmer_cuts_the_summary_and_the_oldest_turn(rp: Any) -> None:
    f = rp.frames[9]
    assert f.decision.action == "reused" and f.bands["working_memory"] == 1190
    # 294 + 236 + 2 719 + 25 + 1 190 + 1 313 = 5 777 > 5 480: the oldest rows go first — the summary
    # block, then the turn-2 messages 5-7 (the user's e-mail and the login-activity round)
    assert 294 + 236 + 2719 + 25 + 1190 + 1313 > INPUT_BUDGET
    assert f.trimmed == ((5, 8),) and f.trimmed_synthetic == 1 and f.bands["summary"] == 0
    assert [x["kind"] for x in f.not_sent] == ["summary"]  # computed but not sent, and said so
    assert f.payload_tokens <= INPUT_BUDGET


def test_every_commit_from_turn_3_folds_one_more_turn(rp: Any) -> None:
    folds = [c.turn for c in rp.commits if c.folded_turns]
    assert folds == list(range(3, 14))  # 14 user turns; the last one has no commit (it awaits a reply)


def test_the_interrupted_tool_round_is_repaired(rp: Any) -> None:
    repaired = [k for k, f in enumerate(rp.frames) if f.repairs]
    assert repaired == [16, 17, 18]
    assert {f.check for f in rp.frames} == {"ok"}  # every payload passes the provider check
    assert [r.repair.kind for r in rp.frames[16].repairs] == ["ask_stripped"]  # message 35: the ask the user talked over
    assert rp.frames[16].repairs[0].ref == 35


def test_a_reference_is_forgotten(rp: Any) -> None:
    lost = [(c.call, x.identifier, x.message) for c in call_needs(rp) for x in c.forgotten]
    # call 24: resync_mobile_app needs the account id; the rolling summary no longer holds it
    assert lost == [(24, "AUR-5521904", 22)]


def test_side_by_side_starts_with_the_manifests_own_strategy_and_the_columns_differ(loaded: Any) -> None:
    assert DEFAULT_STRATEGIES[0] == OWN_STRATEGY
    specs = {n: None if n == OWN_STRATEGY else PRESETS[n] for n in DEFAULT_STRATEGIES}
    replays = compare(loaded, load_transcript(sample_path()), specs, summarizer="stand-in")
    assert list(replays) == list(DEFAULT_STRATEGIES)
    own = replays[OWN_STRATEGY]
    assert [f.payload_tokens for f in own.frames] == [f.payload_tokens for f in replay(
        loaded, load_transcript(sample_path()), summarizer="stand-in").frames]  # strategy None = the manifest as is
    sent = {n: sum(f.payload_tokens for f in r.frames) for n, r in replays.items()}
    trimmed = {n: sum(len(f.trimmed) for f in r.frames) for n, r in replays.items()}
    assert len(set(sent.values())) == 3 and len(set(trimmed.values())) == 3
    last = len(own.frames) - 1
    table = side_by_side.keep_table(replays, last)
    assert table["differs"].sum() > 0


def test_the_manifests_own_strategy_is_shown_as_written_or_as_resolved() -> None:
    demo = load_manifest(ROOT / "sample_manifests" / DEMO_MANIFEST)
    assert yaml.safe_load(own_strategy_yaml(demo)) == demo.raw["spec"]["context_manager"]
    sugar = own_strategy_yaml(load_manifest(ROOT / "sample_manifests" / "compaction-sugar.yaml"))
    assert sugar.startswith("# from spec.working_memory.compaction\n")
    assert yaml.safe_load(sugar) == {"type": "summarising", "params": {"summary_threshold": 0, "keep_turns": 4}}
    default = own_strategy_yaml(load_manifest(ROOT / "sample_manifests" / "default.yaml"))
    assert default.startswith("# from default\n") and yaml.safe_load(default) == {"type": "summarising"}
