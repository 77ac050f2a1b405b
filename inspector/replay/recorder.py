"""The replay's recorder: what a replay writes down as it drives the engine, call by call and turn by turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspector.engine import CommitRecord, ContextAssembler, ContextEngine
from inspector.engine.summarizers import Summarizer
from inspector.engine.types import Message
from inspector.engine.contracts import ReplacedBefore
from inspector.replay.ranges import FrontierSwaps, Swaps, _Refs, _removed, _replaced, _row_ranges, _segments, \
    replaced_rows
from inspector.replay.records import CallDecision, Commit, Frame, FrameRepair, Segment
from inspector.replay.replaced import FrontierSegments, FrontierTable, ReplacedRefs, frontier_frame, kept_prefix
from inspector.replay.result import Replay

_NEW = object.__new__  # a frame's views made by their slots, as frontier_frame makes them (no __init__ call)


class _Recorder:
    """What a replay records as it drives the engine: the turn and the step within it, one
    :class:`Frame` per LLM call and one :class:`Commit` per turn boundary, with the summarizer's
    cost attributed to the call or commit that incurred it.

    Stages, in transcript order: :meth:`user` (commit the open turn, start the next), :meth:`call`
    (assemble and record a frame; the rows before the first user message form the preamble turn
    0), :meth:`finish` (the pending call of a transcript that does not end with a reply, else the
    last commit). Guarantee: the same calls in the same order give the same frames and commits.
    """

    def __init__(self, rp: Replay, engine: ContextEngine, summ: Summarizer | None, msgs: Sequence[Message],
                 usage_by_index: dict[int, Any]) -> None:
        self.rp, self.engine, self.summ, self.msgs = rp, engine, summ, msgs
        self.refs = _Refs(msgs)
        self.decisions: dict[tuple[Any, ...], CallDecision] = {}  # equal call decisions shared (immutable records)
        self.usage_by_index = usage_by_index
        self.price = engine.limits.input_cost_per_token
        self.costs: dict[int, float] = {}  # a payload's cost by its tokens (the price is the replay's)
        self.turn, self.step, self.open_turn = 0, 0, False
        # the engine's assembly and the replay's frame list, as every call uses them
        self.assemble, self.add_frame = engine.assemble, rp.frames.append
        self.frontier = FrontierTable()  # the replay's copy of a frontier record's table (one at a time)
        self.work = FrontierTable()  # working memory's table, when the log's record replaces nothing (one turn's)
        self.last_replaced: Sequence[tuple[int, str]] = ()  # the previous frame's (its JSON is relative to it)
        self.last_found = FrontierSwaps(self.frontier, 0, {})  # the usual frontier call's swaps (one, moved per call)
        self.work_found = FrontierSwaps(self.work, 0, {})  # a one-turn agent's (one per table, moved per call)
        self.own_bands = type(engine.assembler) is ContextAssembler
        """Whether a frame may keep its assembly's ``bands`` dict as it is: the shipped assembler builds a
        new one on every call and keeps no reference to it (nor to the assembly). Another assembler's
        dict may be one it updates in place, so a frame copies it."""

    def _usage_mark(self) -> int:
        return 0 if self.summ is None else len(self.summ.usage)

    def _summary_cost_since(self, n: int) -> float | None:
        """Cost of the summarizer calls logged since its usage log had ``n`` entries (0 when none)."""
        return None if self.summ is None else self.summ.cost(self.summ.usage[n:])

    def open_preamble(self) -> None:
        """Rows before the first user message form the preamble turn (0)."""
        if not self.open_turn:
            self.open_turn, self.turn, self.step = True, 0, 0

    def user(self, m: Message) -> None:
        if self.open_turn:
            self.commit()
        engine = self.engine
        engine.user(m)
        self.turn, self.step, self.open_turn = engine.conversation.turn_index, 0, True

    def call(self, next_index: int | None) -> None:
        """One LLM call: the payload assembled before the reply at ``next_index`` (None: the next
        call), recorded as one :class:`Frame`. Every fact of the engine's :class:`Assembly` is read
        once; equal call decisions share one :class:`CallDecision` (immutable; the calls of a turn
        mostly repeat one, so a new record is made once per distinct decision)."""
        if not self.open_turn:
            self.open_preamble()
        summ = self.summ
        mark = 0 if summ is None else len(summ.usage)  # (_usage_mark, inlined: once a call)
        asm = self.assemble(strict=False)
        d = asm.decision
        key = (d.action, d.compressed_turns, d.kept_turns, d.dropped_turns, d.summarizer_called, d.error, d.raw_tokens)
        decision = self.decisions.get(key)
        if decision is None:
            decision = self.decisions[key] = CallDecision(*key)
        refs = self.refs
        segments, replaced, swaps, kept = self._payload(asm.layout, d.edits)
        self.last_replaced = replaced
        trimmed, trimmed_synth, not_sent = _removed(asm, refs, swaps)
        repairs, warnings, tokens, price = asm.repairs, asm.warnings, asm.payload_tokens, self.price
        cost = None
        if price is not None:  # rounded once per distinct token count (``round`` to 10 places costs a microsecond)
            cost = self.costs.get(tokens)
            if cost is None:
                cost = self.costs[tokens] = round(tokens * price, 10)
        # the fields in Frame's declaration order
        self.add_frame(Frame(
            self.turn, self.step, len(self.msgs) if next_index is None else next_index, asm.budget,
            asm.bands if self.own_bands else dict(asm.bands),
            tokens, asm.headroom, decision, segments, trimmed, trimmed_synth,
            _row_ranges(d.folded, refs) if d.folded else (),  # most calls fold nothing
            tuple([FrameRepair(r, refs.get(row) if row is not None else None)
                   for r, row in zip(repairs, asm.repaired_rows or [None] * len(repairs))]) if repairs else (),
            asm.check, cost,
            self.usage_by_index.get(next_index) if next_index is not None and self.usage_by_index else None,
            d.summary_text, tuple(warnings) if warnings else (),
            self._summary_cost_since(mark) if d.summarizer_called else 0.0, not_sent, replaced, kept,
        ))
        if d.action == "summarizer-failed":
            self.rp.summarizer_failures += 1
        self.step += 1

    def _payload(self, layout: Any, edits: Any) -> tuple[Sequence[Segment], Sequence[tuple[int, str]],
                                                          Swaps | FrontierSwaps, int]:
        """A call's segments, replaced rows, swaps, and how many of its replaced rows are the previous
        frame's first ones (``kept``: what its JSON is relative to).

        The steady frontier call is recognised by identity and costs O(its new entries): the last frame
        was a frontier view (``last``) of a table, and this call's record is a view (``v``) of that same
        table, on the same side (the log's, or working memory's for a one-turn agent), replacing rows,
        the other side replacing none, that table's swaps lookup the one moved per call. :meth:`_edited`
        would take the same branch and do the same: map the table's new entries (``FrontierTable.sync``'s
        rule, in place; its ``ok`` holds, since a table that did not map has had no frontier frame since),
        lay the payload with the table apart, and make the views ``frontier_frame`` makes (``last`` again
        while the frontier stands and ``last`` has no working-memory extras); ``kept`` is the lower of the
        two frontiers (``kept_prefix`` of two views of one table, the new one without extras). Anything
        else (no last frontier frame, another table or side, rows replaced on both sides, an entry that
        does not map) is :meth:`_edited`'s, with ``kept`` by :func:`kept_prefix`.
        """
        refs = self.refs
        if edits is None:  # the usual call: no edit record, no row sent in place of another
            return tuple(_segments(layout, refs)), (), {}, 0
        last = self.last_replaced
        if type(last) is ReplacedRefs:  # the steady frontier call? (the rule above)
            fr = last.fr  # (self.work or self.frontier: the last frame's, kept since)
            if fr.in_working:
                v, other, found = edits.working, edits.replaced, self.work_found
            else:
                v, other, found = edits.replaced, edits.working, self.last_found
            table = fr.table  # (its ``ok`` holds: a table that did not map has had no frontier frame since)
            if type(v) is ReplacedBefore and v.table is table and v.upto and not other and found.fr is fr:
                upto = v.upto
                new = table[len(fr.refs):]
                if new:  # the table's new entries (usually one), mapped in place by sync's rule
                    have = fr.refs
                    conv = self.engine.conversation
                    rows = conv.working if fr.in_working else conv.committed_messages
                    try:  # (an entry past the rows, or none mapped yet: IndexError, and _edited's sync maps them)
                        for r in new:
                            m = rows[r.index]
                            t = refs.ref.get(id(m), -1)
                            if t <= have[-1] or refs.msgs[t] is not m:
                                upto = 0  # left to _edited (its sync finds the entry does not map)
                                break
                            have.append(t)
                            fr.reasons.append(r.reason)
                            fr.rows.append(r.row)
                    except IndexError:
                        upto = 0
                if upto:
                    found.upto = upto
                    segs = _NEW(FrontierSegments)
                    segs.runs = tuple(_segments(layout, refs, found, fr.apart))
                    segs.fr, segs.upto = fr, upto
                    a = last.upto
                    if a == upto and not last.extra:  # the frontier stood: the last frame's view again (immutable)
                        return segs, last, found, a
                    moved = _NEW(ReplacedRefs)
                    moved.fr, moved.upto, moved.extra = fr, upto, ()
                    return segs, moved, found, a if a < upto else upto
        view, wview = edits.replaced, edits.working  # (a view's truth read from its count: no len() call)
        if type(view) is not ReplacedBefore and not view and \
                not (wview.upto if type(wview) is ReplacedBefore else wview):
            return tuple(_segments(layout, refs)), (), {}, 0  # the record replaces nothing
        segments, replaced, swaps = self._edited(layout, edits)
        if type(replaced) is ReplacedRefs:  # a frontier frame: O(1) against the previous one's view, no len()
            return segments, replaced, swaps, kept_prefix(last, replaced)
        return segments, replaced, swaps, kept_prefix(last, replaced) if replaced and last else 0

    def _edited(self, layout: Any, edits: Any) -> tuple[Sequence[Segment], Sequence[tuple[int, str]],
                                                         Swaps | FrontierSwaps]:
        """:meth:`_payload`'s segments, replaced rows and swaps of a call with an edit record, in general. A
        frontier record (its log replacements a :class:`~inspector.engine.contracts.ReplacedBefore` view) is
        kept as views over the replay's copy of its table, mapped once per entry: O(runs) per frame, not
        O(rows replaced so far)."""
        refs = self.refs
        view, wview = edits.replaced, edits.working  # (a record that replaces something: see _payload)
        w_view = type(wview) is ReplacedBefore
        conv = self.engine.conversation  # its log and working memory are read only when a table's entries are new
        table = view.table if type(view) is ReplacedBefore else None
        if w_view and not view:  # a one-turn agent: everything in working memory
            work = self.work
            if work.table is not wview.table:
                work = self.work = FrontierTable(wview.table, in_working=True, msgs=refs.msgs)
            if work.ok if len(work.refs) == len(wview.table) else \
                    work.sync((), refs.ref, refs.msgs, conv.working):  # (its indices are working memory's)
                upto = wview.upto
                found = self.work_found  # only this call reads it: moved in place, as the log's below
                if found.fr is not work:
                    found = self.work_found = FrontierSwaps(work, upto, {})
                else:
                    found.upto = upto
                segments, replaced = frontier_frame(_segments(layout, refs, found, work.apart), work, upto,
                                                    self.last_replaced)
                return segments, replaced, found
        if table is not None:
            fr = self.frontier
            if fr.table is not table:
                fr = self.frontier = FrontierTable(table, msgs=refs.msgs)
            # the table's entries are mapped once: most calls add none, and then ``sync`` has nothing to do
            if fr.ok if len(fr.refs) == len(table) else fr.sync(conv.committed_messages, refs.ref, refs.msgs):
                upto = view.upto
                if wview:
                    working = conv.working
                    extra: Swaps = {id(r.row): (working[r.index], r.reason) for r in wview}
                    found = FrontierSwaps(fr, upto, extra)
                    added = _replaced(extra, refs)
                else:  # the usual frontier call: working memory replaces nothing; while the frontier
                    # stands, the last call's views again (immutable), none made anew; one swaps lookup
                    found, last = self.last_found, self.last_replaced  # (that view again: see frontier_frame)
                    if found.fr is not fr:
                        found = self.last_found = FrontierSwaps(fr, upto, {})
                    else:  # only this call reads it (its segments, its removed rows): moved in place
                        found.upto = upto
                    segments, replaced = frontier_frame(_segments(layout, refs, found, fr.apart), fr, upto, last)
                    return segments, replaced, found
                segments, replaced = frontier_frame(_segments(layout, refs, found, fr.apart), fr, upto,
                                                    self.last_replaced, added)
                return segments, replaced, found
        swaps = replaced_rows(edits, conv.committed_messages, conv.working)
        return tuple(_segments(layout, refs, swaps)), _replaced(swaps, refs) if swaps else (), swaps

    def commit(self) -> None:
        mark = self._usage_mark()
        rec: CommitRecord = self.engine.commit()
        folded = rec.folded
        self.rp.commits.append(Commit(rec.turn, rec.action, rec.summarizer_called, rec.folded_turns, rec.error,
                                      rec.archive, _row_ranges(folded, self.refs) if folded else (),
                                      self._summary_cost_since(mark) if rec.summarizer_called else 0.0))
        if rec.action == "summarizer-failed":
            self.rp.summarizer_failures += 1

    def finish(self, *, pending: bool) -> None:
        """End of transcript: the call that would be sent next when no reply ends it, else the last commit."""
        if self.open_turn and pending:
            self.call(None)
        elif self.open_turn:
            self.commit()

