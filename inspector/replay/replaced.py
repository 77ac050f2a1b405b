"""A frame's replaced rows kept as a frontier: what the replay records for a manager's
:class:`~inspector.engine.contracts.ReplacedBefore` record (docs/design.md §3.14).

observation-masking and clear-tool-results replace the log's older tool results oldest first and
never change a row's replacement, so every call's replaced rows are the first ``upto`` entries of
one table its manager keeps. The replay maps that table to transcript indices once per entry
(:class:`FrontierTable`) and each frame keeps only its ``upto``: :class:`ReplacedRefs` (the
frame's ``replaced``) and :class:`FrontierSegments` (its payload runs: the transcript runs as if
nothing were replaced, each replaced row split out when they are read) are views over it. A frame
costs O(its runs), not O(rows replaced so far); reading one costs what it always did.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain, islice
from operator import attrgetter, is_, lt
from typing import Any, ClassVar, cast, overload

from inspector.engine.cache import common_prefix
from inspector.engine.contracts import Replacement
from inspector.engine.types import Message
from inspector.replay.records import Segment

_INDEX, _ROW, _REASON = attrgetter("index"), attrgetter("row"), attrgetter("reason")

__all__ = ["FrontierSegments", "FrontierTable", "ReplacedRefs", "frontier_frame", "kept_prefix", "reason_lookup",
           "stored_entries"]


class FrontierTable:
    """The replay's copy of one manager's replacement table (``ReplacedBefore.table``), entry ``k``
    mapped to the transcript once: ``refs[k]`` the index of the message it replaces, ``reasons[k]``
    its reason code, ``rows[k]`` the row sent instead, ``msgs[refs[k]]`` the row it replaces (``msgs``: the
    transcript); :meth:`row_ids` the position of each row sent by its id. ``ok`` is False once an entry is not a transcript message
    standing after the previous one (then the frame lists its rows one by one, as for any other record).

    ``in_working``: the table is one of working memory's (a one-turn agent's, whose record replaces no
    log row), its indices positions in working memory, and made again for each turn's table."""

    __slots__ = ("table", "refs", "reasons", "rows", "msgs", "ids", "indexed", "ok", "in_working", "apart")

    BATCH: ClassVar[int] = 32
    """From this many new entries on, :meth:`sync` maps them in one pass (:meth:`_bulk`); fewer one by one."""

    def __init__(self, table: list[Replacement] | None = None, *, in_working: bool = False,
                 msgs: Sequence[Message] = ()) -> None:
        self.table, self.in_working, self.msgs = table, in_working, msgs
        self.apart = (table, None)
        """The frame's ``apart`` pair for this table (either side's: ``_segments`` reads both slots alike; the
        table first, so a span over its rows is told by one comparison), made once."""
        self.refs: list[int] = []
        self.reasons: list[str] = []
        self.rows: list[Message] = []
        self.ids: dict[int, int] = {}
        self.indexed = 0
        """How many of :attr:`rows` ``ids`` holds: it is brought up to date when asked (:meth:`row_ids`), and
        a replay whose payload reads every replaced row by its log position never asks."""
        self.ok = True

    def row_ids(self) -> dict[int, int]:
        """The position of each row sent (:attr:`rows`) by its id (a row listed twice: its last position),
        brought up to date with the rows mapped since it was last asked."""
        ids, k0, rows = self.ids, self.indexed, self.rows
        if k0 < len(rows):
            ids.update(zip(map(id, rows[k0:]), range(k0, len(rows))))
            self.indexed = len(rows)
        return ids

    def sync(self, past: Sequence[Message], ref: Mapping[int, int], msgs: Sequence[Message],
             working: Sequence[Message] = ()) -> bool:
        """Map the table's entries added since the last call (``past``: the log their indices are
        positions of, not read for a table :attr:`in_working`; ``working``: working memory, for such a
        table); ``ref`` and ``msgs``: the replay's transcript index of each message by its id, and the
        transcript (a message is found in them as ``_Refs.get`` finds it, read in place: no call per
        entry); returns :attr:`ok`."""
        table = self.table
        assert table is not None
        self.msgs = msgs
        rows = working if self.in_working else past
        refs = self.refs
        k0 = len(refs)
        if len(table) - k0 >= self.BATCH and self.ok and self._bulk(table, rows, ref, msgs):
            return True
        n_rows = len(rows)
        last = refs[-1] if k0 else -1
        for r in table[k0:]:  # (usually one entry: the one a clearing call adds)
            i = r.index
            m = rows[i] if i < n_rows else None
            t = ref.get(id(m)) if m is not None else None
            if t is None or msgs[t] is not m or t <= last:
                self.ok = False
                return False
            refs.append(t)
            self.reasons.append(r.reason)
            self.rows.append(r.row)
            last = t
        return self.ok

    def _bulk(self, table: list[Replacement], rows: Sequence[Message], ref: Mapping[int, int],
              msgs: Sequence[Message]) -> bool:
        """:meth:`sync`'s mapping of the entries added since the last call in one pass of C loops (a
        first frontier over a long log: thousands at once), when every one of them maps (else False,
        nothing changed, and :meth:`sync` maps them one by one, stopping where it stopped)."""
        k0 = len(self.refs)
        ent = table[k0:]
        at = list(map(_INDEX, ent))
        if max(at) >= len(rows):
            return False
        ms = list(map(rows.__getitem__, at))  # (a C loop: thousands of entries on a first frontier)
        found = list(map(ref.get, map(id, ms)))
        if None in found:
            return False
        ts = cast("list[int]", found)
        if not all(map(is_, map(msgs.__getitem__, ts), ms)):
            return False
        last = self.refs[-1] if self.refs else -1
        if ts[0] <= last or not all(map(lt, ts, ts[1:])):
            return False
        new = list(map(_ROW, ent))
        self.refs += ts
        self.reasons += map(_REASON, ent)
        self.rows += new
        return True


class ReplacedRefs(Sequence[tuple[int, str]]):
    """A frame's ``replaced``: ``(transcript index, reason)`` of the table's first ``upto`` entries,
    then ``extra`` (working memory's, which stand after every log row), in transcript order."""

    __slots__ = ("fr", "upto", "extra")

    def __init__(self, fr: FrontierTable, upto: int, extra: tuple[tuple[int, str], ...] = ()) -> None:
        self.fr, self.upto, self.extra = fr, upto, extra

    def __len__(self) -> int:
        return self.upto + len(self.extra)

    @overload
    def __getitem__(self, i: int) -> tuple[int, str]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[int, str]]: ...
    def __getitem__(self, i: int | slice) -> tuple[int, str] | Sequence[tuple[int, str]]:
        if type(i) is slice:
            lo = i.start
            if i.stop is None and i.step is None and type(lo) is int and lo >= 0:  # ``[kept:]``: what a frame's JSON reads
                c, fr = self.upto, self.fr
                if lo >= c:
                    return list(self.extra[lo - c:])
                out = list(zip(fr.refs[lo:c], fr.reasons[lo:c]))
                out += self.extra
                return out
            lo, hi, step = i.indices(len(self))
            if step != 1:
                return list(self)[i]
            c, fr = self.upto, self.fr
            # the table's part straight from its two lists: O(slice), never a walk from entry 0
            out = list(zip(fr.refs[lo:min(hi, c)], fr.reasons[lo:min(hi, c)])) if lo < c else []
            if hi > c:
                out.extend(self.extra[max(lo - c, 0):hi - c])
            return out
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("replaced row index out of range")
        if i < self.upto:
            return self.fr.refs[i], self.fr.reasons[i]
        return self.extra[i - self.upto]

    def __iter__(self) -> Iterator[tuple[int, str]]:
        fr, c = self.fr, self.upto
        return chain(zip(islice(fr.refs, c), islice(fr.reasons, c)), self.extra)

    def reason(self, i: int) -> str | None:
        """The reason transcript message ``i`` was replaced (None: it was not), by bisection."""
        refs = self.fr.refs
        k = bisect_left(refs, i, 0, self.upto)
        if k < self.upto and refs[k] == i:
            return self.fr.reasons[k]
        return next((why for j, why in self.extra if j == i), None)

    def __contains__(self, item: object) -> bool:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], int)):
            return False
        return self.reason(item[0]) == item[1]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ReplacedRefs) and other.fr is self.fr:
            return other.upto == self.upto and other.extra == self.extra
        return isinstance(other, Sequence) and len(other) == len(self) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"ReplacedRefs({self.upto} of the table, {len(self.extra)} more)"


_NEW = object.__new__


def frontier_frame(runs: Sequence[Segment], fr: FrontierTable, upto: int, last: object,
                   extra: tuple[tuple[int, str], ...] = ()) -> tuple[FrontierSegments, ReplacedRefs]:
    """A frontier frame's ``segments`` (its payload ``runs``, kept as a tuple) and ``replaced`` over the
    table's first ``upto`` entries, then ``extra``: ``last`` (the previous frame's ``replaced``) again when
    it is that same view (immutable: the frontier stood), else a new one. Each is made by its slots,
    without an ``__init__`` call (the recorder makes them once a call)."""
    segs = _NEW(FrontierSegments)
    segs.runs, segs.fr, segs.upto = tuple(runs), fr, upto
    if type(last) is ReplacedRefs and last.fr is fr and last.upto == upto and last.extra == extra:
        return segs, last
    replaced = _NEW(ReplacedRefs)
    replaced.fr, replaced.upto, replaced.extra = fr, upto, extra
    return segs, replaced


def kept_prefix(prev: Sequence[tuple[int, str]], cur: Sequence[tuple[int, str]]) -> int:
    """How many of ``cur``'s first entries are ``prev``'s first ones (what a frame's JSON says it keeps
    of the frame before it): O(1) for two views of one table, else compared entry by entry."""
    if type(prev) is ReplacedRefs and type(cur) is ReplacedRefs and prev.fr is cur.fr:
        a, b = prev.upto, cur.upto
        if a != b:
            return a if a < b else b
        return a + common_prefix(prev.extra, cur.extra)
    return common_prefix(prev, cur)


def _between_replaced(refs: Sequence[int], c: int, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """The ``[a, b)`` pieces of transcript range ``[lo, hi)`` around the replaced rows among the
    table's first ``c`` (``refs``, sorted), found by bisection."""
    at = lo
    for j in range(bisect_left(refs, lo, 0, c), bisect_left(refs, hi, 0, c)):
        p = refs[j]
        if p > at:
            yield at, p
        at = p + 1
    if hi > at:
        yield at, hi


class FrontierSegments(Sequence[Segment]):
    """A frame's ``segments`` when its record was a frontier: ``runs`` are the payload's runs with the
    replaced rows counted in their transcript runs, and reading it splits each of the table's first
    ``upto`` rows out as its own segment ``(ref, 1, band, reason, row sent)``, as every frame lists
    a replaced row. Kept O(runs); read in O(runs + replaced rows in the payload)."""

    __slots__ = ("runs", "fr", "upto")

    def __init__(self, runs: Sequence[Segment], fr: FrontierTable, upto: int) -> None:
        self.runs, self.fr, self.upto = runs, fr, upto

    _last: ClassVar[tuple[object, list[Segment]]] = (None, [])
    """The segments the last frontier frame read expanded to (one frame's): an analysis reads a frame's
    segments several times in a row (the forgetting detector three), so only the first expands."""

    def __iter__(self) -> Iterator[Segment]:
        last = FrontierSegments._last
        if last[0] is self:
            return iter(last[1])
        out = list(self._expand())
        FrontierSegments._last = (self, out)
        return iter(out)

    def _expand(self) -> Iterator[Segment]:
        refs, reasons, rows, c = self.fr.refs, self.fr.reasons, self.fr.rows, self.upto
        for seg in self.runs:
            ref, n, band, syn, own = seg
            if own is not None or ref is None or syn is not None:
                yield seg
                continue
            hi = ref + n
            k, end = bisect_left(refs, ref, 0, c), bisect_left(refs, hi, 0, c)
            if k == end:
                yield seg
                continue
            at = ref
            for j in range(k, end):
                p = refs[j]
                if p > at:
                    yield at, p - at, band, None, None
                yield p, 1, band, reasons[j], rows[j]
                at = p + 1
            if hi > at:
                yield at, hi - at, band, None, None

    def plain(self) -> list[tuple[int, int]]:
        """The ``[lo, hi)`` transcript ranges of the payload's rows sent as they are (the segments' own-less
        runs as reading splits them), in segment order. O(runs + replaced rows in them), without a
        segment made per replaced row."""
        refs, c = self.fr.refs, self.upto
        out: list[tuple[int, int]] = []
        add = out.append
        for ref, n, _band, syn, own in self.runs:
            if ref is None or own is not None:
                continue
            hi = ref + n
            if syn is not None:
                add((ref, hi))
                continue
            out.extend(_between_replaced(refs, c, ref, hi))
        return out

    def shown(self, why: Callable[[int], str | None]) -> list[tuple[int, int]]:
        """The ``[lo, hi)`` transcript ranges the payload shows as recorded: its plain runs without the
        table's replaced rows, and each of its own rows that carries a transcript index and is not a
        replacement (``why``: the frame's :func:`reason_lookup`). O(runs + replaced rows in them),
        without a segment made per replaced row."""
        refs, c = self.fr.refs, self.upto
        out: list[tuple[int, int]] = []
        add = out.append
        for ref, n, _band, syn, own in self.runs:
            if ref is None:
                continue
            if own is not None:
                if syn is None or why(ref) != syn:
                    add((ref, ref + 1))
                continue
            hi = ref + n
            out.extend(_between_replaced(refs, c, ref, hi))
        return out

    def __len__(self) -> int:
        return sum(1 for _ in self)

    @overload
    def __getitem__(self, i: int) -> Segment: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Segment]: ...
    def __getitem__(self, i: int | slice) -> Segment | Sequence[Segment]:
        return list(iter(self))[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(iter(self)) == list(iter(other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"FrontierSegments({len(self.runs)} runs, {self.upto} replaced rows below the frontier)"


def stored_entries(segments: Sequence[Any]) -> int:
    """How many segment entries a frame stores (a frontier frame's runs, not their reading)."""
    return len(segments.runs) if type(segments) is FrontierSegments else len(segments)


def reason_lookup(replaced: Sequence[tuple[int, str]]) -> Callable[[int], str | None]:
    """``why(i)``: the reason transcript message ``i`` was replaced in a frame (None: it was not), for a
    frame's ``replaced`` of either kind: a frontier view is bisected, never copied (O(log) a question)."""
    if type(replaced) is ReplacedRefs:
        return replaced.reason
    return dict(replaced).get
