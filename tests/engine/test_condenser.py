"""``condenser`` (OpenHands' ``LLMSummarizingCondenser``): the event counts worked out by hand.

The rule (docs/design.md §3.13, "condenser"): an event is one committed log row; past ``max_size``
events the history becomes the first ``keep_first`` events, one summary block, and a tail of
``max_size // 2 − keep_first − 1`` events (the summary counts as one: ``max_size // 2`` in all); the
summary is reused while head + summary + the rows after it stay within ``max_size`` events; a cut
never separates an ask from its results (each cut moves forward past tool results).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from inspector.engine.managers.condenser import Condenser
from inspector.params import CondenserParams

SAMPLES = Path(__file__).resolve().parents[2] / "inspector" / "samples"
TRANSCRIPT = SAMPLES / "demo_support.json"


def rows(n: int) -> list[dict]:
    """``n`` events, a user message and an assistant answer in turn, each naming its index."""
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"r{i}"} for i in range(n)]


def joined(msgs: list[dict]) -> str:
    """A summarizer that names the rows it was given (a previous summary by its first line's text)."""
    return "S:" + ",".join(str(m["content"]).rsplit("\n", 1)[-1] for m in msgs)


def contents(msgs: object) -> list[str]:
    return [str(m["content"]).split("\n")[0] if m["role"] == "system" else m["content"] for m in msgs]  # type: ignore[attr-defined]


def test_defaults_are_the_issues_max_size_240_and_keep_first_2() -> None:
    assert CondenserParams().max_size == 240 and CondenserParams().keep_first == 2
    assert Condenser().tail_size() == 240 // 2 - 2 - 1 == 117


def test_eleven_events_over_max_size_10_keep_2_a_summary_of_seven_and_a_tail_of_2() -> None:
    """max_size 10, keep_first 2, 11 events: the tail is 10 // 2 − 2 − 1 = 2 events, so rows 0-1
    stay, rows 2-8 (7 events) are summarised, rows 9-10 stay: 2 + 1 + 2 = 5 = max_size // 2."""
    past = rows(11)
    got = Condenser(10, 2, summarizer=joined).decide(past, 0)
    assert got.decision.action == "condensed"
    assert got.edits.kept == ((0, 2), (9, 11)) and got.edits.dropped() == ((2, 9),)
    assert [i.at for i in got.edits.inserted] == [9]
    assert len(got.messages) == 5 == 10 // 2
    assert contents(got.messages)[:2] == ["r0", "r1"] and contents(got.messages)[3:] == ["r9", "r10"]
    block = got.messages[2]  # the summary block stands right after the first keep_first rows
    assert block["role"] == "system" and block["content"].endswith("S:r2,r3,r4,r5,r6,r7,r8")
    assert got.decision.folded == past[2:9] and got.decision.compressed_turns == 4  # users r2, r4, r6, r8


def test_at_max_size_nothing_happens() -> None:
    """10 events with max_size 10: not past it, the log passes whole and no summary is made."""
    calls: list[int] = []
    cm = Condenser(10, 2, summarizer=lambda m: calls.append(len(m)) or "s")
    got = cm.decide(rows(10), 0)
    assert got.decision.action == "condenser-under-max" and got.edits.kept == ((0, 10),)
    assert got.edits.inserted == () and calls == []


def test_the_summary_is_reused_until_the_view_passes_max_size_then_summarised_again() -> None:
    """After the condensation of 11 events (view 5), 5 more rows make the view 2 + 1 + 7 = 10:
    reused; one more makes it 11: condensed again, the tail back to 2 (rows 15-16) and the new
    summary made from the previous summary and rows 9-14."""
    past = rows(11)
    cm = Condenser(10, 2, summarizer=joined)
    cm.decide(past, 0)
    past += rows(16)[11:]
    got = cm.decide(past, 0)
    assert got.decision.action == "condensed-reused" and got.decision.summarizer_called is False
    assert got.edits.kept == ((0, 2), (9, 16)) and len(got.messages) == 10
    past.append({"role": "assistant", "content": "r16"})
    got = cm.decide(past, 0)
    assert got.decision.action == "condensed"
    assert got.edits.kept == ((0, 2), (15, 17)) and len(got.messages) == 5
    assert got.messages[2]["content"].endswith("S:S:r2,r3,r4,r5,r6,r7,r8,r9,r10,r11,r12,r13,r14")
    assert got.decision.compressed_turns == 4 + 3  # users r10, r12, r14 joined the four before


def test_a_cut_never_separates_an_ask_from_its_results() -> None:
    """keep_first 2 ends the head on an ask (row 1): its two results (rows 2-3) stay in the head;
    the tail (2 events from 12 rows: row 10) starts on a result, so it moves past it to row 11."""
    ask = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    late = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}
    past = [{"role": "user", "content": "q"}, ask, {"role": "tool", "tool_call_id": "a", "content": "x"},
            {"role": "tool", "tool_call_id": "b", "content": "y"}, *rows(5), late,
            {"role": "tool", "tool_call_id": "c", "content": "z"}, {"role": "assistant", "content": "done"}]
    assert len(past) == 12
    got = Condenser(10, 2, summarizer=joined).decide(past, 0)
    assert got.edits.kept == ((0, 4), (11, 12))
    assert got.decision.folded == past[4:11]  # the late ask goes with its result


def test_no_summary_text_drops_the_middle_and_a_failing_summarizer_keeps_the_summary_in_force() -> None:
    past = rows(11)
    got = Condenser(10, 2, summarizer=None).decide(past, 0)
    assert got.decision.action == "condensed-dropped" and got.edits.inserted == ()
    assert got.edits.kept == ((0, 2), (9, 11))
    cm = Condenser(10, 2, summarizer=joined)
    first = cm.decide(past, 0).messages[2]

    def broken(msgs: list[dict]) -> str:
        raise RuntimeError("model down")

    cm.bind_summarizer(broken)
    failed = cm.decide(past + rows(17)[11:], 0)
    assert failed.decision.action == "condenser-failed" and "model down" in str(failed.decision.error)
    assert failed.edits.inserted == ()
    cm.bind_summarizer(joined)
    assert cm.decide(past, 0).messages[2] is first  # the summary in force was left as it was


def manifest(tmp_path: Path, **params: object) -> Path:
    doc = yaml.safe_load((SAMPLES / "manifests" / "stack.yaml").read_text(encoding="utf-8"))
    doc["spec"]["context_manager"] = {"type": "condenser", "params": params}
    path = tmp_path / "condenser.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_a_replay_of_the_support_sample_shows_the_condensation_forgetting_and_the_archive(tmp_path: Path) -> None:
    """demo_support.json under max_size 10, keep_first 2: the first call past 10 committed rows
    condenses; its JSON sends the first rows, the summary block, then the tail; the forgetting
    analysis names the folded rows in the action's words; the archive keeps every committed row
    (the condenser never rewrites the log, as OpenHands keeps its event stream)."""
    from inspector.forgetting import not_sent_reasons
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript
    from inspector.vocabulary import ACTION_WORDS, EVENT_WORDS

    rp = replay(str(manifest(tmp_path, max_size=10, keep_first=2)), load_transcript(TRANSCRIPT), counter="estimate")
    actions = [f.decision.action for f in rp.frames]
    k = actions.index("condensed")
    assert set(actions[:k]) == {"condenser-under-max"} and "condensed-reused" in actions[k:]
    doc = json.loads(json.dumps(rp.frames[k].to_json(rp.messages)))
    assert doc["cm"]["action"] == "condensed" and doc["check"] == "ok"
    kinds = [row["synthetic"] for row in doc["payload"]]
    at = kinds.index("summary")
    assert kinds.count("summary") == 1 and at > 1  # after the system text and the first rows
    refs = [row["ref"] for row in doc["payload"]]
    (a, b), = doc["folded"]
    assert refs[at - 1] == a - 1 and refs[at + 1] == b  # the summary stands where the middle [a, b) was
    reasons = not_sent_reasons(rp, k)
    assert set(reasons) == set(range(a, b))
    assert set(reasons.values()) == {"condensed into the summary block (this call)"}
    assert ACTION_WORDS["condensed"] == "middle events condensed" and EVENT_WORDS["condensed"] == "events condensed, sent"
    assert all(c.archive["folds"] == 0 and c.archive["archived_messages"] == c.archive["committed_messages"]
               for c in rp.commits)


def test_validate_shows_its_defaults_and_names_a_bad_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.cli import main

    assert main(["validate", "--show", str(manifest(tmp_path, max_size=40))]) == 0
    shown = capsys.readouterr().out
    assert '"condenser"' in shown and '"max_size": 40' in shown and '"keep_first": 2' in shown
    assert main(["validate", str(manifest(tmp_path, max_size=0))]) != 0
    assert "max_size" in capsys.readouterr().err


def test_compare_offers_it_and_a_sweep_grid_runs_over_max_size(tmp_path: Path) -> None:
    """A smaller max_size condenses earlier and sends fewer tokens than a large one that never does."""
    from inspector.compare import PRESETS
    from inspector.sweep import sweep

    assert PRESETS["condenser"] == {"type": "condenser", "params": {"max_size": 240, "keep_first": 2}}
    key = "spec.context_manager.params.max_size"
    df = sweep(str(manifest(tmp_path)), [str(TRANSCRIPT)], {key: [10, 1000]}, processes=1, progress=False,
               counter="estimate")
    assert list(df[key]) == [10, 1000]
    small, large = df["tokens_sent"]
    assert small < large
