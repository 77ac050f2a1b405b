"""plotly figures over a replay: the per-call band bar and the timeline, shared by the app and the notebooks.

Lines on the timeline are on the payload scale: ``input budget`` = max_tokens − reserve − margin
(the trimmer's ceiling), ``summary trigger`` = fixed parts + hint, ``hysteresis ceiling`` = fixed
parts + ceiling; so a payload bar crossing a line means exactly what the engine decided.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from inspector.replay import Replay
from inspector.report.cache_view import CACHE_STRIP_CSS, break_markers, cache_strip_html, cached_line
from inspector.report.tables import frames_table
from inspector.vocabulary import BANDS

BAND_COLORS = {
    "system": "#4C78A8", "summary": "#B279A2", "history": "#72B7B2", "user": "#F58518",
    "working_memory": "#E45756", "tool_schemas": "#9D755D", "prefix": "#5D4037", "reserve": "#BAB0AC",
    "margin": "#D8D8D8", "headroom": "#EEEEEE",
}
BAND_LABELS = {
    "system": "system band", "summary": "summary", "history": "kept history", "user": "current user turn",
    "working_memory": "working memory", "tool_schemas": "tool schemas", "reserve": "completion reserve",
    "prefix": "unrecorded prefix (estimated)", "margin": "safety margin", "headroom": "headroom",
}
MARKERS = {
    "summarized": ("star", "#6A3D9A"),
    "reused": ("circle-open", "#6A3D9A"),
    "summary_not_sent": ("circle-x-open", "#8C8C8C"),
    "dropped": ("x", "#444444"),
    "summarizer-failed": ("x-thin-open", "#D62728"),
    "window-slid": ("triangle-left", "#444444"),
    "stack-capped": ("triangle-left", "#444444"),
}
"""Context-manager actions marked on the timeline: symbol and colour (the words are the package's
vocabulary: :data:`inspector.vocabulary.EVENT_WORDS`, else :func:`~inspector.vocabulary.action_words`).
A summary action is marked by what was sent (:func:`inspector.vocabulary.summary_event`): computed
or reused only when the summary block is in the payload, ``summary_not_sent`` when it was trimmed."""
LINE_STYLES = {
    "input_budget": dict(color="#222222", dash="solid", width=2.5),
    "trigger": dict(color="#1F77B4", dash="dash", width=1.5),
    "ceiling": dict(color="#9467BD", dash="dot", width=2),
}
"""The three budget lines get distinct colours and dashes, so two that almost coincide stay apart."""
TIMELINE_BAR_MAX = 400
"""Up to this many calls the timeline draws one bar per call; beyond it, stepped areas (one path per
band, the same numbers) with box zoom, and invisible markers on the top line (:data:`CLICKABLE`) so
a click lands on the call under it."""

CLICKABLE = dict(mode="lines+markers", marker=dict(size=6, opacity=0, maxdisplayed=1))
"""Lines and areas cannot be selected, and a click selects only the first point plotly lists under
the pointer, which over the long timeline's areas (and over bars, when the budget lines stand above
them) is the last budget line's: invisible markers on that one line (one per call, not one per call
and band) carry the click to the call under it. plotly finds the point under the pointer among all
of a trace's points, drawn or not, so these markers, never visible, are not drawn (``maxdisplayed``:
one at most): at 4 009 calls drawing them took half of the browser's time to draw the timeline."""

TIMELINE_MARGIN = dict(l=72, r=12)
"""The timeline's left and right margins in pixels, fixed (no automatic margin), so the plot area
sits at a known place and :func:`call_strip_html` under it lines up with the calls."""


STEP_SHAPE = "hvh"
"""Steps change half-way between two calls, so call k's value spans k ± 0.5 like its bar would,
and a click anywhere on that step picks call k (plotly picks the nearest point)."""


GROUP_MARKERS = {"summary": ("star", "#6A3D9A"), "drop": ("triangle-left", "#444444"),
                 "edit": ("square-open", "#1F77B4"), "failed": ("x-thin-open", "#D62728")}
"""The symbol and colour of an action :data:`MARKERS` does not name, by its declared group (a
strategy registered by a third party is marked like its kind; a ``kept`` action is not marked)."""


def marked_actions() -> dict[str, tuple[str, str]]:
    """Every action the timeline marks, with its symbol and colour: :data:`MARKERS`, then each
    registered action it does not name, styled by its group (:data:`GROUP_MARKERS`)."""
    from inspector.vocabulary import registered_actions

    out = dict(MARKERS)
    for a in registered_actions():
        if a.code not in out and a.group in GROUP_MARKERS:
            out[a.code] = GROUP_MARKERS[a.group]
    return out


def marker_words(action: str) -> str:
    """The legend's words for a timeline marker: the event's words, else the action's."""
    from inspector.vocabulary import EVENT_WORDS, action_words

    return EVENT_WORDS.get(action) or action_words(action)


def band_segments(frame: Any) -> list[tuple[str, int]]:
    """The call's bands in payload order, the unrecorded prefix when one was added to the budget
    (``Budget.prefix``: what the log does not show but every real call carried), then the completion
    reserve and the safety margin, then the headroom when there is some. Over budget there is no headroom and no extra band: the
    overflow is the part of these segments that lies past the window line (:func:`band_bar_html`)."""
    b = frame.budget
    segs = [(k, frame.bands.get(k, 0)) for k in BANDS]
    if b.prefix:
        segs.append(("prefix", b.prefix))
    segs += [("reserve", b.reserve), ("margin", b.margin)]
    if frame.headroom >= 0:
        segs.append(("headroom", frame.headroom))
    return segs


BAR_TEXT_MIN_PCT = 9.0
"""A band bar segment narrower than this share of the bar prints no number inside (its hover title
and the legend still give it), so numbers never spill over a neighbour."""


def band_bar_html(rp: Replay, call: int) -> str:
    """The call's bands against the model window as one stacked HTML bar (flex segments, no script).

    Its segments are :func:`band_segments`; the bar's scale is the window, or everything the call
    asks for (payload + reserve + margin) when that is more. Over budget, the part past the window
    line is shaded (``ci-over-part``, titled with the overflow) over the segments that lie there:
    the overflow is not a band of its own, so nothing is counted twice. Drawn by the browser as
    plain boxes, so the app, the notebook, a static export and a GitHub preview show the same bar.
    Guarantees:
    the window (and a calibrated cap that differs from it) are marked by a line across the bar with
    their label in a row *above* the bar, so a label never overlaps a segment; every segment has a
    hover title with its tokens and share of the window; the legend lists the non-empty bands in the
    bar's order. Under the bar, the call's input as the provider's cache sees it
    (:func:`inspector.report.cache_view.cache_strip_html`: read from cache, written to cache, sent
    uncached, the rule in force and why, the cost with and without caching, a cache break). Every
    text is HTML-escaped."""
    import html

    f = rp.frames[call]
    window = f.budget.window
    segs = [(name, tokens) for name, tokens in band_segments(f) if tokens > 0]
    scale = max(window, sum(t for _, t in segs), 1)
    cells, keys = [], []
    for name, tokens in segs:
        label = BAND_LABELS.get(name, name)
        width = 100.0 * tokens / scale
        share = 100.0 * tokens / window if window else 0.0
        tip = html.escape(f"{label}: {tokens:,} tokens ({share:.1f}% of the window)")
        text = f"{tokens:,} ({share:.0f}%)" if width >= BAR_TEXT_MIN_PCT else ""
        cells.append(f"<div class='ci-seg' data-band='{html.escape(name)}' title=\"{tip}\" "
                     f"style='width:{width:.3f}%;background:{BAND_COLORS[name]}'>{html.escape(text)}</div>")
        keys.append(f"<span class='ci-key'><i style='background:{BAND_COLORS[name]}'></i>{html.escape(label)}</span>")
    over_tokens = -f.headroom if f.headroom < 0 else 0
    if over_tokens:
        left = 100.0 * window / scale
        tip = html.escape(f"past the window: {over_tokens:,} tokens do not fit")
        cells.append(f"<div class='ci-over-part' title=\"{tip}\" style='left:{left:.3f}%;width:{100.0 - left:.3f}%'>"
                     "</div>")
        keys.append("<span class='ci-key'><i class='ci-over-key'></i>"
                    f"{html.escape(f'past the window line: {over_tokens:,} tokens over budget')}</span>")
    marks = [(window, f"window {window:,} ({f.budget.window_source})", "dashed")]
    if f.budget.max_tokens != window and (f.budget.calibration or not f.budget.prefix):
        marks.append((f.budget.max_tokens, f"calibrated cap {f.budget.max_tokens:,}", "dotted"))
    labels, lines = [], []
    for row, (tokens, text, style) in enumerate(marks):
        pos = 100.0 * tokens / scale
        side = f"right:{100.0 - pos:.3f}%" if pos > 50 else f"left:{pos:.3f}%"  # grows away from the line's far side
        labels.append(f"<div class='ci-mark-label' style='top:{row * 16}px;{side}'>{html.escape(text)}</div>")
        lines.append(f"<div class='ci-mark' style='left:{pos:.3f}%;border-left-style:{style}'></div>")
    over = f" — over budget by {over_tokens:,}" if over_tokens else ""
    title = f"turn {f.turn} · step {f.step} — {f.payload_tokens:,} tokens sent{over}"
    return (f"<style>{BAND_BAR_CSS}</style><div class='ci-band-bar'>"
            f"<div class='ci-band-title{' ci-over' if over else ''}'>{html.escape(title)}</div>"
            f"<div class='ci-mark-labels' style='height:{16 * len(marks)}px'>{''.join(labels)}</div>"
            f"<div class='ci-bar'>{''.join(cells)}{''.join(lines)}</div>"
            f"<div class='ci-legend'>{''.join(keys)}</div>{cache_strip_html(rp, call, scale)}</div>")


BAND_BAR_CSS = (
    ".ci-band-bar{font-family:inherit;margin:4px 0 10px}"
    ".ci-band-title{font-size:.95rem;font-weight:600;margin-bottom:4px}.ci-band-title.ci-over{color:#D62728}"
    ".ci-mark-labels{position:relative;font-size:.75rem;color:#333}"
    ".ci-mark-label{position:absolute;white-space:nowrap;padding:0 3px}"
    ".ci-bar{position:relative;display:flex;height:30px;border:1px solid #888;background:#fff}"
    ".ci-seg{height:100%;overflow:hidden;white-space:nowrap;text-align:center;font-size:.75rem;line-height:30px;"
    "color:#111;box-sizing:border-box;border-right:1px solid rgba(255,255,255,.6)}"
    ".ci-over-part{position:absolute;top:0;bottom:0;pointer-events:auto;border:2px solid #D62728;"
    "box-sizing:border-box;background:repeating-linear-gradient(135deg,rgba(214,39,40,.35) 0 4px,transparent 4px 9px)}"
    ".ci-over-key{background:repeating-linear-gradient(135deg,rgba(214,39,40,.6) 0 2px,transparent 2px 4px)!important;"
    "border:1px solid #D62728!important}"
    ".ci-mark{position:absolute;top:-6px;bottom:-4px;width:0;border-left:2px dashed #333}"
    ".ci-legend{font-size:.78rem;margin-top:5px;line-height:1.5}"
    ".ci-key{white-space:nowrap;margin-right:12px}"
    ".ci-key i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px;"
    "border:1px solid rgba(0,0,0,.2)}" + CACHE_STRIP_CSS)


def tick_step(n: int, most: int = 14) -> int:
    """An integer tick step (1, 2, 5, 10, 20, 50, …) giving at most ``most`` ticks over ``n`` calls."""
    step = 1
    while n / step > most:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2
    return step


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
    """Payload tokens per call stacked by band, the budget lines, decision markers, the tokens read
    from the provider's prompt cache per call and a marker on every cache break
    (:func:`inspector.report.cache_view.cached_line`, :func:`~inspector.report.cache_view.break_markers`); with
    ``forgotten`` (default) a marker on every call that needed an identifier it could no longer
    see (:mod:`inspector.forgetting`), the identifiers in its hover text.

    Hovering a call shows all of it at once (every band, the lines, the events); ticks are whole
    call numbers; calls over the input budget get their own marker. Up to
    :data:`TIMELINE_BAR_MAX` calls are bars, longer replays stepped areas (same numbers).
    ``selected`` draws the cursor (:func:`cursor_shape`) at that call, ``title`` heads the chart and
    ``y_max`` fixes the top of the y axis (timelines side by side share one). Returns a plotly
    ``Figure``; an empty one for a replay with no call."""
    import plotly.graph_objects as go

    df = frames_table(rp)
    if df.empty:
        return go.Figure()
    bars = len(df) <= TIMELINE_BAR_MAX
    lines = _budget_lines(rp)
    data = _band_traces(df, bars) + cached_line(rp, df) + _line_traces(df, lines)
    data[-1].update(CLICKABLE)  # the last budget line carries the click (see CLICKABLE), over bars too
    data += _event_traces(df)
    if forgotten:
        data += _forgotten_traces(rp, df)
    data += _fold_traces(rp)
    data += break_markers(rp, df)
    for trace in data:
        # A click selects a call, and plotly would then dim every other call for good: the app never
        # redraws this figure on a step, so the dimmed bars would keep pointing at the clicked call
        # after the user stepped away. Selection changes nothing on screen; the strip marks the call.
        shown = dict(marker=dict(opacity=trace.get("marker", {}).get("opacity", 1)))
        trace.update(selected=shown, unselected=shown)
    layout = _timeline_layout(df, lines, data, bars=bars, selected=selected, title=title, y_max=y_max)
    return go.Figure(dict(data=data, layout=layout))


def _band_traces(df: Any, bars: bool) -> list[dict[str, Any]]:
    """One trace per band the replay ever sends: bars, or stepped stacked areas for a long replay.
    The first carries the call's heading in the unified hover, and the turn and step it names (the
    others' hover reads no custom data, so they carry none: at 4 009 calls, a quarter less to send)."""
    x = df["call"].to_numpy()
    custom = df[["turn", "step"]].to_numpy()
    data: list[dict[str, Any]] = []
    for band in BANDS:  # stacked bottom to top in the payload's order
        if not df[band].any():
            continue  # a band this strategy never sends gets no legend entry
        head = "call %{x} · turn %{customdata[0]} · step %{customdata[1]}<br>" if not data else ""
        trace: dict[str, Any] = dict(x=x, y=df[band].to_numpy(), name=BAND_LABELS[band],
                                     hovertemplate=head + BAND_LABELS[band] + ": %{y:,}<extra></extra>")
        if head:
            trace["customdata"] = custom
        if bars:
            trace.update(type="bar", marker=dict(color=BAND_COLORS[band]))
        else:
            trace.update(type="scatter", mode="lines", stackgroup="bands", line=dict(width=0, shape=STEP_SHAPE),
                         fillcolor=BAND_COLORS[band])
        data.append(trace)
    return data


def _line_traces(df: Any, lines: Sequence[str]) -> list[dict[str, Any]]:
    """The budget lines (:func:`_budget_lines`) as steps over the calls."""
    from inspector.vocabulary import TIMELINE_WORDS

    x = df["call"].to_numpy()
    return [dict(type="scatter", x=x, y=df[col].to_numpy(), name=TIMELINE_WORDS[col], mode="lines",
                 line=dict(shape=STEP_SHAPE, **LINE_STYLES[col]),
                 hovertemplate=TIMELINE_WORDS[col] + ": %{y:,}<extra></extra>") for col in lines]


def _marker_trace(df: Any, sel: Any, name: str, symbol: str, color: str, lift: float,
                  text: list[str] | None = None) -> dict[str, Any]:
    """Markers over the selected calls, ``lift`` × the tallest payload above each call's payload."""
    top = df["payload_tokens"]
    ymax = float(top.max() or 1)
    return dict(type="scatter", x=df["call"][sel].tolist(), y=(top[sel] + ymax * lift).tolist(),
                mode="markers", name=name, marker=dict(symbol=symbol, size=10, color=color,
                                                       line=dict(width=1.5, color=color)),
                text=text, hovertemplate=name + (": %{text}" if text else "") + "<extra></extra>")


def _event_traces(df: Any) -> list[dict[str, Any]]:
    """Markers for the context manager's actions (:data:`MARKERS`; a summary by what was sent), the
    trimmer's cuts, the pairing repairs and the calls over the input budget."""
    from inspector.vocabulary import EVENT_WORDS, TIMELINE_WORDS, summary_event

    data = []
    events = df["cm_action"].copy()
    events[:] = [summary_event(a, bool(s)) or a for a, s in zip(df["cm_action"], df["summary_sent"], strict=True)]
    for action, (symbol, color) in marked_actions().items():
        sel = events == action
        if sel.any():
            data.append(_marker_trace(df, sel, marker_words(action), symbol, color, 0.04))
    for col, kind, symbol, color in (("trimmed", "trimmed", "triangle-down", "#FF7F0E"),
                                     ("repairs", "repair", "diamond", "#17BECF")):
        sel = df[col] > 0
        if sel.any():
            data.append(_marker_trace(df, sel, EVENT_WORDS[kind], symbol, color, 0.08,
                                      [f"{v:,}" for v in df[col][sel]]))
    over = df["headroom"] < 0
    if over.any():
        data.append(_marker_trace(df, over, TIMELINE_WORDS["over_budget"], "triangle-up", "#D62728", 0.16,
                                  [f"by {-v:,} tokens" for v in df["headroom"][over]]))
    return data


def _forgotten_traces(rp: Replay, df: Any) -> list[dict[str, Any]]:
    """A marker on every call that forgot a reference, its first six identifiers in the hover text."""
    from inspector.vocabulary import EVENT_WORDS

    lost = forgotten_per_call(rp)
    sel = [k for k, calls in enumerate(lost) if calls]
    if not sel:
        return []
    top = df["payload_tokens"]
    ymax = float(top.max() or 1)
    words = ["<br>".join(f"{x.identifier} (in message {x.message})" for x in lost[k][:6])
             + (f"<br>… {len(lost[k]) - 6} more" if len(lost[k]) > 6 else "") for k in sel]
    return [dict(type="scatter", x=sel, y=[float(top[k]) + ymax * 0.12 for k in sel], mode="markers",
                 name=EVENT_WORDS["forgotten"], text=words,
                 marker=dict(symbol="x-thin-open", size=10, color="#D62728", line=dict(width=2)),
                 hovertemplate=EVENT_WORDS["forgotten"] + ":<br>%{text}<extra></extra>")]


def _fold_traces(rp: Replay) -> list[dict[str, Any]]:
    """Commit folds on the axis, between the last call of their turn and the next call."""
    commit_calls = commit_positions(rp)
    if not commit_calls:
        return []
    from inspector.vocabulary import EVENT_WORDS, action_words

    return [dict(type="scatter", x=[c for c, _ in commit_calls], y=[0] * len(commit_calls), mode="markers",
                 name=EVENT_WORDS["fold"], text=[action_words(a) for _, a in commit_calls],
                 marker=dict(symbol="line-ns-open", size=14, color="#6A3D9A", line=dict(width=2)),
                 hovertemplate=EVENT_WORDS["fold"] + ": %{text}<extra></extra>")]


def _timeline_layout(df: Any, lines: Sequence[str], data: list[dict[str, Any]], *, bars: bool,
                     selected: int | None, title: str | None, y_max: float | None) -> dict[str, Any]:
    """The timeline's layout: stacked bars, whole-call ticks, fixed margins, the cursor at
    ``selected``, the y axis (:func:`_y_scale`, with the lines above it named) and the digest of
    ``data`` (:func:`data_revision`)."""
    from inspector.vocabulary import TIMELINE_WORDS

    n = len(df)
    shapes = [cursor_shape(selected)] if selected is not None and 0 <= selected < n else []
    layout: dict[str, Any] = dict(
        barmode="stack", bargap=0.15, height=340,
        margin=dict(**TIMELINE_MARGIN, t=40 if title else 16, b=10),
        xaxis=dict(title=dict(text="LLM call"), tickformat="d", dtick=tick_step(n), tick0=0,
                   range=list(timeline_range(n))),
        yaxis=dict(title=dict(text="tokens"), tickformat=",d", rangemode="tozero", automargin=False),
        legend=dict(orientation="h", y=-0.22, traceorder="normal"), hovermode="x unified",
        clickmode="event+select", shapes=shapes, datarevision=data_revision(data))
    if not bars:
        layout["dragmode"] = "zoom"  # a dragged box zooms in (Streamlit would pan); a double click zooms out
    if title:
        layout["title"] = dict(text=title)
    y_top, off_scale = _y_scale(df, lines, y_max)
    if y_top:
        layout["yaxis"]["range"] = [0, y_top]
    if off_scale:
        layout["annotations"] = [dict(
            xref="paper", yref="paper", x=1, y=1, xanchor="right", yanchor="top", showarrow=False,
            align="right", font=dict(size=11, color="#555"), bgcolor="rgba(255,255,255,0.8)",
            text="↑ " + TIMELINE_WORDS["off_scale"] + ": " + " · ".join(off_scale))]
    return layout


OFF_SCALE = 3.0
"""A budget line more than this many times the tallest payload is left off the timeline's scale
(and named with its value at the top of the chart) instead of stretching the axis to it."""


def _y_scale(df: Any, lines: Sequence[str], y_max: float | None) -> tuple[float | None, list[str]]:
    """The timeline's y range top (None: plotly's own, which reaches every trace) and the budget
    lines drawn above it, in words with their values.

    Why: with a million-token window (gpt-4.1, Claude with 1M context) the input budget is ~950 000
    tokens while a conversation's payloads stay under 20 000; an axis reaching the budget draws
    every bar as a flat line at the bottom and the chart says nothing. The axis then follows the
    payloads (room for the markers above them) and says which lines are above it and where. A line
    within :data:`OFF_SCALE` × the tallest payload keeps the axis reaching it, as before."""
    from inspector.vocabulary import TIMELINE_WORDS

    top = y_max
    if top is None:
        top, needed = _y_top(df, lines)
        if not needed:
            return None, []
    off = []
    for col in lines:
        lo, hi = int(df[col].min()), int(df[col].max())
        if hi > top:
            off.append(f"{TIMELINE_WORDS[col]} {lo:,}" + (f"–{hi:,}" if hi != lo else "") + " tokens")
    return top, off


def _y_top(df: Any, lines: Sequence[str]) -> tuple[float, bool]:
    """The top of a timeline's y axis that shows every payload with its markers and every budget
    line within :data:`OFF_SCALE` × the tallest payload, and whether a line is beyond that."""
    tallest = float(df["payload_tokens"].max() or 1)
    highs = [float(df[col].max()) for col in lines]
    near = [h for h in highs if h <= OFF_SCALE * tallest]
    return max([tallest * 1.22, *(h * 1.05 for h in near)]), len(near) < len(highs)


def timeline_top(rp: Replay) -> float | None:
    """The top of ``rp``'s timeline y axis as :func:`timeline` draws it without ``y_max`` (every
    payload with its markers, every budget line within :data:`OFF_SCALE` × the tallest payload);
    None for a replay with no call. Timelines drawn side by side share the largest of their tops."""
    df = frames_table(rp)
    return None if df.empty else _y_top(df, _budget_lines(rp))[0]


def _budget_lines(rp: Replay) -> list[str]:
    """The budget lines a replay's timeline draws: the input budget, and the summarising manager's
    trigger and ceiling (no line where they do not apply)."""
    return [col for col in ("input_budget", "trigger", "ceiling") if col == "input_budget" or rp.terms.summarizing]


def timeline_range(n: int) -> tuple[float, float]:
    """The timeline's x range over ``n`` calls: every call's bar (or step) whole, k ± 0.5, with a
    little air at both ends. One source for the figure and :func:`call_strip_html`."""
    return (-0.6, n - 0.4)


def data_revision(data: list[dict[str, Any]]) -> str:
    """A digest of a figure's traces, set as ``layout.datarevision``.

    It tells plotly.js whether the traces changed: the same data gives the same digest (the traces
    are kept as drawn, only the shapes are drawn again), and different data always gets a different
    digest, so a new replay is never drawn with the old traces."""
    h = hashlib.blake2b(digest_size=12)
    for trace in data:
        for key in sorted(trace):
            value = trace[key]
            h.update(key.encode())
            h.update(value.tobytes() if hasattr(value, "tobytes") else repr(value).encode())
    return h.hexdigest()


def cursor_shape(call: int) -> dict[str, Any]:
    """The vertical line that marks the current call (the only thing that moves when stepping)."""
    return dict(type="line", xref="x", yref="paper", x0=call, x1=call, y0=0, y1=1,
                line=dict(color="#D62728", width=2))


def forgotten_per_call(rp: Replay) -> list[list[Any]]:
    """:func:`inspector.forgetting.forgotten_references` of this replay, computed once and kept on
    it (the timeline, the stepper's jumps and the "This call" list all read the same lists)."""
    from inspector.forgetting import forgotten_references

    return rp.view("forgotten", lambda: forgotten_references(rp))


def commit_positions(rp: Replay) -> list[tuple[float, str]]:
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
