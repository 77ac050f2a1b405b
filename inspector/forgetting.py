"""Forgotten references: identifiers a call needed that the model could no longer see.

For every LLM call of a replay, the identifiers (:mod:`inspector.engine.identifiers`) the call
*needs* are read from three places: the current user message, the working memory (the turn's rows
so far) and what the agent did next in the transcript (the reply's text and its tool-call
arguments). One is **forgotten** at that call when

* no row of the payload shows it (summary text, system band and tool schemas included), and
* a transcript message that exists by then holds it but is not sent at this call — summarised,
  dropped, folded at a commit, trimmed or repaired away (a transcript system message the system
  band replaces does not count: that is the agent's configuration, not a setting's loss).

An identifier the agent produces for the first time is never forgotten (nothing earlier holds it),
nor is one still visible anywhere in the payload.

**Where a loss is reported.** An identifier needed by the user message, the next reply or the next
tool call is reported at every call that needs it and cannot see it. One needed *only* through the
working memory (``needed_in == ("working_memory",)``) is reported once: at the call where the
working-memory row holding it stops being sent (the first call of the turn that loses it), not again
at the later calls of the same turn while it stays lost. It is reported again at a later call whose
next reply or tool call needs it, or when it is lost anew after a message holding it was sent as it
is (or none counted as earlier) in between. So the answer grows with the turn's rounds, not with
rounds × trimmed rows: a turn of thousands of tool rounds no longer re-reports every trimmed
round's identifiers at every later call. Totals (``forgotten``, ``forgotten_calls``) count these
reports.

The detector reports, per call: the identifier, where it was needed, the newest not-sent message
holding it and why that message was not sent
(:func:`not_sent_reasons`, the one source of those reasons; the report tables use it too).

The same rule measures every strategy, so the numbers compare settings; they are a lower bound on
what a model loses (a paraphrase in a summary counts as kept only if the identifier's text
survives, and a fact with no identifier is not seen at all).
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

from inspector.engine.identifiers import Extractor, Identifier, extract_identifiers, message_text
from inspector.forgetting_index import NEEDED_IN, WHERE_BITS, TranscriptIndex, tools_sent
from inspector.replay import FrontierSegments, Frame, Replay, reason_lookup
from inspector.replay.ranges import expand_ranges
from inspector.replay.runs import (HoledRuns, IndexRuns, WindowComplement, changed_in_window, changed_rows, complement,
                                   count_in, symmetric_difference)
from inspector.replay.run import gc_paused
from inspector.vocabulary import reason_words, registered_actions, summary_actions

@dataclass(frozen=True, slots=True)
class Forgotten:
    """One identifier a call needed and could no longer see."""

    call: int
    identifier: str
    kind: str  # the extractor rule that found it
    needed_in: tuple[str, ...]  # subset of NEEDED_IN, in that order
    message: int  # transcript index of the newest not-sent message holding it
    reason: str  # why that message was not sent at this call

    def to_json(self) -> dict[str, Any]:
        """The record as a frame's ``forgotten`` entry (the call is the frame's own)."""
        d = asdict(self)
        d["needed_in"] = list(self.needed_in)
        d.pop("call")
        return d


class CallNeeds(NamedTuple):
    """What one call needed (``needed``) and how many of those an earlier message held (``earlier``).
    Immutable (a :class:`~typing.NamedTuple`: one is built per call of every replay's analysis)."""

    call: int
    needed: int
    earlier: int
    forgotten: list[Forgotten]


def _sent_runs(f: Frame) -> IndexRuns:
    """The transcript indices a frame's payload shows, read from its segments (never ``refs``): a
    message the manager's edit record replaced by another row (``Frame.replaced``) is not one."""
    if f.replaced:
        why = reason_lookup(f.replaced)  # a frontier's view is bisected, not copied
        if type(f.segments) is FrontierSegments:  # its runs, the replaced rows split out once
            return IndexRuns(f.segments.shown(why))
        return IndexRuns([(ref, ref + (n if own is None else 1)) for ref, n, _b, syn, own in f.segments
                          if ref is not None and (own is None or syn is None or why(ref) != syn)])
    return IndexRuns([(ref, ref + (n if own is None else 1)) for ref, n, _b, _s, own in f.segments
                  if ref is not None])


# --- why a message is not sent (one source for the tables, the app and the detector) ---------------

def _in_call_reason(action: str, unsent_summary: str | None) -> str:
    """Why a row this call's manager left out was not sent, in its action's declared words
    (:class:`~inspector.vocabulary.Action` ``not_sent``; ``not_sent_trimmed`` when the call's summary
    is not in its payload, so a message folded into a summary the model never saw does not read as
    kept)."""
    declared = next((a for a in registered_actions() if a.code == action), None)
    if declared is not None and unsent_summary is not None and declared.not_sent_trimmed is not None:
        return declared.not_sent_trimmed.format(how=unsent_summary)
    if declared is not None and declared.not_sent is not None:
        return declared.not_sent
    return "dropped by the context manager (no summary)"


def _summary_unsent(f: Frame) -> str | None:
    """How this call's summary failed to reach the model (None: a summary block was sent)."""
    if f.summary_sent:
        return None
    if any(ns.get("kind") == "summary" for ns in f.not_sent):
        return "trimmed for budget — not sent"
    return "not sent"


def _fold_origins(rp: Replay) -> dict[int, tuple[int, str]]:
    """Transcript index → (turn, action) of the first commit that folded it, built once per replay
    (commits are in turn order, so a call of turn ``t`` reads the entries whose turn is < ``t``)."""
    def make() -> dict[int, tuple[int, str]]:
        out: dict[int, tuple[int, str]] = {}
        for c in rp.commits:
            for i in expand_ranges(c.folded):
                out.setdefault(i, (c.turn, c.action))
        return out
    return rp.view("forgetting.fold_origins", make)


class _Why:
    """Why one call left a message out, asked per message (O(log runs) each): the one rule behind
    :func:`not_sent_reasons` and the detector's reasons."""

    __slots__ = ("f", "n", "msgs", "sent", "trimmed", "folded_now", "folded_at", "in_call", "unsent_summary",
                 "replaced")

    def __init__(self, rp: Replay, call: int, sent: IndexRuns | HoledRuns | None = None) -> None:
        f = self.f = rp.frames[call]
        self.msgs = rp.messages
        self.sent = _sent_runs(f) if sent is None else sent
        self.trimmed = IndexRuns(f.trimmed)
        self.folded_now = IndexRuns(f.folded)
        self.folded_at = _fold_origins(rp)
        how = self.unsent_summary = _summary_unsent(f)
        self.in_call = _in_call_reason(f.decision.action, how)
        self.replaced = reason_lookup(f.replaced) if f.replaced else None

    def reason(self, i: int) -> str:
        """Why message ``i`` (not sent at this call) was left out."""
        if i in self.trimmed:
            return "trimmed for budget (token trimmer)"
        code = self.replaced(i) if self.replaced is not None else None
        if code is not None:
            return reason_words(code)
        if i in self.folded_now:
            return self.in_call
        origin = self.folded_at.get(i)
        if origin is not None and origin[0] < self.f.turn:
            turn, action = origin
            if action in summary_actions():
                tail = "" if self.unsent_summary is None else f"; the summary was {self.unsent_summary}"
                return f"summarised at the commit of turn {turn} (the stored history keeps the newest turns){tail}"
            return f"dropped at the commit of turn {turn} (the stored history keeps the newest turns)"
        if self.msgs[i].get("role") == "system":
            return "system text replaced (the manifest's system band, or a later system message, wins)"
        return "removed by the pairing repair"


def not_sent_reasons(rp: Replay, call: int) -> dict[int, str]:
    """Every transcript message that exists at ``call`` (index < the call's reply) but is not in its
    payload, mapped to the reason, in transcript order."""
    why = _Why(rp, call)
    return {i: why.reason(i) for i in range(min(why.f.at, len(rp.messages))) if i not in why.sent}


# --- the detector ---------------------------------------------------------------------------------
#
# Linear in the transcript. Built once per replay (:class:`~inspector.forgetting_index.TranscriptIndex`):
# each message is read once and the extractor called once per distinct text (a row's whole text when
# it is a user or working-memory row, its text and tool-call arguments when it is a call's next reply);
# one Aho–Corasick pass over every message's case-folded text gives, for every identifier any call
# needs, the messages whose text contains it (substring semantics, as a per-key scan gives). Then
# the calls are walked in order: the identifiers of the current user message and the working memory
# only grow within a turn, so each keeps two counts — its holders that count as "earlier" (before
# the turn, or in the turn and not sent) and its holders sent as they are — updated from the rows
# whose status changed since the previous call (a diff of the frames' runs), never recomputed.

@functools.lru_cache(maxsize=1 << len(NEEDED_IN))
def _ordered(bits: int) -> tuple[str, ...]:
    return tuple(w for w in NEEDED_IN if bits & WHERE_BITS[w])


class _Frame:
    """One call's view for the detector: what it sends (runs), its turn's start and reach. The runs
    (``plain``, ``sent``, ``unsent``; ``plain_ranges`` too unless ``holed``) are read from the frame's
    segments the first time one is asked for: a call whose turn needs no identifier yet never reads them.
    A frontier frame's (``holed``) are views over its table (:class:`~inspector.replay.runs.HoledRuns`),
    O(its runs) to build however many rows were replaced so far; the lists of the other frames are
    made for one only when it is compared with a frame of the other kind (:meth:`lists`)."""

    __slots__ = ("f", "at", "start", "sent", "plain", "plain_ranges", "unsent", "holed", "_unsent_runs", "_own",
                 "_own_runs")
    plain: IndexRuns | HoledRuns
    plain_ranges: list[tuple[int, int]]  # not ``holed`` only
    sent: IndexRuns | HoledRuns
    unsent: list[tuple[int, int]] | WindowComplement  # a view when ``holed``
    holed: bool

    def __init__(self, f: Frame, n: int, user_at: int | None) -> None:
        self.f, self.at, self.start = f, min(f.at, n), user_at if user_at is not None else 0
        self._unsent_runs: IndexRuns | None = None
        self._own: str | None = None
        self._own_runs: str | None = None

    def __getattr__(self, name: str) -> Any:
        """A run not read yet (an unset slot): read them all from the segments."""
        if name not in ("sent", "plain", "plain_ranges", "unsent", "holed"):
            raise AttributeError(name)
        self._read_runs()
        return object.__getattribute__(self, name)

    def _read_runs(self) -> None:
        f = self.f
        segs = f.segments
        self.holed = type(segs) is FrontierSegments  # (``isinstance`` of an ABC: two calls for a tuple)
        if type(segs) is FrontierSegments:  # views over its table: no range per replaced row
            runs, holes, c = segs.runs, segs.fr.refs, segs.upto
            ranges: list[tuple[int, int]] = []
            unsplit = own = False  # a run not split at the holes; a row of its own with a transcript index
            for r, n_, _b, s, o in runs:
                if r is not None:
                    if o is not None:
                        own = True
                    else:
                        ranges.append((r, r + n_))
                        unsplit = unsplit or s is not None
            base = IndexRuns(ranges)
            # every run split at the holes: one run list for both (``split is base``)
            split = IndexRuns([(r, r + n_) for r, n_, _b, s, o in runs if r is not None and o is None
                               and s is None]) if unsplit else base
            self.plain = HoledRuns(base, split, holes, c)
            extra: list[int] = []
            if own:
                why = reason_lookup(f.replaced) if f.replaced else None  # as :func:`_sent_runs` reads it
                extra = [r for r, _n, _b, s, o in runs if r is not None and o is not None
                         and (s is None or why is None or why(r) != s)]
            # it sends the plain rows unless it records rows of its own (or replaced ones) and sends one of
            # its own or a run not split at the holes
            differs = unsplit and (split.starts != base.starts or split.ends != base.ends)
            if (extra or differs) and (own or f.replaced):
                self.sent = HoledRuns(base, base, holes, c, extra)
            else:
                self.sent = self.plain
            self.unsent = WindowComplement(self.sent, self.start, self.at)
            return
        self.plain, self.plain_ranges, self.sent, self.unsent = self._lists()

    def _lists(self) -> tuple[IndexRuns, list[tuple[int, int]], IndexRuns, list[tuple[int, int]]]:
        """(plain runs, their ranges, sent runs, the turn's rows not sent as ranges), as lists."""
        f = self.f
        ranges = []
        made = False  # a row the engine made in place of a transcript message
        if type(f.segments) is FrontierSegments:  # its runs, split at the replaced rows (no segment each)
            ranges = f.segments.plain()
            made = bool(f.replaced) or any(r is not None and o is not None for r, _n, _b, _s, o in f.segments.runs)
        else:
            for ref, n_, _b, _s, own in f.segments:
                if ref is not None:
                    if own is None:
                        ranges.append((ref, ref + n_))
                    else:
                        made = True
        plain = IndexRuns(ranges)
        sent = _sent_runs(f) if made or f.replaced else plain  # no made row: it sends the plain runs
        return plain, list(zip(plain.starts, plain.ends)), sent, complement(sent, self.start, self.at)

    def lists(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """(plain ranges, unsent ranges) as lists, for a comparison with a frame of the other kind."""
        unsent = self.unsent
        if isinstance(unsent, list):
            return self.plain_ranges, unsent
        _p, pr, _s, listed = self._lists()
        return pr, listed

    def unsent_runs(self) -> IndexRuns | WindowComplement:
        unsent = self.unsent
        if not isinstance(unsent, list):
            return unsent
        if self._unsent_runs is None:
            self._unsent_runs = IndexRuns(unsent)
        return self._unsent_runs

    def older_plain(self, h: Sequence[int]) -> tuple[int, int]:
        """(holders counting as "earlier", holders sent as they are) among the sorted ``h``."""
        unsent = self.unsent
        if not isinstance(unsent, list):
            plain = self.plain
            if len(h) == 1 and unsent.runs is plain:  # one holder (most needs): asked of the plain view once
                x, held = h[0], plain.has(h[0])
                return (x < self.start) + (not held and unsent.lo <= x < unsent.hi), 1 if held else 0
            return bisect_left(h, self.start) + unsent.count(h), plain.count(h)
        return (bisect_left(h, self.start) + count_in(h, unsent),
                count_in(h, self.plain_ranges))

    def shows(self, key: str, ix: TranscriptIndex) -> bool:
        """Whether a row of its own (the engine's, e.g. a placeholder) shows ``key`` (one ``ix`` looks for): the text of them
        all, or for a frontier frame its runs' own rows and, by the table's entries holding the key
        (:meth:`~inspector.forgetting_index.TranscriptIndex.table_holders`), the replaced rows in its runs."""
        segs = self.f.segments
        if not isinstance(segs, FrontierSegments) or ix.newline_keys:
            return key in self.own_text()
        if self._own_runs is None:
            self._own_runs = "\n".join(message_text(m).casefold() for _r, _n, _b, _s, m in segs.runs if m is not None)
        if key in self._own_runs:
            return True
        refs, c = segs.fr.refs, segs.upto
        held = ix.table_holders(segs.fr, c).get(key)
        if not held:
            return False
        for r, n_, _b, syn, own in segs.runs:  # the runs reading splits (as :meth:`FrontierSegments._expand`)
            if r is None or own is not None or syn is not None:
                continue
            a, b = bisect_left(refs, r, 0, c), bisect_left(refs, r + n_, 0, c)
            k = bisect_left(held, a)
            if k < len(held) and held[k] < b:
                return True
        return False

    def own_text(self) -> str:
        if self._own is None:
            self._own = "\n".join(message_text(m).casefold() for _r, _n, _b, _s, m in self.f.segments if m is not None)
        return self._own


def call_needs(rp: Replay, extractor: Extractor = extract_identifiers) -> list[CallNeeds]:
    """Per call, in order: identifiers needed, how many an earlier message held, and the forgotten ones.

    ``extractor`` is any ``str -> Iterable[Identifier]`` (default: :func:`extract_identifiers`).
    Deterministic: the same replay gives the same lists. Linear: see the notes above :func:`_ordered`
    (run inside :func:`~inspector.replay.run.gc_paused`: what the analysis builds holds no cycle)."""
    with gc_paused():
        return _call_needs(rp, extractor)


class _TurnNeeds:
    """The persistent needs of the current turn (its user message and working memory only grow
    within a turn), by key: first-seen order, identifier, where needed (bits of :data:`NEEDED_IN`),
    and two counts of its holders — those counting as "earlier" (before the turn, or in the turn
    and not sent) and those sent as they are — kept up to date from the rows whose status changed
    since the previous call. ``candidates``: keys held earlier and sent nowhere as they are (maybe
    forgotten); ``reported``: working-memory-only needs already reported in this turn and lost ever
    since (the rule in the module docstring), kept out of ``candidates`` until visible again;
    ``earlier``: how many keys have an earlier holder."""

    __slots__ = ("holders", "keys_of", "seq", "ident_of", "bits_of", "n_old", "n_plain", "candidates", "reported",
                 "earlier")

    def __init__(self, ix: TranscriptIndex) -> None:
        self.holders, self.keys_of = ix.holders, ix.keys_of
        self.seq: dict[str, int] = {}  # insertion order
        self.ident_of: dict[str, Identifier] = {}
        self.bits_of: dict[str, int] = {}
        self.n_old: dict[str, int] = {}
        self.n_plain: dict[str, int] = {}
        self.candidates: set[str] = set()
        self.reported: set[str] = set()
        self.earlier = 0

    def reset(self) -> None:
        """A new turn: no needs yet."""
        self.earlier = 0
        if not self.seq:  # every other table holds keys of ``seq`` only: already empty
            return
        for d in (self.seq, self.ident_of, self.bits_of, self.n_old, self.n_plain):
            d.clear()
        self.candidates.clear()
        self.reported.clear()

    def judge(self, key: str, old: int, plain: int) -> None:
        """``key`` is a candidate when an earlier message holds it and none is sent as it is."""
        if old and not plain:
            if key not in self.reported:
                self.candidates.add(key)
        else:
            self.candidates.discard(key)
            self.reported.discard(key)

    def join(self, fr: _Frame, idents: Sequence[Identifier], bit: int) -> None:
        """Add the identifiers a row of the turn needs (``bit``: where), counted against call ``fr``."""
        seq, bits_of, holders = self.seq, self.bits_of, self.holders
        for ident in idents:
            key = ident.key
            if key in seq:
                bits_of[key] |= bit
                continue
            seq[key] = len(seq)
            self.ident_of[key] = ident
            bits_of[key] = bit
            o, p = fr.older_plain(holders[key])
            self.n_old[key], self.n_plain[key] = o, p
            self.earlier += o > 0
            self.judge(key, o, p)

    def shift(self, rows: Sequence[tuple[int, int]], member: IndexRuns | HoledRuns | WindowComplement, counts: dict[str, int]) -> None:
        """Rows whose membership changed: +1 to ``counts`` for each key of a row now in ``member``, −1 otherwise."""
        self.moved([(r, member.has(r)) for lo, hi in rows for r in range(lo, hi) if r in self.keys_of], counts)

    def moved(self, rows: Sequence[tuple[int, bool]], counts: dict[str, int]) -> None:
        """Rows whose membership changed, each with whether it is now a member: +1 to ``counts`` for each
        key of a row now one, −1 otherwise (each key judged again as :meth:`judge` does)."""
        seq, n_old, n_plain, keys_of = self.seq, self.n_old, self.n_plain, self.keys_of
        candidates, reported = self.candidates, self.reported
        earlier = self.earlier
        for r, now in rows:
            held = keys_of.get(r)
            if held is None:
                continue
            d = 1 if now else -1
            for key in held:
                if key in seq:
                    before = n_old[key] > 0
                    counts[key] += d
                    old = n_old[key]
                    earlier += (old > 0) - before
                    if old and not n_plain[key]:  # :meth:`judge`, inline (a call per key per row)
                        if key not in reported:
                            candidates.add(key)
                    else:
                        candidates.discard(key)
                        reported.discard(key)
        self.earlier = earlier

    def follow(self, prev: _Frame, fr: _Frame) -> None:
        """The next call of the same turn: update the counts from the rows whose status changed."""
        if not self.seq:
            return  # no needs yet: no count to keep
        pu, fu, pp = prev.unsent, fr.unsent, prev.plain
        if isinstance(pu, list) and type(pp) is IndexRuns and prev.sent is pp and not isinstance(fu, list) and \
                type(fu.runs) is HoledRuns:  # frame of lists, then a frontier frame: the first read over its table
            pp = HoledRuns(pp, pp, fu.runs.holes, 0)
            pu = WindowComplement(pp, prev.start, prev.at)
        if not isinstance(pu, list) and not isinstance(fu, list):  # two views of one table: what changed
            if pu.runs is pp and fu.runs is fr.plain:  # both send their plain rows: one walk for both
                both = changed_in_window(pu, fu)
                if both is not None:
                    self.moved(both[0], self.n_old)
                    self.moved(both[1], self.n_plain)
                    return
            un, pl = changed_rows(pu, fu), changed_rows(pp, fr.plain)
            if un is not None and pl is not None:
                self.shift(un, fu, self.n_old)
                self.shift(pl, fr.plain, self.n_plain)
                return
        (p_plain, p_unsent), (f_plain, f_unsent) = prev.lists(), fr.lists()
        if p_unsent != f_unsent:
            self.shift(symmetric_difference(p_unsent, f_unsent), fr.unsent_runs(), self.n_old)
        if p_plain != f_plain:
            self.shift(symmetric_difference(p_plain, f_plain), fr.plain, self.n_plain)


def _call_needs(rp: Replay, extractor: Extractor) -> list[CallNeeds]:
    """:func:`call_needs` with the collector paused: the calls in order, each turn's needs kept by a
    :class:`_TurnNeeds` and reset when a new turn starts (or the calls step back)."""
    ix = TranscriptIndex(rp, extractor, tools_sent(rp))
    n = len(rp.messages)
    full = ix.full
    turn = _TurnNeeds(ix)
    out: list[CallNeeds] = []
    state_user: int | None = -1
    prev: _Frame | None = None
    reach = 0
    wm_bit = WHERE_BITS["working_memory"]
    for k, f in enumerate(rp.frames):
        ua = ix.user_at[k]
        fr = _Frame(f, n, ua)
        if prev is None or ua != state_user or fr.at < reach:
            turn.reset()
            state_user = ua
            if ua is not None and ua in full:
                turn.join(fr, full[ua], WHERE_BITS["user"])
            reach = ua + 1 if ua is not None else 0
        else:
            turn.follow(prev, fr)
        for i in range(reach, fr.at):  # the working memory's new rows (system text is not one)
            if i in full:
                turn.join(fr, full[i], wm_bit)
        reach = max(reach, fr.at)
        prev = fr
        out.append(_one_call(rp, ix, turn, k, fr))
    return out


def _one_call(rp: Replay, ix: TranscriptIndex, turn: _TurnNeeds, k: int, fr: _Frame) -> CallNeeds:
    """Call ``k``'s needs: the turn's, plus the keys only its next reply needs; the candidates (and
    the lost working-memory needs the reply needs again) are judged by :func:`_lost`."""
    reply = ix.reply.get(fr.f.at)
    if reply is None and not turn.candidates:  # nothing new needed, nothing maybe lost
        return CallNeeds(k, len(turn.seq), turn.earlier, [])
    if reply is None:
        reply = {}
    seq = turn.seq
    extra = [key for key in reply if key not in seq]
    earlier = turn.earlier
    again = [key for key in reply if key in turn.reported]  # lost WM needs the next reply needs too
    maybe: list[str] = sorted([*turn.candidates, *again] if again else turn.candidates, key=seq.__getitem__)
    for key in extra:
        o, p = fr.older_plain(ix.holders[key])
        if o:
            earlier += 1
            if not p:
                maybe.append(key)
    return CallNeeds(k, len(seq) + len(extra), earlier, _lost(rp, ix, turn, k, fr, maybe, reply) if maybe else [])


def _lost(rp: Replay, ix: TranscriptIndex, turn: _TurnNeeds, k: int, fr: _Frame, maybe: Sequence[str],
          reply: dict[str, tuple[Identifier, int]]) -> list[Forgotten]:
    """The keys of ``maybe`` call ``k`` forgot: shown neither by a tool schema nor by a row of its
    own, and held by a not-sent message that is not a system text (the newest one is named, with
    why it was not sent). A working-memory-only need is reported here, at the call that loses it,
    and not again while it stays lost."""
    msgs = rp.messages
    wm_bit = WHERE_BITS["working_memory"]
    candidates, reported, seq, bits_of = turn.candidates, turn.reported, turn.seq, turn.bits_of
    lost: list[Forgotten] = []
    why: _Why | None = None
    for key in maybe:
        if key in ix.in_tools:
            if key in candidates and bits_of[key] == wm_bit:
                candidates.discard(key)  # a tool schema always shows it
                reported.add(key)
            continue
        if fr.shows(key, ix):
            continue
        holder = _newest_unsent_holder(ix.holders[key], fr, msgs)
        if holder is None:
            continue
        if why is None:
            why = _Why(rp, k, fr.sent)
        if key in seq:
            ident, bits = turn.ident_of[key], bits_of[key] | (reply[key][1] if key in reply else 0)
            if bits_of[key] == wm_bit:  # reported here, at the call that loses it; not again
                candidates.discard(key)
                reported.add(key)
        else:
            ident, bits = reply[key]
        lost.append(Forgotten(k, ident.text, ident.kind, _ordered(bits), holder, why.reason(holder)))
    return lost


def _newest_unsent_holder(h: Sequence[int], fr: _Frame, msgs: Sequence[Any]) -> int | None:
    """The newest of the holders ``h`` (ascending) before call ``fr``'s reply that it does not send
    and that is not a system text; None when there is none. A holder inside a sent run skips every
    holder of that run at once (a key held by many sent rows is not walked row by row)."""
    sent = fr.sent
    j = bisect_left(h, fr.at) - 1
    while j >= 0:
        i = h[j]
        if i in sent:  # sent: go below its run
            j = bisect_left(h, sent.floor(i), 0, j) - 1
        elif msgs[i].get("role") == "system":
            j -= 1
        else:
            return i
    return None


def replay_needs(rp: Replay, extractor: Extractor = extract_identifiers) -> list[CallNeeds]:
    """:func:`call_needs`; with the default extractor computed once per replay and kept on it (the
    export, the totals, the timeline's markers and every step of one replay read the same lists)."""
    if extractor is extract_identifiers:
        return rp.view("forgetting.needs", lambda: call_needs(rp))
    return call_needs(rp, extractor)


def forgotten_references(rp: Replay, extractor: Extractor = extract_identifiers) -> list[list[Forgotten]]:
    """The forgotten identifiers of every call (one list per frame, in frame order). With the default
    extractor the lists are computed once per replay and kept on it (every table, step and export of
    one replay reads the same lists)."""
    if extractor is extract_identifiers:
        return rp.view("forgetting.forgotten", lambda: [c.forgotten for c in replay_needs(rp)])
    return [c.forgotten for c in call_needs(rp, extractor)]


def forgetting_totals(needs: Sequence[CallNeeds]) -> dict[str, Any]:
    """Totals over calls: ``forgotten`` (call, identifier) pairs, ``forgotten_calls`` (calls that
    forgot at least one), ``needing_calls`` (calls that needed an identifier an earlier message
    held), ``forgotten_per_call`` (forgotten ÷ needing_calls; 0 when no call needed one) and
    ``forgotten_ids`` (distinct identifiers, in order of first loss)."""
    forgotten = sum(len(c.forgotten) for c in needs)
    needing = sum(1 for c in needs if c.earlier)
    ids: list[str] = []
    for c in needs:
        for x in c.forgotten:
            if x.identifier not in ids:
                ids.append(x.identifier)
    return {"forgotten": forgotten, "forgotten_calls": sum(1 for c in needs if c.forgotten),
            "needing_calls": needing, "forgotten_per_call": round(forgotten / needing, 4) if needing else 0.0,
            "forgotten_ids": ids}

