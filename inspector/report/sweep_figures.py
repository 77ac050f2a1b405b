"""plotly figures over a sweep table: the trade-offs of a parameter grid.

Every figure takes a :func:`inspector.sweep.sweep` table or its :func:`~inspector.sweep.by_setting`
aggregate (a sweep table is aggregated first: summed over transcripts, peak and budget worst case).
``x`` is one grid column; every combination of the *other* grid columns is one line, labelled
``name=value, ...``, in grid order and in the same colour in every figure. Nothing is recounted here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspector.report.recommend import Recommendation
from inspector.sweep import by_setting, cost_column, no_prompt_caching, param_columns

PALETTE = ("#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#FF9DA6", "#9D755D",
           "#BAB0AC", "#EECA3B")
BUDGET_COLOR = "#222222"
OVER_COLOR = "#D62728"
PICK_COLOR = "#FFD700"
TRIM_COLOR = "#FF7F0E"
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "star-square")

_COST_TITLES = {"cost_with_caching_usd": "cost with prompt caching (USD, agent + summarizer)",
                "cost_without_caching_usd": "cost without prompt caching (USD, agent + summarizer)",
                "cost_usd": "cost (USD, agent + summarizer)", "payload_cost_usd": "cost (USD, agent's calls only)"}
_NO_CACHING_TITLE = "cost, no prompt caching (USD, agent + summarizer)"
"""The cost panel's title when no prompt caching applies (:func:`inspector.sweep.no_prompt_caching`)."""


def _aggregate(df: Any) -> Any:
    return df if "runs" in df.columns else by_setting(df)


def _groups(agg: Any, x: str) -> list[tuple[str, Any]]:
    """(label, rows) per combination of the grid columns other than ``x``, in first-seen order."""
    params = [p for p in param_columns(agg.drop(columns=["runs", "errors"], errors="ignore")) if p != x]
    if x not in agg.columns:
        raise ValueError(f"{x!r} is not a grid column of this sweep (grid columns: {', '.join(param_columns(agg))})")
    ok = agg[agg["errors"] == 0] if "errors" in agg.columns else agg
    if not params:
        return [("all", ok)]
    out = []
    for key, rows in ok.groupby(params, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        out.append((", ".join(f"{p}={v}" for p, v in zip(params, key, strict=True)), rows))
    return out


def _pick(rec: Recommendation | Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    if rec is None:
        return None
    return rec.setting if isinstance(rec, Recommendation) else rec


def _pick_rows(agg: Any, setting: Mapping[str, Any] | None) -> Any:
    if not setting:
        return agg.iloc[0:0]
    mask = None
    for k, v in setting.items():
        m = agg[k].isna() if v is None else agg[k] == v
        mask = m if mask is None else mask & m
    return agg[mask]


def _dodge(agg: Any, x: str, n: int) -> list[float]:
    """Horizontal offsets for ``n`` lines over a numeric ``x``: spread over a fifth of the smallest
    gap between grid values, so lines with equal values stay side by side instead of hiding each
    other (hover and tick labels show the true value). All zero for a non-numeric ``x``."""
    try:
        values = sorted({float(v) for v in agg[x].dropna()})
    except (TypeError, ValueError):
        return [0.0] * n
    gaps = [b - a for a, b in zip(values, values[1:], strict=False) if b > a]
    if n < 2 or not gaps:
        return [0.0] * n
    spread = min(gaps) / 5
    return [spread * (k / (n - 1) - 0.5) for k in range(n)]


def _xs(rows: Any, x: str, offset: float) -> Any:
    return rows[x] + offset if offset else rows[x]


def _count_ticks(fig: Any, top: Any) -> None:
    """Whole-number ticks from zero on count axes (calls, references): no "1.5 calls"."""
    import math

    high = float(top) if top is not None and top == top else 0.0
    fig.update_yaxes(rangemode="tozero", tick0=0, dtick=max(1, math.ceil(high / 5)), tickformat=",d")


def _true_ticks(fig: Any, agg: Any, x: str) -> None:
    """Tick labels at the grid's own values (the dodged lines sit around them)."""
    try:
        values = sorted({float(v) for v in agg[x].dropna()})
    except (TypeError, ValueError):
        return
    fig.update_xaxes(tickmode="array", tickvals=values, ticktext=[f"{v:g}" for v in values])


def _offset_of(rows: Any, groups: list[tuple[str, Any]], offsets: list[float]) -> list[float]:
    """The dodge offset of each row of ``rows`` (rows of ``groups``), so marks sit on their line."""
    where = {idx: offsets[k] for k, (_, g) in enumerate(groups) for idx in g.index}
    return [where.get(idx, 0.0) for idx in rows.index]


def _shifted(rows: Any, x: str, groups: list[tuple[str, Any]], offsets: list[float]) -> Any:
    """``rows[x]`` moved by each row's line offset (unchanged when nothing is dodged)."""
    if not len(rows) or not any(offsets):
        return rows[x]
    return rows[x] + _offset_of(rows, groups, offsets)


def _add_pick(fig: Any, agg: Any, x: str, recommended: Any, cols: list[tuple[str, int]]) -> None:
    """A star on the recommended setting in every panel (legend entry once), at the setting's true
    value: it marks the setting, whichever of the dodged lines it belongs to."""
    import plotly.graph_objects as go

    pick = _pick_rows(agg, _pick(recommended))
    if not len(pick):
        return
    xs = pick[x]
    for col, panel in cols:
        fig.add_trace(go.Scatter(x=xs, y=pick[col], mode="markers", name="recommended", legendgroup="recommended",
                                 showlegend=panel == 1, text=pick[x],
                                 marker=dict(symbol="star", size=16, color=PICK_COLOR, line=dict(color="#333", width=1)),
                                 hovertemplate=f"recommended: {x}=%{{text}}<br>%{{y:,}}<extra></extra>"),
                      row=1, col=panel)


def tokens_and_cost(df: Any, x: str = "keep_turns", *, recommended: Recommendation | Mapping[str, Any] | None = None
                    ) -> Any:
    """Total input tokens (left) and cost (right) against ``x``; a star marks the recommended setting.
    The cost is the one the tuner ranks on (:func:`inspector.sweep.cost_column`); when that is the
    cost with prompt caching, a third panel shows the cost without caching beside it, unless no prompt
    caching applies (every run's rule ``none``), where the one cost panel says so."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    agg = _aggregate(df)
    cost = cost_column(agg)
    costs = [cost] if cost else []
    plain = cost == "cost_with_caching_usd" and no_prompt_caching(agg)  # rule none: one cost, said once
    if cost == "cost_with_caching_usd" and agg["cost_without_caching_usd"].notna().all() and not plain:
        costs.append("cost_without_caching_usd")
    titles = ["total input tokens"] + [_NO_CACHING_TITLE if plain else _COST_TITLES[c] for c in costs]
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.08 + 0.04 * (3 - len(titles)))
    cols = [("tokens_sent", 1)] + [(c, k) for k, c in enumerate(costs, start=2)]
    groups = _groups(agg, x)
    offsets = _dodge(agg, x, len(groups))
    for k, (label, rows) in enumerate(groups):
        color = PALETTE[k % len(PALETTE)]
        for col, panel in cols:
            fig.add_trace(go.Scatter(
                x=_xs(rows, x, offsets[k]), y=rows[col], mode="lines+markers", name=label, legendgroup=label,
                showlegend=panel == 1, text=rows[x],
                line=dict(color=color, dash=DASHES[k % len(DASHES)]), marker=dict(symbol=SYMBOLS[k % len(SYMBOLS)]),
                hovertemplate=f"{label}<br>{x}=%{{text}}<br>{col}: %{{y:,}}<extra></extra>"),
                row=1, col=panel)
    _add_pick(fig, agg, x, recommended, cols)
    fig.update_xaxes(title_text=x)
    _true_ticks(fig, agg, x)
    fig.update_yaxes(title_text="tokens", rangemode="tozero", row=1, col=1)
    for _c, panel in cols[1:]:
        fig.update_yaxes(title_text="USD", tickformat="$.3f", rangemode="tozero", row=1, col=panel)
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25),
                      title=f"Tokens and cost against {x}")
    fig.update_layout(margin=dict(t=75))
    return fig


def summarizer_calls(df: Any, x: str = "hysteresis_ratio") -> Any:
    """Summarizer calls during a turn (left) and at commit (right) against ``x``."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    agg = _aggregate(df)
    fig = make_subplots(rows=1, cols=2, subplot_titles=["during a turn (in-turn)", "at commit (write-back)"],
                        shared_yaxes=True, horizontal_spacing=0.06)
    groups = _groups(agg, x)
    offsets = _dodge(agg, x, len(groups))
    for k, (label, rows) in enumerate(groups):
        color = PALETTE[k % len(PALETTE)]
        for col, panel in (("summarizer_in_turn", 1), ("summarizer_commit", 2)):
            fig.add_trace(go.Scatter(
                x=_xs(rows, x, offsets[k]), y=rows[col], mode="lines+markers", name=label, legendgroup=label,
                showlegend=panel == 1, text=rows[x],
                line=dict(color=color, dash=DASHES[k % len(DASHES)]), marker=dict(symbol=SYMBOLS[k % len(SYMBOLS)]),
                hovertemplate=f"{label}<br>{x}=%{{text}}<br>calls: %{{y}}<extra></extra>"),
                row=1, col=panel)
    fig.update_xaxes(title_text=x)
    _true_ticks(fig, agg, x)
    _count_ticks(fig, agg[["summarizer_in_turn", "summarizer_commit"]].max().max() if len(agg) else 0)
    fig.update_yaxes(title_text="summarizer calls", row=1, col=1)
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.28),
                      title=f"Summarizer calls against {x}")
    fig.update_layout(margin=dict(t=75))
    return fig


def peak_vs_budget(df: Any, x: str = "keep_turns") -> Any:
    """Peak payload per setting against the input budget line; red crosses mark calls over budget."""
    import plotly.graph_objects as go

    agg = _aggregate(df)
    fig = go.Figure()
    groups = _groups(agg, x)
    offsets = _dodge(agg, x, len(groups))
    for k, (label, rows) in enumerate(groups):
        fig.add_scatter(x=_xs(rows, x, offsets[k]), y=rows["peak_payload"], mode="lines+markers", name=label,
                        line=dict(color=PALETTE[k % len(PALETTE)], dash=DASHES[k % len(DASHES)]),
                        marker=dict(symbol=SYMBOLS[k % len(SYMBOLS)]), text=rows[x],
                        customdata=rows[["over_budget", "min_headroom", "trimmed", "messages_summarised",
                                         "messages_dropped"]].to_numpy(),
                        hovertemplate=f"{label}<br>{x}=%{{text}}<br>peak payload: %{{y:,}} tokens<br>"
                                      "calls over budget: %{customdata[0]}<br>smallest headroom: %{customdata[1]:,}"
                                      "<br>messages trimmed: %{customdata[2]}<br>folded into summaries: "
                                      "%{customdata[3]}<br>dropped without one: %{customdata[4]}<extra></extra>")
        trims = rows[rows["trimmed"] > 0]
        if len(trims):  # the token trimmer had to cut: a mark on the line, legend entry once
            fig.add_scatter(x=_xs(trims, x, offsets[k]), y=trims["peak_payload"], mode="markers",
                            name="trimmer cut messages", legendgroup="trimmed",
                            showlegend=not any(t.name == "trimmer cut messages" for t in fig.data),
                            marker=dict(symbol="triangle-down-open", size=13, color=TRIM_COLOR, line=dict(width=2)),
                            customdata=trims["trimmed"],
                            hovertemplate="the trimmer cut %{customdata} message(s)<extra></extra>")
    ok = agg[agg["errors"] == 0] if "errors" in agg.columns else agg
    budgets = sorted({int(b) for b in ok["input_budget"].dropna()})
    if len(budgets) == 1:
        fig.add_hline(y=budgets[0], line_dash="dash", line_color=BUDGET_COLOR,
                      annotation_text=f"input budget {budgets[0]:,}", annotation_position="top left")
    elif budgets:
        per_x = ok.groupby(x, sort=False)["input_budget"].min()
        fig.add_scatter(x=list(per_x.index), y=list(per_x.values), mode="lines", name="input budget",
                        line=dict(color=BUDGET_COLOR, dash="dash"), line_shape="hv")
    over = ok[ok["over_budget"] > 0]
    if len(over):
        fig.add_scatter(x=_shifted(over, x, groups, offsets), y=over["peak_payload"], mode="markers", name="over budget",
                        marker=dict(symbol="x", size=12, color=OVER_COLOR), customdata=over["over_budget"],
                        hovertemplate="%{customdata} call(s) over budget<extra></extra>")
    top = max([*budgets, *(int(v) for v in ok["peak_payload"].dropna())], default=0)
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25),
                      xaxis_title=x, yaxis_title="tokens (largest single payload)",
                      title=f"Peak payload against the budget, by {x}")
    _true_ticks(fig, agg, x)
    if top:
        fig.update_yaxes(range=[0, top * 1.12])
    return fig


def forgetting(df: Any, x: str = "keep_turns", *, recommended: Recommendation | Mapping[str, Any] | None = None
               ) -> Any:
    """Forgotten references (left: in all; right: calls that forgot at least one) against ``x``,
    zero-based; a star marks the recommended setting. See :mod:`inspector.forgetting`."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    agg = _aggregate(df)
    fig = make_subplots(rows=1, cols=2, subplot_titles=["forgotten references", "calls that forgot one"],
                        horizontal_spacing=0.12)
    cols = [("forgotten", 1), ("forgotten_calls", 2)]
    groups = _groups(agg, x)
    offsets = _dodge(agg, x, len(groups))
    for k, (label, rows) in enumerate(groups):
        for col, panel in cols:
            fig.add_trace(go.Scatter(
                x=_xs(rows, x, offsets[k]), y=rows[col], mode="lines+markers", name=label, legendgroup=label,
                showlegend=panel == 1, text=rows[x],
                line=dict(color=PALETTE[k % len(PALETTE)], dash=DASHES[k % len(DASHES)]),
                marker=dict(symbol=SYMBOLS[k % len(SYMBOLS)]),
                hovertemplate=f"{label}<br>{x}=%{{text}}<br>{col}: %{{y}}<extra></extra>"), row=1, col=panel)
    _add_pick(fig, agg, x, recommended, cols)
    fig.update_xaxes(title_text=x)
    _true_ticks(fig, agg, x)
    _count_ticks(fig, agg[["forgotten", "forgotten_calls"]].max().max() if len(agg) else 0)
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.28),
                      title=f"What each setting forgets, by {x}")
    fig.update_layout(margin=dict(t=75))
    return fig
