"""Writing many runs: the per-run table of ``compare`` and ``sweep`` and, over more than one
conversation, the fleet summary (:func:`inspector.report.fleet.fleet_table`), as a terminal table,
JSON or CSV.

Table and JSON carry both (JSON under ``fleet``). A CSV file holds one table, so CSV output is the
per-run rows and the fleet summary goes to ``--fleet-summary FILE`` (a stderr line says so when it
was left out); ``--fleet-summary`` writes the summary alone in every format.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.cli import output as co
from inspector.cli.inputs import file_label
from inspector.cli.output import Column
from inspector.json_text import document_text, rows_text

FLEET_COLUMNS: tuple[Column, ...] = (
    Column("conversations", "sum"), Column("conversations_over_budget", "sum"), Column("over_budget", "sum"),
    Column("peak_payload", "max"), Column("summaries", "sum"), Column("trimmed", "sum"), Column("repairs", "sum"),
    Column("cost_usd", "sum"), Column("cost_with_caching_usd", "sum"), Column("errors", "sum"),
)
"""The fleet summary's measures, after the columns that name the setting (strategy or grid values)."""


@dataclass(frozen=True)
class Runs:
    """What :func:`write_runs` writes: ``table`` the per-run rows (a DataFrame) shown in ``columns``,
    ``fleet`` the fleet summary (a DataFrame, or None for one conversation without
    ``--fleet-summary``), ``key`` the JSON key of the rows, ``transcripts`` the conversations run,
    ``fleet_title`` the summary's heading and ``extra`` more JSON keys put first (a sweep's grid)."""

    table: Any
    columns: Sequence[Column]
    fleet: Any
    key: str
    transcripts: Sequence[Any]
    fleet_title: str
    extra: dict[str, Any] | None = None


def _fleet_text(args: argparse.Namespace, runs: Runs, fmt: str, colour: bool) -> str:
    """The fleet summary alone in ``fmt``; the table names the files and counts the conversations."""
    fleet = runs.fleet
    if fmt == "json":
        return rows_text(json.loads(fleet.to_json(orient="records")))
    if fmt == "csv":
        return str(fleet.to_csv(index=False))
    files = sorted({file_label(t) for t in runs.transcripts})
    heading = f"{runs.fleet_title} ({len(runs.transcripts):,} conversations of {', '.join(files)})"
    lead = [Column(c) for c in fleet.columns if c not in {f.key for f in FLEET_COLUMNS}]
    return co.render_table(fleet.to_dict(orient="records"), _people_columns([*lead, *FLEET_COLUMNS], runs.table),
                           wide=args.wide, color=colour, title=heading)


def _people_columns(columns: Sequence[Column], table: Any) -> list[Column]:
    """``columns`` without those that claim a cache when no prompt caching applies to the runs of
    ``table`` (:func:`inspector.sweep.no_prompt_caching`; :func:`inspector.report.cache_view.people_columns`)."""
    from inspector.report.cache_view import people_columns
    from inspector.sweep import no_prompt_caching

    return people_columns(columns, not no_prompt_caching(table), key=lambda c: c.key)


def _pending_runs_note(table: Any) -> str | None:
    """Under a compare/sweep table: how many runs end on a pending next call, left out of the numbers."""
    if "pending_call" not in table.columns:
        return None
    n = int(table["pending_call"].fillna(False).astype(bool).sum())
    if not n:
        return None
    return (f"{n:,} of {len(table):,} run(s) end without a reply: their pending next call (never made by the agent; "
            f"`replay` shows it) is left out of calls, tokens, peaks, costs and the fleet summary")


def _json_text(runs: Runs) -> str:
    """The JSON document: ``extra``'s keys, the rows under ``key``, the fleet summary under ``fleet``."""
    doc: dict[str, Any] = dict(runs.extra or {})
    doc[runs.key] = json.loads(runs.table.to_json(orient="records"))
    if runs.fleet is not None:
        doc["fleet"] = json.loads(runs.fleet.to_json(orient="records"))
    return document_text(doc)


def _table_text(args: argparse.Namespace, runs: Runs) -> str:
    """The terminal tables: the runs (for one conversation, titled by it instead of two columns
    naming it), the fleet summary, and the note on pending calls."""
    colour = co.stdout_colour(args.output)
    transcripts = runs.transcripts
    many = len(transcripts) > 1
    cols = list(runs.columns) if many else [c for c in runs.columns if c.key not in ("transcript", "conversation")]
    cols = _people_columns(cols, runs.table)
    title = None if many else f"{file_label(transcripts[0])} · conversation {transcripts[0].conversation}"
    text = co.render_table(runs.table.to_dict(orient="records"), cols, title=title, wide=args.wide, color=colour)
    if runs.fleet is not None:
        text += "\n" + _fleet_text(args, runs, "table", colour)
    note = _pending_runs_note(runs.table)
    if note:
        text += "\n".join(textwrap.wrap(note, co.WIDE_WIDTH if args.wide else co.TABLE_WIDTH)) + "\n"
    return text


def write_runs(args: argparse.Namespace, runs: Runs) -> None:
    """Write ``runs`` in ``--format`` to ``-o FILE`` or stdout, and the fleet summary alone to
    ``--fleet-summary FILE`` when given (see the module's rules)."""
    fleet_file = getattr(args, "fleet_summary", None)
    if runs.fleet is not None and fleet_file:
        co.write(_fleet_text(args, runs, args.fmt, False), fleet_file)
    if args.fmt == "json":
        co.write(_json_text(runs), args.output)
    elif args.fmt == "csv":
        co.write(runs.table.to_csv(index=False), args.output)
        if runs.fleet is not None and not fleet_file:
            co.state([f"fleet summary: not in the CSV (one table per file); --fleet-summary FILE writes it "
                      f"({len(runs.transcripts):,} conversations)"])
    else:
        co.write(_table_text(args, runs), args.output)
