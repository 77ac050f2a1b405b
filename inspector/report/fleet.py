"""Fleet summaries: many conversations under each strategy or setting, one row per group.

Input is a per-run table (one row per replay: a transcript's conversation under one strategy or
grid setting) with the totals columns of :func:`inspector.report.tables.totals_row` or the metric
columns of :func:`inspector.sweep.sweep_one`. Nothing is recounted: every figure is a sum, a
maximum or a count over those rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

FLEET_COLUMNS: tuple[str, ...] = (
    "conversations", "conversations_over_budget", "over_budget", "peak_payload", "summaries", "trimmed",
    "repairs", "cost_usd",
)
"""Per group: ``conversations`` runs without an error; ``conversations_over_budget`` of them with at
least one call over the input budget; ``over_budget`` such calls in all; ``peak_payload`` the
largest payload of any call; ``summaries`` summarizer model calls (in turn and at commit);
``trimmed`` messages the token trimmer removed; ``repairs`` pairing repairs; ``cost_usd`` the sum,
``None`` when any run has no price; ``cost_with_caching_usd`` (when the runs have it) the same sum of
the cost with prompt caching (:mod:`inspector.prompt_cache`)."""


def _summaries(df: pd.DataFrame) -> pd.Series:
    if "summarizer_calls" in df.columns:
        return df["summarizer_calls"]
    return df["summarizer_in_turn"] + df["summarizer_commit"]


def fleet_table(runs: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """One row per distinct value of ``by`` (first-seen order), with :data:`FLEET_COLUMNS`
    (plus ``errors`` when the table has an ``error`` column)."""
    ok = runs[runs["error"].isna()] if "error" in runs.columns else runs
    rows: list[dict[str, Any]] = []
    keys = list(by)
    groups = runs.groupby(keys, sort=False, dropna=False) if keys else [((), runs)]
    cached = ["cost_with_caching_usd"] if "cost_with_caching_usd" in runs.columns else []
    for key, group in groups:
        key_t = key if isinstance(key, tuple) else (key,)
        good = ok.loc[ok.index.intersection(group.index)]
        costs = good["cost_usd"]
        cost = None if len(good) == 0 or costs.isna().any() else round(float(costs.sum()), 8)
        row: dict[str, Any] = dict(zip(keys, key_t, strict=True))
        row.update({
            "conversations": len(good),
            "conversations_over_budget": int((good["over_budget"] > 0).sum()),
            "over_budget": int(good["over_budget"].sum()),
            "peak_payload": int(good["peak_payload"].max()) if len(good) else None,
            "summaries": int(_summaries(good).sum()),
            "trimmed": int(good["trimmed"].sum()),
            "repairs": int(good["repairs"].sum()),
            "cost_usd": cost,
        })
        for col in cached:
            row[col] = _priced_sum(good[col])
        if "error" in runs.columns:
            row["errors"] = int(group["error"].notna().sum())
        rows.append(row)
    cols = [*keys, *FLEET_COLUMNS, *cached, *(["errors"] if "error" in runs.columns else [])]
    return pd.DataFrame(rows, columns=cols)


def _priced_sum(costs: pd.Series) -> float | None:
    """The sum of ``costs``; None when there is none or any is missing (no partial sums)."""
    return None if len(costs) == 0 or costs.isna().any() else round(float(costs.sum()), 8)


def is_missing(v: Any) -> bool:
    """None or NaN (pandas' two spellings of "no value")."""
    return v is None or (isinstance(v, float) and math.isnan(v))
