"""``condenser``: OpenHands' ``LLMSummarizingCondenser`` over the committed log (docs/design.md §3.13).

An **event** is one row of the committed log: a user message, an assistant message, each tool
result (the system text is the system band, outside the log). Past ``max_size`` events the history
becomes the first ``keep_first`` events, one summary block, and a tail of
``max_size // 2 − keep_first − 1`` events: ``max_size // 2`` events with the summary counted as one,
as the source computes its tail. The summary stands where the middle was (after the head); later
calls reuse it while head + summary + everything after it stays within ``max_size`` events, and the
next condensation summarises the previous summary with the newly forgotten events.

Pairing: a cut never separates an assistant's tool call from its results. The head's end and the
tail's start each move forward past tool results, so a head ending on an ask keeps its results and
a tail starting on results leaves them, with their ask, in the middle.

Working memory is not condensed: the contract lets a strategy replace working-memory rows, never
drop them, so the condenser counts and condenses the committed log only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.engine.contracts import EditRecord, Insertion
from inspector.engine.history import row_digest_bytes, start_of_tool_group
from inspector.engine.managers.base import CMDecision, ContextManager, Managed, managed
from inspector.engine.managers.shared import BuiltFromParams, SummarizerSlot, summary_or_none
from inspector.engine.types import Message
from inspector.params import CONDENSER, CondenserParams
from inspector.vocabulary import Action


def head_end(past: Sequence[Message], at: int) -> int:
    """Where a cut at ``at`` lands so that it separates no ask from its results: ``at`` moved
    forward past tool results (at most to the log's end)."""
    n = len(past)
    at = min(max(at, 0), n)
    while at < n and past[at].get("role") == "tool":
        at += 1
    return at


def prefix_digest(past: Sequence[Message], end: int) -> str:
    """SHA-256 over the rows ``past[:end]`` (the reuse check when the rows are other objects)."""
    return rows_digest([past[:end]])


def rows_digest(runs: Iterable[Sequence[Message]]) -> str:
    """SHA-256 over the rows of ``runs``, in order (:func:`~inspector.engine.history.row_digest_bytes` each)."""
    h = hashlib.sha256()
    for run in runs:
        for m in run:
            h.update(row_digest_bytes(m))
    digest: str = h.hexdigest()
    return digest


@dataclass(slots=True, eq=False)
class _Condensed:
    """The summary in force: the head ends at ``head``, the summary stands for the rows before
    ``tail`` (after the head), ``turns`` user messages folded in all; ``block`` None after a drop.
    Equal only to itself (a result is remembered for the summary in force, this very object)."""

    head: int
    tail: int
    block: Message | None
    text: str | None
    turns: int
    identity: tuple[int, int]
    runs: tuple[tuple[Message, ...], ...]
    """The log's rows before ``tail`` when it was made, one run per condensation (a condensation
    copies the references of the rows it newly folds and shares the earlier runs): read only when
    the reuse check needs their digest (:meth:`digest`), never while the log holds the same rows."""
    known: str | None = None  # the digest, once asked
    inserted: tuple[Insertion, ...] = ()  # the block's insertion before ``tail``, made once for its reuses

    def digest(self) -> str:
        """SHA-256 over the rows before ``tail`` (:func:`rows_digest` of :attr:`runs`), worked out
        the first time it is asked."""
        if self.known is None:
            self.known = rows_digest(self.runs)
        return self.known

    def events(self, n: int) -> int:
        """The view's size in events over a log of ``n`` rows: head, the summary (one), the rest."""
        return self.head + (self.block is not None) + n - self.tail


def _record(n: int, head: int, tail: int, block: Message | None,
            inserted: tuple[Insertion, ...] | None = None) -> EditRecord:
    """Rows ``[0, head)`` and ``[tail, n)`` kept, ``block`` (when there is one) inserted before
    ``tail`` (``inserted``: that insertion, made already)."""
    if inserted is None:
        inserted = (Insertion(tail, block, "summary"),) if block is not None else ()
    if 0 < head and tail < n:  # the usual view: both runs
        return EditRecord(n, ((0, head), (tail, n)), (), inserted)
    return EditRecord(n, tuple((a, b) for a, b in ((0, head), (tail, n)) if a < b), (), inserted)


class Condenser(BuiltFromParams, SummarizerSlot, ContextManager):
    """Keep the first ``keep_first`` events and a tail; past ``max_size`` events, summarise the middle.

    Guarantees: at or under ``max_size`` events (the summary in force counted as one) the history
    passes as it stands (unchanged, or with the summary reused); past it, one summary is made (or
    the middle dropped when the summarizer gives no text) and the view shrinks to ``max_size // 2``
    events (more when the head's end moves past tool results); a summarizer that raises leaves the
    summary in force as it was and this call goes without the middle. The token hint is not read:
    the trigger counts events, as the source does.
    """

    name = "condenser"
    actions = (
        Action("condenser-under-max", "kept: no more than max_size events"),
        Action("condenser-nothing-to-fold", "kept: nothing between the first events and the tail"),
        Action("condensed", "middle events condensed", "summary", "summary", marker="events condensed, sent",
               not_sent="condensed into the summary block (this call)",
               not_sent_trimmed="condensed into this call's summary block, which was {how}",
               trimmed_words="events condensed, trimmed — not sent"),
        Action("condensed-reused", "condensed summary reused", "summary", "summary",
               not_sent="condensed (summary reused, under max_size)",
               not_sent_trimmed="condensed into the reused summary, which was {how}",
               trimmed_words="condensed summary reused, trimmed — not sent"),
        Action("condensed-dropped", "middle events dropped", "drop", "drop",
               not_sent="dropped by the condenser (no summary text)"),
        Action("condenser-failed", "condenser's summarizer failed", "failed",
               not_sent="left out: the condenser's summarizer failed, only the first events and the tail were sent"),
    )

    def __init__(self, max_size: int = CONDENSER.max_size, keep_first: int = CONDENSER.keep_first,
                 summarizer: Any = None, *, params: CondenserParams | None = None) -> None:
        """Defaults and checks come from :class:`~inspector.params.CondenserParams` (a value it
        refuses raises ``ValueError`` naming the parameter); ``params``, a validated model, is used
        as it is instead of the keywords (:meth:`from_params`)."""
        super().__init__()
        if params is None:
            params = CondenserParams.build(self.name, max_size=max_size, keep_first=keep_first)
        self.max_size = params.max_size
        self.keep_first = params.keep_first
        self._condensed: _Condensed | None = None
        self.bind_summarizer(summarizer)

    def tail_size(self) -> int:
        """Events kept from the log's end at a condensation: ``max_size // 2 − keep_first − 1`` (the
        summary counts as one event), at least 1 (where OpenHands refuses a ``keep_first`` that leaves none)."""
        return max(1, self.max_size // 2 - self.keep_first - 1)

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        """This call's result (class docstring): the log unchanged, the summary in force reused, or a
        new condensation. ``hint`` is not read.

        Every call of a turn sees the same log: a result that left the summary in force as it was
        (kept, reused, nothing to fold) is the next call's too while the log, the parameters, the
        summarizer and the summary in force stay the same (:meth:`same_log`); a condensation or a
        failure is never handed out twice (the next call reuses the new summary, or retries)."""
        del hint
        before = self._condensed
        key = (self.max_size, self.keep_first, self.summarizer, before)
        same = self.same_log(past, key)
        if same is not None:
            return same
        n = len(past)
        held = self._in_force(past)
        if held is not None and held.events(n) <= self.max_size:
            result = self._reuse(past, held)
        elif held is None and n <= self.max_size:
            result = managed(past, EditRecord.keep_all(n), CMDecision("condenser-under-max"))
        else:
            result = self._condense(past, held)
        if self._condensed is before and result.decision.action != "condenser-failed":
            self.remember(past, result, key)
        return result

    def _in_force(self, past: Sequence[Message]) -> _Condensed | None:
        """The summary in force when the log still starts with the rows it was made over (by
        identity, else by their digest); else None (and it is forgotten)."""
        held = self._condensed
        if held is None:
            return None
        t = held.tail
        if t > len(past) or not past:
            self._condensed = None
            return None
        ident = (id(past[0]), id(past[t - 1])) if t else (0, 0)
        if ident != held.identity:
            if prefix_digest(past, t) != held.digest():
                self._condensed = None
                return None
            held.identity = ident
        return held

    def _decision(self, action: str, held: _Condensed, **extra: Any) -> CMDecision:
        """A decision about the summary ``held`` (its text, its model and how many turns it covers)."""
        summarised = held.block is not None
        model, source = self.summary_model()
        return CMDecision(action, compressed_turns=held.turns if summarised else 0,
                          dropped_turns=0 if summarised else held.turns, summary_text=held.text,
                          summary_model=model, summary_model_source=source, **extra)

    def _reuse(self, past: Sequence[Message], held: _Condensed) -> Managed:
        """The summary in force, before the rows after it: ``condensed-reused`` (or still dropped)."""
        action = "condensed-reused" if held.block is not None else "condensed-dropped"
        record = _record(len(past), held.head, held.tail, held.block, held.inserted)
        return managed(past, record, self._decision(action, held))

    def _cuts(self, past: Sequence[Message], held: _Condensed | None) -> tuple[int, int, int]:
        """``(head, start, tail)``: the head's end, where the newly forgotten rows start (after the
        summary in force, else the head) and the tail's start, each cut moved past tool results."""
        n = len(past)
        head = held.head if held is not None else head_end(past, self.keep_first)
        start = held.tail if held is not None else head
        tail = head_end(past, n - self.tail_size())
        if tail >= n:  # the last rows are all results: the tail starts at their ask instead (never empty)
            tail = start_of_tool_group(past, n - self.tail_size())
        tail = max(tail, start)
        return head, start, tail

    def _condense(self, past: Sequence[Message], held: _Condensed | None) -> Managed:
        """Summarise the summary in force and the rows between it and the new tail into one block."""
        n = len(past)
        head, start, tail = self._cuts(past, held)
        if tail <= start:
            if held is not None:
                return self._reuse(past, held)
            return managed(past, EditRecord.keep_all(n), CMDecision("condenser-nothing-to-fold"))
        previous = [held.block] if held is not None and held.block is not None else []
        folded = previous + list(past[start:tail])
        turns = (held.turns if held is not None else 0) + sum(m.get("role") == "user" for m in past[start:tail])
        called = self.calls_model()
        try:
            text = self.summary_text(folded)
        except Exception as exc:  # noqa: BLE001 - any summarizer failure: head and tail, summary in force kept
            decision = CMDecision("condenser-failed", dropped_turns=turns, summarizer_called=called,
                                  error=f"{type(exc).__name__}: {exc}")
            return managed(past, _record(n, head, tail, None), decision)
        block = summary_or_none(turns, text)
        ident = (id(past[0]), id(past[tail - 1]))
        # the summary in force was made over past[:start] (checked by _in_force): only the rows
        # newly folded, up to the new tail, are a new run
        runs = (held.runs if held is not None else ()) + (tuple(past[start if held is not None else 0:tail]),)
        inserted = (Insertion(tail, block, "summary"),) if block is not None else ()
        self._condensed = new = _Condensed(head, tail, block, text, turns, ident, runs, inserted=inserted)
        action = "condensed" if block is not None else "condensed-dropped"
        decision = self._decision(action, new, summarizer_called=called)
        return managed(past, _record(n, head, tail, block, inserted), decision)
