"""``clear-tool-results``: Anthropic's ``clear_tool_uses_20250919`` and LangChain's ``ClearToolUsesEdit``
(docs/design.md §3.13): over ``trigger`` input tokens (strictly more), every tool result but the last
``keep`` is sent as a placeholder, oldest first, never ``exclude_tools``; ``clear_at_least`` stops
once that many tokens are freed and clears nothing when the candidates free fewer;
``clear_tool_inputs`` blanks the cleared calls' arguments, ids kept.

The numbers are the estimate counter's (``chars // 4 + 4`` a row), worked out by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.engine.contracts import newest_group_start
from inspector.engine.managers.base import manage
from inspector.engine.managers.clear_tool_results import ClearToolResults
from inspector.engine.pairing import check_provider_payload
from inspector.engine.types import Message
from inspector.params import ClearToolResultsParams
from tests.engine.test_incremental_equals_reference import conversations, drive, text, trimmers

SAMPLES = Path(__file__).resolve().parents[2] / "inspector" / "samples"


def ask(k: int, tool: str = "get_order", args: str = '{"id": 1}') -> Message:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": f"c{k}", "type": "function", "function": {"name": tool, "arguments": args}}]}


def result(k: int, chars: int = 400) -> Message:
    return {"role": "tool", "tool_call_id": f"c{k}", "content": "x" * chars}


def five_uses(tools: tuple[str, ...] = ("get_order",) * 5) -> list[Message]:
    """user 'q' (1 char), five asks (name 9 + args 9 = 18 chars each), five results of 400 chars,
    the answer 'done' (4): 2 095 chars // 4 = 523, + 4 × 12 rows = 571 tokens."""
    rows: list[Message] = [{"role": "user", "content": "q"}]
    for k, tool in enumerate(tools):
        rows += [ask(k, tool), result(k)]
    return [*rows, {"role": "assistant", "content": "done"}]


def clear(past: list[Message], working: list[Message] | None = None, **params: object) -> tuple:
    cm = ClearToolResults(params=ClearToolResultsParams(**params))  # type: ignore[arg-type]
    got = manage(cm, past, 0, working or [])
    return got, {r.index: r for r in got.edits.replaced}, {r.index: r for r in got.edits.working}


# A 400-char result is 400 // 4 + 4 = 104 tokens; its placeholder
# "[tool result cleared: get_order, 104 tokens]" (44 chars) is 44 // 4 + 4 = 15: 89 tokens freed each.
PLACEHOLDER = "[tool result cleared: get_order, 104 tokens]"


def test_exactly_at_the_trigger_nothing_is_cleared_one_token_under_it_is() -> None:
    got, _, _ = clear(five_uses(), trigger=571)
    assert got.decision.action == "tool-results-under-trigger" and got.decision.raw_tokens == 571
    assert got.edits.replaced == () and got.edits.suffix_start() == (0, None)
    got, log, _ = clear(five_uses(), trigger=570)
    assert got.decision.action == "tool-results-cleared" and sorted(log) == [2, 4]


def test_keep_three_of_five_tool_uses_clears_the_two_oldest_results_with_the_placeholder() -> None:
    past = five_uses()
    got, log, _ = clear(past, trigger=1)
    assert sorted(log) == [2, 4]  # results of c0 and c1; c2, c3, c4 kept
    assert {i: (r.reason, r.row["content"], r.row["tool_call_id"]) for i, r in log.items()} == {
        2: ("tool-result-cleared", PLACEHOLDER, "c0"), 4: ("tool-result-cleared", PLACEHOLDER, "c1")}
    assert len(PLACEHOLDER) == 44
    assert got.edits.kept == ((0, 12),) and got.decision.folded == []
    assert [m is p for m, p in zip(got.messages, past, strict=True)].count(False) == 2
    # the payload: 2 095 - 2 × (400 - 44) = 1 383 chars, // 4 = 345, + 48 = 393 (= 571 - 2 × 89)
    assert ClearToolResults().counter.count(got.messages) == 393


@pytest.mark.parametrize(("keep", "cleared"), [(0, [2, 4, 6, 8, 10]), (4, [2]), (5, []), (9, [])])
def test_keep_counts_the_last_tool_uses(keep: int, cleared: list[int]) -> None:
    got, log, _ = clear(five_uses(), trigger=1, keep=keep)
    assert sorted(log) == cleared
    assert got.decision.action == ("tool-results-cleared" if cleared else "tool-results-nothing-to-clear")


def test_excluded_tools_are_never_cleared_and_still_count_among_the_kept() -> None:
    tools = ("get_order", "read_policy", "get_order", "read_policy", "get_order")
    _, log, _ = clear(five_uses(tools), trigger=1, keep=2, exclude_tools=["read_policy"])
    assert sorted(log) == [2, 6]  # the three oldest are candidates; read_policy's (row 4) is skipped
    _, log, _ = clear(five_uses(tools), trigger=1, keep=0, exclude_tools=["read_policy", "get_order"])
    assert log == {}


def test_a_written_placeholder_is_sent_with_the_tool_and_size_filled_in() -> None:
    _, log, _ = clear(five_uses(), trigger=1, placeholder="[cleared]")  # LangChain's own placeholder
    assert {r.row["content"] for r in log.values()} == {"[cleared]"}
    _, log, _ = clear(five_uses(), trigger=1, placeholder="{tool} gave {tokens}")
    assert log[2].row["content"] == "get_order gave 104"
    big = five_uses()
    big[2] = result(0, 8000)  # 8 000 // 4 + 4 = 2 004 tokens
    _, log, _ = clear(big, trigger=1)
    assert log[2].row["content"] == "[tool result cleared: get_order, 2 004 tokens]"


def test_clear_tool_inputs_blanks_the_cleared_calls_arguments_and_keeps_their_ids() -> None:
    got, log, _ = clear(five_uses(), trigger=1, clear_tool_inputs=True)
    assert sorted(log) == [1, 2, 3, 4]
    for i, k in ((1, 0), (3, 1)):
        assert log[i].reason == "tool-input-cleared"
        (call,) = log[i].row["tool_calls"]
        assert call["id"] == f"c{k}" and call["function"] == {"name": "get_order", "arguments": "{}"}
    # each asking row's arguments go from 9 chars to 2 ('{}'): 1 383 - 14 = 1 369 chars, // 4 + 48 = 390
    assert ClearToolResults().counter.count(got.messages) == 390
    check_provider_payload(list(got.messages))


def test_clear_tool_inputs_blanks_only_the_cleared_call_of_a_parallel_ask() -> None:
    both = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
        {"id": "b", "type": "function", "function": {"name": "f", "arguments": '{"y": 2}'}}]}
    past = [{"role": "user", "content": "q"}, both, {"role": "tool", "tool_call_id": "a", "content": "1" * 80},
            {"role": "tool", "tool_call_id": "b", "content": "2" * 80}]
    _, log, _ = clear(past, trigger=1, keep=1, clear_tool_inputs=True)
    assert sorted(log) == [1, 2]
    assert [c["function"]["arguments"] for c in log[1].row["tool_calls"]] == ["{}", '{"y": 2}']


@pytest.mark.parametrize(("at_least", "cleared"), [(0, [2, 4, 6, 8, 10]), (89, [2]), (90, [2, 4]),
                                                    (445, [2, 4, 6, 8, 10]), (446, [])])
def test_clear_at_least_stops_once_reached_and_clears_nothing_when_the_candidates_free_less(
        at_least: int, cleared: list[int]) -> None:
    got, log, _ = clear(five_uses(), trigger=1, keep=0, clear_at_least=at_least)  # 89 tokens freed a result
    assert sorted(log) == cleared
    if not cleared:
        assert got.decision.action == "tool-results-nothing-to-clear"


def one_turn_working() -> list[Message]:
    """A one-turn agent's working memory: four tool rounds, the last one the newest group."""
    rows: list[Message] = []
    for k in range(4):
        rows += [ask(k), result(k)]
    return rows


def test_working_memory_of_a_one_turn_agent_is_cleared_but_never_its_newest_group() -> None:
    wm = one_turn_working()
    assert newest_group_start(wm) == 6
    got, log, working = clear([{"role": "user", "content": "fix the bug"}], wm, trigger=1, keep=0)
    assert log == {} and sorted(working) == [1, 3, 5]  # the newest group's result (7) is kept
    assert {r.row["content"] for r in working.values()} == {PLACEHOLDER}
    assert got.decision.action == "tool-results-cleared"
    _, _, working = clear([], wm, trigger=1, keep=3)  # four results, keep 3: the oldest only
    assert sorted(working) == [1]


def test_the_engine_sends_working_memory_with_the_cleared_results() -> None:
    from inspector.engine import ContextEngine

    engine = ContextEngine(SAMPLES / "manifests" / "stack.yaml", counter="estimate")
    engine.cm = ClearToolResults(trigger=1, keep=1)
    engine.user("fix the bug")
    for m in one_turn_working():
        engine.record(m)
    call = engine.assemble()
    assert [m["content"] for m in call.messages if m.get("role") == "tool"] == [PLACEHOLDER] * 3 + ["x" * 400]
    assert engine.conversation.working[1]["content"] == "x" * 400  # working memory itself untouched


managers = st.builds(
    lambda trigger, keep, at_least, inputs, exclude: {"type": "clear-tool-results", "params": {
        "trigger": trigger, "keep": keep, "clear_at_least": at_least, "clear_tool_inputs": inputs,
        "exclude_tools": exclude}},
    st.integers(1, 400), st.integers(0, 4), st.sampled_from([0, 0, 20, 200]), st.booleans(),
    st.sampled_from([None, [], ["f"]]))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cm=managers, trimmer=trimmers, convo=conversations(), system=text,
       counter=st.sampled_from(["estimate", "estimate", "tiktoken"]))
def test_every_payload_passes_the_provider_check_and_the_incremental_path_equals_the_reference(
        cm: dict, trimmer: dict, convo: list, system: str, counter: str) -> None:
    """The shared lockstep driver: an incremental and a reference engine give the same assembly at
    every call (and the trimmer alone the same payload), and every payload passes the provider check."""
    assert drive(cm, trimmer, convo, system, counter, alone=True) >= 1


def sample_manifest(tmp_path: Path, params: dict) -> Path:
    doc = yaml.safe_load((SAMPLES / "manifests" / "stack.yaml").read_text(encoding="utf-8"))
    doc["spec"]["context_manager"] = {"type": "clear-tool-results", "params": params}
    doc["spec"]["models"][0]["max_tokens"] = 2000
    path = tmp_path / "clear.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_a_replay_of_the_claude_code_sample_shows_cleared_rows_with_their_reason(tmp_path: Path) -> None:
    """The bundled Claude Code session is one turn: the results it clears are working-memory rows;
    the frame's JSON lists them by transcript index with the reason, the payload sends the
    placeholder in their place and forgetting says why the original was not sent."""
    from inspector.forgetting import not_sent_reasons
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript
    from inspector.vocabulary import EVENT_WORDS, reason_words

    rp = replay(str(sample_manifest(tmp_path, {"trigger": 1, "keep": 1})),
                load_transcript(SAMPLES / "demo_session.claude-code.jsonl"), counter="estimate")
    frames = [k for k, f in enumerate(rp.frames) if f.replaced]
    assert frames, "the sample's older tool results are cleared"
    k = frames[-1]
    f = rp.frames[k]
    doc = json.loads(json.dumps(f.to_json(rp.messages, alone=True)))  # one call alone: every replaced row listed
    assert doc["replaced_kept"] == 0
    assert doc["replaced_added"] == [{"ref": i, "reason": "tool-result-cleared"} for i, _ in f.replaced]
    rows = {row["ref"]: row for row in doc["payload"] if row["synthetic"] == "tool-result-cleared"}
    assert set(rows) == {i for i, _ in f.replaced}
    for i, row in rows.items():
        assert rp.messages[i]["role"] == "tool" and row["content"].startswith("[tool result cleared: ")
    reasons = not_sent_reasons(rp, k)
    assert {i: reasons[i] for i in rows} == {i: reason_words("tool-result-cleared") for i in rows}
    assert rp.frames[k].decision.action == "tool-results-cleared"
    assert EVENT_WORDS["tool-results-cleared"] == "tool results cleared"


def test_validate_show_lists_its_parameters_and_refuses_a_bad_one(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.cli import main

    assert main(["validate", "--show", str(sample_manifest(tmp_path, {"keep": 2}))]) == 0
    out = capsys.readouterr().out
    assert "clear-tool-results" in out and "clear_at_least" in out and "exclude_tools" in out
    assert main(["validate", str(sample_manifest(tmp_path, {"keep": -1}))]) != 0
    assert "keep" in capsys.readouterr().err


def test_side_by_side_offers_it_and_a_sweep_grid_runs_it_as_a_whole_spec(tmp_path: Path) -> None:
    from inspector.compare import PRESETS
    from inspector.sweep import sweep

    assert PRESETS["clear-tool-results"] == {"type": "clear-tool-results", "params": {"trigger": 100_000, "keep": 3}}
    transcript = str(SAMPLES / "demo_support.json")  # a support session with many tool rounds
    grid = {"context_manager": ["stack", {"type": "clear-tool-results", "params": {"keep": 2, "trigger": 1}}]}
    df = sweep(str(sample_manifest(tmp_path, {})), [transcript], grid, processes=1, progress=False,
               counter="estimate")
    assert list(df["strategy"]) == ["stack", "clear-tool-results"]
    stack, cleared = df["tokens_sent"]
    assert cleared < stack
    assert list(df["cache_breaks"])[0] == 0 < list(df["cache_breaks"])[1]  # a cleared result cuts the cached prefix


@pytest.mark.parametrize(("text", "ok"), [("[cleared {tool}, {tokens} tokens]", True), ("[cleared]", True),
                                          ("[cleared {tool}, {toks} tokens]", False), ("{size}", False)])
def test_a_placeholder_may_name_only_tool_and_tokens(text: str, ok: bool) -> None:
    from pydantic import ValidationError

    from inspector.params import ClearToolResultsParams

    if ok:
        assert ClearToolResultsParams(placeholder=text).placeholder == text
    else:
        with pytest.raises(ValidationError, match=r"unknown field \{"):
            ClearToolResultsParams(placeholder=text)


def test_the_trigger_check_reads_each_working_memory_row_once_a_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the trigger, one turn of 200 tool rounds (a call before each ask and each result is
    answered: 400 calls, working memory growing to 400 rows over a one-row log): the manager asks for
    401 row units in all (each row once), not every working-memory row on every call (80 201)."""
    from tests.builders import count_unit_reads

    cm = ClearToolResults(trigger=10**9)
    past: list[Message] = [{"role": "user", "content": "fix it"}]
    working: list[Message] = []
    reads = count_unit_reads(monkeypatch)
    for i in range(200):
        working.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]})
        assert cm.decide_with_working(past, tuple(working), 0).decision.action == "tool-results-under-trigger"
        working.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"out {i}"})
        cm.decide_with_working(past, tuple(working), 0)
    assert reads[0] == 401
    # a working memory that is not the last one grown (a new turn) is counted again, whole
    cm.decide_with_working(past, tuple(working[:3]), 0)
    assert reads[0] == 404
