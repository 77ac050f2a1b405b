"""The incremental path's pre-cut in log positions: history that can never fit, cut before the
trimmer runs, as :func:`~inspector.engine.assembly.reference.precut` cuts it over the history
``front rows + log[a0:]`` (the kept head and a block, then the append-only log read from its
:class:`~inspector.engine.assembly.row_index.RowIndex`: running sums and the recorded group chain).
"""

from __future__ import annotations

from bisect import bisect_right

from inspector.engine.assembly.call import Call, takes_group
from inspector.engine.assembly.reference import inserted_block
from inspector.engine.assembly.row_index import RowIndex
from inspector.engine.history import group_start, leading_group_size
from inspector.engine.tokens import TokenCounter
from inspector.engine.types import Message

__all__ = ["chain_start", "cut_guards", "front_cut", "precut_at"]


def precut_at(log: RowIndex, a0: int, budget_tokens: int, n_other: int, u_other: int) -> int | None:
    """The pre-cut in log positions (what :func:`~inspector.engine.assembly.reference.precut` gives
    over the history ``past[a0:]``): the trimmer group start of the newest row whose suffix
    overflows, then through that group (its end is the next group start, from the recorded chain)
    when :func:`~inspector.engine.assembly.call.takes_group` says so; None when every suffix fits.

    The log's chain is the history's from the first non-tool row at or after ``a0``; a row before it
    is a tool row, a group of one in the history. Group starts only grow along the log, so that start
    is never past the last group's (the clamp the reference applies)."""
    n_log = log.n
    p = log.fits_back(budget_tokens, n_other, u_other, a0)
    if p < a0:
        return None
    g = chain_start(log, p, a0)
    last = chain_start(log, n_log - 1, a0)  # the last group's start (>= g)
    if g < last and takes_group(log.rows[g]):  # type: ignore[index]
        chain = log.chain
        k = bisect_right(chain, g)
        e = chain[k] if k < len(chain) else n_log
        return e if e < last else last
    return g


def front_cut(counter: TokenCounter, log: RowIndex, a0: int, front: list[Message], u_front: list[int],
               limit: int, n_other: int, u_other: int) -> int:
    """The pre-cut (:func:`~inspector.engine.assembly.reference.precut`, in history positions: the
    ``front`` rows, then the log from ``a0``) when every suffix of the log range fits with the other
    rows (``n_other`` rows of ``u_other`` units, the log range's included): walking back over the
    front rows, the group start of the newest one whose suffix overflows, through that group when
    :func:`~inspector.engine.assembly.call.takes_group` says so, never past the last group; 0 when
    everything fits. O(front rows)."""
    total = counter.total
    n_f = len(front)
    units, n = u_other, n_other
    for j in range(n_f - 1, -1, -1):
        units += u_front[j]
        n += 1
        if total(units, n) > limit:
            cut = group_start(front, j)
            last = n_f + chain_start(log, log.n - 1, a0) - a0 if log.n > a0 else group_start(front, n_f - 1)
            if cut < last and takes_group(front[cut]):
                cut += leading_group_size(front, cut)
            return cut if cut < last else last
    return 0


def cut_guards(c: Call, log: RowIndex, a0: int, front: list[Message], cut: int, protected: bool) -> int:
    """The reference's two guards on a pre-cut with no system band, in history positions: a block
    the record inserts after other rows, left first by the cut, is cut only to the group before it
    (:func:`~inspector.engine.assembly.reference.inserted_block`); a cut that would stand a
    system-role row first, with no protected head row, is undone (the trimmer keeps such a row)."""
    n_f = len(front)
    rows: list[Message] = log.rows  # type: ignore[assignment]

    def at(i: int) -> Message:
        return front[i] if i < n_f else rows[a0 + i - n_f]

    if inserted_block(c, at(cut)):
        cut = group_start(front, cut - 1) if cut - 1 < n_f else n_f + chain_start(log, a0 + cut - 1 - n_f, a0) - a0
    if cut and not protected and at(cut).get("role") == "system":
        cut = 0
    return cut


def chain_start(log: RowIndex, p: int, a0: int) -> int:
    """The trimmer group start holding log row ``p`` in a history that begins at log row ``a0``:
    the recorded chain's when ``p``'s run of tool rows begins at or after ``a0``, else ``p`` itself
    (a result before the history's first non-tool row is a group of one there)."""
    if log.back[p] < a0:
        return p
    chain = log.chain
    return chain[bisect_right(chain, p) - 1]
