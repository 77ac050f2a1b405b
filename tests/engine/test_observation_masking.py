"""``observation-masking``: a tool result at event index ``i`` of ``n`` events (rows of log + working
memory) is sent as the placeholder when ``i < n - attention_window`` (OpenHands'
``ObservationMaskingCondenser``), never in working memory's newest group; other rows never."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from inspector.engine.contracts import check_record
from inspector.engine.managers.base import manage
from inspector.engine.managers.observation_masking import MASKED, ObservationMasking, mask_text
from inspector.engine.types import Message
from inspector.params import ObservationMaskingParams

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "inspector" / "samples"
ONE_TURN = ROOT / "tests" / "data" / "transcripts" / "log_message_deduplication.eval"  # 1 user row, 5 bash results
NAME = "observation-masking"


def ask(k: str, tool: str = "lookup_order") -> Message:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": k, "type": "function", "function": {"name": tool, "arguments": "{}"}}]}


def result(k: str, size: int = 40) -> Message:
    return {"role": "tool", "tool_call_id": k, "content": "r" * size}


def seven_events() -> list[Message]:
    """Events 0..6: user, ask a, result a (2), ask b, result b (4), ask c, result c (6)."""
    return [{"role": "user", "content": "q"}, ask("a"), result("a"), ask("b"), result("b"), ask("c"), result("c")]


def masking(window: int, placeholder: str | None = None) -> ObservationMasking:
    extra = {} if placeholder is None else {"placeholder": placeholder}
    return ObservationMasking.from_params(ObservationMaskingParams(attention_window=window, **extra))


@pytest.mark.parametrize(("window", "masked"), [(2, [2, 4]), (3, [2]), (4, [2]), (5, []), (100, [])])
def test_results_before_event_n_minus_attention_window_are_masked(window: int, masked: list[int]) -> None:
    # 7 events, window 3: n - window = 4, so events 0..3 lie outside; the result at 2 is masked and
    # the one at 4 (the third from the end) is not: the boundary is i < n - window, strict.
    past = seven_events()
    got = masking(window).decide(past, 0)
    assert [r.index for r in got.edits.replaced] == masked
    assert got.edits.kept == ((0, 7),) and got.edits.dropped() == () and got.decision.folded == []
    assert got.decision.action == ("observations-masked" if masked else "observations-kept")
    assert [i for i, (m, p) in enumerate(zip(got.messages, past, strict=True)) if m is not p] == masked


def test_user_and_assistant_rows_are_never_masked() -> None:
    past = seven_events()
    got = masking(1).decide(past, 0)  # every row but the last is outside the window
    assert [r.index for r in got.edits.replaced] == [2, 4]
    assert all(past[r.index]["role"] == "tool" for r in got.edits.replaced)
    assert [got.messages[i] for i in (0, 1, 3, 5, 6)] == [past[i] for i in (0, 1, 3, 5, 6)]


def test_the_placeholder_is_openhands_masked_text_by_default_and_may_name_tool_and_size() -> None:
    assert ObservationMaskingParams().attention_window == 100 and ObservationMaskingParams().placeholder == "<MASKED>"
    got = masking(3).decide(seven_events(), 0)
    row = got.messages[2]
    assert row == {"role": "tool", "tool_call_id": "a", "content": "<MASKED>"} and got.edits.replaced[0].reason == MASKED
    named = masking(3, "[{tool} output masked: {size} characters]").decide(seven_events(), 0)
    assert named.messages[2]["content"] == "[lookup_order output masked: 40 characters]"
    assert mask_text("{tool}/{size}", "bash", 7) == "bash/7"


def test_working_memory_is_masked_too_but_never_its_newest_group() -> None:
    # a one-turn agent: the log holds the user row, working memory rows 1..6 of the seven events
    rows = seven_events()
    past, working = rows[:1], tuple(rows[1:])  # working: ask a, result a (1), ask b, result b (3), ask c, result c (5)
    got = masking(3).decide_with_working(past, working, 0)  # n - window = 4: event 2 = working row 1
    assert got.edits.replaced == () and [r.index for r in got.edits.working] == [1]
    everything = masking(1).decide_with_working(past, working, 0)  # 6 events outside the window
    assert [r.index for r in everything.edits.working] == [1, 3]  # working row 5 is the newest group's
    check_record(everything.edits, past, working)
    assert list(everything.edits.apply_working(working))[5] is working[5]
    assert manage(masking(1), past, 0, working).edits == everything.edits  # the engine asks with working memory


def manifest(tmp_path: Path, window: int) -> Path:
    doc = yaml.safe_load((SAMPLES / "manifests" / "stack.yaml").read_text(encoding="utf-8"))
    doc["spec"]["context_manager"] = {"type": NAME, "params": {"attention_window": window}}
    path = tmp_path / "masking.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_a_one_turn_replay_shows_masked_results_with_their_reason_and_forgetting_says_why(tmp_path: Path) -> None:
    from inspector.forgetting import not_sent_reasons
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript
    from inspector.vocabulary import ACTION_WORDS, EVENT_WORDS, reason_words

    rp = replay(str(manifest(tmp_path, 3)), load_transcript(ONE_TURN), counter="estimate")
    last = rp.frames[-1]
    # the last call answers the fifth result (10): the results 8 and 10 stand in its last 3 events, 2, 4, 6 before
    assert [i for i, _ in last.replaced] == [2, 4, 6]
    doc = json.loads(json.dumps(last.to_json(rp.messages, alone=True)))  # one call alone: all listed
    assert doc["replaced_kept"] == 0 and doc["replaced_added"] == [{"ref": i, "reason": MASKED} for i in (2, 4, 6)]
    rows = {row["ref"]: row for row in doc["payload"] if row["synthetic"] == MASKED}
    assert set(rows) == {2, 4, 6} and all(row["content"] == "<MASKED>" for row in rows.values())
    reasons = not_sent_reasons(rp, len(rp.frames) - 1)
    assert {i: reasons[i] for i in rows} == {i: reason_words(MASKED) for i in rows}
    assert ACTION_WORDS["observations-masked"] == "old tool results masked"
    assert EVENT_WORDS["observations-masked"] == "old tool results masked"
    assert "replaced" not in rp.frames[0].to_json()  # the first call masks nothing


def test_validate_show_lists_its_parameters(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from inspector.cli import main

    assert main(["validate", "--show", str(manifest(tmp_path, 3))]) == 0
    out = capsys.readouterr().out
    assert NAME in out and "attention_window" in out
    assert main(["validate", str(manifest(tmp_path, 0))]) != 0
    assert "attention_window" in capsys.readouterr().err


def test_side_by_side_offers_it_and_a_sweep_grids_its_window(tmp_path: Path) -> None:
    from inspector.compare import PRESETS, compare
    from inspector.report.tables import compare_table
    from inspector.sweep import sweep
    from inspector.transcripts.api import load_transcript

    assert PRESETS[NAME] == {"type": NAME, "params": {"attention_window": 100}}
    replays = compare(str(manifest(tmp_path, 3)), load_transcript(ONE_TURN),
                      {"stack": {"type": "stack"}, NAME: {"type": NAME, "params": {"attention_window": 2}}},
                      counter="estimate")
    by = dict(zip(compare_table(replays).iloc[:, 0], compare_table(replays)["tokens_sent"], strict=True))
    assert by[NAME] < by["stack"]
    key = "spec.context_manager.params.attention_window"
    df = sweep(str(manifest(tmp_path, 3)), [str(ONE_TURN)], {key: [1, 1000]}, processes=1, progress=False,
               counter="estimate")
    small, large = df["tokens_sent"]
    assert list(df[key]) == [1, 1000] and small < large  # a window of 1000 events masks nothing


@pytest.mark.parametrize(("text", "ok"), [("[{tool}: {size} characters masked]", True), ("<MASKED>", True),
                                          ("[{tool}: {sise} masked]", False), ("{tokens}", False)])
def test_a_placeholder_may_name_only_tool_and_size(text: str, ok: bool) -> None:
    from pydantic import ValidationError

    from inspector.params import ObservationMaskingParams

    if ok:
        assert ObservationMaskingParams(placeholder=text).placeholder == text
    else:
        with pytest.raises(ValidationError, match=r"unknown field \{"):
            ObservationMaskingParams(placeholder=text)
