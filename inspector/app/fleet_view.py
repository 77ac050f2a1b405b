"""*Fleet*: every conversation of the loaded file and of extra uploads under each strategy chosen
in *Side by side*, summed per strategy as ``context-inspector compare`` prints them."""

from __future__ import annotations

from typing import Any

import streamlit as st

from inspector.app import inputs, side_by_side, words
from inspector.app.cached import conversations_cached, replay_cached, transcript_cached
from inspector.app.compare_view import strategy_spec
from inspector.app.widgets import grouped, show_problems
from inspector.errors import InspectorError
from inspector.report import cache_view
from inspector.vocabulary import standin_estimate_words

ss = st.session_state


@st.cache_resource(max_entries=4, show_spinner="Replaying every conversation under every strategy…")
def fleet_cached(m: inputs.ManifestInput, keys: tuple[tuple[str, str | None, int], ...], counter: str, choice: str,
                 specs: tuple[tuple[str, str | None], ...], agent: tuple[Any, ...],
                 _items: tuple[side_by_side.FleetInput, ...]) -> Any:
    """Every conversation of ``_items`` replayed under every strategy of ``specs`` (each replay through
    :func:`~inspector.app.cached.replay_cached`), as :func:`~inspector.app.side_by_side.fleet_runs`'
    table. Raises what a replay raises (a strategy that does not load)."""
    runs = [(item, {name: replay_cached(m, key, counter, choice, None, spec, agent, item.transcript, None)
                    for name, spec in specs}) for key, item in zip(keys, _items, strict=True)]
    return side_by_side.fleet_runs(runs)


def fleet_inputs(src: inputs.TranscriptSource, fmt: str | None) -> tuple[list[tuple[str, str | None, int]],
                                                                     list[side_by_side.FleetInput], list[str]]:
    """Every conversation of the loaded file and of the extra uploads, with their cache keys."""
    sources = [src]
    for up in ss.get("fleet_uploads") or []:
        data = up.getvalue()
        sources.append(inputs.TranscriptSource(up.name, f"upload:{up.file_id}:{len(data)}", data))
    keys, items, problems = [], [], []
    for s in sources:
        try:
            convs = conversations_cached(s.key, s.name, fmt if s is src else None, s.data)
            for c in convs:
                t = transcript_cached(s.key, s.name, fmt if s is src else None, c.index, s.data)
                label = s.name if len(convs) == 1 else f"{s.name}#{c.index}"
                keys.append((s.key, fmt if s is src else None, c.index))
                items.append(side_by_side.FleetInput(label, c.index, t))
        except (InspectorError, OSError) as exc:
            problems.append(str(exc))
    return keys, items, problems


def fleet_tab(m: inputs.ManifestInput, src: inputs.TranscriptSource, fmt: str | None, counter: str, choice: str,
              agent: tuple[Any, ...]) -> None:
    """*Fleet*: the extra uploads, then (once the user presses the button for this request) every
    conversation under every strategy chosen in *Side by side*, summed per strategy (saying that the
    forgetting is an estimate when the offline stand-in writes any summary)."""
    st.subheader("Fleet — every conversation under each strategy")
    st.file_uploader("Add transcripts to the fleet (the loaded file's conversations are always in it)",
                     key="fleet_uploads", accept_multiple_files=True,
                     max_upload_size=max(1, inputs.MAX_TRANSCRIPT_BYTES // 1_000_000))
    keys, items, problems = fleet_inputs(src, fmt)
    show_problems("A fleet transcript cannot be read", problems)
    chosen = list(ss.get("cmp_strategies") or [])
    specs = tuple((name, strategy_spec(name)) for name in chosen)
    st.caption(f"{len(items)} conversation(s) · strategies from *Side by side*: "
               + (", ".join(words.code_span(n) for n in chosen) or "none chosen"))
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
    for note in standin_estimate_words(runs["summarizer"]):  # the offline stand-in summarises: say so
        st.caption(words.plain_md(note))
    caching = cache_view.fleet_cache_caption(runs, runs.attrs.get("no_caching_why", ()))
    if caching:  # rule none: no prompt caching applies, the cache's columns are left out or say so
        st.caption(words.plain_md(caching))
    summary = words.worded(cache_view.fleet_cache_shown(side_by_side.fleet_summary(runs)))
    st.dataframe(summary, hide_index=True, width="stretch", key="fleet_summary", column_config=grouped(summary))
    with st.expander("Every conversation under every strategy"):
        table = words.worded(cache_view.fleet_cache_shown(runs))
        st.dataframe(table, hide_index=True, width="stretch", key="fleet_runs", column_config=grouped(table))
