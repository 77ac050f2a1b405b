"""The rows an incremental call lays one by one around its two ranges (the log range and working
memory): the front before the log range (the system band's row, a kept head, a block) and the user
row or placeholder after it. Every call of a turn sends the same ones, and a condenser's front stays
the same from turn to turn while its block stands, so :func:`lay_around` hands the last call's
answer back while they do (compared by identity) instead of laying them again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from inspector.engine.assembly.call import HELLO, BandRule, Call
from inspector.engine.assembly.records import PayloadRow
from inspector.engine.tokens import TokenCounter
from inspector.engine.types import Message

__all__ = ["Laid", "lay_around"]


class Laid(NamedTuple):
    """Rows laid one by one around the ranges (:func:`lay_around`): the rows read, under which band
    rule and counter, the parts laid for them, and their units and row counts per band."""

    rule: BandRule
    counter: TokenCounter
    system: Message | None
    """The system band's row the rule was made for, and whether it is the conversation's own."""
    own: bool
    plain: bool
    """Whether no row is the user row or the placeholder: the bands then depend on the system row alone."""
    rows: tuple[Message, ...]
    parts: tuple[PayloadRow, ...]
    sums: tuple[tuple[str, int, int], ...]
    """(band, units, rows) for each band the rows fall in."""
    units: int


def lay_around(kept: list[Laid | None], slot: int, sent: Sequence[Message], lo: int, hi: int,
               band_of: BandRule, c: Call, u_system: int, u_user: int) -> Laid:
    """The rows ``sent[lo:hi]`` laid one by one (the front before the log range, ``slot`` 0, or the
    user row or placeholder after it, ``slot`` 1), each in the band the rule gives it, with its
    units (``u_system`` and ``u_user``: the system band's row's and the user row's, which the call
    holds). The same rows (by identity) under the same band rule and counter are laid the same way,
    so the last call's answer for the slot (``kept[slot]``, replaced by this one) is handed back when they are (every call of a turn sends
    the same system row, kept head, block and user row; the condenser's front is four rows); and
    under a later turn's rule too when none of them is the user row or the placeholder, then or now,
    and the system band's row is the same (:func:`~inspector.engine.assembly.call.band_rule` gives
    such a row a band from the system row alone, and its units are its own)."""
    last = kept[slot]
    counter = c.engine.counter
    system = c.system
    u_obj = c.user if c.has_user else None
    if last is not None and last.counter is counter and len(last.rows) == hi - lo:
        for j, row in enumerate(last.rows):
            if sent[lo + j] is not row:
                break
        else:
            if last.rule is band_of:
                return last
            if last.plain and last.system is system and last.own is (c.engine.conversation.system_message is system) \
                    and (u_obj is None or u_obj not in last.rows) and HELLO not in last.rows:
                return last
    unit = counter.unit
    rows = tuple([sent[i] for i in range(lo, hi)])
    parts: list[PayloadRow] = []
    sums: dict[str, list[int]] = {}
    total = 0
    for src in rows:
        b, syn = band_of(src, False)
        u = u_system if src is system else u_user if src is u_obj else unit(src)
        parts.append(PayloadRow(src, b, syn, src))
        acc = sums.setdefault(b, [0, 0])
        acc[0] += u
        acc[1] += 1
        total += u
    own = c.engine.conversation.system_message is system
    plain = (u_obj is None or u_obj not in rows) and HELLO not in rows  # (an equal row counts: laid again)
    laid = kept[slot] = Laid(band_of, counter, system, own, plain, rows, tuple(parts),
                             tuple((b, u, n) for b, (u, n) in sums.items()), total)
    return laid
