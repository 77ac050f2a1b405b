"""What a frontier call reads of its payload view and its frontier index (operation counts, never time).

Rules: a frontier index's rows view moves the flat replaced log (``contracts.FlatRows``) only when the
view is sliced, not when it is pointed at a call's frontier; the trimmer hands on a payload view's
parts as they are when it drops nothing (no walk over them, ``JoinedRows.cut``); the trimmer and the
pairing pass read a view's length from it, not through ``len()`` (a Python call each);
``check_record`` answers a frontier record from the two ends of its view, raising as before for
an end outside the log.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.contracts import EditRecord, FlatRows, ReplacedBefore, Replacement, check_record
from inspector.engine.types import JoinedRows, Message
from tests.builders import UnitsOf, sent_sums, spy



def _log(n: int) -> list[Message]:
    return [{"role": "user", "content": f"row {i}", "u": 1} for i in range(n)]


def test_a_frontier_views_flat_log_is_moved_only_when_the_view_is_sliced(monkeypatch: Any) -> None:
    """A 10-row log, a table replacing rows 1, 3, 5, 7; the index pointed at the views of 1..4
    entries (frontiers 2, 4, 6, 8): 0 moves. Slicing the last view ``[2:9]``: 1 move, rows 3, 5, 7
    replaced (below 8), 2, 4, 6, 8 as they are. The view of 2 entries (frontier 4), pointed at
    again and sliced whole: a 2nd move, back, only rows 1 and 3 replaced."""
    from inspector.engine.assembly.replacing import ReplacingSums
    from inspector.engine.assembly.row_index import RowIndex

    counter: Any = UnitsOf()
    rows = _log(10)
    log = RowIndex(counter).sync(rows)
    table = [Replacement(i, {"role": "user", "content": "masked", "u": 1}, "masked") for i in (1, 3, 5, 7)]
    moved = spy(monkeypatch, FlatRows, "move")
    sums = ReplacingSums()
    idx = None
    for upto in (1, 2, 3, 4):
        idx = sums.frontier(log, ReplacedBefore(table, upto), counter)
    assert idx is not None and len(moved) == 0
    assert idx.rows[2:9] == [rows[2], table[1].row, rows[4], table[2].row, rows[6], table[3].row, rows[8]]
    assert len(moved) == 1
    idx = sums.frontier(log, ReplacedBefore(table, 2), counter)
    assert idx.rows[0:10] == [rows[0], table[0].row, rows[2], table[1].row, *rows[4:]]
    assert len(moved) == 2


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 3), st.integers(0, 6), st.integers(0, 6), st.integers(0, 4))
def test_the_trimmer_hands_on_a_views_parts_when_it_drops_nothing(off: int, head: int, start: int, cur: int) -> None:
    """``_kept(view, head, start, tail, cur)`` is ``view[:head] + view[start:] + tail[cur:]`` for every
    head, start and cut; when ``start <= head`` (nothing dropped) it is a view of the same parts and
    the tail's kept rows, built without ``JoinedRows.cut`` (0 calls; 1 otherwise)."""
    from inspector.engine.trim import _kept

    lead, log, user = _log(off), _log(8), _log(1)
    tail = _log(4)
    view = JoinedRows([(lead, 0, off), (log, 2, 8), (user, 0, 1)])
    cuts: list[Any] = []
    real = JoinedRows.cut

    def counted(self: Any, *args: Any) -> Any:
        cuts.append(args)
        return real(self, *args)

    JoinedRows.cut = counted  # type: ignore[method-assign]
    try:
        got = _kept(view, head, start, tail, cur, True)
    finally:
        JoinedRows.cut = real  # type: ignore[method-assign]
    rows = view.to_list()
    assert type(got) is JoinedRows
    assert got.to_list() == rows[:head] + rows[max(start, head):] + tail[cur:]
    assert len(got) == len(got.to_list())
    assert len(cuts) == (0 if start <= head else 1)


def test_the_trimmer_and_the_pairing_pass_read_a_views_length_without_len(monkeypatch: Any) -> None:
    """A 9-row payload view (system row, 7 log rows, user row) that fits: the trimmer and the pairing
    pass need its length; ``JoinedRows.__len__`` runs 0 times (it ran 4 times: once in the trimmer,
    three times in the pairing pass)."""
    from inspector.engine.pairing import sanitize_provider_messages
    from inspector.engine.trim import RowSums, trim_with_sums

    system: list[Message] = [{"role": "system", "content": "s", "u": 1}]
    log, user = _log(7), [{"role": "user", "content": "q", "u": 1}]
    view = JoinedRows([(system, 0, 1), (log, 0, 7), (user, 0, 1)])
    lens = spy(monkeypatch, JoinedRows, "__len__")
    sums = RowSums(lambda i, j: j - i, 9, lambda k: 1, lambda i, j: j - i, 0, [])
    trimmed = trim_with_sums(view, max_tokens=100, reserve=0, fixed=0, pin_tail=[], counter=UnitsOf(),  # type: ignore[arg-type]
                             sums=sums, owned=True)
    sanitized = sanitize_provider_messages(trimmed.messages, skip=[(1, 8)], owned=True)
    assert sanitized.messages is trimmed.messages and trimmed.messages.n == 9  # type: ignore[union-attr]
    assert list(sanitized.origin) == list(range(9))
    assert len(lens) == 0


@pytest.mark.parametrize(("last", "fault"), [(9, None), (10, "replaced row 10 is not a kept row")])
def test_a_frontier_record_is_checked_at_the_two_ends_of_its_view(last: int, fault: str | None) -> None:
    """A record over a 10-row log keeping every row, its view's entries at rows 2, 5 and ``last``: the
    last entry at row 9 (the log's last) passes; at row 10 (past the log) it is refused, with the
    full check's words. A view of 0 entries passes."""
    table = [Replacement(i, {"role": "tool", "content": "x"}, "masked") for i in (2, 5, last)]
    past = _log(10)
    record = EditRecord(10, ((0, 10),), ReplacedBefore(table, 3))
    check_record(EditRecord(10, ((0, 10),), ReplacedBefore(table, 0)), past, [])
    if fault is None:
        check_record(record, past, [])
    else:
        with pytest.raises(ValueError, match=fault):
            check_record(record, past, [])


@settings(max_examples=120, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=40), st.data())
def test_a_frontier_indexs_sums_are_the_replaced_logs_running_sums_for_every_view(units: list[int], data: Any) -> None:
    """``ReplacingSums.frontier(...).pre[i]`` is the sum of the first ``i`` rows sent (each replaced row
    as its new row), for logs of every length and views whose frontier moves on and back, over two tables
    (the manager started again)."""
    from inspector.engine.assembly.replacing import ReplacingSums
    from inspector.engine.assembly.row_index import RowIndex

    counter: Any = UnitsOf()
    rows: list[Message] = [{"role": "user", "content": "", "u": u} for u in units]
    sums = ReplacingSums()
    for _table in range(2):
        at = sorted(data.draw(st.sets(st.integers(0, len(rows) - 1), max_size=len(rows))))
        table = [Replacement(i, {"role": "user", "content": "", "u": data.draw(st.integers(1, 9))}, "masked")
                 for i in at]
        for upto in data.draw(st.lists(st.integers(0, len(table)), min_size=1, max_size=6)):
            view = ReplacedBefore(table, upto)
            n = data.draw(st.integers(view.frontier, len(rows)))
            log = RowIndex(counter).sync(rows[:n])
            idx = sums.frontier(log, view, counter)
            want = sent_sums(rows, view, n)
            assert [idx.pre[i] for i in range(n + 1)] == want



@pytest.mark.parametrize(("last", "fault"), [(5, None), (6, "newest group starts at 6"), (7, "newest group starts at 6")])
def test_a_working_memory_frontier_record_is_checked_at_the_two_ends_of_its_views(last: int, fault: str | None) -> None:
    """A record over a 4-row log keeping every row, its log view's entries at rows 1 and 3, its
    working-memory view's at rows 1, 3 and ``last`` of an 8-row working memory whose newest group
    starts at row 6 (its last assistant row): the last entry at row 5 passes; at row 6 or 7 (the
    newest group) it is refused, with the full check's words. A record whose log view reaches past
    the log is refused as a frontier record of the log alone is."""
    table = [Replacement(i, {"role": "tool", "content": "x"}, "cleared") for i in (1, 3, last)]
    log_table = [Replacement(i, {"role": "tool", "content": "x"}, "cleared") for i in (1, 3)]
    past = _log(4)
    working: list[Message] = [{"role": "assistant" if k % 2 == 0 else "tool", "content": "x"} for k in range(8)]
    record = EditRecord(4, ((0, 4),), ReplacedBefore(log_table, 2), (), ReplacedBefore(table, 3))
    check_record(EditRecord(4, ((0, 4),), (), (), ReplacedBefore(table, 2)), past, working)
    if fault is None:
        check_record(record, past, working)
        check_record(EditRecord(0, (), (), (), ReplacedBefore(table, 3)), [], working)
    else:
        with pytest.raises(ValueError, match=fault):
            check_record(record, past, working)
    with pytest.raises(ValueError, match="replaced row 3 is not a kept row"):
        check_record(EditRecord(3, ((0, 3),), ReplacedBefore(log_table, 2), (), ReplacedBefore(table, 2)),
                     past[:3], working)
