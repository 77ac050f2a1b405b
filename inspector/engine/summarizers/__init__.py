"""Summarizer sub-plugins of the summarising manager: ``llm`` (default), ``drop``, and the offline stand-in.

A summarizer returns summary text, or None meaning "drop"; it raises when it *failed* (the manager
then keeps the verbatim tail and leaves its cache untouched so the next call retries).
"""
