"""The app's own timeline pieces: the strip that marks the current call under the timeline, the
legend drawn as wrapping HTML, and one timeline per strategy for *Side by side*.

The timeline itself is :func:`inspector.report.figures.timeline` (the notebooks draw it too); these
pieces line up with it through its fixed margins and x range (:data:`~inspector.report.figures.TIMELINE_MARGIN`,
:func:`~inspector.report.figures.timeline_range`). No Streamlit import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspector.replay import Replay
from inspector.report.figures import TIMELINE_MARGIN, tick_step, timeline, timeline_range, timeline_top

AXIS_DEPTH_PX = 67
"""The bottom margin Streamlit's chart theme ends up with under the timeline: its x axis has
``automargin`` on, so plotly makes room for the call numbers (12 px Source Sans), the title's
standoff (20 px), the 14 px title and its 12 px automargin pad. Measured in Chromium."""

TICK_DIGIT_PX = 5.973
"""Width of one digit of the x axis's call numbers in Streamlit's chart theme (Source Sans, 12 px;
its digits are all one width), measured in Chromium: "4000" is 23.89 px wide."""

PLOT_WIDTH_PX = 980
"""The width of the page's timeline at a 1 440-px window with the sidebar open, the benchmark's
(:func:`app_timeline_margins` estimates the last call number's overhang at this width)."""

NEAR_END = 0.005
"""A last tick closer than this share of the x range to the range's right end overhangs by nearly
the same pixels at any chart width (0.5 % of a few hundred pixels more or less is about one pixel)."""


def app_timeline_margins(n: int) -> dict[str, int]:
    """The bottom and right margins plotly's automatic margins give the app's timeline over ``n``
    calls in Streamlit's theme, set before the first draw.

    Why: Streamlit's theme turns ``automargin`` on for the x axis. plotly then draws every trace,
    measures the call numbers and the axis title, widens the margins and draws every trace again
    (at 4 009 calls, a third of the browser's time for the chart). With the margins it arrives at
    set up front, the measure finds nothing to widen and the second draw is skipped. Automatic
    margins stay on: where these fall short of what the labels need, plotly widens as before.
    The bottom margin is :data:`AXIS_DEPTH_PX`. The right one is :data:`TIMELINE_MARGIN`'s, plus
    what the last call number sticks out past the plot when its tick lies within :data:`NEAR_END`
    of the right end (then nearly the same at any width; farther in, plotly decides as before)."""
    lo, hi = timeline_range(n)
    step = tick_step(n)
    last = int(hi // step) * step  # the last tick plotly draws (ticks at 0, step, 2·step, …)
    right = TIMELINE_MARGIN["r"]
    share = (hi - last) / (hi - lo)
    if n > 0 and share < NEAR_END:
        half_label = len(str(last)) * TICK_DIGIT_PX / 2
        for _ in range(2):  # the plot's width depends on the margin it gets: settle it
            width = PLOT_WIDTH_PX - TIMELINE_MARGIN["l"] - right
            right = TIMELINE_MARGIN["r"] + max(0, round(half_label - share * width))
    return dict(b=AXIS_DEPTH_PX, r=right)


def call_strip_html(n: int, call: int) -> str:
    """A thin strip under the timeline marking the current call ("▲ call k of N").

    It spans the timeline's plot area (the same fixed margins, the same x range as the unzoomed
    figure; below the legend), so the marker sits under call ``k``'s bar. (A legend on top put the
    strip right under the axis, but at 1024 px it took most of the chart's height.) In the app a
    step draws this strip again, never the timeline (drawn once per replay). A zoomed timeline keeps
    the strip on the whole conversation (it is then an overview: where the current call lies in all
    N)."""
    lo, hi = timeline_range(n)
    pos = 100.0 * (call - lo) / (hi - lo) if hi > lo else 0.0
    text = f"▲ call {call:,} of {n:,}"
    side = f"right:{100.0 - pos:.3f}%;text-align:right" if pos > 70 else f"left:{pos:.3f}%"
    return (f"<div class='ci-strip' style='position:relative;height:20px;margin:-6px {TIMELINE_MARGIN['r']}px 0 "
            f"{TIMELINE_MARGIN['l']}px;border-top:1px solid #ccc;font-size:.75rem;color:#D62728'>"
            f"<div class='ci-cursor' data-call='{call}' style='position:absolute;left:{pos:.3f}%;top:-7px;"
            f"height:10px;border-left:2px solid #D62728'></div>"
            f"<div style='position:absolute;top:2px;{side};white-space:nowrap;padding:0 4px'>{text}</div></div>")


def compare_timelines(replays: Mapping[str, Replay]) -> list[Any]:
    """One timeline per strategy with the same y axis, so heights compare at a glance.

    They carry no legend: in two to four narrow columns a legend of ten entries covered the axis
    and scrolled inside the chart. Colours and markers are those of the main timeline (whose legend
    the app shows above them), and hovering a call still names every band, line and event."""
    tops = [top for rp in replays.values() if (top := timeline_top(rp)) is not None]
    y_max = max(tops, default=None)
    figs = [timeline(rp, title=name, y_max=y_max) for name, rp in replays.items()]
    for fig, rp in zip(figs, replays.values(), strict=True):
        # Narrow columns: at most 5 call ticks (14 collided at 1024 px), the axis title in the margin.
        fig.update_layout(showlegend=False, height=300, xaxis=dict(dtick=tick_step(len(rp.frames), 5)))
    return figs


LEGEND_SYMBOLS = {
    "star": "★", "circle-open": "○", "circle-x-open": "⊗", "x": "✕", "x-thin-open": "✕", "triangle-left": "◀",
    "triangle-down": "▼", "diamond": "◆", "triangle-up": "▲", "line-ns-open": "│",
    "hexagram-open": "✶",
}
"""How the timeline's marker symbols are drawn in :func:`legend_html` (plotly symbol → character)."""


def legend_html(fig: Any) -> str:
    """A figure's legend as wrapping HTML (a swatch for a band, a short line for a budget line, the
    marker's symbol for an event), in the figure's trace order. The app draws it under the timeline
    instead of plotly's own legend, which at 1024 px became a scroll box that cut entries off."""
    import html

    keys = []
    for trace in fig.data:
        if trace.showlegend is False or not trace.name:
            continue
        name = html.escape(str(trace.name))
        mode = str(getattr(trace, "mode", "") or "")
        if trace.type == "bar" or getattr(trace, "stackgroup", None):
            color = trace.marker.color if trace.type == "bar" else trace.fillcolor
            swatch = f"<i style='background:{html.escape(str(color))}'></i>"
        elif mode.startswith("markers"):
            symbol = LEGEND_SYMBOLS.get(str(trace.marker.symbol), "●")
            swatch = f"<b style='color:{html.escape(str(trace.marker.color))}'>{symbol}</b>"
        else:
            line = trace.line
            style = {"dash": "dashed", "dot": "dotted"}.get(str(line.dash), "solid")
            swatch = (f"<u style='border-top:{max(float(line.width or 2), 2):.1f}px {style} "
                      f"{html.escape(str(line.color))}'></u>")
        keys.append(f"<span class='ci-lkey'>{swatch}{name}</span>")
    return ("<style>.ci-legend-tl{font-size:.78rem;line-height:1.7;margin:0 0 4px " f"{TIMELINE_MARGIN['l']}px" "}"
            ".ci-lkey{white-space:nowrap;margin-right:14px;display:inline-block}"
            ".ci-lkey i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}"
            ".ci-lkey u{display:inline-block;width:22px;height:0;margin-right:4px;vertical-align:middle}"
            ".ci-lkey b{margin-right:4px}</style>"
            f"<div class='ci-legend-tl'>{''.join(keys)}</div>")
