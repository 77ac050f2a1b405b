"""The records assembly and commit return: :class:`Assembly` (one call), :class:`PayloadRow` (one
row of it) and :class:`CommitRecord` (one commit), and :func:`assembly_record`, the one place both
assembly paths finish a call's record (docs/design.md §3.9)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.engine.assembly.call import Call
from inspector.engine.budget import Budget
from inspector.engine.limits import ModelLimits
from inspector.engine.managers.base import CMDecision
from inspector.engine.types import JoinedRows, Message, Removal, Removals, Repair, SanitizeResult, Span, TrimResult

__all__ = ["Assembly", "CommitRecord", "PayloadRow", "assembly_record"]


@dataclass(slots=True)
class PayloadRow:
    """One row of the payload: the message sent, its band, and where it came from.

    ``synthetic`` is None for a row sent as recorded, else what made it: ``system_band`` (the band the
    engine built), ``summary`` (a summary block), ``empty_result`` (a result the pairing pass added
    for an unanswered ask) or ``placeholder`` (the row sent when there was nothing else). ``source``
    is the object it derives from (itself, or the original of a rebound copy); None for an added row."""

    message: Message
    band: str
    synthetic: str | None
    source: Message | None


@dataclass(slots=True)
class Assembly:
    """The complete record of one LLM call: what every inspector view is a projection of.

    ``messages`` and ``tools`` are what is sent; ``layout`` lays the payload out in order, a
    :class:`~inspector.engine.types.Span` standing for a run of log or working-memory rows sent as
    recorded (:attr:`rows` expands it); ``bands`` are the tokens per band and ``payload_tokens`` their
    sum with the tool schemas; ``decision`` is what the context manager did (the manager itself is
    ``ContextEngine.cm``), ``trimmer_removed`` and ``precut`` what the budget removed, ``repairs``
    what the pairing pass changed and ``check`` the final check's verdict (``"ok"``, else its message).

    ``messages`` is a list, built on its first read when the assembly holds the payload as a
    :class:`~inspector.engine.types.JoinedRows` (the incremental path's: a replay reads the layout,
    never the list, so no payload-long list is copied per call); the constructor takes either."""

    sent: list[Message] | JoinedRows
    """The payload as assembled: a list, or a view of row ranges until :attr:`messages` is read."""
    tools: list[dict[str, Any]] | None
    layout: list[PayloadRow | Span]
    budget: Budget
    limits: ModelLimits
    bands: dict[str, int]
    payload_tokens: int
    headroom: int
    decision: CMDecision
    trimmer_removed: list[Removal] | Removals
    repairs: list[Repair]
    check: str
    turn: int
    warnings: list[str] = field(default_factory=list)
    precut: Sequence[Message] = ()
    """The oldest history rows cut before the trimmer ran (they could never fit)."""
    clean: list[tuple[int, int]] = field(default_factory=list)
    """Payload ranges of clean pairing units, which the final check need not read."""
    skip_declares: Callable[[str], bool] | None = None
    """Whether an ask inside ``clean`` declares a call id (the final check's label for those ranges)."""
    verified: bool = False
    """The pairing pass read ``messages`` as the final check reads it and found every rule held (see
    :func:`~inspector.engine.pairing.sanitize_provider_messages`): the check is not read twice."""
    repaired_rows: list[Message | None] = field(default_factory=list)
    """Per repair, the row it concerned (``repairs[i].index`` in the pairing pass's input, by
    identity), so a replay can name the transcript message; None for a repair of no single row."""

    @property
    def messages(self) -> list[Message]:
        """The payload sent, as one list (made from the view on the first read, then kept)."""
        sent = self.sent
        if type(sent) is not list:
            sent = self.sent = sent.to_list()  # type: ignore[union-attr]
        return sent

    @messages.setter
    def messages(self, rows: list[Message]) -> None:
        """Replace the payload's rows (tests and wrappers that edit a call's payload)."""
        self.sent = rows

    @property
    def ok(self) -> bool:
        """Whether the final check passed."""
        return self.check == "ok"

    @property
    def rows(self) -> list[PayloadRow]:
        """One :class:`PayloadRow` per payload row, spans expanded (built on demand, O(payload))."""
        out: list[PayloadRow] = []
        for part in self.layout:
            if isinstance(part, Span):
                out.extend(PayloadRow(m, part.band, None, m) for m in part.rows[part.lo:part.hi])
            else:
                out.append(part)
        return out

    @property
    def trimmed(self) -> list[Removal]:
        """Every row the budget removed: the pre-cut history prefix, then the trimmer's own removals."""
        return [*(Removal(m, "history") for m in self.precut), *self.trimmer_removed]

    @property
    def trimmed_count(self) -> int:
        """How many rows the budget removed (:attr:`trimmed`'s length, without building it)."""
        return len(self.precut) + len(self.trimmer_removed)


@dataclass(slots=True)
class CommitRecord:
    """What one commit did: the turn, the write-back's action (``unchanged`` when under the recency
    cap, else the manager's decision), whether the summarizer was called, how many turns left the
    log (``folded_turns``, the rows themselves in ``folded``), a summarizer error, the archive's
    statistics after it and how many rows the turn committed."""

    turn: int
    action: str
    summarizer_called: bool
    folded_turns: int
    error: str | None
    archive: dict[str, int]
    committed_rows: int
    folded: list[Message] = field(default_factory=list)


def assembly_record(call: Call, sanitized: SanitizeResult, layout: list[PayloadRow | Span], bands: dict[str, int],
                    payload_tokens: int, trimmed: TrimResult, precut: Sequence[Message],
                    skip_declares: Callable[[str], bool] | None) -> Assembly:
    """The call's :class:`Assembly`, for both paths: the payload ``sanitized`` sent, laid out as
    ``layout`` with ``bands`` and ``payload_tokens``, and what ``trimmed`` and ``precut`` removed;
    adds the headroom, the warnings (the model's, and one when pinned content alone is over the
    budget), the tools sent and the row of each repair."""
    budget = call.budget
    engine = call.engine
    headroom = budget.max_tokens - payload_tokens - budget.reserve - budget.margin
    limits = engine.limits
    warnings: list[str] = list(limits.warnings)
    if trimmed.over_budget:
        warnings.append("pinned content alone exceeds the budget (system band, current user turn, newest "
                        "working-memory group)")
    tools = engine.tools
    repairs = sanitized.repairs
    if repairs:
        given = trimmed.messages
        repaired = [given[r.index] if r.index is not None and 0 <= r.index < len(given) else None for r in repairs]
    else:
        repaired = []
    # every field given in order, none left to a default
    return Assembly(sanitized.messages, list(tools) if tools else None, layout, budget, limits, bands,
                    payload_tokens, headroom, call.decision, trimmed.removed, repairs, "ok",
                    engine.conversation.turn_index, warnings, precut, sanitized.clean, skip_declares,
                    sanitized.verified, repaired)
