"""``auto-compact`` (Claude Code / Codex): at the trigger, the history becomes recent user messages and one summary.

When a call's input tokens reach the trigger (``threshold_tokens``, else ``threshold_ratio`` of the
window), the history the call sees becomes the newest user messages that fit ``keep_user_tokens``
(newest first, whole while they fit; the first that does not fit is cut to the tokens left, its
middle replaced by ``…N tokens truncated…``; sent in log order), then one summary of the rest:
Codex's ``build_compacted_history`` (``codex-rs/core/src/compact.rs``) and its
``truncate_middle_with_token_budget`` (``codex-rs/utils/string/src/truncate.rs``), with the counter
in force for every count. The system text is the system band, as for every strategy. The manager remembers its last compaction (where the log stood, the
user rows it kept, the summary block): later calls send that compacted history plus every row
committed after it, until their input reaches the trigger again and the compacted history is
compacted once more (docs/design.md §3.13).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from inspector.engine.contracts import EditRecord, Insertion, Replacement
from inspector.engine.managers.base import CMDecision, ContextManager, Managed, managed
from inspector.engine.managers.shared import BuiltFromParams, SummarizerSlot, summary_or_none
from inspector.engine.summary_block import summary_body
from inspector.engine.tokens import TokenCounter
from inspector.engine.types import Message
from inspector.params import AUTO_COMPACT, AutoCompactParams
from inspector.vocabulary import Action, Reason

if TYPE_CHECKING:
    from inspector.engine.budget import Budget

TRUNCATED = "user-message-truncated"
"""The replacement reason of a kept user message cut to the tokens left (:func:`cut_to_fit`)."""

MARKER = "…{tokens} tokens truncated…"
"""What stands for a cut message's middle: Codex's ``format_truncation_marker`` for a token budget."""

_EMPTY: Message = {"role": "user", "content": ""}


@dataclass(frozen=True, slots=True)
class Compaction:
    """The last compaction: the log held ``size`` rows ending with ``last`` (checked by identity),
    the user rows at ``users`` (log indices) were kept, and ``block`` (None: no summary, a drop)
    stands for the rest, before every row committed since."""

    size: int
    last: Message | None
    users: tuple[int, ...]
    block: Message | None
    cuts: tuple[Replacement, ...] = ()  # kept user rows sent cut (:data:`TRUNCATED`), by log index

    def holds(self, past: Sequence[Message]) -> bool:
        """Whether ``past`` is the log this compaction was made over, grown by later rows only."""
        return len(past) >= self.size and (self.size == 0 or past[self.size - 1] is self.last)

    def record(self, size: int) -> EditRecord:
        """The compacted history over a log of ``size`` rows: the kept user rows, the summary, then
        every row from ``self.size`` on."""
        kept = tuple((i, i + 1) for i in self.users)
        if self.size < size:
            kept += ((self.size, size),)
        inserted = (Insertion(self.size, self.block),) if self.block is not None else ()
        return EditRecord(size, kept, self.cuts, inserted)


def text_tokens(counter: TokenCounter, text: str) -> int:
    """``text``'s tokens under ``counter``: a user message holding it less an empty one (the
    per-message overhead taken off)."""
    return counter.count([{"role": "user", "content": text}]) - counter.count([_EMPTY])


def middle_cut(text: str, keep: int, counter: TokenCounter) -> str:
    """``text`` with its middle cut, as Codex's ``truncate_with_byte_estimate`` cuts it: the first
    ``keep // 2`` characters, :data:`MARKER` naming the tokens cut (``counter``'s count of the cut
    text), then the last ``keep - keep // 2`` characters. ``keep`` < ``len(text)``."""
    left = keep // 2
    right = len(text) - (keep - left)
    return text[:left] + MARKER.format(tokens=text_tokens(counter, text[left:right])) + text[right:]


def cut_to_fit(row: Message, room: int, counter: TokenCounter) -> Message | None:
    """``row`` with the middle of its text cut (:func:`middle_cut`) so that the row, marker included,
    counts at most ``room`` tokens under ``counter``: the most characters kept that a bisection
    finds fitting (the count grows with what is kept, up to the marker's digits; whatever is
    returned fits). None when even the marker alone does not fit, or the content is not a string."""
    text = row.get("content")
    if not isinstance(text, str) or room <= 0:
        return None

    def fitting(keep: int) -> Message | None:
        candidate = {**row, "content": middle_cut(text, keep, counter)}
        return candidate if counter.count([candidate]) <= room else None

    best = fitting(0)
    if best is None:
        return None
    lo, hi = 0, len(text) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        got = fitting(mid)
        if got is not None:
            lo, best = mid, got
        else:
            hi = mid - 1
    return best


class LogUnits:
    """Running sums of the committed log's payload units (``counter.unit``), each row read once while
    the log grows, so a call's history count costs its edit record's ranges, not its rows (the
    count is the counter's ``count`` of the history, exactly). A different list object or counter,
    or a list that shrank or changed under its last row read, is read again from the start."""

    __slots__ = ("rows", "counter", "last", "pre")

    def __init__(self) -> None:
        self.rows: Sequence[Message] | None = None
        self.counter: TokenCounter | None = None
        self.last: Message | None = None
        self.pre: list[int] = [0]

    def sync(self, past: Sequence[Message], counter: TokenCounter) -> list[int]:
        """The prefix sums over ``past``: ``pre[b] - pre[a]`` is the units of ``past[a:b]``."""
        n = len(self.pre) - 1
        if past is not self.rows or counter is not self.counter or len(past) < n or \
                (n and past[n - 1] is not self.last):
            self.rows, self.counter, self.pre, n = past, counter, [0], 0
        pre = self.pre
        if n < len(past):
            total, unit = pre[-1], counter.unit
            for m in past[n:]:
                total += unit(m)
                pre.append(total)
            self.last = past[-1]
        return pre

    def tokens(self, past: Sequence[Message], record: EditRecord, counter: TokenCounter) -> int:
        """``counter.count(record.apply(past))`` from the sums: the kept ranges' units, each replaced
        row's own in place of its original's, plus the inserted blocks'."""
        pre = self.sync(past, counter)
        if len(record.kept) == 1 and not record.replaced and not record.inserted:  # the usual call: one run
            a, b = record.kept[0]
            return counter.total(pre[b] - pre[a], b - a)
        units = sum(pre[b] - pre[a] for a, b in record.kept)
        rows = sum(b - a for a, b in record.kept) + len(record.inserted)
        units += sum(counter.unit(r.row) - counter.unit(past[r.index]) for r in record.replaced)
        units += sum(counter.unit(ins.row) for ins in record.inserted)
        return counter.total(units, rows) if rows else 0


def trigger_tokens(params: AutoCompactParams, window: int) -> int:
    """The input tokens a call compacts at: ``threshold_tokens``, else ``floor(ratio × window)``
    computed exactly (0.9 of 10 000 is 9 000)."""
    if params.threshold_tokens is not None:
        return params.threshold_tokens
    return int(Fraction(str(params.ratio)) * window)


def input_tokens(budget: Budget, history_tokens: int) -> int:
    """A call's input tokens: the budget's fixed part (system band, user row, working memory, tool
    schemas) plus the history's count, in provider tokens (times the calibration, plus the
    unrecorded prefix) when those are set."""
    ours = budget.fixed + history_tokens
    if budget.calibration is not None:
        ours = int(Fraction(str(budget.calibration)) * ours)
    return ours + budget.prefix


class AutoCompactConversation(BuiltFromParams, SummarizerSlot, ContextManager):
    """Compact the history into recent user messages and one summary when input tokens reach the trigger.

    Guarantees: under the trigger the history (the last compaction's, if any, plus what came after)
    passes unchanged; the user rows kept count at most ``keep_user_tokens`` together; at the trigger one summarizer call makes the new summary of every row not kept
    (the previous summary block included); a summarizer that raises leaves the last compaction in
    force (the next call retries); with no summarizer text (``drop``) the rest is left out without a
    block; a compacted history with nothing new to fold is kept as it is.
    """

    name = "auto-compact"
    reads_budget = True
    actions = (
        Action("under-compact-trigger", "kept: under the compaction trigger"),
        Action("nothing-to-compact", "kept: at the compaction trigger, nothing to compact"),
        Action("compaction-kept", "compacted history kept", "summary", "summary",
               not_sent="compacted into an earlier summary"),
        Action("compacted", "history compacted", "summary", "summary", marker="compacted",
               not_sent="compacted into the summary (this call)",
               not_sent_trimmed="compacted into this call's summary, which was {how}",
               trimmed_words="compacted, summary trimmed — not sent"),
        Action("compact-dropped", "compacted without a summary", "drop", "drop",
               not_sent="left out by a compaction without a summary"),
        Action("compaction-failed", "compaction failed", "failed",
               not_sent="left out: the compaction's summarizer failed"),
    )
    reasons = (
        Reason(TRUNCATED, "user message truncated by the compaction (its middle cut to fit keep_user_tokens)"),
    )

    def __init__(self, threshold_ratio: float | None = AUTO_COMPACT.threshold_ratio,
                 threshold_tokens: int | None = AUTO_COMPACT.threshold_tokens,
                 keep_user_tokens: int = AUTO_COMPACT.keep_user_tokens, summarizer: Any = None, *,
                 params: AutoCompactParams | None = None) -> None:
        """Defaults and checks come from :class:`~inspector.params.AutoCompactParams` (a value it
        refuses, or both triggers, raises ``ValueError`` naming the parameter); ``params``, a
        validated model, is used as it is instead of the three keywords. ``summarizer`` as
        :meth:`bind_summarizer` takes it."""
        super().__init__()
        if params is None:
            params = AutoCompactParams.build(self.name, threshold_ratio=threshold_ratio,
                                             threshold_tokens=threshold_tokens, keep_user_tokens=keep_user_tokens)
        self.params = params
        self._trigger: tuple[AutoCompactParams, int, int] | None = None  # (params, window, trigger) last asked
        self._last: Compaction | None = None
        self._units = LogUnits()
        self._held: tuple[Any, ...] | None = None  # the last history worked out (:meth:`_history`)
        self.bind_summarizer(summarizer)

    def _current(self, past: Sequence[Message]) -> EditRecord:
        """The history in force: the last compaction's over ``past``, else the whole log."""
        last = self._last
        if last is not None and not last.holds(past):
            self._last = last = None
        return last.record(len(past)) if last is not None else EditRecord.keep_all(len(past))

    @property
    def message_cap(self) -> int | None:
        """While a compaction is in force and not yet written back, one row less than the log it was
        made over, so the commit writes the compacted history back (:meth:`decide`); else None."""
        last = self._last
        return None if last is None else last.size - 1

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        """The commit-time write-back (no budget, nothing triggers): the compaction in force, which
        becomes the committed log (the archive folds the rows it left out, as Codex replaces its
        history); the manager forgets it then, the log itself holding it. With none, the log as it is."""
        del hint
        record = self._current(past)
        last, self._last = self._last, None
        if last is None:
            return managed(past, record, CMDecision("under-compact-trigger"))
        text = None if last.block is None else summary_body(last.block)
        action = "compacted" if last.block is not None else "compact-dropped"
        return managed(past, record, CMDecision(action, kept_turns=len(last.users), summary_text=text))

    def decide_in_budget(self, past: Sequence[Message], working: Sequence[Message], budget: Budget) -> Managed:
        """The call's history: the one in force while its input stays under the trigger, else compacted."""
        del working
        record, history = self._history(past)
        used = input_tokens(budget, history)
        trigger = self._trigger_at(budget.window)
        if used < trigger:
            action = "compaction-kept" if self._last is not None else "under-compact-trigger"
            return managed(past, record, CMDecision(action, raw_tokens=used, threshold=trigger))
        return self._compact(past, record, used, trigger)

    def _history(self, past: Sequence[Message]) -> tuple[EditRecord, int]:
        """The history in force over ``past`` (:meth:`_current`) and its tokens, remembered for the
        next call on the same log (the same list, length and last row), compaction in force and
        counter: every call of a turn sees the same log, only the budget's fixed part changes."""
        n, held = len(past), self._held
        if held is not None and held[0] is past and held[1] == n and held[2] is (past[-1] if n else None) and \
                held[3] is self._last and held[4] is self.counter:
            return held[5], held[6]
        record = self._current(past)
        tokens = self._units.tokens(past, record, self.counter)
        self._held = (past, n, past[-1] if n else None, self._last, self.counter, record, tokens)
        return record, tokens

    def _trigger_at(self, window: int) -> int:
        """:func:`trigger_tokens` for this manager's params and ``window``, remembered while both stay
        the same (every call of a replay asks with the same two; a test may retune a manager)."""
        memo = self._trigger
        if memo is None or memo[0] is not self.params or memo[1] != window:
            memo = self._trigger = (self.params, window, trigger_tokens(self.params, window))
        return memo[2]

    def keep_users(self, past: Sequence[Message], candidates: Sequence[int],
                   sent: Mapping[int, Replacement]) -> tuple[tuple[int, ...], tuple[Replacement, ...]]:
        """The user rows kept among ``candidates`` (log indices, in log order; ``sent`` the rows the
        history in force sends in place of a log row), Codex's ``build_compacted_history_with_limit``:
        newest first, whole while each (counted alone) fits what is left of ``keep_user_tokens``; the
        first that does not fit is cut to what is left (:func:`cut_to_fit`, reason :data:`TRUNCATED`)
        and ends the choice, as does nothing left. Returns their log indices in log order and the
        rows sent in their place (a cut made now, or an earlier one still in force)."""
        room = self.params.keep_user_tokens
        chosen: list[int] = []
        cuts: list[Replacement] = []
        for i in reversed(candidates):
            if room <= 0:
                break
            held = sent.get(i)
            row = past[i] if held is None else held.row
            cost = self.counter.count([row])
            if cost <= room:
                chosen.append(i)
                if held is not None:
                    cuts.append(held)
                room -= cost
                continue
            cut = cut_to_fit(row, room, self.counter)
            if cut is not None:
                chosen.append(i)
                cuts.append(Replacement(i, cut, TRUNCATED))
            break
        return tuple(reversed(chosen)), tuple(reversed(cuts))

    def _compact(self, past: Sequence[Message], record: EditRecord, used: int, trigger: int) -> Managed:
        """Compact the history in force (``record``): keep the newest user rows, summarise the rest."""
        n = len(past)
        sent = {r.index: r for r in record.replaced}
        in_force = [i for a, b in record.kept for i in range(a, b)]
        users, cuts = self.keep_users(past, [i for i in in_force if past[i].get("role") == "user"], sent)
        rest = self._rest(past, record, set(users))
        blocks = self._blocks()
        if all(any(m is blk for blk in blocks) for m in rest):  # nothing new since the last compaction
            action = "compaction-kept" if self._last is not None else "nothing-to-compact"
            return managed(past, record, CMDecision(action, raw_tokens=used, threshold=trigger))
        folded_users = sum(1 for m in rest if m.get("role") == "user")
        model, source = self.summary_model()
        called = self.calls_model()
        try:
            text = self.summary_text(rest)
        except Exception as exc:  # noqa: BLE001 - any summarizer failure: the last compaction stays in force
            return managed(past, record, CMDecision(
                "compaction-failed", raw_tokens=used, threshold=trigger, summarizer_called=called,
                error=f"{type(exc).__name__}: {exc}", summary_model=model, summary_model_source=source))
        block = summary_or_none(max(folded_users, 1), text)
        self._last = Compaction(n, past[-1] if n else None, users, block, cuts)
        decision = CMDecision(
            "compacted" if block is not None else "compact-dropped",
            compressed_turns=folded_users if block is not None else 0,
            dropped_turns=0 if block is not None else folded_users, kept_turns=len(users), raw_tokens=used,
            threshold=trigger, summarizer_called=called, summary_text=text, summary_model=model,
            summary_model_source=source)
        return managed(past, self._last.record(n), decision)

    def _blocks(self) -> tuple[Message, ...]:
        """The summary block in force (none before a first compaction, or after a drop)."""
        last = self._last
        return (last.block,) if last is not None and last.block is not None else ()

    @staticmethod
    def _rest(past: Sequence[Message], record: EditRecord, users: set[int]) -> list[Message]:
        """What the summary stands for: the history in force without the user rows kept, in order,
        each as it was sent (a row an earlier compaction cut, as cut; the previous summary block
        where it stood)."""
        blocks = {ins.at: ins.row for ins in record.inserted}
        sent = {r.index: r.row for r in record.replaced}
        out: list[Message] = []
        for a, b in record.kept:
            for i in range(a, b):
                if i in blocks:
                    out.append(blocks.pop(i))
                if i not in users:
                    out.append(sent.get(i, past[i]))
        out.extend(blocks.values())
        return out
