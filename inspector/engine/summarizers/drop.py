"""``drop``: discard older turns (never calls a model)."""

from __future__ import annotations

from typing import Any

from inspector.engine.summarizers import PricedUsage
from inspector.engine.types import Message
from inspector.params import DropParams


class DropSummarizer(PricedUsage):
    """Discards the older turns: :meth:`summarize` returns None, so the manager folds them without a block."""

    model: str | None = None
    model_source: str | None = None
    label = "drop"
    calls_model = False  # Q20: a drop is a fold, never a summarizer call

    def __init__(self) -> None:
        self.calls = 0
        self.usage = []  # a drop never calls a model

    @classmethod
    def from_params(cls, params: DropParams, **context: Any) -> DropSummarizer:
        """The summarizer a manifest binds (``drop`` takes no parameters, and no engine: ``context``,
        the ``llm``/``models``/``cache`` every summarizer's builder passes, is not read)."""
        del params, context
        return cls()

    def summarize(self, messages: list[Message]) -> None:
        """None for any ``messages``: the older turns are dropped."""
        return None
