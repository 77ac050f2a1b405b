"""``context-inspector compare [MANIFEST] TRANSCRIPT... --strategy NAME=SPEC ...``: the same
conversations replayed under several context strategies, side by side.

Each strategy is a ``context_manager`` value swapped into the base manifest, or a whole manifest
file (:func:`inspector.compare.strategy_manifest`). One row per file, conversation and strategy
(:func:`inspector.report.tables.totals_row`); over more than one conversation, a fleet summary per
strategy follows (:mod:`inspector.cli.runs`). ``--dask`` runs each transcript's strategies as one
task on a Dask cluster (:func:`inspector.fleet.replay_on`).
"""

from __future__ import annotations

import argparse
from typing import Any

from inspector.cli import output as co
from inspector.cli.base import EXIT_OK, SubParsers, add_parser
from inspector.cli.inputs import collect, file_label, guard, manifest_or_none, split_paths
from inspector.cli.options import (
    add_dask_option,
    add_fleet_option,
    add_output_options,
    add_replay_options,
    llm_from_args,
    replay_keywords,
)
from inspector.cli.output import Column
from inspector.cli.runs import Runs, write_runs
from inspector.errors import UsageError
from inspector.vocabulary import standin_estimate_words

RUN_COLUMNS: tuple[Column, ...] = (
    Column("transcript"), Column("conversation"), Column("strategy"), Column("frames", "sum"),
    Column("tokens_sent", "sum"), Column("peak_payload", "max"), Column("over_budget", "sum"),
    Column("summaries", "sum"), Column("summarizer_in_turn", "sum", narrow=False),
    Column("summarizer_commit", "sum", narrow=False), Column("summarizer_failures", "sum", narrow=False),
    Column("trimmed", "sum"), Column("repairs", "sum"), Column("folded", "sum", narrow=False),
    Column("cost_usd", "sum"), Column("cost_with_caching_usd", "sum"), Column("cache_hit_share", narrow=False),
    Column("cache_breaks", "sum", narrow=False), Column("cache_rule", narrow=False),
)
"""One row per file, conversation and strategy; the totals row sums every count and cost (without
and with prompt caching) and takes the largest peak."""


def _strategy(text: str) -> tuple[str, str]:
    """``--strategy NAME=SPEC`` as ``(name, spec)``, both non-empty."""
    name, sep, spec = text.partition("=")
    if not sep or not name.strip() or not spec.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} must look like NAME=SPEC (a context_manager value or a manifest file)")
    return name.strip(), spec


def add_compare(sub: SubParsers) -> None:
    """Add ``compare`` and its options to ``sub``."""
    p = add_parser(
        sub, "compare", "replay transcripts under several strategies, side by side",
        "Replay the same conversations under several context strategies (each a context_manager "
        "value swapped into the manifest, or a whole manifest file) and tabulate their totals: one "
        "row per file, conversation and strategy. Over more than one conversation a fleet summary "
        "follows: per strategy, conversations over budget, peak payload, summaries, trims, repairs "
        "and cost.",
        ["context-inspector compare sample:small-window sample:demo_support --strategy window=sliding-window "
         "--strategy 'sum={type: summarising, params: {keep_turns: 4}}'",
         "context-inspector compare sample:small-window sample:demo_support sample:planted_facts --strategy "
         "stack=stack --strategy window=sliding-window --summarizer drop --format csv -o runs.csv "
         "--fleet-summary fleet.csv",
         "context-inspector compare sample:demo_support --strategy a=sample:stack --strategy b=sample:sliding-window "
         "--format csv -o compare.csv"])
    p.add_argument("paths", nargs="+", metavar="[MANIFEST] TRANSCRIPT",
                   help="an optional base agent manifest (.yaml/.yml), then one or more transcript files")
    add_replay_options(p)
    p.add_argument("--strategy", action="append", type=_strategy, required=True, metavar="NAME=SPEC",
                   help="a named strategy: a context_manager value (sliding-window, '{type: stack, params: "
                        "{max_messages: 40}}') or a manifest file; repeatable")
    add_dask_option(p)
    add_output_options(p, default="table")
    add_fleet_option(p)
    p.set_defaults(handler=guard(cmd_compare))


def _strategy_manifests(args: argparse.Namespace) -> dict[str, Any]:
    """Each named strategy's manifest: the base manifest (or the transcript's own agent) with the
    strategy swapped in. Raises :class:`inspector.errors.UsageError` when two strategies share a name."""
    from inspector.compare import infra_docs, strategy_manifest

    names = [n for n, _ in args.strategy]
    if len(set(names)) != len(names):
        raise UsageError("strategy names must be unique")
    split_paths(args)
    base = manifest_or_none(args)
    return {name: strategy_manifest(base.raw, spec, file=base.file, infra_documents=infra_docs(base))
            for name, spec in args.strategy}


def _compare_here(args: argparse.Namespace, manifests: dict[str, Any], transcripts: list[Any],
                  llm: Any) -> list[dict[str, Any]]:
    """Per transcript, its replay under each strategy, in this process."""
    from inspector.replay import replay

    per_transcript: list[dict[str, Any]] = []
    with co.Progress("comparing", len(transcripts) * len(manifests)) as bar:
        for t in transcripts:
            done: dict[str, Any] = {}
            for name, manifest in manifests.items():
                done[name] = replay(manifest, t, **replay_keywords(args, llm))
                bar.advance()
            per_transcript.append(done)
    return per_transcript


def _compare_on_dask(args: argparse.Namespace, manifests: dict[str, Any], transcripts: list[Any],
                     llm: Any) -> list[dict[str, Any]]:
    """Per transcript, its replay under each strategy, on the Dask cluster of ``--dask`` (one task
    per transcript); the fleet's words on stderr. Raises :class:`inspector.errors.UsageError` when
    the target is malformed or unreachable."""
    from inspector.fleet import FleetError, connect, parse_dask, replay_on

    try:
        target = parse_dask(args.dask)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    per_transcript: list[dict[str, Any]] = []
    try:
        with co.Progress("comparing on dask", len(transcripts) * len(manifests)) as bar, connect(target) as client:
            for t in transcripts:
                per_transcript.append(replay_on(client, manifests, t, progress=lambda done: bar.advance(),
                                                **replay_keywords(args, llm)))
    except FleetError as exc:
        raise UsageError(str(exc)) from None
    co.state([f"dask: {next(iter(per_transcript[0].values())).fleet.words()}"] if per_transcript else [])
    return per_transcript


def _run_rows(transcripts: list[Any], per_transcript: list[dict[str, Any]],
              cache_rule: str | None = None) -> list[dict[str, Any]]:
    """One totals row per transcript and strategy, with its prompt-cache columns under ``cache_rule``
    (:func:`inspector.prompt_cache.cache_metrics`); the first replay's policy, agent, unrecorded
    prefix and cache rule are stated on stderr."""
    from inspector.prompt_cache import cache_line, cache_metrics
    from inspector.report.tables import totals_row

    rows: list[dict[str, Any]] = []
    for t, replays in zip(transcripts, per_transcript, strict=True):
        for name, rp in replays.items():
            if not rows:
                co.state([*rp.stated()[:2], *([rp.prefix_line()] if rp.prefix_line() else []),
                          cache_line(rp, cache_rule)])
            row = {"transcript": file_label(t), "conversation": t.conversation}
            row.update(totals_row(rp, name))
            row["summaries"] = row["summarizer_in_turn"] + row["summarizer_commit"]  # model calls, both kinds
            row["pending_call"] = rp.pending_call is not None  # left out of every number of the row
            row.update(cache_metrics(rp, cache_rule))
            rows.append(row)
    return rows


def cmd_compare(args: argparse.Namespace) -> int:
    """Replay every selected conversation under every strategy and write the runs and, over many
    conversations (or with ``--fleet-summary``), the fleet summary per strategy; returns 0."""
    import pandas as pd

    from inspector.report.fleet import fleet_table

    manifests = _strategy_manifests(args)
    transcripts = collect(args, args.transcripts)
    llm = llm_from_args(args)
    run = _compare_on_dask if args.dask is not None else _compare_here
    per_transcript = run(args, manifests, transcripts, llm)
    runs = pd.DataFrame(_run_rows(transcripts, per_transcript, args.cache_rule))
    co.state(standin_estimate_words([rp.summarizer_label for replays in per_transcript for rp in replays.values()]))
    fleet = fleet_table(runs, ["strategy"]) if len(transcripts) > 1 or args.fleet_summary else None
    write_runs(args, Runs(runs, RUN_COLUMNS, fleet, "strategies", transcripts,
                          fleet_title="fleet summary: per strategy, over every conversation"))
    return EXIT_OK
