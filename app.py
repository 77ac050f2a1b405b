"""Context Inspector — step through a conversation and see every budget decision.

Run with ``make run`` (or ``streamlit run app.py``). This file is layout and widgets only: replays
come from :mod:`inspector.replay`, tables and figures from :mod:`inspector.report`, and the small
presentation helpers from :mod:`inspector.report.app_views`. Replays are cached per (manifest
text, transcript bytes, conversation, counter, summarizer mode); moving between calls only
changes ``st.session_state.call`` and never replays.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from inspector import apply_offline_defaults
from inspector.compare import DEFAULT_STRATEGIES, OWN_STRATEGY, PRESETS, own_strategy_yaml
from inspector.errors import InspectorError
from inspector.live import FOLLOW_SECONDS, follow_state, read_complete
from inspector.manifest import LoadedManifest, ManifestError, load_manifest_text
from inspector.policy import DEFAULT_POLICY
from inspector.redact import mask_secrets, mask_text
from inspector.replay import Replay
from inspector.report import app_views as av
from inspector.report.app_first_page import app_replay, take_prepared
from inspector.report.figures import (
    TIMELINE_BAR_MAX,
    band_bar_html,
    call_strip_html,
    compare_timelines,
    cursor_shape,
    legend_html,
    timeline,
)
from inspector.report.tables import compare_table, not_sent_table
from inspector.vocabulary import EVENT_WORDS, VIEW_WORDS
from inspector.transcripts import (
    ConversationInfo,
    Transcript,
    TranscriptError,
    list_conversations,
    list_formats,
    parse_transcript,
)

apply_offline_defaults()  # this server process only; `import inspector` never changes the environment
ss = st.session_state
AUTO = "auto-detect"
CUSTOM = ("custom A", "custom B")
CUSTOM_TEMPLATE = "type: summarising\nparams:\n  keep_turns: 4\n  hysteresis_ratio: 0.2\n"


# --- cached computations (the only place anything is replayed) ------------------------------------

@st.cache_resource(max_entries=32, show_spinner=False)
def load_manifest_cached(m: av.ManifestInput) -> LoadedManifest:
    return load_manifest_text(m.text, file=m.name, base_dir=Path(m.base_dir) if m.base_dir else None,
                              mode="assemble" if m.lenient else "validate")


@st.cache_resource(max_entries=16, show_spinner="Reading the transcript…")
def conversations_cached(key: str, name: str, fmt: str | None, _data: bytes) -> list[ConversationInfo]:
    ready = take_prepared("conversations", (key, name, fmt))  # the server's warm-up (app_first_page)
    return ready if ready is not None else list_conversations(_data, name=name, format=fmt)


@st.cache_resource(max_entries=16, show_spinner="Importing the transcript…")
def transcript_cached(key: str, name: str, fmt: str | None, conversation: int, _data: bytes) -> Transcript:
    ready = take_prepared("transcript", (key, name, fmt, conversation))
    return ready if ready is not None else parse_transcript(_data, name=name, format=fmt, conversation=conversation)


@st.cache_resource(max_entries=24, show_spinner="Replaying the conversation…")
def replay_cached(m: av.ManifestInput, tkey: tuple[str, str | None, int], counter: str, choice: str,
                  live_id: str | None, strategy: str | None, agent: tuple[Any, ...], _transcript: Transcript,
                  _live: av.LiveSettings | None) -> Replay:
    """``agent`` = (system text & tools source, model source, manifest is a sample, unrecorded prefix
    added to the budget: None, "auto" or N tokens): Q21."""
    ready = take_prepared("replay", (m, tkey, counter, choice, live_id, strategy, agent))
    if ready is not None:
        return ready
    return app_replay(load_manifest_cached(m), _transcript, counter, choice, strategy, agent, _live)


def session_figure(key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    """A figure built once per replay and kept in this session, so a step only moves its marker."""
    figs: dict[tuple[Any, ...], Any] = ss.setdefault("_figures", {})
    if key not in figs:
        if len(figs) > 12:
            figs.clear()
        figs[key] = build()
    return figs[key]


def grouped(df: Any) -> dict[str, Any]:
    """Whole-number columns with thousands separators (62,192, not 62192), as the CLI's tables show
    them; dollar columns with four decimals each (0.0120, not 0.012), other fractions with two."""
    out = {str(c): st.column_config.NumberColumn(format="localized") for c in df.select_dtypes("integer").columns}
    for c in df.select_dtypes("float").columns:
        out[str(c)] = st.column_config.NumberColumn(format="$%.4f" if str(c).endswith("$") else "%.2f")
    return out


def mark_call(fig: Any, call: int) -> Any:
    fig.layout.shapes = [cursor_shape(call)]
    return fig


# --- callbacks ---------------------------------------------------------------------------------------

def on_manifest_sample() -> None:
    if ss.manifest_sample == av.OWN_AGENT:  # no manifest: the transcript's own agent (like `replay TRANSCRIPT`)
        ss.manifest_yaml, ss.manifest_name, ss.manifest_base = av.own_agent_yaml(), av.OWN_AGENT, None
    else:
        path = av.sample_manifests()[ss.manifest_sample]
        ss.manifest_yaml = path.read_text(encoding="utf-8")
        ss.manifest_name, ss.manifest_base = path.name, str(path.parent)
    ss.pop("manifest_notice", None)


def on_manifest_upload() -> None:
    upload = ss.get("manifest_upload")
    if upload is None:
        return
    data = upload.getvalue()
    if problem := av.too_large(len(data), av.MANIFEST_MAX_BYTES):
        ss.manifest_notice = f"{upload.name}: {problem}"
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        ss.manifest_notice = f"{upload.name}: not UTF-8 text (byte {exc.start})"
        return
    ss.manifest_yaml, ss.manifest_name, ss.manifest_base = text, upload.name, None
    ss.pop("manifest_notice", None)


def step(delta: int) -> None:
    ss.call = av.clamp_call(ss.get("call", 0) + delta, ss.get("n_calls", 0))


def jump(direction: int) -> None:
    """Move to the previous/next call where the chosen kind of event happens."""
    rp: Replay | None = ss.get("_stepped_replay")
    if rp is None:
        return
    k = av.next_event(rp, ss.get("call", 0), ss.get("jump_kind", "summarized"), direction)
    if k is not None:
        ss.call = k


def on_timeline_select() -> None:
    k = av.call_from_selection(ss.get("timeline"), ss.get("n_calls", 0))
    if k is not None:
        ss.call = k


# --- inputs ------------------------------------------------------------------------------------------------

def init_state() -> None:
    manifest_choice, transcript_choice = av.default_choices()
    if "manifest_yaml" not in ss:
        ss.manifest_sample = manifest_choice
        on_manifest_sample()
    ss.setdefault("transcript_sample", transcript_choice)
    ss.setdefault("call", 0)
    ss.setdefault("view", next(iter(VIEW_WORDS)))
    ss.setdefault("payload_as", "rows")
    ss.setdefault("not_sent_as", "rows")
    ss.setdefault("agent_source", "auto")
    ss.setdefault("model_source", "auto")
    ss.setdefault("prefix_choice", av.prefix_choice_default())
    ss.setdefault("cmp_strategies", list(DEFAULT_STRATEGIES))


def manifest_sidebar() -> None:
    st.sidebar.header("Manifest")
    st.sidebar.selectbox("Sample manifest", av.manifest_choices(), key="manifest_sample", on_change=on_manifest_sample,
                         help=f"“{av.OWN_AGENT}”: no manifest, the transcript replayed with its own system text, "
                              "tools and model (as `context-inspector replay TRANSCRIPT`).")
    st.sidebar.button("Reload this sample", key="manifest_reload", on_click=on_manifest_sample,
                      help="Discard edits and uploads, and show the selected sample again.")
    st.sidebar.file_uploader("…or upload a manifest", type=["yaml", "yml"], key="manifest_upload",
                             on_change=on_manifest_upload)
    st.sidebar.checkbox("Lenient reading (like the runtime)", key="manifest_lenient",
                        help="Off: strict validation, every error with its field path. On: malformed "
                             "bindings fall back to defaults, as the reference runtime does.")
    st.sidebar.caption("Edit the YAML in the Manifest view; it re-validates on every change.")


def resolve_manifest() -> tuple[av.ManifestInput | None, LoadedManifest | None, list[str]]:
    """The manifest to use: the editor's text when valid, else the last valid one (with the errors)."""
    m = av.ManifestInput(ss.manifest_yaml, ss.get("manifest_name", "manifest.yaml"), ss.get("manifest_base"),
                         bool(ss.get("manifest_lenient", False)))
    problems = [ss.manifest_notice] if ss.get("manifest_notice") else []
    try:
        loaded = load_manifest_cached(m)
    except ManifestError as exc:
        problems += [str(i) for i in exc.issues] or [str(exc)]
        ss.manifest_error_lines = sorted({i.line for i in exc.issues if getattr(i, "line", None)})
        good: av.ManifestInput | None = ss.get("good_manifest")
        return (good, load_manifest_cached(good) if good else None, problems)
    ss.good_manifest = m
    ss.manifest_error_lines = []
    return m, loaded, problems


def transcript_sidebar() -> None:
    st.sidebar.header("Transcript")
    samples = av.sample_transcripts()
    upload = ss.get("transcript_upload")
    st.sidebar.selectbox("Sample transcript" if upload is None else "Sample transcript (not shown: the upload is)",
                         list(samples), key="transcript_sample", disabled=upload is not None,
                         help="Remove the upload below to show a sample again." if upload is not None else None)
    st.sidebar.file_uploader("…or upload a transcript (an upload wins over the sample)", key="transcript_upload",
                             max_upload_size=max(1, av.MAX_TRANSCRIPT_BYTES // 1_000_000))
    st.sidebar.selectbox("Format", [AUTO, *list_formats()], key="transcript_format")


def transcript_source() -> av.TranscriptSource:
    upload = ss.get("transcript_upload")
    if upload is not None:
        data = upload.getvalue()
        if problem := av.too_large(len(data)):
            raise TranscriptError(upload.name, problem)
        return av.TranscriptSource(upload.name, f"upload:{upload.file_id}:{len(data)}", data)
    path = av.sample_transcripts()[ss.transcript_sample]
    if av.followed(ss.transcript_sample) is not None:  # a live file: its whole lines, as they are now
        ss._follow_seen = follow_state(path)
        data = read_complete(path)
        if problem := av.too_large(len(data)):
            raise TranscriptError(path.name, problem)
        return av.TranscriptSource(path.name, f"follow:{path}:{len(data)}", data)
    stat = path.stat()
    if problem := av.too_large(stat.st_size):
        raise TranscriptError(path.name, problem)
    return av.TranscriptSource(path.name, f"sample:{path}:{stat.st_mtime_ns}:{stat.st_size}", path.read_bytes())


def conversation_picker(src: av.TranscriptSource, fmt: str | None) -> int:
    convs = conversations_cached(src.key, src.name, fmt, src.data)
    if len(convs) <= 1:
        return 0
    if not 0 <= ss.get("conversation", 0) < len(convs):
        ss.conversation = 0
    labels = {c.index: f"{c.index}: {c.label} ({c.user_turns} user turns, {c.messages} messages)" for c in convs}
    options: list[int] = [c.index for c in convs]
    chosen = st.sidebar.selectbox("Conversation", options, key="conversation", format_func=lambda k: labels[k])
    return int(chosen if chosen is not None else 0)


def resolve_transcript() -> tuple[tuple[av.TranscriptSource, str | None, int] | None, Transcript | None, list[str]]:
    """The transcript to show: the upload (else the sample) when it reads, else the last transcript
    that loaded, with the error. Opening a transcript never touches the Agent switches (one rule
    for every way of opening a pair: the policy's, as on the command line) and starts at call 0.

    Replacing one upload by another removes the first before the second arrives: that run shows
    the sample, but does not make it "the last transcript that loaded" (the uploader held a file
    in the run before, loaded or not), so a failing second upload keeps showing the last one that
    loaded."""
    fmt = None if ss.get("transcript_format", AUTO) == AUTO else ss.transcript_format
    if fmt is None and av.followed(ss.get("transcript_sample")) is not None:
        fmt = "litellm"  # what inspector.live writes (an empty file has nothing to detect)
    was_upload = bool(ss.get("_upload_held"))
    ss._upload_held = ss.get("transcript_upload") is not None  # loaded or not
    try:
        src = transcript_source()
        conv = conversation_picker(src, fmt)
        t = transcript_cached(src.key, src.name, fmt, conv, src.data)
    except (InspectorError, OSError) as exc:
        good = ss.get("good_transcript")
        if good is None:
            return None, None, [str(exc)]
        gsrc, gfmt, gconv = good
        return good, transcript_cached(gsrc.key, gsrc.name, gfmt, gconv, gsrc.data), [str(exc)]
    is_upload = src.key.startswith("upload:")
    shown = (src.key.rpartition(":")[0] if src.key.startswith("follow:") else src.key, fmt, conv)  # growing: same
    if ss.get("_shown_transcript") != shown:
        ss.call = 0  # a new conversation starts at its first call
        ss._shown_transcript = shown
    if is_upload or not was_upload:  # an upload being replaced: the last transcript that loaded stays
        ss.good_transcript = (src, fmt, conv)
    return (src, fmt, conv), t, []


def apply_live_settings() -> None:
    model = (ss.get("live_model") or "").strip()
    if not model:
        ss.live_applied, ss.live_notice = None, "Enter a model name first."
        return
    ss.live_applied = av.LiveSettings(model, (ss.get("live_base") or "").strip(), ss.get("live_key") or "",
                                      float(ss.get("live_timeout", 30.0)))
    ss.pop("live_notice", None)


def agent_sidebar() -> None:
    """The visible switch between the transcript's own agent and the manifest's (Q21)."""
    st.sidebar.header("Agent")
    st.sidebar.radio("System text & tools", list(av.AGENT_SOURCES), key="agent_source",
                     format_func=av.AGENT_SOURCES.get,
                     help="Whose system prompt and tool schemas are sent. Opening a transcript or a manifest "
                          "leaves this switch as it is.")
    st.sidebar.radio("Model & window", list(av.MODEL_SOURCES), key="model_source", format_func=av.MODEL_SOURCES.get,
                     help="Whose model sets the context window and the price. Opening a transcript or a manifest "
                          "leaves this switch as it is.")
    st.sidebar.radio("Unrecorded prefix", list(av.PREFIX_CHOICES), key="prefix_choice",
                     format_func=av.PREFIX_CHOICES.get,
                     help="Logs such as Claude Code's and OpenHands' leave out the system prompt and tool schemas "
                          "every real call carried. Estimated: add the fitted offset of the recorded usage to every "
                          "call's budget (as --unrecorded-prefix auto).")


def replay_sidebar(loaded: LoadedManifest | None) -> av.LiveSettings | None:
    """Counter and summarizer choices; the live connection only counts once applied (no model
    call is made while the user is still typing a model name or key)."""
    st.sidebar.header("Replay")
    st.sidebar.radio("Token counter", ["tiktoken", "estimate"], key="counter", horizontal=True,
                     help="tiktoken: the model's real tokenizer. estimate: the reference runtime's "
                          "character estimate (chars/4), which can under-count.")
    st.sidebar.radio("Summarizer", list(av.SUMMARIZER_CHOICES), key="summarizer",
                     format_func=av.SUMMARIZER_CHOICES.get,
                     help="The stand-in writes a labelled placeholder summary offline. A manifest that "
                          "says `drop` keeps dropping.")
    if ss.get("summarizer") != "live":
        return None
    primary = loaded.settings.primary_model() if loaded else None
    ss.setdefault("live_model", primary.model if primary and primary.model else "gpt-4o-mini")
    ss.setdefault("live_timeout", 30.0)
    with st.sidebar.form("live_form"):
        st.text_input("Model (litellm name)", key="live_model")
        st.text_input("API base (optional)", key="live_base", placeholder="http://127.0.0.1:8000/v1")
        st.text_input("API key", key="live_key", type="password")
        st.number_input("Timeout (s)", min_value=1.0, max_value=600.0, key="live_timeout")
        st.form_submit_button("Apply and replay", key="live_apply", on_click=apply_live_settings)
    if ss.get("live_notice"):
        st.sidebar.warning(ss.live_notice)
    live: av.LiveSettings | None = ss.get("live_applied")
    if live is None:
        st.sidebar.info("Until you apply a model, the labelled offline stand-in writes the summaries.")
    else:
        st.sidebar.caption(f"Live summaries with {av.code_span(live.model)}"
                           + (f" at {av.code_span(live.api_base)}" if live.api_base else ""))
    return live


# --- views ------------------------------------------------------------------------------------------------------

def show_problems(title: str, problems: list[str]) -> None:
    if problems:
        st.error(f"**{title}**\n\n{av.issue_list(problems)}")


# The stepper stays at the top of the page while the call's details scroll under it (the manifest
# editor's look comes with its line numbers: app_views.editor_css). Presentation only: no element is
# hidden or changed. (A comment, not a docstring: Streamlit would print a bare string.)
# The page header is made opaque: content scrolling under the stuck stepper no longer shows in the
# gap between the header and the stepper.
# Sticky goes on the stepper's layout wrapper: the keyed block itself sits alone in a wrapper of its
# own height, where `position: sticky` has no room to move (it then scrolled away with the page).
STEPPER_CSS = """<style>
[data-testid=stLayoutWrapper]:has(> .st-key-stepper) {position: sticky; top: 3.75rem; z-index: 990;}
.st-key-stepper {background: var(--background-color, #fff);
                 padding: 0.25rem 0 0.35rem; border-bottom: 1px solid rgba(49, 51, 63, 0.15);}
[data-testid=stHeader] {background: var(--background-color, #fff);}
</style>"""


def stepper(rp: Replay) -> int:
    """Prev/next (also ← / → on the keyboard), the slider over every call, and jumps to the
    previous/next call of a chosen kind of event; kept on screen above the call's details."""
    n = len(rp.frames)
    ss.n_calls = n
    ss.call = av.clamp_call(ss.get("call", 0), n)
    ss._stepped_replay = rp
    with st.container(key="stepper"):
        c = st.columns([1.25, 1.25, 2.4, 0.6, 0.6], vertical_alignment="center", gap="small")
        # Never disabled: a disabled button's keyboard shortcut is not bound again when it is enabled.
        c[0].button("◀ Prev", key="prev", on_click=step, args=(-1,), width="stretch",
                    shortcut="Left", help="Previous call (← key)")
        c[1].button("Next ▶", key="next", on_click=step, args=(1,), width="stretch",
                    shortcut="Right", help="Next call (→ key)")
        events = av.event_calls(rp)
        if ss.get("jump_kind") not in events:  # first visit: the first kind this replay has
            ss.jump_kind = next((k for k in EVENT_WORDS if events[k]), next(iter(EVENT_WORDS)))
        c[2].selectbox("Jump to", list(EVENT_WORDS), key="jump_kind", label_visibility="collapsed", persist_state="page",
                       format_func=lambda k: f"{EVENT_WORDS[k]} ({len(events[k])})",
                       help="The kind of call the ◀ / ▶ buttons beside it jump to (how many calls have it).")
        kind = ss.jump_kind
        c[3].button("◀", key="jump_prev", on_click=jump, args=(-1,), width="stretch",
                    disabled=av.next_event(rp, ss.call, kind, -1) is None, help="Previous call with this event")
        c[4].button("▶", key="jump_next", on_click=jump, args=(1,), width="stretch",
                    disabled=av.next_event(rp, ss.call, kind, 1) is None, help="Next call with this event")
        pos, slider = st.columns([1.5, 4], vertical_alignment="center", gap="small")
        with pos.container(key="call_position"):
            st.markdown(f"**{av.call_label(rp, ss.call)}** of {n:,}")
        if n > 1:
            slider.select_slider("LLM call", options=list(range(n)), key="call", label_visibility="collapsed",
                                 persist_state="page", format_func=lambda k: av.call_label(rp, k))
    return int(ss.call)


def timeline_view(rp: Replay, rkey: tuple[Any, ...]) -> None:
    """The timeline, drawn once per replay outside the per-call fragment: a step never resends it
    (the fragment's :func:`call_strip_html` under it marks the current call); a click on it moves
    to the clicked call and reruns the page."""
    zoom = ("Drag a box over some calls to zoom in (double-click zooms out), then click the call. "
            if len(rp.frames) > TIMELINE_BAR_MAX else "Click a bar or marker to jump to that call. ")
    st.caption(zoom + "Lines: input budget, summary trigger, hysteresis ceiling; markers: summaries, commit folds, "
               "trims, pairing repairs, forgotten references. The current call is marked ▲ under the chart.")
    fig = session_figure(("timeline", rkey), lambda: app_timeline(rp))
    st.plotly_chart(fig, key="timeline", on_select=on_timeline_select, selection_mode="points", width="stretch")


def app_timeline(rp: Replay) -> Any:
    """The timeline without plotly's legend (:func:`legend_html` draws it as wrapping HTML under the
    strip: at 1024 px plotly's own became a scroll box that cut entries off)."""
    fig = timeline(rp)
    fig.update_layout(showlegend=False, height=300, margin=dict(b=36))
    return fig


def budget_view(rp: Replay, call: int) -> None:
    facts = av.budget_facts(rp, call)
    cols = [*st.columns(3), *st.columns(3)]  # two rows of three: no number is cut at 1024 px
    cols[0].metric("Payload tokens", f"{facts['payload_tokens']:,}")
    cols[1].metric("Model window", f"{facts['window']:,}", help=f"source: {facts['window_source']}")
    cols[2].metric("Headroom", f"{facts['headroom']:,}")
    cols[3].metric("Input budget", f"{facts['input_budget']:,}",
                   help="max_tokens − completion reserve − safety margin")
    cols[4].metric("Messages sent", f"{len(rp.frames[call].refs):,}")
    cols[5].metric("Cost (USD)", "n/a" if facts["cost_usd"] is None else f"{facts['cost_usd']:.5f}")
    st.caption(av.plain_md(f"Model {facts['model']} · window {facts['window']:,} tokens from "
                           f"{facts['window_source']} · completion reserve {facts['reserve']:,} "
                           f"({facts['reserve_source']}) · safety margin {facts['margin']:,} · context manager: "
                           f"{facts['cm_words']}"))
    if facts["prefix_line"]:
        (st.info if facts["prefix"] else st.warning)(av.plain_md(facts["prefix_line"]))
    if facts["calibration"]:
        st.info(f"Token calibration in force: ×{facts['calibration']} ({facts['calibration_source']}). The input "
                f"ceiling is the window divided by it ({facts['max_tokens']:,} of our tokens).")
    if facts["over_budget"]:
        st.error(f"Over budget by {-facts['headroom']:,} tokens: the payload, the completion reserve and the safety "
                 "margin do not fit the window (the shaded part of the bar, past the window line).")
    if (check := av.estimate_check(rp, call)) is not None:
        level, text = check
        {"error": st.error, "warning": st.warning, "info": st.info}[level](text)
    if facts["check"] != "ok":
        st.warning(f"Pairing check: {av.plain_md(facts['check'])}")
    for w in rp.frames[call].warnings:
        st.warning(av.plain_md(mask_text(w)))
    with st.container(key="band_bar"):
        st.html(band_bar_html(rp, call))
    st.dataframe(av.band_table(rp, call), hide_index=True, width="content", key="band_table",
                 column_config={"tokens": st.column_config.NumberColumn(format="localized"),
                                "% of window": st.column_config.NumberColumn(format="%.1f")})


ROWS_AS = {"rows": "Chat rows", "table": "Table"}


def rows_switch(key: str) -> bool:
    """Chat rows (default) or a table; True for the table."""
    st.segmented_control("Show as", list(ROWS_AS), key=key, format_func=lambda k: ROWS_AS[k], required=True,
                         label_visibility="collapsed", persist_state="page")
    return ss.get(key) == "table"


def payload_view(rp: Replay, call: int) -> None:
    f = rp.frames[call]
    st.subheader(f"Payload sent — {len(f.refs):,} messages")
    as_table = rows_switch("payload_as")  # on its own row: beside the heading it was clipped at 1024 px
    st.caption(av.summary_caption(rp, call))
    if (summary := av.summary_block_text(rp, call)) is not None:
        with st.expander("The summary block sent at this call", expanded=False):
            st.code(summary, language=None, wrap_lines=True)
    for reason, text in av.summary_not_sent(rp, call):  # Q18: computed, not sent — never shown as sent
        st.warning(f"**Not sent:** {av.plain_md(reason)}")
        with st.expander("The summary that was computed but not sent"):
            st.code(text, language=None, wrap_lines=True)
    if as_table:
        df = av.shown(av.payload_view(rp, call))
        st.dataframe(df, hide_index=True, width="stretch", key="payload_table",
                     column_config={"ref": st.column_config.TextColumn("transcript #"),
                                    "content": st.column_config.TextColumn("content (preview)", width="large")})
    else:
        st.caption("Click a row for its full text, its tool calls with their arguments, and why it is there.")
        st.html(av.chat_html(av.payload_rows(rp, call)))


def calibration_view(rp: Replay, call: int) -> None:
    if (note := av.compaction_note(rp, call)) is not None:
        st.info(note)
    table = av.call_calibration(rp, call)
    if table is None:
        return
    st.subheader("Calibration: our count vs the provider's")
    st.dataframe(av.shown(table), hide_index=True, width="content", key="calibration_table")
    st.caption(av.calibration_caption(rp))


def agent_caption(rp: Replay) -> None:
    """Which prompt, tools, model and window are in force and where each came from (Q21), in words."""
    if rp.agent is not None:
        st.caption(av.plain_md(av.agent_words(rp)))


def explain_forgotten() -> None:
    """Open the message that holds the picked forgotten identifier under *Not sent & why*."""
    picked = ss.get("forgotten_pick")
    if picked is not None:
        ss.why_index = int(picked)
        ss.view, ss._rerun_page = "not_sent", True


def forgotten_list(rp: Replay, call: int) -> None:
    lost = av.forgotten_view(rp, call)
    if lost.empty:
        return
    st.markdown(f"**Forgotten at this call: {len(lost)} identifier(s)** the call needed (user message, working "
                "memory, or what the agent did next) that are only in messages not sent.")
    st.dataframe(av.shown(lost), hide_index=True, width="stretch", key="forgotten_table")
    messages = list(dict.fromkeys(int(i) for i in lost["transcript #"]))
    if ss.get("forgotten_pick") not in messages:
        ss.forgotten_pick = messages[0]
    ids = {i: ", ".join(lost.loc[lost["transcript #"] == i, "identifier"].astype(str)) for i in messages}
    c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
    c1.selectbox("Message holding a forgotten identifier", messages, key="forgotten_pick", persist_state="page",
                 format_func=lambda i: f"transcript #{i} — {ids[i]}")
    c2.button("Why was it not sent?", key="forgotten_explain", on_click=explain_forgotten,
              help="Opens this message under “Not sent & why”.")


def this_call_tab(rp: Replay, call: int) -> None:
    st.subheader(f"Token budget — {av.call_label(rp, call)}")
    budget_view(rp, call)
    forgotten_list(rp, call)
    calibration_view(rp, call)
    observed_view(rp, call)
    payload_view(rp, call)


def observed_view(rp: Replay, call: int) -> None:
    """The request the agent really sent at this call (when the log keeps it) beside this replay's."""
    table = av.observed_beside(rp, call)
    if table is None:
        return
    st.subheader("What was really sent, beside this replay")
    st.dataframe(av.shown(table), hide_index=True, width="content", key="observed_table")
    st.caption(av.plain_md(av.observed_words(rp, call)))


def not_sent_tab(rp: Replay, call: int) -> None:
    st.subheader(f"Not sent, and why — {av.call_label(rp, call)}")
    df = not_sent_table(rp, call)
    st.caption(f"{len(df):,} earlier transcript message(s) are not in this payload.")
    as_table = rows_switch("not_sent_as")
    if as_table:
        st.dataframe(av.shown(df), hide_index=True, width="stretch", key="not_sent_table")
    elif len(df):
        st.html(av.chat_html(av.not_sent_rows(rp, call, df, limit=av.CHAT_ROWS_MAX), total=len(df)))
    st.markdown("**Why did my message disappear?**")
    n = len(rp.messages)
    ss.why_index = av.clamp_call(ss.get("why_index", 0), n)
    index = st.number_input("Transcript message #", min_value=0, max_value=max(n - 1, 0), step=1, key="why_index",
                            persist_state="page")
    st.info(av.explain_message(rp, call, int(index), df))
    if n:
        st.code(av.transcript_message_text(rp, int(index)), language="json", wrap_lines=True)


def repairs_tab(rp: Replay, call: int) -> None:
    st.subheader(f"Pairing repairs — {av.call_label(rp, call)}")
    here = av.repair_findings(rp, call)
    if (note := av.trim_note(rp, call)) is not None:
        st.info(note)
    if not here:
        st.caption("No repair at this call.")
    else:
        st.html(av.findings_html(rp, here, "rep-call-"))
    st.subheader("Every repair in the replay")
    every = av.repair_findings(rp)
    if not every:
        st.caption("The pairing repair changed nothing in this replay.")
    else:
        st.html(av.findings_html(rp, every, "rep-all-"))
    found = av.irregularity_findings(rp)
    if found:
        st.subheader("What the transcript itself contains (importer findings)")
        st.caption("Kept as found: the importer never repairs a transcript; the pairing repair above acts on what "
                   "a call sends.")
        st.html(av.findings_html(rp, found, "irr-"))


def strategy_spec(name: str) -> str | None:
    """The `context_manager` YAML of a strategy: the user's edit, else the preset (or the template);
    None for the manifest's own (the manifest as loaded)."""
    import yaml

    if name == OWN_STRATEGY:
        return None
    key = f"cmp_spec_{name}"
    if key not in ss:
        ss[key] = CUSTOM_TEMPLATE if name in CUSTOM else yaml.safe_dump(PRESETS[name], sort_keys=False)
    return str(ss[key])


def strategy_editors(chosen: list[str], m: av.ManifestInput) -> dict[str, str | None]:
    specs: dict[str, str | None] = {}
    cols = st.columns(max(len(chosen), 1))
    for col, name in zip(cols, chosen, strict=False):
        if strategy_spec(name) is None:
            col.markdown(f"**{name}** — `context_manager` (edit it in the Manifest view)")
            col.code(own_strategy_yaml(load_manifest_cached(m)), language="yaml")
            specs[name] = None
            continue
        specs[name] = col.text_area(f"{name} — `context_manager` YAML", key=f"cmp_spec_{name}", height=130,
                                     persist_state="page")
    return specs


def compare_tab(m: av.ManifestInput, tkey: tuple[str, str | None, int], t: Transcript, counter: str, choice: str,
                live: av.LiveSettings | None, call: int, agent: tuple[Any, ...]) -> None:
    st.subheader(f"Side by side — {len(ss.cmp_strategies)} strategies")
    chosen = st.multiselect("Strategies (two to four; presets or your own `context_manager` YAML)",
                            [OWN_STRATEGY, *PRESETS, *CUSTOM], key="cmp_strategies", max_selections=4,
                            persist_state="page")
    specs = strategy_editors(chosen, m)
    if ss.get("cmp_run_for") != tkey:  # a new transcript: long ones wait for the user
        ss.cmp_run_for, ss.cmp_run = tkey, ss.get("n_calls", 0) <= av.COMPARE_AUTO_MAX_CALLS
    st.toggle("Replay the strategies", key="cmp_run", persist_state="page",
              help=f"On by itself for transcripts up to {av.COMPARE_AUTO_MAX_CALLS} calls; each strategy is one "
                   "more replay (cached afterwards).")
    if len(chosen) < 2:
        st.info("Choose at least two strategies to compare.")
        return
    if not ss.cmp_run:
        st.info("Switch on “Replay the strategies” to run the comparison on this long transcript.")
        return
    replays: dict[str, Replay] = {}
    for name, spec in specs.items():
        try:
            replays[name] = replay_cached(m, tkey, counter, choice, live.fingerprint if live else None, spec, agent, t,
                                          live)
        except Exception as exc:  # noqa: BLE001 - any bad strategy is shown, never a traceback
            show_problems(f"Strategy '{name}' cannot run", [str(exc)])
    if len(replays) < 2:
        return
    agent_caption(next(iter(replays.values())))
    rkey = (m, tkey, counter, choice, live.fingerprint if live else None, tuple(specs.items()), agent)
    figs = session_figure(("compare", rkey), lambda: compare_timelines(replays))
    aligned = len({len(rp.frames) for rp in replays.values()}) == 1
    if aligned:
        st.markdown(f"**At {av.call_label(next(iter(replays.values())), call)}** — what each strategy sends, "
                    "and why it left the rest out")
    st.caption("Colours and markers as in the timeline above; hover a call for its numbers.")
    cols = st.columns(len(replays), gap="small")
    for k, ((name, rp), fig) in enumerate(zip(replays.items(), figs, strict=True)):
        with cols[k]:
            st.plotly_chart(mark_call(fig, call), key=f"compare_timeline_{k}", width="stretch",
                            config={"displayModeBar": False})
            if aligned:
                st.markdown(f"**{av.plain_md(name)}** · {av.kept_counts({name: rp}, call)[name]}")
                for reason, count in av.drop_reasons(rp, call).items():
                    st.caption(av.plain_md(f"{count:,} not sent: {reason}"))
    st.dataframe(av.totals_by_strategy(compare_table(replays)), width="stretch", key="compare_totals")
    if not aligned:
        st.warning("The strategies produced different numbers of calls; the per-call view is not aligned.")
        return
    only = st.toggle("Only the messages the strategies treat differently", key="keep_diff",
                     persist_state="page")
    table = av.keep_table(replays, call)
    st.caption(f"{int(table['differs'].sum()):,} of {len(table):,} rows differ between the strategies at this call.")
    view = av.keep_view(table[table["differs"]] if only else table, replays)
    widths = {"#": st.column_config.TextColumn(width=44), "differs": st.column_config.CheckboxColumn(width=64),
              "message": st.column_config.TextColumn("message (preview)", width=150),
              **{name: st.column_config.TextColumn(width=100) for name in replays}}
    st.dataframe(view, hide_index=True, width="stretch", key="keep_table", column_config=widths)


@st.cache_resource(max_entries=4, show_spinner="Replaying every conversation under every strategy…")
def fleet_cached(m: av.ManifestInput, keys: tuple[tuple[str, str | None, int], ...], counter: str, choice: str,
                 specs: tuple[tuple[str, str | None], ...], agent: tuple[Any, ...],
                 _items: tuple[av.FleetInput, ...]) -> Any:
    runs = [(item, {name: replay_cached(m, key, counter, choice, None, spec, agent, item.transcript, None)
                    for name, spec in specs}) for key, item in zip(keys, _items, strict=True)]
    return av.fleet_runs(runs)


def fleet_inputs(src: av.TranscriptSource, fmt: str | None) -> tuple[list[tuple[str, str | None, int]],
                                                                     list[av.FleetInput], list[str]]:
    """Every conversation of the loaded file and of the extra uploads, with their cache keys."""
    sources = [src]
    for up in ss.get("fleet_uploads") or []:
        data = up.getvalue()
        sources.append(av.TranscriptSource(up.name, f"upload:{up.file_id}:{len(data)}", data))
    keys, items, problems = [], [], []
    for s in sources:
        try:
            convs = conversations_cached(s.key, s.name, fmt if s is src else None, s.data)
            for c in convs:
                t = transcript_cached(s.key, s.name, fmt if s is src else None, c.index, s.data)
                label = s.name if len(convs) == 1 else f"{s.name}#{c.index}"
                keys.append((s.key, fmt if s is src else None, c.index))
                items.append(av.FleetInput(label, c.index, t))
        except (InspectorError, OSError) as exc:
            problems.append(str(exc))
    return keys, items, problems


def fleet_tab(m: av.ManifestInput, src: av.TranscriptSource, fmt: str | None, counter: str, choice: str,
              agent: tuple[Any, ...]) -> None:
    st.subheader("Fleet — every conversation under each strategy")
    st.file_uploader("Add transcripts to the fleet (the loaded file's conversations are always in it)",
                     key="fleet_uploads", accept_multiple_files=True,
                     max_upload_size=max(1, av.MAX_TRANSCRIPT_BYTES // 1_000_000))
    keys, items, problems = fleet_inputs(src, fmt)
    show_problems("A fleet transcript cannot be read", problems)
    chosen = list(ss.get("cmp_strategies") or [])
    specs = tuple((name, strategy_spec(name)) for name in chosen)
    st.caption(f"{len(items)} conversation(s) · strategies from *Side by side*: "
               + (", ".join(av.code_span(n) for n in chosen) or "none chosen"))
    if len(items) < 2 or not specs:
        st.info("A fleet needs two or more conversations (a multi-conversation file, or add uploads above) "
                "and at least one strategy chosen under *Side by side*.")
        return
    request = (m, tuple(keys), counter, choice, specs, agent)
    st.button("Replay the fleet", key="fleet_go", on_click=lambda: ss.__setitem__("fleet_for", request))
    if ss.get("fleet_for") != request:
        st.info(f"Press “Replay the fleet” to replay {len(items)} conversations × {len(specs)} strategies.")
        return
    try:
        runs = fleet_cached(m, tuple(keys), counter, choice, specs, agent, tuple(items))
    except Exception as exc:  # noqa: BLE001 - a bad strategy is shown, never a traceback
        show_problems("The fleet cannot run", [str(exc)])
        return
    st.markdown("**Per strategy, over every conversation** (the same summary as `context-inspector compare` "
                "on these files)")
    summary = av.worded(av.fleet_summary(runs))
    st.dataframe(summary, hide_index=True, width="stretch", key="fleet_summary", column_config=grouped(summary))
    with st.expander("Every conversation under every strategy"):
        table = av.worded(runs)
        st.dataframe(table, hide_index=True, width="stretch", key="fleet_runs", column_config=grouped(table))


def manifest_tab(loaded: LoadedManifest | None, problems: list[str]) -> None:
    st.subheader("Manifest")
    if problems:
        show_problems("This manifest is not valid — the views show the last valid one", problems)
    else:
        st.success("Valid manifest.")
    lines = ss.get("manifest_error_lines") or []
    st.html(av.editor_css("manifest_yaml", str(ss.manifest_yaml), lines if problems else []))
    st.text_area("Manifest YAML (edits re-validate live; error lines marked ▶ in the margin)", key="manifest_yaml",
                 height=480, persist_state="page")
    if problems and lines:
        st.caption("The error line(s), marked ▶:")
        st.code(av.error_excerpt(str(ss.manifest_yaml), lines), language=None)
    if loaded is not None:
        for w in loaded.warnings:
            st.warning(av.code_span(mask_text(str(w))))
        with st.expander("Resolved settings (every default filled in)"):
            st.json(mask_secrets(loaded.settings.to_dict()), expanded=1)


def export_tab(rp: Replay, call: int) -> None:
    st.subheader("Export")
    c1, c2, c3 = st.columns(3)
    c1.download_button("Frames (JSON)", data=lambda: av.frames_json(rp), file_name="frames.json",
                       mime="application/json", key="dl_frames_json", on_click="ignore")
    c2.download_button("Frames (CSV)", data=lambda: av.frames_csv(rp), file_name="frames.csv",
                       mime="text/csv", key="dl_frames_csv", on_click="ignore")
    c3.download_button(f"Payload of call {call} (JSON)", data=lambda: av.payload_json(rp, call),
                       file_name=f"payload_call_{call}.json", mime="application/json", key="dl_payload",
                       on_click="ignore")


def header(rp: Replay, t: Transcript, m: av.ManifestInput, name: str) -> None:
    st.title("Context Inspector")
    st.markdown(av.INTRO)
    totals = rp.totals()
    st.caption(f"Manifest {av.code_span(m.name)} · transcript {av.code_span(name)} "
               f"({t.format}, {len(t.messages)} messages) · {totals['frames']} LLM calls · counter "
               f"**{rp.counter}** · summarizer **{rp.summarizer_label}**")
    if rp.agent is not None:
        st.caption(av.plain_md(av.agent_words(rp)))
    if prefix := rp.prefix_line():
        st.caption(av.plain_md(prefix))


# --- page ----------------------------------------------------------------------------------------------------------

def main() -> None:
    st.set_page_config(page_title="Context Inspector", page_icon="🔎", layout="wide")
    st.html(STEPPER_CSS)
    init_state()
    manifest_sidebar()
    transcript_sidebar()
    m, loaded, manifest_problems = resolve_manifest()
    tkey_src, t, transcript_problems = resolve_transcript()
    agent_sidebar()
    live = replay_sidebar(loaded)
    show_problems("Manifest problem — showing the last valid manifest", manifest_problems)
    follow = av.followed(ss.get("transcript_sample"))
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
    agent = (ss.get("agent_source", "auto"), ss.get("model_source", "auto"), av.is_sample_input(m),
             av.prefix_value(ss.get("prefix_choice")))
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
def stepped_view(rp: Replay, rkey: tuple[Any, ...], m: av.ManifestInput, tkey: tuple[str, str | None, int],
                 t: Transcript, counter: str, choice: str, live: av.LiveSettings | None,
                 agent: tuple[Any, ...]) -> None:
    """Everything that depends on the current call. A step reruns only this fragment (the sidebar,
    the inputs and the replay are not touched) and draws only the view that is on screen."""
    if ss.pop("_rerun_page", False):
        st.rerun()  # a link switched the view: redraw the switch too
    st.html(call_strip_html(len(rp.frames), int(av.clamp_call(ss.get("call", 0), len(rp.frames)))))
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

main()
