"""plotly figures over a replay: the per-call band bar, the timeline, aligned comparisons.

Lines on the timeline are on the payload scale: ``input budget`` = max_tokens − reserve − margin
(the trimmer's ceiling), ``summary trigger`` = fixed parts + hint, ``hysteresis ceiling`` = fixed
parts + ceiling; so a payload bar crossing a line means exactly what the engine decided.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspector.replay import Replay
from inspector.report.tables import frames_table

BAND_COLORS = {
    "system": "#4C78A8", "summary": "#B279A2", "history": "#72B7B2", "user": "#F58518",
    "working_memory": "#E45756", "tool_schemas": "#9D755D", "reserve": "#BAB0AC", "margin": "#D8D8D8",
    "headroom": "#EEEEEE", "over budget": "#D62728",
}
BAND_LABELS = {
    "system": "system band", "summary": "summary", "history": "kept history", "user": "current user turn",
    "working_memory": "working memory", "tool_schemas": "tool schemas", "reserve": "completion reserve",
    "margin": "safety margin", "headroom": "headroom",
}
MARKERS = {
    "summarized": ("summary computed", "star", "#6A3D9A"),
    "reused": ("summary reused", "circle-open", "#6A3D9A"),
    "dropped": ("turns dropped", "x", "#444444"),
    "summarizer-failed": ("summarizer failed", "x-thin-open", "#D62728"),
    "window-slid": ("window slid", "triangle-left", "#444444"),
    "stack-capped": ("stack capped", "triangle-left", "#444444"),
}


def band_segments(frame: Any) -> list[tuple[str, int]]:
    b = frame.budget
    segs = [(k, frame.bands.get(k, 0)) for k in ("system", "summary", "history", "user", "working_memory", "tool_schemas")]
    segs += [("reserve", b["reserve"]), ("margin", b["margin"])]
    segs.append(("headroom", frame.headroom) if frame.headroom >= 0 else ("over budget", -frame.headroom))
    return segs


def band_bar(rp: Replay, call: int) -> Any:
    """One stacked horizontal bar: every band of this call against the model window."""
    import plotly.graph_objects as go

    f = rp.frames[call]
    window = f.budget["window"]
    fig = go.Figure()
    for name, tokens in band_segments(f):
        pct = 100.0 * tokens / window if window else 0.0
        fig.add_bar(y=["payload"], x=[tokens], orientation="h", name=BAND_LABELS.get(name, name),
                    marker_color=BAND_COLORS[name], text=[f"{tokens:,} ({pct:.1f}%)"] if pct >= 4 else None,
                    textposition="inside",
                    hovertemplate=f"{BAND_LABELS.get(name, name)}: {tokens:,} tokens ({pct:.1f}% of window)<extra></extra>")
    fig.add_vline(x=window, line_dash="dash", line_color="#333",
                  annotation_text=f"window {window:,} ({f.budget['window_source']})")
    if f.budget["max_tokens"] != window:
        fig.add_vline(x=f.budget["max_tokens"], line_dash="dot", annotation_text="trimmer cap")
    fig.update_layout(barmode="stack", height=210, margin=dict(l=10, r=10, t=30, b=10),
                      xaxis_title="tokens", legend=dict(orientation="h", y=-0.5), showlegend=True,
                      title=f"turn {f.turn} · step {f.step} — {f.payload_tokens:,} tokens sent")
    return fig


NOTEBOOK_RENDERER = "plotly_mimetype+notebook"
"""Figures carry both the plotly mimetype (JupyterLab, VS Code) and an HTML rendering with
plotly.js embedded once per notebook, so they survive nbconvert HTML export and offline viewing."""


def use_notebook_renderer() -> str:
    """Make plotly figures travel with the notebook (:data:`NOTEBOOK_RENDERER`). Call it from a
    notebook; importing the package never changes plotly's settings. Returns the renderer name."""
    import plotly.io as pio

    pio.renderers.default = NOTEBOOK_RENDERER
    return NOTEBOOK_RENDERER


def timeline(rp: Replay, *, selected: int | None = None, title: str | None = None, y_max: float | None = None,
             forgotten: bool = True) -> Any:
    """Payload tokens per call stacked by band, budget lines, and decision markers; with
    ``forgotten`` (default) a red marker on every call that needed an identifier it could no
    longer see (:mod:`inspector.forgetting`), the identifiers in its hover text."""
    import plotly.graph_objects as go

    df = frames_table(rp)
    fig = go.Figure()
    if df.empty:
        return fig
    x = df["call"]
    for band in ("system", "summary", "history", "user", "working_memory", "tool_schemas"):
        if not df[band].any():
            continue  # a band this strategy never sends gets no legend entry
        fig.add_bar(x=x, y=df[band], name=BAND_LABELS[band], marker_color=BAND_COLORS[band],
                    customdata=df[["turn", "step"]].to_numpy(),
                    hovertemplate="call %{x} (turn %{customdata[0]}, step %{customdata[1]})<br>"
                                  + BAND_LABELS[band] + ": %{y:,}<extra></extra>")
    summarising = getattr(getattr(rp.settings, "context_manager", None), "type", None) == "summarising"
    for col, label, dash in (("input_budget", "input budget", "solid"), ("trigger", "summary trigger", "dash"),
                             ("ceiling", "hysteresis ceiling", "dot")):
        if col != "input_budget" and not summarising:
            continue  # the trigger and ceiling are the summarising manager's: no line where they do not apply
        fig.add_scatter(x=x, y=df[col], mode="lines", name=label, line=dict(color="#222", dash=dash, width=1.5),
                        line_shape="hv")
    top = df["payload_tokens"]
    for action, (label, symbol, color) in MARKERS.items():
        sel = df["cm_action"] == action
        if sel.any():
            fig.add_scatter(x=x[sel], y=top[sel] * 1.04, mode="markers", name=label,
                            marker=dict(symbol=symbol, size=10, color=color))
    for col, label, symbol, color in (("trimmed", "trimmed", "triangle-down", "#FF7F0E"),
                                      ("repairs", "pairing repair", "diamond", "#17BECF")):
        sel = df[col] > 0
        if sel.any():
            fig.add_scatter(x=x[sel], y=top[sel] * 1.08, mode="markers", name=label,
                            marker=dict(symbol=symbol, size=9, color=color), customdata=df[col][sel],
                            hovertemplate=f"{label}: %{{customdata}}<extra></extra>")
    if forgotten:
        from inspector.forgetting import forgotten_references

        lost = forgotten_references(rp)
        sel = [k for k, calls in enumerate(lost) if calls]
        if sel:
            words = ["<br>".join(f"{x.identifier} (in message {x.message})" for x in lost[k][:6])
                     + (f"<br>… {len(lost[k]) - 6} more" if len(lost[k]) > 6 else "") for k in sel]
            fig.add_scatter(x=sel, y=[top[k] * 1.12 for k in sel], mode="markers", name="forgot a reference",
                            marker=dict(symbol="x-thin-open", size=10, color="#D62728", line=dict(width=2)),
                            text=words, hovertemplate="forgotten:<br>%{text}<extra></extra>")
    commit_calls = _commit_positions(rp)
    if commit_calls:
        fig.add_scatter(x=[c for c, _ in commit_calls], y=[0] * len(commit_calls), mode="markers",
                        name="commit-time fold", marker=dict(symbol="line-ns-open", size=14, color="#6A3D9A"),
                        text=[a for _, a in commit_calls], hovertemplate="commit fold: %{text}<extra></extra>")
    if selected is not None and 0 <= selected < len(df):
        fig.add_vline(x=selected, line_color="#D62728", line_width=2)
    fig.update_layout(barmode="stack", height=380, margin=dict(l=10, r=10, t=40 if title else 20, b=10),
                      xaxis_title="LLM call", yaxis_title="tokens", legend=dict(orientation="h", y=-0.25),
                      title=title, clickmode="event+select")
    if y_max:
        fig.update_yaxes(range=[0, y_max])
    return fig


def _commit_positions(rp: Replay) -> list[tuple[float, str]]:
    """Commit folds placed between the last call of their turn and the next call."""
    last_call: dict[int, int] = {}
    for k, f in enumerate(rp.frames):
        last_call[f.turn] = k
    out = []
    for c in rp.commits:
        if c.action in ("unchanged",) or c.turn not in last_call:
            continue
        out.append((last_call[c.turn] + 0.5, c.action))
    return out


def compare_timelines(replays: Mapping[str, Replay]) -> list[Any]:
    """One timeline per strategy with the same y axis, so heights compare at a glance."""
    y_max = max((f.payload_tokens for rp in replays.values() for f in rp.frames), default=0) * 1.15 or None
    return [timeline(rp, title=name, y_max=y_max) for name, rp in replays.items()]
