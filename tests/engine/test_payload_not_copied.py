"""The incremental path copies no payload-long list per call: a long payload is a view.

Rule (``incremental.VIEW_MIN``, ``types.JoinedRows``): when the log range and working memory a call
sends hold ``VIEW_MIN`` rows or more, the trimmer and the pairing pass read the payload as a view
(lead rows + ``log[a:]`` + the user row + working memory) and no list of its rows is built, unless a
reader asks for ``Assembly.messages`` (then once, and kept). Counted here with ``tracemalloc``: a
list of P rows holds P pointers, 8·P bytes, so a call that copies its P-row payload allocates at
least that much at its peak; a call that copies nothing allocates a few kB whatever P is.
Never time.
"""

from __future__ import annotations

import tracemalloc
import warnings
from typing import Any

import pytest

from inspector.engine import ContextEngine
from inspector.engine.assembly.incremental import VIEW_MIN
from inspector.engine.tokens import EstimateCounter
from inspector.engine.types import JoinedRows
from inspector.manifest import settings_from_dict
from tests.builders import one_turn_asks


def turns(n: int) -> list[dict[str, Any]]:
    """``n`` user turns of 4 rows each: question, one ask, its result, the answer."""
    rows: list[dict[str, Any]] = []
    for i in range(n):
        rows += [{"role": "user", "content": f"question {i}"},
                 {"role": "assistant", "content": None, "tool_calls": [
                     {"id": f"call_{i}", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": f"call_{i}", "content": f"result {i}"},
                 {"role": "assistant", "content": f"answer {i}"}]
    return rows


def engine_over(cm: dict[str, Any], history: list[dict[str, Any]]) -> ContextEngine:
    """An engine (``estimate`` counter, a window nothing overflows) with ``history`` committed turn by turn."""
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": cm,
                                                      "models": [{"model": "gpt-4o", "context_window": 1_000_000}]}}).settings
    engine = ContextEngine(s, counter=EstimateCounter(), summarizer="drop")
    for m in history:
        if m["role"] == "user":
            if engine.conversation.current_user is not None:
                engine.commit()
            engine.user(m)
        else:
            engine.record(m)
    engine.commit()
    return engine


def peaks_per_call(engine: ContextEngine, rounds: int) -> list[tuple[int, Any]]:
    """One more turn of ``rounds`` asks: per call, the bytes allocated at its peak above where it
    started, and its assembly."""
    out: list[tuple[int, Any]] = []
    tracemalloc.start()
    try:
        for m in one_turn_asks(rounds):
            if m["role"] == "user":
                engine.user(m)
                continue
            if m["role"] == "assistant":
                start, _ = tracemalloc.get_traced_memory()
                tracemalloc.reset_peak()
                asm = engine.assemble()
                _, peak = tracemalloc.get_traced_memory()
                out.append((peak - start, asm))
            engine.record(m)
    finally:
        tracemalloc.stop()
    return out


@pytest.mark.parametrize("cm", [{"type": "stack"}, {"type": "observation-masking"}], ids=["stack", "observation-masking"])
def test_a_call_copies_no_list_of_its_long_payload(cm: dict[str, Any]) -> None:
    """1 000 committed turns: 4 000 log rows, all sent (nothing overflows), so every call's payload
    P is over 4 000 rows and a copy of it is over 8 × 4 000 = 32 000 bytes. Each call of the next
    turn after its first stays under a quarter of that at its peak."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = engine_over(cm, turns(1000))
        calls = peaks_per_call(engine, 20)
    assert len(calls) == 21  # 20 asks and the final answer
    for k, (peak, asm) in enumerate(calls[1:], 1):  # (call 0 indexes the 4 000 rows committed without a call)
        assert type(asm.sent) is JoinedRows, f"call {k}: the payload was built as a list"
        p = len(asm.sent)
        assert p > 4000
        assert peak < 8 * p // 4, f"call {k}: {peak:,} bytes at its peak for a {p:,}-row payload"


def test_a_call_of_one_enormous_turn_copies_no_list_of_its_working_memory() -> None:
    """One turn of 1 200 asks over a 2-turn log (8 rows): working memory reaches 2 400 rows. Every
    call whose payload P is over 2 000 rows (its last ~200) stays under half a P-row list, 8 × P / 2
    bytes, at its peak (working memory's index grows with the turn: its lists resize now and then)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = engine_over({"type": "stack"}, turns(2))
        calls = peaks_per_call(engine, 1200)
    long = [(peak, asm) for peak, asm in calls if len(asm.sent) > 2000]
    assert len(long) >= 190
    for peak, asm in long:
        p = len(asm.sent)
        assert type(asm.sent) is JoinedRows
        assert peak < 8 * p // 2, f"{peak:,} bytes at its peak for a {p:,}-row payload"


def test_messages_is_the_payload_as_one_list_built_on_the_first_read() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = engine_over({"type": "stack"}, turns(100))
        engine.user({"role": "user", "content": "next"})
        asm = engine.assemble()
    view = asm.sent
    assert type(view) is JoinedRows
    rows = asm.messages
    assert type(rows) is list and rows == view.to_list()
    assert len(rows) == 400 + 1  # no system band: 100 turns of 4 rows, then the user row
    assert rows[0]["content"] == "question 0" and rows[-1]["content"] == "next"
    assert asm.messages is rows  # built once, kept


@pytest.mark.parametrize(("log_rows", "kind"), [(VIEW_MIN - 1, list), (VIEW_MIN, JoinedRows)])
def test_a_payload_is_a_view_from_VIEW_MIN_rows(log_rows: int, kind: type) -> None:
    """``VIEW_MIN - 1`` log rows (working memory empty) are copied (a short list reads faster than a view); ``VIEW_MIN`` are
    not. The log: ``log_rows`` rows of plain exchanges (a user row, then an answer; an odd count ends
    on a question committed unanswered), all sent, then the user row."""
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"r{i}"} for i in range(log_rows)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = engine_over({"type": "stack"}, history)
        engine.user({"role": "user", "content": "next"})
        asm = engine.assemble()
    assert len(engine.conversation.committed_messages) == log_rows
    assert type(asm.sent) is kind
    assert len(asm.messages) == log_rows + 1
