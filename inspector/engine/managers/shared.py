"""What the shipped strategies share, so that each strategy module holds only its rule.

:class:`BuiltFromParams` gives a strategy the ``from_params`` constructor a manifest binds it with
(:func:`inspector.engine.builders.build_context_manager`); :class:`SummarizerSlot` gives a
summarising strategy (``summarising``, ``condenser``, ``auto-compact``) its summarizer: binding it,
calling it, naming its model, and the summary block of its text. Both are mixins, listed before
:class:`~inspector.engine.managers.base.ContextManager` in a strategy's bases; a third-party
manager need not use them (its ``from_params`` and ``bind_summarizer`` are its own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Self

from inspector.engine.contracts import EditRecord, ReplacedBefore, Replacement
from inspector.engine.summarizers import calls_a_model
from inspector.engine.summary_block import summary_block
from inspector.engine.types import Message, RowsView


class BuiltFromParams:
    """A strategy whose constructor takes its validated params model as ``params=``."""

    @classmethod
    def from_params(cls, params: Any) -> Self:
        """The manager a manifest binds, from its validated params model ``params`` (used as it is:
        no second check); a summarizer, for a strategy that takes one, is bound afterwards."""
        make: Callable[..., Self] = cls
        return make(params=params)


class SummarizerSlot:
    """The summarizer of a strategy that folds rows into a summary block.

    ``summarizer`` is None (no text: the strategy drops what it would fold), an object with
    ``summarize(msgs)``, or a plain callable; every summarising strategy reads it through the
    methods here, so they call it, strip its text and name its model the same way."""

    accepts_summarizer: ClassVar[bool] = True
    summarizer: Any = None

    def bind_summarizer(self, summarizer: Any) -> None:
        """Bind ``summarizer``: None → the folded rows are dropped; an object with ``summarize(msgs)``;
        or a plain callable."""
        self.summarizer = summarizer

    def summary_text(self, msgs: Sequence[Message]) -> str | None:
        """The bound summarizer's text for ``msgs`` (a list it is given), stripped; None when none is
        bound or it gives no text. Raises whatever the summarizer raises (the strategy decides what a
        failure keeps)."""
        s = self.summarizer
        if s is None:
            return None
        result = (getattr(s, "summarize", None) or s)(msgs if isinstance(msgs, list) else list(msgs))
        return result.strip() if isinstance(result, str) and result.strip() else None

    def summary_model(self) -> tuple[str | None, str | None]:
        """The bound summarizer's ``(model, model_source)`` (None for what it does not say)."""
        s = self.summarizer
        if s is None:
            return None, None
        return getattr(s, "model", None), getattr(s, "model_source", None)

    def calls_model(self) -> bool:
        """Whether folding calls a model (:func:`~inspector.engine.summarizers.calls_a_model`; a
        drop, no summarizer or the offline stand-in is no call)."""
        return self.summarizer is not None and calls_a_model(self.summarizer)


def summary_or_none(turns: int, text: str | None) -> Message | None:
    """The summary block of ``text`` standing for ``turns`` exchanges; None when there is no text
    (a drop: no block)."""
    return summary_block(turns, text) if text else None


def whole_list(rows: Sequence[Message]) -> Sequence[Message]:
    """The list a read-only view of a whole list stands for (the engine's working memory as
    :func:`~inspector.engine.managers.base.frozen` hands it to a manager), else ``rows`` itself. A
    manager reads it only during its call, while the two hold the same rows, and a list's reads are
    C reads, not a Python call of the view's per row read and per length asked."""
    if type(rows) is RowsView:
        head, base, lo, hi = rows.source()
        if not head and not lo and hi == len(base):
            return base
    return rows


def table_view(last: ReplacedBefore | None, table: list[Replacement], count: int,
               at: Sequence[int] | None) -> ReplacedBefore:
    """The first ``count`` entries of ``table`` (``at``: their positions) as a
    :class:`~inspector.engine.contracts.ReplacedBefore` view: ``last``, the view a frontier manager
    gave on its last call, again when it is that very view, else a new one. A frontier standing still
    (a turn's later call, a log grown inside the window) is then the same object, which readers
    tell by identity (the assembly's frontier index, the manager's own record, :func:`frontier_record`)."""
    if last is not None and last.upto == count and last.table is table:
        return last
    return ReplacedBefore(table, count, at)


def keep_record(last: EditRecord | None, n: int, log: Sequence[Replacement],
                working: Sequence[Replacement]) -> EditRecord:
    """The edit record keeping all ``n`` log rows with ``log``'s and ``working``'s replacements:
    ``last``, the record a manager gave on its last call, again when it says just that (the same
    length and the same two replacement sequences, by identity: :func:`table_view`'s), else a new
    one. An edit record is immutable, so the same object is the same answer."""
    if last is not None and last.size == n and last.replaced is log and last.working is working and \
            not last.inserted:
        return last
    return EditRecord(n, ((0, n),) if n else (), log, (), working)
