"""``drop``: discard older turns (never calls a model)."""

from __future__ import annotations

from inspector.engine.summarizers import PricedUsage
from inspector.engine.types import Message


class DropSummarizer(PricedUsage):
    model: str | None = None
    model_source: str | None = None
    label = "drop"
    calls_model = False  # Q20: a drop is a fold, never a summarizer call

    def __init__(self) -> None:
        self.calls = 0
        self.usage = []  # a drop never calls a model

    def summarize(self, messages: list[Message]) -> None:
        return None
