"""``auto-compact`` (Claude Code / Codex): at the trigger, recent user messages then one summary of the rest.

Numbers are worked out by hand with the ``estimate`` counter (four characters a token, four tokens
a message): a message of 396 characters counts 99 + 4 = 103 tokens, so a log of six such rows
counts 6 × 99 + 24 = 618, and a call's input is the budget's fixed part plus that.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.budget import Budget
from inspector.engine.contracts import Replacement
from inspector.engine.managers.auto_compact import TRUNCATED, AutoCompactConversation
from inspector.engine.summary_block import summary_block
from inspector.engine.types import Message
from inspector.replay import replaced_lists

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


def test_keep_user_tokens_keeps_whole_messages_while_they_fit_and_a_budget_spent_exactly_cuts_nothing() -> None:
    past = six_rows()
    # three user messages of 103 tokens: 206 keeps the two newest whole (103 + 103 = 206, 0 left)
    two, s2 = manager(keep_user_tokens=206)
    got = two.decide_in_budget(past, (), budget(8_382))
    assert list(got.messages) == [past[2], past[4], summary_block(1, "S1")]  # users first, then the summary
    assert s2.calls == [[past[0], past[1], past[3], past[5]]]
    assert got.edits.kept == ((2, 3), (4, 5)) and got.edits.replaced == () and got.decision.kept_turns == 2
    # 103: the newest whole, nothing left, so the next one is not cut (Codex: ``remaining == 0`` ends it)
    one, _ = manager(keep_user_tokens=103)
    got = one.decide_in_budget(past, (), budget(8_382))
    assert list(got.messages) == [past[4], summary_block(2, "S1")] and got.edits.replaced == ()


def test_one_token_under_two_messages_cuts_the_older_one_to_the_tokens_left() -> None:
    past = six_rows()
    cm, summarizer = manager(keep_user_tokens=205)
    got = cm.decide_in_budget(past, (), budget(8_382))
    # u2 whole (103), 102 left for u1 (103): keep k characters of its 396 with
    # (k + len(marker)) // 4 + 4 <= 102, i.e. k + len(marker) <= 395; the marker names the cut
    # text's tokens, (396 - k) // 4 = 5 for k = 375: "…5 tokens truncated…" is 20 characters, so
    # k = 375 (376 would make 396 characters: 103 tokens). Head 375 // 2 = 187, tail 188.
    cut = {"role": "user", "content": "c" * 187 + "…5 tokens truncated…" + "c" * 188}
    assert len(cut["content"]) == 395
    assert list(got.messages) == [cut, past[4], summary_block(1, "S1")]
    assert got.edits.kept == ((2, 3), (4, 5)) and got.decision.kept_turns == 2
    assert got.edits.replaced == (Replacement(2, cut, TRUNCATED),)
    assert summarizer.calls == [[past[0], past[1], past[3], past[5]]]  # the cut row is kept, not summarised
    assert cm.counter.count([cut]) + cm.counter.count([past[4]]) == 205


def test_the_cut_keeps_the_head_and_the_tail_of_the_message_around_codex_marker() -> None:
    # Codex's truncate_middle_with_token_budget: half the budget from the start, half from the end
    past = six_rows()
    past[2] = {"role": "user", "content": "h" * 200 + "t" * 196}
    cm, _ = manager(keep_user_tokens=205)
    got = cm.decide_in_budget(past, (), budget(8_382))
    # as above, k = 375: the first 187 characters (all h), the last 188 (all t); the 21 cut (13 h,
    # 8 t) count 21 // 4 = 5 tokens
    assert got.messages[0]["content"] == "h" * 187 + "…5 tokens truncated…" + "t" * 188


def test_a_remainder_too_small_for_the_marker_keeps_nothing_of_the_message() -> None:
    past = six_rows()
    # 112 − 103 = 9 left: "…98 tokens truncated…" with one character each side is 23 characters,
    # 23 // 4 + 4 = 9 tokens (a third character would make 24: 10)
    nine, _ = manager(keep_user_tokens=112)
    got = nine.decide_in_budget(past, (), budget(8_382))
    assert got.messages[0] == {"role": "user", "content": "c…98 tokens truncated…c"}
    # 111: 8 left; the marker alone ("…99 tokens truncated…", 21 characters) counts 5 + 4 = 9: no cut row
    eight, summarizer = manager(keep_user_tokens=111)
    got = eight.decide_in_budget(past, (), budget(8_382))
    assert list(got.messages) == [past[4], summary_block(2, "S1")] and got.edits.replaced == ()
    assert summarizer.calls == [[past[0], past[1], past[2], past[3], past[5]]]


def test_a_cut_row_is_said_in_words_and_stays_cut_while_the_compaction_is_in_force() -> None:
    from inspector.vocabulary import reason_words

    assert reason_words(TRUNCATED) == \
        "user message truncated by the compaction (its middle cut to fit keep_user_tokens)"
    past = six_rows()
    cm, summarizer = manager(threshold_tokens=1_000, keep_user_tokens=205)
    first = cm.decide_in_budget(past, (), budget(1_000))
    later = cm.decide_in_budget(past + [row("assistant", "g")], (), budget(0))
    assert later.decision.action == "compaction-kept" and later.messages[0] is first.messages[0]
    assert later.edits.replaced == first.edits.replaced and len(summarizer.calls) == 1
    # compacted again with nothing new: the cut row (102 tokens, as sent) fits whole, no second cut
    again = cm.decide_in_budget(past, (), budget(1_000))
    assert again.decision.action == "compaction-kept" and again.edits.replaced == first.edits.replaced


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 300), min_size=1, max_size=6), keep=st.integers(0, 600))
def test_the_user_rows_kept_never_count_more_than_keep_user_tokens(sizes: list[int], keep: int) -> None:
    past: list[Message] = []
    for k, size in enumerate(sizes):
        past += [{"role": "user", "content": "u" * size}, {"role": "assistant", "content": f"a{k}"}]
    cm, _ = manager(threshold_tokens=1, keep_user_tokens=keep)
    got = cm.decide_in_budget(past, (), budget(0))
    sent = {r.index: r.row for r in got.edits.replaced}
    kept = [i for a, _ in got.edits.kept for i in range(a, a + 1)]
    assert sum(cm.counter.count([sent.get(i, past[i])]) for i in kept) <= keep
    assert all(i in kept for i in sent) and len(sent) <= 1
    whole = [i for i in kept if i not in sent]
    users = [i for i in range(0, len(past), 2)]
    assert whole == users[len(users) - len(whole):]  # whole rows are the newest ones


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
    # keep_user_tokens 100 holds the newest user message whole and cuts the one before it: the replay
    # lists it as replaced, and the forgetting analysis says why in words
    lists = replaced_lists(doc["frames"])
    j = next(j for j, cut in enumerate(lists) if cut)
    cut = lists[j]
    assert doc["frames"][j]["cm"]["action"] in {"compacted", "compaction-kept"}
    assert [c["reason"] for c in cut] == ["user-message-truncated"]
    assert not_sent_reasons(rp, j)[cut[0]["ref"]] == \
        "user message truncated by the compaction (its middle cut to fit keep_user_tokens)"
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


def test_the_history_count_from_running_sums_is_the_counters_count_of_the_history() -> None:
    from inspector.engine.contracts import EditRecord, Insertion
    from inspector.engine.managers.auto_compact import LogUnits
    from inspector.engine.tokens import EstimateCounter

    counter, units, past = EstimateCounter(), LogUnits(), six_rows()
    block = summary_block(1, "S1")  # 49 characters
    cut = {"role": "user", "content": "x" * 8}
    record = EditRecord(6, ((2, 3), (4, 6)), (Replacement(2, cut, TRUNCATED),), (Insertion(6, block),))
    # sent: the cut row (8), u2, a2 (396 each), the block (49): 849 // 4 + 4 × 4 = 212 + 16 = 228
    assert units.tokens(past, record, counter) == 228 == counter.count(list(record.apply(past)))
    past.append(row("user", "g"))  # the same list, grown: one more row read, 228 + 99 + 4 = 331
    grown = EditRecord(7, ((2, 3), (4, 7)), record.replaced, (Insertion(6, block),))
    assert units.tokens(past, grown, counter) == 331 == counter.count(list(grown.apply(past)))
    assert units.tokens(past, EditRecord.keep_all(7), counter) == 7 * 103
    assert units.tokens(past, EditRecord(7, ((3, 7),)), counter) == counter.count(past[3:7]) == 99 + 4 + 3 * 103
    assert units.tokens([], EditRecord.keep_all(0), counter) == 0


def test_the_trigger_is_worked_out_once_per_params_and_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call of a replay asks for the trigger with the same params and window: it is worked out
    once (not hashed or computed per call), again for another window or retuned params."""
    from inspector.engine.managers import auto_compact

    asked: list[int] = []
    real = auto_compact.trigger_tokens

    def counting(params: Any, window: int) -> int:
        asked.append(window)
        return real(params, window)

    monkeypatch.setattr(auto_compact, "trigger_tokens", counting)
    cm, _ = manager()
    past = six_rows()
    for _ in range(5):
        assert cm.decide_in_budget(past, (), budget(0)).decision.threshold == 9_000
    assert asked == [10_000]
    assert cm.decide_in_budget(past, (), budget(0, 20_000)).decision.threshold == 18_000 and asked == [10_000, 20_000]
    cm.params = cm.params.model_copy(update={"threshold_ratio": 0.5})
    assert cm.decide_in_budget(past, (), budget(0, 20_000)).decision.threshold == 10_000 and len(asked) == 3


def test_the_history_in_force_is_counted_once_per_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call of a turn sees the same log, only the budget's fixed part changes: the history in
    force and its count are worked out once for it (six rows, 618 tokens: used = fixed + 618), again
    when the log grows or a compaction comes into force."""
    from inspector.engine.managers.auto_compact import LogUnits

    counted: list[int] = []
    real = LogUnits.tokens

    def counting(self: LogUnits, past: Any, record: Any, counter: Any) -> int:
        counted.append(len(past))
        return real(self, past, record, counter)

    monkeypatch.setattr(LogUnits, "tokens", counting)
    cm, summarizer = manager(threshold_tokens=1_000)
    past = six_rows()
    assert [cm.decide_in_budget(past, (), budget(f)).decision.raw_tokens for f in (0, 10, 20)] == [618, 628, 638]
    assert counted == [6]
    past.append(row("user", "g"))  # the same list, grown: 721 tokens
    assert cm.decide_in_budget(past, (), budget(0)).decision.raw_tokens == 721 and counted == [6, 7]
    assert cm.decide_in_budget(past, (), budget(279)).decision.action == "compacted"  # 1 000: at the trigger
    assert len(summarizer.calls) == 1 and counted == [6, 7]
    cm.decide_in_budget(past, (), budget(0))  # the compaction in force: its history is counted anew
    assert counted == [6, 7, 7]
