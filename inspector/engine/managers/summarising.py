"""``summarising`` (package default): fold older turns into one summary block, keep the last N verbatim.

The hysteresis cache is what keeps the summarizer LLM from being called on every in-turn step:
once a summary of the first ``n`` turns exists, later calls reuse it while the view
``[summary] + turns[n:]`` stays under ``hint × (1 + hysteresis_ratio)``. The assembler divides the
hard budget by ``1 + r`` before handing it over as ``hint``, so a reused summary never pushes the
request past the safety-bounded budget (docs/design.md §3.2, §3.5).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from inspector.engine.budget import hysteresis_ceiling
from inspector.engine.contracts import EditRecord
from inspector.engine.history import LogRuns, row_digest_bytes, split_user_turns
from inspector.engine.managers.base import BudgetTerms, CMDecision, ContextManager, Managed, managed
from inspector.engine.managers.shared import BuiltFromParams, SummarizerSlot, summary_or_none
from inspector.engine.summary_block import SUMMARY_PREFIX as SUMMARY_PREFIX
from inspector.engine.summary_block import is_summary_block as is_summary_block
from inspector.engine.summary_block import summary_block as summary_block
from inspector.engine.summary_block import summary_body as summary_body
from inspector.engine.summary_block import summary_turns as summary_turns
from inspector.engine.types import Message
from inspector.params import SUMMARIZING, SummarizingParams
from inspector.vocabulary import Action

def fingerprint(groups: Sequence[Sequence[Message]]) -> str:
    """SHA-256 over roles, contents, tool-call ids/names/arguments and tool_call_ids (docs/design.md Q13):
    two prefixes that differ only in tool ids must not share a summary. The manager keeps the same
    digest running over its log (:meth:`~inspector.engine.history.LogRuns.fingerprint`)."""
    h = hashlib.sha256()
    for group in groups:
        h.update(b"\x1e")
        for m in group:
            h.update(row_digest_bytes(m))
    return h.hexdigest()


class _Trigger(NamedTuple):
    """One call's trigger: the log's tokens as the manager counts them, the threshold they passed
    (the hint, else ``summary_threshold``) and the hysteresis ceiling a reused summary must fit."""

    raw: int
    threshold: int
    ceiling: int


@dataclass(slots=True)
class _Cache:
    """The last fold. Its fingerprint is computed only when a later call needs it (the log's first
    ``n`` turns are other row objects than the folded ones): a write-back folds on every commit and
    the next call under budget clears the cache, so hashing at fold time was mostly wasted."""

    text: str | None  # None = a drop (no block)
    n: int  # compressed groups
    identity: tuple[int, int, int]
    folded: Sequence[Message]  # the rows of the first ``n`` turns when folded (the fingerprint's input)
    block: Message | None
    _digest: str | None = None

    @property
    def digest(self) -> str:
        """:func:`fingerprint` of the folded turns, the same digest ``LogRuns.fingerprint(n)`` gave
        for them when they were the log's first ``n`` turns (computed once, on first use)."""
        if self._digest is None:
            self._digest = fingerprint(split_user_turns(self.folded))
        return self._digest


class SummarizingConversation(BuiltFromParams, SummarizerSlot, ContextManager):
    """Keep the last ``keep_turns`` user turns verbatim; summarise (or drop) older ones when over budget.

    Guarantees: under the trigger the history passes unchanged and the cache is cleared; a summary
    is reused without a summarizer call while its view fits the hysteresis ceiling; a summarizer
    that raises leaves the cache untouched (the next call retries) and the call proceeds with the
    verbatim tail; with no summarizer (``drop``) older turns are discarded; when everything older
    than ``keep_turns`` is already the previous summary block, no summary is computed and the block
    is reused as is (decision ``reused``, Q23).
    """

    name = "summarising"
    actions = (
        Action("unchanged-under-budget", "kept: under budget"),
        Action("unchanged-too-few-turns", "kept: no more than keep_turns turns"),
        Action("summarized", "summary computed", "summary", "summary", marker="summary computed, sent",
               not_sent="summarised into the summary block (this call)",
               not_sent_trimmed="summarised into this call's summary block, which was {how}",
               trimmed_words="summary computed, trimmed — not sent"),
        Action("reused", "summary reused", "summary", "summary", marker="summary reused, sent",
               not_sent="summarised (reused summary, hysteresis)",
               not_sent_trimmed="summarised into the reused summary (hysteresis), which was {how}",
               trimmed_words="summary reused, trimmed — not sent"),
        Action("dropped", "older turns dropped", "drop", "drop"),
        Action("summarizer-failed", "summarizer failed", "failed",
               not_sent="left out: the summarizer failed, only the recent turns were sent"),
    )

    # made on first use; the class-level None is read until then (no getattr call per LLM call)
    _terms: BudgetTerms | None = None
    _last_ceiling: tuple[tuple[int, float], int] | None = None
    _whole_log: EditRecord | None = None

    def __init__(self, keep_turns: int = SUMMARIZING.keep_turns,
                 summary_threshold: int = SUMMARIZING.summary_threshold,
                 hysteresis_ratio: float = SUMMARIZING.hysteresis_ratio, summarizer: Any = None, *,
                 params: SummarizingParams | None = None) -> None:
        """Defaults, checks and the hysteresis clamp come from :class:`~inspector.params.SummarizingParams`
        (a value it refuses raises ``ValueError`` naming the parameter). ``params``, a validated
        model, is used as it is instead of the three keywords (:meth:`from_params`)."""
        super().__init__()
        if params is None:
            params = SummarizingParams.build(self.name, keep_turns=keep_turns, summary_threshold=summary_threshold,
                                             hysteresis_ratio=hysteresis_ratio)
        self.keep_turns = params.keep_turns
        self.summary_threshold = params.summary_threshold
        self.hysteresis_ratio = params.hysteresis_ratio
        self._cache: _Cache | None = None
        self.bind_summarizer(summarizer)

    @property
    def turn_cap(self) -> int | None:
        """The write-back's recency cap: ``keep_turns`` user turns."""
        return self.keep_turns

    def budget_terms(self) -> BudgetTerms:
        """Read on every call: the (frozen) record is rebuilt only when a parameter was retuned."""
        terms = self._terms
        if terms is None or terms.hysteresis_ratio != self.hysteresis_ratio or \
                terms.summary_threshold != self.summary_threshold:
            terms = self._terms = BudgetTerms(True, self.hysteresis_ratio, self.summary_threshold)
        return terms

    def _ceiling(self, high: int) -> int:
        """:func:`~inspector.engine.budget.hysteresis_ceiling` of ``high``, remembered for the last
        (high, ratio) pair: every write-back asks with the same hint, and the exact formula reads
        the ratio through its decimal text each time."""
        key = (high, self.hysteresis_ratio)
        last = self._last_ceiling
        if last is None or last[0] != key:
            last = self._last_ceiling = (key, hysteresis_ceiling(high, self.hysteresis_ratio))
        return last[1]

    counts_log = True  # the trigger sums the log's units: :meth:`log_runs` keeps them (and the fingerprint)

    @staticmethod
    def _identity(past: Sequence[Message], runs: LogRuns, n: int) -> tuple[int, int, int]:
        """(n, first row, last row of turn n) by identity: the cheap test before the fingerprint."""
        return (n, id(past[0]), id(past[runs.turn_start(n) - 1]))

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        """The history for this call and why (class docstring): unchanged under the trigger (``hint``,
        else ``summary_threshold``), else the cached summary reused while it fits the hysteresis
        ceiling, else unchanged with too few turns to fold, else the older turns folded."""
        if not past:
            self._cache = None
            return managed(past, self._whole(0), CMDecision("unchanged-under-budget"))
        runs = self.log_runs(past)  # each row read once while the log grows; a fold's new list once
        n_rows = runs.n  # len(past), as synced
        turns = len(runs.starts)
        high = hint if hint > 0 else self.summary_threshold
        raw = self.counter.total(runs.history(0, n_rows), n_rows)
        if high <= 0 or raw <= high:
            self._cache = None
            # (positional, in field order: action, compressed, dropped, kept turns, raw tokens, threshold)
            decision = CMDecision("unchanged-under-budget", 0, 0, turns, raw, high)
            return managed(past, self._whole(n_rows), decision)
        trigger = _Trigger(raw, high, self._ceiling(high))
        reused = self._reuse(past, runs, turns, trigger)
        if reused is not None:
            return reused
        if turns <= self.keep_turns:
            decision = CMDecision("unchanged-too-few-turns", kept_turns=turns, raw_tokens=raw,
                                  threshold=high, ceiling=trigger.ceiling)
            return managed(past, self._whole(n_rows), decision)
        return self._fold(past, runs, turns - self.keep_turns, trigger)

    def _whole(self, n: int) -> EditRecord:
        """``EditRecord.keep_all(n)``, one (frozen) record while the log keeps its length: every call
        of a turn that keeps the whole log hands the assembler the same record, so where it sits in
        the log is found once a turn."""
        whole = self._whole_log
        if whole is None or whole.size != n:
            whole = self._whole_log = EditRecord.keep_all(n)
        return whole

    def _reuse(self, past: Sequence[Message], runs: LogRuns, turns: int, trigger: _Trigger) -> Managed | None:
        """The cached fold applied to ``past`` when its first turns are still the folded ones (by
        identity, else by fingerprint) and the view fits the hysteresis ceiling; else None (a cache
        that no longer fits the log is cleared)."""
        cache = self._cache
        if cache is not None and cache.n >= turns:
            self._cache = cache = None
        if cache is None or not 0 < cache.n < turns:
            return None
        ident = self._identity(past, runs, cache.n)
        if ident != cache.identity:
            if runs.fingerprint(cache.n) != cache.digest:
                return None
            cache.identity = ident
        counter = self.counter
        s = runs.turn_start(cache.n)
        head = (cache.block,) if cache.block is not None else ()
        units = runs.history(s, runs.n) + sum(counter.history_unit(b) for b in head)
        if counter.total(units, len(head) + runs.n - s) > trigger.ceiling:
            return None
        summarised = cache.block is not None
        model, source = self.summary_model()
        decision = CMDecision(
            "reused" if summarised else "dropped",
            compressed_turns=cache.n if summarised else 0, dropped_turns=0 if summarised else cache.n,
            kept_turns=turns - cache.n, raw_tokens=trigger.raw, threshold=trigger.threshold,
            ceiling=trigger.ceiling, summary_text=cache.text, summary_model=model, summary_model_source=source,
        )
        return managed(past, EditRecord.suffix(runs.n, s, cache.block), decision)

    def _fold(self, past: Sequence[Message], runs: LogRuns, m: int, trigger: _Trigger) -> Managed:
        """Fold the ``m`` older turns: the previous summary reused when it is all there is to fold
        (Q23), else summarised (or dropped, with no summarizer or no text); a summarizer that raises
        leaves the cache untouched and the verbatim tail goes on (``summarizer-failed``)."""
        keep = self.keep_turns
        cut = runs.turn_start(m)
        n = runs.n
        folded = list(past[:cut])
        model, source = self.summary_model()
        raw, high, ceiling = trigger
        if folded and is_summary_block(folded[0]) and all(is_summary_block(x) for x in folded):
            # Q23: the only thing older than keep_turns is the previous summary: nothing new to fold,
            # so no summary is computed; it is reused as is and the decision records that.
            prev = folded[-1]
            decision = CMDecision(
                "reused", compressed_turns=summary_turns(prev), kept_turns=keep, raw_tokens=raw,
                threshold=high, ceiling=ceiling, summary_text=summary_body(prev), summary_model=model,
                summary_model_source=source,
            )
            return managed(past, EditRecord.keep_all(n), decision)
        called = self.calls_model()  # Q20: a drop or an offline llm folds, it is no call
        try:
            text = self.summary_text(folded)
        except Exception as exc:  # noqa: BLE001 - any summarizer failure: verbatim tail, cache untouched
            decision = CMDecision(
                "summarizer-failed", dropped_turns=m, kept_turns=keep, raw_tokens=raw, threshold=high,
                ceiling=ceiling, summarizer_called=called, error=f"{type(exc).__name__}: {exc}",
                summary_model=model, summary_model_source=source,
            )
            return managed(past, EditRecord.suffix(n, cut), decision)
        block = summary_or_none(m, text)
        self._cache = _Cache(text, m, self._identity(past, runs, m), tuple(folded), block)
        if block is None:
            # (positional, in field order)
            decision = CMDecision("dropped", 0, m, keep, raw, high, ceiling, called, None, model, source, None)
            return managed(past, EditRecord.suffix(n, cut), decision)
        decision = CMDecision(
            "summarized", compressed_turns=m, kept_turns=keep, raw_tokens=raw, threshold=high, ceiling=ceiling,
            summarizer_called=called, summary_text=text, summary_model=model,
            summary_model_source=source,
        )
        return managed(past, EditRecord.suffix(n, cut, block), decision)
