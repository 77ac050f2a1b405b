"""The default ``assembler`` plugin: reads one call's facts once and picks the path that assembles it.

Order is fixed (docs/design.md §3.9): system band → [summary] → kept history → current user turn →
working memory; then the token trimmer (working memory pinned as the tail), then one pairing pass,
then the final check (the engine's). Two paths give one result: the incremental path
(:mod:`inspector.engine.assembly.incremental`) for a manager's edit record of the split shape
(``log[:h] + [block?] + log[k:]``: the seeds' suffix, the condenser's head + summary + tail), the
reference path (:mod:`inspector.engine.assembly.reference`) for any other record (rows replaced,
working memory edited), a manager that is no :class:`~inspector.engine.managers.base.ContextManager`,
and as the tests' oracle.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.engine.assembly.call import Call, EngineView
from inspector.engine.assembly.incremental import IncrementalPath, RowUnits
from inspector.engine.assembly.records import Assembly
from inspector.engine.assembly.reference import assemble_reference
from inspector.engine.assembly.replacing import ReplacingSums, assemble_replacing, frontier_record
from inspector.engine.assembly.row_index import RowIndex
from inspector.engine.budget import compute_budget
from inspector.engine.contracts import EditRecord, Insertion, ReplacedBefore, ReplacedRows
from inspector.engine.managers.base import budget_terms, is_manager, manage
from inspector.engine.memory import Conversation
from inspector.engine.tokens import TokenCounter
from inspector.engine.types import Message
from inspector.params import ASSEMBLER, AssemblerParams

__all__ = ["ContextAssembler"]

class ContextAssembler:
    """The default ``assembler`` plugin. Custom assemblers implement ``assemble(engine)`` and must
    return a paired payload (they may call :func:`inspector.engine.pairing.sanitize_provider_messages`).

    Two paths, one result: the incremental path (the default for an edit record of the split
    shape, :meth:`~inspector.engine.contracts.EditRecord.split_shape`) reads only what changed since
    the last call; the reference path (``incremental = False``,
    and whatever the incremental one does not cover: a record with replacements or working-memory
    edits, a manager that is no ContextManager, a resumed HITL turn, a disabled pre-cut or trimmer)
    reads the whole payload. Tests hold the two equal call by call.
    """

    precut: bool = True
    """Cut history that can never fit before the trimmer runs (the identical result; tests switch it
    off on an instance to prove that)."""
    incremental: bool = True
    """Use the incremental path where it applies (tests switch it off to get the reference)."""

    def __init__(self, emit_segments: bool = ASSEMBLER.emit_segments,
                 always_reassemble: bool = ASSEMBLER.always_reassemble, token_budget: int | None = ASSEMBLER.token_budget):
        """The three parameters are the reference runtime's legacy-hook options, marked
        :class:`~inspector.params.Inert` on :class:`~inspector.params.AssemblerParams`: accepted so a
        reference manifest builds, with no effect here; ``validate`` warns at their line."""
        del emit_segments, always_reassemble, token_budget
        self._path = IncrementalPath()
        self._work = ReplacingSums()
        """Working memory's frontier sums: its ``flat`` is the one the call's working rows view moves."""
        self._replacing = ReplacingSums(self._work)
        self._turn_units: tuple[TokenCounter | None, Message | None, int, Message | None, int, bool] = \
            (None, None, 0, None, 0, False)
        """(counter, system row, its units, user row, its units, whether it says something) of the last
        call: every call of a turn sends the same two rows, so they are read once a turn."""
        self._shape: tuple[EditRecord | None, tuple[int, int, Insertion | None] | None] = (None, None)
        """The last edit record read and its split shape (:meth:`_split_shape`)."""

    @classmethod
    def from_params(cls, params: AssemblerParams) -> ContextAssembler:
        """The assembler a manifest's ``spec.assembler`` binding builds, from its validated params
        (all of them inert here: see the constructor)."""
        del params
        return cls()

    @property
    def rows_indexed(self) -> int:
        """How many rows had their facts derived over this assembler's life (see
        :attr:`~inspector.engine.assembly.incremental.IncrementalPath.rows_indexed`): O(rows), never per call."""
        return self._path.rows_indexed

    def assemble(self, engine: EngineView) -> Assembly:
        """One call's paired, budgeted payload and its record, from the engine's state now."""
        conv, counter, cm = engine.conversation, engine.counter, engine.cm
        system = engine.system_message()
        past, wm = conv.committed_messages, conv.working
        user = conv.current_user if conv.current_user is not None else {"role": "user", "content": ""}
        # a ContextManager's record says its shape (one that edits working memory: when it edits none)
        fast = self.incremental and self.precut and is_manager(cm)
        # the log first: rows committed since the last call are mostly working memory's, whose facts
        # the working index still holds until it moves on to this turn's list below
        log = self._path.log_index(counter, past) if fast else None
        wmi = self._path.index("working", counter, wm) if fast else None
        tool_tokens = counter.count_tools(engine.tools)
        u_system, u_user, has_user = self._row_units(counter, system, user, conv)
        wm_units = wmi.pre[-1] if wmi is not None else 0  # units of all of working memory (its running sum)
        fixed = self._fixed_tokens(counter, system, u_system, u_user, wm, wmi, tool_tokens)
        terms = budget_terms(cm)
        budget = compute_budget(engine.limits, engine.settings.trimmer, fixed=fixed, tool_tokens=tool_tokens,
                                summarizing=terms.summarizing, hysteresis_ratio=terms.hysteresis_ratio,
                                summary_threshold=terms.summary_threshold, calibration=engine.calibration,
                                calibration_source=engine.calibration_source)
        outcome = manage(cm, past, budget.hint, wm, budget)
        edits = outcome.edits
        # A committed ask answered from working memory (HITL) takes its answers with it when the
        # trimmer drops it; only the trimmer knows how far that goes, so no pre-cut then.
        wv = edits.working
        if type(wv) is ReplacedBefore:  # a frontier view: read through, not copied (its row 0 read in place)
            hitl = bool(wm) and (wv.table[0].row if wv.upto and not wv.table[0].index else wm[0]).get("role") == "tool"
            # working memory with the view's rows replaced, O(1) (no row copied; a slice one copy of the
            # flat list its frontier index moves): the index's rows too (ReplacingSums.frontier's ``made``)
            wm = ReplacedRows(wm, wv, wv.at, self._work.flat)  # type: ignore[assignment]
        else:
            if wv:
                wm = list(edits.apply_working(wm))
            hitl = bool(wm) and wm[0].get("role") == "tool"
        call = Call(engine, system, past, wm, user, has_user, tool_tokens, budget, outcome,
                    outcome.decision, hitl)
        if wmi is not None and log is not None and not hitl and budget.max_tokens > 0:
            view = frontier_record(edits)
            if view is not None:
                result = assemble_replacing(self._path, self._replacing, view, call, u_system, u_user, wm_units,
                                            log, wmi)
            else:
                shape = self._split_shape(edits)
                result = self._path.assemble(call, RowUnits(u_system, u_user, wm_units, log, wmi), shape) \
                    if shape is not None else None
            if result is not None:
                return result
        return assemble_reference(call, self.precut)

    def _split_shape(self, edits: EditRecord) -> tuple[int, int, Insertion | None] | None:
        """``edits.split_shape()``, read once per record: a manager hands every call of a turn the
        same frozen record while its log stands, so its shape is kept with it (a record holding a
        view, whose rows may grow, is read each time)."""
        last = self._shape
        if last[0] is edits:
            return last[1]
        shape = edits.split_shape()
        if type(edits.replaced) is tuple and type(edits.working) is tuple:
            self._shape = (edits, shape)
        return shape

    def _row_units(self, counter: TokenCounter, system: Message | None, user: Message,
                   conv: Conversation) -> tuple[int, int, bool]:
        """The system band's and the user row's units, and whether the user row says something
        (``conv``'s user text): the same two rows on every call of a turn, so they are read once a
        turn and kept."""
        tu = self._turn_units
        same = tu[0] is counter
        u_system = tu[2] if same and tu[1] is system else counter.unit(system) if system else 0
        if same and tu[3] is user:
            u_user, has_user = tu[4], tu[5]
        else:
            u_user, has_user = counter.unit(user), bool(conv.last_user_text.strip())
        self._turn_units = (counter, system, u_system, user, u_user, has_user)
        return u_system, u_user, has_user

    @staticmethod
    def _fixed_tokens(counter: TokenCounter, system: Message | None, u_system: int, u_user: int,
                      wm: Sequence[Message], wmi: RowIndex | None, tool_tokens: int) -> int:
        """Tokens of what the budget cannot cut: the system band, the user row, working memory and
        the tool schemas (working memory's from its index's running sum when there is one)."""
        if wmi is not None:
            wm_units = wmi.pre[-1]
            if wmi.additive:  # total(units, n) is units: the sum is the tokens
                return u_system + u_user + wm_units + tool_tokens
            return (counter.total(u_system, 1) if system else 0) + counter.total(u_user, 1) + \
                counter.total(wm_units, len(wm)) + tool_tokens
        # count([row]) of one row is total(unit(row), 1)
        return (counter.total(u_system, 1) if system else 0) + counter.total(u_user, 1) + counter.count(wm) + \
            tool_tokens
