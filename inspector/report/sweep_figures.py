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
from inspector.sweep import by_setting, cost_column, param_columns

PALETTE = ("#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#FF9DA6", "#9D755D",
           "#BAB0AC", "#EECA3B")
BUDGET_COLOR = "#222222"
OVER_COLOR = "#D62728"
PICK_COLOR = "#FFD700"
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "star-square")

_COST_TITLES = {"cost_usd": "cost (USD, agent + summarizer)", "payload_cost_usd": "cost (USD, agent's calls only)"}


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


def tokens_and_cost(df: Any, x: str = "keep_turns", *, recommended: Recommendation | Mapping[str, Any] | None = None
                    ) -> Any:
    """Total input tokens (left) and cost (right) against ``x``; a star marks the recommended setting."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    agg = _aggregate(df)
    cost = cost_column(agg)
    titles = ["total input tokens"] + ([_COST_TITLES[cost]] if cost else [])
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.12)
    cols = [("tokens_sent", 1)] + ([(cost, 2)] if cost else [])
    for k, (label, rows) in enumerate(_groups(agg, x)):
        color = PALETTE[k % len(PALETTE)]
        for col, panel in cols:
            fig.add_trace(go.Scatter(
                x=rows[x], y=rows[col], mode="lines+markers", name=label, legendgroup=label, showlegend=panel == 1,
                line=dict(color=color, dash=DASHES[k % len(DASHES)]), marker=dict(symbol=SYMBOLS[k % len(SYMBOLS)]),
                hovertemplate=f"{label}<br>{x}=%{{x}}<br>{col}: %{{y:,}}<extra></extra>"),
                row=1, col=panel)
    pick = _pick_rows(agg, _pick(recommended))
    if len(pick):
        for col, panel in cols:
            fig.add_trace(go.Scatter(x=pick[x], y=pick[col], mode="markers", name="recommended",
                                     legendgroup="recommended", showlegend=panel == 1,
                                     marker=dict(symbol="star", size=16, color=PICK_COLOR,
                                                 line=dict(color="#333", width=1)),
                                     hovertemplate="recommended<br>%{y:,}<extra></extra>"), row=1, col=panel)
    fig.update_xaxes(title_text=x)
    fig.update_yaxes(title_text="tokens", rangemode="tozero", row=1, col=1)
    if cost:
        fig.update_yaxes(title_text="USD", tickformat="$.3f", rangemode="tozero", row=1, col=2)
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25),
                      title=f"Tokens and cost against {x}")
    return fig


def summarizer_calls(df: Any, x: str = "hysteresis_ratio") -> Any:
    """Summarizer calls during a turn (left) and at commit (right) against ``x``."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    agg = _aggregate(df)
    fig = make_subplots(rows=1, cols=2, subplot_titles=["during a turn (in-turn)", "at commit (write-back)"],
                        shared_yaxes=True, horizontal_spacing=0.06)
    for k, (label, rows) in enumerate(_groups(agg, x)):
        color = PALETTE[k % len(PALETTE)]
        for col, panel in (("summarizer_in_turn", 1), ("summarizer_commit", 2)):
            fig.add_trace(go.Scatter(
                x=rows[x], y=rows[col], mode="lines+markers", name=label, legendgroup=label, showlegend=panel == 1,
                line=dict(color=color, dash=DASHES[k % len(DASHES)]), marker=dict(symbol=SYMBOLS[k % len(SYMBOLS)]),
                hovertemplate=f"{label}<br>{x}=%{{x}}<br>calls: %{{y}}<extra></extra>"),
                row=1, col=panel)
    fig.update_xaxes(title_text=x)
    fig.update_yaxes(title_text="summarizer calls", rangemode="tozero", row=1, col=1)
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.28),
                      title=f"Summarizer calls against {x}")
    return fig


def peak_vs_budget(df: Any, x: str = "keep_turns") -> Any:
    """Peak payload per setting against the input budget line; red crosses mark calls over budget."""
    import plotly.graph_objects as go

    agg = _aggregate(df)
    fig = go.Figure()
    groups = _groups(agg, x)
    for k, (label, rows) in enumerate(groups):
        fig.add_scatter(x=rows[x], y=rows["peak_payload"], mode="lines+markers", name=label,
                        line=dict(color=PALETTE[k % len(PALETTE)], dash=DASHES[k % len(DASHES)]),
                        marker=dict(symbol=SYMBOLS[k % len(SYMBOLS)]),
                        customdata=rows[["over_budget", "min_headroom"]].to_numpy(),
                        hovertemplate=f"{label}<br>{x}=%{{x}}<br>peak payload: %{{y:,}} tokens<br>"
                                      "calls over budget: %{customdata[0]}<br>smallest headroom: %{customdata[1]:,}"
                                      "<extra></extra>")
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
        fig.add_scatter(x=over[x], y=over["peak_payload"], mode="markers", name="over budget",
                        marker=dict(symbol="x", size=12, color=OVER_COLOR), customdata=over["over_budget"],
                        hovertemplate="%{customdata} call(s) over budget<extra></extra>")
    top = max([*budgets, *(int(v) for v in ok["peak_payload"].dropna())], default=0)
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.25),
                      xaxis_title=x, yaxis_title="tokens (largest single payload)",
                      title=f"Peak payload against the budget, by {x}")
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
    cols = (("forgotten", 1), ("forgotten_calls", 2))
    for k, (label, rows) in enumerate(_groups(agg, x)):
        for col, panel in cols:
            fig.add_trace(go.Scatter(
                x=rows[x], y=rows[col], mode="lines+markers", name=label, legendgroup=label, showlegend=panel == 1,
                line=dict(color=PALETTE[k % len(PALETTE)], dash=DASHES[k % len(DASHES)]),
                marker=dict(symbol=SYMBOLS[k % len(SYMBOLS)]),
                hovertemplate=f"{label}<br>{x}=%{{x}}<br>{col}: %{{y}}<extra></extra>"), row=1, col=panel)
    pick = _pick_rows(agg, _pick(recommended))
    if len(pick):
        for col, panel in cols:
            fig.add_trace(go.Scatter(x=pick[x], y=pick[col], mode="markers", name="recommended",
                                     legendgroup="recommended", showlegend=panel == 1,
                                     marker=dict(symbol="star", size=16, color=PICK_COLOR,
                                                 line=dict(color="#333", width=1))), row=1, col=panel)
    fig.update_xaxes(title_text=x)
    fig.update_yaxes(rangemode="tozero")
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.28),
                      title=f"What each setting forgets, by {x}")
    return fig
