"""A frontier table's first mapping over a long log is done in bulk, with the answers of one entry at a time.

Rule (inspector/replay/replaced.py): ``FrontierTable.sync`` maps many new entries (a first clearing
call of a long turn: thousands) in one pass of C loops, and gives the refs, reasons, rows, originals,
ids and answer it gives mapping them one by one, for a table that maps and for one that does not.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.contracts import ReplacedBefore, Replacement
from inspector.engine.types import Message
from tests.builders import UnitsOf, spy


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 12), st.integers(0, 12), st.sampled_from(["ok", "copy", "behind", "short"]))
def test_mapping_a_frontier_table_in_bulk_is_mapping_it_entry_by_entry(old: int, new: int, fault: str) -> None:
    """``FrontierTable.sync`` over ``old`` entries then ``new`` more, in bulk (from 1 entry on) and one by
    one: the same refs, reasons, rows, originals, ids and answer, for a table that maps and for one
    whose last entry does not (a copy of its row, an entry standing before the one ahead of it, an
    index past the rows)."""
    from inspector.replay.replaced import FrontierTable

    log: list[Message] = [{"role": "user", "content": str(i)} for i in range(2 * (old + new) + 2)]
    ref = {id(m): i for i, m in enumerate(log)}
    table = [Replacement(2 * k + 1, {"role": "user", "content": f"r{k}"}, f"why{k % 3}") for k in range(old + new)]
    if new and fault == "copy":
        log = log[:]
        log[table[-1].index] = dict(log[table[-1].index])
    elif new and fault == "behind":
        table[-1] = Replacement(0, {"role": "user"}, "why")
    elif new and fault == "short":
        table[-1] = Replacement(len(log), {"role": "user"}, "why")
    got = []
    real = FrontierTable.BATCH
    try:
        for batch in (1, 10 ** 9):
            FrontierTable.BATCH = batch  # type: ignore[misc]
            fr = FrontierTable(table[:old])
            a = fr.sync(log, ref, log)
            fr.table = table
            b = fr.sync(log, ref, log)
            got.append((a, b, fr.ok, fr.refs, fr.reasons, fr.rows, [fr.msgs[r] for r in fr.refs], fr.row_ids()))
    finally:
        FrontierTable.BATCH = real  # type: ignore[misc]
    assert got[0] == got[1]


def test_a_working_frontier_call_makes_one_rows_view(monkeypatch: Any) -> None:
    """Working memory read through a frontier view (the call's working memory, a ``ReplacedRows`` the
    assembler makes) and its frontier index's rows are one view, made once a call: 3 calls over a
    growing working memory, 3 views made (6 before: one more per call for the index); a view over
    other rows (or another view) is not taken for the index's."""
    from inspector.engine.assembly.replacing import ReplacingSums
    from inspector.engine.assembly.row_index import RowIndex
    from inspector.engine.contracts import ReplacedRows

    counter: Any = UnitsOf()
    rows: list[Message] = [{"role": "user", "content": "", "u": 1 + i % 3} for i in range(12)]
    table = [Replacement(i, {"role": "user", "content": "", "u": 1}, "cleared") for i in (1, 3, 5, 7)]
    made = spy(monkeypatch, ReplacedRows, "__init__")
    sums, wm, wmi = ReplacingSums(), [], RowIndex(counter)
    for n, upto in ((6, 2), (8, 3), (10, 4)):
        wm[len(wm):] = rows[len(wm):n]
        view = ReplacedBefore(table, upto)
        sent = ReplacedRows(wm, view, view.at, sums.flat)
        idx = sums.frontier(wmi.sync(wm), view, counter, sent)
        assert idx.rows is sent
    assert len(made) == 3
    other = ReplacedBefore(table, 4)
    assert sums.frontier(wmi, other, counter, sent).rows is not sent and len(made) == 4
