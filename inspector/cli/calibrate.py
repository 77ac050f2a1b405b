"""``context-inspector calibrate TRANSCRIPT``: our token counts beside the provider's reported usage,
per call, and per model the fitted line and the correction factor.

:func:`inspector.calibration.calibrate` measures; :func:`inspector.calibration.advice` says which
correction to apply (the slope with ``--unrecorded-prefix auto`` when the log leaves out a large
fixed part, else the factor). The table leads with that advice. A transcript that records no
provider usage is invalid input (exit 1).
"""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import Any

from inspector.cli import output as co
from inspector.cli.base import EXIT_INVALID, EXIT_OK, SubParsers, add_parser
from inspector.cli.inputs import collect, guard
from inspector.cli.options import add_cache_option, add_output_options, add_transcript_options
from inspector.cli.output import Column
from inspector.json_text import document_text

CALIBRATE_COLUMNS: tuple[Column, ...] = (
    Column("call"), Column("index", narrow=False), Column("turn"), Column("model"), Column("provider_tokens"),
    Column("cached_tokens", narrow=False), Column("tiktoken"), Column("tiktoken_error_pct"), Column("estimate"),
    Column("estimate_error_pct"), Column("tiktoken_error", narrow=False), Column("estimate_error", narrow=False),
    Column("messages", narrow=False), Column("payload", narrow=False),
)
"""Per call, in 100 columns: the provider's count beside ours and the error in %; ``--wide`` adds the rest."""
FACTOR_TABLE_COLUMNS: tuple[Column, ...] = (
    Column("model"), Column("calls"), Column("provider_tokens"), Column("slope_tiktoken"),
    Column("offset_tiktoken"), Column("factor_tiktoken"), Column("mean_abs_error_pct_tiktoken"),
    Column("factor_estimate", narrow=False), Column("mean_abs_error_pct_estimate", narrow=False),
    Column("tiktoken", narrow=False), Column("estimate", narrow=False), Column("slope_estimate", narrow=False),
    Column("offset_estimate", narrow=False), Column("median_provider_tokens", narrow=False),
    Column("factor_offered", narrow=False),
)
"""Per model: the fitted line (slope, offset) first, then the factor (the calibration's advice says
which to apply: :func:`inspector.calibration.advice`)."""
CACHE_TABLE_COLUMNS: tuple[Column, ...] = (
    Column("call"), Column("index"), Column("predicted_cached"), Column("recorded_cached"),
    Column("predicted_written"), Column("recorded_written"),
)
"""Per call whose usage records cache tokens: our predicted cache reads and writes beside the recorded ones."""


def add_calibrate(sub: SubParsers) -> None:
    """Add ``calibrate`` and its options to ``sub``."""
    p = add_parser(
        sub, "calibrate", "our token counts beside the provider's reported usage, per call, and a correction factor",
        "For every call whose provider usage the transcript records (Claude Code logs, OpenAI "
        "request/response logs, ...): the provider's input tokens, ours (tiktoken and estimate) for the "
        "same payload, the error, and per model the fitted line provider ≈ offset + slope × ours and the "
        "correction factor. When the offset is more than half of the provider's count at the median call "
        "(the log leaves out the system prompt and tools), apply the slope with --token-calibration "
        "MODEL=SLOPE and the offset with --unrecorded-prefix auto; otherwise the factor "
        "(--token-calibration MODEL=FACTOR or spec.models[].token_calibration in the manifest).",
        ["context-inspector calibrate sample:demo_calls.openai-log",
         "context-inspector calibrate sample:demo_session.claude-code --transcript-format claude-code --format json"])
    p.add_argument("transcript", metavar="TRANSCRIPT", help="a transcript that records provider usage")
    add_transcript_options(p)
    add_cache_option(p)
    add_output_options(p, default="table")
    p.set_defaults(handler=guard(cmd_calibrate))


def _calibration_json(cal: Any, cache: tuple[list[dict[str, Any]], dict[str, Any]]) -> str:
    """The calls, the factors, the advice, the notes and the prompt cache (``{rule, rule_source,
    cached, written, calls}``, or None when the log records no cache tokens) as one JSON document."""
    from inspector.calibration import advice

    rows, summary = cache
    return document_text({"calls": json.loads(cal.calls.to_json(orient="records")),
                          "factors": json.loads(cal.factors.to_json(orient="records")),
                          "advice": advice(cal), "notes": cal.notes,
                          "prompt_cache": {**summary, "calls": rows} if rows else None})


def _error_words(what: str, err: dict[str, Any]) -> str:
    """One error in words: ``cache reads: mean absolute error 55 tokens (0.46 % of the mean recorded)``."""
    if not err.get("calls"):
        return f"cache {what}: not recorded"
    rel = err["mean_rel_error_pct"]
    return (f"cache {what}: mean absolute error {err['mean_abs_error']:,} tokens over {err['calls']} call(s)"
            + (f" ({rel} % of the mean recorded)" if rel is not None else ""))


def _cache_text(cache: tuple[list[dict[str, Any]], dict[str, Any]], args: argparse.Namespace, colour: bool) -> str:
    """The prompt cache's section: our predicted reads and writes beside the recorded ones, and the error."""
    rows, summary = cache
    if not rows:
        return "\nprompt cache: the log records no cache reads or writes per call: nothing to compare\n"
    title = f"prompt cache, rule {summary['rule']} ({summary['rule_source']}): predicted beside recorded tokens"
    text = "\n" + co.render_table(rows, CACHE_TABLE_COLUMNS, wide=args.wide, color=colour, total=False, title=title)
    width = co.WIDE_WIDTH if args.wide else co.TABLE_WIDTH
    for what, key in (("reads", "cached"), ("writes", "written")):
        text += "\n".join(textwrap.wrap(_error_words(what, summary[key]), width)) + "\n"
    return text


def _with_cache_columns(calls: Any, rows: list[dict[str, Any]]) -> Any:
    """The per-call calibration rows with our predicted and the recorded cache tokens beside them (CSV)."""
    if not rows:
        return calls
    import pandas as pd

    extra = pd.DataFrame(rows).drop(columns=["call"])
    return calls.merge(extra, on="index", how="left")


def _calibration_tables(cal: Any, args: argparse.Namespace,
                        cache: tuple[list[dict[str, Any]], dict[str, Any]]) -> str:
    """The advice, the per-call table, the per-model table and the notes, as terminal text."""
    from inspector.calibration import advice

    colour = co.stdout_colour(args.output)
    width = co.WIDE_WIDTH if args.wide else co.TABLE_WIDTH
    text = "\n".join("\n".join(textwrap.wrap(a, width, subsequent_indent="  ")) for a in advice(cal)) + "\n\n"
    text += co.render_table(cal.calls.to_dict(orient="records"), CALIBRATE_COLUMNS, wide=args.wide, color=colour,
                            total=False)
    text += "\n" + co.render_table(cal.factors.to_dict(orient="records"), FACTOR_TABLE_COLUMNS, wide=args.wide,
                                   color=colour, total=False,
                                   title="fitted line (provider ≈ offset + slope × ours) and correction factor:")
    text += "".join("\n" + "\n".join(textwrap.wrap(f"note: {n}", width, subsequent_indent="  "))
                    for n in cal.notes)
    return text + _cache_text(cache, args, colour)


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Calibrate against the first selected conversation and write the result in ``--format``
    (CSV: the per-call rows); returns 0, or 1 (after an ``error:`` line) when it records no usage."""
    from inspector.calibration import calibrate
    from inspector.prompt_cache import cache_calibration

    transcripts = collect(args, [args.transcript])
    cal = calibrate(transcripts[0])
    if cal.calls.empty:
        co.error(f"{args.transcript} records no provider usage per call: nothing to calibrate against")
        return EXIT_INVALID
    cache = cache_calibration(transcripts[0], args.cache_rule)
    if args.fmt == "json":
        co.write(_calibration_json(cal, cache), args.output)
    elif args.fmt == "csv":
        co.write(_with_cache_columns(cal.calls, cache[0]).to_csv(index=False), args.output)
    else:
        co.write(_calibration_tables(cal, args, cache), args.output)
    return EXIT_OK
