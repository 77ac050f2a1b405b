"""Properties of pairing repair and the trimmer over random conversations (hypothesis).

Bug class guarded: any payload shape — random tool rounds, parallel calls, missing, duplicate,
orphan and mis-labelled results, unknown roles, interleaved users, HITL answers in working memory —
that makes the sanitizer emit something a provider rejects, lose a row without saying so, or change
its mind on a second pass; and any trim that breaks the budget or deletes a pinned part.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from builders import ask, asst, call, system, tool, user
from hypothesis import HealthCheck, given, settings
from hypothesis import event as hevent
from hypothesis import strategies as st

from inspector.engine.history import call_ids, is_ask, leading_group_size
from inspector.engine.pairing import check_pairing, sanitize_provider_messages
from inspector.engine.tokens import EstimateCounter
from inspector.engine.trim import trim_budget, trim_messages_to_budget
from inspector.engine.types import Message, Removal

# Ids that collide across asks and sort differently from their declaration order (call_9 / call_10).
IDS = ["call_1", "call_2", "call_9", "call_10", "a", "b"]
TEXT = st.sampled_from(["", " ", "ok", "x" * 40, "y" * 250])
CONTENT = st.one_of(TEXT, st.none(), st.just([{"type": "text", "text": "part"}]))
PROPS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tool_round(draw: st.DrawFn, *, odd: bool = True) -> list[Message]:
    """An ask (1–3 calls, ids may repeat across asks) and a messy run of results."""
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True))
    msg = ask(*ids, content=draw(CONTENT), args=draw(st.sampled_from(["{}", "z" * 120])))
    if odd and draw(st.integers(0, 9)) == 0:
        msg["tool_calls"].append(call(None))  # a call without an id
    results: list[Message] = []
    for cid in ids:
        fate = draw(st.sampled_from(["ok", "ok", "ok", "missing", "duplicate", "mislabelled"]))
        body = draw(TEXT)
        if fate == "ok":
            results.append(tool(cid, body))
        elif fate == "duplicate":
            results += [tool(cid, body), tool(cid, "dup")]
        elif fate == "mislabelled":
            results.append(tool(draw(st.sampled_from([*IDS, "wrong", "steer"])), body))
    if draw(st.integers(0, 7)) == 0:
        results.append(tool("orphan", "o"))
    return [msg, *draw(st.permutations(results))]


@st.composite
def event(draw: st.DrawFn, *, odd: bool = True) -> list[Message]:
    kind = draw(st.sampled_from(["user", "user", "assistant", "round", "round", "round", "stray", "system",
                                 "unknown", "odd"] if odd else ["user", "user", "assistant", "round", "round",
                                                                "stray", "system", "unknown"]))
    if kind == "user":
        return [user(draw(TEXT))]
    if kind == "assistant":
        return [asst(draw(CONTENT))]
    if kind == "round":
        return draw(tool_round(odd=odd))
    if kind == "stray":
        return [tool(draw(st.sampled_from([*IDS, "orphan"])), draw(TEXT))]
    if kind == "system":
        return [system(draw(TEXT))]
    if kind == "unknown":
        return [{"role": draw(st.sampled_from(["critic", "function", "developer"])), "content": draw(TEXT)}]
    return [draw(st.sampled_from([
        {"role": "assistant", "content": "t", "tool_calls": 5},
        {"role": "assistant", "content": "", "tool_calls": "abc"},
        {"role": "tool", "content": "no id"},
        {"content": "no role"},
        None,
    ]))]


def conversations(*, odd: bool = True) -> st.SearchStrategy[list[Message]]:
    return st.lists(event(odd=odd), max_size=14).map(lambda evs: [m for ev in evs for m in ev])


DROPS = {"orphan_dropped", "duplicate_dropped", "stray_result_dropped", "ask_removed"}


@PROPS
@given(conversations())
def test_sanitize_output_passes_the_pairing_check(messages: list[Message]) -> None:
    check_pairing(sanitize_provider_messages(messages).messages)


@PROPS
@given(conversations())
def test_sanitize_is_idempotent(messages: list[Message]) -> None:
    once = sanitize_provider_messages(messages).messages
    twice = sanitize_provider_messages(once)
    assert twice.repairs == []
    assert len(twice.messages) == len(once)
    assert all(a is b for a, b in zip(twice.messages, once, strict=True))
    assert list(twice.origin) == list(range(len(once)))


@PROPS
@given(conversations())
def test_sanitize_never_mutates_and_accounts_for_every_row(messages: list[Message]) -> None:
    before = copy.deepcopy(messages)
    result = sanitize_provider_messages(messages)
    assert messages == before
    assert len(result.origin) == len(result.messages)
    kept = [o for o in result.origin if o is not None]
    assert kept == sorted(set(kept)), "origins are strictly increasing (order-preserving, each row once)"
    assert all(0 <= o < len(messages) for o in kept)
    assert all(r.index is not None and 0 <= r.index < len(messages) for r in result.repairs)
    dropped = {r.index for r in result.repairs if r.kind in DROPS}
    assert dropped.isdisjoint(kept)
    assert dropped | set(kept) == set(range(len(messages))), "a row vanished without a repair"


@PROPS
@given(conversations())
def test_every_output_row_is_the_input_row_or_a_reported_copy(messages: list[Message]) -> None:
    result = sanitize_provider_messages(messages)
    reported = {(r.kind, r.index): r for r in result.repairs}
    synthesised: list[tuple[int | None, str | None]] = []
    last_ask: int | None = None
    for row, o in zip(result.messages, result.origin, strict=True):
        if o is None:  # a new empty result, reported against the ask it completes
            assert row == {"role": "tool", "tool_call_id": row["tool_call_id"], "content": ""}
            synthesised.append((last_ask, row["tool_call_id"]))
            continue
        src = messages[o]
        if row is src:
            assert ("id_rebound", o) not in reported and ("ask_stripped", o) not in reported
            if isinstance(row, dict) and row.get("role") == "assistant" and row.get("tool_calls"):
                last_ask = o
        elif ("id_rebound", o) in reported:
            rep = reported[("id_rebound", o)]
            assert row == {**src, "tool_call_id": rep.new_id} and rep.tool_call_id == src.get("tool_call_id")
        else:
            assert ("ask_stripped", o) in reported
            assert row == {k: v for k, v in src.items() if k != "tool_calls"}
    expected = [(r.index, r.tool_call_id) for r in result.repairs if r.kind == "empty_result_synthesised"]
    assert synthesised == expected


# --- the trimmer ------------------------------------------------------------------------------------


def _groups(rows: list[Message]) -> list[list[Message]]:
    """Forward tool-call groups (§1.3), the trimmer's unit of removal."""
    out: list[list[Message]] = []
    i = 0
    while i < len(rows):
        size = leading_group_size(rows, i)
        out.append(rows[i:i + size])
        i += size
    return out


@st.composite
def trim_case(draw: st.DrawFn) -> tuple[list[Message], list[Message], int, int, int]:
    head = [system(draw(TEXT))] if draw(st.booleans()) else []
    history = draw(conversations(odd=False))
    # HITL: a committed ask at the end of history whose answers sit at the front of working memory.
    hitl: list[Message] = []
    if draw(st.booleans()):
        ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=2, unique=True))
        history.append(ask(*ids, args="q" * draw(st.integers(0, 200))))
        hitl = [tool(i, draw(TEXT)) for i in ids]
        if draw(st.booleans()):
            history.append(user(draw(TEXT)))  # e.g. a current user after the committed ask
    pin_tail = hitl + draw(st.lists(tool_round(odd=False), max_size=4).map(lambda rs: [m for r in rs for m in r]))
    if draw(st.booleans()):
        pin_tail.append(asst(draw(TEXT)))
    reserve, fixed = draw(st.integers(-10, 60)), draw(st.integers(-10, 60))
    if draw(st.integers(0, 9)) == 0:
        max_tokens = draw(st.integers(-5, 0))  # trimming disabled
    else:  # a budget somewhere between nothing and a little more than the whole payload
        total = EstimateCounter().count(head + history + pin_tail)
        max_tokens = max(1, total * draw(st.integers(0, 120)) // 100 + max(0, reserve) + max(0, fixed))
    return head + history, pin_tail, max_tokens, reserve, fixed


class PerMessageCounter(EstimateCounter):
    """Overhead inside each unit and ``total(units, n) = units``, the tiktoken counter's shape."""

    name = "per-message"

    def _measure(self, msg: Message) -> int:
        return 3 + super()._measure(msg) // 3

    def total(self, units: int, n: int) -> int:
        return units


@PROPS
@given(trim_case(), st.sampled_from([EstimateCounter, PerMessageCounter]))
def test_trim_fits_keeps_pinned_parts_and_pairs(case: tuple[list[Message], list[Message], int, int, int],
                                                counter_cls: type[EstimateCounter]) -> None:
    messages, pin_tail, max_tokens, reserve, fixed = case
    counter = counter_cls()
    before = copy.deepcopy((messages, pin_tail))
    result = trim_messages_to_budget(messages, max_tokens=max_tokens, reserve=reserve, fixed=fixed,
                                     pin_tail=pin_tail, counter=counter)
    assert (messages, pin_tail) == before
    everything = messages + pin_tail
    budget = trim_budget(max_tokens, reserve, fixed)
    assert result.tokens == counter.count(result.messages)

    # result and removals partition the input, in order, by identity
    ids_kept = [id(m) for m in result.messages]
    order = {id(m): i for i, m in enumerate(everything)}
    assert [order[i] for i in ids_kept] == sorted(order[i] for i in ids_kept)
    assert sorted(ids_kept + [id(r.message) for r in result.removed], key=order.__getitem__) == [
        id(m) for m in everything]

    if max_tokens <= 0 or counter.count(everything) <= budget:
        assert result.messages == everything and all(a is b for a, b in zip(result.messages, everything, strict=True))
        assert result.removed == [] and not result.over_budget
        return

    head = messages[:1] if messages and messages[0].get("role") == "system" else []
    tail_groups = _groups(messages[len(head):])
    pin_groups = _groups(pin_tail)
    last_tail = tail_groups[-1] if tail_groups else []
    newest_pin = pin_groups[-1] if pin_groups else []  # Q24: an answer at the front is a group of one
    hitl_removed = {id(r.message) for r in result.removed if r.reason == "answer_of_dropped_ask"}
    kept = set(ids_kept)
    for m in head + last_tail:
        assert id(m) in kept, "system head and last history group are never trimmed"
    for m in newest_pin:
        assert id(m) in kept or id(m) in hitl_removed, "the newest working-memory group is never trimmed for budget"
    for r in result.removed:
        assert r.source == ("history" if any(r.message is m for m in messages) else "working_memory")
        if r.reason == "answer_of_dropped_ask":
            assert r.source == "working_memory" and r.message.get("role") == "tool"

    if counter.count(head + last_tail + newest_pin) <= budget:
        assert result.tokens <= budget and not result.over_budget
    assert result.over_budget == (result.tokens > budget)

    # the trimmer adds repair work only where Q24 says: every row the final repair changes or drops
    # after trimming was already one it changed or dropped in the untrimmed payload, or is a result
    # that followed an ask the trimmer removed (not of its group: mislabelled, or after such a row),
    # or is the ask ending the history whose answers at the front of working memory were cut
    removed_ids = {id(r.message) for r in result.removed}
    after_cut_ask: set[int] = set()
    for k, m in enumerate(everything):
        if id(m) in removed_ids and is_ask(m):
            j = k + 1
            while j < len(everything) and everything[j].get("role") == "tool":
                after_cut_ask.add(id(everything[j]))
                j += 1
    cut_answers = _cut_answers_of_last_ask(messages, len(head), result.removed)
    allowed = _repaired_rows(everything) | after_cut_ask | ({id(messages[-1])} if cut_answers else set())
    assert _repaired_rows(result.messages) <= allowed


def _cut_answers_of_last_ask(messages: list[Message], head: int, removed: Sequence[Removal]) -> list[str]:
    """Q24's exception: ids of the results of the ask ending the history that the budget cut from the
    front of working memory (each a group of one there), in the order they were cut."""
    last = messages[-1] if len(messages) > head else None
    if last is None or not is_ask(last):
        return []
    ids = set(call_ids(last))
    return [r.message.get("tool_call_id") for r in removed
            if r.source == "working_memory" and r.reason == "budget" and r.message.get("role") == "tool"
            and r.message.get("tool_call_id") in ids]


def _repaired_rows(rows: list[Message]) -> set[int]:
    """Identities of the rows the pairing repair changes or drops."""
    return {id(rows[r.index]) for r in sanitize_provider_messages(rows).repairs if r.index is not None}


def _paired(messages: list[Message], pin_tail: list[Message]) -> tuple[list[Message], list[Message]]:
    """The repaired form of ``messages + pin_tail``, split back at the same boundary (a synthesised
    result stays on the side of the row before it)."""
    fixed = sanitize_provider_messages(messages + pin_tail)
    left: list[Message] = []
    right: list[Message] = []
    side = left
    for row, o in zip(fixed.messages, fixed.origin, strict=True):
        if o is not None:
            side = left if o < len(messages) else right
        side.append(row)
    return left, right


@PROPS
@given(trim_case(), st.sampled_from([EstimateCounter, PerMessageCounter]))
def test_trimming_a_paired_payload_leaves_nothing_for_the_repair(
        case: tuple[list[Message], list[Message], int, int, int], counter_cls: type[EstimateCounter]) -> None:
    """The trimmer leaves the repair nothing to fix on a paired payload but Q24's one exception: the
    results of the ask ending the history, at the front of working memory, are groups of one, and
    those cut for budget are answered with empty results — exactly one per cut result, nothing else —
    or, when all were cut and another row follows the ask, the ask loses its calls (one repair)."""
    messages, pin_tail, max_tokens, reserve, fixed = case
    messages, pin_tail = _paired(messages, pin_tail)
    assert sanitize_provider_messages(messages + pin_tail).repairs == []
    result = trim_messages_to_budget(messages, max_tokens=max_tokens, reserve=reserve, fixed=fixed,
                                     pin_tail=pin_tail, counter=counter_cls())
    kinds = {r.source for r in result.removed} | {r.reason for r in result.removed}
    hevent(f"trim removed: {sorted(kinds) or 'nothing'}")
    head = 1 if messages and messages[0].get("role") == "system" else 0
    cut = _cut_answers_of_last_ask(messages, head, result.removed)
    if cut:
        hevent("Q24: results of the ask ending the history cut")
    repairs = sanitize_provider_messages(result.messages).repairs
    if not cut:
        assert repairs == []
    else:
        at = next(i for i, m in enumerate(result.messages) if m is messages[-1])
        nxt = result.messages[at + 1] if at + 1 < len(result.messages) else None
        if nxt is None or nxt.get("role") == "tool":  # a result of it left, or the ask ends the payload
            assert sorted((r.kind, r.tool_call_id) for r in repairs) == sorted(
                ("empty_result_synthesised", c) for c in cut)
        else:  # every result cut and another row follows: the ask loses its calls (its text stays)
            kind = "ask_stripped" if str(messages[-1].get("content") or "").strip() else "ask_removed"
            assert [(r.kind, r.index) for r in repairs] == [(kind, at)]
    if not cut:
        check_pairing(result.messages)


@PROPS
@given(st.lists(st.sampled_from(IDS), min_size=2, max_size=4, unique=True), st.data())
def test_a_mislabelled_result_is_rebound_to_the_first_unanswered_id_in_declaration_order(
        ids: list[str], data: st.DataObject) -> None:
    answered = data.draw(st.lists(st.sampled_from(ids), max_size=len(ids) - 1, unique=True))
    unanswered = [i for i in ids if i not in answered]  # declaration order, at least one
    results = [tool(i, f"r-{i}") for i in answered] + [tool("steer", "S")]
    results = data.draw(st.permutations(results))
    out = sanitize_provider_messages([ask(*ids), *results, user("next")])
    (rebound,) = [r for r in out.repairs if r.kind == "id_rebound"]
    assert (rebound.tool_call_id, rebound.new_id) == ("steer", unanswered[0])
    by_id = {m["tool_call_id"]: m["content"] for m in out.messages if m.get("role") == "tool"}
    assert by_id[unanswered[0]] == "S"
    assert all(by_id[i] == f"r-{i}" for i in answered)  # a genuine result is never displaced
    hevent(f"rebound to declaration position {ids.index(unanswered[0])}")
