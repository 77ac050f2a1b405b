"""Decision records of the sliding-window and stack managers, worked out from their rules.

The managers' output rows are pinned elsewhere (test_manager_rules); here the record each call leaves
(``last_decision``: action, turns kept and dropped, the rows folded away) is checked too, since the
replay, the tables and the "why did my message disappear?" view all read it.
"""

from __future__ import annotations

import pytest
from builders import T, ask, asst, system, tool, toolturn, user

from inspector.engine.managers.sliding_window import SlidingWindowConversation
from inspector.engine.managers.stack import StackConversation
from inspector.engine.managers.summarising import is_summary_block, summary_block, summary_body, summary_turns


def turns(n: int) -> list[dict]:
    return [m for i in range(1, n + 1) for m in T(i)]


# --- sliding window: keep the last N user turns (a preamble counts as one) -------------------------
@pytest.mark.parametrize("n", [1, 2])
def test_window_at_or_under_its_size_changes_nothing_and_says_so(n: int) -> None:
    cm = SlidingWindowConversation(keep_turns=2)
    past = turns(n)
    assert cm.manage_history(past, 0) == past
    d = cm.last_decision
    assert (d.action, d.kept_turns, d.dropped_turns, d.folded) == ("unchanged-too-few-turns", n, 0, [])


def test_window_over_its_size_slides_whole_turns_and_records_them() -> None:
    cm = SlidingWindowConversation(keep_turns=2)
    preamble = [system("[Conversation summary — 1 earlier exchange(s)]\nS")]
    past = preamble + turns(3)  # the preamble is a turn: 4 turns, keep 2
    out = cm.manage_history(past, 0)
    assert out == past[3:]
    d = cm.last_decision
    assert (d.action, d.kept_turns, d.dropped_turns) == ("window-slid", 2, 2)
    assert all(a is b for a, b in zip(d.folded, past[:3], strict=True)) and len(d.folded) == 3


@pytest.mark.parametrize(("kwargs", "size"), [
    ({}, 10),  # the default
    ({"keep_turns": 3, "window_size": 5, "max_turns": 7}, 3),  # keep_turns wins
    ({"window_size": 5, "max_turns": 7}, 5),  # then window_size
    ({"max_turns": 7}, 7),
    ({"keep_turns": "4"}, 4),  # an integer given as text
    ({"keep_turns": True, "window_size": 6}, 6),  # a bool is no size
    ({"keep_turns": "many", "max_turns": 2}, 2),  # nor is text that is no number
    ({"keep_turns": 0}, 1),  # at least one turn
    ({"keep_turns": -3}, 1),
])
def test_window_size_precedence_and_floor(kwargs: dict, size: int) -> None:
    cm = SlidingWindowConversation(**kwargs)
    assert cm.keep_turns == size and cm.turn_cap == size


# --- stack: cap the number of messages, cutting at a tool-group start -----------------------------
def test_stack_under_its_cap_records_the_turn_count() -> None:
    cm = StackConversation(max_messages=10)
    past = [system("S"), *turns(2)]  # a leading non-user row counts as a turn: 3
    assert cm.manage_history(past, 0) == past
    assert (cm.last_decision.action, cm.last_decision.kept_turns) == ("unchanged-under-budget", 3)
    uncapped = StackConversation()
    assert len(uncapped.manage_history(turns(4), 0)) == 8
    assert (uncapped.last_decision.action, uncapped.last_decision.kept_turns) == ("unchanged-under-budget", 4)
    assert uncapped.manage_history([], 0) == [] and uncapped.last_decision.kept_turns == 0


def test_stack_over_its_cap_keeps_a_whole_tool_group_and_records_the_cut() -> None:
    cm = StackConversation(max_messages=2)
    past = [*T(1), user("q2"), ask("c"), tool("c", "r"), asst("done")]
    # the last 2 rows start at a tool row: the cut steps back to its ask, so 3 rows stay (a preamble turn)
    out = cm.manage_history(past, 0)
    assert out == past[3:]
    d = cm.last_decision
    assert (d.action, d.kept_turns, d.dropped_turns) == ("stack-capped", 1, 1)
    assert d.folded == past[:3] and all(a is b for a, b in zip(d.folded, past[:3], strict=True))


def test_stack_turn_count_follows_a_growing_log() -> None:
    """The uncapped stack counts turns incrementally while the log only grows; the count must equal a
    recount from scratch at every step, also when the log is replaced by another one."""
    cm = StackConversation()
    log: list[dict] = []
    cm.manage_history(log, 0)
    log.append(asst("greeting"))  # the agent speaks first: a preamble turn
    cm.manage_history(log, 0)
    assert cm.last_decision.kept_turns == 1
    for i in range(1, 5):
        log.extend(toolturn(f"c{i}"))  # one user row and three others per turn
        cm.manage_history(log, 0)
        assert cm.last_decision.kept_turns == 1 + i
    other = [asst("greeting"), *turns(2)]  # a new log (not an extension): recounted, preamble included
    cm.manage_history(other, 0)
    assert cm.last_decision.kept_turns == 3
    # another list whose row at the old length is the old last row: still a new log, recounted
    base = turns(2)  # 2 turns
    cm.manage_history(base, 0)
    lookalike = [asst("g"), asst("x"), asst("y"), base[-1], *T(3)]  # preamble + 1 user turn
    cm.manage_history(lookalike, 0)
    assert cm.last_decision.kept_turns == 2
    # the same list rewritten in place (its row at the old length changed): recounted
    log = turns(2)
    cm.manage_history(log, 0)
    log[:] = [asst("g"), asst("x"), asst("y"), asst("z"), *T(3)]
    cm.manage_history(log, 0)
    assert cm.last_decision.kept_turns == 2


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "3"])
def test_stack_cap_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(ValueError, match=r"stack: max_messages must be an integer >= 1 \(got "):
        StackConversation(max_messages=bad)  # type: ignore[arg-type]


def test_stack_exactly_at_its_cap_is_unchanged() -> None:
    cm = StackConversation(max_messages=4)
    past = turns(2)
    assert cm.manage_history(past, 0) == past
    assert (cm.last_decision.action, cm.last_decision.kept_turns, cm.last_decision.folded) == (
        "unchanged-under-budget", 2, [])


def test_a_fresh_manager_has_made_no_decision_and_non_summarising_ones_refuse_a_summarizer() -> None:
    for cm in (SlidingWindowConversation(keep_turns=2), StackConversation()):
        assert cm.last_decision is None
        assert cm.turn_cap in (2, None) and (cm.message_cap is None)
        with pytest.raises(TypeError, match=rf"^{type(cm).__name__} takes no summarizer$"):
            cm.bind_summarizer(object())


# --- summary blocks: the format other tools read (docs/design.md §3.4) ----------------------------
@pytest.mark.parametrize(("turns_", "text"), [(3, "one line"), (12, "first\nsecond\nthird"), (1, "")])
def test_summary_block_round_trips_its_count_and_text(turns_: int, text: str) -> None:
    block = summary_block(turns_, text)
    assert block["role"] == "system" and is_summary_block(block)
    assert block["content"] == f"[Conversation summary — {turns_} earlier exchange(s)]\n{text}"
    assert summary_body(block) == text  # everything after the header line, inner newlines kept
    assert summary_turns(block) == turns_


@pytest.mark.parametrize(("msg", "body", "count"), [
    ({"role": "system", "content": "[Conversation summary — 4 earlier exchange(s)]"}, "", 4),  # header only
    ({"role": "system", "content": None}, "", 0),
    ({"role": "system"}, "", 0),
    ({"role": "system", "content": "[Conversation summary — many]\nS"}, "S", 0),  # no count in the header
])
def test_summary_body_and_count_of_odd_blocks(msg: dict, body: str, count: int) -> None:
    assert summary_body(msg) == body and summary_turns(msg) == count


def test_only_a_system_row_with_the_prefix_is_a_summary_block() -> None:
    assert not is_summary_block({"role": "user", "content": "[Conversation summary — 1 earlier exchange(s)]\nS"})
    assert not is_summary_block({"role": "system", "content": "You are helpful."})
    assert not is_summary_block({"role": "system", "content": None})
