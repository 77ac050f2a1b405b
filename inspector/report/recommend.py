"""The recommendation over a sweep, and the words for it: cost weighed against what a setting forgets.

:func:`recommend` reads a sweep table (or its :func:`~inspector.sweep.by_setting` aggregate) and
picks **the cheapest setting that never went over the input budget and forgets no more than a
stated tolerance** beyond the setting that forgets least (default tolerance 0: nothing that setting
keeps). Ties go to more context. Every number in the text is read from the table; when the grid
cannot tell settings apart (one user turn; all settings send the same) the text says so plainly.

:func:`hysteresis_effect` says, from the same table, what ``hysteresis_ratio`` did to summarizer
calls: the trigger is budget ÷ (1 + r), so a larger ratio can *add* in-turn summaries.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.sweep import by_setting, cost_column, no_prompt_caching, param_columns, resolve_key

_METRIC_WORDS = {
    "cost_with_caching_usd": "total cost with prompt caching (the agent's calls at the provider's cache-read, "
                             "cache-write and input rates, and the summarizer's)",
    "cost_usd": "total cost without prompt caching (the agent's calls and the summarizer's)",
    "payload_cost_usd": "cost of the agent's own calls",
    "tokens_sent": "total input tokens (no price is known for this model)",
}
_NO_CACHING_WORDS = ("total cost (no prompt caching applies: every run's cache rule is none, so every input token is "
                     "paid at the input price; the agent's calls and the summarizer's)")
"""What ``cost_with_caching_usd`` is when no prompt caching applies (:func:`inspector.sweep.no_prompt_caching`)."""
_SAME = ("tokens_sent", "forgotten", "summarizer_calls", "peak_payload", "trimmed", "messages_summarised",
         "messages_dropped")


_LESS_IS_MORE_CONTEXT = frozenset({"spec.context_manager.params.hysteresis_ratio"})
"""Grid fields where a *smaller* value keeps more context (a larger hysteresis ratio lowers the
summary trigger); for every other numeric field a larger value does (keep_turns, max_messages,
summary_threshold, context_window)."""


@dataclass(frozen=True)
class Recommendation:
    """The pick of :func:`recommend`: the grid values, the ranking column and the words for it."""

    setting: dict[str, Any] | None  # grid values of the pick; None when no setting qualifies
    metric: str  # column the qualifying settings were ranked on (lowest wins)
    row: dict[str, Any] | None  # the pick's row of by_setting()
    qualifying: int  # settings within budget, within the forgetting tolerance and the other filters
    text: str  # Markdown explanation, every number taken from the table
    tolerance: int = 0  # forgotten references allowed beyond the setting that forgets least
    discriminates: bool = True  # False: every setting within budget gave the same numbers
    cheaper: list[dict[str, Any]] = field(default_factory=list)  # cheaper settings passed over, and why


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _setting_words(row: Any, params: Sequence[str]) -> str:
    return ", ".join(f"{p} = {_plain(row[p])}" for p in params) or "the manifest as written"


def _money(v: Any) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"${float(v):,.4f}"


def _value_words(metric: str, v: Any) -> str:
    return f"{int(v):,} input tokens" if metric == "tokens_sent" else _money(v)


def _ids(row: Any) -> list[str]:
    text = row.get("forgotten_ids") if hasattr(row, "get") else None
    if not isinstance(text, str) or not text:
        return []
    try:
        return [str(x) for x in json.loads(text)]
    except ValueError:
        return []


def _id_words(ids: Sequence[str], n: int = 4) -> str:
    shown = ", ".join(f"`{i}`" for i in ids[:n])
    return shown + (f" and {len(ids) - n} more" if len(ids) > n else "")


def _more_context_order(frame: Any, params: Sequence[str]) -> Any:
    """Sort keys that put *more context* first: fewer messages folded away or trimmed, more tokens
    sent, then numeric grid values in their more-context direction (a larger ``keep_turns``, a
    smaller ``hysteresis_ratio``), then grid order."""
    work = frame.assign(_lost=frame["messages_summarised"] + frame["messages_dropped"] + frame["trimmed"],
                        _order=range(len(frame)))
    keys, asc = ["_lost", "tokens_sent"], [True, False]
    for p in params:
        col = f"_p_{p}"
        numeric = work[p].map(lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None)
        less_is_more = resolve_key(p) in _LESS_IS_MORE_CONTEXT
        work[col] = numeric.fillna(float("inf") if less_is_more else float("-inf"))
        keys.append(col)
        asc.append(less_is_more)
    return work, keys + ["_order"], asc + [True]


def recommend(df: Any, *, allow_trims: bool = True, max_summarizer_calls: int | None = None,
              tolerance: int = 0) -> Recommendation:
    """The cheapest setting that stays within budget and forgets no more than ``tolerance``
    references beyond the setting that forgets least.

    ``df`` is a sweep table or its :func:`~inspector.sweep.by_setting` aggregate. A setting is
    *valid* when no run failed and no call went over budget (``allow_trims=False``: the trimmer never
    cut either; ``max_summarizer_calls``: at most that many summarizer calls). Among valid settings,
    the one that forgets least (ties: more context) sets the bar; a setting *qualifies* when its
    ``forgotten`` count is at most that bar + ``tolerance``. Qualifying settings are ranked by
    :func:`~inspector.sweep.cost_column` (or input tokens when a run has no price); ties go to more
    context (fewer messages folded or trimmed, then larger grid values). Deterministic."""
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0 (got {tolerance})")
    agg = df if "runs" in df.columns else by_setting(df)
    params = param_columns(agg.drop(columns=["runs", "errors"]))
    metric = cost_column(agg) or "tokens_sent"
    valid = agg[(agg["errors"] == 0) & (agg["over_budget"] == 0)]
    filters = []
    if not allow_trims:
        valid = valid[valid["trimmed"] == 0]
        filters.append("the trimmer never had to cut")
    if max_summarizer_calls is not None:
        valid = valid[valid["summarizer_calls"] <= max_summarizer_calls]
        filters.append(f"at most {max_summarizer_calls} summarizer calls")
    n_all = len(agg)
    runs = int(agg["runs"].max()) if n_all else 0
    scope = f"{n_all} setting(s) swept over {runs} transcript(s)"
    if not len(valid):
        return Recommendation(None, metric, None, 0, _no_pick_text(agg, params, scope, filters), tolerance)
    work, ctx_keys, ctx_asc = _more_context_order(valid, params)
    keeper = work.sort_values(["forgotten", *ctx_keys], ascending=[True, *ctx_asc], kind="mergesort").iloc[0]
    bar = int(keeper["forgotten"]) + tolerance
    ok = work[work["forgotten"] <= bar]
    ranked = ok.sort_values([metric, *ctx_keys], ascending=[True, *ctx_asc], kind="mergesort")
    best = ranked.iloc[0]
    discriminates = any(valid[c].nunique(dropna=False) > 1 for c in (*_SAME, metric) if c in valid.columns)
    cheaper = _cheaper(agg, valid, best, params, metric)
    text = _pick_text(agg, valid, ranked, keeper, cheaper, params, metric, scope, filters, tolerance, discriminates)
    setting = {p: _plain(best[p]) for p in params}
    row = {k: _plain(v) for k, v in best.items() if not str(k).startswith("_")}
    return Recommendation(setting, metric, row, len(ranked), text, tolerance, discriminates, cheaper)


def _cheaper(agg: Any, valid: Any, best: Any, params: Sequence[str], metric: str) -> list[dict[str, Any]]:
    """Every setting cheaper than the pick, and why it was passed over (over budget, failed, or
    what it forgets that the pick keeps), cheapest first."""
    out = []
    pick_ids = set(_ids(best))
    priced = agg[agg[metric].notna()]
    for _, row in priced.sort_values(metric, kind="mergesort").iterrows():
        if float(row[metric]) >= float(best[metric]):
            break
        entry: dict[str, Any] = {"setting": {p: _plain(row[p]) for p in params}, metric: _plain(row[metric]),
                                 "forgotten": int(row["forgotten"] or 0)}
        if int(row["errors"]):
            entry["why"] = "failed"
        elif int(row["over_budget"]):
            entry["why"] = "over budget"
        elif not (valid.index == row.name).any():
            entry["why"] = "filtered"
        else:
            entry["why"] = "forgets more"
        entry["forgets"] = [i for i in _ids(row) if i not in pick_ids]
        out.append(entry)
    return out


def _pick_text(agg: Any, valid: Any, ranked: Any, keeper: Any, cheaper: list[dict[str, Any]], params: Sequence[str],
               metric: str, scope: str, filters: list[str], tolerance: int, discriminates: bool) -> str:
    """The recommendation's paragraphs, in reading order: the pick, why the grid cannot tell
    settings apart (when it cannot), the budget, forgetting, the cost, the cheaper settings passed
    over, what the pick pays for its saving, the stand-in's note and the runner-up."""
    best = ranked.iloc[0]
    lines = [f"**Recommendation: {_setting_words(best, params)}**"]
    if not discriminates:
        lines.append(_no_discrimination_words(agg, valid))
    lines.append(_budget_words(agg, valid, best, params, scope, filters))
    lines.append(_forgetting_words(valid, ranked, keeper, best, params, tolerance))
    body, spread = _cost_words(ranked, params, metric, discriminates)
    lines.append(body)
    lines += _cheaper_words(cheaper, valid, best, params, metric, discriminates)
    lines.append(_trade_words(best, saved=discriminates and len(ranked) > 1 and spread >= 0.5))
    lines += _standin_words(best)
    if len(ranked) > 1:
        runner = ranked.iloc[1]
        lines.append(f"Runner-up: {_setting_words(runner, params)} ({_value_words(metric, runner[metric])}, "
                     f"{int(runner['forgotten'])} forgotten, {int(runner['summarizer_calls'])} summarizer call(s), "
                     f"peak {int(runner['peak_payload']):,} tokens).")
    return "\n\n".join(lines)


def _no_discrimination_words(agg: Any, valid: Any) -> str:
    """Why every setting within budget behaves the same (too few user turns, or the same numbers)."""
    turns = int(agg["user_turns"].max()) if "user_turns" in agg.columns and len(agg) else 0
    why = (f"the transcript(s) have at most {turns} user turn(s), so no setting of this grid ever folds anything"
           if turns <= 1 else "every setting within budget sent the same tokens, folded and forgot the same")
    return (f"**The grid cannot discriminate:** {why}. Any of the {len(valid)} setting(s) within budget "
            f"behaves the same on these transcripts; the pick is the one with the most context. "
            "Sweep longer conversations or a tighter window to learn something.")


def _budget_words(agg: Any, valid: Any, best: Any, params: Sequence[str], scope: str, filters: list[str]) -> str:
    """How many settings stayed within the input budget (and met the filters), and the worst one over it."""
    budget = int(best["input_budget"])
    budgets = sorted({int(b) for b in agg["input_budget"].dropna()})
    budget_words = f"the input budget ({budget:,} tokens: window − completion reserve − safety margin)" \
        if len(budgets) == 1 else "their input budget (window − completion reserve − safety margin)"
    lead = f"Of {scope}, {len(valid)} never sent a payload over {budget_words}"
    lead += f" and met the filters ({'; '.join(filters)})." if filters else "."
    over = agg[agg["over_budget"] > 0]
    if len(over):
        worst = over.sort_values("over_budget", ascending=False, kind="mergesort").iloc[0]
        lead += (f" {len(over)} went over at least once (worst: {_setting_words(worst, params)}, "
                 f"{int(worst['over_budget'])} call(s) over budget).")
    return lead


def _forgetting_words(valid: Any, ranked: Any, keeper: Any, best: Any, params: Sequence[str], tolerance: int) -> str:
    """What the setting that forgets least forgets, the tolerance, and what the pick forgets."""
    least = int(keeper["forgotten"])
    if least == 0 and int(valid["forgotten"].max()) == 0:
        return ("No setting within budget forgot a reference: every identifier a call needed was still in "
                "its payload (or in a summary).")
    bar = ("nothing that setting keeps" if tolerance == 0 else
           f"at most {tolerance} forgotten reference(s) more than that")
    return (f"Forgetting: the setting that forgets least is {_setting_words(keeper, params)}, with "
            f"{least} forgotten reference(s) (an identifier a call needed that was only in a message no longer "
            f"sent). The tolerance is {bar}; {len(ranked)} setting(s) meet it, and the pick forgets "
            f"{int(best['forgotten'])}.")


def _cost_words(ranked: Any, params: Sequence[str], metric: str, discriminates: bool) -> tuple[str, float]:
    """The pick's cost and size, and how much less it costs than the dearest qualifying setting;
    returns the paragraph and that saving in per cent."""
    best = ranked.iloc[0]
    budget = int(best["input_budget"])
    peak = int(best["peak_payload"])
    pct = 100.0 * peak / budget if budget else 0.0
    plain = metric == "cost_with_caching_usd" and no_prompt_caching(ranked)  # rule none: one cost, no caching
    ranked_by = _NO_CACHING_WORDS if plain else _METRIC_WORDS[metric]
    body = (f"Ranked by {ranked_by}, the cheapest of those is {_setting_words(best, params)}: "
            f"{_value_words(metric, best[metric])} over {int(best['frames']):,} LLM call(s), "
            f"{int(best['tokens_sent']):,} input tokens in all, and a peak payload of {peak:,} tokens "
            f"({pct:.0f} % of the budget).")
    without = next((c for c in ("cost_without_caching_usd", "cost_usd") if c in best.index), None)
    if metric == "cost_with_caching_usd" and without is not None and not plain:
        body += f" Without prompt caching it would cost {_money(best[without])}."
    dearest = ranked.iloc[-1]
    spread = 100.0 * (1 - float(best[metric]) / float(dearest[metric])) if float(dearest[metric]) > 0 else 0.0
    if len(ranked) > 1 and spread >= 0.5:
        body += (f" That is {spread:.0f} % less than the most expensive qualifying setting "
                 f"({_setting_words(dearest, params)}: {_value_words(metric, dearest[metric])}).")
    ties = ranked[ranked[metric] == best[metric]]
    if len(ties) > 1 and discriminates:
        body += f" {len(ties)} settings tie on that; the pick keeps the most context."
    return body, spread


def _cheaper_words(cheaper: list[dict[str, Any]], valid: Any, best: Any, params: Sequence[str], metric: str,
                   discriminates: bool) -> list[str]:
    """The cheaper settings passed over: what those that forget more would forget, the others'
    reasons, or that none is cheaper."""
    lines = []
    forgets = [c for c in cheaper if c["why"] == "forgets more"]
    if forgets:
        parts = []
        for group in _same_outcome(forgets, metric)[:6]:
            c = group[0]
            saving = 100.0 * (1 - float(c[metric]) / float(best[metric])) if float(best[metric]) else 0.0
            what = _id_words(c["forgets"]) if c["forgets"] else "the same identifiers more often"
            who = " / ".join(_setting_words(g["setting"], params) for g in group)
            parts.append(f"{who} would cost {_value_words(metric, c[metric])} "
                         f"({saving:.0f} % less) but forget{'s' if len(group) == 1 else ''} {c['forgotten']} "
                         f"reference(s) the pick keeps or forgets less often: {what}")
        lines.append("Cheaper settings and what they forget: " + "; ".join(parts) + ".")
    others = [c for c in cheaper if c["why"] != "forgets more"]
    if others:
        lines.append("Cheaper settings passed over for other reasons: " + "; ".join(
            f"{_setting_words(c['setting'], params)} ({c['why']})" for c in others[:6]) + ".")
    if not cheaper and len(valid) > 1 and discriminates:
        lines.append("No cheaper setting exists in this grid: the pick is also the cheapest setting within budget.")
    return lines


def _trade_words(best: Any, saved: bool) -> str:
    """What the pick pays for its context: summarizer calls, messages folded, dropped and trimmed."""
    calls = int(best["summarizer_calls"])
    lead_in = "The price of that saving: the" if saved else "The"
    trade = (f"{lead_in} summarizer is called {calls} time(s) ({int(best['summarizer_in_turn'])} during a turn, "
             f"{int(best['summarizer_commit'])} at a commit), {int(best['messages_summarised'])} message(s) are "
             "folded into summaries")
    dropped = int(best["messages_dropped"])
    trade += f" and {dropped} dropped without one" if dropped else ""
    trimmed = int(best["trimmed"])
    trade += (f"; the token trimmer removed {trimmed} message(s) over all calls." if trimmed else
              "; the trimmer never had to cut.")
    return trade


def _standin_words(best: Any) -> list[str]:
    """The note that the summaries came from the offline stand-in (with its estimated cost), if they did."""
    basis = str(best.get("summary_cost_basis") or "")
    label = str(best.get("summarizer") or "")
    if "stand-in" not in label:
        return []
    priced = basis.startswith("estimate")
    calls = int(best["summarizer_calls"])
    return ["Summaries here come from the **offline stand-in (not a model)**: an extractive summary that keeps "
            "sentences with identifiers and decisions. "
            + (f"Its cost ({_money(best.get('summary_cost_usd'))}) is an **estimate**: "
               f"{basis.removeprefix('estimate ').strip('()')}. " if priced and calls else "")
            + "Set a real model (MODEL / API_BASE) for real summaries and their reported cost."]


def _same_outcome(entries: list[dict[str, Any]], metric: str) -> list[list[dict[str, Any]]]:
    """Consecutive entries with the same cost, count and identifiers, grouped (one sentence each)."""
    groups: list[list[dict[str, Any]]] = []
    for c in entries:
        key = (c[metric], c["forgotten"], tuple(c["forgets"]))
        last = groups[-1][0] if groups else None
        if last is not None and (last[metric], last["forgotten"], tuple(last["forgets"])) == key:
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def _no_pick_text(agg: Any, params: Sequence[str], scope: str, filters: list[str]) -> str:
    lines = ["**No recommendation: no setting qualifies.**"]
    why = f"Of {scope}, none stayed within the input budget on every call"
    why += f" while meeting the filters ({'; '.join(filters)})." if filters else "."
    lines.append(why)
    valid = agg[agg["errors"] == 0]
    if len(valid):
        closest = valid.sort_values(["over_budget", "peak_payload"], kind="mergesort").iloc[0]
        lines.append(f"Closest: {_setting_words(closest, params)}, with {int(closest['over_budget'])} call(s) over "
                     f"budget and a peak payload of {int(closest['peak_payload']):,} tokens against a budget of "
                     f"{int(closest['input_budget']):,}. Pinned content (system band, current turn, tool schemas) "
                     "may be larger than the window allows: a bigger window or less injected context is needed.")
    else:
        lines.append("Every run failed; see the error column of the sweep table.")
    return "\n\n".join(lines)


def hysteresis_effect(df: Any, ratio: str = "hysteresis_ratio") -> str:
    """What ``ratio`` did to summarizer calls in this sweep, in words computed from the table.

    Compares in-turn (and commit) summarizer calls at the smallest and the largest ratio, summed
    over the other grid values, and counts in how many of those the in-turn calls rose, fell or
    stayed. Explains the mechanism both ways: the trigger is budget ÷ (1 + r), so a larger ratio
    summarises earlier (more calls), while reuse up to the trigger × (1 + r) saves calls."""
    agg = df if "runs" in df.columns else by_setting(df)
    if ratio not in agg.columns:
        return f"`{ratio}` is not swept here."
    ok = agg[agg["errors"] == 0]
    values = sorted({float(v) for v in ok[ratio].dropna()})
    if len(values) < 2:
        return f"Only one value of `{ratio}` was swept: nothing to compare."
    lo, hi = values[0], values[-1]
    others = [p for p in param_columns(agg.drop(columns=["runs", "errors"])) if p != ratio]
    a = ok[ok[ratio].astype(float) == lo]
    b = ok[ok[ratio].astype(float) == hi]
    if others:
        merged = a.merge(b, on=others, suffixes=("_lo", "_hi"))
    else:
        merged = a.assign(_k=0).merge(b.assign(_k=0), on="_k", suffixes=("_lo", "_hi"))
    rise = int((merged["summarizer_in_turn_hi"] > merged["summarizer_in_turn_lo"]).sum())
    fall = int((merged["summarizer_in_turn_hi"] < merged["summarizer_in_turn_lo"]).sum())
    same = len(merged) - rise - fall
    tin_lo, tin_hi = int(a["summarizer_in_turn"].sum()), int(b["summarizer_in_turn"].sum())
    com_lo, com_hi = int(a["summarizer_commit"].sum()), int(b["summarizer_commit"].sum())
    trend = "rise" if tin_hi > tin_lo else "fall" if tin_hi < tin_lo else "do not change"
    text = (f"From `{ratio}` = {lo:g} to {hi:g}, in-turn summarizer calls {trend} ({tin_lo} → {tin_hi} over the "
            f"grid; higher in {rise}, lower in {fall}, equal in {same} of {len(merged)} comparable setting(s)); "
            f"commit-time calls go {com_lo} → {com_hi}. ")
    if tin_hi > tin_lo:
        text += ("The trigger is the budget ÷ (1 + ratio), so a larger ratio lowers it: the view crosses it earlier "
                 "and more often, which adds summaries here faster than reuse under the ceiling saves them.")
    elif tin_hi < tin_lo:
        text += ("A computed summary is reused while the view stays under the trigger × (1 + ratio): here that reuse "
                 "saved more calls than the lower trigger (budget ÷ (1 + ratio)) added.")
    else:
        text += ("Here the ratio changed nothing: either no turn's view crossed the trigger, or the lower trigger and "
                 "the longer reuse cancelled out.")
    return text


def settings_table(df: Any) -> Any:
    """A table that fits a page: one row per setting, the grid columns and the numbers the
    recommendation weighs (input tokens, peak as % of budget, calls over budget, summarizer calls,
    forgotten references, cost; "cost usd (no prompt caching)" when no prompt caching applies)."""
    agg = df if "runs" in df.columns else by_setting(df)
    params = param_columns(agg.drop(columns=["runs", "errors"]))
    metric = cost_column(agg) or "tokens_sent"
    out = agg[params].copy()
    out["tokens sent"] = agg["tokens_sent"]
    out["peak % of budget"] = (100 * agg["peak_payload"] / agg["input_budget"]).round(0)
    out["over budget"] = agg["over_budget"]
    out["summarizer calls"] = agg["summarizer_calls"]
    out["forgotten"] = agg["forgotten"]
    if metric != "tokens_sent":  # under rule none the cost with caching is the one cost: no "with caching" heading
        plain = metric == "cost_with_caching_usd" and no_prompt_caching(agg)
        out["cost usd (no prompt caching)" if plain else metric.replace("_", " ")] = agg[metric].round(4)
    return out
