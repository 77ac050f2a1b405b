"""Each pairing repair is recorded whole: kind, id, input position and the detail in words
(docs/design.md §3.8; the repairs reach the replay JSON through ``Repair.as_dict``).

Bug class guarded (mutmut survivors of 5 December 2026): a repair recorded under the wrong kind
(``stray_result_dropped`` vs ``orphan_dropped``), without its id, or with its words lost; a
stripped ask that keeps a content that says nothing; a fast path taken on rows that are not the
ask's results; the clean ranges of the third and later skipped ranges forgotten.
Every expected record below is written out from the rules of the module docstring.
"""

from __future__ import annotations

from builders import ask, call, tool, user

from inspector.engine.pairing import check_provider_payload, sanitize_provider_messages
from inspector.engine.types import Repair

RULE_6 = "not in the run of results right after its ask"


def test_a_run_after_an_ask_records_each_dropped_row_with_its_id_and_why() -> None:
    # ask(a) at 4 is followed by: its result (5), a copy of it (6), a result for b which the ask at 1
    # declares (7) and a result for z which no ask declares (8); nothing is left to rebind to
    rows = [user("q"), ask("b"), tool("b"), user("next"),
            ask("a"), tool("a"), tool("a", "again"), tool("b", "late"), tool("z")]
    out = sanitize_provider_messages(rows)
    assert out.messages == rows[:6]
    assert out.repairs == [
        Repair("duplicate_dropped", "a", 6, "call already answered (ask at 4)"),
        Repair("stray_result_dropped", "b", 7, "no unanswered call left (ask at 4)"),
        Repair("orphan_dropped", "z", 8, "no unanswered call left (ask at 4)"),
    ]


def test_a_result_outside_any_run_is_recorded_as_orphan_or_stray() -> None:
    rows = [tool("x"), user("q"), ask("a"), tool("a"), user("next"), tool("a", "late")]
    out = sanitize_provider_messages(rows)
    assert out.messages == [rows[1], rows[2], rows[3], rows[4]]
    assert out.repairs == [Repair("orphan_dropped", "x", 0, RULE_6),
                           Repair("stray_result_dropped", "a", 5, RULE_6)]


def test_a_result_with_an_empty_id_is_recorded_with_no_id() -> None:
    # "" is no id: the repair says None, as for a result without the key
    out = sanitize_provider_messages([tool(""), user("q")])
    assert out.repairs == [Repair("orphan_dropped", None, 0, RULE_6)]


def test_an_unanswered_ask_in_the_middle_names_its_calls_in_declaration_order() -> None:
    rows = [user("q"), ask("b", "a", content="let me look"), user("more")]
    out = sanitize_provider_messages(rows)
    assert out.messages == [user("q"), {"role": "assistant", "content": "let me look"}, user("more")]
    assert out.repairs == [Repair("ask_stripped", None, 1, "unanswered calls: b, a")]


def test_an_unanswered_ask_whose_calls_have_no_id_says_so() -> None:
    no_id = {"role": "assistant", "content": "", "tool_calls": [call(None)]}
    out = sanitize_provider_messages([user("q"), no_id, user("more")])
    assert out.messages == [user("q"), user("more")]
    assert out.repairs == [Repair("ask_removed", None, 1, "no call has an id")]


def test_a_stripped_ask_with_an_empty_list_of_parts_says_nothing_and_goes() -> None:
    # rule 4: kept only if it has text; [] is no text (a non-empty list of parts would be kept)
    out = sanitize_provider_messages([user("q"), ask("a", content=[]), user("more")])
    assert out.messages == [user("q"), user("more")]
    assert out.repairs == [Repair("ask_removed", None, 1, "unanswered calls: a")]


def test_a_trailing_ask_records_one_synthesised_result_per_call_at_the_ask() -> None:
    out = sanitize_provider_messages([user("q"), ask("c1", "c2")])
    assert out.repairs == [Repair("empty_result_synthesised", "c1", 1, "no result for the ask at 1"),
                           Repair("empty_result_synthesised", "c2", 1, "no result for the ask at 1")]


def test_an_asks_own_tool_call_id_key_is_not_one_of_its_results() -> None:
    # odd input: the ask row itself carries tool_call_id "b". Its results are the rows after it:
    # a (claims a) and x (mis-labelled, rebound to b) — the ask's own key answers nothing.
    odd_ask = {**ask("a", "b"), "tool_call_id": "b"}
    rows = [user("q"), odd_ask, tool("a", "ra"), tool("x", "rx"), user("more")]
    out = sanitize_provider_messages(rows)
    assert out.messages == [user("q"), odd_ask, tool("a", "ra"),
                            {"role": "tool", "tool_call_id": "b", "content": "rx"}, user("more")]
    assert out.repairs == [Repair("id_rebound", "x", 3, "ask at 1", new_id="b")]
    check_provider_payload(out.messages)


def test_every_skipped_range_is_a_clean_range_of_the_output() -> None:
    # three one-row clean ranges, each followed by a non-tool row; the orphan at 4 forces the full pass
    rows = [user("a"), user("b"), user("c"), user("d"), tool("orphan"), user("e")]
    out = sanitize_provider_messages(rows, skip=[(0, 1), (1, 2), (2, 3)], skip_declares=lambda _rid: False)
    assert out.messages == [rows[0], rows[1], rows[2], rows[3], rows[5]]
    assert list(out.origin) == [0, 1, 2, 3, 5]
    assert list(out.clean) == [(0, 1), (1, 2), (2, 3)]
    assert out.repairs == [Repair("orphan_dropped", "orphan", 4, RULE_6)]


def test_a_stray_result_declared_inside_a_skipped_range_is_stray_not_orphan() -> None:
    # ask(a) + its result sit in the clean range; the late result for a outside it is a stray
    rows = [user("q"), ask("a"), tool("a"), user("next"), tool("a", "late"), user("end")]
    out = sanitize_provider_messages(rows, skip=[(0, 3)], skip_declares=lambda rid: rid == "a")
    assert out.messages == [rows[0], rows[1], rows[2], rows[3], rows[5]]
    assert out.repairs == [Repair("stray_result_dropped", "a", 4, RULE_6)]
