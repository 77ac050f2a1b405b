"""*Side by side*: two to four strategies (presets, the manifest's own, or the user's YAML) replayed
on the same transcript, their timelines on one scale, what each sends at the current call and why."""

from __future__ import annotations

from typing import Any

import streamlit as st

from inspector.app import inputs, side_by_side, words
from inspector.app.cached import load_manifest_cached, replay_cached
from inspector.app.timeline import compare_timelines
from inspector.app.widgets import agent_caption, mark_call, session_figure, show_problems
from inspector.compare import OWN_STRATEGY, own_strategy_yaml, presets
from inspector.replay import Replay
from inspector.report import cache_view, per_call
from inspector.report.tables import compare_table
from inspector.transcripts import Transcript
from inspector.vocabulary import standin_estimate_words

ss = st.session_state


CUSTOM = ("custom A", "custom B")


CUSTOM_TEMPLATE = "type: summarising\nparams:\n  keep_turns: 4\n  hysteresis_ratio: 0.2\n"


def strategy_spec(name: str) -> str | None:
    """The `context_manager` YAML of a strategy: the user's edit, else the preset (or the template);
    None for the manifest's own (the manifest as loaded)."""
    import yaml

    if name == OWN_STRATEGY:
        return None
    key = f"cmp_spec_{name}"
    if key not in ss:
        ss[key] = CUSTOM_TEMPLATE if name in CUSTOM else yaml.safe_dump(presets()[name], sort_keys=False)
    return str(ss[key])


def strategy_editors(chosen: list[str], m: inputs.ManifestInput) -> dict[str, str | None]:
    """One column per chosen strategy: its ``context_manager`` YAML in an editor, or the manifest's
    own shown read-only. Returns the YAML to replay per strategy name (None for the manifest's own)."""
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


def strategy_totals(replays: dict[str, Replay]) -> None:
    """The strategies' totals side by side, the prompt cache's first (cost with and without caching,
    cache-hit share, cache breaks), with a line saying what "with caching" counts, or that no prompt
    caching applies and why (:func:`inspector.report.cache_view.strategy_cache_caption`), and, when
    the offline stand-in writes any of their summaries, that their forgetting is an estimate."""
    st.caption(words.plain_md(cache_view.strategy_cache_caption(replays)))
    st.dataframe(side_by_side.totals_by_strategy(compare_table(replays), replays), width="stretch",
                 key="compare_totals")
    for note in standin_estimate_words([rp.summarizer_label for rp in replays.values()]):
        st.caption(words.plain_md(note))


def compare_tab(m: inputs.ManifestInput, tkey: tuple[str, str | None, int], t: Transcript, counter: str, choice: str,
                live: inputs.LiveSettings | None, call: int, agent: tuple[Any, ...]) -> None:
    """*Side by side*: the strategy picker and editors, then (when switched on, with two or more
    strategies) their timelines on one scale, what each sends at ``call`` and why, their totals and
    the per-message table. A strategy that fails is shown as an error beside the others."""
    st.subheader(f"Side by side — {len(ss.cmp_strategies)} strategies")
    chosen = st.multiselect("Strategies (two to four; presets or your own `context_manager` YAML)",
                            [OWN_STRATEGY, *presets(), *CUSTOM], key="cmp_strategies", max_selections=4,
                            persist_state="page")
    specs = strategy_editors(chosen, m)
    if ss.get("cmp_run_for") != tkey:  # a new transcript: long ones wait for the user
        ss.cmp_run_for, ss.cmp_run = tkey, ss.get("n_calls", 0) <= side_by_side.COMPARE_AUTO_MAX_CALLS
    st.toggle("Replay the strategies", key="cmp_run", persist_state="page",
              help=f"On by itself for transcripts up to {side_by_side.COMPARE_AUTO_MAX_CALLS} calls; each strategy "
                   "is one more replay (cached afterwards).")
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
        st.markdown(f"**At {per_call.call_label(next(iter(replays.values())), call)}** — what each strategy sends, "
                    "and why it left the rest out")
    st.caption("Colours and markers as in the timeline above; hover a call for its numbers.")
    cols = st.columns(len(replays), gap="small")
    for k, ((name, rp), fig) in enumerate(zip(replays.items(), figs, strict=True)):
        with cols[k]:
            st.plotly_chart(mark_call(fig, call), key=f"compare_timeline_{k}", width="stretch",
                            config={"displayModeBar": False})
            if aligned:
                st.markdown(f"**{words.plain_md(name)}** · {side_by_side.kept_counts({name: rp}, call)[name]}")
                for reason, count in side_by_side.drop_reasons(rp, call).items():
                    st.caption(words.plain_md(f"{count:,} not sent: {reason}"))
    strategy_totals(replays)
    if not aligned:
        st.warning("The strategies produced different numbers of calls; the per-call view is not aligned.")
        return
    only = st.toggle("Only the messages the strategies treat differently", key="keep_diff",
                     persist_state="page")
    table = side_by_side.keep_table(replays, call)
    st.caption(f"{int(table['differs'].sum()):,} of {len(table):,} rows differ between the strategies at this call.")
    view = side_by_side.keep_view(table[table["differs"]] if only else table, replays)
    widths = {"#": st.column_config.TextColumn(width=44), "differs": st.column_config.CheckboxColumn(width=64),
              "message": st.column_config.TextColumn("message (preview)", width=150),
              **{name: st.column_config.TextColumn(width=100) for name in replays}}
    st.dataframe(view, hide_index=True, width="stretch", key="keep_table", column_config=widths)
