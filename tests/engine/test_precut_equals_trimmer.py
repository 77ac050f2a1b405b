"""Regression: the history pre-cut removed a summary block the trimmer protects (Q18).

Bug class: a speed-up that changes the result. With no system band the summary block is the
first payload row, and the trimmer never removes a leading system-role row (as the reference's
trimmer protects ``messages[0]``); the pre-cut ignored that and cut it, so a paid-for summary was
never sent. The property below pins the contract: pre-cut + trimmer gives exactly what the
trimmer alone gives, for every strategy, over random conversations and budgets.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.engine import ContextEngine
from inspector.engine.managers.summarising import is_summary_block
from inspector.manifest import settings_from_dict
from test_engine_invariants import Echo, conversations, managers, text, trimmers


class S:
    def summarize(self, msgs: list[dict]) -> str:
        return "S"


@pytest.mark.parametrize("incremental", [True, False], ids=["incremental-path", "reference-path"])
def test_precut_keeps_a_leading_summary_block_the_trimmer_protects(incremental: bool) -> None:
    """The issue's reproducer: the payload is [summary, a1, now] at exactly 40 estimated tokens. Both
    paths run the pre-cut (each with its own code for the protected head row), so both are asked."""
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": "summarising", "params": {
        "keep_turns": 1, "trimmer": {"max_tokens": 40, "reserve_tokens": 0, "safety_margin_ratio": 0}}}}}).settings
    engine = ContextEngine(s, counter="estimate", summarizer=S())
    engine.assembler.incremental = incremental
    for i in range(2):
        engine.user(f"u{i}" + "x" * 60)
        engine.record({"role": "assistant", "content": f"a{i}" + "y" * 60})
        engine.commit()
    engine.user("now")
    call = engine.assemble()
    assert [m["role"] for m in call.messages] == ["system", "assistant", "user"]
    assert is_summary_block(call.messages[0]) and call.messages[0]["content"].endswith("\nS")
    assert call.messages[1]["content"].startswith("a1") and call.messages[2]["content"] == "now"
    assert call.payload_tokens == 40 == engine.counter.count(call.messages)
    assert call.bands["summary"] > 0
    assert all(not is_summary_block(m) for m in call.precut)
    assert [m["content"][:2] for m in call.precut] == ["u1"]  # the pre-cut did run: it took u1 (a1 fits)


def _lockstep(s, convo) -> None:  # noqa: ANN001
    fast = ContextEngine(s, counter="estimate", summarizer=Echo())  # the incremental path, with its pre-cut
    ref = ContextEngine(s, counter="estimate", summarizer=Echo())  # the reference path, with its pre-cut
    ref.assembler.incremental = False
    slow = ContextEngine(s, counter="estimate", summarizer=Echo())  # the trimmer alone
    slow.assembler.precut = False
    engines = (fast, ref, slow)

    def same_call() -> None:
        a, r, b = (e.assemble(strict=False) for e in engines)
        for x in (a, r):
            assert x.messages == b.messages
            assert [row.band for row in x.rows] == [row.band for row in b.rows]
            assert x.payload_tokens == b.payload_tokens
            assert [m.message for m in x.trimmed] == [m.message for m in b.trimmed]

    for user_text, steps, final, commit in convo:
        for e in engines:
            e.user(user_text)
        for rows in steps:
            same_call()
            for r in rows:
                for e in engines:
                    e.record(dict(r))
        if final is not None and final.strip():
            for e in engines:
                e.record({"role": "assistant", "content": final})
        same_call()
        if commit:
            for e in engines:
                e.finalize_turn(None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cm=managers, trimmer=trimmers, convo=conversations(), system=st.one_of(st.just(""), text))
def test_precut_plus_trimmer_equals_trimmer_alone(cm: dict, trimmer: dict, convo: list, system: str) -> None:
    cm = {**cm, "params": {**cm.get("params", {}), "trimmer": trimmer}}
    s = settings_from_dict({"kind": "Agent", "spec": {"system_prompt": system or None, "context_manager": cm}}).settings
    _lockstep(s, convo)
