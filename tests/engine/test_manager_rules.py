"""Context managers (docs/design.md §3.3 stack, §3.4 sliding-window, §3.5 summarising)."""

from __future__ import annotations

import warnings

import pytest

from builders import T, ask, asst, tool, toolturn, user
from inspector.engine.managers.sliding_window import SlidingWindowConversation
from inspector.engine.managers.stack import StackConversation
from inspector.engine.managers.summarising import SUMMARY_PREFIX, SummarizingConversation, summary_block
from inspector.engine.pairing import check_provider_payload
from inspector.engine.summarizers.drop import DropSummarizer
from inspector.engine.summarizers.llm import LLMSummarizer
from inspector.engine.tokens import EstimateCounter


class Recorder:
    """A summarizer that returns fixed text and records its inputs (a real object, not a mock)."""

    def __init__(self, text: str = "S") -> None:
        self.text = text
        self.inputs: list[list[dict]] = []

    def summarize(self, msgs: list[dict]) -> str:
        self.inputs.append(msgs)
        return self.text if isinstance(self.text, str) else self.text(len(self.inputs))


def fat_turn(i: int, n: int = 400) -> list[dict]:
    return [user(chr(97 + i % 26) * n), asst(chr(65 + i % 26) * n)]


# -- stack ------------------------------------------------------------------------------------------
def test_stack_cap_backs_up_to_the_ask() -> None:
    past = toolturn("call_0") + toolturn("call_1")
    out = StackConversation(max_messages=2).manage_history(past, 0)
    assert out == past[-3:]
    assert out[0]["tool_calls"][0]["id"] == "call_1"


@pytest.mark.parametrize("cap", range(1, 20))
def test_stack_every_cap_passes_the_final_check(cap: int) -> None:
    past = [m for i in range(10) for m in toolturn(f"call_{i}")]
    out = StackConversation(max_messages=cap).manage_history(past, 0)
    check_provider_payload(out)
    assert out == past[len(past) - len(out):]


def test_stack_without_cap_is_unchanged_and_zero_cap_is_an_error() -> None:
    past = toolturn("a") + T(1)
    cm = StackConversation()
    assert cm.manage_history(past, 1) == past
    assert cm.last_decision.action == "unchanged-under-budget"
    with pytest.raises(ValueError, match="max_messages"):
        StackConversation(max_messages=0)


# -- sliding window ---------------------------------------------------------------------------------
def test_sliding_keeps_last_two_user_turns_with_their_rows() -> None:
    past = T(0) + toolturn("x") + T(2) + toolturn("y") + T(4)
    out = SlidingWindowConversation(keep_turns=2).manage_history(past, 0)
    assert out == toolturn("y") + T(4)
    assert [m["role"] for m in out].count("user") == 2


def test_sliding_parallel_results_travel_with_their_turn() -> None:
    par = [user("go"), ask("a", "b"), tool("a"), tool("b"), asst("done")]
    out = SlidingWindowConversation(max_turns=1).manage_history(toolturn("old") + par, 0)
    assert out == par
    four = [m for i in range(4) for m in toolturn(f"c{i}")]
    assert SlidingWindowConversation(keep_turns=1).manage_history(four, 0) == four[-4:]


def test_sliding_counts_a_leading_summary_block_as_a_turn() -> None:
    past = [summary_block(3, "S")] + T(1) + T(2)
    cm = SlidingWindowConversation(keep_turns=2)
    assert cm.manage_history(past, 0) == T(1) + T(2)
    assert cm.last_decision.action == "window-slid"


def test_sliding_alias_precedence() -> None:
    assert SlidingWindowConversation(keep_turns=3, window_size=5, max_turns=7).keep_turns == 3
    assert SlidingWindowConversation(window_size=5, max_turns=7).keep_turns == 5
    assert SlidingWindowConversation(max_turns=0).keep_turns == 1


# -- summarising ------------------------------------------------------------------------------------
def test_under_budget_never_calls_the_summarizer() -> None:
    rec = Recorder()
    cm = SummarizingConversation(keep_turns=1, summarizer=rec)
    past = toolturn("a") + toolturn("b")
    assert cm.manage_history(past, 10_000) == past
    assert rec.inputs == [] and cm.last_decision.action == "unchanged-under-budget"


def test_summary_hysteresis_reuse_then_recompute() -> None:
    counter = EstimateCounter()
    rec = Recorder("S")
    cm = SummarizingConversation(keep_turns=2, hysteresis_ratio=0.1, summarizer=rec)
    turns = [fat_turn(i) for i in range(7)]
    past = [m for t in turns[:5] for m in t]
    assert counter.count_history(past) == 1040
    out = cm.manage_history(past, 600)
    assert out[0]["content"] == f"{SUMMARY_PREFIX}3 earlier exchange(s)]\nS"
    assert out[1:] == turns[3] + turns[4]
    assert counter.count_history(out) == 432
    assert len(rec.inputs) == 1 and cm.last_decision.action == "summarized"

    past6 = past + turns[5]
    out = cm.manage_history(past6, 600)
    assert counter.count_history(out) == 640
    assert cm.last_decision.action == "reused" and len(rec.inputs) == 1
    assert out[1:] == turns[3] + turns[4] + turns[5]

    past7 = past6 + turns[6]
    out = cm.manage_history(past7, 600)
    assert len(rec.inputs) == 2 and cm.last_decision.action == "summarized"
    assert out[0]["content"].startswith(f"{SUMMARY_PREFIX}5 earlier exchange(s)]")


def test_hysteresis_reuses_identical_call_and_fat_turn() -> None:
    counter = EstimateCounter()
    rec = Recorder(lambda n: f"summary {n}")
    cm = SummarizingConversation(keep_turns=2, hysteresis_ratio=0.2, summarizer=rec)
    past = [m for i in range(5) for m in fat_turn(i)]
    hint = counter.count_history(past) - 1
    first = cm.manage_history(past, hint)
    second = cm.manage_history(past, hint)
    assert second == first and len(rec.inputs) == 1
    grown = past + fat_turn(5, 200)
    third = cm.manage_history(grown, hint)
    assert cm.last_decision.action == "reused" and third[0] is first[0]

    rec0 = Recorder(lambda n: f"summary {n}")
    cm0 = SummarizingConversation(keep_turns=2, hysteresis_ratio=0.0, summarizer=rec0)
    cm0.manage_history(past, hint)
    log = past
    for i in range(5, 15):
        log = log + fat_turn(i, 200)
        cm0.manage_history(log, hint)
    assert len(rec0.inputs) > 1


def test_different_prefix_is_not_reused() -> None:
    rec = Recorder(lambda n: f"summary {n}")
    cm = SummarizingConversation(keep_turns=2, summarizer=rec)
    a = [m for i in range(5) for m in fat_turn(i)]
    b = [m for i in range(5) for m in fat_turn(i + 10)]
    out_a = cm.manage_history(a, 600)
    out_b = cm.manage_history(b, 600)
    assert len(rec.inputs) == 2 and out_a[0]["content"] != out_b[0]["content"]


def test_prefix_differing_only_in_tool_ids_is_not_reused() -> None:
    rec = Recorder(lambda n: f"summary {n}")
    cm = SummarizingConversation(keep_turns=1, summarizer=rec)
    a = [m for i in range(3) for m in toolturn(f"id{i}")] + fat_turn(9)
    b = [m for i in range(3) for m in toolturn(f"other{i}")] + fat_turn(9)
    cm.manage_history(a, 50)
    cm.manage_history(b, 50)
    assert len(rec.inputs) == 2


@pytest.mark.parametrize("summarizer", [None, DropSummarizer()], ids=["no-summarizer", "drop"])
def test_drop_keeps_exactly_the_last_turn(summarizer: object) -> None:
    past = [m for i in range(4) for m in toolturn(f"c{i}")]
    cm = SummarizingConversation(keep_turns=1, summary_threshold=1, summarizer=summarizer)
    out = cm.manage_history(past, 0)
    assert out == toolturn("c3")
    d = cm.last_decision
    assert (d.action, d.dropped_turns, d.compressed_turns) == ("dropped", 3, 0)


def test_llm_without_engine_drops_and_warns_once() -> None:
    cm = SummarizingConversation(keep_turns=1, summarizer=LLMSummarizer())
    past = [m for i in range(4) for m in fat_turn(i)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cm.manage_history(past, 10) == fat_turn(3)
        cm.manage_history(past + fat_turn(4), 10)
    assert sum("no live engine" in str(w.message) for w in caught) == 1


def test_failing_summarizer_keeps_tail_and_retries() -> None:
    calls = []

    def boom(msgs: list[dict]) -> str:
        calls.append(len(msgs))
        raise RuntimeError("LLM call budget exhausted")

    cm = SummarizingConversation(keep_turns=2, summarizer=boom)
    past = [m for i in range(5) for m in fat_turn(i)]
    assert cm.manage_history(past, 600) == fat_turn(3) + fat_turn(4)
    assert cm.last_decision.action == "summarizer-failed" and "budget exhausted" in cm.last_decision.error
    cm.manage_history(past, 600)
    assert len(calls) == 2  # nothing cached: the next call tried again


def test_over_budget_with_few_turns_is_unchanged() -> None:
    rec = Recorder()
    cm = SummarizingConversation(keep_turns=3, summarizer=rec)
    past = [m for i in range(3) for m in fat_turn(i)]
    assert cm.manage_history(past, 10) == past
    assert cm.last_decision.action == "unchanged-too-few-turns" and rec.inputs == []


def test_llm_summarizer_prompt_is_two_messages(llm) -> None:  # noqa: ANN001
    from inspector.engine.llm import LLMEngine

    engine = LLMEngine(model="openai/test-model", api_base=llm.api_base, api_key="x", timeout=10)
    s = LLMSummarizer(instructions="Summarise tersely.", llm=engine)
    msgs = fat_turn(0, 10)
    assert s.summarize(msgs) == llm.reply
    sent = llm.requests[-1]["messages"]
    import json

    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[0]["content"] == "Summarise tersely." and json.loads(sent[1]["content"]) == msgs
