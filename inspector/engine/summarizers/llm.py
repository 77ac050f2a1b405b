"""``llm`` summarizer: compress older turns with a model through litellm (docs/design.md §3.6).

Prompt: exactly two messages — ``system`` = the instructions (``params.instructions`` or the
package default), ``user`` = the messages to compress as one JSON array (Python default
separators, no indentation, non-serialisable values stringified).

Model choice: omitted/``any`` → the ``spec.models[id=summarizer]`` row if it names a concrete model,
else the agent's model (source ``agent``); a ``spec.models[].id`` → that row's model; the agent's
own model string → ``agent``; anything else → used as a LiteLLM id (source ``override``).

Without a live engine it behaves like ``drop`` and warns once. One deliberate choice beyond the
reference: a *live* call that returns empty content is a failure (``LLMCallError``), not a drop —
an empty answer from a model is a fault to show, not a decision to forget history.

Real summaries can be cached on disk (:class:`SummaryCache`), keyed by model, instructions and
input, so replaying the same transcript twice costs one set of calls.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspector.engine.llm import LLMEngine
from inspector.engine.summarizers import PricedUsage
from inspector.engine.types import Message
from inspector.params import LLMSummarizerParams

DEFAULT_INSTRUCTIONS = (
    "You compress the earlier part of a conversation between a user and an AI agent so the agent can "
    "continue it. Write a concise plain-prose summary (not a transcript) that preserves facts, decisions, "
    "open questions and every identifier exactly: names, ids, numbers, dates, file paths, tool results "
    "that later steps rely on. Do not invent anything."
)


def resolve_summary_model(requested: str | None, models: Sequence[Any], agent_model: str | None) -> tuple[str | None, str]:
    """(model, source) per docs/design.md §3.6, Q16. ``models`` rows need ``id`` and ``model``."""

    def concrete(row: Any) -> str | None:
        m = getattr(row, "model", None)
        return None if m in (None, "", "any") else str(m)

    rows = {str(getattr(r, "id", "main") or "main"): r for r in models}
    if requested in (None, "", "any"):
        row = rows.get("summarizer")
        if row is not None and concrete(row):
            return concrete(row), "spec.models[id=summarizer]"
        return agent_model, "agent"
    if requested in rows:
        m = concrete(rows[requested])
        return (m, f"spec.models[id={requested}]") if m else (agent_model, "agent")
    if requested == agent_model:
        return agent_model, "agent"
    return requested, "override"


def build_prompt(messages: Sequence[Message], instructions: str | None = None) -> list[Message]:
    """The summary call's messages: ``instructions`` (default :data:`DEFAULT_INSTRUCTIONS`) as the system row,
    ``messages`` as JSON in the user row."""
    return [
        {"role": "system", "content": instructions or DEFAULT_INSTRUCTIONS},
        {"role": "user", "content": json.dumps(list(messages), default=str)},
    ]


class SummaryCache:
    """On-disk cache of real summaries; one JSON file per key, written atomically (temp + rename),
    so a crash mid-write never leaves a file that later loads wrong data. A corrupt file is a miss."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(model: str | None, instructions: str, prompt_input: str) -> str:
        """The cache key of one summary call: a SHA-256 over the model, the instructions and the prompt's
        input."""
        h = hashlib.sha256()
        for part in (model or "", instructions, prompt_input):
            h.update(part.encode("utf-8", "replace") + b"\x00")
        return h.hexdigest()

    def get(self, key: str) -> str | None:
        """The cached summary for ``key``, or None (a missing, unreadable or mismatched file is a miss)."""
        path = self.folder / f"{key}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.misses += 1
            return None
        if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("text"), str):
            self.misses += 1
            return None
        self.hits += 1
        text: str = data["text"]
        return text

    def put(self, key: str, text: str, model: str | None) -> None:
        """Write ``text`` for ``key`` atomically (temporary file, then rename). Raises :class:`OSError` when
        the folder cannot be written."""
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"key": key, "model": model, "text": text}, f)
            os.replace(tmp, self.folder / f"{key}.json")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


class LLMSummarizer(PricedUsage):
    """Compresses older turns with one model call through ``llm`` (no engine: it folds like ``drop``).

    ``model`` is a ``spec.models[]`` id or a LiteLLM id (None: the summarizer row of ``models``, else
    the agent's, :func:`resolve_summary_model`); ``instructions`` the summary call's system prompt
    (None: :data:`DEFAULT_INSTRUCTIONS`); ``cache`` a :class:`SummaryCache` that keeps paid-for
    summaries across runs."""

    label = "llm"

    def __init__(self, model: str | None = None, instructions: str | None = None, *,
                 llm: LLMEngine | None = None, models: Sequence[Any] = (),
                 cache: SummaryCache | None = None) -> None:
        self.llm = llm
        self.instructions = instructions or DEFAULT_INSTRUCTIONS
        self.model, self.model_source = resolve_summary_model(model, models, llm.model if llm else None)
        self.cache = cache
        self.calls = 0  # live model calls made (cache hits excluded)
        self.usage: list[dict[str, Any]] = []
        self.warned_no_llm = False  # once per summarizer (one per replay), not once per process

    @classmethod
    def from_params(cls, params: LLMSummarizerParams, *, llm: LLMEngine | None = None, models: Sequence[Any] = (),
                    cache: SummaryCache | None = None) -> LLMSummarizer:
        """The summarizer a manifest binds, from its validated params (``model``, ``instructions``),
        calling through ``llm`` with the manifest's ``models`` rows and ``cache``."""
        return cls(params.model, params.instructions, llm=llm, models=models, cache=cache)

    @property
    def calls_model(self) -> bool:
        """Only with a live engine is a summary a model call; without one it folds like ``drop`` (Q20)."""
        return self.llm is not None

    def summarize(self, messages: list[Message]) -> str | None:
        """The summary of ``messages`` from one model call (or the cache); None, with one warning, when there
        is no live engine. Raises :class:`~inspector.engine.llm.LLMCallError` when the call fails."""
        if self.llm is None:
            if not self.warned_no_llm:
                self.warned_no_llm = True
                warnings.warn("summarizer 'llm' has no live engine: older turns are dropped", stacklevel=2)
            return None
        prompt = build_prompt(messages, self.instructions)
        key = None
        if self.cache is not None:
            key = SummaryCache.key(self.model, self.instructions, prompt[1]["content"])
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        self.calls += 1
        result = self.llm.complete(prompt, model=self.model)
        self.usage.append(result.usage)
        text = result.text.strip()
        if self.cache is not None and key is not None:
            try:
                self.cache.put(key, text, self.model)
            except OSError as exc:  # the cache is an optimisation: a paid-for summary is never thrown away
                warnings.warn(f"summary cache not written ({exc}); the summary is used anyway", stacklevel=2)
        return text
