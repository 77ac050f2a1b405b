"""The token trimmer (docs/design.md §3.7), with exact numbers under the E1 estimate (§3.1).

Bug class guarded: a payload over the model's budget, or a trim that deletes instructions (the
system band, the current user message, the live tool round) or orphans a tool result.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builders import T, ask, asst, system, tool, tool_group, toolturn, user

from inspector.engine.pairing import check_provider_payload, sanitize_provider_messages
from inspector.engine.tokens import EstimateCounter
from inspector.engine.trim import trim_budget, trim_messages_to_budget
from inspector.engine.types import Message


def e1(msgs: list[Message]) -> int:
    return EstimateCounter().count(msgs)


def _pos(seq: list[Message], obj: Message) -> int:
    """Index of ``obj`` in ``seq`` by identity (equal dicts are distinct rows)."""
    return next(i for i, m in enumerate(seq) if m is obj)


def trim(messages: list[Message], pin_tail: list[Message] | None = None, *, max_tokens: int, reserve: int = 0,
         fixed: int = 0, counter: Any = None) -> Any:
    return trim_messages_to_budget(messages, max_tokens=max_tokens, reserve=reserve, fixed=fixed,
                                   pin_tail=pin_tail or [], counter=counter or EstimateCounter())


def _s39() -> list[Message]:
    return [system("S" * 40), user("a" * 400), asst("b" * 400), user("c" * 400), asst("d" * 400), user("q" * 40)]


def _s43() -> tuple[list[Message], list[Message]]:
    committed = tool_group("committed", 30)
    live = tool_group("live", 30)
    return [user("x" * 40), user("q"), committed[0], user("now")], [committed[1], *live]


def _fifty_users() -> tuple[list[Message], list[Message]]:
    return [user(f"turn {i}") for i in range(50)], tool_group("latest")


def _eight_groups() -> list[Message]:
    return [m for i in range(8) for m in tool_group(f"call_{i}", 400)]


# (messages, pin_tail, max_tokens, reserve, fixed, kept indices into messages + pin_tail, over_budget)
TABLE = [
    pytest.param(  # 38: under budget → unchanged
        _s39(), [], 444, 0, 0, list(range(6)), False, id="38-under-budget-unchanged",
    ),
    pytest.param(  # 38: max_tokens ≤ 0 disables trimming, however large the payload
        _s39(), [], 0, 0, 0, list(range(6)), False, id="38-max-tokens-0-disabled",
    ),
    pytest.param(  # 38: ... negative too
        _s39(), tool_group("w"), -1, 0, 0, list(range(8)), False, id="38-negative-disabled",
    ),
    pytest.param(  # 39: max 300 drops the oldest exchange → [system, user c, assistant d, user q] (E1 236)
        _s39(), [], 300, 0, 0, [0, 3, 4, 5], False, id="39-max-300",
    ),
    pytest.param(  # 39: max 100 → [system, user q] (E1 28)
        _s39(), [], 100, 0, 0, [0, 5], False, id="39-max-100",
    ),
    pytest.param(  # 39 via reserve + fixed: 400 − 60 − 40 = the same 300 budget
        _s39(), [], 400, 60, 40, [0, 3, 4, 5], False, id="39-reserve-and-fixed",
    ),
    pytest.param(  # 40: eight history tool groups, budget one group + 40 → only call_7's group, paired
        _eight_groups(), [], e1(tool_group("call_7", 400)) + 40, 0, 0, [14, 15], False, id="40-groups-atomic",
    ),
    pytest.param(  # 40: budget = the payload minus group 0's ask alone: dropping just that ask would fit,
        # the rule drops its result too (a splitting trimmer stops after the ask and leaves an orphan)
        _eight_groups(), [], e1(_eight_groups()[1:]), 0, 0, list(range(2, 16)), False, id="40-groups-atomic-mid",
    ),
    pytest.param(  # 41: four WM groups, budget ≈ one group → oldest WM groups dropped, c4 survives
        [], [m for c in ("c1", "c2", "c3", "c4") for m in tool_group(c)], e1(tool_group("cN")) + 4, 0, 0,
        [6, 7], False, id="41-pin-tail-trimmed",
    ),
    pytest.param(  # 41: a single WM group far over budget is kept whole (warning, over_budget)
        [], tool_group("only", 5000), 10, 0, 0, [0, 1], True, id="41-single-wm-group-kept",
    ),
    pytest.param(  # 41: under budget the WM tail is untouched
        [system("sys")], tool_group("c1"), 10_000, 0, 0, [0, 1, 2], False, id="41-under-budget-wm-untouched",
    ),
    pytest.param(  # 42: fifty small users + one WM group → history trimmed, WM group intact at the end
        *_fifty_users(), e1(tool_group("latest")) + e1([user("turn 48"), user("turn 49")]) + 8, 0, 0,
        [47, 48, 49, 50, 51], False, id="42-history-before-wm",
    ),
    pytest.param(  # 43: dropping the committed ask also drops tool(committed) from the front of the pin tail
        *_s43(), 40, 0, 0, [3, 5, 6], False, id="43-hitl-answer-dropped-with-ask",
    ),
    pytest.param(  # the system head is never trimmed, even alone over budget
        [system("S" * 400), user("a" * 40), user("q")], [], 20, 0, 0, [0, 2], True, id="system-head-kept",
    ),
    pytest.param(  # the last non-pinned message always survives
        [user("a" * 40), user("q" * 400)], [], 20, 0, 0, [1], True, id="last-message-kept",
    ),
    pytest.param(  # ... and so does the last non-pinned group (dropping it would empty the history part)
        [user("a" * 40), ask("k", args="x" * 200), tool("k", "y" * 200)], [], 20, 0, 0, [1, 2], True,
        id="last-group-kept",
    ),
    pytest.param(  # negative reserve / fixed are clamped to 0
        _s39(), [], 300, -50, -50, [0, 3, 4, 5], False, id="negative-reserve-fixed-clamped",
    ),
    pytest.param(  # a history tool group whose results sit in the pinned tail (HITL) and a big live round
        [user("x" * 400), ask("h1"), asst("done"), user("now")], [tool("h1"), *tool_group("live", 80)], 50, 0, 0,
        [3, 5, 6], True, id="hitl-then-over-budget",
    ),
]


@pytest.mark.parametrize(("messages", "pin_tail", "max_tokens", "reserve", "fixed", "kept", "over"), TABLE)
def test_trim_scenarios(messages: list[Message], pin_tail: list[Message], max_tokens: int, reserve: int,
                        fixed: int, kept: list[int], over: bool) -> None:
    before = copy.deepcopy((messages, pin_tail))
    everything = messages + pin_tail
    result = trim(messages, pin_tail, max_tokens=max_tokens, reserve=reserve, fixed=fixed)
    assert [_pos(everything, m) for m in result.messages] == kept
    assert all(a is everything[i] for a, i in zip(result.messages, kept, strict=True))
    assert result.over_budget is over
    assert result.tokens == e1(result.messages)
    if max_tokens > 0:
        assert (result.tokens > trim_budget(max_tokens, reserve, fixed)) is over
    dropped = [i for i in range(len(everything)) if i not in kept]
    removed = sorted((_pos(everything, r.message), r.source) for r in result.removed)  # listed in removal order
    assert removed == [(i, "history" if i < len(messages) else "working_memory") for i in dropped]
    assert (messages, pin_tail) == before, "input mutated"
    # trimming leaves no split group behind: every row the final repair touches after trimming was
    # already repaired in the untrimmed payload (here: none except the hitl case's stray rows)
    assert _repaired(result.messages) <= _repaired(everything)


def _repaired(rows: list[Message]) -> set[int]:
    """Identities of the rows the pairing repair changes or drops (an ask for ask_* and synthesised results)."""
    return {id(rows[r.index]) for r in sanitize_provider_messages(rows).repairs if r.index is not None}


def test_the_oldest_history_goes_first_with_exact_e1_numbers() -> None:
    msgs = _s39()
    assert e1(msgs) == 444
    at_300 = trim(msgs, max_tokens=300)
    assert at_300.messages == [msgs[0], msgs[3], msgs[4], msgs[5]]
    assert at_300.tokens == 236
    assert [r.message for r in at_300.removed] == [msgs[1], msgs[2]]
    at_100 = trim(msgs, max_tokens=100)
    assert at_100.messages == [msgs[0], msgs[5]]
    assert at_100.tokens == 28
    assert e1(msgs[:1] + msgs[5:]) == 28


def test_hitl_removals_are_reported() -> None:
    messages, pin_tail = _s43()
    result = trim(messages, pin_tail, max_tokens=40)
    assert result.messages == [messages[3], pin_tail[1], pin_tail[2]]
    assert [(r.message["role"], r.source, r.reason) for r in result.removed] == [
        ("user", "history", "budget"),
        ("user", "history", "budget"),
        ("assistant", "history", "budget"),
        ("tool", "working_memory", "answer_of_dropped_ask"),
    ]
    check_provider_payload(result.messages)


def test_hitl_rule_takes_each_answer_once_and_stops_at_a_foreign_row() -> None:
    messages = [user("x" * 400), ask("a", "b"), user("now")]
    pin_tail = [tool("a"), tool("a", "dup"), tool("b"), *tool_group("live")]
    result = trim(messages, pin_tail, max_tokens=40)
    hitl = [r.message for r in result.removed if r.reason == "answer_of_dropped_ask"]
    assert hitl == [pin_tail[0]], "the second 'a' is not an answer of the dropped ask any more"


def test_reference_committed_ask_with_results_in_wm_stays_paired() -> None:
    """test_token_budget: dropping the committed assistant must not leave orphans in the pin tail."""
    history = [user("q"), tool_group("committed", 30)[0]]
    pin_tail = [tool_group("committed", 30)[1], *tool_group("live", 30)]
    result = trim(history, pin_tail, max_tokens=e1(pin_tail) + 20)
    check_provider_payload(result.messages)
    assert result.messages[-2:] == pin_tail[-2:]


def test_tiny_budget_keeps_the_live_round_over_fat_history() -> None:
    """A tiny trimmer budget in the middle of a turn: four fat committed turns, max 40 → ends with the live result."""
    history = [m for i in range(4) for m in toolturn(f"old_{i}", "z" * 800)]
    live = [ask("live"), tool("live", "keep-me")]
    go = user("go")
    result = trim([*history, go], live, max_tokens=40)
    assert result.messages == [history[-1], go, *live]
    assert result.messages[-1]["content"] == "keep-me"
    check_provider_payload(result.messages)  # paired as trimmed: nothing for the repair to do


def test_summary_block_is_a_normal_history_row() -> None:
    summary = system("[Conversation summary — 3 earlier exchange(s)]\n" + "s" * 400)
    msgs = [system("band"), summary, *T(1, 40), user("q")]
    result = trim(msgs, max_tokens=60)
    assert summary not in result.messages and result.messages[0] is msgs[0]


class _Spy:
    """A counter that records how often it is asked, to hold the trimmer to "count each message once"."""

    name = "spy"

    def __init__(self) -> None:
        self.inner = EstimateCounter()
        self.unit_calls = 0
        self.total_calls = 0

    def unit(self, msg: Message) -> int:
        self.unit_calls += 1
        return self.inner.unit(msg)

    def total(self, units: int, n: int) -> int:
        self.total_calls += 1
        return self.inner.total(units, n)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_each_message_is_measured_once_and_totals_are_running_sums() -> None:
    history = [m for i in range(300) for m in (*T(i, 50), *tool_group(f"h{i}", 30))]
    pin_tail = [m for i in range(20) for m in tool_group(f"w{i}", 30)]
    spy = _Spy()
    result = trim([*history, user("now")], pin_tail, max_tokens=120, counter=spy)
    assert spy.unit_calls == len(history) + 1 + len(pin_tail)
    assert spy.total_calls <= len(result.removed) + 2
    assert result.tokens == e1(result.messages) and not result.over_budget


def test_tiktoken_style_counter_total_is_units() -> None:
    class PerMessage(EstimateCounter):
        """total(units, n) = units, like the tiktoken counter (overhead inside each unit)."""

        name = "fake"

        def _measure(self, msg: Message) -> int:
            return 3 + len(str(msg.get("content") or ""))

        def total(self, units: int, n: int) -> int:
            return units

    msgs = [system("s"), user("a" * 50), asst("b" * 50), user("q")]
    result = trim_messages_to_budget(msgs, max_tokens=10, reserve=0, fixed=0, pin_tail=[], counter=PerMessage())
    assert result.messages == [msgs[0], msgs[3]] and result.tokens == 8


def test_large_history_trims_in_linear_time() -> None:
    history = [m for i in range(20_000) for m in (user(f"u{i}"), ask(f"c{i}"), tool(f"c{i}"), asst("ok"))]
    spy = _Spy()
    result = trim([*history, user("now")], max_tokens=200, counter=spy)
    assert result.tokens <= 200 and result.messages[-1]["content"] == "now"
    assert len(result.removed) + len(result.messages) == len(history) + 1
    # linear: one measurement per row, one running total per removed group (3 groups per 4-row turn) + 2
    assert spy.unit_calls == len(history) + 1
    assert spy.total_calls <= 3 * len(history) // 4 + 2


# -- Q24: the trimmer's groups are the reference's (an ask plus its contiguous *matching* results) --------
def test_a_mislabelled_row_after_a_trimmed_ask_is_a_group_of_one() -> None:
    """Q24: the round is the ask plus its contiguous *matching* results; a mislabelled row after the
    ask is a group of its own, and so is every result after it. Trimming takes the ask, then the
    stray row, and stops as soon as the rest fits: the genuine result stays, and the pairing repair
    drops it (its ask has gone)."""
    big = ask("c1", args="x" * 400)
    stray, res = tool("zz", "s"), tool("c1", "r")
    msgs = [big, stray, res, asst("done"), user("now")]
    budget = e1([res, msgs[3], msgs[4]])  # exactly what is left once the ask and the stray row are gone
    assert e1([stray, res, msgs[3], msgs[4]]) > budget
    out = trim(msgs, max_tokens=budget)
    assert out.messages == [res, msgs[3], msgs[4]] and out.tokens == budget and not out.over_budget
    assert [(r.message, r.reason) for r in out.removed] == [(big, "budget"), (stray, "budget")]
    assert [(r.kind, r.tool_call_id) for r in sanitize_provider_messages(out.messages).repairs] == [
        ("orphan_dropped", "c1")]
    # the same round in working memory: three groups, the newest (the result alone) stays, over budget
    wm = trim([user("now")], [big, stray, res], max_tokens=1)
    assert wm.messages[1:] == [res] and wm.over_budget
    assert [r.message for r in wm.removed] == [big, stray]


def test_a_duplicate_result_matches_its_ask() -> None:
    """Q24: "matching" is an id the ask declares, so a second result under a declared id stays in
    the ask's group (the repair drops the duplicate later); the first non-matching row ends it."""
    a = ask("c1", args="x" * 400)
    first, dup, stray = tool("c1", "r"), tool("c1", "again"), tool("zz", "s")
    now = user("now")
    out = trim([a, first, dup, stray, now], max_tokens=e1([now]))
    assert [r.message for r in out.removed] == [a, first, dup, stray] and out.messages == [now]
    out = trim([a, first, dup, stray, now], max_tokens=e1([stray, now]))
    assert [r.message for r in out.removed] == [a, first, dup] and out.messages == [stray, now]


def _three_results_case() -> tuple[list[Message], list[Message], int]:
    """An ask for three calls ends the history; its three results wait in working memory (a turn
    resumed after a HITL pause). The budget holds the system row, the ask and one result."""
    sys_row = system("s" * 40)
    last = ask("call_a", "call_b", "call_c")
    results = [tool("call_a", "A" * 400), tool("call_b", "B" * 400), tool("call_c", "C" * 400)]
    return [sys_row, last], results, e1([sys_row, last, results[2]])


def test_results_of_the_ask_ending_history_leave_one_by_one_and_the_repair_answers_their_calls() -> None:
    """Q24, the reference's behaviour: the results at the front of working memory are groups of one,
    so the leading ones are dropped one by one for budget, the last one stays, and the pairing repair
    answers the two cut calls with empty results, in declaration order."""
    msgs, results, budget = _three_results_case()
    # E1 = C // 4 + 4n: system 40 chars, the ask 3 × ("f" + "{}") = 9, one result 400: 449 // 4 + 12
    assert budget == 124
    out = trim(msgs, results, max_tokens=budget)
    assert out.messages == [*msgs, results[2]] and out.tokens == budget and not out.over_budget
    assert [(r.message, r.source, r.reason) for r in out.removed] == [
        (results[0], "working_memory", "budget"), (results[1], "working_memory", "budget")]
    fixed = sanitize_provider_messages(out.messages)
    assert [(r.kind, r.tool_call_id) for r in fixed.repairs] == [
        ("empty_result_synthesised", "call_a"), ("empty_result_synthesised", "call_b")]
    assert fixed.messages[2:] == [results[2], {"role": "tool", "tool_call_id": "call_a", "content": ""},
                                  {"role": "tool", "tool_call_id": "call_b", "content": ""}]
    check_provider_payload(fixed.messages)
    # two results need (40 + 9 + 800) // 4 + 16 = 228: at 227 the second still goes, at 228 it stays
    assert trim(msgs, results, max_tokens=227).removed == out.removed
    assert [r.message for r in trim(msgs, results, max_tokens=228).removed] == [results[0]]


def test_an_answer_after_the_ask_ending_history_is_not_taken_for_an_older_dropped_ask() -> None:
    """HITL rule: the rows at the front of working memory answer the ask right before them. An older
    ask that is dropped and shares an unanswered id must not take that answer along."""
    old = ask("call_2", "call_1", args="x" * 200)
    old_res = tool("call_2", "r2")
    last, answer = ask("call_1"), tool("call_1", "live")
    out = trim([old, old_res, last], [answer], max_tokens=1)
    assert out.messages == [last, answer]
    assert [(r.message, r.reason) for r in out.removed] == [(old, "budget"), (old_res, "budget")]
    assert sanitize_provider_messages(out.messages).repairs == []


# -- killing mutmut survivors (docs/mutation.md) ------------------------------------------------------
@pytest.mark.parametrize(("max_tokens", "reserve", "fixed", "budget"), [
    (100, 60, 50, 0),  # reserve + fixed beyond the cap: nothing left, never negative (and never 1)
    (100, 100, 0, 0),
    (100, -5, -7, 100),  # negative parts count as 0
    (12_345, 1_235, 110, 11_000),
    (100, 1, 1, 98),  # the smallest positive reserve and fixed count in full
    (100, 98, 1, 1),  # one token left is 1, not floored to 0
])
def test_trim_budget_is_the_cap_minus_reserve_and_fixed_floored_at_zero(max_tokens: int, reserve: int, fixed: int,
                                                                         budget: int) -> None:
    assert trim_budget(max_tokens, reserve, fixed) == budget


def test_answers_of_the_ask_ending_history_are_groups_of_one_each() -> None:
    """Q24: a result at the front of working memory does not follow its ask there, so it is a group
    of one, a second row under the same id too: both go before the newest group when the budget is
    short (the repair then strips the unanswered ask, which is no longer last)."""
    last = ask("a")
    first, dup, live_ask, live_res = tool("a", "r"), tool("a", "dup"), ask("live"), tool("live", "x")
    out = trim([last], [first, dup, live_ask, live_res], max_tokens=1)
    assert out.messages == [last, live_ask, live_res]
    assert [(r.message, r.source, r.reason) for r in out.removed] == [
        (first, "working_memory", "budget"), (dup, "working_memory", "budget")]


def test_a_payload_exactly_at_the_budget_after_a_drop_loses_nothing_more() -> None:
    """Trimming stops as soon as the payload fits: ``total <= budget`` (exactly at it is within)."""
    msgs = [system("s"), user("a" * 400), asst("b" * 40), user("c" * 40), user("now")]
    budget = e1([msgs[0], *msgs[2:]])  # the first row alone must go; then the payload sits on the budget
    assert budget < e1(msgs)
    out = trim(msgs, max_tokens=budget)
    assert out.messages == [msgs[0], *msgs[2:]] and out.tokens == budget and not out.over_budget
    # the same in working memory: one old group out, the rest exactly at the budget
    w_old, w_mid, w_new = tool_group("w1", 400), tool_group("w2", 40), tool_group("w3", 40)
    pin = [*w_old, *w_mid, *w_new]
    budget = e1([user("now"), *w_mid, *w_new])
    out = trim([user("now")], pin, max_tokens=budget)
    assert out.messages[1:] == [*w_mid, *w_new] and out.tokens == budget


def test_hitl_rule_leaves_a_late_duplicate_of_an_answered_id_to_the_budget() -> None:
    """A dropped ask whose own group answered its id owes nothing: a later row under that id at the
    front of working memory is not an answer of the dropped ask (it stays when the budget allows)."""
    old, old_res, now = ask("a", args="x" * 400), tool("a", "r"), user("now")
    late, live_ask, live_res = tool("a", "late"), ask("live"), tool("live", "x")
    budget = e1([now, late, live_ask, live_res])
    out = trim([old, old_res, now], [late, live_ask, live_res], max_tokens=budget)
    assert out.messages == [now, late, live_ask, live_res]
    assert [(r.message, r.reason) for r in out.removed] == [(old, "budget"), (old_res, "budget")]


def test_hitl_rule_owes_only_ids_the_dropped_group_itself_left_unanswered() -> None:
    """An earlier group's result under the same id does not answer a later ask: when that later ask is
    dropped, the answer at the front of working memory goes with it (reason ``answer_of_dropped_ask``)."""
    first, first_res, second, now = ask("c"), tool("c", "r"), ask("c"), user("now")
    hitl, live_ask, live_res = tool("c", "hitl"), ask("live"), tool("live", "x")
    out = trim([first, first_res, second, now], [hitl, live_ask, live_res], max_tokens=1)
    assert out.messages == [now, live_ask, live_res]
    assert [(r.message, r.reason) for r in out.removed] == [
        (first, "budget"), (first_res, "budget"), (second, "budget"), (hitl, "answer_of_dropped_ask")]


def test_over_budget_is_logged_with_the_budget_and_what_is_pinned(caplog: pytest.LogCaptureFixture) -> None:
    """Never silent: a trim that cannot fit says so, naming the budget, the pinned tokens and the
    newest working-memory group's size."""
    now, old, live = user("n" * 40), tool_group("old", 40), tool_group("live", 40)
    with caplog.at_level("WARNING", logger="inspector.engine.trim"):
        out = trim([now], [*old, *live], max_tokens=7)  # the old group goes, the newest (2 rows) stays
    assert out.over_budget and out.tokens == e1([now, *live])
    (text,) = [r.getMessage() for r in caplog.records]
    assert text.startswith(f"token budget 7 exceeded by pinned content alone (~{out.tokens} tokens: system band, "
                           "last history group, newest working-memory group of 2 row(s))")
    assert text.endswith("; raise the budget or inject less")


# -- the incremental trimmer on its own: the reference's result from running sums ----------------------
def _with_sums(messages: list[Message], pin_tail: list[Message], max_tokens: int, *, owned: bool = False) -> Any:
    from inspector.engine.history import leading_group_size
    from inspector.engine.trim import RowSums, trim_with_sums

    c = EstimateCounter()
    mu, pu = [c.unit(m) for m in messages], [c.unit(m) for m in pin_tail]
    chain, i = [], 0
    while i < len(pin_tail):
        chain.append(i)
        i += leading_group_size(pin_tail, i)
    return trim_with_sums(messages, max_tokens=max_tokens, reserve=0, fixed=0, pin_tail=pin_tail, counter=c,
                          sums=RowSums(msg_sum=lambda lo, hi: sum(mu[lo:hi]), msg_total=sum(mu),
                                       pin_units=lambda k: pu[k], pin_sum=lambda lo, hi: sum(pu[lo:hi]),
                                       pin_total=sum(pu), pin_chain=chain), owned=owned)


def _hitl_cases() -> list[tuple[list[Message], list[Message]]]:
    """Working memory that opens with results: of the ask ending the history (kept, Q24: each a
    group of one), of a dropped ask (taken with it, each id once), and a late duplicate."""
    three = _three_results_case()
    first, first_res, second, now = ask("c"), tool("c", "r"), ask("c"), user("now")
    old, old_res, last, answer = ask("call_2", "call_1", args="x" * 200), tool("call_2", "r2"), ask("call_1"), \
        tool("call_1", "live")
    o2, o2_res, n2 = ask("a", args="x" * 400), tool("a", "r"), user("now")
    return [(three[0], three[1]),
            ([system("s"), first, first_res, second, now], [tool("c", "hitl"), ask("live"), tool("live", "x")]),
            ([old, old_res, last], [answer]),
            ([o2, o2_res, n2], [tool("a", "late"), ask("live"), tool("live", "x")])]


@pytest.mark.parametrize("case", range(4))
@pytest.mark.parametrize("max_tokens", [1, 30, 60, 120, 250, 10_000])
def test_trim_with_sums_equals_the_reference_when_working_memory_opens_with_results(case: int,
                                                                                   max_tokens: int) -> None:
    msgs, pin = _hitl_cases()[case]
    ref, out = trim(msgs, pin, max_tokens=max_tokens), _with_sums(msgs, pin, max_tokens)
    assert out.messages == ref.messages and list(out.removed) == list(ref.removed)
    assert (out.over_budget, out.tokens, out.history_removed, out.answers_removed) == (
        ref.over_budget, ref.tokens, ref.history_removed, ref.answers_removed)


@pytest.mark.parametrize("max_tokens", [0, -3, 1, 60, 10_000])
def test_trim_with_sums_gives_the_reference_result_and_leaves_its_input_alone(max_tokens: int) -> None:
    """Trimming off at ``max_tokens <= 0`` (1 already trims); the same rows, removals, flags and
    counts as :func:`trim_messages_to_budget`; the caller's list is not touched unless handed over."""
    msgs = [system("s" * 40), user("a" * 400), asst("b" * 40), user("now")]
    pin = [*tool_group("w1", 200), *tool_group("w2", 40)]
    before = list(msgs)
    ref = trim(msgs, pin, max_tokens=max_tokens)
    out = _with_sums(msgs, pin, max_tokens)
    assert msgs == before and all(a is b for a, b in zip(msgs, before, strict=True))
    assert out.messages == ref.messages and list(out.removed) == list(ref.removed)
    assert (out.over_budget, out.tokens, out.history_removed, out.answers_removed) == (
        ref.over_budget, ref.tokens, ref.history_removed, ref.answers_removed)
    if max_tokens <= 0:
        assert out.messages == msgs + pin and list(out.removed) == [] and not out.over_budget
    if max_tokens == 1:  # everything but the system row, the user turn and the newest group goes
        assert out.messages == [msgs[0], msgs[3], *pin[2:]] and ref.history_removed == 2


def test_the_trim_result_counts_history_rows_and_answers_it_removed() -> None:
    """``history_removed`` (rows of history, the system row not counted) and ``answers_removed``
    (answers of a dropped ask) say what ``removed`` holds without reading it."""
    msgs, results, budget = _three_results_case()
    out = trim(msgs, results, max_tokens=budget)
    assert (out.history_removed, out.answers_removed) == (0, 0)  # the system row heads the history: 0, not 2
    first, first_res, second, now = ask("c"), tool("c", "r"), ask("c"), user("now")
    hitl, live_ask, live_res = tool("c", "hitl"), ask("live"), tool("live", "x")
    out = trim([system("s"), first, first_res, second, now], [hitl, live_ask, live_res], max_tokens=1)
    assert (out.history_removed, out.answers_removed) == (3, 1)


def test_trim_with_sums_walks_working_memory_left_after_a_dropped_asks_answers() -> None:
    """HITL then budget: the dropped ask takes its answer from the front of working memory, the
    cut goes on with the reference's walk over what is left (oldest group first, never the newest)."""
    s, old_ask, now = system("s"), ask("c", args="x" * 200), user("now")
    hitl, w1, w2 = tool("c", "hitl"), tool_group("w1", 200), tool_group("w2", 40)
    msgs, pin = [s, old_ask, now], [hitl, *w1, *w2]
    ref, out = trim(msgs, pin, max_tokens=1), _with_sums(msgs, pin, 1)
    assert out.messages == ref.messages == [s, now, *w2]
    assert [(r.message, r.source, r.reason) for r in out.removed] == [
        (old_ask, "history", "budget"), (hitl, "working_memory", "answer_of_dropped_ask"),
        (w1[0], "working_memory", "budget"), (w1[1], "working_memory", "budget")] == [
        (r.message, r.source, r.reason) for r in ref.removed]
    assert (out.history_removed, out.answers_removed, out.over_budget) == (1, 1, True)


def test_trim_with_sums_logs_the_newest_working_memory_groups_size(caplog: pytest.LogCaptureFixture) -> None:
    """The incremental trimmer's over-budget warning names the same newest group (2 rows of 4) as the
    reference's."""
    now, old, live = user("n" * 40), tool_group("old", 40), tool_group("live", 40)
    with caplog.at_level("WARNING", logger="inspector.engine.trim"):
        out = _with_sums([now], [*old, *live], 7)
    assert out.over_budget and out.messages == [now, *live]
    (text,) = [r.getMessage() for r in caplog.records]
    assert "newest working-memory group of 2 row(s))" in text


@pytest.mark.parametrize("max_tokens", [0, 10_000, 1])
def test_trim_with_sums_makes_a_handed_over_list_the_result_without_a_copy(max_tokens: int) -> None:
    """``owned=True``: the caller's list becomes ``result.messages`` (no copy), holding the
    reference's rows — off (``max_tokens <= 0``), fitting, and trimmed."""
    msgs = [system("s" * 40), user("a" * 400), asst("b" * 40), user("now")]
    pin = [*tool_group("w1", 200), *tool_group("w2", 40)]
    ref = trim(list(msgs), pin, max_tokens=max_tokens)
    handed = list(msgs)
    out = _with_sums(handed, pin, max_tokens, owned=True)
    assert out.messages is handed and out.messages == ref.messages


def test_a_dropped_row_that_is_not_an_ask_owes_no_answers() -> None:
    """HITL rule is for asks only: a user row carrying ``tool_calls`` is a plain row, so dropping it
    leaves a ``tool`` row at the front of working memory to the budget (here it fits and stays)."""
    odd = {"role": "user", "content": "x" * 200, "tool_calls": [{"id": "c", "type": "function",
                                                                 "function": {"name": "f", "arguments": "{}"}}]}
    now, answer, live = user("now"), tool("c", "r"), tool_group("live", 4)
    budget = e1([now, answer, *live])
    for out in (trim([odd, now], [answer, *live], max_tokens=budget), _with_sums([odd, now], [answer, *live], budget)):
        assert out.messages == [now, answer, *live]
        assert [(r.message, r.reason) for r in out.removed] == [(odd, "budget")]
        assert (out.history_removed, out.answers_removed, out.over_budget) == (1, 0, False)
