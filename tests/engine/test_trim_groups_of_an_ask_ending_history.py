"""Q24 (docs/design.md): the trimmer's groups are the reference's, end to end, and said in words.

The reference's case: an ask for three calls ends the committed history (a turn paused after the
ask, then resumed) and its three results wait in working memory. They do not follow their ask in
the pinned tail, so each is a group of one: under a budget that holds one of them the leading two
are dropped one by one, the last stays, and the pairing repair answers the two cut calls with empty
results. A call that fits the window beats a complete one the provider refuses.
"""

from __future__ import annotations

from types import SimpleNamespace

from builders import ask, tool

from inspector.engine import ContextEngine
from inspector.engine.types import Repair
from inspector.manifest import settings_from_dict
from inspector.app.call_facts import trim_note
from inspector.replay import FrameRepair
from inspector.vocabulary import cut_results_words


def _engine(max_tokens: int) -> ContextEngine:
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": "stack", "params": {
        "trimmer": {"max_tokens": max_tokens, "reserve_tokens": 0, "safety_margin_ratio": 0}}}}}).settings
    return ContextEngine(s, counter="estimate")


def _resumed_turn(engine: ContextEngine) -> list[dict]:
    engine.user("q")
    engine.record(ask("call_a", "call_b", "call_c"))
    engine.commit()  # paused after the ask: committed as far as it went
    results = [tool(f"call_{c}", c.upper() * 400) for c in "abc"]
    for r in results:
        engine.record(r)
    return results


def test_the_leading_results_of_the_ask_ending_history_are_cut_and_the_repair_answers_their_calls() -> None:
    # E1 = C // 4 + 4n. The ask: 3 × ("f" + "{}") = 9 chars; a result: 400 chars; the user row "q": 1.
    # [ask, a, b, c] = 1209 // 4 + 16 = 318; [ask, b, c] = 809 // 4 + 12 = 214; [ask, c] = 409 // 4 + 8 = 110.
    # With a budget of 150 the user row goes first (history before working memory), then a and b.
    engine = _engine(150)
    results = _resumed_turn(engine)
    call = engine.assemble()
    assert call.check == "ok" and call.budget.max_tokens == 150
    assert [(r.message.get("role"), r.message.get("tool_call_id"), r.source, r.reason) for r in call.trimmed] == [
        ("user", None, "history", "budget"),
        ("tool", "call_a", "working_memory", "budget"), ("tool", "call_b", "working_memory", "budget")]
    assert call.messages[1] is results[2]
    assert call.messages[2:] == [{"role": "tool", "tool_call_id": "call_a", "content": ""},
                                 {"role": "tool", "tool_call_id": "call_b", "content": ""}]
    assert [(r.kind, r.tool_call_id) for r in call.repairs] == [
        ("empty_result_synthesised", "call_a"), ("empty_result_synthesised", "call_b")]
    assert call.payload_tokens == 409 // 4 + 4 * 4  # the two empty results add 4 tokens each: 118
    # at 214 two results fit: only call_a is cut and answered
    engine = _engine(214)
    _resumed_turn(engine)
    call = engine.assemble()
    assert [r.message.get("tool_call_id") for r in call.trimmed if r.source == "working_memory"] == ["call_a"]
    assert [r.tool_call_id for r in call.repairs] == ["call_a"]


def test_cut_results_are_said_in_plain_words() -> None:
    assert cut_results_words(2, 2) == "2 results cut for budget; the repair answered their 2 calls with empty results"
    assert cut_results_words(1, 1) == "1 result cut for budget; the repair answered its 1 call with empty results"
    assert cut_results_words(3, 0) == "3 results cut for budget"


def test_the_call_record_says_which_results_were_cut_and_answered() -> None:
    """The repairs view's note reads the frame: tool rows trimmed at this call, and the empty results
    the repair added under their ids (an empty result for another id is not counted)."""
    messages = [{"role": "user", "content": "q"}, ask("call_a", "call_b", "call_c"),
                tool("call_a", "A"), tool("call_b", "B"), tool("call_c", "C")]
    repairs = [FrameRepair(Repair("empty_result_synthesised", cid, 1), None) for cid in ("call_a", "call_b", "zz")]
    frame = SimpleNamespace(trimmed=((0, 1), (2, 4)), repairs=repairs)
    rp = SimpleNamespace(frames=[frame, SimpleNamespace(trimmed=((0, 1),), repairs=[])], messages=messages)
    assert trim_note(rp, 0) == "2 results cut for budget; the repair answered their 2 calls with empty results."  # type: ignore[arg-type]
    assert trim_note(rp, 1) is None  # type: ignore[arg-type]
