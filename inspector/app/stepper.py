"""The stepper (previous / next, the slider over every call, jumps to the next event of a kind),
kept on screen above the call's details, and the timeline a click on which moves to a call."""

from __future__ import annotations

from typing import Any

import streamlit as st

from inspector.app import stepping
from inspector.app.timeline import app_timeline_margins
from inspector.app.widgets import session_figure
from inspector.replay import Replay
from inspector.report import cache_view, per_call
from inspector.report.figures import TIMELINE_BAR_MAX, timeline
from inspector.vocabulary import event_words


def jump_words(rp: Replay) -> dict[str, str]:
    """The kinds of call the stepper jumps to, in words: the events of the strategies registered now
    (:func:`inspector.vocabulary.event_words`) and the prompt cache's breaks, the latter only when a
    prompt-cache rule is in force for ``rp`` (:func:`inspector.report.cache_view.caches`): under the
    rule ``none`` no call can break a cache."""
    breaks = {"cache_break": "cache break"} if cache_view.caches(cache_view.cache_account(rp)) else {}
    return {**event_words(), **breaks}

ss = st.session_state


def step(delta: int) -> None:
    """Move ``delta`` calls forward (or back), staying within the replay."""
    ss.call = stepping.clamp_call(ss.get("call", 0) + delta, ss.get("n_calls", 0))


def jump(direction: int) -> None:
    """Move to the previous/next call where the chosen kind of event happens."""
    rp: Replay | None = ss.get("_stepped_replay")
    if rp is None:
        return
    k = stepping.next_event(rp, ss.get("call", 0), ss.get("jump_kind", "summarized"), direction)
    if k is not None:
        ss.call = k


def on_timeline_select() -> None:
    """Move to the call a click on the timeline selected (nothing when the selection names none)."""
    k = stepping.call_from_selection(ss.get("timeline"), ss.get("n_calls", 0))
    if k is not None:
        ss.call = k


STEPPER_CSS = """<style>
[data-testid=stLayoutWrapper]:has(> .st-key-stepper) {position: sticky; top: 3.75rem; z-index: 990;}
.st-key-stepper {background: var(--background-color, #fff);
                 padding: 0.25rem 0 0.35rem; border-bottom: 1px solid rgba(49, 51, 63, 0.15);}
[data-testid=stHeader] {background: var(--background-color, #fff);}
</style>"""
"""Keeps the stepper at the top of the page while the call's details scroll under it (the manifest
editor's look comes with its line numbers: :func:`inspector.app.editor.editor_css`). Presentation
only: no element is hidden or changed. The page header is made opaque, so content scrolling under
the stuck stepper does not show in the gap between the header and the stepper. Sticky goes on the
stepper's layout wrapper: the keyed block itself sits alone in a wrapper of its own height, where
``position: sticky`` has no room to move (it would scroll away with the page)."""


def stepper(rp: Replay) -> int:
    """Prev/next (also ← / → on the keyboard), the slider over every call, and jumps to the
    previous/next call of a chosen kind of event; kept on screen above the call's details."""
    n = len(rp.frames)
    ss.n_calls = n
    ss.call = stepping.clamp_call(ss.get("call", 0), n)
    ss._stepped_replay = rp
    with st.container(key="stepper"):
        c = st.columns([1.25, 1.25, 2.4, 0.6, 0.6], vertical_alignment="center", gap="small")
        # Never disabled: a disabled button's keyboard shortcut is not bound again when it is enabled.
        c[0].button("◀ Prev", key="prev", on_click=step, args=(-1,), width="stretch",
                    shortcut="Left", help="Previous call (← key)")
        c[1].button("Next ▶", key="next", on_click=step, args=(1,), width="stretch",
                    shortcut="Right", help="Next call (→ key)")
        events = stepping.event_calls(rp)
        words = jump_words(rp)
        if ss.get("jump_kind") not in words:  # first visit (or a kind this replay cannot have): the first it has
            ss.jump_kind = next((k for k in words if events.get(k)), next(iter(words)))
        c[2].selectbox("Jump to", list(words), key="jump_kind", label_visibility="collapsed", persist_state="page",
                       format_func=lambda k: f"{words[k]} ({len(events.get(k, ()))})",
                       help="The kind of call the ◀ / ▶ buttons beside it jump to (how many calls have it).")
        kind = ss.jump_kind
        c[3].button("◀", key="jump_prev", on_click=jump, args=(-1,), width="stretch",
                    disabled=stepping.next_event(rp, ss.call, kind, -1) is None, help="Previous call with this event")
        c[4].button("▶", key="jump_next", on_click=jump, args=(1,), width="stretch",
                    disabled=stepping.next_event(rp, ss.call, kind, 1) is None, help="Next call with this event")
        pos, slider = st.columns([1.5, 4], vertical_alignment="center", gap="small")
        with pos.container(key="call_position"):
            st.markdown(f"**{per_call.call_label(rp, ss.call)}** of {n:,}")
        if n > 1:  # a number slider: a list of every call's label is resent at every step (133 kB at 4 009 calls)
            slider.slider("LLM call", min_value=0, max_value=n - 1, step=1, format="call %d", key="call",
                          label_visibility="collapsed", persist_state="page",
                          help="Every call; the line beside it names the current one's turn and step.")
    return int(ss.call)


def timeline_view(rp: Replay, rkey: tuple[Any, ...]) -> None:
    """The timeline, drawn once per replay outside the per-call fragment: a step never resends it
    (the fragment's :func:`call_strip_html` under it marks the current call); a click on it moves
    to the clicked call and reruns the page."""
    zoom = ("Drag a box over some calls to zoom in (double-click zooms out), then click the call. "
            if len(rp.frames) > TIMELINE_BAR_MAX else "Click a bar or marker to jump to that call. ")
    cache_line_key, cache_marker_key = cache_view.timeline_cache_keys(rp)
    st.caption(zoom + f"Lines: input budget, summary trigger, hysteresis ceiling{cache_line_key}; markers: "
               f"summaries, commit folds, trims, pairing repairs, forgotten references{cache_marker_key}. The current "
               "call is marked ▲ under the chart.")
    fig = session_figure(("timeline", rkey), lambda: app_timeline(rp))
    st.plotly_chart(fig, key="timeline", on_select=on_timeline_select, selection_mode="points", width="stretch")


def app_timeline(rp: Replay) -> Any:
    """The timeline without plotly's legend (:func:`legend_html` draws it as wrapping HTML under the
    strip: at 1024 px plotly's own became a scroll box that cut entries off). Built once per replay
    and kept on it (every session showing this replay draws the same figure, never changing it), so
    the server's warm-up (:func:`inspector.app.first_page.prepare_first_page`) builds the first
    page's before it listens."""
    return rp.view("app_timeline", lambda: _app_timeline(rp))


def _app_timeline(rp: Replay) -> Any:
    fig = timeline(rp)
    fig.update_layout(showlegend=False, height=300, margin=app_timeline_margins(len(rp.frames)))
    return fig
