"""The page's cached computations: the only place anything is read, imported or replayed.

Replays are cached per (manifest text, transcript bytes, conversation, counter, summarizer mode,
live model, strategy, agent switches); moving between calls only changes ``st.session_state.call``
and never replays. The first call with the key the server prepared at launch takes its result
(:func:`inspector.app.first_page.take_prepared`) instead of computing it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from inspector.app import inputs
from inspector.app.first_page import app_replay, freeze_heap, take_prepared
from inspector.manifest import LoadedManifest, load_manifest_text
from inspector.replay import Replay
from inspector.transcripts import ConversationInfo, Transcript, list_conversations, parse_transcript


@st.cache_resource(max_entries=32, show_spinner=False)
def load_manifest_cached(m: inputs.ManifestInput) -> LoadedManifest:
    """The editor's manifest read strictly (``validate``), or as the runtime reads it when ``m.lenient``
    (``assemble``). Raises :class:`~inspector.manifest.ManifestError` when it does not load."""
    return load_manifest_text(m.text, file=m.name, base_dir=Path(m.base_dir) if m.base_dir else None,
                              mode="assemble" if m.lenient else "validate")


@st.cache_resource(max_entries=16, show_spinner="Reading the transcript…")
def conversations_cached(key: str, name: str, fmt: str | None, _data: bytes) -> list[ConversationInfo]:
    """The conversations of the transcript bytes ``_data`` (file ``name``, format ``fmt`` or None to
    detect it), cached under the source ``key``. Raises :class:`~inspector.transcripts.TranscriptError`
    when the bytes do not read."""
    ready = take_prepared("conversations", (key, name, fmt))  # the server's warm-up (first_page)
    return ready if ready is not None else list_conversations(_data, name=name, format=fmt)


@st.cache_resource(max_entries=16, show_spinner="Importing the transcript…")
def transcript_cached(key: str, name: str, fmt: str | None, conversation: int, _data: bytes) -> Transcript:
    """Conversation ``conversation`` of the transcript bytes ``_data``, imported once per source
    ``key``. Raises :class:`~inspector.transcripts.TranscriptError` when it does not import."""
    ready = take_prepared("transcript", (key, name, fmt, conversation))
    return ready if ready is not None else parse_transcript(_data, name=name, format=fmt, conversation=conversation)


@st.cache_resource(max_entries=24, show_spinner="Replaying the conversation…")
def replay_cached(m: inputs.ManifestInput, tkey: tuple[str, str | None, int], counter: str, choice: str,
                  live_id: str | None, strategy: str | None, agent: tuple[Any, ...], _transcript: Transcript,
                  _live: inputs.LiveSettings | None) -> Replay:
    """``agent`` = (system text & tools source, model source, manifest is a sample, unrecorded prefix
    added to the budget: None, "auto" or N tokens): Q21."""
    ready = take_prepared("replay", (m, tkey, counter, choice, live_id, strategy, agent))
    if ready is not None:
        return ready
    rp = app_replay(load_manifest_cached(m), _transcript, counter, choice, strategy, agent, _live)
    freeze_heap()  # a step's garbage collection does not re-read the replay (first_page.freeze_heap)
    return rp
