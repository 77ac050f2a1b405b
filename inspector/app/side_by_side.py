"""Strategies side by side and over a fleet of conversations: what each sends at one call, their
totals in words, and one row per (conversation, strategy) as ``context-inspector compare`` prints.
No Streamlit import."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from inspector.app.words import number_words
from inspector.replay import Replay
from inspector.report.tables import not_sent_table, preview_text


COMPARE_AUTO_MAX_CALLS = 400
"""Side by side runs by itself up to this many calls; longer transcripts wait for the user to switch it on."""


def _message_previews(rp: Replay) -> list[str]:
    """A (masked) one-line preview of every transcript message, made once per replay."""
    return rp.view("app_previews", lambda: [preview_text(m.get("content"), 100) for m in rp.messages])


def keep_table(replays: Mapping[str, Replay], call: int) -> pd.DataFrame:
    """For one call: every transcript message that exists at that point, and the band each strategy
    sends it in ("—" = not sent). The first row is the summary block (tokens per strategy)."""
    if not replays:
        return pd.DataFrame()
    first = next(iter(replays.values()))
    msgs = first.messages
    at = min(first.frames[call].at, len(msgs))
    sent = {name: {r: b for r, b in zip(rp.frames[call].refs, rp.frames[call].row_bands, strict=True) if r is not None}
            for name, rp in replays.items()}
    rows: list[dict[str, Any]] = [{"ref": None, "role": "(summary block)", "content": "",
                                   **{name: (f"{rp.frames[call].bands.get('summary', 0):,} tokens"
                                             if rp.frames[call].bands.get("summary") else "—")
                                      for name, rp in replays.items()}}]
    previews = _message_previews(first)
    for i in range(at):
        rows.append({"ref": i, "role": msgs[i].get("role"), "content": previews[i],
                     **{name: sent[name].get(i, "—") for name in replays}})
    df = pd.DataFrame(rows, columns=["ref", "role", *replays, "content"])
    df["ref"] = df["ref"].astype("Int64")
    df.insert(2 + len(replays), "differs", [len({r[name] for name in replays}) > 1 for r in rows])
    return df


KEEP_BAND_WORDS = {"system": "system", "summary": "summary", "history": "kept history", "user": "user turn",
                   "working_memory": "working memory", "tool_schemas": "tool schemas"}
"""The bands in :func:`keep_view`'s strategy columns: short words that fit a narrow column."""


def keep_view(table: pd.DataFrame, strategies: Iterable[str]) -> pd.DataFrame:
    """:func:`keep_table` for the screen: ``#`` (the transcript message; "—" for the summary
    block), what each strategy sends it as (in words, "—" = not sent), whether they differ, and
    the message as ``role · preview``, so the strategies' columns come first and fit at 1024 px."""
    names = list(strategies)
    out = pd.DataFrame({"#": ["—" if pd.isna(r) else f"{int(r)}" for r in table["ref"]]})
    for name in names:
        out[name] = [KEEP_BAND_WORDS.get(str(v), str(v)) for v in table[name]]
    out["differs"] = table["differs"].to_numpy()
    out["message"] = [f"{role} · {text}" if text else str(role) for role, text in zip(table["role"], table["content"],
                                                                                       strict=True)]
    return out


def totals_by_strategy(table: pd.DataFrame, replays: Mapping[str, Replay] | None = None) -> pd.DataFrame:
    """:func:`~inspector.report.tables.compare_table` turned on its side: one row per measure (in
    words), one column per strategy, every number written out, so two to four strategies fit at
    1024 px without a column cut off at the right. With ``replays`` (the same strategies, in the
    table's order), the prompt-cache rows of :func:`inspector.report.cache_view.strategy_cache_rows`
    come first: cost with and without caching, cache-hit share, cache breaks and their cost."""
    from inspector.report.cache_view import strategy_cache_rows
    from inspector.vocabulary import column_words

    rows = {}
    if replays is not None:
        rows.update(strategy_cache_rows(replays))
    for col in table.columns:
        if col == "strategy":
            continue
        rows[column_words(col)] = [number_words(v.item() if hasattr(v, "item") else v, col.endswith("usd"))
                                   for v in table[col]]
    return pd.DataFrame.from_dict(rows, orient="index", columns=[str(s) for s in table["strategy"]])


def drop_reasons(rp: Replay, call: int) -> dict[str, int]:
    """How many earlier messages this call leaves out, by reason (most frequent first)."""
    counts = not_sent_table(rp, call)["reason"].value_counts()
    return {str(k): int(v) for k, v in counts.items()}


def kept_counts(replays: Mapping[str, Replay], call: int) -> dict[str, str]:
    """Per strategy, how many of the messages that exist at ``call`` it sends, and the tokens sent."""
    out = {}
    for name, rp in replays.items():
        f = rp.frames[call]
        kept = sum(1 for r in f.refs if r is not None)
        out[name] = f"{kept} of {min(f.at, len(rp.messages))} messages · {f.payload_tokens:,} tokens"
    return out


@dataclass(frozen=True)
class FleetInput:
    """One conversation of the fleet view: where it comes from (``label`` = file name, ``#N`` for
    the N-th conversation of a multi-conversation file) and the transcript itself."""

    label: str
    conversation: int
    transcript: Any


def fleet_runs(runs: Iterable[tuple[FleetInput, Mapping[str, Replay]]]) -> pd.DataFrame:
    """One row per (conversation, strategy): the totals the CLI's ``compare`` prints for a run
    (:func:`~inspector.report.tables.totals_row`) plus the forgotten references, so the app's
    fleet view and ``context-inspector compare A B C`` agree row for row; the prompt cache's
    columns (:func:`inspector.report.cache_view.fleet_cache_row`, its ``cache_rule`` among them); and
    the ``summarizer`` that wrote the run's summaries (``Replay.summarizer_label``, as the sweep's
    column). ``attrs["no_caching_why"]``: why no prompt caching applies to the runs under the rule
    ``none`` (:func:`inspector.report.cache_view.no_caching_why`), for the fleet's caption."""
    from inspector.forgetting import forgetting_totals, replay_needs
    from inspector.report.cache_view import fleet_cache_row, no_caching_why
    from inspector.report.tables import totals_row

    rows, whys = [], []
    for item, replays in runs:
        for name, rp in replays.items():
            row: dict[str, Any] = {"transcript": item.label, "conversation": item.conversation}
            row.update(totals_row(rp, name))
            row.update(fleet_cache_row(rp))
            row["forgotten"] = forgetting_totals(replay_needs(rp))["forgotten"]
            row["summarizer"] = rp.summarizer_label  # whose summaries: the offline stand-in's are an estimate
            rows.append(row)
            why = no_caching_why(rp)
            if why is not None and why not in whys:
                whys.append(why)
    df = pd.DataFrame(rows)
    df.attrs["no_caching_why"] = whys
    return df


def fleet_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per strategy over every conversation: :func:`inspector.report.fleet.fleet_table` (the CLI's
    fleet summary) plus the forgotten references summed, and the prompt cache's sums
    (:func:`inspector.report.cache_view.fleet_cache_sums`) when the runs carry its columns, with
    the cache rules the strategy's runs were costed under (``cache_rule``; "openai, none" when they
    differ)."""
    from inspector.prompt_cache import TOTALS_CACHE_COLUMNS
    from inspector.report.cache_view import fleet_cache_sums
    from inspector.report.fleet import fleet_table

    table = fleet_table(runs, ["strategy"])
    if "forgotten" in runs.columns and not table.empty:
        table["forgotten"] = [int(runs.loc[runs["strategy"] == s, "forgotten"].sum()) for s in table["strategy"]]
    if "cached_tokens" in runs.columns and not table.empty:
        sums = [fleet_cache_sums(runs[runs["strategy"] == s]) for s in table["strategy"]]
        for code in TOTALS_CACHE_COLUMNS:
            table[code] = [row[code] for row in sums]
    if "cache_rule" in runs.columns and not table.empty:
        table["cache_rule"] = [", ".join(dict.fromkeys(str(r) for r in runs.loc[runs["strategy"] == s, "cache_rule"]))
                               for s in table["strategy"]]
    return table
