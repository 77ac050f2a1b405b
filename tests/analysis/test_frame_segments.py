"""How a frame records its payload and its removals: the shortcuts for the usual shapes give exactly
what the general path gives, for every layout and every removal, not only the usual shapes the
byte-identity check replays.

* ``_segments`` takes a layout part that is one plain transcript run (a span read from its two ends,
  a row that is a transcript message as is) in place, and sends every other part through
  ``_part_segments``: held equal to the general path alone (every part through ``_part_segments``,
  adjacent plain runs merged) over random layouts, including rows of no transcript index, rebound
  copies, a transcript holding one message object twice, and spans that break the log's premise;
* ``_removed`` answers a call that removed nothing without reading further, and extends the last
  range in place for a removal right after it: held equal to the general path (every removed part
  through :meth:`_Refs.add_run`, then one merge of the ranges) over random pre-cuts and trimmer removals;
* a frame keeps the shipped assembler's ``bands`` dict as it is (a new one every call) and copies
  any other assembler's, which may be one dict updated in place.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine import PayloadRow
from inspector.engine.managers.summarising import SUMMARY_PREFIX, is_summary_block
from inspector.engine.types import Removal, Removals, RowsView, Span
from inspector.manifest import settings_from_dict
from inspector.replay import replay
from inspector.engine.contracts import ReplacedBefore, ReplacedRows, Replacement
from inspector.replay.ranges import SUMMARY_TRIMMED, _part_segments, _Refs, _removed, _segments, _split_replaced
from inspector.transcripts import parse_transcript

Message = dict[str, Any]


# -- the general paths: every part the same way, no shortcut ----------------------------------

def merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def general_removed(asm: Any, refs: _Refs) -> tuple[tuple[tuple[int, int], ...], int, tuple[dict[str, Any], ...]]:
    """Every removed part through :meth:`_Refs.add_run` (a single row by its own index), then one
    merge; summary blocks not sent: rows of no transcript index among the pre-cut's first three and
    the trimmer's single rows."""
    removed, pre = asm.trimmer_removed, asm.precut
    few: Sequence[Any] = removed.parts() if isinstance(removed, Removals) else removed
    ranges: list[tuple[int, int]] = []
    lone: list[Message] = []
    synth = 0
    if type(pre) is RowsView:
        head, rows, lo, hi = pre.source()
        if head:
            synth += refs.add_run(ranges, head, 0, len(head))
        if hi > lo:
            synth += refs.add_run(ranges, rows, lo, hi)
        if synth:
            lone = [m for m in [*head[:3], *rows[lo:min(hi, lo + 3)]][:3] if refs.get(m) is None]
    elif pre:
        synth += refs.add_run(ranges, pre, 0, len(pre))
        if synth:
            lone = [m for m in pre[:3] if refs.get(m) is None]
    for part in few:
        if type(part) is tuple:
            synth += refs.add_run(ranges, part[0], part[1], part[2])
        else:
            m = part.message
            r = refs.get(m)
            if r is None:
                synth += 1
                lone.append(m)
            else:
                ranges.append((r, r + 1))
    not_sent = tuple([{"kind": "summary", "reason": SUMMARY_TRIMMED, "content": m.get("content")}
                      for m in lone if is_summary_block(m)]) if lone else ()
    return tuple(ranges if len(ranges) < 2 else merged(ranges)), synth, not_sent


def general_segments(layout: Iterable[Any], refs: _Refs) -> list[Any]:
    """Every part through ``_part_segments`` (the general path), adjacent plain runs of one band merged."""
    out: list[Any] = []
    for part in layout:
        if type(part) is Span and part.hi <= part.lo:
            continue
        for seg in _part_segments(part, refs):
            ref, n, band, kind, own = seg
            if out and kind is None and own is None and ref is not None:
                p_ref, p_n, p_band, p_kind, p_own = out[-1]
                if p_kind is None and p_own is None and p_ref is not None and p_band == band and p_ref + p_n == ref:
                    out[-1] = (p_ref, p_n + n, band, None, None)
                    continue
            out.append(seg)
    return out


# -- random transcripts, layouts and removals -------------------------------------------------------

BANDS = st.sampled_from(["system", "history", "working_memory", "user", "summary"])
KINDS = st.sampled_from([None, None, "system_band", "summary", "empty_result", "placeholder"])


@st.composite
def worlds(draw: Any) -> tuple[list[Message], list[Message]]:
    """A transcript (one message object may stand in it twice: later duplicates win) and rows that
    are not transcript messages (some of them summary blocks)."""
    msgs: list[Message] = [{"role": draw(st.sampled_from(["user", "assistant", "tool"])), "content": f"m{i}"}
                           for i in range(draw(st.integers(0, 10)))]
    if msgs and draw(st.booleans()):
        msgs.insert(draw(st.integers(0, len(msgs))), msgs[draw(st.integers(0, len(msgs) - 1))])
    others: list[Message] = [{"role": "system", "content": f"{SUMMARY_PREFIX} other {i}"} if i % 2 else
                             {"role": "user", "content": f"other {i}"} for i in range(3)]
    return msgs, others


def row_lists(draw: Any, msgs: list[Message], others: list[Message]) -> list[Message]:
    """Rows in transcript order (the log's premise), now and then with a foreign row, or in any order."""
    pool = msgs + others
    if not pool:
        return []
    if msgs and draw(st.booleans()):
        a = draw(st.integers(0, len(msgs) - 1))
        b = draw(st.integers(a, len(msgs)))
        rows = list(msgs[a:b])
        if rows and draw(st.booleans()):
            rows.insert(draw(st.integers(0, len(rows))), draw(st.sampled_from(pool)))
        return rows
    return draw(st.lists(st.sampled_from(pool), max_size=8))


@st.composite
def layouts(draw: Any) -> tuple[list[Message], list[Any]]:
    msgs, others = draw(worlds())
    pool = msgs + others
    layout: list[Any] = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            rows = row_lists(draw, msgs, others)
            lo = draw(st.integers(0, len(rows)))
            hi = draw(st.integers(0, len(rows)))
            layout.append(Span(rows, lo, hi, draw(BANDS)))
        elif pool:
            msg = draw(st.sampled_from(pool))
            how = draw(st.sampled_from(["as_is", "copy", "other_source", "no_source"]))
            if how == "copy":  # a rebound copy of a message
                layout.append(PayloadRow(dict(msg), draw(BANDS), draw(KINDS), msg))
            elif how == "other_source":
                layout.append(PayloadRow(msg, draw(BANDS), draw(KINDS), draw(st.sampled_from(pool))))
            elif how == "no_source":
                layout.append(PayloadRow(msg, draw(BANDS), draw(KINDS), None))
            else:
                layout.append(PayloadRow(msg, draw(BANDS), draw(KINDS), msg))
    return msgs, layout


@settings(max_examples=400, deadline=None)
@given(layouts())
def test_segments_equal_the_general_path(case: tuple[list[Message], list[Any]]) -> None:
    msgs, layout = case
    refs = _Refs(msgs)
    assert _segments(layout, refs) == general_segments(layout, refs)


@settings(max_examples=300, deadline=None)
@given(layouts(), st.data())
def test_a_span_over_a_kept_apart_frontier_table_is_laid_as_its_own_rows(
        case: tuple[list[Message], list[Any]], data: Any) -> None:
    """The rule (``_segments``' ``apart``): a span over a frontier record's rows whose table the frame
    keeps apart is laid as the span over the log's own rows, read in place; any other frontier span
    is split into own rows and replacement rows (``_split_replaced``), as before."""
    msgs, layout = case
    refs = _Refs(msgs)
    mine: list[Replacement] = []
    other: list[Replacement] = []
    wrapped: list[Any] = []
    for part in layout:
        if type(part) is Span and part.rows and data.draw(st.booleans()):
            table = mine if data.draw(st.booleans()) else other
            k = data.draw(st.integers(0, len(part.rows) - 1))
            table[:] = [Replacement(k, {"role": "tool", "content": "<MASKED>"}, "observation-masked")]
            rows = ReplacedRows(part.rows, ReplacedBefore(table, 1))
            wrapped.append(Span(rows, part.lo, part.hi, part.band))
        else:
            wrapped.append(part)
    if not any(type(p) is Span and type(p.rows) is ReplacedRows and p.rows.replaced.table is other for p in wrapped):
        assert _segments(wrapped, refs, apart=(mine, None)) == _segments(layout, refs)
    assert _segments(wrapped, refs, apart=(mine, None)) == _segments(list(_split_replaced(wrapped, (mine, None))), refs)


def test_segments_of_the_usual_layout_are_plain_runs() -> None:
    msgs: list[Message] = [{"role": "system", "content": "s"}] + \
        [{"role": "user" if i % 2 else "assistant", "content": str(i)} for i in range(9)]
    refs = _Refs(msgs)
    log, wm = msgs[1:6], msgs[7:]
    layout = [PayloadRow(msgs[0], "system", None, msgs[0]), Span(log, 1, 5, "history"),
              PayloadRow(msgs[6], "user", None, msgs[6]), Span(wm, 0, 3, "working_memory")]
    assert _segments(layout, refs) == [(0, 1, "system", None, None), (2, 4, "history", None, None),
                                       (6, 1, "user", None, None), (7, 3, "working_memory", None, None)]
    # the same band and contiguous: one run
    assert _segments([Span(log, 0, 2, "history"), Span(log, 2, 5, "history")], refs) == [(1, 5, "history", None, None)]


def test_a_message_object_standing_twice_in_the_transcript_takes_its_later_index() -> None:
    x, d, y = ({"role": "user", "content": c} for c in "xdy")
    msgs = [x, d, y, d]  # later duplicates win: d is message 3
    refs = _Refs(msgs)
    layout = [Span([x, d], 0, 2, "history")]
    assert _segments(layout, refs) == general_segments(layout, refs) == [(0, 1, "history", None, None),
                                                                      (3, 1, "history", None, None)]
    asm = SimpleNamespace(precut=RowsView([], [x, d], 0, 2), trimmer_removed=[Removal(y, "history")])
    assert _removed(asm, refs) == general_removed(asm, refs) == (((0, 1), (2, 4)), 0, ())


@st.composite
def removals(draw: Any) -> tuple[list[Message], Any]:
    msgs, others = draw(worlds())
    pool = msgs + others
    kind = draw(st.sampled_from(["view", "list", "empty"]))
    if kind == "view":
        rows = row_lists(draw, msgs, others)
        head = draw(st.lists(st.sampled_from(pool), max_size=2)) if pool else []
        pre: Any = RowsView(head, rows, draw(st.integers(0, len(rows))), draw(st.integers(0, len(rows))))
    elif kind == "list":
        pre = row_lists(draw, msgs, others)
    else:
        pre = ()
    use_parts = draw(st.booleans())
    removed: Any = Removals() if use_parts else []
    for _ in range(draw(st.integers(0, 5))):
        if use_parts and draw(st.booleans()):
            rows = row_lists(draw, msgs, others)
            removed.add_range(rows, draw(st.integers(0, len(rows))), draw(st.integers(0, len(rows))), "history")
        elif pool:
            if msgs and draw(st.booleans()):  # the row right after the pre-cut, as the trimmer takes it
                m = msgs[min(len(msgs) - 1, draw(st.integers(0, len(msgs))))]
            else:
                m = draw(st.sampled_from(pool))
            removed.append(Removal(m, "history"))
    return msgs, SimpleNamespace(precut=pre, trimmer_removed=removed)


@settings(max_examples=400, deadline=None)
@given(removals())
def test_removed_equals_the_general_path(case: tuple[list[Message], Any]) -> None:
    msgs, asm = case
    refs = _Refs(msgs)
    assert _removed(asm, refs) == general_removed(asm, refs)


def test_removed_after_the_precut_extend_its_range() -> None:
    msgs: list[Message] = [{"role": "user", "content": str(i)} for i in range(8)]
    refs = _Refs(msgs)
    removed = [Removal(msgs[4], "history"), Removal(msgs[5], "history"), Removal(msgs[1], "history")]
    asm = SimpleNamespace(precut=RowsView([], msgs, 2, 4), trimmer_removed=removed)
    assert _removed(asm, refs) == (((1, 6),), 0, ())
    assert _removed(SimpleNamespace(precut=RowsView([], msgs, 3, 3), trimmer_removed=[]), refs) == ((), 0, ())


# -- the bands dict a frame keeps ------------------------------------------------------------------

def _transcript() -> Any:
    rows: list[dict[str, Any]] = []
    for i in range(4):
        rows += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]
    return parse_transcript(json.dumps(rows), name="t.json")


def test_frames_of_the_shipped_assembler_keep_one_bands_dict_each() -> None:
    rp = replay(None, _transcript(), counter="estimate")
    assert len(rp.frames) == 4
    assert len({id(f.bands) for f in rp.frames}) == len(rp.frames)


PLUGIN = '''
from inspector.engine import ContextAssembler

class Asm(ContextAssembler):
    """Hands out one bands dict, updated in place on every call."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.shared = {}

    def assemble(self, engine):
        asm = super().assemble(engine)
        self.shared.clear()
        self.shared.update(asm.bands)
        asm.bands = self.shared
        return asm
'''


@pytest.fixture()
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    name = f"bands_probe_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_frames_copy_the_bands_of_another_assembler(plugin: str) -> None:
    tr = _transcript()
    doc = {"kind": "Agent", "spec": {"assembler": {"ref": f"{plugin}:Asm"}}}
    rp = replay(settings_from_dict(doc, allow_imports=[plugin]), tr, counter="estimate", allow_imports=[plugin])
    plain = replay(None, tr, counter="estimate")
    assert [f.bands for f in rp.frames] == [f.bands for f in plain.frames]  # not the last call's, four times
    assert len({id(f.bands) for f in rp.frames}) == len(rp.frames)


def test_a_call_whose_manager_replaced_nothing_maps_its_layout_once_and_no_replaced_rows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Operation count of the recorder's payload: the default strategy replaces no row, so each of
    the 4 calls maps its layout once (``_segments``) and never builds a replaced-row map
    (``replaced_rows``, which reads the committed log and working memory)."""
    import inspector.replay.recorder as recorder

    counts = {"_segments": 0, "replaced_rows": 0}
    for name in counts:
        real = getattr(recorder, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            counts[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(recorder, name, counted)
    rp = replay(None, _transcript(), counter="estimate")
    assert len(rp.frames) == 4
    assert counts == {"_segments": 4, "replaced_rows": 0}


def test_removed_reads_a_frontier_calls_precut_run_from_its_two_ends(monkeypatch: Any) -> None:
    """A pre-cut alone (no trimmer removal) over a frontier record's rows (a ``ReplacedRows`` view:
    row 3 sent as a placeholder) is one transcript run: ``((1, 5),)`` read from rows 1 and 4 of the
    log, no run walked (:meth:`_Refs.add_run` not called), the placeholder read as the log's own row;
    a run with a row of no transcript index in it still goes the general way (one ``add_run``: ranges
    0 and 1 merged, one synthesised row)."""
    from tests.builders import spy

    msgs: list[Message] = [{"role": "user", "content": str(i)} for i in range(8)]
    refs = _Refs(msgs)
    table = [Replacement(3, {"role": "user", "content": "<cleared>"}, "tool-result-cleared")]
    view = ReplacedRows(msgs, ReplacedBefore(table, 1))
    walked = spy(monkeypatch, _Refs, "add_run", arg=2)
    assert _removed(SimpleNamespace(precut=RowsView([], view, 1, 5), trimmer_removed=[]), refs) == (((1, 5),), 0, ())
    assert walked == []
    broken = [msgs[0], {"role": "user", "content": "new"}, msgs[1]]  # ends 1 apart, 3 rows: not one run
    assert _removed(SimpleNamespace(precut=RowsView([], broken, 0, 3), trimmer_removed=[]), refs) == (
        ((0, 2),), 1, ())
    assert len(walked) == 1
