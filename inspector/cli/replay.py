"""``context-inspector replay [MANIFEST] TRANSCRIPT``: for every LLM call the agent made, what the
engine would send (token bands, the context manager's action, trims, pairing repairs, the provider
check).

JSON holds everything (:func:`inspector.replay_document.replay_bytes`; with ``--payloads`` the exact
messages); CSV one row per call; the terminal table a summary with a totals row. A replay's pending
next call (the transcript ends before its reply) is starred in the table and left out of the
totals. A payload a provider would refuse is said on stderr whatever the format.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from typing import Any

from inspector.cli import output as co
from inspector.cli.base import EXIT_OK, SubParsers, add_parser
from inspector.cli.inputs import collect, file_label, guard, manifest_or_none
from inspector.cli.options import add_output_options, add_replay_options, llm_from_args, replay_keywords
from inspector.cli.output import Column
from inspector.vocabulary import standin_estimate_words

FRAME_COLUMNS: tuple[Column, ...] = (
    Column("call"), Column("turn"), Column("step", narrow=False), Column("payload_tokens", "sum"),
    Column("system", "max", narrow=False), Column("summary", "max", narrow=False), Column("history", "max"),
    Column("user", "max", narrow=False), Column("working_memory", "max", narrow=False),
    Column("tool_schemas", "max", narrow=False), Column("input_budget", "min", narrow=False),
    Column("headroom", "min"), Column("cm_action"), Column("trimmed", "sum"), Column("repairs", "sum"),
    Column("forgotten", "sum"), Column("check", narrow=False), Column("cached_tokens", "sum"),
    Column("cost_usd", "sum", narrow=False), Column("cost_with_caching_usd", "sum", narrow=False),
)
"""Replay table columns; the totals row sums tokens sent, trims, repairs, forgotten references,
cached tokens and costs (without and with prompt caching), takes the largest band sizes and the
least headroom."""


def add_replay(sub: SubParsers) -> None:
    """Add ``replay`` and its options to ``sub``."""
    p = add_parser(
        sub, "replay", "replay a transcript through the engine, one frame per LLM call",
        "Replay a transcript under a manifest: for every LLM call the agent made, what our engine "
        "would send (token bands, the context manager's action, trims, pairing repairs, the provider "
        "check). JSON holds everything (with --payloads the exact messages); the table is a summary "
        "with a totals row.",
        ["context-inspector replay sample:support-demo sample:demo_support --format table",
         "context-inspector replay sample:demo_support --summarizer drop -o replay.json",
         "context-inspector replay sample:stack sample:demo_support --set spec.context_manager.params.max_messages=12 "
         "--payloads"])
    p.add_argument("manifest", metavar="MANIFEST", nargs="?", default=None,
                   help="the agent manifest (YAML); omit it to replay the transcript as its own agent")
    p.add_argument("transcript", metavar="TRANSCRIPT", help="the transcript file")
    add_replay_options(p)
    p.add_argument("--payloads", action="store_true", help="JSON: include each call's exact messages")
    add_output_options(p, default="json")
    p.set_defaults(handler=guard(cmd_replay))


def replays_json(replays: Sequence[tuple[Any, Any]], *, payloads: bool, single: bool,
                 cache_rule: str | None = None, keep: list[Any] | None = None) -> bytes:
    """The JSON of ``replays`` (``(transcript, replay)`` pairs) as UTF-8 bytes, each with its
    forgetting, its prompt cache under ``cache_rule`` (``--cache-rule``; None: the manifest's choice)
    and, with ``payloads``, its exact messages: one replay document when ``single``, else
    ``{"replays": [...]}`` (what :func:`inspector.replay_document.replay_bytes` writes: kept as bytes
    up to the file). ``keep`` (a list) receives each replay document written (``replay_bytes``'s
    ``keep``: the command ends the process with them unfreed)."""
    from inspector.replay_document import replay_bytes

    texts = [replay_bytes(rp, payloads=payloads, cache_rule=cache_rule, keep=keep) for _, rp in replays]
    return texts[0] if single else b'{"replays": [\n' + b",\n".join(texts) + b"\n]}"


def _frame_rows(rp: Any, t: Any, cache_rule: str | None = None) -> list[dict[str, Any]]:
    """The frames table's rows as plain dicts (pandas is for CSV only: docs/performance.md) led by the file
    and conversation and ending with the forgotten-reference count and the prompt-cache columns
    (:func:`inspector.prompt_cache.cache_frame_rows` under ``cache_rule``)."""
    from inspector.forgetting import forgotten_references
    from inspector.prompt_cache import cache_frame_rows
    from inspector.report.tables import frame_rows

    lead = {"transcript": file_label(t), "conversation": t.conversation}
    k = rp.pending_call
    rows = zip(frame_rows(rp), forgotten_references(rp), cache_frame_rows(rp, cache_rule), strict=True)
    return [{**lead, **row, "forgotten": len(lost), "pending": i == k, **cache}
            for i, (row, lost, cache) in enumerate(rows)]


def _pending_table_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table's rows with the pending next call starred in its ``call`` cell (the note says why)."""
    return [{**r, "call": f"{r['call']}*"} if r["pending"] else r for r in rows]


def pending_note(rp: Any) -> str | None:
    """The line under replay ``rp``'s table when its last call is the pending next call; None when
    there is none."""
    from inspector.replay import PENDING_WORDS

    k = rp.pending_call
    if k is None:
        return None
    return (f"* call {k} ({PENDING_WORDS}): the transcript ends before its reply, so the agent never made it; "
            f"it is shown, and left out of the totals row")


def _replay_title(rp: Any, t: Any) -> str:
    """The table's title: file, conversation, calls counted, counter and summarizer."""
    calls = len(rp.counted_frames())
    pending = " + 1 pending" if rp.pending_call is not None else ""
    return (f"{file_label(t)} · conversation {t.conversation} · {calls:,} calls{pending} · "
            f"counter {rp.counter} · summarizer {rp.summarizer_label}")


def _replay_table(rp: Any, t: Any, args: argparse.Namespace, colour: bool) -> str:
    """One replay's terminal table, its title and, when there is one, the pending call's note."""
    from inspector.prompt_cache import cache_totals_words, replay_cache
    from inspector.report.cache_view import caches, people_columns

    columns = people_columns(FRAME_COLUMNS, caches(replay_cache(rp, args.cache_rule)), key=lambda c: c.key)
    text = co.render_table(_pending_table_rows(_frame_rows(rp, t, args.cache_rule)), columns,
                           title=_replay_title(rp, t), wide=args.wide, color=colour)
    width = co.WIDE_WIDTH if args.wide else co.TABLE_WIDTH
    text += "\n".join(textwrap.wrap(f"total cost {cache_totals_words(rp, args.cache_rule)}", width)) + "\n"
    note = pending_note(rp)
    if note:
        text += "\n".join(textwrap.wrap(note, width)) + "\n"
    return text


def _warn_failed_checks(t: Any, rp: Any) -> None:
    """A payload a provider would refuse is said on stderr whatever the output format: the terminal
    table leaves the check column out at 100 columns, and such a call must not look sent."""
    failed = [(k, f.check) for k, f in enumerate(rp.frames) if f.check != "ok"]
    if failed:
        k, check = failed[0]
        co.warning(f"{file_label(t)} conversation {t.conversation}: {len(failed):,} call(s) fail the provider "
                   f"check (first, call {k}: {check})")


def _replay_all(args: argparse.Namespace) -> list[tuple[Any, Any]]:
    """Every selected conversation replayed under the manifest (or as its own agent), with a
    progress bar over more than one."""
    from inspector.replay import replay

    loaded = manifest_or_none(args)
    transcripts = collect(args, [args.transcript])
    llm = llm_from_args(args)
    replays: list[tuple[Any, Any]] = []
    with co.Progress("replaying", len(transcripts) if len(transcripts) > 1 else None) as bar:
        for t in transcripts:
            replays.append((t, replay(loaded, t, **replay_keywords(args, llm))))
            bar.advance()
    return replays


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay, state the policy and agent in force (stderr), warn of failed provider checks, and
    write the replays in ``--format``; returns 0. Runs with the cyclic garbage collector paused
    (:func:`~inspector.replay.run.gc_paused`): reading, replaying, the analyses and the output build
    long-lived objects without cycles, and in a fresh process each full collection would re-read
    all of them (docs/performance.md "What users run"). Run as the process (:func:`inspector.cli.run`),
    it ends the process once its output is written (:func:`inspector.cli.output.end_process`)."""
    from inspector.replay.run import gc_paused

    with gc_paused():
        return _replay_command(args)


def _replay_command(args: argparse.Namespace) -> int:
    """:func:`cmd_replay`'s work."""
    from inspector.prompt_cache import cache_line

    replays = _replay_all(args)
    for _, rp in replays[:1]:
        co.state([*rp.stated(), *standin_estimate_words(rp.summarizer_label), cache_line(rp, args.cache_rule)])
    for t, rp in replays:
        _warn_failed_checks(t, rp)
    written: list[Any] = []  # the documents, freed with the process when it ends below
    if args.fmt == "json":
        co.write(replays_json(replays, payloads=args.payloads, single=args.conversation.single,
                              cache_rule=args.cache_rule, keep=written), args.output)
    elif args.fmt == "csv":
        import pandas as pd

        rows = [r for t, rp in replays for r in _frame_rows(rp, t, args.cache_rule)]
        co.write(pd.DataFrame(rows).to_csv(index=False), args.output)
    else:
        colour = co.stdout_colour(args.output)
        co.write("\n".join(_replay_table(rp, t, args, colour) for t, rp in replays), args.output)
    co.end_process(args)  # run as the process: end it here, before the replays are freed
    return EXIT_OK
