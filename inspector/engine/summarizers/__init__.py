"""Summarizer sub-plugins of the summarising manager: ``llm`` (default), ``drop``, and the offline stand-in.

A summarizer returns summary text, or None meaning "drop"; it raises when it *failed* (the manager
then keeps the verbatim tail and leaves its cache untouched so the next call retries).

:class:`Summarizer` is the contract the layers above the engine read a summarizer through (its
label, its usage log, what that usage cost), so they never probe attributes; a third-party
summarizer that does not meet it is read through :func:`as_summarizer`, the one place that does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from inspector.engine.types import Message

Usage = dict[str, Any]


@runtime_checkable
class Summarizer(Protocol):
    """What a summarizer tells the inspector. ``usage`` has one entry per model call (reported, or
    estimated for the stand-in); ``cost(entries)`` prices some of those entries in USD, 0.0 for
    none and None when no price is known; ``price_model`` names the model whose rates price them."""

    label: str
    usage: list[Usage]
    price_model: str | None

    def cost(self, entries: Sequence[Usage]) -> float | None:
        """USD of some of :attr:`usage`'s ``entries``: 0.0 for none, None when no price is known."""

    def summarize(self, messages: list[Message]) -> str | None:
        """The summary text of ``messages``, or None to drop them; raises when it failed."""


def price_usage(model: str, entries: Sequence[Usage]) -> float | None:
    """USD of ``entries`` at ``model``'s litellm rates: 0.0 for no entries, None when unpriced."""
    if not entries:
        return 0.0
    from inspector.engine.limits import litellm_model_info

    info = litellm_model_info(model) or {}
    pin, pout = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if pin is None:
        return None
    total: float = round(sum(u.get("prompt_tokens", 0) * pin + u.get("completion_tokens", 0) * (pout or 0)
                             for u in entries), 10)
    return total


class PricedUsage:
    """The usage bookkeeping the bundled summarizers share: entries priced at ``price_model``, or at
    the summary ``model`` when no price model is set."""

    model: str | None = None
    price_model: str | None = None
    usage: list[Usage]

    def cost(self, entries: Sequence[Usage]) -> float | None:
        """USD of ``entries`` at ``price_model``'s rates (else the summary model's): 0.0 for none, None when
        unpriced."""
        return price_usage(str(self.price_model or self.model or ""), entries)


class _Foreign:
    """A third-party summarizer read through the contract: label = its ``label`` or class name; no
    ``usage`` log means its cost is unknown (None), never zero."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.label: str = str(getattr(inner, "label", None) or type(inner).__name__)
        log = getattr(inner, "usage", None)
        self.reports_usage = isinstance(log, list)
        self.usage: list[Usage] = log if isinstance(log, list) else []
        self.price_model: str | None = getattr(inner, "price_model", None)
        self.model: str | None = getattr(inner, "model", None)

    def cost(self, entries: Sequence[Usage]) -> float | None:
        if not self.reports_usage:
            return None
        return price_usage(str(self.price_model or self.model or ""), entries)

    def summarize(self, messages: list[Message]) -> str | None:
        fn: Any = getattr(self.inner, "summarize", None) or self.inner
        result = fn(messages)
        return None if result is None else str(result)


def as_summarizer(obj: object) -> Summarizer:
    """``obj`` itself when it meets :class:`Summarizer`, else an adapter that reads it once."""
    return obj if isinstance(obj, Summarizer) else _Foreign(obj)


def calls_a_model(summarizer: Any) -> bool:
    """Whether invoking ``summarizer`` counts as a summarizer call (Q20: model calls only).

    ``drop`` and an ``llm`` summarizer without a live engine fold older turns without any call; the
    offline stand-in counts, labelled as the stand-in of a model call; a third-party summarizer
    counts unless it declares ``calls_model = False``."""
    value = getattr(summarizer, "calls_model", True)
    return bool(value() if callable(value) else value)
