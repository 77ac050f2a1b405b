"""The token trimmer: the last budget backstop before pairing (docs/design.md §3.7).

``messages`` is the system band + managed history + current user message; ``pin_tail`` is working
memory (the live tool round). The trimmer removes the oldest content until the payload fits
``max_tokens − reserve − fixed``. Order of sacrifice: the oldest history groups, then the oldest
working-memory groups. Groups are the reference's (Q24,
:func:`~inspector.engine.history.leading_group_size`): an ask plus its contiguous *matching* results;
any other row is a group of one — a mislabelled result after an ask, and a ``tool`` row at the front
of ``pin_tail`` (the answers of an ask that ends the history, a turn resumed after a HITL pause), so
under a budget that cannot hold them those answers leave one by one, the last one staying; the
pairing repair then answers the calls whose results were cut with empty results. A call that fits
the window beats a complete one the provider refuses. Never removed: the leading system message, the
last non-pinned group (normally the current user message; the loop stops before it would empty the
history part) and the newest working-memory group. When those alone exceed the budget the result is
returned over budget with ``over_budget=True`` and a logged warning — instructions are never deleted
silently.

HITL rule: a committed ask whose results still sit in working memory (a turn paused for approval)
has its answers at the *front* of ``pin_tail``. Dropping that ask also drops those answering rows
(reported with ``reason="answer_of_dropped_ask"``), since without the ask they are orphans; this is
the one way a working-memory row can leave other than by budget, and it may take rows of the newest
working-memory group when that group is nothing but such answers.

Single-row drops can split a user turn (a user message goes, its answer stays); the pairing pass
that runs afterwards keeps the payload valid. A summary block is a normal history row here.

Cost: each message is measured once with ``counter.unit`` (itself cached per message object) and
the trimmer keeps running unit sums with ``counter.total(units, n)``; removal moves index pointers.
The whole trim is O(len(messages) + len(pin_tail)).
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from inspector.engine.history import call_ids, is_ask, leading_group_size
from inspector.engine.tokens import TokenCounter
from inspector.engine.types import JoinedRows, Message, Removal, Removals, TrimResult

__all__ = ["RowSums", "trim_budget", "trim_messages_to_budget", "trim_with_sums"]

_log = logging.getLogger(__name__)


def trim_budget(max_tokens: int, reserve: int, fixed: int) -> int:
    """Tokens the messages may use: ``max(0, max_tokens − max(0, reserve) − max(0, fixed))``."""
    left = max_tokens - (reserve if reserve > 0 else 0) - (fixed if fixed > 0 else 0)
    return left if left > 0 else 0


@dataclass(slots=True)
class RowSums:
    """The unit sums a caller already holds for :func:`trim_with_sums` (running sums over the committed
    log and working memory): ``msg_total`` is the units of ``messages`` and ``msg_sum(lo, hi)`` those of
    ``messages[lo:hi]``; ``pin_total``, ``pin_sum(lo, hi)`` and ``pin_units(k)`` the same for
    ``pin_tail``; ``pin_chain`` the start of every working-memory group as
    :func:`~inspector.engine.history.leading_group_size` chains them from row 0. (A slotted record,
    one a call: made in about half a named tuple's time.)"""

    msg_sum: Callable[[int, int], int]
    msg_total: int
    pin_units: Callable[[int], int]
    pin_sum: Callable[[int, int], int]
    pin_total: int
    pin_chain: Sequence[int]
    pin_reach: Callable[[int], int] | None = None
    """The smallest ``r`` with ``pin_sum(0, r) >= x``, ``len(pin_tail) + 1`` when none (None: not known;
    the working-memory walk then bisects by ``pin_sum``)."""
    pin_n: int = -1
    """``len(pin_tail)`` when the caller knows it (-1: asked of ``pin_tail``; a view's ``len()`` is a Python call)."""


@dataclass(slots=True)
class _Cut:
    """Where a trim stands: the units and rows still in, their total, the first history row still in
    (``start``; rows from the protected head up to it are gone), the first working-memory row still
    in, and what was removed so far, in order."""

    units: int
    count: int
    total: int
    start: int
    pin_start: int
    removed: list[Removal] | Removals


def trim_messages_to_budget(
    messages: Sequence[Message],
    *,
    max_tokens: int,
    reserve: int,
    fixed: int,
    pin_tail: Sequence[Message],
    counter: TokenCounter,
) -> TrimResult:
    """Trim ``messages + pin_tail`` to the budget (rules in the module docstring).

    ``max_tokens ≤ 0`` disables trimming. The inputs are never mutated; ``result.messages`` holds
    the same dict objects, in order, and ``result.removed`` the ones that were taken out.
    """
    msg_units = [counter.unit(m) for m in messages]
    pin_units = [counter.unit(m) for m in pin_tail]
    units = sum(msg_units) + sum(pin_units)
    count = len(messages) + len(pin_tail)
    total = counter.total(units, count)
    if max_tokens <= 0:
        return TrimResult(list(messages) + list(pin_tail), [], False, total)
    budget = trim_budget(max_tokens, reserve, fixed)
    if total <= budget:
        return TrimResult(list(messages) + list(pin_tail), [], False, total)
    head = 1 if len(messages) and messages[0].get("role") == "system" else 0
    cut = _Cut(units, count, total, head, 0, [])
    _drop_history(messages, pin_tail, cut, budget, counter, lambda lo, hi: sum(msg_units[lo:hi]),
                  pin_units.__getitem__)
    cur = _drop_working_groups(pin_tail, cut, budget, counter, pin_units.__getitem__)
    result = list(messages[:head]) + list(messages[cut.start:]) + list(pin_tail[cur:])
    return _result(result, cut.removed, cut.total, budget, len(pin_tail) - cur, cut.start - head, cut.pin_start)


def _drop_history(messages: Sequence[Message], pin_tail: Sequence[Message], cut: _Cut, budget: int,
                  counter: TokenCounter, msg_sum: Callable[[int, int], int], pin_unit: Callable[[int], int]) -> None:
    """Drop the oldest history groups while over ``budget``, never the last one; a dropped ask takes
    the answers it left owed at the front of ``pin_tail`` with it (the HITL rule)."""
    n_msgs = len(messages)
    if not (cut.total > budget and n_msgs - cut.start > 1):
        return  # nothing to drop (the usual incremental call: the pre-cut took it), nothing read
    # answers at the front of pin_tail follow the last history row: when that row is an ask (kept: it is
    # the last group), the answers under its ids are its own, never those of an older dropped ask
    last_ask_ids = set(call_ids(messages[-1])) if n_msgs > cut.start and is_ask(messages[-1]) else set()
    # answers of a dropped ask can only stand at the front of pin_tail: with none there, none is owed
    answers_first = bool(pin_tail) and pin_tail[0].get("role") == "tool"
    removed = cut.removed
    while cut.total > budget and n_msgs - cut.start > 1:
        start = cut.start
        size = leading_group_size(messages, start)
        if size >= n_msgs - start:
            break
        first = messages[start]
        cut.units -= msg_sum(start, start + size)
        for k in range(start, start + size):
            removed.append(Removal(messages[k], "history"))
        cut.count -= size
        cut.start = start + size
        if answers_first and is_ask(first):
            owed = set(call_ids(first)) - {m.get("tool_call_id") for m in messages[start + 1:start + size]} \
                - last_ask_ids
            _drop_answers_of(owed, pin_tail, pin_unit, cut)
        cut.total = counter.total(cut.units, cut.count)


def _drop_answers_of(ids: set[str], pin_tail: Sequence[Message], pin_unit: Callable[[int], int], cut: _Cut) -> None:
    """HITL rule: remove the rows at the front of ``pin_tail`` answering a dropped ask's call ids
    ``ids`` that its own group left unanswered (each id once)."""
    while cut.pin_start < len(pin_tail) and pin_tail[cut.pin_start].get("role") == "tool":
        row = pin_tail[cut.pin_start]
        tid = row.get("tool_call_id")
        if tid not in ids:
            break
        ids.discard(tid)
        cut.units -= pin_unit(cut.pin_start)
        cut.count -= 1
        cut.removed.append(Removal(row, "working_memory", "answer_of_dropped_ask"))
        cut.pin_start += 1


def _drop_working_groups(pin_tail: Sequence[Message], cut: _Cut, budget: int, counter: TokenCounter,
                         pin_unit: Callable[[int], int]) -> int:
    """Drop the oldest working-memory groups from ``cut.pin_start`` while over ``budget``, never the
    newest (answers at its front are groups of one each); returns the first row still in."""
    n_pin = len(pin_tail)
    cur = cut.pin_start
    while cut.total > budget and n_pin - cur > 0:
        size = leading_group_size(pin_tail, cur)
        if size >= n_pin - cur:
            break
        for k in range(cur, cur + size):
            cut.units -= pin_unit(k)
            cut.removed.append(Removal(pin_tail[k], "working_memory"))
        cut.count -= size
        cur += size
        cut.total = counter.total(cut.units, cut.count)
    return cur


def _result(result: list[Message] | JoinedRows, removed: list[Removal] | Removals, total: int, budget: int, newest_rows: int,
            history_removed: int, answers_removed: int) -> TrimResult:
    """The trim's outcome, shared by the reference and the incremental trimmer: over budget only when
    what is pinned alone does not fit, which is said once on the log. The two counts say what
    ``removed`` holds without reading it (history rows; answers of a dropped ask)."""
    over = total > budget
    if over:
        _log.warning(
            "token budget %d exceeded by pinned content alone (~%d tokens: system band, last history "
            "group, newest working-memory group of %d row(s)); raise the budget or inject less",
            budget,
            total,
            newest_rows,
        )
    return TrimResult(result, removed, over, total, history_removed, answers_removed)


def trim_with_sums(
    messages: Sequence[Message],
    *,
    max_tokens: int,
    reserve: int,
    fixed: int,
    pin_tail: Sequence[Message],
    counter: TokenCounter,
    sums: RowSums,
    owned: bool = False,
    budget: int | None = None,
) -> TrimResult:
    """:func:`trim_messages_to_budget` for incremental assembly: the same result, without reading
    every row.

    The caller knows the unit sums already (``sums``, a :class:`RowSums`). History groups are
    dropped one by one as in the reference (after the pre-cut there are a handful); the
    working-memory cut (thousands of groups in one enormous turn) is found by bisection over the
    group starts, and the rows it removes are recorded as one range of ``pin_tail``. Cost:
    O(history groups dropped + log(groups)), plus copying the kept rows into the result list, or
    none when ``messages`` is a :class:`~inspector.engine.types.JoinedRows` (the result is then one
    too). ``owned``: the caller hands ``messages`` (a list) over: it may become the result's list
    instead of being copied once more. ``budget``: the caller's ``trim_budget(max_tokens, reserve, fixed)``
    when it has it already.
    """
    n_msgs = messages.n if type(messages) is JoinedRows else len(messages)  # (a view's len() is a Python call)
    n_pin = sums.pin_n if sums.pin_n >= 0 else len(pin_tail)
    units = sums.msg_total + sums.pin_total
    count = n_msgs + n_pin
    total = counter.total(units, count)
    if max_tokens <= 0:
        return TrimResult(_kept(messages, 0, 0, pin_tail, 0, owned, n_pin), [], False, total)
    if budget is None:
        budget = trim_budget(max_tokens, reserve, fixed)
    if total <= budget:
        return TrimResult(_kept(messages, 0, 0, pin_tail, 0, owned, n_pin), [], False, total)
    head = 1 if n_msgs and messages[0].get("role") == "system" else 0
    cut = _Cut(units, count, total, head, 0, Removals())
    _drop_history(messages, pin_tail, cut, budget, counter, sums.msg_sum, sums.pin_units)
    if cut.total > budget and n_pin - cut.pin_start > 0 and cut.pin_start == 0 and sums.pin_chain:
        cur = _cut_working_by_bisection(pin_tail, cut, budget, counter, sums)
    else:  # answers of a dropped ask left first (a resumed HITL turn): the reference's walk (rare, short)
        cur = _drop_working_groups(pin_tail, cut, budget, counter, sums.pin_units)
    result = _kept(messages, head, cut.start, pin_tail, cur, owned, n_pin)
    return _result(result, cut.removed, cut.total, budget, n_pin - cur, cut.start - head, cut.pin_start)


def _cut_working_by_bisection(pin_tail: Sequence[Message], cut: _Cut, budget: int, counter: TokenCounter,
                              sums: RowSums) -> int:
    """The reference's working-memory walk from row 0 as one bisection over the group starts
    ``sums.pin_chain``: it stops at the first group start where the rest fits, or at the last group
    (the total only falls as the start grows). Returns the first row kept; the rows before it are
    recorded as one removed range."""
    chain = sums.pin_chain
    reach = sums.pin_reach
    if reach is not None and getattr(counter, "additive", False):
        # total(u, n) == u: the rest fits from g when pin_sum(0, g) >= units - budget, and the sums never
        # fall, so the first such group start is the first at or after the first row that reaches it
        lo = min(bisect_left(chain, reach(cut.units - budget)), len(chain) - 1)
    else:
        lo, hi = 0, len(chain) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            g = chain[mid]
            if counter.total(cut.units - sums.pin_sum(0, g), cut.count - g) <= budget:
                hi = mid
            else:
                lo = mid + 1
    cur = chain[lo]
    cut.units -= sums.pin_sum(0, cur)
    cut.count -= cur
    cut.removed.add_range(pin_tail, 0, cur, "working_memory")  # type: ignore[union-attr]
    cut.total = counter.total(cut.units, cut.count)
    return cur


def _kept(messages: Sequence[Message], head: int, start: int, pin_tail: Sequence[Message], cur: int,
          owned: bool, n_pin: int = -1) -> list[Message] | JoinedRows:
    """``messages[:head] + messages[start:] + pin_tail[cur:]``: a new view of the same ranges when
    ``messages`` is a :class:`~inspector.engine.types.JoinedRows` (the incremental path's payload:
    no row copied); else one new list, copying the long middle (thousands of history rows for an
    uncapped stack) once rather than three times, and with ``owned`` (the caller gave ``messages``,
    a list, up) not even once. ``n_pin``: ``len(pin_tail)`` when the caller has it (-1: asked)."""
    if type(messages) is JoinedRows:
        if start <= head:  # nothing dropped (the usual call: the pre-cut took what could not fit): the
            # same ranges and working memory's kept rows after them, no walk over the parts
            if n_pin < 0:
                n_pin = len(pin_tail)
            return JoinedRows([*messages.parts, (pin_tail, cur, n_pin)], messages.n + n_pin - cur)
        return messages.cut(head, start, pin_tail, cur)
    if owned and isinstance(messages, list):
        out = messages
        del out[head:start]  # a move of the kept rows, not a copy of them (no-op when start <= head)
    else:
        part = messages[start:] if start else messages
        out = part if isinstance(part, list) and part is not messages else list(part)  # a slice is already new
        if head:
            out[:0] = messages[:head]
    out += pin_tail[cur:] if cur else pin_tail
    return out
