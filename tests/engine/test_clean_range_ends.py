"""Clean ranges that reach the ends of a range.

:func:`~inspector.engine.assembly.row_index.clean_ranges` gives the first unit of a range when it begins
at the range's start, and with ``to_end`` (the range ends the payload, as working memory does) the
index's last unit when it is complete and clean. The pairing repair and the final check given those
ranges must still give the full pass's result, for payloads that end with the range and for ones
where the range is followed by a user row (which closes its last unit as nothing else would).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.assembly.row_index import RowIndex, clean_ranges
from inspector.engine.pairing import check_provider_payload, sanitize_provider_messages
from inspector.engine.tokens import make_counter
from test_incremental_equals_reference import payloads


def _verdict(payload: list[dict], **kw: object) -> str:
    try:
        check_provider_payload(payload, **kw)  # type: ignore[arg-type]
    except ValueError as exc:
        return str(exc)
    return "ok"


@settings(max_examples=400, deadline=None)
@given(rows=payloads(), cut=st.integers(0, 60), to_end=st.booleans(), user_after=st.booleans())
def test_skipping_the_ranges_clean_ends_equals_the_full_pass(rows: list[dict], cut: int, to_end: bool,
                                                            user_after: bool) -> None:
    """``to_end`` holds for a range followed by nothing or by a row that is not a tool row (the assembly
    gives it to the committed log's range when the user turn follows): both are checked."""
    idx = RowIndex(make_counter("estimate")).sync(rows)
    lo = min(cut, len(rows))
    tail = [{"role": "user", "content": "now"}] if user_after or not to_end else []
    payload = [{"role": "system", "content": "band"}, *rows[lo:], *tail]
    ranges = clean_ranges(idx, lo, len(rows), to_end)
    for a, b in ranges:  # whole units: a unit head starts each range and the next row (if any) is no result
        assert a in idx.starts and lo <= a < b <= len(rows)
        assert b == len(rows) or rows[b].get("role") != "tool"
    skip = [(a - lo + 1, b - lo + 1) for a, b in ranges]

    def declares(rid: str) -> bool:
        return any(idx.declares(rid, a + lo - 1, b + lo - 1) for a, b in skip)

    full = sanitize_provider_messages(payload)
    part = sanitize_provider_messages(payload, skip=skip, skip_declares=declares)
    assert part.verified == full.verified
    assert (part.messages, list(part.origin), part.repairs) == (full.messages, list(full.origin), full.repairs)
    assert [part.messages[a:b] for a, b in part.clean] == [payload[a:b] for a, b in skip]
    assert _verdict(part.messages) == _verdict(part.messages, skip=part.clean, skip_declares=declares)
    assert _verdict(payload) == _verdict(payload, skip=skip, skip_declares=declares)


def test_a_complete_last_unit_is_clean_only_at_the_payload_end() -> None:
    ask = {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "type": "function",
                                                               "function": {"name": "f", "arguments": "{}"}}]}
    rows = [{"role": "user", "content": "hi"}, ask, {"role": "tool", "tool_call_id": "a", "content": "x"}]
    idx = RowIndex(make_counter("estimate")).sync(rows)
    assert idx.last_unit_clean()
    assert clean_ranges(idx, 0, 3) == [(0, 1)]  # the user row; the ask may still be answered further
    assert clean_ranges(idx, 0, 3, to_end=True) == [(0, 3)]
    idx.sync([*rows, ask])  # the same ask again: its result is still owed
    assert not idx.last_unit_clean()
    assert clean_ranges(idx, 0, 4, to_end=True) == [(0, 3)]  # not the open ask
