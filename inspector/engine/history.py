"""History structure: user turns and tool-call groups (docs/design.md §1.2, §1.3).

A *user turn* is the unit of recency for every context manager; a *tool-call group* (an ask plus
the contiguous results answering it) is the atomic unit for the trimmer and for stack slicing.
"""

from __future__ import annotations

import hashlib
import operator
from bisect import bisect_right
from collections.abc import Sequence
from itertools import compress, count, islice, repeat
from typing import Any

from inspector.engine.types import Message

role_of = operator.methodcaller("get", "role")
"""A message's role (None when it has none), as a callable: ``map(role_of, rows)`` reads every row's
role (the replay loop and the agent's system text read them this way)."""


def is_ask(msg: Message) -> bool:
    """Whether ``msg`` is an ask: an assistant row with tool calls."""
    return msg.get("role") == "assistant" and bool(msg.get("tool_calls"))


def call_ids(msg: Message) -> list[str]:
    """Ids of an ask's calls in declaration order; calls without an id are ignored by pairing.

    Asked for every ask on every path (recording, indexing, pairing), so the usual shapes — a
    plain list of plain dicts with string ids — are recognised by exact type before the general
    ``isinstance`` checks, which still decide every other shape."""
    calls = msg.get("tool_calls")
    if type(calls) is not list and not isinstance(calls, list):
        return []
    out: list[str] = []
    for call in calls:
        if type(call) is dict or isinstance(call, dict):
            cid = call.get("id")
            if (type(cid) is str or isinstance(cid, str)) and cid:
                out.append(cid)
    return out


def split_user_turns(messages: Sequence[Message]) -> list[list[Message]]:
    """Leading non-user rows form one preamble group (it counts as a turn); each ``user`` row opens
    a group holding it and everything up to the next ``user`` row."""
    groups: list[list[Message]] = []
    for msg in messages:
        if msg.get("role") == "user" or not groups:
            groups.append([msg])
        else:
            groups[-1].append(msg)
    return groups


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Start index of every user turn (same grouping as :func:`split_user_turns`)."""
    starts: list[int] = []
    for i, msg in enumerate(messages):
        if msg.get("role") == "user" or not starts:
            starts.append(i)
    return starts


def start_of_tool_group(messages: Sequence[Message], i: int) -> int:
    """Clamp ``i`` into range, then step back over ``tool`` rows to the ask (or first non-tool row)."""
    if not messages:
        return 0
    i = max(0, min(i, len(messages) - 1))
    while i > 0 and messages[i].get("role") == "tool":
        i -= 1
    return i


def leading_group_size(messages: Sequence[Message], start: int = 0) -> int:
    """Size of the trimmer's group starting at ``start``: an ask plus its contiguous *matching*
    results (``tool`` rows answering one of its call ids), else 1 (docs/design.md Q24).

    The reference's groups: any other row — a mislabelled result after an ask, or a ``tool`` row
    that does not follow its ask (the front of working memory) — is a group of one; the pairing
    repair then drops or answers what a cut leaves. A duplicate result under a declared id matches."""
    n = len(messages)
    if start >= n:
        return 0
    first = messages[start]
    if not is_ask(first):
        return 1
    ids = call_ids(first)
    j = start + 1
    while j < n and messages[j].get("role") == "tool" and messages[j].get("tool_call_id") in ids:
        j += 1
    return j - start


def group_start(messages: Sequence[Message], i: int) -> int:
    """Start of the trimmer group (:func:`leading_group_size`, chained from row 0) that holds row
    ``i``: the ask before a run of ``tool`` rows when ``i`` is one of its matching results, else
    ``i`` itself (every non-tool row and every other ``tool`` row starts a group)."""
    g = start_of_tool_group(messages, i)
    if g < i and is_ask(messages[g]) and i < g + leading_group_size(messages, g):
        return g
    return i


def flatten(groups: Sequence[Sequence[Message]]) -> list[Message]:
    """The rows of ``groups``, in order, as one list."""
    return [m for g in groups for m in g]


_NEAR = 16
"""How many leading positions :meth:`LogRuns._refold` compares one by one before it scans the rest
by identity in one pass: a write-back fold drops a turn or two (a handful of rows), so the row it
looks for is nearly always among the first few."""


class LogRuns:
    """Running facts of one append-only row list — the committed log a manager reads on every call.

    Why: a manager is asked about the committed log before *every* LLM call, and between folds that
    log only grows (the archive extends its projection in place; a fold replaces it with a new list).
    Recounting it per call makes a replay quadratic in the history it keeps, so each row is read
    **once, when it is first seen**: its user-turn start (the grouping of :func:`turn_starts`) and
    its trigger units (``counter.history_unit``, prefix sums). Guarantees: after ``sync(rows,
    counter)`` :attr:`starts` equals ``turn_starts(rows)`` and ``history(lo, hi)`` equals the units
    of ``rows[lo:hi]``; a different list object, a different counter, or a list that shrank or
    changed under its last recorded row is re-read from scratch. ``pre`` holds running sums of the
    units: ``pre[i] - pre[0]`` is the units of ``rows[:i]`` (``pre[0]`` is 0 until a fold, which
    keeps the sums of the rows it keeps as they were). ``read`` counts rows read (tests use it to
    show a replay reads each row a bounded number of times).
    """

    __slots__ = ("rows", "counter", "n", "last", "starts", "pre", "read", "_hash", "_hashed", "_marks")

    def __init__(self) -> None:
        self.read = 0
        self._reset(None, None)

    def _reset(self, rows: Sequence[Message] | None, counter: object) -> None:
        self.rows = rows
        self.counter = counter
        self.n = 0
        self.last: Message | None = None
        self.starts: list[int] = []
        self.pre: list[int] = [0]
        self._hash: object = None  # the fingerprint's running state, built only when asked for
        self._hashed = 0
        self._marks: list[object] = []

    def sync(self, rows: Sequence[Message], counter: object = None) -> LogRuns:
        """Bring the facts up to date with ``rows`` (units only when ``counter`` is given)."""
        n, size = self.n, len(rows)
        if rows is not self.rows or counter is not self.counter or size < n or \
                (n and rows[n - 1] is not self.last):
            if not (rows is not self.rows and counter is self.counter and self._refold(rows)):
                self._reset(rows, counter)
            n = self.n
        if n == size:
            return self
        # the new rows, each read once: a commit appends a turn of a few rows
        starts = self.starts
        unit = None if counter is None else getattr(counter, "history_unit", None)
        pre = self.pre
        total = pre[-1]
        for i, m in enumerate(rows[n:size], n):
            if m.get("role") == "user" or not i:  # row 0 always opens a turn (a preamble counts as one)
                starts.append(i)
            if unit is not None:  # prefix sums
                total += unit(m)
                pre.append(total)
        self.read += size - n
        self.n = size
        self.last = rows[-1]
        return self

    def _refold(self, rows: Sequence[Message]) -> bool:
        """Take over the facts of a fold's new list ``[block?] + old[k:n] + later rows`` (``n`` = the
        rows read so far; the new list may already have grown since the fold, as the committed log
        has when the assembler next looks at it): the rows already read keep their facts, shifted,
        instead of being read again; a leading block and the later rows are read by ``sync``.
        ``k`` is where ``rows[blk]`` stands in the old list (an identity scan: the first
        :data:`_NEAR` positions one by one, the rest in one pass), and the whole overlap is checked by
        identity. False (read from scratch) for anything else."""
        old, n = self.rows, self.n
        if old is None or not n or len(old) < n or old[n - 1] is not self.last or not rows:
            return False
        size = len(rows)
        for blk in (0, 1):
            if size <= blk:
                break
            target = rows[blk]
            k = 0  # a fold drops a few rows as a rule: the first positions are read one by one
            while k < n and k < _NEAR and old[k] is not target:
                k += 1
            if k == _NEAR < n:
                k = next(compress(count(_NEAR), map(operator.is_, islice(old, _NEAR, n), repeat(target))), n)
            if k < n and size >= blk + n - k and \
                    all(map(operator.is_, islice(rows, blk, blk + n - k), islice(old, k, n))):
                break
        else:
            return False
        if size <= blk:
            return False
        # the kept facts are taken over: the prefix sums as a slice (only their differences count:
        # ``pre[0]`` need not be 0), the starts shifted
        unit = getattr(self.counter, "history_unit", None)
        if unit is not None:
            pre = self.pre
            self.pre = [pre[k] - unit(rows[0]), *islice(pre, k, n + 1)] if blk else pre[k:n + 1]
        starts = self.starts
        kept = map(operator.add, islice(starts, bisect_right(starts, k), None), repeat(blk - k))
        if not blk:
            self.starts = [0, *kept]  # row 0 (old[k]) opens a turn, as the first row always does
        elif old[k].get("role") == "user":
            self.starts = [0, 1, *kept]  # the block opens a turn, old[k] the next one
        else:
            self.starts = [0, *kept]  # old[k] joins the block's turn
        self.rows, self.n = rows, n - k + blk
        self.last = rows[self.n - 1]
        self.read += blk
        self._hash, self._hashed, self._marks = None, 0, []  # the fingerprint is rebuilt when asked
        return True

    def history(self, lo: int, hi: int) -> int:
        """Trigger units of ``rows[lo:hi]`` (``sync`` was given a counter)."""
        return self.pre[hi] - self.pre[lo]

    def turn_start(self, g: int) -> int:
        """Row index where user turn ``g`` starts (``n`` for ``g`` = the number of turns)."""
        return self.starts[g] if g < len(self.starts) else self.n

    def fingerprint(self, g: int) -> str:
        """:func:`inspector.engine.managers.summarising.fingerprint`'s digest of the first ``g``
        turns, from a running SHA-256 state: rows are hashed once, on the first request that reaches
        them, and the state at each turn start is kept, so asking again costs O(1)."""
        if g < len(self._marks):
            return self._marks[g].hexdigest()  # type: ignore[attr-defined,no-any-return]
        if self._hash is None:
            self._hash = hashlib.sha256()
        h: Any = self._hash
        rows = self.rows
        assert rows is not None
        end = self.turn_start(g)
        marks, starts = self._marks, self.starts
        for p in range(self._hashed, end):
            if len(marks) < len(starts) and starts[len(marks)] == p:
                marks.append(h.copy())
                h.update(b"\x1e")
            h.update(row_digest_bytes(rows[p]))
        self._hashed = max(self._hashed, end)
        if g < len(marks):
            return marks[g].hexdigest()  # type: ignore[attr-defined,no-any-return]
        return h.copy().hexdigest()  # type: ignore[no-any-return]


def row_digest_bytes(m: Message) -> bytes:
    """What the summary-reuse fingerprint hashes for one row (docs/design.md Q13): role, content,
    tool-call ids/names/arguments and tool_call_id, with separators (written once, used by both the
    one-shot and the running fingerprint)."""
    parts = [str(m.get("role")).encode("utf-8", "replace") + b"\x1f"]
    c = m.get("content")
    parts.append((c if isinstance(c, str) else repr(c)).encode("utf-8", "replace") + b"\x1f")
    for call in m.get("tool_calls") or ():
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        fn = fn if isinstance(fn, dict) else {}
        parts.append(f"{call.get('id') if isinstance(call, dict) else None}\x1d{fn.get('name')}\x1d"
                     f"{fn.get('arguments')}".encode("utf-8", "replace") + b"\x1f")
    parts.append(str(m.get("tool_call_id")).encode("utf-8", "replace") + b"\x1c")
    return b"".join(parts)
