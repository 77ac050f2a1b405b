"""Which manifest and transcript the page shows: the editor's text when it is valid, the upload
(else the sample) when it reads, otherwise the last ones that loaded, with the problems to show."""

from __future__ import annotations

import streamlit as st

from inspector.app import inputs
from inspector.app.cached import conversations_cached, load_manifest_cached, transcript_cached
from inspector.app.sidebar import AUTO
from inspector.errors import InspectorError
from inspector.live import follow_state, read_complete
from inspector.manifest import LoadedManifest, ManifestError
from inspector.transcripts import Transcript, TranscriptError

ss = st.session_state


def resolve_manifest() -> tuple[inputs.ManifestInput | None, LoadedManifest | None, list[str]]:
    """The manifest to use: the editor's text when valid, else the last valid one (with the errors)."""
    m = inputs.ManifestInput(ss.manifest_yaml, ss.get("manifest_name", "manifest.yaml"), ss.get("manifest_base"),
                         bool(ss.get("manifest_lenient", False)))
    problems = [ss.manifest_notice] if ss.get("manifest_notice") else []
    try:
        loaded = load_manifest_cached(m)
    except ManifestError as exc:
        problems += [str(i) for i in exc.issues] or [str(exc)]
        ss.manifest_error_lines = sorted({i.line for i in exc.issues if getattr(i, "line", None)})
        good: inputs.ManifestInput | None = ss.get("good_manifest")
        return (good, load_manifest_cached(good) if good else None, problems)
    ss.good_manifest = m
    ss.manifest_error_lines = []
    return m, loaded, problems


def transcript_source() -> inputs.TranscriptSource:
    """The transcript's bytes and cache key: the upload, else the sample (a followed live file: its
    whole lines as they are now). Raises :class:`~inspector.transcripts.TranscriptError` when the
    file is too large, and :class:`OSError` when it cannot be read."""
    upload = ss.get("transcript_upload")
    if upload is not None:
        data = upload.getvalue()
        if problem := inputs.too_large(len(data)):
            raise TranscriptError(upload.name, problem)
        return inputs.TranscriptSource(upload.name, f"upload:{upload.file_id}:{len(data)}", data)
    path = inputs.sample_transcripts()[ss.transcript_sample]
    if inputs.followed(ss.transcript_sample) is not None:  # a live file: its whole lines, as they are now
        ss._follow_seen = follow_state(path)
        data = read_complete(path)
        if problem := inputs.too_large(len(data)):
            raise TranscriptError(path.name, problem)
        return inputs.TranscriptSource(path.name, f"follow:{path}:{len(data)}", data)
    stat = path.stat()
    if problem := inputs.too_large(stat.st_size):
        raise TranscriptError(path.name, problem)
    return inputs.TranscriptSource(path.name, f"sample:{path}:{stat.st_mtime_ns}:{stat.st_size}", path.read_bytes())


def conversation_picker(src: inputs.TranscriptSource, fmt: str | None) -> int:
    """The conversation to show: a picker in the sidebar when the file holds more than one, else 0.
    Raises :class:`~inspector.transcripts.TranscriptError` when the file does not read."""
    convs = conversations_cached(src.key, src.name, fmt, src.data)
    if len(convs) <= 1:
        return 0
    if not 0 <= ss.get("conversation", 0) < len(convs):
        ss.conversation = 0
    labels = {c.index: f"{c.index}: {c.label} ({c.user_turns} user turns, {c.messages} messages)" for c in convs}
    options: list[int] = [c.index for c in convs]
    chosen = st.sidebar.selectbox("Conversation", options, key="conversation", format_func=lambda k: labels[k])
    return int(chosen if chosen is not None else 0)


def resolve_transcript() -> tuple[tuple[inputs.TranscriptSource, str | None, int] | None, Transcript | None, list[str]]:
    """The transcript to show: the upload (else the sample) when it reads, else the last transcript
    that loaded, with the error. Opening a transcript never touches the Agent switches (one rule
    for every way of opening a pair: the policy's, as on the command line) and starts at call 0.

    Replacing one upload by another removes the first before the second arrives: that run shows
    the sample, but does not make it "the last transcript that loaded" (the uploader held a file
    in the run before, loaded or not), so a failing second upload keeps showing the last one that
    loaded."""
    fmt = None if ss.get("transcript_format", AUTO) == AUTO else ss.transcript_format
    if fmt is None and inputs.followed(ss.get("transcript_sample")) is not None:
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
