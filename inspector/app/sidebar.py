"""The sidebar: the manifest, the transcript, the agent switches and the replay choices, with the
callbacks their widgets run, and the session's starting state (:func:`init_state`)."""

from __future__ import annotations

import streamlit as st

from inspector.app import inputs, words
from inspector.compare import DEFAULT_STRATEGIES
from inspector.manifest import LoadedManifest
from inspector.transcripts import list_formats
from inspector.vocabulary import VIEW_WORDS

ss = st.session_state


AUTO = "auto-detect"


def on_manifest_sample() -> None:
    """Put the picked sample manifest (or the transcript's own agent) into the editor, replacing
    any edit or upload."""
    if ss.manifest_sample == inputs.OWN_AGENT:  # no manifest: the transcript's own agent (like `replay TRANSCRIPT`)
        ss.manifest_yaml, ss.manifest_name, ss.manifest_base = inputs.own_agent_yaml(), inputs.OWN_AGENT, None
    else:
        path = inputs.sample_manifests()[ss.manifest_sample]
        ss.manifest_yaml = path.read_text(encoding="utf-8")
        ss.manifest_name, ss.manifest_base = path.name, str(path.parent)
    ss.pop("manifest_notice", None)


def on_manifest_upload() -> None:
    """Put an uploaded manifest into the editor; a file too large or not UTF-8 leaves the editor as it
    is and says why above the views."""
    upload = ss.get("manifest_upload")
    if upload is None:
        return
    data = upload.getvalue()
    if problem := inputs.too_large(len(data), inputs.MANIFEST_MAX_BYTES):
        ss.manifest_notice = f"{upload.name}: {problem}"
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        ss.manifest_notice = f"{upload.name}: not UTF-8 text (byte {exc.start})"
        return
    ss.manifest_yaml, ss.manifest_name, ss.manifest_base = text, upload.name, None
    ss.pop("manifest_notice", None)


def init_state() -> None:
    """The session's starting state, set once: the manifest and transcript chosen at launch (or the
    demo), call 0, the first view, and the default of every switch."""
    manifest_choice, transcript_choice = inputs.default_choices()
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
    ss.setdefault("prefix_choice", inputs.prefix_choice_default())
    ss.setdefault("cmp_strategies", list(DEFAULT_STRATEGIES))


def manifest_sidebar() -> None:
    """The sidebar's *Manifest* section: the sample picker, reload, upload and lenient reading."""
    st.sidebar.header("Manifest")
    st.sidebar.selectbox("Sample manifest", inputs.manifest_choices(), key="manifest_sample",
                         on_change=on_manifest_sample,
                         help=f"“{inputs.OWN_AGENT}”: no manifest, the transcript replayed with its own system text, "
                              "tools and model (as `context-inspector replay TRANSCRIPT`).")
    st.sidebar.button("Reload this sample", key="manifest_reload", on_click=on_manifest_sample,
                      help="Discard edits and uploads, and show the selected sample again.")
    st.sidebar.file_uploader("…or upload a manifest", type=["yaml", "yml"], key="manifest_upload",
                             on_change=on_manifest_upload)
    st.sidebar.checkbox("Lenient reading (like the runtime)", key="manifest_lenient",
                        help="Off: strict validation, every error with its field path. On: malformed "
                             "bindings fall back to defaults, as the reference runtime does.")
    st.sidebar.caption("Edit the YAML in the Manifest view; it re-validates on every change.")


def transcript_sidebar() -> None:
    """The sidebar's *Transcript* section: the sample picker (disabled while an upload is shown),
    the upload and the format."""
    st.sidebar.header("Transcript")
    samples = inputs.sample_transcripts()
    upload = ss.get("transcript_upload")
    st.sidebar.selectbox("Sample transcript" if upload is None else "Sample transcript (not shown: the upload is)",
                         list(samples), key="transcript_sample", disabled=upload is not None,
                         help="Remove the upload below to show a sample again." if upload is not None else None)
    st.sidebar.file_uploader("…or upload a transcript (an upload wins over the sample)", key="transcript_upload",
                             max_upload_size=max(1, inputs.MAX_TRANSCRIPT_BYTES // 1_000_000))
    st.sidebar.selectbox("Format", [AUTO, *list_formats()], key="transcript_format")


def apply_live_settings() -> None:
    """Keep the live summarizer settings typed in the form; without a model name, keep none and say so."""
    model = (ss.get("live_model") or "").strip()
    if not model:
        ss.live_applied, ss.live_notice = None, "Enter a model name first."
        return
    ss.live_applied = inputs.LiveSettings(model, (ss.get("live_base") or "").strip(), ss.get("live_key") or "",
                                      float(ss.get("live_timeout", 30.0)))
    ss.pop("live_notice", None)


def agent_sidebar() -> None:
    """The visible switch between the transcript's own agent and the manifest's (Q21)."""
    st.sidebar.header("Agent")
    st.sidebar.radio("System text & tools", list(inputs.AGENT_SOURCES), key="agent_source",
                     format_func=inputs.AGENT_SOURCES.get,
                     help="Whose system prompt and tool schemas are sent. Opening a transcript or a manifest "
                          "leaves this switch as it is.")
    st.sidebar.radio("Model & window", list(inputs.MODEL_SOURCES), key="model_source",
                     format_func=inputs.MODEL_SOURCES.get,
                     help="Whose model sets the context window and the price. Opening a transcript or a manifest "
                          "leaves this switch as it is.")
    st.sidebar.radio("Unrecorded prefix", list(inputs.PREFIX_CHOICES), key="prefix_choice",
                     format_func=inputs.PREFIX_CHOICES.get,
                     help="Logs such as Claude Code's and OpenHands' leave out the system prompt and tool schemas "
                          "every real call carried. Estimated: add the fitted offset of the recorded usage to every "
                          "call's budget (as --unrecorded-prefix auto).")


def replay_sidebar(loaded: LoadedManifest | None) -> inputs.LiveSettings | None:
    """Counter and summarizer choices; the live connection only counts once applied (no model
    call is made while the user is still typing a model name or key)."""
    st.sidebar.header("Replay")
    st.sidebar.radio("Token counter", ["tiktoken", "estimate"], key="counter", horizontal=True,
                     help="tiktoken: the model's real tokenizer. estimate: the reference runtime's "
                          "character estimate (chars/4), which can under-count.")
    st.sidebar.radio("Summarizer", list(inputs.SUMMARIZER_CHOICES), key="summarizer",
                     format_func=inputs.SUMMARIZER_CHOICES.get,
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
    live: inputs.LiveSettings | None = ss.get("live_applied")
    if live is None:
        st.sidebar.info("Until you apply a model, the labelled offline stand-in writes the summaries.")
    else:
        st.sidebar.caption(f"Live summaries with {words.code_span(live.model)}"
                           + (f" at {words.code_span(live.api_base)}" if live.api_base else ""))
    return live
