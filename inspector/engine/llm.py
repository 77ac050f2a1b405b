"""The live model connection (what the reference calls the agent's engine), through litellm.

It is never part of a manifest: a caller creates one (model, api_base, key) and hands it to the
engine. Failures come back as :class:`LLMCallError` with a short reason ("HTTP 500", "timeout",
"malformed response", "empty content") so the inspector can show *why* a summary failed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from inspector.engine.types import Message
from inspector.errors import InspectorError


class LLMCallError(InspectorError, RuntimeError):
    """A model call failed; ``reason`` classifies it (authentication, rate limit, timeout, ...), the message
    adds the provider's words."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(slots=True)
class Completion:
    """One model call's answer: its text, the model that answered and the reported usage."""

    text: str
    model: str
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class LLMEngine:
    """How the engine calls a model through LiteLLM: the default ``model``, an ``api_base`` and ``api_key``, a
    ``timeout`` in seconds, retries and extra keywords for every call. Its ``repr`` never shows the
    key."""

    model: str
    api_base: str | None = None
    api_key: str | None = None
    timeout: float = 60.0
    num_retries: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:  # never print the key
        return f"LLMEngine(model={self.model!r}, api_base={self.api_base!r}, api_key={'***' if self.api_key else None})"

    def complete(self, messages: list[Message], *, model: str | None = None, **kwargs: Any) -> Completion:
        """One completion of ``messages`` with ``model`` (default: the engine's); returns a
        :class:`Completion`. Raises :class:`LLMCallError` when the provider fails or answers with
        no text."""
        from inspector.offline import litellm

        lm = litellm()
        call_model = model or self.model
        args: dict[str, Any] = {"model": call_model, "messages": messages, "timeout": self.timeout,
                                "num_retries": self.num_retries, **self.extra, **kwargs}
        if self.api_base:
            args["api_base"] = self.api_base
        if self.api_key:
            args["api_key"] = self.api_key
        try:
            resp = lm.completion(**args)
        except Exception as exc:  # noqa: BLE001 - classify every provider failure
            raise LLMCallError(_classify(exc), _short(exc)) from exc
        try:
            text = resp.choices[0].message.content
        except (AttributeError, IndexError, KeyError, TypeError) as exc:
            raise LLMCallError("malformed response", _short(exc)) from exc
        if not isinstance(text, str) or not text.strip():
            raise LLMCallError("empty content")
        usage: dict[str, Any] = {}
        u = getattr(resp, "usage", None)
        if u is not None:
            for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
                v = getattr(u, k, None)
                if isinstance(v, int):
                    usage[k] = v
        return Completion(text=text, model=call_model, usage=usage)


def _short(exc: BaseException) -> str:
    s = str(exc).strip().splitlines()
    return (s[0] if s else type(exc).__name__)[:300]


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and its causes (litellm wraps the underlying error two or three levels deep)."""
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out and len(out) < 10:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def _classify(exc: BaseException) -> str:
    name = type(exc).__name__.lower()
    status = getattr(exc, "status_code", None)
    chain = _chain(exc)
    if "timeout" in name or any("timeout" in type(e).__name__.lower() for e in chain):
        return "timeout"
    # litellm reports both of these as an InternalServerError (status 500) with the real cause
    # underneath: a 200 answer whose body is not JSON, and no answer at all (connection refused).
    if any(isinstance(e, json.JSONDecodeError) for e in chain):
        return "malformed response"
    if any(isinstance(e, ConnectionError) or "connecterror" in type(e).__name__.lower()
           or "connectionerror" in type(e).__name__.lower() for e in chain):
        return "unreachable"
    if "ratelimit" in name or status == 429:
        return "HTTP 429"
    if isinstance(status, int):
        return f"HTTP {status}"
    if "json" in name or "malformed" in str(exc).lower():
        return "malformed response"
    if "connection" in name:
        return "unreachable"
    return type(exc).__name__
