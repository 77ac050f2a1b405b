"""``summarising`` (package default): fold older turns into one summary block, keep the last N verbatim.

The hysteresis cache is what keeps the summarizer LLM from being called on every in-turn step:
once a summary of the first ``n`` turns exists, later calls reuse it while the view
``[summary] + turns[n:]`` stays under ``hint × (1 + hysteresis_ratio)``. The assembler divides the
hard budget by ``1 + r`` before handing it over as ``hint``, so a reused summary never pushes the
request past the safety-bounded budget (docs/design.md §3.2, §3.5).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.engine.budget import hysteresis_ceiling
from inspector.engine.history import flatten, split_user_turns
from inspector.engine.managers.base import BudgetTerms, CMDecision, ContextManager, Managed
from inspector.engine.summarizers import calls_a_model
from inspector.engine.types import Message
from inspector.params import SUMMARIZING, SummarizingParams

SUMMARY_PREFIX = "[Conversation summary — "


def summary_block(turns: int, text: str) -> Message:
    """The summary block format (a data format other tools recognise by its prefix)."""
    return {"role": "system", "content": f"{SUMMARY_PREFIX}{turns} earlier exchange(s)]\n{text}"}


def is_summary_block(msg: Message) -> bool:
    c = msg.get("content")
    return msg.get("role") == "system" and isinstance(c, str) and c.startswith(SUMMARY_PREFIX)


def summary_body(msg: Message) -> str:
    """The text of a summary block without its header line."""
    c = str(msg.get("content") or "")
    return c.split("\n", 1)[1] if "\n" in c else ""


def summary_turns(msg: Message) -> int:
    """How many earlier exchanges a summary block says it covers (0 when its header has no count)."""
    m = re.match(re.escape(SUMMARY_PREFIX) + r"(\d+) ", str(msg.get("content") or ""))
    return int(m.group(1)) if m else 0


def fingerprint(groups: Sequence[Sequence[Message]]) -> str:
    """SHA-256 over roles, contents, tool-call ids/names/arguments and tool_call_ids (docs/design.md Q13):
    two prefixes that differ only in tool ids must not share a summary."""
    h = hashlib.sha256()
    for group in groups:
        h.update(b"\x1e")
        for m in group:
            h.update(str(m.get("role")).encode("utf-8", "replace") + b"\x1f")
            c = m.get("content")
            h.update((c if isinstance(c, str) else repr(c)).encode("utf-8", "replace") + b"\x1f")
            for call in m.get("tool_calls") or ():
                fn = call.get("function", {}) if isinstance(call, dict) else {}
                fn = fn if isinstance(fn, dict) else {}
                h.update(f"{call.get('id') if isinstance(call, dict) else None}\x1d{fn.get('name')}\x1d"
                         f"{fn.get('arguments')}".encode("utf-8", "replace") + b"\x1f")
            h.update(str(m.get("tool_call_id")).encode("utf-8", "replace") + b"\x1c")
    return h.hexdigest()


@dataclass(slots=True)
class _Cache:
    text: str | None  # None = a drop (no block)
    n: int  # compressed groups
    identity: tuple[int, int, int]
    digest: str
    block: Message | None


class SummarizingConversation(ContextManager):
    """Keep the last ``keep_turns`` user turns verbatim; summarise (or drop) older ones when over budget.

    Guarantees: under the trigger the history passes unchanged and the cache is cleared; a summary
    is reused without a summarizer call while its view fits the hysteresis ceiling; a summarizer
    that raises leaves the cache untouched (the next call retries) and the call proceeds with the
    verbatim tail; with no summarizer (``drop``) older turns are discarded; when everything older
    than ``keep_turns`` is already the previous summary block, no summary is computed and the block
    is reused as is (decision ``reused``, Q23).
    """

    name = "summarising"
    accepts_summarizer = True

    def __init__(self, keep_turns: int = SUMMARIZING.keep_turns,
                 summary_threshold: int = SUMMARIZING.summary_threshold,
                 hysteresis_ratio: float = SUMMARIZING.hysteresis_ratio, summarizer: Any = None) -> None:
        """Defaults, checks and the hysteresis clamp come from :class:`~inspector.params.SummarizingParams`
        (a value it refuses raises ``ValueError`` naming the parameter)."""
        super().__init__()
        params = SummarizingParams.build(self.name, keep_turns=keep_turns, summary_threshold=summary_threshold,
                                         hysteresis_ratio=hysteresis_ratio)
        self.keep_turns = params.keep_turns
        self.summary_threshold = params.summary_threshold
        self.hysteresis_ratio = params.hysteresis_ratio
        self.summarizer: Any = None
        self._cache: _Cache | None = None
        if summarizer is not None:
            self.bind_summarizer(summarizer)

    @property
    def turn_cap(self) -> int | None:
        return self.keep_turns

    def budget_terms(self) -> BudgetTerms:
        return BudgetTerms(True, self.hysteresis_ratio, self.summary_threshold)

    def bind_summarizer(self, summarizer: Any) -> None:
        """None → drop; an object with ``summarize(msgs)``; or a plain callable."""
        self.summarizer = summarizer

    def _summarize(self, msgs: list[Message]) -> str | None:
        s = self.summarizer
        fn = getattr(s, "summarize", None) or s
        result: str | None = fn(msgs)
        return result

    def _identity(self, groups: Sequence[Sequence[Message]], n: int) -> tuple[int, int, int]:
        return (n, id(groups[0][0]), id(groups[n - 1][-1]))

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        if not past:
            self._cache = None
            decision = CMDecision("unchanged-under-budget")
            return Managed([], decision)
        high = hint if hint > 0 else self.summary_threshold
        raw = self.counter.count_history(past)
        if high <= 0 or raw <= high:
            self._cache = None
            decision = CMDecision("unchanged-under-budget", kept_turns=len(split_user_turns(past)),
                                  raw_tokens=raw, threshold=high)
            return Managed(list(past), decision)
        groups = split_user_turns(past)
        ceiling = hysteresis_ceiling(high, self.hysteresis_ratio)
        cache = self._cache
        if cache is not None and cache.n >= len(groups):
            self._cache = cache = None
        if cache is not None and 0 < cache.n < len(groups):
            ident = self._identity(groups, cache.n)
            same = ident == cache.identity
            if not same and fingerprint(groups[: cache.n]) == cache.digest:
                cache.identity = ident
                same = True
            if same:
                tail = flatten(groups[cache.n:])
                view = ([cache.block] if cache.block is not None else []) + tail
                if self.counter.count_history(view) <= ceiling:
                    folded = flatten(groups[: cache.n])
                    decision = CMDecision(
                        "reused" if cache.block is not None else "dropped",
                        compressed_turns=cache.n if cache.block is not None else 0,
                        dropped_turns=0 if cache.block is not None else cache.n,
                        kept_turns=len(groups) - cache.n, raw_tokens=raw, threshold=high, ceiling=ceiling,
                        summary_text=cache.text, folded=folded,
                        summary_model=getattr(self.summarizer, "model", None),
                        summary_model_source=getattr(self.summarizer, "model_source", None),
                    )
                    return Managed(view, decision)
        if len(groups) <= self.keep_turns:
            decision = CMDecision("unchanged-too-few-turns", kept_turns=len(groups), raw_tokens=raw,
                                  threshold=high, ceiling=ceiling)
            return Managed(list(past), decision)
        keep = self.keep_turns
        compress, verbatim_groups = groups[:-keep], groups[-keep:]
        m = len(compress)
        verbatim = flatten(verbatim_groups)
        folded = flatten(compress)
        model = getattr(self.summarizer, "model", None)
        source = getattr(self.summarizer, "model_source", None)
        older = flatten(compress)
        if older and all(is_summary_block(x) for x in older):
            # Q23: the only thing older than keep_turns is the previous summary: nothing new to fold,
            # so no summary is computed; it is reused as is and the decision records that.
            prev = older[-1]
            decision = CMDecision(
                "reused", compressed_turns=summary_turns(prev), kept_turns=len(verbatim_groups), raw_tokens=raw,
                threshold=high, ceiling=ceiling, summary_text=summary_body(prev), summary_model=model,
                summary_model_source=source,
            )
            return Managed(list(past), decision)
        text: str | None = None
        called = False
        if self.summarizer is not None:
            called = calls_a_model(self.summarizer)  # Q20: a drop or an offline llm folds, it is no call
            try:
                result = self._summarize(folded)
            except Exception as exc:  # noqa: BLE001 - any summarizer failure: verbatim tail, cache untouched
                decision = CMDecision(
                    "summarizer-failed", dropped_turns=m, kept_turns=keep, raw_tokens=raw, threshold=high,
                    ceiling=ceiling, summarizer_called=called, error=f"{type(exc).__name__}: {exc}",
                    folded=folded, summary_model=model, summary_model_source=source,
                )
                return Managed(verbatim, decision)
            text = result.strip() if isinstance(result, str) and result.strip() else None
        ident = self._identity(groups, m)
        digest = fingerprint(compress)
        if text is None:
            self._cache = _Cache(None, m, ident, digest, None)
            decision = CMDecision(
                "dropped", dropped_turns=m, kept_turns=keep, raw_tokens=raw, threshold=high, ceiling=ceiling,
                summarizer_called=called, folded=folded, summary_model=model, summary_model_source=source,
            )
            return Managed(verbatim, decision)
        block = summary_block(m, text)
        self._cache = _Cache(text, m, ident, digest, block)
        decision = CMDecision(
            "summarized", compressed_turns=m, kept_turns=keep, raw_tokens=raw, threshold=high, ceiling=ceiling,
            summarizer_called=called, summary_text=text, folded=folded, summary_model=model,
            summary_model_source=source,
        )
        return Managed([block, *verbatim], decision)
