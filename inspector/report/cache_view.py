"""Prompt caching as the faces show it: the cached part of a call's input, the cache hits and breaks
on the timeline, and the totals with caching, in plain words.

Every number comes from :func:`inspector.prompt_cache.replay_cache`, computed once per replay and kept
on it (:func:`cache_account`), so stepping through calls never recomputes it. The app
(:mod:`inspector.app`), the notebooks and :mod:`inspector.report.figures` read these; the words are
"read from cache", "written to cache", "sent uncached" and "cache break" on every face, while
tables for machines keep the codes of :data:`inspector.vocabulary.CACHE_WORDS` (the one
vocabulary of the cache's columns, with their words).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from inspector.prompt_cache import (
    NO_CACHE_RULE,
    TOTALS_CACHE_COLUMNS,
    CacheAccount,
    CallCacheCost,
    cache_metrics,
    replay_cache,
)
from inspector.replay import Replay
from inspector.vocabulary import CACHE_WORDS

T = TypeVar("T")

RULE_WORDS = {
    "openai": "OpenAI automatic prefix caching",
    "anthropic": "Anthropic cache_control breakpoints",
    "none": "no prompt caching",
}
"""Each cache rule (:data:`inspector.engine.cache.RULE_NAMES`) in words."""

CACHE_COLORS = {"cached": "#2CA02C", "written": "#BCBD22", "uncached": "#C7C7C7", "break": "#8C564B"}
"""The colours of the tokens read from cache, written to cache and sent uncached, and of a cache break."""

CACHE_PART_WORDS = {"cached": "read from cache", "written": "written to cache", "uncached": "sent uncached"}
"""The three parts of a call's input, in words."""

BREAK_WORDS = "cache break (a compaction or trim changed the cached prefix)"
"""The timeline's legend entry for a cache break."""

CACHED_LINE_WORDS = CACHE_WORDS["cached_tokens"]
"""The timeline's legend entry for the line of tokens read from cache per call."""

def cache_account(rp: Replay) -> CacheAccount:
    """The prompt-cache account of ``rp`` under the rule in force (the manifest's
    ``spec.models[].prompt_cache``, else the model's provider: :func:`inspector.prompt_cache.rule_choice`),
    the same account the command line reports (:func:`inspector.prompt_cache.replay_cache`, made once
    per replay and rule). Raises what :func:`~inspector.prompt_cache.account` raises."""
    return replay_cache(rp)


def caches(acct: CacheAccount) -> bool:
    """Whether any prompt caching applies to ``acct``: False under the rule ``none`` (the model's
    provider caches nothing, or the settings say so), where nothing is read from or written to a
    cache, no call breaks a cache and the costs with and without caching are the same. Every face
    then says that no prompt caching applies, and why, instead of the totals with caching."""
    return acct.rule.name != NO_CACHE_RULE


def rule_why(acct: CacheAccount) -> str:
    """Why the rule in force applies, in words: "the model's provider: litellm entry gpt-4o: provider
    openai", "chosen by name in the settings", or the rule's own source."""
    source = acct.rule.source or ""
    if source.startswith("litellm entry"):
        return f"the model's provider: {source}"
    if "set by name" in source:
        return "chosen by name in the settings"
    return source or "no rule given"


def rule_words(acct: CacheAccount) -> str:
    """The rule in force and why, e.g. "OpenAI automatic prefix caching (the model's provider:
    litellm entry gpt-4o: provider openai)"; a rule chosen by name says so."""
    return f"{RULE_WORDS.get(acct.rule.name, acct.rule.name)} ({rule_why(acct)})"


UNPRICED_WORDS = "Cost unknown (no price for this model)"
"""The cost part of the totals when no prompt caching applies and the model has no price (or none is named)."""


def dollars(value: float | None) -> str:
    """A cost in dollars with five decimals, or "no price" when it is unknown (None)."""
    return "no price" if value is None else f"${value:,.5f}"


def break_words(cost: CallCacheCost) -> str:
    """A cache break in words: the tokens re-sent and what they cost above the cache-read rate;
    "" for a call without a break."""
    if cost.cache.broke_at is None:
        return ""
    return (f"cache break: the context changed inside the cached prefix, {cost.resent:,} tokens the previous call "
            f"sent were sent again without the cache, costing {dollars(cost.break_cost_usd)} more than reading "
            "them from cache")


def call_cache_words(rp: Replay, call: int) -> str:
    """One call's cache in a sentence: the rule in force and why, the tokens read from cache,
    written to cache and sent uncached, the call's input cost with and without caching, and its
    cache break when it has one, with what changed (:func:`break_cause`). With no prompt caching
    (:func:`caches`), that none applies and why, the call's input tokens and its input cost once."""
    acct = cache_account(rp)
    c = acct.calls[call]
    if not caches(acct):  # nothing cached, nothing broken: the input once, at the input price
        line = (f"No prompt caching ({rule_why(acct)}): {c.cache.input:,} input tokens sent uncached · "
                f"input cost {dollars(c.uncached_cost_usd)}")
    else:
        line = (f"Prompt cache, {rule_words(acct)}: {c.cache.cached:,} read from cache · {c.cache.written:,} "
                f"written to cache · {c.cache.uncached:,} sent uncached · input cost {dollars(c.cost_usd)} with "
                f"caching, {dollars(c.uncached_cost_usd)} without")
    if c.missing_prices:
        line += f" (litellm has no {', '.join(c.missing_prices)} for this model)"
    if c.cache.broke_at is None:
        return line + "."
    return line + f". Cache break ({break_cause(rp, call)}): {break_words(c).split(': ', 1)[1]}."


def call_cost_figure(rp: Replay, call: int, without_usd: float | None) -> tuple[str, str, str]:
    """The *This call* view's input-cost figure as ``(label, value, help)``: the call's input cost
    with caching, its cost ``without_usd`` (the frame's own cost) in the help. With no prompt caching
    (:func:`caches`), the input cost alone, and that no prompt caching applies and why."""
    acct = cache_account(rp)
    cost = acct.calls[call].cost_usd
    value = "n/a" if cost is None else f"{cost:.5f}"
    if not caches(acct):
        return "Input cost (USD)", value, f"No prompt caching ({rule_why(acct)}): every input token at the input price"
    return ("Input cost with caching (USD)", value,
            "without caching: " + ("n/a" if without_usd is None else f"{without_usd:.5f}")
            + " USD; the bar's cache strip below says what was read from cache")


def cache_strip_html(rp: Replay, call: int, scale: float) -> str:
    """The call's input as the provider's cache sees it, one strip on the band bar's scale (``scale``
    tokens = the bar's full width): read from cache, written to cache, sent uncached, in the
    provider's order (tool schemas and system first, so its parts do not line up with the bands
    above), with its own key (:func:`cache_keys_html`) and the sentence of :func:`call_cache_words`
    under it. Every text is HTML-escaped."""
    c = cache_account(rp).calls[call].cache
    cells = []
    for part in ("cached", "written", "uncached"):
        tokens = getattr(c, part)
        if tokens <= 0:
            continue
        words = CACHE_PART_WORDS[part]
        width = 100.0 * tokens / max(scale, 1)
        text = f"{words} {tokens:,}" if width >= 18 else ""
        cells.append(f"<div class='ci-cache-seg' data-cache='{part}' title=\"{html.escape(f'{words}: {tokens:,} tokens')}\" "
                     f"style='width:{width:.3f}%;background:{CACHE_COLORS[part]}'>{html.escape(text)}</div>")
    return ("<div class='ci-cache'><div class='ci-cache-bar'>" + "".join(cells) + "</div>"
            f"<div class='ci-cache-legend'>{cache_keys_html(rp, call)}</div>"
            f"<div class='ci-cache-words'>{html.escape(call_cache_words(rp, call))}</div></div>")


CACHE_STRIP_CSS = (
    ".ci-cache{margin-top:4px}.ci-cache-bar{display:flex;height:14px;border:1px solid #888;background:#fff}"
    ".ci-cache-seg{height:100%;overflow:hidden;white-space:nowrap;font-size:.68rem;line-height:14px;color:#111;"
    "padding-left:3px;box-sizing:border-box;border-right:1px solid rgba(255,255,255,.6)}"
    ".ci-cache-legend{font-size:.78rem;margin-top:3px}.ci-cache-words{font-size:.78rem;margin-top:2px;color:#333}")


def break_calls(rp: Replay) -> list[int]:
    """The calls (frame indices) where a cache break happened, the pending next call included."""
    return [c.frame for c in cache_account(rp).calls if c.cache.broke_at is not None]


def cached_line(rp: Replay, df: Any) -> list[dict[str, Any]]:
    """The timeline's line of the tokens read from cache per call over ``df``
    (:func:`~inspector.report.tables.frames_table`); none when the rule caches nothing."""
    acct = cache_account(rp)
    if not caches(acct):
        return []
    return [dict(type="scatter", x=df["call"].to_numpy(), y=[c.cache.cached for c in acct.calls],
                 name=CACHED_LINE_WORDS, mode="lines",
                 line=dict(color=CACHE_COLORS["cached"], width=2, dash="dash", shape="hvh"),
                 hovertemplate="read from cache: %{y:,}<extra></extra>")]


def timeline_cache_keys(rp: Replay) -> tuple[str, str]:
    """The timeline caption's words for its cache line (:func:`cached_line`) and its cache-break
    markers (:func:`break_markers`), each with its leading ", "; both "" with no prompt caching
    (:func:`caches`), where the timeline draws neither."""
    if not caches(cache_account(rp)):
        return "", ""
    return ", tokens read from cache", ", cache breaks (hover one for the tokens re-sent and their cost)"


def break_markers(rp: Replay, df: Any) -> list[dict[str, Any]]:
    """A timeline marker on every cache break (:func:`break_calls`) over ``df``, above the call's
    payload, with the tokens re-sent and what they cost in the hover text; none without a break."""
    breaks = [c for c in cache_account(rp).calls if c.cache.broke_at is not None]
    if not breaks:
        return []
    top = df["payload_tokens"]
    lift = float(top.max() or 1) * 0.20
    return [dict(
        type="scatter", x=[c.frame for c in breaks], y=[float(top[c.frame]) + lift for c in breaks],
        mode="markers", name=BREAK_WORDS,
        text=[f"{c.resent:,} tokens re-sent, {dollars(c.break_cost_usd)} more" for c in breaks],
        marker=dict(symbol="hexagram-open", size=11, color=CACHE_COLORS["break"], line=dict(width=2)),
        hovertemplate="cache break: %{text}<extra></extra>")]


def cache_totals(rp: Replay) -> dict[str, Any]:
    """The replay's cache totals over the calls the agent made (:meth:`CacheAccount.totals
    <inspector.prompt_cache.CacheAccount.totals>`) with both costs as
    :func:`~inspector.prompt_cache.cache_metrics` gives them (the summarizer's own cost added), so
    "cost with caching" and "cost without caching" are whole costs like ``cost_usd``."""
    totals = cache_account(rp).totals()
    whole = cache_metrics(rp)
    for key in ("cost_with_caching_usd", "cost_without_caching_usd"):
        totals[key] = whole[key]
    return totals


def cache_totals_row(rp: Replay) -> dict[str, Any]:
    """The cache totals of one replay under the codes of
    :data:`~inspector.prompt_cache.TOTALS_CACHE_COLUMNS` (a strategy's row)."""
    metrics = cache_metrics(rp)
    return {code: metrics[code] for code in TOTALS_CACHE_COLUMNS}


FLEET_TOKEN_COLUMNS: tuple[str, ...] = ("cached_tokens", "cache_input_tokens")
"""The token sums a fleet row adds beside the totals, so a fleet's cache-hit share is exact
(Σ read from cache ÷ Σ input, the input counting the tool schemas and any unrecorded prefix)."""


def fleet_cache_row(rp: Replay) -> dict[str, Any]:
    """:func:`cache_totals_row` plus the tokens read from cache and the input the cache saw
    (:data:`FLEET_TOKEN_COLUMNS`): one fleet row's cache columns."""
    metrics = cache_metrics(rp)
    return {code: metrics[code] for code in (*TOTALS_CACHE_COLUMNS, *FLEET_TOKEN_COLUMNS, "cache_rule")}


def fleet_cache_sums(group: Any) -> dict[str, Any]:
    """The cache columns of a fleet summary row over the runs ``group`` (a DataFrame of
    :func:`fleet_cache_row` columns): costs and breaks summed (a cost None when any run's is), the
    cache-hit share = Σ read from cache ÷ Σ input."""
    out: dict[str, Any] = {}
    for code in (c for c in TOTALS_CACHE_COLUMNS if c.endswith("_usd")):
        values = group[code]
        out[code] = None if len(values) == 0 or values.isna().any() else round(float(values.sum()), 8)
    cached, seen = int(group["cached_tokens"].sum()), int(group["cache_input_tokens"].sum())
    out["cache_hit_share"] = round(cached / seen, 4) if seen else 0.0
    out["cache_breaks"] = int(group["cache_breaks"].sum())
    return out


def _totals_parts(rp: Replay) -> list[str]:
    """The parts of :func:`totals_words` before the rule: the costs, then, when caching applies, the
    share read from cache and the breaks."""
    t = cache_totals(rp)
    if not caches(cache_account(rp)):  # both costs are the same: said once
        cost = t["cost_without_caching_usd"]
        return [UNPRICED_WORDS if cost is None else f"Cost {dollars(cost)}"]
    return [f"Cost with caching {dollars(t['cost_with_caching_usd'])} (without caching "
            f"{dollars(t['cost_without_caching_usd'])})",
            f"{100 * t['cache_hit_share']:.0f}% of input tokens read from cache",
            f"{t['cache_breaks']:,} cache break(s) cost {dollars(t['cache_break_cost_usd'])}"]


def totals_words(rp: Replay) -> str:
    """The replay's totals with caching in a sentence: the cost with and without caching, the share
    of input tokens read from cache, the cache breaks and their cost, and the rule in force. With
    no prompt caching (:func:`caches`), the cost once and that no prompt caching applies, and why
    ("Cost $0.01234 · no prompt caching (the model's provider: ...)")."""
    return " · ".join([*_totals_parts(rp), rule_words(cache_account(rp))])


NO_CACHING = "no prompt caching"
"""A cell where a measure of the prompt cache has no meaning: a strategy or fleet row under the rule ``none``."""

CACHE_CLAIMS: tuple[str, ...] = ("cost_with_caching_usd", "cache_hit_share", "cache_breaks", "cache_break_cost_usd",
                                 "cached_tokens")
"""The cache codes that claim a cache (a cost with it, hits, breaks, tokens read from it): under the rule
``none`` a face's cell for them reads :data:`NO_CACHING`; the cost without caching stays, it is the cost."""


def people_columns(columns: Sequence[T], caching: bool, key: Callable[[T], str] = str) -> list[T]:
    """``columns`` of a table for people, without those that claim a cache (:data:`CACHE_CLAIMS`, by
    ``key``) when no prompt caching applies (``caching`` False: rule ``none``), where they could only
    read 0 or repeat the cost. Tables for machines (CSV, JSON) keep every column."""
    return list(columns) if caching else [c for c in columns if key(c) not in CACHE_CLAIMS]


def _cache_cell(code: str, value: Any) -> str:
    """One cache measure as a table cell: dollars, the cache-hit share in percent, a count."""
    if code.endswith("usd"):
        return dollars(None if _missing(value) else float(value))
    if _missing(value):
        return "—"
    if code == "cache_hit_share":
        return f"{100 * float(value):.1f}%"
    return f"{int(value):,}"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def strategy_cache_rows(replays: Mapping[str, Replay]) -> dict[str, list[str]]:
    """Per measure of :data:`~inspector.prompt_cache.TOTALS_CACHE_COLUMNS` (in the words of
    :data:`~inspector.vocabulary.CACHE_WORDS`), one cell per strategy of ``replays``: costs in
    dollars, the cache-hit share in percent, the breaks counted. A strategy with no prompt caching
    (:func:`caches`) reads :data:`NO_CACHING` in the rows that claim a cache (:data:`CACHE_CLAIMS`)
    and its cost in the row without caching; when no strategy caches, one row ``prompt caching``
    reads "none" for each instead (:func:`strategy_cache_caption` says why)."""
    caching = [caches(cache_account(rp)) for rp in replays.values()]
    if replays and not any(caching):
        return {"prompt caching": ["none"] * len(replays)}
    rows: dict[str, list[str]] = {CACHE_WORDS[code]: [] for code in TOTALS_CACHE_COLUMNS}
    for rp, cached in zip(replays.values(), caching, strict=True):
        row = cache_totals_row(rp)
        for code in TOTALS_CACHE_COLUMNS:
            cell = NO_CACHING if not cached and code in CACHE_CLAIMS else _cache_cell(code, row[code])
            rows[CACHE_WORDS[code]].append(cell)
    return rows


def strategy_cache_table(replays: Mapping[str, Replay]) -> Any:
    """:func:`strategy_cache_rows` as a pandas DataFrame: one row per measure, one column per strategy."""
    import pandas as pd

    return pd.DataFrame.from_dict(strategy_cache_rows(replays), orient="index", columns=list(replays))


STRATEGY_CACHE_WORDS = ("Cost with caching counts the provider's prompt cache (read from cache, written to cache, "
                        "sent uncached); cost without caching pays every input token at the input price.")
"""What the strategies' cost with and without caching count (:func:`strategy_cache_caption`)."""


def _no_caching_why(named: Mapping[str, CacheAccount]) -> str:
    """Why no prompt caching applies to the accounts ``named`` (strategy or run name → account): the
    one reason they share, else each name's."""
    whys = {name: rule_why(acct) for name, acct in named.items()}
    if len(set(whys.values())) == 1:
        return next(iter(whys.values()))
    return "; ".join(f"{name}: {why}" for name, why in whys.items())


def strategy_cache_caption(replays: Mapping[str, Replay]) -> str:
    """The line above the strategies' totals: what the cost with and without caching count
    (:data:`STRATEGY_CACHE_WORDS`); with no prompt caching for any strategy, that none applies and
    why, and that every input token is paid at the input price; for some of them, which and why."""
    accts = {name: cache_account(rp) for name, rp in replays.items()}
    plain = {name: acct for name, acct in accts.items() if not caches(acct)}
    if accts and len(plain) == len(accts):
        return (f"Totals per strategy. No prompt caching applies ({_no_caching_why(plain)}): every input token is "
                "paid at the input price, so nothing is read from a cache and no call breaks one.")
    words = f"Totals per strategy. {STRATEGY_CACHE_WORDS}"
    if plain:
        words += (f" No prompt caching applies to {', '.join(plain)} ({_no_caching_why(plain)}): its cells read "
                  f"\"{NO_CACHING}\".")
    return words


def no_caching_why(rp: Replay) -> str | None:
    """Why no prompt caching applies to ``rp`` (:func:`rule_why`); None when a rule caches. A fleet
    keeps these for its caption (:func:`fleet_cache_caption`)."""
    acct = cache_account(rp)
    return None if caches(acct) else rule_why(acct)


def fleet_cache_caption(runs: Any, whys: Iterable[str] = ()) -> str:
    """The fleet's line on prompt caching over ``runs`` (a table with ``cache_rule``; ``whys``: why
    no caching applies to its runs under ``none``, as :func:`no_caching_why` gives them): "" when
    every run caches; else that no prompt caching applies (to how many runs, when not to all) and
    why, and that the cache's columns are left out or its cells read :data:`NO_CACHING`."""
    if "cache_rule" not in runs.columns or len(runs) == 0:
        return ""
    none = int((runs["cache_rule"] == NO_CACHE_RULE).sum())
    if not none:
        return ""
    reasons = list(dict.fromkeys(whys))
    because = f" ({'; '.join(reasons)})" if reasons else ""
    if none == len(runs):
        return (f"No prompt caching applies{because}: every input token is paid at the input price, so nothing "
                "is read from a cache, no call breaks one, and the prompt cache's columns are left out.")
    return (f"No prompt caching applies to {none:,} of the {len(runs):,} runs{because}: their cells for the "
            f"cost with caching, the cache-hit share and the cache breaks read \"{NO_CACHING}\".")


FLEET_CACHE_MEASURES: tuple[str, ...] = (*TOTALS_CACHE_COLUMNS, *FLEET_TOKEN_COLUMNS)
"""A fleet table's prompt-cache measures (the codes of :func:`fleet_cache_row` but the rule)."""


def fleet_cache_shown(table: Any) -> Any:
    """A fleet table (runs or summary per strategy, with codes and ``cache_rule``) for people: rows
    under the rule ``none`` read :data:`NO_CACHING` in the columns that claim a cache
    (:data:`CACHE_CLAIMS`, written out as cells in every row); when every row is under ``none`` the
    cache's measures (:data:`FLEET_CACHE_MEASURES`) are left out and ``cost_usd`` is the cost. A
    table without ``cache_rule`` or with no such row is returned as it is."""
    if "cache_rule" not in table.columns:
        return table
    none = (table["cache_rule"] == NO_CACHE_RULE).to_numpy()
    if not none.any():
        return table
    if none.all():
        return table.drop(columns=[c for c in FLEET_CACHE_MEASURES if c in table.columns])
    out = table.copy()
    for code in (c for c in CACHE_CLAIMS if c in out.columns):
        out[code] = [NO_CACHING if n else _cache_cell(code, v) for n, v in zip(none, out[code], strict=True)]
    return out


def worst_break(rp: Replay) -> CallCacheCost | None:
    """The cache break among the calls the agent made that re-sent the most tokens; None without one."""
    found = [c for c in cache_account(rp).calls if c.cache.broke_at is not None and not c.pending]
    return max(found, key=lambda c: (c.resent, -c.frame)) if found else None


def break_cause(rp: Replay, call: int) -> str:
    """What changed the payload before ``call``, in words: a fold when the previous turn was
    committed, the context manager's action at this call, the trimmer's cut, or "the payload
    changed" when none of these applies."""
    from inspector.vocabulary import action_words

    f = rp.frames[call]
    causes = []
    if call > 0 and rp.frames[call - 1].turn != f.turn:
        before = rp.frames[call - 1].turn
        causes += [f"{action_words(c.action)} when turn {c.turn} was committed" for c in rp.commits
                   if c.turn == before and c.action != "unchanged" and c.folded_turns]
    if not str(f.decision.action).startswith("unchanged"):
        causes.append(f"context manager: {action_words(f.decision.action, f.summary_sent)}")
    trimmed = sum(b - a for a, b in f.trimmed) + f.trimmed_synthetic
    if trimmed:
        causes.append(f"the trimmer cut {trimmed} message(s)")
    return "; ".join(causes) or "the payload changed"


def break_story(rp: Replay) -> str:
    """The notebook's paragraph on caching: the rule in force, the totals with caching, and the call
    whose cache break re-sent the most, with what changed there, the tokens and the money. With no
    prompt caching (:func:`caches`): that none applies and why, and the cost once."""
    acct = cache_account(rp)
    if not caches(acct):
        return f"**Prompt caching**: none applies ({rule_why(acct)}). {_totals_parts(rp)[0]}."
    head = f"**Prompt caching** under {rule_words(acct)}. " + " · ".join(_totals_parts(rp)) + "."
    c = worst_break(rp)
    if c is None:
        return head + " No call broke the cached prefix."
    f = rp.frames[c.frame]
    return head + "\n\n" + (
        f"The costliest **cache break** is at call {c.frame} (turn {f.turn}, step {f.step}; {break_cause(rp, c.frame)}): "
        f"only the first {c.cache.broke_at} row(s) the provider sees (the tool schemas, then the system text) "
        f"stayed as the previous call sent them, so {c.cache.cached:,} of its {c.cache.input:,} input tokens "
        f"were read from cache and {c.resent:,} tokens the previous call had sent were sent again uncached, "
        f"{dollars(c.break_cost_usd)} more than reading them from cache. The call cost {dollars(c.cost_usd)} "
        f"with caching, {dollars(c.uncached_cost_usd)} without.")


def cache_keys_html(rp: Replay, call: int) -> str:
    """The band bar's legend keys for the parts of the cache strip this call has (read from cache,
    written to cache, sent uncached), in the strip's order."""
    c = cache_account(rp).calls[call].cache
    return "".join(f"<span class='ci-key ci-cache-key'><i style='background:{CACHE_COLORS[part]}'></i>{html.escape(words)}</span>"
                   for part, words in CACHE_PART_WORDS.items() if getattr(c, part) > 0)


TOTALS_HELP = ("Input tokens a provider would serve from its prompt cache, from the sequence of payloads: "
               "read from cache at the cache-read price, written to cache at the write price (Anthropic), the "
               "rest sent uncached at the input price (litellm's model map). A cache break is a call whose "
               "payload changed inside the cached prefix (a compaction, a trim, a sliding window): the tokens "
               "after the change are sent again without the cache. The summarizer's own cost is in both totals.")
"""The words behind the totals with caching (the app's help tooltip on them)."""


def totals_help(rp: Replay) -> str:
    """The help tooltip on the header's totals (:func:`totals_words`): :data:`TOTALS_HELP`; with no
    prompt caching (:func:`caches`), that none applies and why, and what the cost counts."""
    acct = cache_account(rp)
    if caches(acct):
        return TOTALS_HELP
    return (f"No prompt caching applies ({rule_why(acct)}): nothing is read from or written to a cache and no call "
            "breaks one; every input token is paid at the input price (litellm's model map). The summarizer's own "
            "cost is in the total.")
