"""Plain types shared by every engine stage (the hot path uses dicts and dataclasses, not pydantic).

Messages are OpenAI chat-completions dicts. The engine never mutates a message it was given:
stages return new lists that hold the *same* dict objects where a message passes through
unchanged, so callers (the replay) can map payload rows back to transcript rows by identity.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Literal

from inspector.errors import InspectorError

Message = dict[str, Any]


class ProviderPayloadError(InspectorError, ValueError):
    """The assembled payload would be rejected by the provider (tool calls and results unpaired).

    Raised by :func:`inspector.engine.pairing.check_provider_payload`; a real exception, never an
    ``assert``, so it survives ``python -O``.
    """


RepairKind = Literal[
    "orphan_dropped",  # a tool result whose id no ask in the payload declares
    "duplicate_dropped",  # a second result for an id already answered
    "id_rebound",  # a result under a wrong id moved to the first unanswered id of its ask
    "ask_stripped",  # unanswered ask not at the end: tool_calls removed, its text kept
    "ask_removed",  # unanswered ask not at the end with no text: removed
    "empty_result_synthesised",  # missing result at the end of the payload: "" added
    "stray_result_dropped",  # a declared result that is not in the run right after its ask
]


@dataclass(frozen=True, slots=True)
class Repair:
    """One change the pairing pass made. ``index`` is the position in the sanitizer's input."""

    kind: RepairKind
    tool_call_id: str | None
    index: int | None
    detail: str = ""
    new_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The repair as a JSON-ready dict (``new_id`` and ``detail`` only when set)."""
        d: dict[str, Any] = {"kind": self.kind, "tool_call_id": self.tool_call_id, "index": self.index}
        if self.new_id is not None:
            d["new_id"] = self.new_id
        if self.detail:
            d["detail"] = self.detail
        return d


@dataclass(slots=True)
class SanitizeResult:
    """``origin[i]`` is the input position the output row ``messages[i]`` came from (None = synthesised)."""

    messages: list[Message] | JoinedRows  # a view when given one (the incremental path's payload)
    repairs: list[Repair]
    origin: Sequence[int | None]  # a range when nothing was repaired (the identity, not a list of ints)
    clean: list[tuple[int, int]] = field(default_factory=list)  # output ranges copied unread (incremental)
    verified: bool = False  # the output passes check_provider_payload (read once for both: the common case)


@dataclass(frozen=True, slots=True)
class Removal:
    """One message the token trimmer removed (the same dict object that was passed in)."""

    message: Message
    source: Literal["history", "working_memory"]
    reason: Literal["budget", "answer_of_dropped_ask"] = "budget"


@dataclass(slots=True)
class TrimResult:
    """The trimmer's outcome: the rows kept (in order, the same objects), the rows removed, whether what is
    pinned alone is over the budget, the kept rows' tokens, and how many of the removed rows are
    history rows and answers of a dropped ask."""

    messages: list[Message] | JoinedRows  # a view when given one (the incremental path's payload)
    removed: list[Removal] | Removals = field(default_factory=list)
    over_budget: bool = False  # pinned content alone exceeds the budget (warning, never silent deletion)
    tokens: int = 0  # counter total of ``messages`` after trimming
    history_removed: int = 0  # how many of ``removed`` are history rows (the oldest rows of ``messages``)
    answers_removed: int = 0  # how many are answers of a dropped ask (the trimmer's HITL rule)


@dataclass(slots=True)
class Span:
    """Payload rows ``rows[lo:hi]`` of an append-only row list (the committed log or working memory),
    sent as they are: no copy per row. ``band`` is the band of every one of them. Never changed once
    laid; not frozen, since a frozen dataclass sets each field through ``object.__setattr__`` (a
    call lays two spans; a frozen one costs several times a plain one, and its list of rows made it
    unhashable anyway)."""

    rows: Sequence[Message]
    lo: int
    hi: int
    band: str

    def __len__(self) -> int:
        return self.hi - self.lo


class Removals(Sequence["Removal"]):
    """What the trimmer removed, as explicit :class:`Removal` records and whole ranges of a row list.

    A range stands for ``Removal(rows[i], source)`` for every ``i`` in it; it is expanded only when
    iterated, so a call that trims thousands of rows records them in O(1). Iteration order is the
    order the trimmer removed them in.
    """

    __slots__ = ("_parts", "_len")

    def __init__(self) -> None:
        self._parts: list[Removal | tuple[Sequence[Message], int, int, str]] = []
        self._len = 0

    def append(self, item: Removal) -> None:
        """Record one removed row."""
        self._parts.append(item)
        self._len += 1

    def add_range(self, rows: Sequence[Message], lo: int, hi: int, source: str) -> None:
        """Record ``rows[lo:hi]`` as removed from ``source`` (nothing for an empty range)."""
        if hi > lo:
            self._parts.append((rows, lo, hi, source))
            self._len += hi - lo

    def parts(self) -> list[Removal | tuple[Sequence[Message], int, int, str]]:
        """The records as stored: a :class:`Removal`, or ``(rows, lo, hi, source)`` for a range."""
        return list(self._parts)

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[Removal]:
        for p in self._parts:
            if isinstance(p, Removal):
                yield p
            else:
                rows, lo, hi, source = p
                for i in range(lo, hi):
                    yield Removal(rows[i], source)  # type: ignore[arg-type]

    def __getitem__(self, k: Any) -> Any:
        items = list(self)
        return items[k]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, Removals)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Removals({list(self)!r})"


class RowsView(Sequence[Message]):
    """``head + rows[lo:hi]`` without copying the slice (the pre-cut prefix of a long history)."""

    __slots__ = ("_head", "_rows", "_lo", "_hi")

    def __init__(self, head: Sequence[Message], rows: Sequence[Message], lo: int, hi: int) -> None:
        # (an empty head stays empty; bounds out of order make an empty view)
        self._head, self._rows, self._lo, self._hi = list(head) if head else [], rows, lo, hi if hi > lo else lo

    def __eq__(self, other: object) -> bool:
        """Equal to a list, tuple or view holding the same rows (it stands for a list)."""
        if isinstance(other, (list, tuple, RowsView)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by value, like the list it stands for

    def source(self) -> tuple[list[Message], Sequence[Message], int, int]:
        """``(head, rows, lo, hi)``: what the view stands for."""
        return self._head, self._rows, self._lo, self._hi

    def __len__(self) -> int:
        return len(self._head) + self._hi - self._lo

    def ends(self) -> tuple[int, Message | None, Message | None, Message | None]:
        """``(len, first row, second row, last row)``, None where the view has no such row, in one
        call: what a reader checking a view's two ends needs (each indexing is a call of its own)."""
        hd, rows, lo, hi = self._head, self._rows, self._lo, self._hi
        h = len(hd)
        n = h + hi - lo
        if not n:
            return 0, None, None, None
        first = hd[0] if h else rows[lo]
        second = None if n < 2 else (hd[1] if h > 1 else rows[lo + 1 - h])
        return n, first, second, rows[hi - 1] if hi > lo else hd[-1]

    def __iter__(self) -> Iterator[Message]:
        # the range as one slice (a list's is one C copy) rather than a generator resumed per row:
        # ``list(view)`` of a commit's folded rows runs once a turn
        rows = self._rows[self._lo:self._hi]
        return chain(self._head, rows) if self._head else iter(rows)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            hd, lo = self._head, self._lo
            return hd[start:stop] + list(self._rows[lo + max(0, start - len(hd)):lo + max(0, stop - len(hd))])
        h = len(self._head)
        n = h + self._hi - self._lo
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(k)
        return self._head[k] if k < h else self._rows[self._lo + k - h]


class JoinedRows(Sequence[Message]):
    """``rows_1[lo_1:hi_1] + rows_2[lo_2:hi_2] + …`` without copying the ranges: the incremental
    path's payload (the lead rows, the log range, the user row, working memory), which a call reads
    only at a handful of positions (the rows around its clean ranges) and which becomes a list only
    when a reader asks for one (:meth:`to_list`; ``Assembly.messages``). Each range's rows must not
    change while the view is read: the log and working memory only grow (a new turn, a fold or a
    restore starts a new list), and a frontier's rows are a :class:`~inspector.engine.contracts.ReplacedRows`,
    which reads its own table."""

    __slots__ = ("parts", "n")

    def __init__(self, parts: Sequence[tuple[Sequence[Message], int, int]], n: int | None = None) -> None:
        """``parts``: ``(rows, lo, hi)`` ranges in payload order, ``lo <= hi`` (an empty one is read past);
        ``n``: their rows in all, when the caller knows it (else summed here)."""
        self.parts = parts
        if n is None:
            n = 0
            for _rows, lo, hi in parts:
                n += hi - lo
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k: Any) -> Any:
        if type(k) is not int:
            if isinstance(k, slice):
                return self.to_list()[k]
            k = int(k)
        if k < 0:
            k += self.n
        if 0 <= k:
            for rows, lo, hi in self.parts:
                if k < hi - lo:
                    return rows[lo + k]
                k -= hi - lo
        raise IndexError("row index out of range")

    def __iter__(self) -> Iterator[Message]:
        return iter(self.to_list())

    def __eq__(self, other: object) -> bool:
        """Equal to a list, tuple or view holding the same rows (it stands for a list)."""
        if isinstance(other, (list, tuple, JoinedRows)):
            return len(self) == len(other) and self.to_list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by value, like the list it stands for

    def to_list(self) -> list[Message]:
        """The rows as one new list (each range one slice)."""
        out: list[Message] = []
        for rows, lo, hi in self.parts:
            out += rows[lo:hi]
        return out

    def cut(self, head: int, start: int, tail: Sequence[Message] = (), tail_lo: int = 0) -> JoinedRows:
        """``self[:head] + self[start:] + tail[tail_lo:]`` as a new view (what the trimmer keeps:
        its protected head, the rows from its cut on, then working memory's rows it kept)."""
        if start < head:
            start = head
        parts: list[tuple[Sequence[Message], int, int]] = []
        at = 0
        for rows, lo, hi in self.parts:
            size = hi - lo
            if at < head:
                parts.append((rows, lo, lo + min(size, head - at)))
            if at + size > start:
                parts.append((rows, lo + max(0, start - at), hi))
            at += size
        parts.append((tail, tail_lo, len(tail)))
        return JoinedRows(parts)
