"""The page top to bottom: the sidebar, the inputs, the replay, the header, the view switch, and
the per-call fragment a step reruns (:func:`stepped_view`); the live file's watcher with
``context-inspector app --follow``. :func:`main` is what ``app.py`` calls on every run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from inspector.app import inputs, stepping, words
from inspector.app.cached import replay_cached
from inspector.app.call_view import export_tab, not_sent_tab, repairs_tab, this_call_tab
from inspector.app.compare_view import compare_tab
from inspector.app.fleet_view import fleet_tab
from inspector.app.loading import resolve_manifest, resolve_transcript
from inspector.app.manifest_view import manifest_tab
from inspector.app.sidebar import agent_sidebar, init_state, manifest_sidebar, replay_sidebar, transcript_sidebar
from inspector.app.stepper import STEPPER_CSS, app_timeline, stepper, timeline_view
from inspector.app.timeline import call_strip_html, legend_html
from inspector.app.widgets import session_figure, show_problems
from inspector.live import FOLLOW_SECONDS, follow_state
from inspector.policy import DEFAULT_POLICY
from inspector.replay import Replay
from inspector.report import cache_view, per_call
from inspector.transcripts import Transcript
from inspector.vocabulary import VIEW_WORDS, standin_estimate_words

ss = st.session_state


def header(rp: Replay, t: Transcript, m: inputs.ManifestInput, name: str) -> None:
    """The title, what the app shows, which manifest, transcript, counter, summarizer, agent and
    unrecorded prefix this replay ran with, and its totals with prompt caching
    (:func:`inspector.report.cache_view.totals_words`); when the offline stand-in writes the
    summaries, that their forgetting is an estimate (:func:`inspector.vocabulary.standin_estimate_words`)."""
    st.title("Context Inspector")
    st.markdown(words.INTRO)
    st.caption(f"Manifest {words.code_span(m.name)} · transcript {words.code_span(name)} "
               f"({t.format}, {len(t.messages):,} messages) · {per_call.calls_words(rp)} · counter "
               f"**{rp.counter}** · summarizer **{rp.summarizer_label}**")
    st.caption(words.plain_md(cache_view.totals_words(rp)), help=cache_view.totals_help(rp))
    for note in standin_estimate_words(rp.summarizer_label):  # the offline stand-in summarises: say so
        st.caption(words.plain_md(note))
    if rp.agent is not None:
        st.caption(words.plain_md(words.agent_words(rp)))
    if prefix := rp.prefix_line():
        st.caption(words.plain_md(prefix))


def main() -> None:
    """Draw the whole page for this run: the sidebar, the inputs, the replay (or why there is none),
    the header, the view switch, then the chosen view (the per-call ones through the
    :func:`stepped_view` fragment). Problems are shown on the page, never raised."""
    st.html(STEPPER_CSS)
    init_state()
    manifest_sidebar()
    transcript_sidebar()
    m, loaded, manifest_problems = resolve_manifest()
    tkey_src, t, transcript_problems = resolve_transcript()
    agent_sidebar()
    live = replay_sidebar(loaded)
    show_problems("Manifest problem — showing the last valid manifest", manifest_problems)
    follow = inputs.followed(ss.get("transcript_sample"))
    if follow is not None and (t is None or not t.messages or tkey_src is None
                               or not tkey_src[0].key.startswith("follow:")):
        st.title("Context Inspector")
        st.info(f"Following {follow}: waiting for the agent's first model call (enable the logger with "
                f"`litellm.callbacks = [inspector.live.JsonlLogger({str(follow)!r})]`).")
        follow_watch(follow, ss.get("_follow_seen", (0, 0)))
        return
    show_problems("Transcript problem — showing the last transcript that loaded", transcript_problems)
    if m is None or loaded is None or t is None or tkey_src is None:
        st.info("Load a valid manifest and transcript to start.")
        manifest_tab(loaded, manifest_problems)
        return
    src, fmt, conv = tkey_src
    tkey = (src.key, fmt, conv)
    counter, choice = ss.get("counter", DEFAULT_POLICY.counter), ss.get("summarizer", "stand-in")
    agent = (ss.get("agent_source", "auto"), ss.get("model_source", "auto"), inputs.is_sample_input(m),
             inputs.prefix_value(ss.get("prefix_choice")))
    if choice == "live" and live is None:
        choice = "stand-in"  # nothing applied yet: never call a model the user has not confirmed
    live_id = live.fingerprint if live else None
    try:
        rp = replay_cached(m, tkey, counter, choice, live_id, None, agent, t, live)
    except Exception as exc:  # noqa: BLE001 - a plugin or engine failure is shown, never a traceback
        show_problems("The replay failed", [str(exc)])
        manifest_tab(loaded, manifest_problems)
        return
    header(rp, t, m, src.name)
    if follow is not None:
        follow_newest(rp, follow)
    if not rp.frames:
        st.warning("This transcript has no LLM call to show (no user or assistant message).")
        manifest_tab(loaded, manifest_problems)
        return
    rkey = (m, tkey, counter, choice, live_id, agent)
    st.segmented_control("View", list(VIEW_WORDS), key="view", format_func=lambda k: VIEW_WORDS[k], required=True,
                         label_visibility="collapsed")
    view = ss.get("view") or next(iter(VIEW_WORDS))
    if view == "manifest":  # outside the fragment: an edit re-validates and replays the whole page
        manifest_tab(loaded, manifest_problems)
    elif view == "fleet":
        fleet_tab(m, src, fmt, counter, choice, agent)
    else:
        ss.n_calls = len(rp.frames)
        timeline_view(rp, rkey)
        stepped_view(rp, rkey, m, tkey, t, counter, choice, live, agent)


@st.fragment(run_every=FOLLOW_SECONDS)
def follow_watch(path: Path, seen: tuple[int, int]) -> None:
    """Looks at the followed file every few seconds; a change reruns the whole page (the new calls
    are imported and replayed, the timeline grows)."""
    if follow_state(path) != seen:
        st.rerun()


def follow_newest(rp: Replay, path: Path) -> None:
    """The live file's state line, the switch that keeps the stepper on the newest call, and the
    watcher; with the switch on, a new call moves the stepper to it."""
    st.toggle("Stay on the newest call", key="follow_newest", value=True,
              help="On: each new call the agent makes is shown as it arrives. Off: stay where you are.")
    n = len(rp.frames)
    if ss.get("follow_newest", True) and ss.get("_follow_frames") != n and n:
        ss.call = n - 1
    ss._follow_frames = n
    st.caption(f"Live: following {path} · {n:,} call(s) so far · looks for new calls every "
               f"{FOLLOW_SECONDS:g} s. Each call is replayed under the manifest; “What was really sent” shows "
               "the request the agent made.")
    follow_watch(path, ss.get("_follow_seen", (0, 0)))


@st.fragment
def stepped_view(rp: Replay, rkey: tuple[Any, ...], m: inputs.ManifestInput, tkey: tuple[str, str | None, int],
                 t: Transcript, counter: str, choice: str, live: inputs.LiveSettings | None,
                 agent: tuple[Any, ...]) -> None:
    """Everything that depends on the current call. A step reruns only this fragment (the sidebar,
    the inputs and the replay are not touched) and draws only the view that is on screen."""
    if ss.pop("_rerun_page", False):
        st.rerun()  # a link switched the view: redraw the switch too
    st.html(call_strip_html(len(rp.frames), int(stepping.clamp_call(ss.get("call", 0), len(rp.frames)))))
    st.html(session_figure(("legend", rkey), lambda: legend_html(session_figure(("timeline", rkey),
                                                                                lambda: app_timeline(rp)))))
    call = stepper(rp)
    view = ss.get("view")
    if view == "not_sent":
        not_sent_tab(rp, call)
    elif view == "repairs":
        repairs_tab(rp, call)
    elif view == "compare":
        compare_tab(m, tkey, t, counter, choice, live, call, agent)
    elif view == "export":
        export_tab(rp, call)
    else:
        this_call_tab(rp, call)
