"""The context-manager contract shared by every history strategy.

A manager receives the committed history (``past``) and a token hint, and returns an edit record
over it (:mod:`inspector.engine.contracts`): what this LLM call should see. Unless it opts in
(``edits_working_memory``) it never sees working memory (the live tool round), and it never repairs
pairing: assembly runs one pairing pass on the whole payload afterwards (docs/design.md §3.8). A
manager's :meth:`ContextManager.decide` returns the record, the history derived from it and a
:class:`CMDecision` together (:class:`Managed`), so the inspector can say *why* without reading
state the manager left behind.

The engine calls a manager through two functions only: :func:`budget_terms` (what the manager adds
to the call's budget) and :func:`manage` (the history and the decision as one :class:`Managed`
result), so it never probes a manager's attributes or patches a missing decision itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

from inspector.engine.contracts import EditRecord, check_record, record_of
from inspector.engine.history import LogRuns
from inspector.engine.tokens import EstimateCounter, TokenCounter
from inspector.engine.types import Message, RowsView
from inspector.vocabulary import Action, Reason

if TYPE_CHECKING:
    from inspector.engine.budget import Budget

CMAction = str
"""An action code a context manager records: one its strategy declares (``actions``, a tuple of
:class:`~inspector.vocabulary.Action`); the set is derived from the registry
(:func:`inspector.vocabulary.cm_actions`), never listed here."""


@dataclass(slots=True)
class CMDecision:
    """What the manager did on one call. ``folded`` are the history rows not passed on (summarised
    or dropped), derived from the call's :class:`~inspector.engine.contracts.EditRecord` when the
    result is made (:func:`managed`), so the inspector can answer "why did my message disappear?"."""

    action: CMAction
    compressed_turns: int = 0  # turns folded into the summary in view (computed or reused)
    dropped_turns: int = 0  # turns discarded without a summary
    kept_turns: int = 0  # verbatim user turns passed on
    raw_tokens: int | None = None  # the manager's own count of ``past`` (E2 for ``estimate``)
    threshold: int | None = None  # trigger (hint or summary_threshold)
    ceiling: int | None = None  # hysteresis ceiling for reuse
    summarizer_called: bool = False
    summary_text: str | None = None
    summary_model: str | None = None
    summary_model_source: str | None = None
    error: str | None = None  # summarizer failure reason
    folded: Sequence[Message] = field(default_factory=list)
    """The rows left out, in log order: a read-only view of the log when they are one run (the log
    only grows in place, so the view stays what it was), else a list."""
    edits: EditRecord | None = None  # the call's edit record (set with ``folded`` by :func:`managed`)


@dataclass(frozen=True, slots=True)
class BudgetTerms:
    """What a manager contributes to a call's budget: a summarising manager gets a hysteresis
    ceiling (``hint × (1 + hysteresis_ratio)``) and a summary trigger (``summary_threshold``, 0 = the
    hint); any other manager neither."""

    summarizing: bool = False
    hysteresis_ratio: float = 0.0
    summary_threshold: int = 0


NO_TERMS = BudgetTerms()
"""What a manager that is not summarising adds to the budget: nothing (one shared frozen record,
since the engine asks on every call)."""


class Managed:
    """One call's result from a manager: the history to send (``messages``, derived from ``edits``
    over the log on first read), why (``decision``) and the edit record itself (``edits``).

    ``messages`` is a sequence the engine only reads: for the usual shapes a read-only view of the
    log (:class:`~inspector.engine.types.RowsView`) rather than a copy per call. It is derived when
    first read, never before: the incremental assembly reads the record instead, so a replay does
    not build a history per call that nothing reads
    (``tests/engine/test_per_call_work.py::test_the_log_match_and_the_split_shape_are_read_once_a_turn``
    holds the count). Immutable: the engine reads a result, never changes it."""

    __slots__ = ("decision", "edits", "_past", "_messages")

    def __init__(self, messages: Sequence[Message] | None, decision: CMDecision, edits: EditRecord,
                 past: Sequence[Message] = ()) -> None:
        """``messages`` as given, or (None) derived from ``edits`` over ``past`` when first read."""
        self.decision = decision
        self.edits = edits
        self._past = past
        self._messages = messages

    @property
    def messages(self) -> Sequence[Message]:
        """The history the call sees (:meth:`~inspector.engine.contracts.EditRecord.apply`)."""
        got = self._messages
        if got is None:
            got = self._messages = self.edits.apply(self._past)
            self._past = ()
        return got

    def __repr__(self) -> str:
        return f"Managed(decision={self.decision!r}, edits={self.edits!r})"


def managed(past: Sequence[Message], edits: EditRecord, decision: CMDecision) -> Managed:
    """The result of a manager's edit record ``edits`` over ``past``: the history it derives
    (:meth:`~inspector.engine.contracts.EditRecord.apply`, on first read of
    :attr:`Managed.messages`) and ``decision`` with its ``folded`` rows derived from the record's
    left-out rows (the one place they are set)."""
    dropped = edits.dropped() if edits.kept != ((0, edits.size),) else ()  # (every row kept: none, no walk)
    if len(dropped) == 1:  # one run (a suffix's prefix, the condenser's middle): a view, O(1) per call
        decision.folded = RowsView((), past, *dropped[0])
    else:
        decision.folded = [m for a, b in dropped for m in past[a:b]] if dropped else []
    decision.edits = edits
    return Managed(None, decision, edits, past)


class ContextManager(ABC):
    """Base of every history strategy.

    Invariants every subclass keeps: the input list is never mutated; the result is an edit record
    over ``past`` (:class:`~inspector.engine.contracts.EditRecord`, made into a :class:`Managed` by
    :func:`managed`), which every reader reads instead of the rows' identity.

    A strategy declares its ``actions`` (:class:`~inspector.vocabulary.Action`: code, words, marker,
    not-sent reason, fold kind) and its replacement ``reasons`` here, in its own class; the
    vocabularies are derived from the registry. With ``edits_working_memory`` it sees the current
    turn's working memory too (:meth:`decide_with_working`); the shipped three never do.
    """

    name: ClassVar[str] = "base"
    accepts_summarizer: ClassVar[bool] = False
    actions: ClassVar[tuple[Action, ...]] = ()
    reasons: ClassVar[tuple[Reason, ...]] = ()
    edits_working_memory: ClassVar[bool] = False
    """Whether :func:`manage` hands this manager the current turn's working memory (read-only) and
    applies the record's ``working`` replacements (never in its newest group)."""

    reads_budget: ClassVar[bool] = False
    """Whether :func:`manage` asks this manager through :meth:`decide_in_budget`, with the call's
    :class:`~inspector.engine.budget.Budget` (the window and the payload's fixed part): a strategy whose
    trigger is the call's input tokens."""

    counts_log: ClassVar[bool] = False
    """Whether :meth:`log_runs` keeps the log's trigger units too (a manager whose decision counts tokens)."""

    # Per-instance state made on first use; the class-level None is what an instance reads before
    # that (also one whose subclass skipped ``__init__``).
    _log_runs: LogRuns | None = None
    _same_log: tuple[Sequence[Message], int, Message | None, object, Managed] | None = None
    _checked: EditRecord | None = None  # the record :func:`manage` checked last (one, by identity)

    def __init__(self) -> None:
        self.counter: TokenCounter = EstimateCounter()
        self.last_decision: CMDecision | None = None

    def log_runs(self, past: Sequence[Message]) -> LogRuns:
        """The running facts of the committed log ``past`` (its user-turn starts; with
        :attr:`counts_log`, its trigger units), brought up to date: each row is read once while the
        log grows. One object per manager, which the engine's write-back reads too (its recency
        check needs the turn count), so a commit reads its new rows, or takes over a fold, once."""
        runs = self._log_runs
        if runs is None:
            runs = self._log_runs = LogRuns()
        return runs.sync(past, self.counter if self.counts_log else None)

    def same_log(self, past: Sequence[Message], key: object = None) -> Managed | None:
        """The result :meth:`remember` kept for this very log (the same list object, length and last
        row: what :class:`~inspector.engine.history.LogRuns` checks too) and an equal ``key`` (the
        parameters it was made with: a test may retune a manager), else None. For a manager whose
        result depends on the log and its parameters alone, not the hint: every call of a turn sees
        the same log."""
        last = self._same_log
        if last is not None and last[0] is past and last[3] == key and last[1] == len(past) and \
                (not last[1] or last[2] is past[-1]):
            return last[4]
        return None

    def remember(self, past: Sequence[Message], managed: Managed, key: object = None) -> Managed:
        """Keep ``managed`` as the result for ``past`` and ``key`` (see :meth:`same_log`); returns it.
        The engine only reads a result, and :meth:`manage_history` hands out its own copy of the rows."""
        self._same_log = (past, len(past), past[-1] if past else None, key, managed)
        return managed

    @abstractmethod
    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        """This call's result (:func:`managed`): the edit record over ``past``, the history derived from it
        and the decision that produced it."""

    def decide_with_working(self, past: Sequence[Message], working: Sequence[Message], hint: int) -> Managed:
        """For a strategy with ``edits_working_memory``: the result for this call given the current
        turn's working memory too (a tuple it only reads); its record may replace working-memory rows
        older than the newest group. The default ignores working memory (:meth:`decide`)."""
        del working
        return self.decide(past, hint)

    def decide_in_budget(self, past: Sequence[Message], working: Sequence[Message], budget: Budget) -> Managed:
        """For a strategy with ``reads_budget``: the result for this call given the call's budget too
        (its window, its fixed part). The default reads the hint alone (:meth:`decide_with_working`)."""
        return self.decide_with_working(past, working, budget.hint)

    def manage_history(self, past: Sequence[Message], hint: int) -> list[Message]:
        """:meth:`decide`'s messages, keeping its decision in ``last_decision`` for callers that
        step a manager by hand (tests, notebooks); the engine never reads it."""
        managed = self.decide(past, hint)
        self.last_decision = managed.decision
        return list(managed.messages)  # the caller's own list, as always (a result may be remembered)

    def budget_terms(self) -> BudgetTerms:
        """What this manager adds to the budget; read on every call (a test may retune a manager)."""
        return NO_TERMS

    # Recency caps used by the commit-time write-back (docs/design.md §3.11); None = no cap of that kind.
    @property
    def turn_cap(self) -> int | None:
        """The write-back's recency cap in user turns (None: no cap of that kind)."""
        return None

    @property
    def message_cap(self) -> int | None:
        """The write-back's recency cap in rows (None: no cap of that kind)."""
        return None

    def bind_summarizer(self, summarizer: Any) -> None:  # pragma: no cover - only summarising overrides
        """Bind the summarizer older turns are folded with. Raises :class:`TypeError`: only a manager that
        takes a summarizer overrides this."""
        raise TypeError(f"{type(self).__name__} takes no summarizer")


def is_manager(cm: object) -> TypeGuard[ContextManager]:
    """Whether ``cm`` is a :class:`ContextManager` (its class's MRO holds it, or the ABC says so)."""
    return ContextManager in type(cm).__mro__ or isinstance(cm, ContextManager)


def budget_terms(cm: object) -> BudgetTerms:
    """:meth:`ContextManager.budget_terms`; a third-party manager that does not subclass
    :class:`ContextManager` adds nothing to the budget."""
    return cm.budget_terms() if is_manager(cm) else NO_TERMS


def frozen(working: Sequence[Message]) -> Sequence[Message]:
    """``working`` read-only as it is now, without copying it: a tuple as it is, a list behind a
    :class:`~inspector.engine.types.RowsView` of its rows now (the engine's working memory only grows
    within a turn and is a new list for the next, so the view never changes). A tuple copy per call
    made every call of one long turn cost its length: a quadratic replay."""
    return working if isinstance(working, (tuple, RowsView)) else RowsView((), working, 0, len(working))


def manage(cm: Any, past: Sequence[Message], hint: int, working: Sequence[Message] = (),
           budget: Budget | None = None) -> Managed:
    """The engine's one call into a manager: its history, its decision and its edit record. A
    :class:`ContextManager` returns all three itself (one with ``edits_working_memory`` is given
    ``working``, read-only (:func:`frozen`), and its record is checked: :func:`~inspector.engine.contracts.check_record`
    raises :class:`ValueError` for an edit of the newest group); a third-party manager with only
    ``manage_history`` is read through its ``last_decision`` (``unchanged-under-budget`` when it
    records none) and its rows made into a record (:func:`~inspector.engine.contracts.record_of`), here only.
    A manager with ``reads_budget`` is given the call's ``budget`` when there is one."""
    if is_manager(cm):
        if cm.reads_budget and budget is not None:
            result = cm.decide_in_budget(past, frozen(working) if working else (), budget)
        elif not cm.edits_working_memory:
            return cm.decide(past, hint)
        else:
            result = cm.decide_with_working(past, frozen(working) if working else (), hint)
        edits = result.edits
        # a record checked on the last call, over a log of its size, replacing no working row, is
        # checked again by its size alone (a record is immutable; the rest reads the record only)
        if edits is not cm._checked or edits.size != len(past) or edits.working:
            check_record(edits, past, working)
            cm._checked = edits
        return result
    messages = cm.manage_history(past, hint)
    decision = getattr(cm, "last_decision", None) or CMDecision("unchanged-under-budget")
    return managed(past, record_of(past, messages), decision)
