"""Provider prompt caching: which input tokens of each call a provider serves from its cache.

A payload is seen as a sequence of **rows**, each with its token count: the head rows first (tool
schemas, then the system text), then the messages. A provider caches *prefixes* of that sequence;
a later call whose payload starts with a cached prefix reads it at the cache rate. Three rules
(docs/design.md "Prompt caching" cites the provider pages they follow):

* ``none``: nothing is cached.
* ``openai``: automatic prefix caching. A prompt of :attr:`CacheRule.min_tokens` (1 024) tokens or
  more is stored whole; a later prompt reads the longest prefix it shares with a stored one, counted
  in :attr:`CacheRule.step` (128) token steps and only from the minimum on. Writes are not billed.
* ``anthropic``: explicit ``cache_control`` breakpoints, in the usual agent placement: one after the
  head rows (tools and system) and one on the last row. Each breakpoint whose prefix holds at
  least :attr:`CacheRule.min_tokens` tokens is stored; a breakpoint reads the longest stored prefix
  ending at most :attr:`CacheRule.lookback` rows before it. Tokens between the prefix read and the
  last stored breakpoint are written (billed at the write rate); the rest are ordinary input.

Entries live :attr:`CacheRule.ttl` seconds after their last use (a hit refreshes an entry); when the
calls carry no time, entries never expire. Rows are compared whole: a changed row shares no tokens
with the row it replaced.

:class:`PromptCache` follows a sequence of calls incrementally: each call names how many leading
rows are unchanged since the previous call and gives either the token counts of the rows after
them (:meth:`PromptCache.call`) or a function giving the tokens of any leading rows
(:meth:`PromptCache.call_prefix`, asked a handful of rows a call), so a call never walks the rows
it shares with the previous one. :func:`reference_calls` computes the same records by
comparing whole payloads; the two agree whenever changed rows are new rows (an agent's payload
never returns to a branch it left).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from inspector.engine.limits import litellm_model_entry
from inspector.errors import InspectorError

RULE_NAMES: tuple[str, ...] = ("none", "openai", "anthropic")
"""The cache rules, by the name a manifest or the command line may give to override the provider's."""

FIVE_MINUTES = 300.0
OPENAI_MIN_TOKENS = 1_024
OPENAI_STEP = 128
ANTHROPIC_MIN_TOKENS = 1_024
ANTHROPIC_SMALL_MIN_TOKENS = 2_048
ANTHROPIC_LOOKBACK = 20
MAX_BREAKPOINTS = 4

OPENAI_PROVIDERS: frozenset[str] = frozenset({"openai", "azure", "text-completion-openai"})
"""litellm ``litellm_provider`` values served with OpenAI's automatic prefix caching."""
ANTHROPIC_PROVIDERS: frozenset[str] = frozenset({"anthropic", "vertex_ai-anthropic_models"})
"""litellm ``litellm_provider`` values that serve Claude with ``cache_control`` breakpoints (Bedrock's
entries count too when the entry names a Claude model)."""


class CacheRuleError(InspectorError, ValueError):
    """A cache rule name that is not one of :data:`RULE_NAMES`, a rule with impossible settings,
    or a call that does not fit the previous one (more unchanged rows than it had, a negative count)."""


@dataclass(frozen=True, slots=True)
class CacheRule:
    """How one provider caches prompt prefixes.

    ``name`` is one of :data:`RULE_NAMES`; ``min_tokens`` the shortest cacheable prefix (OpenAI: the
    whole prompt; Anthropic: the prefix up to a breakpoint); ``step`` the granularity of a hit
    (OpenAI 128, Anthropic 1); ``ttl`` the seconds an entry lives after its last use; ``head_mark``
    whether a breakpoint follows the head rows and ``tail_marks`` how many of the last rows carry
    one (Anthropic only; together at most four); ``lookback`` how many rows before a breakpoint a
    hit is looked for (Anthropic: about 20 content blocks); ``source`` where the rule came from, in
    words. Raises :class:`CacheRuleError` when the name is unknown or the settings are impossible."""

    name: str
    min_tokens: int = 0
    step: int = 1
    ttl: float = FIVE_MINUTES
    head_mark: bool = False
    tail_marks: int = 0
    lookback: int = ANTHROPIC_LOOKBACK
    source: str = ""

    def __post_init__(self) -> None:
        if self.name not in RULE_NAMES:
            raise CacheRuleError(f"unknown cache rule {self.name!r}: expected one of {', '.join(RULE_NAMES)}")
        if self.step < 1 or self.min_tokens < 0 or self.ttl <= 0 or self.lookback < 0 or self.tail_marks < 0:
            raise CacheRuleError(f"cache rule {self.name!r}: step ≥ 1, min_tokens ≥ 0, ttl > 0, lookback ≥ 0 "
                                 "and tail_marks ≥ 0 are required")
        if int(self.head_mark) + self.tail_marks > MAX_BREAKPOINTS:
            raise CacheRuleError(f"cache rule {self.name!r}: at most {MAX_BREAKPOINTS} cache_control breakpoints")

    def readable(self, tokens: int) -> int:
        """The tokens a hit on a stored prefix of ``tokens`` tokens serves: OpenAI's hits come in
        whole steps from the minimum on (a 1 300-token prefix serves 1 280, a 1 023-token one
        nothing); an Anthropic entry serves all of itself; ``none`` serves nothing."""
        if self.name == "none" or tokens < self.min_tokens:
            return 0
        return tokens - tokens % self.step


NO_CACHE = CacheRule("none", source="no cache rule")


def openai_rule(*, ttl: float = FIVE_MINUTES, source: str = "openai rule") -> CacheRule:
    """OpenAI's automatic prefix caching: prompts of 1 024+ tokens, hits in 128-token steps, entries
    living ``ttl`` seconds after their last use (5 minutes by default; the provider keeps them 5 to
    10 minutes, longer off-peak)."""
    return CacheRule("openai", min_tokens=OPENAI_MIN_TOKENS, step=OPENAI_STEP, ttl=ttl, source=source)


def anthropic_rule(*, min_tokens: int = ANTHROPIC_MIN_TOKENS, ttl: float = FIVE_MINUTES, tail_marks: int = 1,
                   source: str = "anthropic rule") -> CacheRule:
    """Anthropic's explicit breakpoints in the usual agent placement: after the head rows and on the
    last ``tail_marks`` rows; a prefix of fewer than ``min_tokens`` tokens is not cached; entries
    live ``ttl`` seconds (5 minutes) after their last use. Raises :class:`CacheRuleError` when the
    placement needs more than four breakpoints."""
    return CacheRule("anthropic", min_tokens=min_tokens, ttl=ttl, head_mark=True, tail_marks=tail_marks,
                     source=source)


def anthropic_min_tokens(model: str, info: dict[str, Any] | None) -> int:
    """The minimum cacheable prefix of a Claude model: the model map's ``prompt_cache_min_tokens``
    when it has one, else 2 048 for the small Haiku models and 1 024 for the others."""
    value = (info or {}).get("prompt_cache_min_tokens")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return int(value)
    return ANTHROPIC_SMALL_MIN_TOKENS if "haiku" in model.lower() else ANTHROPIC_MIN_TOKENS


def provider_family(entry: str, info: dict[str, Any]) -> str:
    """The rule name a litellm model-map entry's ``litellm_provider`` implies: ``openai``,
    ``anthropic`` (Claude on Anthropic, Vertex AI or Bedrock) or ``none``."""
    provider = str(info.get("litellm_provider") or "")
    if provider in OPENAI_PROVIDERS:
        return "openai"
    if provider in ANTHROPIC_PROVIDERS or (provider.startswith("bedrock") and "claude" in entry.lower()):
        return "anthropic"
    return "none"


def rule_for_model(model: str | None, name: str | None = None) -> CacheRule:
    """The cache rule for ``model``: ``name`` (one of :data:`RULE_NAMES`) when given, else the one
    its provider implies in litellm's model map (:func:`provider_family`; read the way
    :func:`inspector.engine.limits.litellm_model_entry` reads windows and prices). An unknown model
    gets :data:`NO_CACHE` unless a name is given. Raises :class:`CacheRuleError` for an unknown name."""
    found = litellm_model_entry(model) if model else None
    if name is not None and name not in RULE_NAMES:
        raise CacheRuleError(f"unknown cache rule {name!r}: expected one of {', '.join(RULE_NAMES)}")
    family = name or (provider_family(*found) if found else "none")
    if name:
        source = f"cache rule {name} (set by name)"
    elif found:
        source = f"litellm entry {found[0]}: provider {found[1].get('litellm_provider')}"
    else:
        source = (f"no litellm entry for model {model}: no cache rule" if model else
                  "no model named, so no provider: no cache rule")
    if family == "openai":
        return openai_rule(source=source)
    if family == "anthropic":
        return anthropic_rule(min_tokens=anthropic_min_tokens(model or "", found[1] if found else None),
                              source=source)
    return CacheRule("none", source=source)


class CallCache(NamedTuple):
    """What the provider's cache did for one call (immutable: a :class:`~typing.NamedTuple`, like
    :class:`~inspector.engine.budget.Budget`, built once per call of every replay's account).

    ``input``: the call's input tokens (the sum of its rows). ``cached``: tokens read from the cache
    (billed at the cache-read rate). ``written``: tokens written to the cache by this call (billed at
    the cache-write rate; always 0 under ``openai`` and ``none``). ``uncached``: the rest, billed at
    the ordinary input rate; ``cached + written + uncached == input``. ``broke_at``: the first row
    that changed since the previous call when that change cut a cached prefix that was still alive
    (the number of unchanged leading rows), else None. ``lost``: the tokens that cut prefix could
    have served past ``broke_at`` (0 when ``broke_at`` is None)."""

    input: int
    cached: int
    written: int
    uncached: int
    broke_at: int | None = None
    lost: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The record as a JSON object, fields in declaration order."""
        return {"input": self.input, "cached": self.cached, "written": self.written, "uncached": self.uncached,
                "broke_at": self.broke_at, "lost": self.lost}


_new_call_cache: Callable[[type[CallCache], tuple[Any, ...]], CallCache] = tuple.__new__
"""``CallCache(*fields)`` made by the tuple's own constructor, without the named tuple's Python-level
``__new__`` (a replay's account makes one a call)."""


@dataclass(slots=True)
class _Entry:
    """One stored prefix: the payload's first ``rows`` rows, ``tokens`` tokens, alive until ``expires``."""

    rows: int
    tokens: int
    expires: float


def _rows(entry: _Entry) -> int:
    return entry.rows


def _breakpoints(rule: CacheRule, n: int, head: int) -> list[int]:
    """The row boundaries that carry a breakpoint in a payload of ``n`` rows (sorted, distinct)."""
    marks = {n - i for i in range(rule.tail_marks) if n - i > 0}
    if rule.head_mark and 0 < head <= n:
        marks.add(head)
    return sorted(marks)


class PromptCache:
    """The provider's cache as a sequence of calls sees it, kept incrementally.

    Made with a :class:`CacheRule` and ``head``, the number of leading rows that hold the tool
    schemas and the system text (where the head breakpoint goes). Each call is given either by
    :meth:`call` (the token counts of the rows after the unchanged ones) or by :meth:`call_prefix`
    (a function giving the tokens of any leading rows); use one of the two for a whole sequence.
    The state is the cached prefixes of the previous payload, each a number of rows, its tokens
    and an expiry time; prefixes of rows that changed are forgotten (they can never match again
    when changed rows are new rows)."""

    def __init__(self, rule: CacheRule, head: int = 1) -> None:
        self.rule, self.head = rule, head
        self._cum: list[int] = [0]  # for call(): _cum[j] is the tokens of the payload's first j rows
        self._rows = 0  # rows of the previous payload
        self._entries: list[_Entry] = []  # sorted by rows
        self._now = 0.0

    def call(self, kept: int, new_rows: Sequence[int], at: float | None = None) -> CallCache:
        """The cache record of the next call, whose payload is the previous payload's first ``kept``
        rows followed by rows of ``new_rows`` tokens, made at ``at`` seconds (None: no time known,
        taken as the previous call's). Time never runs backwards: an earlier ``at`` counts as the
        latest seen. Costs in proportion to ``new_rows``. Raises :class:`CacheRuleError` when
        ``kept`` exceeds the previous payload's rows or a count is negative."""
        cum = self._cum
        if len(cum) != self._rows + 1:
            raise CacheRuleError("call() after call_prefix(): give a sequence of calls one way")
        if any(t < 0 for t in new_rows):
            raise CacheRuleError("a row's token count must not be negative")
        self._check(kept, kept + len(new_rows))
        del cum[kept + 1:]
        total = cum[-1]
        for t in new_rows:
            total += t
            cum.append(total)
        return self.call_prefix(kept, len(cum) - 1, cum.__getitem__, at)

    def call_prefix(self, kept: int, rows: int, tokens_upto: Callable[[int], int],
                    at: float | None = None) -> CallCache:
        """The cache record of the next call, a payload of ``rows`` rows whose first ``kept`` are the
        previous payload's: ``tokens_upto(j)`` gives the tokens of its first ``j`` rows (non-decreasing
        in ``j``). It is asked about a handful of rows a call (the unchanged ones, the breakpoints,
        the whole), so a caller that knows the payload as runs of rows never counts row by row.
        ``at`` as for :meth:`call`. Raises :class:`CacheRuleError` when ``kept`` exceeds the previous
        payload's rows or ``rows``."""
        if not 0 <= kept <= self._rows or rows < kept:
            self._check(kept, rows)
        if at is not None and at > self._now:
            self._now = float(at)
        entries = self._entries
        broke_at, lost = self._cut(kept, tokens_upto) if entries and entries[-1].rows > kept else (None, 0)
        self._rows = rows
        total = tokens_upto(rows)
        if self.rule.name == "openai":
            cached, written = self._openai(rows, total), 0
        elif self.rule.name == "anthropic":
            cached, written = self._anthropic(rows, tokens_upto)
        else:
            cached = written = 0
        return _new_call_cache(CallCache, (total, cached, written, total - cached - written, broke_at, lost))

    def _check(self, kept: int, rows: int) -> None:
        if not 0 <= kept <= self._rows:
            raise CacheRuleError(f"{kept} unchanged rows, but the previous call had {self._rows}")
        if rows < kept:
            raise CacheRuleError(f"{kept} unchanged rows in a payload of {rows}")

    def _alive(self, entry: _Entry) -> bool:
        return self._now <= entry.expires

    def _cut(self, kept: int, tokens_upto: Callable[[int], int]) -> tuple[int | None, int]:
        """Forget the prefixes longer than ``kept`` rows (an OpenAI entry shrinks to ``kept``: a partial
        match still serves); the break, if a live one of them served more than ``kept`` rows do. Asked
        only when the last entry is longer than ``kept`` rows (:meth:`call_prefix`)."""
        entries, now = self._entries, self._now
        entry = entries.pop()  # the longest entry (entries are sorted by rows): the usual only one
        expires = entry.expires
        longest = entry if now <= expires else None  # the longest live one
        while entries and entries[-1].rows > kept:
            entry = entries.pop()
            if longest is None and now <= entry.expires:  # alive
                longest = entry
            if entry.expires > expires:
                expires = entry.expires
        kept_tokens = tokens_upto(kept)
        if longest is None:
            lost = 0
        else:
            readable = self.rule.readable
            lost = readable(longest.tokens) - readable(kept_tokens)
        if self.rule.name == "openai":
            if entries and entries[-1].rows == kept:
                entries[-1].expires = max(entries[-1].expires, expires)
            else:  # the last entry cut off, shrunk to the kept rows (the record reused: no longer listed)
                entry.rows, entry.tokens, entry.expires = kept, kept_tokens, expires
                entries.append(entry)
        return (kept, lost) if lost > 0 else (None, 0)

    def _openai(self, rows: int, total: int) -> int:
        """Read the longest live stored prompt (all stored prompts now prefix this one up to the
        unchanged rows), then store this whole prompt when it is long enough."""
        entries, rule, now = self._entries, self.rule, self._now
        hit = None
        for e in reversed(entries):
            if now <= e.expires:
                hit = e
                break
        cached = rule.readable(hit.tokens) if hit is not None else 0
        if hit is not None and cached:
            hit.expires = now + rule.ttl
        if total >= rule.min_tokens:
            if len(entries) == 1:  # the stored prompt is replaced by this one: reuse its record
                e = entries[0]
                e.rows, e.tokens, e.expires = rows, total, now + rule.ttl
            else:
                entries[:] = [_Entry(rows, total, now + rule.ttl)]
        return cached

    def _hit(self, boundary: int) -> _Entry | None:
        """The longest live entry ending at most ``lookback`` rows before ``boundary``."""
        entries, low = self._entries, boundary - self.rule.lookback
        k = bisect.bisect_right(entries, boundary, key=_rows)
        while k > 0 and entries[k - 1].rows >= low:
            k -= 1
            if self._alive(entries[k]):
                return entries[k]
        return None

    def _anthropic(self, rows: int, tokens_upto: Callable[[int], int]) -> tuple[int, int]:
        """Read at each breakpoint, refresh what was read, store each long-enough breakpoint's prefix."""
        rule, entries = self.rule, self._entries
        marks = _breakpoints(rule, rows, self.head)
        expires = self._now + rule.ttl
        read = 0
        for hit in [h for h in map(self._hit, marks) if h is not None]:
            read = max(read, hit.tokens)
            hit.expires = expires
        top = 0
        for b in marks:
            tokens = tokens_upto(b)
            if tokens < rule.min_tokens:
                continue
            top = tokens
            k = bisect.bisect_left(entries, b, key=_rows)
            if k < len(entries) and entries[k].rows == b:
                entries[k].expires = expires
            else:
                entries.insert(k, _Entry(b, tokens, expires))
        return read, max(0, top - read)


def reference_calls(rule: CacheRule, payloads: Sequence[tuple[Sequence[Hashable], Sequence[int]]],
                    times: Sequence[float | None] | None = None, head: int = 1) -> list[CallCache]:
    """The cache records of a sequence of calls, from whole payloads: each payload is ``(keys, tokens)``,
    one key and one token count per row. Every stored prefix is kept and compared row by row with
    each new payload (no incremental state): the definition :class:`PromptCache` must agree with.
    ``times``: each call's time in seconds (None: not known)."""
    stored: dict[tuple[Hashable, ...], float] = {}  # prefix keys -> expires
    now = 0.0
    prev_keys: tuple[Hashable, ...] = ()
    prev_cum = [0]
    out: list[CallCache] = []
    for i, (keys, tokens) in enumerate(payloads):
        at = times[i] if times is not None else None
        now = max(now, at) if at is not None else now
        keys = tuple(keys)
        cum = [0]
        for t in tokens:
            cum.append(cum[-1] + t)
        kept = common_prefix(prev_keys, keys)
        cut = max((common_prefix(k, prev_keys) for k, exp in stored.items() if now <= exp
                   and common_prefix(k, prev_keys) > kept and (rule.name == "openai" or len(k) == common_prefix(k, prev_keys))),
                  default=None)
        lost = 0 if cut is None else rule.readable(prev_cum[cut]) - rule.readable(prev_cum[kept])
        if rule.name == "openai":
            cached, written = _reference_openai(rule, stored, keys, cum, now), 0
        elif rule.name == "anthropic":
            cached, written = _reference_anthropic(rule, stored, keys, cum, now, head)
        else:
            cached = written = 0
        out.append(CallCache(cum[-1], cached, written, cum[-1] - cached - written,
                             kept if lost > 0 else None, max(lost, 0)))
        prev_keys, prev_cum = keys, cum
    return out


def common_prefix(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """How many first entries ``a`` and ``b`` share (equal, position by position)."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _reference_openai(rule: CacheRule, stored: dict[tuple[Hashable, ...], float], keys: tuple[Hashable, ...],
                      cum: list[int], now: float) -> int:
    best = max((common_prefix(k, keys) for k, exp in stored.items() if now <= exp), default=0)
    cached = rule.readable(cum[best])
    if cached:
        for k, exp in list(stored.items()):
            if now <= exp and common_prefix(k, keys) == best:
                stored[k] = now + rule.ttl
    if cum[-1] >= rule.min_tokens:
        stored[keys] = now + rule.ttl
    return cached


def _reference_anthropic(rule: CacheRule, stored: dict[tuple[Hashable, ...], float], keys: tuple[Hashable, ...],
                         cum: list[int], now: float, head: int) -> tuple[int, int]:
    marks = _breakpoints(rule, len(keys), head)
    read = 0
    for b in marks:
        for j in range(b, max(0, b - rule.lookback) - 1, -1):
            if now <= stored.get(keys[:j], -1.0):
                stored[keys[:j]] = now + rule.ttl
                read = max(read, j)
                break
    kept_marks = [b for b in marks if cum[b] >= rule.min_tokens]
    for b in kept_marks:
        stored[keys[:b]] = now + rule.ttl
    top = kept_marks[-1] if kept_marks else 0
    return cum[read], max(0, cum[top] - cum[read])


_TEN_PLACES = 1e10
_TEN_PLACES_FAST_BELOW = float(2 ** 40)  # scaled values up to here: an ulp at most 2⁻¹³


def round10(x: float) -> float:
    """``round(x, 10)``, the same float, mostly without writing ``x`` as decimal digits (``round`` with
    places does: about 30 times a product's cost, and an account rounds two or three costs a call).
    The scaled value ``y = x · 10¹⁰`` (1 ≤ y < 2⁴⁰) is within half an ulp (≤ 2⁻¹⁴) of the exact
    product; when ``y`` is further than 0.001 from a half-way point, both round to the same integer
    ``n``, and ``n / 10¹⁰`` (two exact doubles, the quotient correctly rounded) is the double nearest
    to ``n · 10⁻¹⁰``: what ``round`` returns. Any other value (near a half, below 10⁻¹⁰, large,
    negative, not finite, or not a float: ``round`` keeps an int an int) is rounded by ``round`` itself."""
    y = x * _TEN_PLACES
    if 1.0 <= y < _TEN_PLACES_FAST_BELOW and type(x) is float:
        n = round(y)
        if -0.499 < y - n < 0.499:
            return n / _TEN_PLACES
    return round(x, 10)


@dataclass(frozen=True, slots=True)
class CachePrices:
    """USD per token of one model: ``input`` (litellm ``input_cost_per_token``), ``read``
    (``cache_read_input_token_cost``), ``write`` (``cache_creation_input_token_cost``), each None when
    the model map has no such price; ``source`` names the entry."""

    input: float | None
    read: float | None
    write: float | None
    source: str | None = None

    def missing(self, call: CallCache) -> tuple[str, ...]:
        """The litellm price fields a cost of ``call`` with caching needs and the map lacks."""
        need = (("input_cost_per_token", call.uncached, self.input),
                ("cache_read_input_token_cost", call.cached, self.read),
                ("cache_creation_input_token_cost", call.written, self.write))
        return tuple(name for name, tokens, price in need if tokens and price is None)

    def with_cache(self, call: CallCache) -> float | None:
        """USD of ``call``'s input with caching: cached at the read rate, written at the write rate,
        the rest at the input rate; None ("no price") when a rate it needs is unknown."""
        return self.costs(call)[0]

    def costs(self, call: CallCache) -> tuple[float | None, float | None, tuple[str, ...]]:
        """``(with_cache(call), without_cache(call), missing(call))`` in one go (the one source of both
        costs; the missing fields are found once)."""
        inp, read, write = self.input, self.read, self.write
        tokens, cached, written, uncached, _broke, _lost = call
        without = None if inp is None else round10(tokens * inp)
        if (uncached and inp is None) or (cached and read is None) or (written and write is None):
            return None, without, self.missing(call)
        return round10(cached * (read or 0.0) + written * (write or 0.0) + uncached * (inp or 0.0)), without, ()

    def without_cache(self, call: CallCache) -> float | None:
        """USD of ``call``'s input with no caching at all (every token at the input rate); None when
        the input rate is unknown."""
        return self.costs(call)[1]


NO_PRICES = CachePrices(None, None, None)


def _price(info: dict[str, Any], field: str) -> float | None:
    value = info.get(field)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def prices_for_model(model: str | None) -> CachePrices:
    """The input, cache-read and cache-write prices of ``model`` from litellm's model map (found as
    :func:`inspector.engine.limits.litellm_model_entry` finds it); :data:`NO_PRICES` for an unknown model."""
    found = litellm_model_entry(model) if model else None
    if found is None:
        return NO_PRICES
    entry, info = found
    return CachePrices(_price(info, "input_cost_per_token"), _price(info, "cache_read_input_token_cost"),
                       _price(info, "cache_creation_input_token_cost"), f"litellm entry {entry}")
