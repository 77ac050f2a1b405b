"""Pairing repair and the final check (docs/design.md §3.8, Q6, Q19).

Bug class guarded: payloads a provider rejects (a tool call without its result, a result without
its call, a result under the wrong id) and repairs that silently send the wrong result content.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from builders import ask, asst, call, result_ids, system, tool, toolturn, user

from inspector.engine.pairing import check_pairing, check_provider_payload, sanitize_provider_messages
from inspector.engine.types import ProviderPayloadError

ROOT = Path(__file__).resolve().parents[2]


def _kinds(result: Any) -> list[str]:
    return [r.kind for r in result.repairs]


# (messages, expected output, expected repair kinds) — the cases of docs/design.md §3.8, one per repair kind.
SCENARIOS = [
    pytest.param(  # 30: an orphan result is dropped
        [tool("missing", "orphan"), user("hi")],
        [user("hi")],
        ["orphan_dropped"],
        id="30-orphan-dropped",
    ),
    pytest.param(  # 31: an unanswered ask followed by another user message is removed
        [user("hi"), ask("call_1"), user("follow up")],
        [user("hi"), user("follow up")],
        ["ask_removed"],
        id="31-unanswered-ask-removed",
    ),
    pytest.param(  # 31: ... but its text survives as a plain assistant message
        [user("hi"), ask("call_1", content="let me look"), user("follow up")],
        [user("hi"), asst("let me look"), user("follow up")],
        ["ask_stripped"],
        id="31-unanswered-ask-text-kept",
    ),
    pytest.param(  # 32: an unanswered ask at the end gets an empty result per call
        [user("q"), ask("c1", "c2")],
        [user("q"), ask("c1", "c2"), tool("c1", ""), tool("c2", "")],
        ["empty_result_synthesised", "empty_result_synthesised"],
        id="32-trailing-ask-synthesised",
    ),
    pytest.param(  # 33: partial parallel answer at the end is completed, not glued onto the previous turn
        [user("q1"), ask("call_1"), tool("call_1", "r1"), asst("done1"),
         user("q2"), ask("call_2", "call_3"), tool("call_2", "r2")],
        [user("q1"), ask("call_1"), tool("call_1", "r1"), asst("done1"),
         user("q2"), ask("call_2", "call_3"), tool("call_2", "r2"), tool("call_3", "")],
        ["empty_result_synthesised"],
        id="33-partial-parallel-completed",
    ),
    pytest.param(  # 34: a duplicate result is dropped, the first one per id kept
        [user("q"), ask("a", "b"), tool("a", "ra"), tool("b", "rb"), tool("a", "ra-dup")],
        [user("q"), ask("a", "b"), tool("a", "ra"), tool("b", "rb")],
        ["duplicate_dropped"],
        id="34-duplicate-dropped",
    ),
    pytest.param(  # 35: HITL steering result under a wrong id is rebound; a later unanswered ask goes
        [user("Who is POTUS?"), ask("call_1"), tool("call_3", "steered"), ask("call_4"), user("Follow-up?")],
        [user("Who is POTUS?"), ask("call_1"), tool("call_1", "steered"), user("Follow-up?")],
        ["id_rebound", "ask_removed"],
        id="35-hitl-rebound",
    ),
    pytest.param(  # 35: two wrong ids are rebound to the calls in declaration order
        [user("q"), ask("call_a", "call_b"), tool("wrong", "1"), tool("also-wrong", "2"), asst("done")],
        [user("q"), ask("call_a", "call_b"), tool("call_a", "1"), tool("call_b", "2"), asst("done")],
        ["id_rebound", "id_rebound"],
        id="35-two-rebound-in-order",
    ),
    pytest.param(  # 36: a result separated from its ask by another message is dropped
        [user("q"), ask("a"), asst("hmm"), tool("a")],
        [user("q"), asst("hmm")],
        ["ask_removed", "stray_result_dropped"],
        id="36-separated-result-dropped",
    ),
    pytest.param(  # 37 (repair side): the custom assembler's unpaired payload is fixed by sanitize
        [user("q"), ask("call_1")],
        [user("q"), ask("call_1"), tool("call_1", "")],
        ["empty_result_synthesised"],
        id="37-sanitize-completes-trailing-ask",
    ),
    pytest.param(  # a complete tool turn passes untouched
        toolturn("call_1"),
        toolturn("call_1"),
        [],
        id="complete-turn-untouched",
    ),
    pytest.param(  # nothing in, nothing out
        [], [], [], id="empty",
    ),
]


@pytest.mark.parametrize(("messages", "expected", "kinds"), SCENARIOS)
def test_sanitize_scenarios(messages: list[dict], expected: list[dict], kinds: list[str]) -> None:
    before = copy.deepcopy(messages)
    result = sanitize_provider_messages(messages)
    assert result.messages == expected
    assert _kinds(result) == kinds
    assert messages == before, "input mutated"
    check_provider_payload(result.messages)


# --- the two deliberate fixes of the reference (docs/design.md Q6) ---------------------------------------


def test_fix_duplicates_are_removed_before_rebinding() -> None:
    """Reference rebinds first: the duplicate ``a`` takes ``b``'s slot and the real ``b`` result
    is dropped. We drop the duplicate and keep the real ``b``."""
    msgs = [ask("a", "b"), tool("a", "ra"), tool("a", "ra-dup"), tool("b", "rb")]
    result = sanitize_provider_messages(msgs)
    assert result.messages == [ask("a", "b"), tool("a", "ra"), tool("b", "rb")]
    assert result.messages[1] is msgs[1]
    assert result.messages[2] is msgs[3], "the genuine b result is kept, not a rebound duplicate"
    assert [(r.kind, r.tool_call_id, r.index) for r in result.repairs] == [("duplicate_dropped", "a", 2)]


def test_fix_a_genuine_result_is_never_displaced_by_a_mislabelled_one() -> None:
    """Same fix, other order: a mis-labelled row before the genuine ``a`` must not claim ``a``."""
    msgs = [ask("a", "b"), tool("x", "steered"), tool("a", "ra")]
    result = sanitize_provider_messages(msgs)
    assert result.messages == [ask("a", "b"), tool("b", "steered"), tool("a", "ra")]
    assert result.messages[2] is msgs[2]
    assert [(r.kind, r.tool_call_id, r.new_id) for r in result.repairs] == [("id_rebound", "x", "b")]


def test_fix_rebinding_follows_declaration_order_not_lexicographic() -> None:
    """Reference: ``sorted({"call_9", "call_10"})[0] == "call_10"``. Declaration order picks call_9."""
    msgs = [user("q"), ask("call_9", "call_10"), tool("call_x", "steered")]
    result = sanitize_provider_messages(msgs)
    assert result.messages == [user("q"), ask("call_9", "call_10"), tool("call_9", "steered"), tool("call_10", "")]
    rebound = result.repairs[0]
    assert (rebound.kind, rebound.tool_call_id, rebound.index, rebound.new_id) == ("id_rebound", "call_x", 2, "call_9")


# --- identity, origin and the repair record -------------------------------------------------------


def test_unchanged_rows_are_the_same_objects_and_copies_are_new() -> None:
    msgs = [system(), user("q"), ask("a", "b"), tool("wrong", "ra"), tool("b", "rb"), asst("done"),
            ask("c", content="thinking"), user("next")]
    result = sanitize_provider_messages(msgs)
    out = result.messages
    assert result.origin == [0, 1, 2, 3, 4, 5, 6, 7]
    for i in (0, 1, 2, 4, 5, 7):
        assert out[i] is msgs[i]
    assert out[3] is not msgs[3] and out[3] == {**msgs[3], "tool_call_id": "a"}
    assert msgs[3]["tool_call_id"] == "wrong", "the input row was not touched"
    assert out[6] is not msgs[6] and out[6] == asst("thinking") and "tool_calls" in msgs[6]
    assert _kinds(result) == ["id_rebound", "ask_stripped"]
    assert [r.index for r in result.repairs] == [3, 6]


def test_origin_is_none_for_synthesised_rows_and_repairs_point_at_the_ask() -> None:
    msgs = [user("q"), ask("a", "b", "c"), tool("b", "rb")]
    result = sanitize_provider_messages(msgs)
    assert result.origin == [0, 1, 2, None, None]
    assert result_ids(result.messages) == ["b", "a", "c"]
    synth = [(r.kind, r.tool_call_id, r.index) for r in result.repairs]
    assert synth == [("empty_result_synthesised", "a", 1), ("empty_result_synthesised", "c", 1)]


def test_partial_answers_in_the_middle_are_completed_too() -> None:
    msgs = [ask("a", "b"), tool("a"), user("next")]
    result = sanitize_provider_messages(msgs)
    assert result.messages == [ask("a", "b"), tool("a"), tool("b", ""), user("next")]


def test_extra_results_beyond_the_calls_are_dropped() -> None:
    msgs = [ask("a"), tool("a"), tool("zzz"), tool("a", "dup"), user("u")]
    result = sanitize_provider_messages(msgs)
    assert result.messages == [ask("a"), tool("a"), user("u")]
    assert [(r.kind, r.index) for r in result.repairs] == [("orphan_dropped", 2), ("duplicate_dropped", 3)]


def test_a_result_declared_elsewhere_is_rebound_only_inside_an_asks_run() -> None:
    # parity with the reference: inside the run, any wrong id fills an unanswered call ...
    msgs = [ask("a"), tool("a"), asst("t"), ask("b"), tool("a", "late")]
    result = sanitize_provider_messages(msgs)
    assert result.messages == [ask("a"), tool("a"), asst("t"), ask("b"), tool("b", "late")]
    # ... outside it, a declared result is a stray
    msgs = [ask("a"), tool("a"), asst("t"), tool("a", "late")]
    result = sanitize_provider_messages(msgs)
    assert result.messages == msgs[:3]
    assert _kinds(result) == ["stray_result_dropped"]


def test_repair_as_dict_carries_new_id() -> None:
    result = sanitize_provider_messages([ask("a"), tool("x")])
    assert result.repairs[0].as_dict() == {"kind": "id_rebound", "tool_call_id": "x", "index": 1, "new_id": "a",
                                           "detail": "ask at 0"}


# --- odd input never crashes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # list content and None content pass through; a list-content unanswered ask keeps its text
        ([user([{"type": "text", "text": "hi"}]), asst(None), ask("a", content=[{"type": "text", "text": "t"}]),
          user("u")],
         [user([{"type": "text", "text": "hi"}]), asst(None), asst([{"type": "text", "text": "t"}]), user("u")]),
        # calls without an id are ignored by pairing; a trailing id-less ask is left as is
        ([user("q"), {"role": "assistant", "content": "", "tool_calls": [call(None)]}],
         [user("q"), {"role": "assistant", "content": "", "tool_calls": [call(None)]}]),
        # a mixed ask only needs results for the calls that have ids
        ([{"role": "assistant", "content": "", "tool_calls": [call("a"), call(None)]}, tool("a"), user("u")],
         [{"role": "assistant", "content": "", "tool_calls": [call("a"), call(None)]}, tool("a"), user("u")]),
        # unknown roles pass through, and end an ask's run like any non-tool row
        ([{"role": "critic", "content": "x"}, ask("a"), {"role": "function", "name": "f", "content": "1"}, tool("a")],
         [{"role": "critic", "content": "x"}, {"role": "function", "name": "f", "content": "1"}]),
        # a result without an id, or a non-string id, is an orphan
        ([user("q"), {"role": "tool", "content": "x"}, {"role": "tool", "tool_call_id": 7, "content": "y"}],
         [user("q")]),
        # a tool_calls that is not a list declares nothing; the ask is stripped mid-payload
        ([{"role": "assistant", "content": "t", "tool_calls": 5}, user("u")], [asst("t"), user("u")]),
        ([{"role": "assistant", "content": "t", "tool_calls": "abc"}, user("u")], [asst("t"), user("u")]),
        # the same id declared twice needs two results
        ([{"role": "assistant", "content": "", "tool_calls": [call("a"), call("a")]}, tool("a")],
         [{"role": "assistant", "content": "", "tool_calls": [call("a"), call("a")]}, tool("a"), tool("a", "")]),
        # a row that is not a dict passes through untouched
        ([user("q"), None, asst("a")], [user("q"), None, asst("a")]),
    ],
)
def test_odd_input(messages: list[Any], expected: list[Any]) -> None:
    result = sanitize_provider_messages(messages)
    assert result.messages == expected
    check_pairing(result.messages)  # pairing is repaired; an unknown role is the role check's business
    again = sanitize_provider_messages(result.messages)
    assert again.repairs == [] and again.messages == result.messages


# --- the final check ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ([user("q"), ask("call_1")], "tool results 0 != tool calls 1 at messages[1]"),  # a call without its result
        ([tool("x"), user("q")], "orphan tool results: {'x'}"),
        ([user("q"), {"role": "tool", "content": "no id"}], "orphan tool results: {None}"),
        ([ask("a", "b"), tool("a"), user("q")], "tool results 1 != tool calls 2 at messages[0]"),
        ([ask("a"), tool("a"), tool("a")], "tool results 2 != tool calls 1 at messages[0]"),
        ([tool("a"), ask("a")], "tool result at start of payload"),
        ([ask("a"), tool("a"), user("q"), tool("a")], "tool result at messages[3] follows role='user'"),
        ([ask("a"), tool("a"), asst("t"), tool("a")], "tool result at messages[3] follows a text-only assistant"),
        # stricter than the reference, as providers are: the k rows must answer the k calls
        ([ask("a", "b"), tool("a"), tool("a"), ask("b"), tool("b")],
         "tool results at messages[1:3] do not answer the tool calls at messages[0]: unanswered {'b'}"),
    ],
)
def test_check_rejects(messages: list[dict], error: str) -> None:
    with pytest.raises(ProviderPayloadError) as exc:
        check_provider_payload(messages)
    assert str(exc.value) == error
    assert isinstance(exc.value, ValueError)


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [system(), user("q")],
        toolturn("a") + toolturn("b"),
        [user("q"), ask("a", "b"), tool("b"), tool("a"), asst("done")],  # result order is free
        [user("q"), {"role": "assistant", "content": "", "tool_calls": [call(None)]}, user("u")],  # id-less call
    ],
)
def test_check_accepts(messages: list[dict]) -> None:
    check_provider_payload(messages)


def test_check_raises_under_python_O() -> None:  # noqa: N802
    """Scenario 37: a real exception, not an assert, so it survives ``python -O``."""
    script = textwrap.dedent(
        """
        import sys
        assert False, "asserts are live: -O is not in effect"
        from inspector.engine.pairing import check_provider_payload
        from inspector.engine.types import ProviderPayloadError
        payload = [{"role": "user", "content": "q"},
                   {"role": "assistant", "content": "", "tool_calls": [
                       {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]
        try:
            check_provider_payload(payload)
        except ProviderPayloadError as exc:
            print("raised:", exc)
            sys.exit(0 if sys.flags.optimize else 3)
        sys.exit(1)
        """
    )
    proc = subprocess.run([sys.executable, "-O", "-c", script], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "raised: tool results 0 != tool calls 1 at messages[1]" in proc.stdout

