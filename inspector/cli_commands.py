"""The ``import``, ``replay``, ``compare`` and ``sweep`` subcommands (``validate`` lives in ``cli.py``).

Each prints what the package computes (replay JSON, report tables): no budget logic here.
Exit status: 0 ok, 1 invalid input (manifest content, transcript), 2 usage error / unreadable file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspector.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE, SubParsers, add_manifest_options, load_manifest_from_args


def _write(text: str, out: str | None) -> None:
    if out:
        Path(out).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _write_table(df: Any, fmt: str, out: str | None, key: str) -> None:
    """A report table as ``{key: [rows]}`` JSON, CSV, or an aligned text table."""
    if fmt == "json":
        _write(json.dumps({key: df.to_dict(orient="records")}, ensure_ascii=False, indent=1), out)
    elif fmt == "csv":
        _write(df.to_csv(index=False), out)
    else:
        _write(df.to_string(index=False), out)


def _transcript(args: argparse.Namespace) -> Any:
    from inspector.transcripts import load_transcript

    return load_transcript(args.transcript, format=args.transcript_format, conversation=args.conversation)


def _add_transcript_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--transcript-format", dest="transcript_format", default=None, metavar="FORMAT",
                   help="transcript format (default: auto-detect); see `context-inspector import --help`")
    p.add_argument("--conversation", type=int, default=0, metavar="N", help="conversation of a multi-conversation file")


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Bad transcripts are invalid input (exit 1) with the file and line/index, never a traceback."""

    def run(args: argparse.Namespace) -> int:
        import logging

        # Over-budget notices are part of every frame's record; don't repeat them on stderr.
        logging.getLogger("inspector").setLevel(logging.ERROR)
        from inspector.engine.archive import ArchiveError
        from inspector.engine.limits import ModelResolutionError
        from inspector.engine.registry import PluginLookupError
        from inspector.transcripts import TranscriptError

        from inspector.redact import mask_text

        try:
            return fn(args)
        except (TranscriptError, ModelResolutionError, PluginLookupError, ArchiveError) as exc:
            print(f"error: {mask_text(str(exc))}", file=sys.stderr)
            return EXIT_INVALID
        except OSError as exc:
            print(f"error: {mask_text(str(exc))}", file=sys.stderr)
            return EXIT_USAGE

    return run


# --- import ---------------------------------------------------------------------------------------
def add_import(sub: SubParsers) -> None:
    from inspector.transcripts import list_formats

    p = sub.add_parser("import", help="print the normalised OpenAI-shape transcript (JSON)",
                       description=f"Import a transcript. Formats: {', '.join(list_formats())}.")
    p.add_argument("transcript", metavar="TRANSCRIPT")
    p.add_argument("--format", dest="transcript_format", default=None, help="transcript format (default: auto)")
    p.add_argument("--conversation", type=int, default=0, metavar="N")
    p.add_argument("-o", "--output", default=None, metavar="FILE")
    p.set_defaults(handler=_guard(cmd_import))


def cmd_import(args: argparse.Namespace) -> int:
    from inspector.transcripts import transcript_to_json

    from inspector.redact import mask_secrets

    _write(json.dumps(mask_secrets(transcript_to_json(_transcript(args))), ensure_ascii=False, indent=1), args.output)
    return EXIT_OK


# --- replay ---------------------------------------------------------------------------------------
def _add_replay_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("manifest", metavar="MANIFEST")
    p.add_argument("transcript", metavar="TRANSCRIPT")
    _add_transcript_options(p)
    p.add_argument("--counter", choices=["tiktoken", "estimate"], default="tiktoken")
    p.add_argument("--summarizer", choices=["manifest", "stand-in", "drop"], default="manifest",
                   help="manifest: as configured (llm needs --model/--api-base, else it drops); stand-in: "
                        "the labelled offline stand-in; drop")
    p.add_argument("--model", default=None, help="live model for the llm summarizer (LiteLLM id)")
    p.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint for --model")
    p.add_argument("--summary-cache", default=None, metavar="DIR", help="cache real summaries on disk here")
    add_manifest_options(p)


def _replay(args: argparse.Namespace, manifest: Any = None) -> Any:
    import os

    from inspector.engine.llm import LLMEngine
    from inspector.replay import replay

    loaded = manifest if manifest is not None else load_manifest_from_args(args, args.manifest)
    llm = None
    if args.model:
        llm = LLMEngine(model=args.model, api_base=args.api_base, api_key=os.environ.get("CONTEXT_INSPECTOR_API_KEY"))
    return replay(loaded, _transcript(args), counter=args.counter, summarizer=args.summarizer, llm=llm,
                  summary_cache=args.summary_cache, allow_imports=args.allow_imports)


def add_replay(sub: SubParsers) -> None:
    p = sub.add_parser("replay", help="replay a transcript through the engine, one frame per LLM call")
    _add_replay_options(p)
    p.add_argument("--payloads", action="store_true", help="include each call's exact messages")
    p.add_argument("--format", dest="fmt", choices=["json", "table", "csv"], default="json")
    p.add_argument("-o", "--output", default=None, metavar="FILE")
    p.set_defaults(handler=_guard(cmd_replay))


def cmd_replay(args: argparse.Namespace) -> int:
    from inspector.forgetting import forgotten_references, replay_dumps
    from inspector.report.tables import frames_table

    rp = _replay(args)
    if args.fmt == "json":
        _write(replay_dumps(rp, payloads=args.payloads), args.output)
        return EXIT_OK
    table = frames_table(rp).assign(forgotten=[len(x) for x in forgotten_references(rp)])
    if args.fmt == "csv":
        _write(table.to_csv(index=False), args.output)
    else:
        _write(table[["call", "turn", "step", "payload_tokens", "system", "summary", "history", "user",
                      "working_memory", "tool_schemas", "headroom", "cm_action", "trimmed", "repairs", "forgotten",
                      "check"]].to_string(index=False), args.output)
    return EXIT_OK


# --- compare --------------------------------------------------------------------------------------
def _strategy(text: str) -> tuple[str, str]:
    name, sep, spec = text.partition("=")
    if not sep or not name.strip() or not spec.strip():
        raise argparse.ArgumentTypeError(f"{text!r} must look like NAME=SPEC (a context_manager value or a manifest file)")
    return name.strip(), spec


def add_compare(sub: SubParsers) -> None:
    p = sub.add_parser("compare", help="replay one transcript under several strategies, side by side")
    _add_replay_options(p)
    p.add_argument("--strategy", action="append", type=_strategy, required=True, metavar="NAME=SPEC",
                   help="e.g. window=sliding-window or 'sum={type: summarising, params: {keep_turns: 4}}'; repeatable")
    p.add_argument("--format", dest="fmt", choices=["json", "table", "csv"], default="table")
    p.add_argument("-o", "--output", default=None, metavar="FILE")
    p.set_defaults(handler=_guard(cmd_compare))


def cmd_compare(args: argparse.Namespace) -> int:
    from inspector.compare import infra_docs, strategy_manifest
    from inspector.report.tables import compare_table

    base = load_manifest_from_args(args, args.manifest)
    names = [n for n, _ in args.strategy]
    if len(set(names)) != len(names):
        print("error: strategy names must be unique", file=sys.stderr)
        return EXIT_USAGE
    replays = {name: _replay(args, strategy_manifest(base.raw, spec, file=base.file, infra_documents=infra_docs(base)))
               for name, spec in args.strategy}
    _write_table(compare_table(replays), args.fmt, args.output, "strategies")
    return EXIT_OK


# --- sweep ----------------------------------------------------------------------------------------
def add_sweep(sub: SubParsers) -> None:
    p = sub.add_parser("sweep", help="replay transcripts under every combination of a parameter grid")
    p.add_argument("manifest", metavar="MANIFEST")
    p.add_argument("transcripts", nargs="+", metavar="TRANSCRIPT")
    p.add_argument("--grid", action="append", required=True, metavar="NAME=V1,V2,...",
                   help="e.g. keep_turns=2,4,6 or spec.context_manager.params.hysteresis_ratio=0,0.1; repeatable")
    p.add_argument("--format", dest="fmt", choices=["table", "csv", "json"], default="table")
    p.add_argument("-o", "--output", default=None, metavar="FILE")
    p.add_argument("--counter", choices=["tiktoken", "estimate"], default="estimate")
    p.add_argument("--summarizer", choices=["stand-in", "drop", "manifest"], default="stand-in")
    p.add_argument("--processes", type=int, default=None, metavar="N", help="worker processes (default: every core)")
    add_manifest_options(p)
    p.set_defaults(handler=_guard(cmd_sweep))


def cmd_sweep(args: argparse.Namespace) -> int:
    from inspector.sweep import run_sweep_command

    return run_sweep_command(args.manifest, args.transcripts, args.grid, fmt=args.fmt, out=args.output,
                             counter=args.counter, summarizer=args.summarizer, processes=args.processes,
                             overrides=args.overrides, allow_imports=args.allow_imports)


# --- observed -------------------------------------------------------------------------------------
def add_observed(sub: SubParsers) -> None:
    p = sub.add_parser("observed", help="compare payloads a runtime recorded (mas-lab, Letta) with what the engine "
                                        "would send for the same state")
    p.add_argument("manifest", metavar="MANIFEST")
    p.add_argument("transcript", metavar="TRANSCRIPT")
    _add_transcript_options(p)
    p.add_argument("--counter", choices=["tiktoken", "estimate"], default="estimate")
    p.add_argument("--format", dest="fmt", choices=["json", "table", "csv"], default="table")
    p.add_argument("-o", "--output", default=None, metavar="FILE")
    add_manifest_options(p)
    p.set_defaults(handler=_guard(cmd_observed))


def cmd_observed(args: argparse.Namespace) -> int:
    from inspector.observed import compare_observed

    df = compare_observed(load_manifest_from_args(args, args.manifest), _transcript(args), counter=args.counter)
    if df.empty:
        print(f"error: {args.transcript} records no observed payloads (mas-lab and Letta files do)", file=sys.stderr)
        return EXIT_INVALID
    _write_table(df, args.fmt, args.output, "payloads")
    return EXIT_OK


ADDERS = [add_import, add_replay, add_compare, add_sweep, add_observed]
