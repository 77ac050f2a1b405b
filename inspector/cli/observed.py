"""``context-inspector observed [MANIFEST] TRANSCRIPT``: payloads a runtime recorded (mas-lab
``context_assembled`` events, Letta's in-context window) beside what the engine would send from the
same state.

:func:`inspector.observed.compare_observed` rebuilds each recorded payload's state and compares;
this command writes its rows. The default table says what differs and why; ``--wide`` shows every
column. A transcript that records no payloads is invalid input (exit 1).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from inspector.cli import output as co
from inspector.cli.base import EXIT_INVALID, EXIT_OK, SubParsers, add_manifest_options, add_parser
from inspector.cli.inputs import collect, file_label, guard, manifest_or_none
from inspector.cli.options import (
    add_output_options,
    add_policy_options,
    add_transcript_options,
    policy_from_args,
    sample_flag,
)
from inspector.cli.output import Column
from inspector.json_text import document_text

OBSERVED_COLUMNS: tuple[Column, ...] = (
    Column("transcript"), Column("conversation", narrow=False), Column("payload"), Column("label", narrow=False),
    Column("turn", narrow=False), Column("observed_messages", "sum", narrow=False),
    Column("engine_messages", "sum", narrow=False), Column("observed_tokens", "sum"), Column("engine_tokens", "sum"),
    Column("differs", narrow=False), Column("why"), Column("identical", narrow=False),
    Column("cm_action", narrow=False),
    Column("trimmed", "sum", narrow=False), Column("repairs", "sum", narrow=False),
    Column("repair_kinds", narrow=False), Column("check", narrow=False),
)
"""The default table says what differs and why (the point of ``observed``); ``--wide`` adds the rest."""


def observed_why(row: dict[str, Any]) -> str:
    """What differs in one payload ``row``, and why, in words: ``system: different system text
    (observed 67 chars, ours 178)``; the part (``system``, ``tools``, ``rows``) leads each note;
    ``nothing`` when the two payloads are identical."""
    return "; ".join(f"{k}: {row[k]}" for k in ("system", "tools", "rows") if row.get(k)) or "nothing"


def add_observed(sub: SubParsers) -> None:
    """Add ``observed`` and its options to ``sub``."""
    p = add_parser(
        sub, "observed", "compare payloads a runtime recorded (mas-lab, Letta) with what the engine would send",
        "Some transcripts record the exact messages a runtime sent (mas-lab context_assembled events, "
        "Letta's in-context window). For each recorded payload, rebuild the same state and let our "
        "engine assemble the call: counts, tokens, whether the two are identical, what differs "
        "(system text, tools, which rows), and what our engine would change. Without a manifest the "
        "transcript's own agent is used.",
        ["context-inspector observed sample:demo_calls.openai-log",
         "context-inspector observed sample:small-window sample:demo_calls.openai-log --system manifest --format json",
         "context-inspector observed sample:demo_calls.openai-log --wide"])
    p.add_argument("manifest", metavar="MANIFEST", nargs="?", default=None,
                   help="agent manifest (omit it to compare with the transcript's own agent)")
    p.add_argument("transcript", metavar="TRANSCRIPT", help="a transcript that records payloads")
    add_transcript_options(p)
    add_policy_options(p)
    add_output_options(p, default="table")
    add_manifest_options(p)
    p.set_defaults(handler=guard(cmd_observed))


def _observed_rows(args: argparse.Namespace) -> Any:
    """Every recorded payload of every selected conversation beside the engine's, as one table led
    by the file and conversation; the policy is stated on stderr."""
    import pandas as pd

    from inspector.observed import compare_observed

    policy = policy_from_args(args)
    loaded = manifest_or_none(args)
    transcripts = collect(args, [args.transcript])
    co.state([policy.describe()])
    frames = []
    for t in transcripts:
        df = compare_observed(loaded, t, policy=policy, sample=sample_flag(args))
        df.insert(0, "conversation", t.conversation)
        df.insert(0, "transcript", file_label(t))
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def cmd_observed(args: argparse.Namespace) -> int:
    """Write the recorded payloads beside the engine's in ``--format``; returns 0, or 1 (after an
    ``error:`` line) when the transcript records none."""
    df = _observed_rows(args)
    if df.empty:
        co.error(f"{args.transcript} records no observed payloads (mas-lab and Letta files do)")
        return EXIT_INVALID
    if args.fmt == "json":
        co.write(document_text({"payloads": json.loads(df.to_json(orient="records"))}), args.output)
    elif args.fmt == "csv":
        co.write(df.to_csv(index=False), args.output)
    else:
        rows = [{**r, "why": observed_why(r)} for r in df.to_dict(orient="records")]
        co.write(co.render_table(rows, OBSERVED_COLUMNS, wide=args.wide, color=co.stdout_colour(args.output)),
                 args.output)
    return EXIT_OK
