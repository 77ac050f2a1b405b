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
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import add, is_

from inspector.engine.history import call_ids
from inspector.engine.summary_block import is_summary_block
from inspector.engine.pairing import PROVIDER_ROLES
from inspector.engine.tokens import TokenCounter
from inspector.engine.types import Message

__all__ = ["RowIndex", "clean_ranges", "marks_of", "singled_any", "singled_out"]


class RowIndex:
    """Per-row facts of one append-only list, kept in step with it by :meth:`sync`.

    Guarantees: after ``sync(rows)`` every field describes ``rows`` exactly; appending k rows costs
    O(k) (each new row measured once); a different list object, or one that shrank or changed
    under the recorded rows, is re-indexed from scratch. ``measured`` counts rows indexed — a test
    uses it to show a replay indexes each row a bounded number of times (no return to quadratic).
    """

    CARRY_MIN = 12
    """The fewest rows of a ``carry`` index taken over (:meth:`sync`); a shorter turn's rows are
    derived again, with the same facts. At least 2 (:meth:`_carry` derives carry's first row and
    takes over from its second)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.additive: bool = bool(getattr(counter, "additive", False))
        """Whether the counter's ``total(units, n)`` is ``units`` (its per-row overhead is inside
        each unit): running unit sums are then token counts and compare with a budget directly."""
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
        self.blocks: list[int] = []  # summary blocks
        self.others: list[int] = []  # rows that are neither assistant nor tool rows (user, system, odd)
        self._open = False  # the last trimmer group is an ask whose run of matching results may still grow
        self._u_ok = False  # the open pairing unit is clean so far
        self._u_ids: list[str] | None = None  # the call ids its head asks for (None: not an ask)
        self._u_seen = 0  # results seen after its head

    def sync(self, rows: Sequence[Message], carry: RowIndex | None = None) -> RowIndex:
        """Bring the facts in step with ``rows``. ``carry``: an index whose rows may have been
        appended here since the last sync, as one contiguous run starting at the first or second
        new row (working memory committed to the log: ``[user row?] + working memory + [reply?]``);
        their facts are then taken over from it instead of derived a second time (:meth:`_carry`)
        when it has at least :attr:`CARRY_MIN` rows."""
        n = self.n
        end = len(rows)
        if rows is not self.rows or end < n or (n and rows[n - 1] is not self.last):
            self._reset(rows)
            n = 0
        if carry is not None and end - n > 1 and carry.n >= self.CARRY_MIN and carry.counter is self.counter:
            n = self._carry(rows, n, end, carry)
        if end > n:
            self._extend(rows, n, end)
        return self

    def _carry(self, rows: Sequence[Message], n: int, end: int, carry: RowIndex) -> int:
        """Take over ``carry``'s facts for its rows when they stand, all of them and in order, at
        ``rows[s:s + carry.n]`` for ``s`` = ``n`` or ``n + 1``; return how far ``rows`` is indexed.

        Why it is exact: row ``s`` (carry's row 0) is derived here as usual; when it opens a pairing
        unit here too (it is not a ``tool`` row continuing an earlier unit), both indexes stand in
        the same state after it — a fresh unit and trimmer group from the same row — and every fact
        of the rows after it depends only on that state and those rows, so carry's facts shifted
        by ``s`` are the ones :meth:`_extend` would derive. Checked by identity, row by row."""
        c_rows, k = carry.rows, carry.n
        assert c_rows is not None
        first = c_rows[0]
        s = n if rows[n] is first else n + 1
        if s + k > end or rows[s] is not first or \
                not all(map(is_, rows[s + 1:s + k], c_rows[1:k])):
            return n
        self._extend(rows, n, s + 1)
        if self.starts[-1] != s:  # row s continues an earlier unit here (a HITL answer): derive the rest
            return s + 1
        d = self.pre[-1] - carry.pre[1]
        self.pre.extend(map(add, carry.pre[2:k + 1], repeat(d)))
        self.back.extend(map(add, carry.back[1:k], repeat(s)))
        self.starts.extend(map(add, carry.starts[1:], repeat(s)))
        self.dirty.extend(map(add, carry.dirty, repeat(s)))  # carry judged row s's unit too
        self.chain.extend(map(add, carry.chain[1:], repeat(s)))
        self.blocks.extend(p + s for p in carry.blocks if p)  # row s's own were recorded by _extend
        self.others.extend(p + s for p in carry.others if p)
        asks = self.asks
        for cid, at in carry.asks.items():
            for p in at:
                if p:  # row s's own ids were recorded by _extend
                    mine = asks.get(cid)
                    if mine is None:
                        asks[cid] = [p + s]
                    else:
                        mine.append(p + s)
        self._open, self._u_ok, self._u_ids, self._u_seen = carry._open, carry._u_ok, carry._u_ids, carry._u_seen
        self.n = s + k
        self.last = rows[s + k - 1]
        return s + k

    def _extend(self, rows: Sequence[Message], lo: int, hi: int) -> None:
        """Record the facts of ``rows[lo:hi]``, reading each of those rows once (and no other row):
        its role, ask-ness and call ids are derived here and kept with its open pairing unit, so
        closing the unit re-reads nothing. One loop over locals: this runs for every row that
        enters working memory or the committed log, so its per-row cost is a replay's."""
        unit = self.counter.unit
        pre, back, starts, dirty, asks, chain = self.pre, self.back, self.starts, self.dirty, self.asks, self.chain
        others = self.others
        total = pre[-1]
        grp_open, u_ok, u_ids, u_seen = self._open, self._u_ok, self._u_ids, self._u_seen
        u_n = len(u_ids) if u_ids is not None else 0  # results the open unit's head asks for
        for p in range(lo, hi):
            m = rows[p]
            total += unit(m)
            pre.append(total)
            role = m.get("role") if isinstance(m, dict) else None
            if role == "tool" and p > 0:
                back.append(back[p - 1])
                if u_ok or grp_open:
                    tid = m.get("tool_call_id")
                    if u_ok:  # one more result of the open unit: it must answer the next call id
                        u_ok = u_seen < u_n and tid == u_ids[u_seen]  # type: ignore[index]
                        u_seen += 1
                    if grp_open and tid in u_ids:  # type: ignore[operator]
                        continue  # leading_group_size: an ask takes its contiguous *matching* results (Q24)
                chain.append(p)
                grp_open = False
                continue
            # a unit head: every non-tool row, and row 0 whatever it is
            back.append(p)
            if role != "assistant" and role != "tool":
                others.append(p)
            calls = m.get("tool_calls") if role == "assistant" else None
            ask = bool(calls)  # is_ask, for a dict
            # it closes the open unit, which is *clean* — passes the pairing repair and the final check
            # unchanged wherever it stands (the contract of ``skip`` in the pairing pass) — when its head
            # is a dict with a provider role, not ``tool``, not a summary block, and it is either alone or
            # an ask whose ``tool_calls`` is a list of distinct string ids followed by exactly one result
            # per id, in declaration order
            if starts and not (u_ok and u_seen == u_n):  # (u_n is 0 for a head that is not an ask)
                dirty.append(starts[-1])
            starts.append(p)
            u_seen = u_n = 0
            u_ids = None
            if role not in PROVIDER_ROLES or role == "tool":
                u_ok = False
            elif role == "system" and is_summary_block(m):
                u_ok = False
                self.blocks.append(p)
            elif ask:
                u_ids, u_ok = _ask_facts(asks, p, m, calls)
                u_n = len(u_ids)
            else:
                u_ok = True
            chain.append(p)
            grp_open = ask
        self._open, self._u_ok, self._u_ids, self._u_seen = grp_open, u_ok, u_ids, u_seen
        self.measured += hi - lo
        self.n = hi
        self.last = rows[hi - 1]

    # -- reading ------------------------------------------------------------------------------
    def last_unit_clean(self) -> bool:
        """Whether the last pairing unit (still open: rows may follow) is, as it stands, complete and
        clean — what it would be judged when closed now: a provider-role head that is not a tool row
        or a summary block, alone or an ask answered once per distinct id in declaration order."""
        return self.n > 0 and self._u_ok and self._u_seen == (len(self._u_ids) if self._u_ids is not None else 0)

    def units(self, lo: int, hi: int) -> int:
        """Units of ``rows[lo:hi]``."""
        return self.pre[hi] - self.pre[lo]

    def reach(self, x: int) -> int:
        """The smallest ``r`` in ``[0, n]`` with ``units(0, r) >= x``, ``n + 1`` when none (the sums never fall)."""
        pre = self.pre
        return bisect_left(pre, pre[0] + x, 0, self.n + 1)

    def unit(self, i: int) -> int:
        """Units of ``rows[i]``."""
        return self.pre[i + 1] - self.pre[i]

    def declares(self, cid: str, lo: int, hi: int) -> bool:
        """Whether an ask in ``rows[lo:hi]`` declares ``cid``."""
        at = self.asks.get(cid)
        if not at:
            return False
        k = bisect_left(at, lo)
        return k < len(at) and at[k] < hi

    def has_block(self, lo: int, hi: int) -> bool:
        """Whether a summary block stands in ``rows[lo:hi]``."""
        blocks = self.blocks
        if not blocks:  # the usual answer (no fold has put a block in this list), without a bisection
            return False
        k = bisect_left(blocks, lo)
        return k < len(blocks) and blocks[k] < hi

    def blocks_in(self, lo: int, hi: int) -> list[int]:
        """Positions in ``[lo, hi)`` of the summary blocks, ascending."""
        blocks = self.blocks
        if not blocks:  # the usual answer (no fold has put a block in this list), without a bisection
            return []
        return blocks[bisect_left(blocks, lo):bisect_left(blocks, hi)]

    def others_in(self, lo: int, hi: int) -> list[int]:
        """Positions in ``[lo, hi)`` of the rows that are neither assistant nor tool rows."""
        others = self.others
        if not others:  # working memory of a plain tool loop: assistant and tool rows only
            return []
        return others[bisect_left(others, lo):bisect_left(others, hi)]

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
        pre = self.pre
        if self.additive:  # total(u, n) == u: a bisection over the sums themselves
            # the smallest i in [lo, end) with units_other + pre[end] - pre[i] <= budget; pre never falls
            return bisect_left(pre, pre[end] + units_other - budget_units, lo, end) - 1
        a, b = lo, end  # answer in [lo - 1, end - 1]
        # find the smallest i in [lo, end] with total(rows[i:]) <= budget; the answer is i - 1
        while a < b:
            mid = (a + b) // 2
            if total(units_other + pre[end] - pre[mid], n_other + end - mid) <= budget_units:
                b = mid
            else:
                a = mid + 1
        return a - 1


def _ask_facts(asks: dict[str, list[int]], p: int, m: Message, calls: object) -> tuple[list[str], bool]:
    """The call ids the ask ``m`` at ``p`` declares (recorded in ``asks``: id -> positions of the asks
    declaring it) and whether its unit can be clean: its ``tool_calls`` is a list of distinct string
    ids (a call without one is for the full pass and check to read)."""
    ids = call_ids(m)
    n = len(ids)
    for cid in ids:
        at = asks.get(cid)
        if at is None:
            asks[cid] = [p]
        else:
            at.append(p)
    return ids, isinstance(calls, (list, tuple)) and n > 0 and len(set(ids)) == n and n == len(calls)


def clean_ranges(index: RowIndex, lo: int, hi: int, to_end: bool = False) -> list[tuple[int, int]]:
    """Ranges of ``rows[lo:hi]`` made of whole clean units, each followed by a non-tool row inside
    the range: every unit of the range but the dirty ones, the first when it begins before ``lo``
    (mid-group) and the last (whatever follows the range comes next). With ``to_end`` nothing that
    could continue the range's last unit follows it in the payload — nothing at all (the pinned tail
    of working memory) or a row that is not a ``tool`` row (the user turn after the committed log):
    its last unit is then one of them too when it is the index's last unit (``hi`` is the end of the
    index), begins inside the range, and is complete and clean so far
    (:meth:`RowIndex.last_unit_clean`), since what follows closes it as it stands."""
    if hi <= lo:
        return []
    starts = index.starts
    n_starts = len(starts)
    g = index.back[hi - 1]  # where the last unit of the range begins
    last = g if g >= lo else lo
    end = hi if to_end and g >= lo and hi == index.n and index.last_unit_clean() else last
    k = bisect_left(starts, lo)  # first unit start at or after lo
    if k >= n_starts or starts[k] >= end:
        return []
    a = starts[k]
    dirty = index.dirty
    if not dirty:  # every completed unit of the index is clean (the usual log): one range
        return [(a, end)]
    out: list[tuple[int, int]] = []
    n_dirty = len(dirty)
    d = bisect_left(dirty, a)
    while d < n_dirty and dirty[d] < end:
        s = dirty[d]
        if s > a:
            out.append((a, s))
        nxt = bisect_right(starts, s)
        a = starts[nxt] if nxt < n_starts else end
        d += 1
    if end > a:
        out.append((a, end))
    return out


def marks_of(pos: Mapping[int, int], system: Message | None, user: Message | None) -> tuple[tuple[int, ...], bool]:
    """What :func:`singled_out` needs of the system band's row and the user row (``user`` None when
    there is none): their positions in the committed log (``pos``: its positions by identity), and
    whether either has an assistant or tool role."""
    marks: list[int] = []
    odd = False
    for obj in (system, user):
        if obj is not None:
            p = pos.get(id(obj))
            if p is not None:
                marks.append(p)
            if obj.get("role") in ("assistant", "tool"):
                odd = True
    return tuple(marks), odd


def singled_any(log: RowIndex, log_marks: tuple[int, ...], odd_role: bool, system: Message | None,
                 user: Message | None, idx: RowIndex, lo: int, hi: int) -> bool:
    """:func:`singled_out` for a range of the committed log (``idx is log``) or of working memory."""
    if idx is log:
        return singled_out(idx, lo, hi, log_marks, False)
    return singled_out(idx, lo, hi, None, odd_role, system, user)


def singled_out(idx: RowIndex, lo: int, hi: int, log_marks: tuple[int, ...] | None, odd_role: bool,
                 system: Message | None = None, user: Message | None = None) -> bool:
    """Whether a row of ``idx.rows[lo:hi]`` is one the band rule gives a band other than its range's:
    the system band's row, the current user row (``user``, None when there is none) or, in the
    committed log, a summary block. ``log_marks`` and ``odd_role`` come from :func:`marks_of`: for
    the committed log ``log_marks`` are the positions of the first two in it; for working memory it
    is None and ``system``/``user`` are looked for among its rows that are neither assistant nor tool
    rows (when either of the two has such a role, ``odd_role``, it cannot tell: True). O(log rows)."""
    if hi <= lo:
        return False
    if log_marks is not None:
        for p in log_marks:
            if lo <= p < hi:
                return True
        return idx.has_block(lo, hi)
    if odd_role:
        return True
    odd = idx.others_in(lo, hi)
    if not odd:
        return False
    rows = idx.rows
    assert rows is not None
    return any((system is not None and rows[p] is system) or (user is not None and rows[p] is user) for p in odd)
