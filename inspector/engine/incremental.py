"""Running facts about an append-only row list, so one call's assembly reads only what changed.

The payload of call k+1 is the payload of call k plus a few appended rows and a moved cut. The
committed log (the archive's projection) and working memory only ever grow between folds, so
everything the assembler needs per row is recorded **once, when the row is appended**
(:meth:`RowIndex.sync`):

* running unit sums (``pre[i]`` = units of ``rows[:i]``): any range's tokens in O(1), the
  budget cut by bisection;
* each row's tool-group start (the pre-cut never splits a group) and the trimmer's chain of
  groups from row 0 (:func:`~inspector.engine.history.leading_group_size`);
* pairing units (a non-tool row and the ``tool`` rows after it) that are *clean* — they pass the
  pairing repair and the final check unchanged (see
  :func:`~inspector.engine.pairing.sanitize_provider_messages`'s ``skip``) — and the ones that are
  not, so repair and check read only the dirty units and the two ends of a range;
* which asks declare each call id (rule 6's labels without reading the range).

A fold replaces the projection with a new list object: the index notices (identity) and rebuilds
from the new list, once, at O(its length). Rows are measured with the engine's own counter, whose
per-message cache means no message is ever tokenised twice.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from inspector.engine.history import call_ids
from inspector.engine.managers.summarising import is_summary_block
from inspector.engine.pairing import PROVIDER_ROLES
from inspector.engine.tokens import TokenCounter
from inspector.engine.types import Message

__all__ = ["RowIndex", "clean_ranges"]


class RowIndex:
    """Per-row facts of one append-only list, kept in step with it by :meth:`sync`.

    Guarantees: after ``sync(rows)`` every field describes ``rows`` exactly; appending k rows costs
    O(k) (each new row measured once); a different list object, or one that shrank or changed
    under the recorded rows, is re-indexed from scratch. ``measured`` counts rows indexed — a test
    uses it to show a replay indexes each row a bounded number of times (no return to quadratic).
    """

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.measured = 0
        self._reset(None)

    def _reset(self, rows: Sequence[Message] | None) -> None:
        self.rows = rows
        self.n = 0
        self.last: Message | None = None
        self.pre: list[int] = [0]
        self.back: list[int] = []  # start_of_tool_group of each row
        self.starts: list[int] = []  # pairing unit starts: every non-tool row, and row 0
        self.dirty: list[int] = []  # starts of completed units that are not clean (sorted)
        self.asks: dict[str, list[int]] = {}  # call id -> positions of the asks declaring it
        self.chain: list[int] = []  # trimmer group starts from row 0
        self._open = False  # the last trimmer group is an ask whose run of tool rows may still grow
        self._u_ok = False  # the open pairing unit is clean so far
        self._u_ids: list[str] | None = None  # the call ids its head asks for (None: not an ask)
        self._u_seen = 0  # results seen after its head

    def sync(self, rows: Sequence[Message]) -> RowIndex:
        n = self.n
        if rows is not self.rows or len(rows) < n or (n and rows[n - 1] is not self.last):
            self._reset(rows)
            n = 0
        for p in range(n, len(rows)):
            self._append(rows, p)
        self.n = len(rows)
        self.last = rows[-1] if rows else None
        return self

    def _append(self, rows: Sequence[Message], p: int) -> None:
        """Record row ``p``'s facts, reading that row only: its role, ask-ness and call ids are
        derived here once and kept with its open pairing unit, so closing the unit re-reads nothing."""
        m = rows[p]
        self.measured += 1
        self.pre.append(self.pre[-1] + self.counter.unit(m))
        role = m.get("role") if isinstance(m, dict) else None
        is_tool = role == "tool"
        self.back.append(self.back[p - 1] if is_tool and p > 0 else p)
        ask = role == "assistant" and bool(m.get("tool_calls"))  # is_ask, for a dict
        ids = call_ids(m) if ask else None
        if not is_tool or p == 0:
            if self.starts and not self._unit_ok():
                self.dirty.append(self.starts[-1])
            self.starts.append(p)
            self._open_unit(m, role, ask, ids)
        elif self._u_ok:  # one more result of the open unit: it must answer the next call id
            want = self._u_ids
            k = self._u_seen
            self._u_ok = want is not None and k < len(want) and m.get("tool_call_id") == want[k]
            self._u_seen = k + 1
        if ids:
            for cid in ids:
                self.asks.setdefault(cid, []).append(p)
        if self._open and is_tool:  # leading_group_size: an ask takes the whole run of tool rows after it
            return
        self.chain.append(p)
        self._open = ask

    def _open_unit(self, m: Message, role: object, ask: bool, ids: list[str] | None) -> None:
        """Start a pairing unit at ``m``: whether its head can be clean, and the results it wants."""
        self._u_seen = 0
        self._u_ids = None
        if role not in PROVIDER_ROLES or role == "tool" or is_summary_block(m):
            self._u_ok = False
        elif ask:
            self._u_ids = ids
            self._u_ok = isinstance(m.get("tool_calls"), (list, tuple)) and bool(ids) and \
                len(set(ids)) == len(ids)  # type: ignore[arg-type]
        else:
            self._u_ok = True

    def _unit_ok(self) -> bool:
        """Whether the open unit, closed here (a non-tool row follows it), is *clean*: it passes the
        pairing repair and the final check unchanged wherever it stands (the contract of ``skip`` in
        the pairing pass). That is a dict head with a provider role, not ``tool``, not a summary
        block, and either alone, or an ask whose ``tool_calls`` is a list of distinct string ids
        followed by exactly one result per id, in declaration order."""
        want = self._u_ids
        return self._u_ok and (self._u_seen == 0 if want is None else self._u_seen == len(want))

    # -- reading ------------------------------------------------------------------------------
    def units(self, lo: int, hi: int) -> int:
        """Units of ``rows[lo:hi]``."""
        return self.pre[hi] - self.pre[lo]

    def unit(self, i: int) -> int:
        return self.pre[i + 1] - self.pre[i]

    def declares(self, cid: str, lo: int, hi: int) -> bool:
        """Whether an ask in ``rows[lo:hi]`` declares ``cid``."""
        at = self.asks.get(cid)
        if not at:
            return False
        k = bisect_left(at, lo)
        return k < len(at) and at[k] < hi

    def chain_from(self, lo: int) -> list[int]:
        """The trimmer's group starts within ``rows[lo:]`` when ``lo`` is one of them, else []."""
        k = bisect_left(self.chain, lo)
        if k < len(self.chain) and self.chain[k] == lo:
            return self.chain[k:]
        return []

    def fits_back(self, budget_units: int, n_other: int, units_other: int, lo: int) -> int:
        """Largest ``i`` in ``[lo, n)`` whose suffix ``rows[i:]`` with the other rows is over
        ``budget_units`` in the counter's total, or ``lo - 1`` when every suffix fits (bisection:
        the total only grows as ``i`` falls)."""
        total = self.counter.total
        end = self.n
        a, b = lo, end  # answer in [lo - 1, end - 1]
        # find the smallest i in [lo, end] with total(rows[i:]) <= budget; the answer is i - 1
        while a < b:
            mid = (a + b) // 2
            if total(units_other + self.pre[end] - self.pre[mid], n_other + end - mid) <= budget_units:
                b = mid
            else:
                a = mid + 1
        return a - 1


def clean_ranges(index: RowIndex, lo: int, hi: int) -> list[tuple[int, int]]:
    """Ranges of ``rows[lo:hi]`` made of whole clean units, each followed by a non-tool row inside
    the range: everything but the first unit (which may begin mid-group), the last unit (whatever
    follows the range comes next) and the dirty units in between."""
    if hi - lo < 3:
        return []
    starts = index.starts
    k = bisect_right(starts, lo)  # first unit start after lo
    last = index.back[hi - 1] if index.back[hi - 1] >= lo else lo
    if k >= len(starts) or starts[k] >= last:
        return []
    a = starts[k]
    out: list[tuple[int, int]] = []
    d = bisect_left(index.dirty, a)
    dirty = index.dirty
    while d < len(dirty) and dirty[d] < last:
        s = dirty[d]
        if s > a:
            out.append((a, s))
        nxt = bisect_right(starts, s)
        a = starts[nxt] if nxt < len(starts) else last
        d += 1
    if last > a:
        out.append((a, last))
    return out
