"""What one incremental assembly reads.

The committed log's range is followed in the payload by the user turn, which closes the log's last
pairing unit: that unit is skipped as clean like the rest (when it is), so the pairing pass reads only
the system band's row and the user row of a usual call — and the result stays the one the reference
path gives (test_incremental_equals_reference.py holds the two equal for random conversations).
"""

from __future__ import annotations

import json

from inspector.engine import ContextAssembler, ContextEngine
from inspector.manifest import settings_from_dict


def _engine() -> ContextEngine:
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": "stack"},
                                                       "models": [{"model": "gpt-4o", "context_window": 32_000}]}})
    return ContextEngine(s, counter="estimate")


def _turn(engine: ContextEngine, t: int, rounds: int) -> list:
    engine.user(f"question {t}")
    asms = []
    for r in range(rounds):
        asms.append(engine.assemble())
        cid = f"c{t}_{r}"
        engine.record({"role": "assistant", "content": "", "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "f", "arguments": json.dumps({"t": t})}}]})
        engine.record({"role": "tool", "tool_call_id": cid, "content": f"result {t} {r}"})
    asms.append(engine.assemble())
    engine.record({"role": "assistant", "content": f"answer {t}"})
    engine.commit()
    return asms


def _outside(asm) -> list[int]:
    covered = {i for a, b in asm.clean for i in range(a, b)}
    return [i for i in range(len(asm.messages)) if i not in covered]


def test_a_usual_call_reads_only_the_system_and_user_rows() -> None:
    engine = _engine()
    engine.conversation.system_message = {"role": "system", "content": "be brief"}
    for t in range(3):
        _turn(engine, t, 2)
    for asm in _turn(engine, 3, 2):
        msgs = asm.messages
        user_at = next(i for i, m in enumerate(msgs) if m.get("content") == "question 3")
        # the log ends with a reply (or an answered ask): closed by the user row, so skipped as clean
        assert _outside(asm) == [0, user_at]
        assert asm.verified and asm.check == "ok"


def test_an_open_ask_ending_the_log_is_still_read() -> None:
    """A committed ask whose results never came (a turn cut off) is not clean: the pass reads it and
    repairs it exactly as the reference does."""
    engine, ref_engine = _engine(), _engine()
    ref_engine.assembler.incremental = False
    for e in (engine, ref_engine):
        e.user("first")
        e.record({"role": "assistant", "content": "", "tool_calls": [
            {"id": "lost", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
        e.commit()
        e.user("second")
    fast, ref = engine.assemble(), ref_engine.assemble()
    assert fast.messages == ref.messages
    assert [r.as_dict() for r in fast.repairs] == [r.as_dict() for r in ref.repairs]
    assert fast.repairs  # the open ask was repaired (read), not skipped
    assert isinstance(engine.assembler, ContextAssembler)


def test_the_precut_takes_the_overflowing_group_so_the_trimmer_drops_no_history() -> None:
    """An uncapped stack over its window: the pre-cut cuts through the group of the newest row that
    overflows (the trimmer would drop it anyway), so on both paths the trimmer removes nothing from
    history, and the payload and the rows trimmed are what the trimmer alone gives."""
    s = settings_from_dict({"kind": "Agent", "spec": {
        "context_manager": {"type": "stack", "params": {"trimmer": {"max_tokens": 1_500, "reserve_tokens": 0}}}}})
    engines = [ContextEngine(s, counter="estimate") for _ in range(3)]
    engines[1].assembler.incremental = False  # the reference path
    engines[2].assembler.precut = False  # the trimmer alone (the oracle)
    overflowed = 0
    for t in range(12):
        for e in engines:
            e.user(f"question {t} " + "words " * 20)
        for r in range(2):
            calls = [e.assemble() for e in engines]
            assert calls[0].messages == calls[1].messages == calls[2].messages
            assert [x.message for x in calls[0].trimmed] == [x.message for x in calls[2].trimmed]
            if calls[2].trimmer_removed:  # the trimmer alone had to drop history here
                overflowed += 1
                assert calls[0].precut and calls[1].precut
                assert not [x for x in calls[0].trimmer_removed if x.source == "history"]
                assert not [x for x in calls[1].trimmer_removed if x.source == "history"]
            for e in engines:
                cid = f"c{t}_{r}"
                e.record({"role": "assistant", "content": "", "tool_calls": [
                    {"id": cid, "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
                e.record({"role": "tool", "tool_call_id": cid, "content": "result " * 30})
        for e in engines:
            e.record({"role": "assistant", "content": f"answer {t}"})
            e.commit()
    assert overflowed > 5


def test_a_fold_that_drops_more_rows_than_the_near_scan_is_taken_over() -> None:
    """``LogRuns._refold`` compares the first ``_NEAR`` positions one by one and scans the rest in C:
    a fold dropping fewer rows, exactly that many, or more is taken over either way (the kept rows
    are not read again) and its facts equal a fresh walk."""
    from inspector.engine.history import _NEAR, LogRuns, turn_starts
    from inspector.engine.tokens import EstimateCounter

    counter = EstimateCounter()
    for drop in (0, 3, _NEAR - 1, _NEAR, _NEAR + 1, 3 * _NEAR):
        for block in (False, True):
            log = [{"role": "user" if i % 4 == 0 else "assistant", "content": f"row {i}"} for i in range(4 * _NEAR)]
            runs = LogRuns().sync(log, counter)
            head = [{"role": "system", "content": "[summary]"}] if block else []
            new = head + log[drop:]
            read = runs.read
            runs.sync(new, counter)
            assert runs.read - read == len(head)  # only the block is read: the kept rows are taken over
            assert runs.starts == turn_starts(new)
            assert runs.history(0, len(new)) == sum(counter.history_unit(m) for m in new)
