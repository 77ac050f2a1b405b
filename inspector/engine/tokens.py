"""Token counters: one protocol, two implementations, every decision uses the same one (docs/design.md Q10).

* ``estimate`` reproduces the reference runtime exactly: E1 ``floor(C/4) + 4n`` over a list of
  messages (C = string content + tool-call names and arguments), E2 the same without tool calls
  (the summarising manager's trigger), E3 ``floor(len(json(tools))/4) + 4·len(tools)``.
* ``tiktoken`` uses the model's real encoding (o200k_base or cl100k_base) plus the provider's
  per-message overhead (3 tokens a message, 1 more for a ``name``).

Both are *additive over per-message units* followed by a cheap ``total(units, n)``: the trimmer
and the bands keep running sums instead of recounting lists. Units are cached per message
object, so a replay tokenises each transcript message exactly once whatever the number of calls
that include it. The cache holds a reference to the message so an ``id`` is never reused while
cached; one counter instance belongs to one replay or one live session.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from inspector.engine.types import Message
from inspector.plugins import default_registry


@runtime_checkable
class TokenCounter(Protocol):
    """What every token count goes through: per-message units (cached per message), their total for ``n``
    messages, and the tool schemas' tokens. ``name`` says which counter it is."""

    name: str

    def unit(self, msg: Message) -> int:
        """Additive units of one message for payload counting (E1 numerator for ``estimate``)."""

    def history_unit(self, msg: Message) -> int:
        """Additive units for the summarising manager's trigger (E2 numerator for ``estimate``)."""

    def total(self, units: int, n: int) -> int:
        """Token count of ``n`` messages whose units sum to ``units``."""

    def count(self, msgs: Iterable[Message]) -> int:
        """Tokens of ``msgs`` as a payload."""

    def count_history(self, msgs: Iterable[Message]) -> int:
        """Tokens of ``msgs`` as the summarising manager's trigger counts them."""

    def count_tools(self, tools: Sequence[dict[str, Any]] | None) -> int:
        """Tokens of the tool schemas (0 for none)."""

    @property
    def computed(self) -> int:
        """How many messages were actually tokenised (cache misses) — replay shows this never grows on re-use."""


def content_text(content: Any) -> str:
    """String content as is; text parts of a list joined (used by ``tiktoken`` only)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return ""


def _tool_calls(msg: Message) -> list[Any]:
    calls = msg.get("tool_calls")
    return calls if isinstance(calls, list) else []


class _CachedCounter:
    name = "base"
    additive = False
    """Whether ``total(units, n) == units`` for every ``n`` (the per-message overhead is inside each
    unit): callers may then compare running unit sums with a budget directly, e.g. bisect them."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Message, int, int]] = {}
        self._computed = 0

    def _measured(self, msg: Message, key: int) -> tuple[Message, int, int]:
        """Measure ``msg`` (not in the cache under ``key``, its id) and cache it: the miss path of
        :meth:`unit` and :meth:`history_unit`, which looked the key up already (one look-up, not two)."""
        self._computed += 1
        u = self._measure(msg)
        # a counter whose trigger units are its payload units measures each message once, not twice
        h = u if type(self)._measure_history is _CachedCounter._measure_history else self._measure_history(msg)
        entry = (msg, u, h)
        self._cache[key] = entry
        return entry

    def _measure(self, msg: Message) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def with_content(self, msg: Message, text: str) -> tuple[Message, int]:
        """A new row: ``msg`` with its content as ``text`` (its other fields kept), and its unit,
        cached as :meth:`unit` caches a row it measures (it counts in :attr:`computed`): what a
        strategy sends a row it replaces as (a placeholder), measured once, never asked again."""
        new = {**msg, "content": text}
        return new, self._measured(new, id(new))[1]

    def _measure_history(self, msg: Message) -> int:
        return self._measure(msg)

    def unit(self, msg: Message) -> int:
        key = id(msg)
        hit = self._cache.get(key)  # the hit path inline: a replay asks this once per row per call
        if hit is not None and hit[0] is msg:
            return hit[1]
        return self._measured(msg, key)[1]

    def history_unit(self, msg: Message) -> int:
        key = id(msg)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is msg:
            return hit[2]
        return self._measured(msg, key)[2]

    def prime(self, msgs: Iterable[Message]) -> None:
        """Measure every message of ``msgs`` not cached yet, back to back (a replay passes its
        transcript's rows before the first call).

        Why: it is the tokenisation the calls would do anyway, one new row at a time, but done in
        one tight pass the tokenizer's tables stay in the CPU caches from one message to the next
        instead of being evicted by the assembly work in between (measured: about 5 % of a whole
        replay, the same for every strategy). Guarantee: afterwards :meth:`unit` and
        :meth:`history_unit` of each of them is a cache hit, and no message is measured twice."""
        cache, measured = self._cache, self._measured
        for m in msgs:
            key = id(m)
            hit = cache.get(key)
            if hit is None or hit[0] is not m:
                measured(m, key)

    def total(self, units: int, n: int) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def count(self, msgs: Iterable[Message]) -> int:
        units = n = 0
        for m in msgs:
            units += self.unit(m)
            n += 1
        return self.total(units, n)

    def count_history(self, msgs: Iterable[Message]) -> int:
        units = n = 0
        for m in msgs:
            units += self.history_unit(m)
            n += 1
        return self.total(units, n)

    @property
    def computed(self) -> int:
        return self._computed

    def clear(self) -> None:
        self._cache.clear()


class EstimateCounter(_CachedCounter):
    """The reference runtime's character estimates (E1/E2/E3): the same numbers, hence the same
    decisions, as the reference runtime (docs/design.md §3.1)."""

    name = "estimate"

    def __init__(self, **_: object) -> None:
        """Made like every counter, with ``model=``, which a character estimate does not depend on."""
        super().__init__()

    def _measure(self, msg: Message) -> int:
        c = msg.get("content")
        chars = len(c) if isinstance(c, str) else 0
        for call in _tool_calls(msg):
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                chars += len(str(fn.get("name", ""))) + len(str(fn.get("arguments", "")))
        return chars

    def _measure_history(self, msg: Message) -> int:
        c = msg.get("content")
        return len(c) if isinstance(c, str) else 0

    def total(self, units: int, n: int) -> int:
        """``units // 4 + 4 * n``: four characters a token, four tokens a message."""
        return units // 4 + 4 * n

    def count_tools(self, tools: Sequence[dict[str, Any]] | None) -> int:
        """The schemas' JSON length // 4, plus 4 a tool (0 for none)."""
        if not tools:
            return 0
        return len(json.dumps(list(tools), ensure_ascii=False)) // 4 + 4 * len(tools)


_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "gpt-oss")


def encoding_name_for(model: str | None) -> str:
    """o200k_base for the GPT-4o generation and later, cl100k_base otherwise (an approximation for
    non-OpenAI models, the same one litellm makes)."""
    base = (model or "").lower().rsplit("/", 1)[-1]
    return "o200k_base" if base.startswith(_O200K_PREFIXES) else "cl100k_base"


class TiktokenCounter(_CachedCounter):
    """Real BPE counts, read offline from the files litellm's wheel ships (see ``inspector.offline``)."""

    name = "tiktoken"
    PER_MESSAGE = 3
    PER_NAME = 1
    additive = True  # total() below: the 3 tokens a message are already in its unit
    NAMES_KEPT = 256
    """How many distinct tool-call names a counter remembers the tokens of (a bound, not a cache policy:
    a real agent has a handful of tools; a transcript with thousands of names just encodes the rest)."""
    SHORT = 80
    """Message texts of at most this many characters have their tokens remembered (``SHORT_KEPT`` of
    them): a strategy's placeholder rows (``<MASKED>``, "[tool result cleared: lookup, 36 tokens]")
    repeat a few short texts thousands of times, each row a new message; a text's tokens depend on
    nothing but the text, so each such text is encoded once (remembered as the unit of a row that
    holds it and nothing else counted: :meth:`with_content` reads it)."""
    SHORT_KEPT = 1024

    def __init__(self, model: str | None = None, encoding: str | None = None) -> None:
        super().__init__()
        from inspector.offline import tiktoken_encoding

        self.encoding_name = encoding or encoding_name_for(model)
        self._enc = tiktoken_encoding(self.encoding_name)
        self._tools_last: tuple[str, int] | None = None  # the last tool-schema text and its count
        self._names: dict[str, int] = {}  # tool-call name -> its tokens (an agent calls a few tools, over and over)
        self._short: dict[str, int] = {}  # short message text -> the unit of a row of it alone (``SHORT``)
        # the memo answers a row's trigger units too unless a subclass measures those by a rule of its own
        self._memo_units = type(self)._measure_history is _CachedCounter._measure_history

    def text_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this counter's encoding (special tokens read as text)."""
        if not text:
            return 0
        return len(self._enc.encode(text, disallowed_special=()))

    def _measure(self, msg: Message) -> int:
        # every message of a replay comes through here once: a string content is its own text, an
        # empty text has no tokens and a message with no ``tool_calls`` key has no calls (no call each)
        c = msg.get("content")
        text = c if isinstance(c, str) else content_text(c)
        if not text:
            n = self.PER_MESSAGE
        elif len(text) <= self.SHORT:
            memo = self._short.get(text)
            if memo is None:
                memo = self.PER_MESSAGE + self.text_tokens(text)
                if len(self._short) < self.SHORT_KEPT:
                    self._short[text] = memo
            n = memo
        else:
            n = self.PER_MESSAGE + self.text_tokens(text)
        if msg.get("name"):
            n += self.PER_NAME + self.text_tokens(str(msg["name"]))
        for call in _tool_calls(msg) if "tool_calls" in msg else ():
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                name = str(fn.get("name", ""))
                k = self._names.get(name)
                if k is None:
                    k = self.text_tokens(name)
                    if len(self._names) < self.NAMES_KEPT:
                        self._names[name] = k
                n += 3 + k + self.text_tokens(str(fn.get("arguments", "")))
        return n

    def with_content(self, msg: Message, text: str) -> tuple[Message, int]:
        """:meth:`_CachedCounter.with_content`; a row with no ``name`` and no ``tool_calls`` whose
        short text was measured before has its unit read from :attr:`SHORT`'s memo (no measure)."""
        u = self._short.get(text) if "name" not in msg and "tool_calls" not in msg and self._memo_units else None
        if u is None:
            return super().with_content(msg, text)
        new = {**msg, "content": text}
        self._computed += 1
        self._cache[id(new)] = (new, u, u)  # (its trigger units are its payload units: :meth:`_measured`)
        return new, u

    def total(self, units: int, n: int) -> int:
        """``units`` itself: each message's overhead is inside its unit."""
        return units

    def count_tools(self, tools: Sequence[dict[str, Any]] | None) -> int:
        """Tokens of the tool schemas (0 for none); the last text's count is kept, since an agent
        sends the same schemas on every call."""
        if not tools:
            return 0
        text = json.dumps(list(tools), ensure_ascii=False)
        last = self._tools_last
        if last is not None and last[0] == text:
            return last[1]
        n = self.text_tokens(text) + 4 * len(tools)
        self._tools_last = (text, n)
        return n


def content_swap(counter: TokenCounter) -> Callable[[Message, str], tuple[Message, int]]:
    """What answers ``(row with its content as text, its unit)`` for ``counter``: its own
    ``with_content`` (a built-in counter's :meth:`_CachedCounter.with_content`: the new row measured
    once and cached, or its unit read from a memo), else a copy counted by ``counter.unit``."""
    own: Callable[[Message, str], tuple[Message, int]] | None = getattr(counter, "with_content", None)
    if own is not None:
        return own

    def swap(msg: Message, text: str) -> tuple[Message, int]:
        new = {**msg, "content": text}
        return new, counter.unit(new)

    return swap


def make_counter(kind: str = "tiktoken", model: str | None = None) -> TokenCounter:
    """A fresh counter (one cache per replay/session) of the registry's ``counter`` slot named ``kind``
    (``"tiktoken"``, ``"estimate"`` or one an installed package registers), made by calling its factory
    with ``model=``; raises ValueError for a name no counter has."""
    specs = default_registry().specs("counter")
    spec = next((s for s in specs if s.name == kind), None)
    if spec is None:
        names = [repr(s.name) for s in specs]
        expected = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        raise ValueError(f"unknown token counter {kind!r} (expected {expected})")
    made: TokenCounter = spec.load()(model=model)
    return made
