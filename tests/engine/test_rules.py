"""Rules pinned at their boundary values, each with numbers worked out by hand from the rule.

Each test here kills a small deliberate bug (a *mutant*) that the rest of the suite let through:
the comment on each names the mutant. The expected values are computed from the rule in the test
itself (the estimate counter's E1/E2 formulas are re-stated as :func:`e1`/:func:`e2` below), never
read back from the engine.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from builders import ask, asst, system, tool, user
from inspector.engine import ContextEngine
from inspector.engine.budget import compute_budget
from inspector.engine.limits import resolve_limits
from inspector.engine.managers.summarising import SummarizingConversation, summary_block
from inspector.engine.pairing import check_provider_payload, sanitize_provider_messages
from inspector.engine.tokens import EstimateCounter
from inspector.engine.trim import trim_messages_to_budget
from inspector.manifest import settings_from_dict
from inspector.redact import mask_secrets, mask_text


def e2(msgs: list[dict]) -> int:
    """E2, the history estimate (docs/design.md §3.1): floor(string chars / 4) + 4 per message."""
    return sum(len(m["content"]) for m in msgs if isinstance(m.get("content"), str)) // 4 + 4 * len(msgs)


def e1(msgs: list[dict]) -> int:
    """E1, the payload estimate (docs/design.md §3.1): E2's chars plus each call's name and arguments."""
    chars = 0
    for m in msgs:
        chars += len(m["content"]) if isinstance(m.get("content"), str) else 0
        for c in m.get("tool_calls") or ():
            chars += len(c["function"]["name"]) + len(c["function"]["arguments"])
    return chars // 4 + 4 * len(msgs)


class Fixed:
    """A summarizer returning a fixed text and counting its calls (a real object, not a mock)."""

    def __init__(self, text: str = "S") -> None:
        self.text, self.calls = text, 0

    def summarize(self, msgs: list[dict]) -> str:
        self.calls += 1
        return self.text


def turn(i: int, width: int) -> list[dict]:
    return [user(f"u{i}".ljust(width, "x")), asst(f"a{i}".ljust(width, "y"))]


# -- hysteresis: reuse while the view is AT the ceiling (mutant: `<` instead of `<=`) --------------
@pytest.mark.parametrize(("hint", "ratio"), [(600, 0.1), (777, 0.2), (1_001, 0.35)])
def test_summary_is_reused_when_the_view_lands_exactly_on_the_ceiling(hint: int, ratio: float) -> None:
    # the rule (hysteresis reuse test): reuse while E2(view) <= max(high, floor(high * (1 + r)))
    ceiling = max(hint, math.floor(Fraction(hint) * (1 + Fraction(str(ratio)))))
    s = Fixed("S")
    cm = SummarizingConversation(keep_turns=2, hysteresis_ratio=ratio, summarizer=s)
    past = [m for i in range(5) for m in turn(i, 500)]
    assert e2(past) > hint
    first = cm.manage_history(past, hint)
    assert s.calls == 1 and first[0] == summary_block(3, "S")

    # grow a sixth turn until the reused view [summary(3)] + T3 T4 T5 weighs exactly `ceiling`
    block = summary_block(3, "S")
    base = [block] + past[6:] + [user("u5"), asst("a5")]
    pad = (ceiling - e2(base)) * 4
    assert pad >= 0
    t5 = [user("u5" + "z" * pad), asst("a5")]
    view = [block] + past[6:] + t5
    assert e2(view) == ceiling

    out = cm.manage_history(past + t5, hint)
    assert cm.last_decision.action == "reused" and s.calls == 1
    assert out == view and cm.last_decision.ceiling == ceiling

    # one character past the ceiling per 4 → a new summary (the boundary is exactly there)
    cm2 = SummarizingConversation(keep_turns=2, hysteresis_ratio=ratio, summarizer=Fixed("S"))
    cm2.manage_history(past, hint)
    t5_over = [user("u5" + "z" * (pad + 4)), asst("a5")]
    assert e2([block] + past[6:] + t5_over) == ceiling + 1
    cm2.manage_history(past + t5_over, hint)
    assert cm2.last_decision.action == "summarized" and cm2.summarizer.calls == 2


# -- safety margin: ceil(max_tokens × ratio) (mutant: floor) ----------------------------------------
@pytest.mark.parametrize(("max_tokens", "ratio", "margin"), [
    (12_345, 0.1, 1_235),  # 1 234.5 → 1 235
    (1_001, 0.3, 301),  # 300.3 → 301
    (999, 0.5, 500),  # 499.5 → 500
    (12_340, 0.1, 1_234),  # exact: no rounding
])
def test_safety_margin_rounds_up(max_tokens: int, ratio: float, margin: int) -> None:
    spec = {"context_manager": {"type": "sliding-window", "params": {
        "trimmer": {"max_tokens": max_tokens, "reserve_tokens": 100, "safety_margin_ratio": ratio}}}}
    settings = settings_from_dict({"kind": "Agent", "spec": spec}).settings
    b = compute_budget(resolve_limits(settings), settings.trimmer, fixed=7, tool_tokens=0, summarizing=False)
    assert b.margin == margin
    assert b.trimmer_reserve == 100 + margin
    assert b.hard == b.hint == max_tokens - 100 - margin - 7


def test_summarising_hint_and_ceiling_from_an_odd_max_tokens() -> None:
    # max_tokens 12 345, reserve 0, ratio 0.1 → margin ceil(1 234.5) = 1 235; hard = 11 110;
    # hint = floor(11 110 / 1.1) = 10 100; ceiling = floor(10 100 × 1.1) = 11 110 (back on hard)
    spec = {"context_manager": {"type": "summarising", "params": {
        "trimmer": {"max_tokens": 12_345, "reserve_tokens": 0}}}}
    settings = settings_from_dict({"kind": "Agent", "spec": spec}).settings
    b = compute_budget(resolve_limits(settings), settings.trimmer, fixed=0, tool_tokens=0, summarizing=True,
                       hysteresis_ratio=0.1)
    assert (b.margin, b.hard, b.hint, b.ceiling) == (1_235, 11_110, 10_100, 11_110)


# -- write-back counts user TURNS, a preamble is one (mutant: counts user messages) -----------------
def test_write_back_counts_a_preamble_as_a_turn() -> None:
    settings = settings_from_dict({"kind": "Agent", "spec": {
        "context_manager": {"type": "sliding-window", "params": {"keep_turns": 2}}}}).settings
    e = ContextEngine(settings, counter="estimate", summarizer="drop")
    e.user("")  # the agent speaks first: a preamble with no user row
    greeting = e.commit("Hello, how can I help?")
    assert greeting.action == "unchanged"
    for i in (1, 2):
        e.user(f"q{i}")
        rec = e.commit(f"a{i}")
    # preamble + 2 user turns = 3 turns > keep 2 → the window slides the preamble out
    assert rec.action == "window-slid"
    assert [m["content"] for m in e.conversation.committed_messages] == ["q1", "a1", "q2", "a2"]


def test_write_back_with_a_preamble_and_a_summarising_manager() -> None:
    settings = settings_from_dict({"kind": "Agent", "spec": {
        "context_manager": {"type": "summarising", "params": {"keep_turns": 2, "summarizer": "drop"}}}}).settings
    e = ContextEngine(settings, counter="estimate", summarizer="drop")
    e.user("")
    e.commit("Welcome.")
    e.user("q1")
    e.commit("a1")
    e.user("q2")
    rec = e.commit("a2")
    # 3 turns (the preamble counts) > keep 2 → the oldest turn (the preamble) is dropped
    assert rec.action == "dropped" and rec.folded_turns == 1
    assert [m["content"] for m in e.conversation.committed_messages] == ["q1", "a1", "q2", "a2"]


# -- the trimmer removes whole groups (mutants: row-by-row removal in history / working memory) ----
def _repairs(msgs: list[dict]) -> list[tuple[str, str | None]]:
    return [(r.kind, r.tool_call_id) for r in sanitize_provider_messages(msgs).repairs]


def test_trimmer_drops_a_whole_non_final_history_group() -> None:
    counter = EstimateCounter()
    big_ask = ask("c1", args="x" * 400)  # the ask is heavy, its result light
    res = tool("c1", "r")
    msgs = [system("s"), big_ask, res, asst("done"), user("now")]
    # dropping the ask alone would already fit: the budget sits between "ask only" and "ask + result"
    without_ask = [msgs[0], res, msgs[3], msgs[4]]
    budget = e1(without_ask)
    assert e1([msgs[0], msgs[3], msgs[4]]) < budget < e1(msgs)
    out = trim_messages_to_budget(msgs, max_tokens=budget, reserve=0, fixed=0, pin_tail=[], counter=counter)
    assert out.messages == [msgs[0], msgs[3], msgs[4]]
    assert [(r.message, r.source) for r in out.removed] == [(big_ask, "history"), (res, "history")]
    # no split left for the final check to repair: trimming adds no repair
    check_provider_payload(out.messages)
    assert _repairs(out.messages) == _repairs(msgs) == []


def test_trimmer_drops_a_whole_old_working_memory_group() -> None:
    counter = EstimateCounter()
    w1, r1 = ask("w1", args="x" * 400), tool("w1", "r")
    w2, r2 = ask("w2"), tool("w2", "r2")
    msgs = [system("s"), user("now")]
    pin = [w1, r1, w2, r2]
    budget = e1(msgs + [r1, w2, r2])  # fits once the ask alone is gone
    assert e1(msgs + [w2, r2]) < budget < e1(msgs + pin)
    out = trim_messages_to_budget(msgs, max_tokens=budget, reserve=0, fixed=0, pin_tail=pin, counter=counter)
    assert out.messages == msgs + [w2, r2]
    assert [(r.message, r.source) for r in out.removed] == [(w1, "working_memory"), (r1, "working_memory")]
    check_provider_payload(out.messages)
    assert _repairs(out.messages) == []


def test_trimmer_keeps_a_parallel_group_whole_through_the_engine() -> None:
    """End to end: after trimming an old parallel ask the assembly's repair log is empty."""
    q0, big = user("q0"), ask("p1", "p2", args="x" * 2_000)
    ta, tb, done0, q1 = tool("p1", "a"), tool("p2", "b"), asst("done0"), user("q1")
    # the trimmer's budget fits the history once the ask alone is gone — but the rule drops its results too
    cap = e1([ta, tb, done0, q1])
    settings = settings_from_dict({"kind": "Agent", "spec": {
        "context_manager": {"type": "stack", "params": {"trimmer": {
            "max_tokens": cap, "reserve_tokens": 0, "safety_margin_ratio": 0}}}}}).settings
    e = ContextEngine(settings, counter="estimate", summarizer="drop")
    e.user(q0)
    for row in (big, ta, tb):
        e.record(row)
    e.commit("done0")
    e.user(q1)
    out = e.assemble()
    assert [m["content"] for m in out.messages] == ["done0", "q1"]
    assert [r.message for r in out.trimmed] == [q0, big, ta, tb]
    assert out.repairs == []  # nothing left split for the final check to repair


# -- API keys of 12+ characters after `sk-` are masked (mutant: only 20+) ---------------------------
@pytest.mark.parametrize("body", ["abcdefghijkl", "A1b2C3d4E5f6G7h8I9j", "0123456789ab"])
def test_short_sk_keys_are_masked(body: str) -> None:
    assert 12 <= len(body) <= 19
    text = f"key sk-{body} in use"
    assert mask_text(text) == f"key sk-{body[:3]}…**** in use"
    assert mask_secrets({"note": text}) == {"note": f"key sk-{body[:3]}…**** in use"}
    assert mask_text(f"sk-proj-{body}") == f"sk-proj-{body[:3]}…****"


# -- found by the paired-payload trim property: two trimmer splits, fixed -------------------------
def test_trimmer_cuts_the_leading_answers_of_an_ask_that_ends_history_one_by_one() -> None:
    # Q24: a turn resumed after a HITL pause: the committed ask ends the history, its answers open working
    # memory, each a group of one there; the first goes for budget, the last stays (over budget), and the
    # repair answers the cut call with an empty result
    held = ask("call_1", "call_2")
    a1, a2 = tool("call_1", "y" * 200), tool("call_2", "")
    out = trim_messages_to_budget([held], max_tokens=1, reserve=0, fixed=0, pin_tail=[a1, a2],
                                  counter=EstimateCounter())
    assert out.messages == [held, a2] and out.over_budget
    assert [(r.message, r.source, r.reason) for r in out.removed] == [(a1, "working_memory", "budget")]
    assert _repairs(out.messages) == [("empty_result_synthesised", "call_1")]


def test_hitl_rule_takes_no_answer_for_an_ask_answered_in_its_own_group() -> None:
    # the dropped ask(call_1) was answered inside history; tool(call_1) in WM answers the ask that ends history
    old, old_res, last, live = ask("call_1"), tool("call_1"), ask("call_1"), tool("call_1", "live")
    out = trim_messages_to_budget([old, old_res, last], max_tokens=1, reserve=0, fixed=0, pin_tail=[live],
                                  counter=EstimateCounter())
    assert out.messages == [last, live]
    assert [(r.message, r.reason) for r in out.removed] == [(old, "budget"), (old_res, "budget")]
    assert _repairs(out.messages) == []
