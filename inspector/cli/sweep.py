"""``context-inspector sweep [MANIFEST] TRANSCRIPT... --grid NAME=V1,V2 ...``: every selected
conversation replayed under every combination of the grid's values.

:func:`inspector.sweep.sweep` does the work (a process pool over every core, or a Dask cluster with
``--dask``) and returns one row per file, conversation and combination; this command writes those
rows and the fleet summary per setting (:mod:`inspector.cli.runs`). A run that failed is a row with
its error, said on stderr too, and makes the exit status 1.
"""

from __future__ import annotations

import argparse
from typing import Any

from inspector.cli import output as co
from inspector.cli.base import EXIT_INVALID, EXIT_OK, SubParsers, add_manifest_options, add_parser
from inspector.cli.inputs import collect, guard, require_file, split_paths
from inspector.cli.options import (
    add_cache_option,
    add_dask_option,
    add_fleet_option,
    add_output_options,
    add_policy_options,
    add_prefix_option,
    add_transcript_options,
    policy_from_args,
)
from inspector.cli.output import Column
from inspector.cli.runs import Runs, write_runs
from inspector.errors import UsageError
from inspector.vocabulary import standin_estimate_words

SWEEP_RUN_LEAD: tuple[Column, ...] = (Column("transcript"), Column("conversation"))
"""The columns that name a run, before the grid's own columns."""
SWEEP_METRICS: tuple[Column, ...] = (
    Column("frames", "sum", narrow=False), Column("tokens_sent", "sum"), Column("peak_payload", "max"),
    Column("over_budget", "sum"), Column("summarizer_calls", "sum"), Column("trimmed", "sum"),
    Column("repairs", "sum"), Column("cost_usd", "sum"), Column("cost_with_caching_usd", "sum"),
    Column("cache_hit_share", narrow=False), Column("cache_breaks", "sum", narrow=False), Column("error", narrow=False),
)
"""The measures of a run, after the grid's columns."""


def add_sweep(sub: SubParsers) -> None:
    """Add ``sweep`` and its options to ``sub``; its help lists the grid's short names
    (:data:`inspector.grid.SHORT_NAMES`)."""
    from inspector.grid import SHORT_NAMES

    names = "\n".join(f"  {k:<18} {v}" for k, v in SHORT_NAMES.items())
    p = add_parser(
        sub, "sweep", "replay transcripts under every combination of a parameter grid",
        "Replay every selected conversation of every transcript under every combination of the "
        "--grid values (one row per file, conversation and combination; all cores by default), then "
        "summarise the fleet per setting: conversations over budget, peak payload, summaries, trims, "
        "repairs and cost. Without a manifest each transcript is replayed as its own agent.\n\n"
        "Grid keys are dotted manifest paths, the name of any strategy's parameter, or these short names "
        "(a strategy parameter applies only to the strategies that define it; each row says which settings "
        "applied):\n" + names,
        ["context-inspector sweep sample:small-window sample:demo_support --grid keep_turns=2,4,6,8",
         "context-inspector sweep sample:small-window sample:demo_support sample:planted_facts --grid keep_turns=2,4 "
         "--grid hysteresis_ratio=0,0.1",
         "context-inspector sweep sample:demo_support --grid 'context_manager={type: stack, params: {max_messages: 20}}' "
         "--grid context_manager=sliding-window --grid keep_turns=2,4 --format csv -o sweep.csv --fleet-summary fleet.csv"])
    p.add_argument("paths", nargs="+", metavar="[MANIFEST] TRANSCRIPT",
                   help="an optional agent manifest (.yaml/.yml), then one or more transcript files")
    p.add_argument("--grid", action="append", required=True, metavar="NAME=V1,V2,...",
                   help="a grid axis: a short name (below) or a dotted manifest path, and its values "
                        "(e.g. keep_turns=2,4,6, spec.models[0].context_window=8000,16000 or a whole "
                        "'context_manager={type: stack, params: {max_messages: 20}}'); repeatable, a key given "
                        "again adds values to its axis")
    add_transcript_options(p, conversation="all")
    add_policy_options(p)
    p.add_argument("--processes", type=int, default=None, metavar="N",
                   help="worker processes (default: every core available; 1 = no pool)")
    add_dask_option(p)
    p.add_argument("--dask-ship", dest="dask_ship", choices=["bytes", "path"], default="bytes",
                   help="with --dask: send transcripts to the workers as bytes, or let them read the paths from "
                        "shared storage (default: bytes)")
    add_prefix_option(p)
    add_cache_option(p)
    add_output_options(p, default="table")
    add_fleet_option(p)
    add_manifest_options(p)
    p.set_defaults(handler=guard(cmd_sweep))


def _grid(args: argparse.Namespace) -> dict[str, list[Any]]:
    """The ``--grid`` axes parsed (:func:`inspector.grid.parse_grid`). Raises
    :class:`inspector.errors.UsageError` for a malformed axis."""
    from inspector.grid import parse_grid

    try:
        return parse_grid(args.grid)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _state_settings(args: argparse.Namespace, policy: Any) -> None:
    """The policy and, when given, the unrecorded prefix, on stderr."""
    co.state([policy.describe()])
    if args.unrecorded_prefix is not None:
        co.state(["unrecorded prefix: added to every call's budget as a fixed part ("
                  + ("each transcript's fitted offset" if args.unrecorded_prefix == "auto"
                     else f"{args.unrecorded_prefix:,} tokens") + ")"])


def _sweep_here(args: argparse.Namespace, transcripts: list[Any], grid: dict[str, list[Any]], policy: Any,
                total: int) -> Any:
    """The sweep's rows, on this machine's process pool (``--processes``)."""
    from inspector.sweep import sweep

    with co.Progress("sweeping", total) as bar:
        return sweep(args.manifest, transcripts, grid, policy=policy,
                     processes=args.processes, overrides=args.overrides, allow_imports=args.allow_imports,
                     progress=bar, unrecorded_prefix=args.unrecorded_prefix, cache_rule=args.cache_rule)


def _sweep_on_dask(args: argparse.Namespace, transcripts: list[Any], grid: dict[str, list[Any]], policy: Any,
                   total: int) -> Any:
    """The sweep's rows, on the Dask cluster of ``--dask``, the transcripts shipped as ``--dask-ship``
    says; the fleet's words on stderr. Raises :class:`inspector.errors.UsageError` when the target is
    malformed or unreachable, or when ``path`` shipping meets a conversation other than a file's first."""
    from inspector.fleet import FleetError, FleetReport, connect, parse_dask
    from inspector.sweep import sweep

    try:
        target = parse_dask(args.dask)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    items: list[Any] = list(transcripts)
    if args.dask_ship == "path":  # the workers open the files themselves: one conversation per file
        if any(t.conversation != 0 for t in transcripts):
            raise UsageError("--dask-ship path lets the workers read each file's first conversation only; "
                             "use --dask-ship bytes (the default) with --conversation")
        items = list(args.transcripts)
    try:
        with co.Progress("sweeping on dask", total) as bar, connect(target) as client:
            df = sweep(args.manifest, items, grid, policy=policy, overrides=args.overrides,
                       allow_imports=args.allow_imports, progress=bar, client=client, ship=args.dask_ship,
                       unrecorded_prefix=args.unrecorded_prefix, cache_rule=args.cache_rule)
    except FleetError as exc:
        raise UsageError(str(exc)) from None
    co.state([f"dask: {FleetReport(**df.attrs['fleet']).words()}"])
    return df


def _state_cache(args: argparse.Namespace, df: Any) -> None:
    """The prompt-cache rule the runs were costed under, and why, on stderr, and what the
    ``cost_with_caching_usd`` column holds: the cost with caching; under the rule ``none`` (every
    finished run's) no prompt caching applies, so it equals the cost without caching; with rules
    mixed, the runs under ``none`` say so."""
    found = list(dict.fromkeys(str(r) for r in df["cache_rule"].dropna()))
    rules = ", ".join(found) or "none (no run finished)"
    why = (f"set by --cache-rule {args.cache_rule}" if args.cache_rule is not None else
           "the manifest's spec.models[].prompt_cache, else auto: by each run's model provider")
    if found == ["none"]:
        column = ("no prompt caching applies, so the cost_with_caching_usd column is the cost without caching "
                  "(cost_without_caching_usd)")
    elif "none" in found:
        column = ("the cost_with_caching_usd column is the cost with caching; for the runs under rule none no "
                  "prompt caching applies, so it is their cost without caching")
    else:
        column = "the cost_with_caching_usd column is the cost with caching"
    co.state([f"prompt cache: rule {rules} ({why}); {column}"])


def _report_failures(df: Any) -> int:
    """One ``error:`` line per failed run (file, conversation, the settings that applied, error);
    returns how many failed."""
    failed = df[df["error"].notna()]
    for _, row in failed.iterrows():
        co.error(f"{row['transcript']} conversation {row['conversation']} [{row['settings_applied']}]: {row['error']}")
    return len(failed)


def _setting_columns(df: Any) -> list[Column]:
    """The settings that did not apply, as a column of the people's table when a row has any (a grid
    across strategy types); machine formats keep every setting column."""
    return [Column("settings_not_applicable", narrow=False)] if (df["settings_not_applicable"].fillna("") != "").any() \
        else []


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run the sweep and write its rows and, over many conversations (or with ``--fleet-summary``),
    the fleet summary per setting; returns 0, or 1 when a run failed."""
    from inspector.report.fleet import fleet_table
    from inspector.sweep import grid_runs, param_columns

    grid = _grid(args)
    split_paths(args)
    if args.manifest is not None:
        require_file(args.manifest, "manifest")
    runs = grid_runs(args.manifest, grid, args.overrides)  # a key no strategy of the grid defines: exit 2, before the work
    transcripts = collect(args, args.transcripts)
    total = len(transcripts) * len(runs)
    policy = policy_from_args(args)
    _state_settings(args, policy)
    run = _sweep_on_dask if args.dask is not None else _sweep_here
    df = run(args, transcripts, grid, policy, total)
    _state_cache(args, df)
    co.state(standin_estimate_words(df["summarizer"].dropna()))
    params = param_columns(df)
    fleet = fleet_table(df, params) if len(transcripts) > 1 or args.fleet_summary else None
    columns = [*SWEEP_RUN_LEAD, *(Column(p) for p in params), *_setting_columns(df), *SWEEP_METRICS]
    write_runs(args, Runs(df, columns, fleet, "rows", transcripts, extra={"grid": grid},
                          fleet_title="fleet summary: per setting, over every conversation"))
    return EXIT_INVALID if _report_failures(df) else EXIT_OK
