"""Summarizer sub-plugins of the summarising manager: ``llm`` (default), ``drop``, and the offline stand-in.

A summarizer returns summary text, or None meaning "drop"; it raises when it *failed* (the manager
then keeps the verbatim tail and leaves its cache untouched so the next call retries).
"""

from typing import Any


def calls_a_model(summarizer: Any) -> bool:
    """Whether invoking ``summarizer`` counts as a summarizer call (Q20: model calls only).

    ``drop`` and an ``llm`` summarizer without a live engine fold older turns without any call; the
    offline stand-in counts, labelled as the stand-in of a model call; a third-party summarizer
    counts unless it declares ``calls_model = False``."""
    value = getattr(summarizer, "calls_model", True)
    return bool(value() if callable(value) else value)
