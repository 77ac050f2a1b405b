"""The records a replay keeps: one :class:`Frame` per LLM call, one :class:`Commit` per turn boundary.

A frame holds the engine's own records (its :class:`~inspector.engine.budget.Budget`, a
:class:`CallDecision`, :class:`FrameRepair` s) and its payload as :data:`Segment` runs of
transcript indices; ``to_json`` on each record is its one serializer (the keys of a replay file's
frames and commits), through :func:`record_json` and the field lists :data:`BUDGET_FIELDS` and
:data:`DECISION_FIELDS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple

from inspector.engine.budget import Budget
from inspector.engine.managers.base import CMAction, CMDecision
from inspector.engine.types import Message, Repair

Segment = tuple[int | None, int, str, str | None, Message | None]
"""One run of payload rows: ``(ref, n, band, synthetic, own)``. With ``own`` None, the rows are the
transcript messages ``ref .. ref + n − 1`` as they are; otherwise one row (``n`` = 1) that is not a
transcript message as is (synthesised, or a rebound copy of message ``ref``)."""


@dataclass(slots=True)
class Frame:
    """One LLM call. The payload is kept as :data:`Segment` runs of transcript indices (a long
    history is one run), so a frame's size does not grow with the history; ``refs``, ``row_bands``,
    ``synthetic``, ``own`` and :meth:`payload` expand it on demand.

    The record is read-only once made: its sequences are tuples (an empty one is the shared ``()``),
    so nothing a face does to one frame changes another, or the replay's totals."""

    turn: int  # 1-based; 0 = preamble
    step: int  # 0-based LLM call within the turn
    at: int  # transcript index of the reply this call produced (len(messages) for the pending call)
    budget: Budget  # the engine's own record of this call's budget
    bands: dict[str, int]
    payload_tokens: int
    headroom: int
    decision: CallDecision  # what the context manager did on this call (JSON key "cm")
    segments: Sequence[Segment]
    trimmed: Sequence[tuple[int, int]]  # transcript index ranges removed by the trimmer
    trimmed_synthetic: int  # synthesised rows (e.g. a summary block) removed by the trimmer
    folded: Sequence[tuple[int, int]]  # transcript index ranges folded by the manager this call
    repairs: Sequence[FrameRepair]
    check: str
    cost_usd: float | None
    usage: dict[str, Any] | None  # provider-reported usage of this call, when the transcript has it
    summary_text: str | None
    warnings: Sequence[str]
    summary_cost_usd: float | None = 0.0  # live summarizer calls made for this call (None = price unknown)
    not_sent: Sequence[dict[str, Any]] = ()
    """Synthesised rows computed for this call but not sent, each ``{kind, reason, tokens, content}``
    (Q18: a summary block the trimmer removed is listed here, never shown as sent)."""
    replaced: Sequence[tuple[int, str]] = ()
    """Transcript messages the manager's edit record sent another row in place of, ``(index, reason
    code)`` in transcript order (the row sent is the frame's own row with that ``ref`` and the reason
    as its synthetic kind); the original content was not sent. A frontier record's is a view
    (:class:`~inspector.replay.replaced.ReplacedRefs`), as its ``segments`` are."""
    replaced_kept: int = 0
    """How many of ``replaced``'s first entries are the previous frame's first ones: its JSON lists
    only the others (``replaced_kept``, ``replaced_added``), so each replacement is written once."""

    @property
    def refs(self) -> list[int | None]:
        """Payload row → transcript index (None = synthesised)."""
        out: list[int | None] = []
        for ref, n, _band, _syn, own in self.segments:
            if own is None and ref is not None:
                out.extend(range(ref, ref + n))
            else:
                out.append(ref)
        return out

    @property
    def row_bands(self) -> list[str]:
        """Payload row → its band, expanded from the segments."""
        return [band for _r, n, band, _s, _o in self.segments for _ in range(n)]

    @property
    def synthetic(self) -> list[str | None]:
        """Payload row → its synthetic kind (None for a transcript message), expanded from the segments."""
        return [syn for _r, n, _b, syn, _o in self.segments for _ in range(n)]

    @property
    def own(self) -> dict[int, Message]:
        """Payload rows that are not a transcript message as is (synthesised, rebound), by position."""
        out: dict[int, Message] = {}
        k = 0
        for _r, n, _b, _s, own in self.segments:
            if own is not None:
                out[k] = own
            k += n
        return out

    @property
    def message_count(self) -> int:
        """How many rows the payload holds."""
        return sum(seg[1] for seg in getattr(self.segments, "runs", self.segments))  # a frontier's runs hold them all

    @property
    def summary_sent(self) -> bool:
        """Whether a summary block is in this call's payload."""
        return any(seg[2] == "summary" for seg in getattr(self.segments, "runs", self.segments))

    @property
    def input_budget(self) -> int:
        """The trimmer's ceiling for the payload: max_tokens − completion reserve − safety margin."""
        return self.budget.max_tokens - self.budget.trimmer_reserve

    def payload(self, transcript_messages: Sequence[Message]) -> list[Message]:
        """The payload's rows: the frame's own rows, and the others read from
        ``transcript_messages`` (the replayed transcript's messages) by index."""
        out: list[Message] = []
        for ref, n, _b, _s, own in self.segments:
            if own is not None:
                out.append(own)
            elif ref is not None:
                out.extend(transcript_messages[ref:ref + n])
        return out

    def to_json(self, transcript_messages: Sequence[Message] | None = None,
                summaries: dict[str, int] | None = None, *, alone: bool = False,
                decisions: dict[int, dict[str, Any]] | None = None,
                budgets: dict[Budget, dict[str, Any]] | None = None) -> dict[str, Any]:
        """The frame as a replay file's frame object; with ``transcript_messages``
        (the replayed transcript's messages) also its ``payload``: every row's role, content, tool calls,
        tool call id, transcript index (``ref``), synthetic kind and band. The summary text is
        ``summary`` and a not-sent summary block's text its ``content``; with ``summaries`` (a
        document's table of distinct summary texts → their index, in order of first use, which this
        call extends) they are ``summary_index`` (None when the call has no summary) and
        ``content_index`` instead: the text's index in the document's ``summaries`` list. Its replaced
        rows are written relative to the previous frame's (:attr:`replaced_kept`;
        :func:`replaced_lists` reads them back), or all of them when the frame stands ``alone`` (an
        export of one call). ``decisions`` (a document's ``cm`` objects by the identity of their
        :class:`CallDecision`, which this call extends) makes the frames of one shared decision record
        share one ``cm`` object, and ``budgets`` (its ``budget`` objects by :class:`Budget` value, which
        this call extends) the frames of equal budgets one ``budget`` object: a document is read, never
        changed in place."""
        text = self.summary_text
        summary: str | int | None
        if summaries is None:
            summary_key, summary, not_sent = "summary", text, list(self.not_sent)
        else:
            summary_key, summary = "summary_index", None if text is None else summaries.setdefault(text, len(summaries))
            not_sent = [_content_indexed(ns, summaries) for ns in self.not_sent] if self.not_sent else []
        count, summary_sent = 0, False  # message_count and summary_sent, in one pass over the runs
        segments = self.segments
        for seg in segments if type(segments) is tuple else getattr(segments, "runs", segments):
            count += seg[1]
            if seg[2] == "summary":
                summary_sent = True
        decision = self.decision
        if decisions is None:
            cm = dict(zip(DECISION_FIELDS, _DECISION_VALUES(decision)))
        else:
            cm = decisions.get(id(decision))  # type: ignore[assignment]
            if cm is None:
                cm = decisions[id(decision)] = dict(zip(DECISION_FIELDS, _DECISION_VALUES(decision)))
        budget: Any = self.budget
        if budgets is None:
            budget = _budget_json(budget)
        else:
            shown = budgets.get(budget)
            if shown is None:
                shown = budgets[budget] = _budget_json(budget)
            budget = shown
        d: dict[str, Any] = {
            "turn": self.turn, "step": self.step, "at": self.at, "budget": budget,
            "bands": self.bands, "payload_tokens": self.payload_tokens, "headroom": self.headroom,
            "cm": cm,
            "messages": count, "trimmed": list(map(list, self.trimmed)) if self.trimmed else [],
            "trimmed_synthetic": self.trimmed_synthetic,
            "folded": list(map(list, self.folded)) if self.folded else [],
            "repairs": [r.to_json() for r in self.repairs] if self.repairs else [],
            "check": self.check,
            "cost_usd": self.cost_usd, "summary_cost_usd": self.summary_cost_usd, "usage": self.usage,
            summary_key: summary, "summary_sent": summary_sent, "not_sent": not_sent,
            "warnings": list(self.warnings),
        }
        replaced = self.replaced
        if type(replaced) is not tuple or replaced:  # only a strategy that replaces rows has the keys (when
            kept = 0 if alone else self.replaced_kept  # it replaced any): other replays read as before
            added = _added_json(replaced, kept)
            if added is not None:
                d["replaced_kept"] = kept
                d["replaced_added"] = added
        if transcript_messages is not None:
            rows = []
            refs, synthetic, bands = self.refs, self.synthetic, self.row_bands
            for k, msg in enumerate(self.payload(transcript_messages)):
                row: dict[str, Any] = {"role": msg.get("role"), "content": msg.get("content")}
                if msg.get("tool_calls"):
                    row["tool_calls"] = msg["tool_calls"]
                if msg.get("tool_call_id") is not None:
                    row["tool_call_id"] = msg["tool_call_id"]
                row.update(ref=refs[k], synthetic=synthetic[k], band=bands[k])
                rows.append(row)
            d["payload"] = rows
        return d


def _added_json(replaced: Sequence[tuple[int, str]], kept: int) -> list[dict[str, Any]] | None:
    """A frame's ``replaced_added``: its replaced rows from the ``kept``-th on, as ``{"ref", "reason"}``
    objects; None when it replaced no row. A frontier's view
    (:class:`~inspector.replay.replaced.ReplacedRefs`) is read by its counts and its table's two lists
    (usually nothing past ``kept``: the frontier stood), not through its generic length and slicing."""
    view: Any = replaced
    upto = None if type(view) is tuple else getattr(view, "upto", None)
    if upto is None:
        return [{"ref": i, "reason": reason} for i, reason in replaced[kept:]] if replaced else None
    extra = view.extra
    if kept >= upto:
        if not extra:  # the frontier stood and working memory replaced nothing (most calls): no list walked
            return [] if upto else None
        return [{"ref": i, "reason": reason} for i, reason in extra[kept - upto:]]
    fr = view.fr
    out = [{"ref": i, "reason": reason} for i, reason in zip(fr.refs[kept:upto], fr.reasons[kept:upto])]
    if extra:
        out += [{"ref": i, "reason": reason} for i, reason in extra]
    return out


def _content_indexed(row: dict[str, Any], summaries: dict[str, int]) -> dict[str, Any]:
    """A not-sent row with its text ``content`` as ``content_index`` into ``summaries`` (extended);
    a row whose content is not a text (content parts) is kept as it is."""
    content = row.get("content")
    if type(content) is not str:
        return row
    index = summaries.setdefault(content, len(summaries))
    return {("content_index" if k == "content" else k): (index if k == "content" else v) for k, v in row.items()}


def replaced_lists(frames: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each frame's replaced rows (``{"ref", "reason"}`` objects, in transcript order) from a replay
    document's frames, in order: the first ``replaced_kept`` of the previous frame's, then its
    ``replaced_added`` (a frame without the keys replaced nothing)."""
    out: list[list[dict[str, Any]]] = []
    prev: list[dict[str, Any]] = []
    for f in frames:
        cur = prev[:f["replaced_kept"]] + list(f["replaced_added"]) if "replaced_added" in f else []
        out.append(cur)
        prev = cur
    return out


class CallDecision(NamedTuple):
    """What the context manager did on one call, as kept on a :class:`Frame`: the engine's
    :class:`~inspector.engine.managers.base.CMDecision` without the rows it folded (those are the
    frame's ``folded`` ranges) or the summary text (``Frame.summary_text``), so a frame stays small.

    Immutable (a :class:`~typing.NamedTuple`, like the engine's
    :class:`~inspector.engine.budget.Budget`), so frames with equal decisions share one record."""

    action: CMAction
    compressed_turns: int
    kept_turns: int
    dropped_turns: int
    summarizer_called: bool
    error: str | None
    raw_tokens: int | None

    @classmethod
    def of(cls, d: CMDecision) -> CallDecision:
        """The call decision of the engine's decision ``d``."""
        return cls(d.action, d.compressed_turns, d.kept_turns, d.dropped_turns, d.summarizer_called, d.error,
                   d.raw_tokens)


@dataclass(frozen=True, slots=True)
class FrameRepair:
    """One pairing repair of a call: the engine's :class:`~inspector.engine.types.Repair` and the
    transcript index of the message it concerned (``ref``; None when the row was synthesised, e.g.
    an empty result the repair added, or the repair names no single row)."""

    repair: Repair
    ref: int | None

    def to_json(self) -> dict[str, Any]:
        """The repair's own fields (:meth:`~inspector.engine.types.Repair.as_dict`) and ``ref``."""
        return {**self.repair.as_dict(), "ref": self.ref}


BUDGET_FIELDS: tuple[str, ...] = ("window", "window_source", "reserve", "reserve_source", "margin", "max_tokens",
                                  "fixed", "hard", "hint", "ceiling", "calibration", "calibration_source")
"""The :class:`~inspector.engine.budget.Budget` fields a frame's JSON shows, in their order (a
replay file's ``budget`` object; the record holds a few more the JSON never carried)."""
DECISION_FIELDS: tuple[str, ...] = CallDecision._fields
"""A frame's ``cm`` object: every :class:`CallDecision` field, in declaration order."""
_BUDGET_VALUES = attrgetter(*BUDGET_FIELDS)  # the fields' values as one tuple, read in one C call
_DECISION_VALUES = attrgetter(*DECISION_FIELDS)


def _budget_json(budget: Any) -> dict[str, Any]:
    """A frame's ``budget`` object: :data:`BUDGET_FIELDS`, plus ``prefix`` and ``prefix_source`` when an
    unrecorded prefix was added to the budget (a replay without one reads as before). The same
    object :func:`record_json` makes, its values read by one getter (a replay writes thousands)."""
    out = dict(zip(BUDGET_FIELDS, _BUDGET_VALUES(budget)))
    if budget.prefix:
        out.update(prefix=budget.prefix, prefix_source=budget.prefix_source)
    return out


def record_json(record: Any, names: Sequence[str]) -> dict[str, Any]:
    """The one serializer of a frame's typed records: the named fields, in order."""
    return {name: getattr(record, name) for name in names}


@dataclass(slots=True)
class Commit:
    """One turn boundary: the write-back fold of turn ``turn`` (its action, whether the
    summarizer was called and at what cost, how many turns it folded and the transcript ranges
    that left the stored log, any error) and the archive's counts after it."""

    turn: int
    action: str
    summarizer_called: bool
    folded_turns: int
    error: str | None
    archive: dict[str, int]
    folded: Sequence[tuple[int, int]] = ()  # transcript ranges that left the stored log (a tuple: see Frame)
    summary_cost_usd: float | None = 0.0

    def to_json(self) -> dict[str, Any]:
        """The commit as a replay file's commit object (the action under ``cm``)."""
        return {"turn": self.turn, "cm": self.action, "summarizer_called": self.summarizer_called,
                "folded_turns": self.folded_turns, "folded": list(map(list, self.folded)), "error": self.error,
                "summary_cost_usd": self.summary_cost_usd, "archive": self.archive}

