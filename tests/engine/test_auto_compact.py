"""``auto-compact`` (Claude Code / Codex): at the trigger, recent user messages then one summary of the rest.

Numbers are worked out by hand with the ``estimate`` counter (four characters a token, four tokens
a message): a message of 396 characters counts 99 + 4 = 103 tokens, so a log of six such rows
counts 6 × 99 + 24 = 618, and a call's input is the budget's fixed part plus that.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from inspector.engine.budget import Budget
from inspector.engine.managers.auto_compact import AutoCompactConversation
from inspector.engine.summary_block import summary_block
from inspector.engine.types import Message

SAMPLES = Path(__file__).resolve().parents[2] / "inspector" / "samples"
TRANSCRIPT = SAMPLES / "demo_support.json"


def row(role: str, ch: str) -> Message:
    """A row of 396 characters: 103 tokens under the estimate counter."""
    return {"role": role, "content": ch * 396}


def six_rows() -> list[Message]:
    """u0 a0 u1 a1 u2 a2: 618 tokens."""
    return [row("user", "a"), row("assistant", "b"), row("user", "c"), row("assistant", "d"),
            row("user", "e"), row("assistant", "f")]


def budget(fixed: int, window: int = 10_000) -> Budget:
    """A call's budget: only the window and the fixed part matter to the manager."""
    return Budget(window, "test", window, "window", 0, "test", 0, 0.0, 0, fixed, 1, 1, 1)


class Recorder:
    """A summarizer that records what it was given and answers ``S<n>`` for its n-th call."""

    def __init__(self) -> None:
        self.calls: list[list[Message]] = []

    def summarize(self, msgs: list[Message]) -> str:
        self.calls.append(list(msgs))
        return f"S{len(self.calls)}"


def manager(**params: object) -> tuple[AutoCompactConversation, Recorder]:
    summarizer = Recorder()
    return AutoCompactConversation(**params, summarizer=summarizer), summarizer


def test_the_ratio_trigger_compacts_at_ninety_percent_of_the_window_not_one_token_before() -> None:
    # window 10 000 × 0.9 = 9 000; the log counts 618: fixed 8 381 → 8 999, fixed 8 382 → 9 000 (Codex: >=)
    past = six_rows()
    cm, summarizer = manager()
    under = cm.decide_in_budget(past, (), budget(8_381))
    assert (under.decision.action, under.decision.raw_tokens, under.decision.threshold) == \
        ("under-compact-trigger", 8_999, 9_000)
    assert list(under.messages) == past and summarizer.calls == []
    at = cm.decide_in_budget(past, (), budget(8_382))
    assert (at.decision.action, at.decision.raw_tokens) == ("compacted", 9_000)
    # keep_user_tokens 0 (the default): no user message kept, the whole log in one summary
    assert list(at.messages) == [summary_block(3, "S1")] and summarizer.calls == [past]
    assert at.edits.dropped() == ((0, 6),) and at.decision.folded == past


def test_threshold_tokens_replaces_the_ratio() -> None:
    past = six_rows()
    cm, _ = manager(threshold_tokens=1_000)  # 1 000 − 618 = 382
    assert cm.decide_in_budget(past, (), budget(381)).decision.action == "under-compact-trigger"
    got = cm.decide_in_budget(past, (), budget(382))
    assert (got.decision.action, got.decision.threshold) == ("compacted", 1_000)


def test_both_triggers_set_is_refused_naming_threshold_tokens(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="threshold_tokens"):
        AutoCompactConversation(threshold_ratio=0.8, threshold_tokens=5_000)
    from inspector.cli import main

    path = manifest(tmp_path, {"threshold_ratio": 0.8, "threshold_tokens": 5_000})
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert "spec.context_manager.params.threshold_tokens" in err and "not both" in err
    assert main(["validate", str(manifest(tmp_path, {"threshold_tokens": 5_000}))]) == 0


def test_keep_user_tokens_keeps_the_newest_whole_user_messages_that_fit() -> None:
    past = six_rows()
    # three user messages of 103 tokens: 206 keeps the two newest (103 + 103), 205 only the newest
    two, s2 = manager(keep_user_tokens=206)
    got = two.decide_in_budget(past, (), budget(8_382))
    assert list(got.messages) == [past[2], past[4], summary_block(1, "S1")]  # users first, then the summary
    assert s2.calls == [[past[0], past[1], past[3], past[5]]]
    assert got.edits.kept == ((2, 3), (4, 5)) and got.decision.kept_turns == 2
    one, _ = manager(keep_user_tokens=205)
    assert list(one.decide_in_budget(past, (), budget(8_382)).messages) == [past[4], summary_block(2, "S1")]


def test_later_calls_keep_the_compaction_and_a_second_compaction_folds_the_first_summary() -> None:
    past = six_rows()
    cm, summarizer = manager(threshold_tokens=1_000, keep_user_tokens=206)
    first = cm.decide_in_budget(past, (), budget(382))
    block1 = first.messages[-1]
    past += [row("user", "g"), row("assistant", "h")]  # rows 6, 7
    # in force: u1 u2 block1 u3 a3; block1 is "[Conversation summary — 1 earlier exchange(s)]\nS1",
    # 49 characters: (4 × 396 + 49) // 4 + 5 × 4 = 408 + 20 = 428 tokens; fixed 571 → 999, 572 → 1 000
    assert len(block1["content"]) == 49
    kept = cm.decide_in_budget(past, (), budget(571))
    assert kept.decision.action == "compaction-kept" and kept.decision.raw_tokens == 999
    assert list(kept.messages) == [past[2], past[4], block1, past[6], past[7]] and len(summarizer.calls) == 1
    second = cm.decide_in_budget(past, (), budget(572))
    assert second.decision.action == "compacted"
    assert summarizer.calls[1] == [past[2], block1, past[7]]  # everything in force but the two users kept
    assert list(second.messages) == [past[4], past[6], summary_block(1, "S2")]


def test_a_compaction_with_nothing_new_to_fold_is_kept_and_calls_no_summarizer() -> None:
    past = six_rows()
    cm, summarizer = manager(threshold_tokens=100)
    cm.decide_in_budget(past, (), budget(0))
    again = cm.decide_in_budget(past, (), budget(0))
    assert again.decision.action == "compaction-kept" and len(summarizer.calls) == 1


def test_a_summarizer_that_raises_leaves_the_history_in_force() -> None:
    past = six_rows()

    def boom(msgs: list[Message]) -> str:
        raise RuntimeError("down")

    cm = AutoCompactConversation(threshold_tokens=100, summarizer=boom)
    got = cm.decide_in_budget(past, (), budget(0))
    assert got.decision.action == "compaction-failed" and list(got.messages) == past
    assert got.decision.error == "RuntimeError: down"


# --- a replay of a bundled sample ---------------------------------------------------------------

def manifest(tmp_path: Path, params: dict[str, object]) -> Path:
    doc = yaml.safe_load((SAMPLES / "manifests" / "stack.yaml").read_text(encoding="utf-8"))
    doc["spec"]["models"][0].update(context_window=4_000, max_tokens=500)
    doc["spec"]["context_manager"] = {"type": "auto-compact", "params": params}
    path = tmp_path / "auto-compact.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_a_replay_of_the_support_demo_shows_the_compaction_forgetting_and_the_archive(tmp_path: Path) -> None:
    from inspector.forgetting import not_sent_reasons
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript
    from inspector.vocabulary import ACTION_WORDS

    rp = replay(str(manifest(tmp_path, {"keep_user_tokens": 100})), load_transcript(TRANSCRIPT),
                counter="estimate")
    # window 4 000 × 0.9 = 3 600: a call compacts when its input reaches it, and only then
    compacted = [k for k, f in enumerate(rp.frames) if f.decision.action == "compacted"]
    assert compacted
    for f in rp.frames:
        assert (f.decision.action == "compacted") == (f.decision.raw_tokens >= 3_600
                                                      and f.decision.summarizer_called)
    k = compacted[0]
    doc = json.loads(json.dumps(rp.to_json()))
    frame = doc["frames"][k]
    assert frame["cm"]["action"] == "compacted" and frame["cm"]["raw_tokens"] >= 3_600
    assert frame["summary_sent"] and frame["folded"]
    assert ACTION_WORDS["compacted"] == "history compacted"
    # forgetting: a folded row is not sent, compacted into this call's summary
    reasons = not_sent_reasons(rp, k)
    a, b = frame["folded"][0]
    assert {reasons[i] for i in range(a, b)} == {"compacted into the summary (this call)"}
    # the archive: the commit after the compaction writes it back as a fold
    commit = next(c for c in doc["commits"] if c["turn"] >= frame["turn"] and c["cm"] == "compacted")
    assert commit["archive"]["folds"] >= 1
    assert commit["archive"]["committed_messages"] < commit["archive"]["archived_messages"]
    assert all(f["check"] == "ok" for f in doc["frames"])


def test_it_is_offered_by_validate_show_compare_and_a_sweep_grid(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.cli import main
    from inspector.compare import PRESETS
    from inspector.sweep import sweep

    assert main(["validate", str(manifest(tmp_path, {"threshold_ratio": 0.5})), "--show"]) == 0
    shown = capsys.readouterr().out
    assert "auto-compact" in shown and "keep_user_tokens" in shown
    assert PRESETS["auto-compact"] == {"type": "auto-compact", "params": {"keep_user_tokens": 0}}
    key = "spec.context_manager.params.threshold_ratio"
    df = sweep(str(manifest(tmp_path, {})), [str(TRANSCRIPT)], {key: [0.5, 1.0]}, processes=1, progress=False,
               counter="estimate")
    assert list(df[key]) == [0.5, 1.0]
    low, high = df["tokens_sent"]
    assert low < high  # compacting at half the window sends fewer tokens than at the full window
