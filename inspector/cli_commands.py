"""The ``import``, ``replay``, ``compare``, ``sweep``, ``observed``, ``calibrate``, ``app`` and
``samples`` subcommands (``validate`` lives in ``cli.py``).

Each prints what the package computes (replay JSON, report tables, fleet summaries): no budget
logic here. Output goes through :mod:`inspector.cli_output` (tables, progress, warnings, errors).
Exit status: 0 ok, 1 invalid input (manifest content, transcript content), 2 usage error or an
input file that cannot be used (missing, unreadable, too large, not UTF-8 text such as a zip; a
manifest and a transcript alike). File arguments take ``sample:NAME`` for a bundled sample
(``samples`` lists them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from inspector import cli_output as co
from inspector.cli_base import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    SubParsers,
    add_manifest_options,
    add_parser,
    load_manifest_from_args,
)
from inspector.cli_output import Column
from inspector.errors import UsageError

OUTPUT_FORMATS = ("table", "json", "csv")


# --- shared options ---------------------------------------------------------------------------------

def _transcript_formats() -> list[str]:
    from inspector.transcripts import list_formats

    return list_formats()


def _output_format(choices: Sequence[str]) -> Callable[[str], str]:
    """``--format`` is always the *output* format; a transcript format given there gets a hint."""

    def parse(text: str) -> str:
        value = text.strip().lower()
        if value in choices:
            return value
        if value in _transcript_formats() or value == "auto":
            raise argparse.ArgumentTypeError(
                f"{text!r} is a transcript format: use --transcript-format {text} "
                f"(--format is the output format: {', '.join(choices)})")
        raise argparse.ArgumentTypeError(f"{text!r} is not an output format (choose from {', '.join(choices)})")

    parse.__name__ = "output format"
    return parse


def _transcript_format(text: str) -> str:
    value = text.strip().lower()
    formats = _transcript_formats()
    if value in formats:
        return value
    if value in OUTPUT_FORMATS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is an output format: use --format {text} (--transcript-format is the transcript's "
            f"format: {', '.join(formats)})")
    raise argparse.ArgumentTypeError(f"unknown transcript format {text!r} (known: {', '.join(formats)})")


def _selection(text: str) -> Any:
    from inspector.transcripts.selection import parse_selection

    try:
        return parse_selection(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_transcript_options(p: argparse.ArgumentParser, *, conversation: str = "0") -> None:
    """``--transcript-format`` and ``--conversation``, the same on every command that reads transcripts."""
    p.add_argument("--transcript-format", dest="transcript_format", default=None, type=_transcript_format,
                   metavar="NAME", help=f"the transcript's format, one of: {', '.join(_transcript_formats())} "
                                        "(default: detected from the content)")
    p.add_argument("--conversation", type=_selection, default=conversation, metavar="N|A-B|all",
                   help="which conversations of a multi-conversation file (tau-bench holds 200): one index, "
                        "an inclusive range, or all")


def add_output_options(p: argparse.ArgumentParser, *, default: str, choices: Sequence[str] = OUTPUT_FORMATS,
                       table: bool = True) -> None:
    p.add_argument("--format", dest="fmt", type=_output_format(choices), default=default, metavar="FORMAT",
                   help=f"output format: {', '.join(choices)}")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="write the output to FILE instead of stdout")
    if table:
        p.add_argument("--wide", action="store_true",
                       help=f"tables: every column, no width limit (default: fit {co.TABLE_WIDTH} columns)")


def _require_file(path: str, what: str) -> None:
    """A missing or unreadable input file is a usage error (exit 2), whichever input it is."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such {what} file")
    if not p.is_file():
        raise UsageError(f"{path}: the {what} is not a file")
    if not os.access(p, os.R_OK):
        raise UsageError(f"{path}: the {what} file is not readable")


def _transcripts(args: argparse.Namespace, paths: Sequence[str]) -> Iterator[Any]:
    """Every selected conversation of every file, in order."""
    from inspector.transcripts.selection import select_transcripts

    for path in paths:
        _require_file(path, "transcript")
    for path in paths:
        yield from select_transcripts(path, args.conversation, format=args.transcript_format)


def _collect(args: argparse.Namespace, paths: Sequence[str]) -> list[Any]:
    """Import the selected conversations (a spinner on a terminal: a big file takes a while)."""
    with co.spinner(f"importing {', '.join(Path(p).name for p in paths)}"):
        return list(_transcripts(args, paths))


def _file_label(t: Any) -> str:
    return Path(t.path).name if getattr(t, "path", None) else "<transcript>"


def _sample_path(text: str) -> str:
    from inspector.bundled import SAMPLE_SCHEME, resolve_sample

    if not text.startswith(SAMPLE_SCHEME):
        return text
    try:
        return str(resolve_sample(text))
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None


def resolve_samples(args: argparse.Namespace) -> None:
    """Every ``sample:NAME`` among the command's file arguments → the packaged file (an unknown name
    is a usage error naming the samples there are)."""
    for key in ("manifest", "transcript", "file"):
        value = getattr(args, key, None)
        if isinstance(value, str):
            setattr(args, key, _sample_path(value))
    if isinstance(getattr(args, "paths", None), list):
        args.paths = [_sample_path(p) for p in args.paths]
    if isinstance(getattr(args, "strategy", None), list):
        args.strategy = [(name, _sample_path(spec.strip()) if spec.strip().startswith("sample:") else spec)
                         for name, spec in args.strategy]


TRANSCRIPT_SUFFIXES = (".json", ".jsonl", ".traj", ".af", ".eval", ".zip")
"""Suffixes that name a transcript (a manifest is ``.yaml``/``.yml``)."""


def _kind_by_suffix(path: str) -> str | None:
    from inspector.policy import MANIFEST_SUFFIXES

    low = path.lower()
    return "manifest" if low.endswith(MANIFEST_SUFFIXES) else "transcript" if low.endswith(TRANSCRIPT_SUFFIXES) \
        else None


def check_argument_order(args: argparse.Namespace) -> None:
    """A manifest where the transcript belongs (or both swapped) is said in words, naming which is which."""
    manifest, transcript = getattr(args, "manifest", ""), getattr(args, "transcript", "")
    if not isinstance(transcript, str) or _kind_by_suffix(transcript) != "manifest":
        return
    if manifest is None:
        raise UsageError(f"{transcript} is a manifest; give a TRANSCRIPT after it")
    if isinstance(manifest, str) and _kind_by_suffix(manifest) == "transcript":
        raise UsageError(f"the arguments are swapped: {manifest} is the transcript and {transcript} the manifest; "
                         f"give the MANIFEST first, then the TRANSCRIPT")


def check_writable(out: str | None) -> None:
    """``-o FILE`` (or ``--fleet-summary FILE``) that cannot be written is a usage error, said before
    any work is done. Nothing is created or changed by the check."""
    if not out:
        return
    p = Path(out)
    if p.is_dir():
        raise UsageError(f"{out}: is a folder; give a FILE to write the output to")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{out}: cannot write it (no folder {folder})")
    if (p.exists() and not os.access(p, os.W_OK)) or (not p.exists() and not os.access(folder, os.W_OK | os.X_OK)):
        raise UsageError(f"{out}: cannot write it (permission denied)")


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Unreadable files exit 2. Every deliberate error (bad transcript, model mapping, plugin,
    calibration, late usage error: an :class:`inspector.errors.InspectorError`) goes on to
    :func:`inspector.cli.main`, which prints it with its kind's exit status. Never a traceback."""

    def run(args: argparse.Namespace) -> int:
        import logging

        # Over-budget notices are part of every frame's record; don't repeat them on stderr.
        logging.getLogger("inspector").setLevel(logging.ERROR)
        resolve_samples(args)
        check_argument_order(args)
        for out in (getattr(args, "output", None), getattr(args, "fleet_summary", None)):
            check_writable(out)  # before the work: a replay of an hour must not end on "cannot write"
        try:
            return fn(args)  # an InspectorError reaches cli.main, which prints it with its exit status
        except OSError as exc:
            co.error(str(exc))
            return EXIT_USAGE

    return run


# --- import ---------------------------------------------------------------------------------------

def add_import(sub: SubParsers) -> None:
    p = add_parser(
        sub, "import", "print the normalised OpenAI-shape transcript (JSON)",
        "Import a transcript in any supported format and print it as one normalised OpenAI-shape "
        "conversation, every message with its origin in the source file and every irregularity "
        "reported (never repaired). Secrets are masked.",
        ["context-inspector import sample:demo_support.anthropic",
         "context-inspector import sample:demo_calls.openai-log --conversation all -o calls.json",
         "context-inspector import sample:demo_session.claude-code --transcript-format claude-code"])
    p.add_argument("transcript", metavar="TRANSCRIPT", help="the transcript file")
    add_transcript_options(p)
    add_output_options(p, default="json", choices=("json",), table=False)
    p.set_defaults(handler=_guard(cmd_import))


def cmd_import(args: argparse.Namespace) -> int:
    from inspector.redact import mask_secrets
    from inspector.transcripts import transcript_to_json

    items = [mask_secrets(transcript_to_json(t)) for t in _collect(args, [args.transcript])]
    doc: Any = items[0] if args.conversation.single else {"transcripts": items}
    co.write(json.dumps(doc, ensure_ascii=False, indent=1), args.output)
    return EXIT_OK


# --- replay ---------------------------------------------------------------------------------------
def _calibration(text: str) -> tuple[str, float]:
    model, sep, factor = text.rpartition("=")
    try:
        value = float(factor)
    except ValueError:
        value = float("nan")
    if not sep or not model.strip() or not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must look like MODEL=FACTOR with a positive FACTOR")
    return model.strip(), value


FRAME_COLUMNS: tuple[Column, ...] = (
    Column("call"), Column("turn"), Column("step", narrow=False), Column("payload_tokens", "sum"),
    Column("system", "max", narrow=False), Column("summary", "max", narrow=False), Column("history", "max"),
    Column("user", "max", narrow=False), Column("working_memory", "max", narrow=False),
    Column("tool_schemas", "max", narrow=False), Column("input_budget", "min", narrow=False),
    Column("headroom", "min"), Column("cm_action"), Column("trimmed", "sum"), Column("repairs", "sum"),
    Column("forgotten", "sum"), Column("check", narrow=False), Column("cost_usd", "sum", narrow=False),
)
"""Replay table columns; the totals row sums tokens sent, trims, repairs, forgotten references and
cost, takes the largest band sizes and the least headroom."""


def replays_json(replays: Sequence[tuple[Any, Any]], *, payloads: bool, single: bool) -> str:
    """One replay document (a single conversation) or ``{"replays": [...]}``, each with its forgetting."""
    from inspector.forgetting import replay_dumps

    texts = [replay_dumps(rp, payloads=payloads) for _, rp in replays]
    return texts[0] if single else '{"replays": [\n' + ",\n".join(texts) + "\n]}"


def _add_policy_options(p: argparse.ArgumentParser) -> None:
    """The replay policy (Q22): every default is :data:`inspector.policy.DEFAULT_POLICY`'s."""
    from inspector.policy import COUNTERS, DEFAULT_POLICY, SOURCES, SUMMARIZER_MODES

    d = DEFAULT_POLICY
    p.add_argument("--counter", choices=COUNTERS, default=None,
                   help=f"token counter for every decision: tiktoken (the model's real encoding) or estimate "
                        f"(the reference runtime's character formulas); default {d.counter}")
    p.add_argument("--summarizer", choices=SUMMARIZER_MODES, default=None,
                   help=f"default {d.summarizer}: the manifest's summarizer, an llm one served by --model when given, "
                        "else by the labelled offline stand-in; stand-in: the labelled offline stand-in (not a "
                        "model); drop: fold without a summary; manifest: exactly as configured")
    p.add_argument("--system", choices=SOURCES[1:], default=None,
                   help="whose system text is sent (default: the transcript's own unless the manifest declares "
                        "its own and is not a bundled sample)")
    p.add_argument("--tools", choices=SOURCES[1:], default=None,
                   help="whose tool schemas are sent (default: as --system, for spec.tools)")
    p.add_argument("--model-from", dest="model_from", choices=SOURCES[1:], default=None,
                   help="whose model sets the window and price (default: the manifest's if it names one, "
                        "else the transcript's recorded model)")


def _policy(args: argparse.Namespace) -> Any:
    from inspector.policy import DEFAULT_POLICY

    return DEFAULT_POLICY.with_(counter=args.counter, summarizer=getattr(args, "summarizer", None),
                                system=args.system, tools=args.tools, model=args.model_from)


def _state(lines: Any) -> None:
    """The policy and the agent in force, on stderr (stdout stays the requested format)."""
    for line in lines:
        print(line, file=sys.stderr)


def _add_replay_options(p: argparse.ArgumentParser, *, conversation: str = "0") -> None:
    add_transcript_options(p, conversation=conversation)
    _add_policy_options(p)
    p.add_argument("--model", default=None, metavar="NAME",
                   help="live model for the llm summarizer (a LiteLLM name; key from CONTEXT_INSPECTOR_API_KEY)")
    p.add_argument("--api-base", default=None, metavar="URL", help="OpenAI-compatible endpoint for --model")
    p.add_argument("--summary-cache", default=None, metavar="DIR", help="cache real summaries on disk here")
    p.add_argument("--token-calibration", dest="token_calibration", default=None, type=_calibration,
                   metavar="MODEL=FACTOR", help="opt-in: divide the input ceiling by FACTOR (provider tokens per one "
                                                "of ours, from `context-inspector calibrate`); MODEL must be the "
                                                "manifest's model")
    _add_prefix_option(p)
    add_manifest_options(p)


def _prefix_value(text: str) -> str | int:
    if text.strip().lower() == "auto":
        return "auto"
    if text.strip().isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"{text!r} must be 'auto' or a whole number of tokens")


def _add_prefix_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--unrecorded-prefix", dest="unrecorded_prefix", default=None, type=_prefix_value,
                   metavar="auto|N", help="opt-in: add what the log does not record (Claude Code's, OpenHands' "
                                          "system prompt and tool schemas) to every call's budget: N provider "
                                          "tokens, or auto = the fitted offset of `context-inspector calibrate`")


def _llm(args: argparse.Namespace) -> Any:
    if not getattr(args, "model", None):
        return None
    from inspector.engine.llm import LLMEngine

    return LLMEngine(model=args.model, api_base=args.api_base, api_key=os.environ.get("CONTEXT_INSPECTOR_API_KEY"))


def _replay_kw(args: argparse.Namespace, llm: Any) -> dict[str, Any]:
    """The replay options of the command line, as :func:`inspector.replay.replay` keywords."""
    return dict(policy=_policy(args), llm=llm, summary_cache=args.summary_cache, allow_imports=args.allow_imports,
                sample=_sample(args),
                calibration=dict([args.token_calibration]) if args.token_calibration else None,
                unrecorded_prefix=getattr(args, "unrecorded_prefix", None))


def _replay(args: argparse.Namespace, manifest: Any, transcript: Any, llm: Any = None) -> Any:
    from inspector.replay import replay

    return replay(manifest, transcript, **_replay_kw(args, llm))


def _manifest_or_none(args: argparse.Namespace) -> Any:
    """The manifest given, or (none given) the transcript's own agent with the ``--set`` overrides."""
    if args.manifest is not None:
        return _load_manifest(args)
    from inspector.manifest import settings_from_dict
    from inspector.policy import NO_MANIFEST

    return settings_from_dict(dict(NO_MANIFEST), allow_imports=args.allow_imports, overrides=args.overrides)


def _sample(args: argparse.Namespace) -> bool | None:
    """No manifest: the transcript's own agent; a manifest: judged by its marker (Q25) when read."""
    return True if args.manifest is None else None


def _split_paths(args: argparse.Namespace) -> None:
    """``[MANIFEST] TRANSCRIPT...`` → ``args.manifest`` (or None) and ``args.transcripts``."""
    from inspector.policy import split_manifest_argument

    args.manifest, args.transcripts = split_manifest_argument(args.paths)
    if not args.transcripts:
        raise UsageError("give at least one TRANSCRIPT")
    late = next((t for t in args.transcripts if _kind_by_suffix(t) == "manifest"), None)
    if late is not None:
        raise UsageError(f"{late} is a manifest, given after a transcript: give the MANIFEST first, then the "
                         f"TRANSCRIPTs")


def _load_manifest(args: argparse.Namespace) -> Any:
    from inspector.manifest import ManifestError

    _require_file(args.manifest, "manifest")
    try:
        return load_manifest_from_args(args, args.manifest)
    except ManifestError as exc:
        hint = not_a_manifest(args.manifest)
        if hint is None:
            raise
        raise UsageError(hint) from exc


def not_a_manifest(path: str) -> str | None:
    """What to say when a transcript was given where the manifest belongs (judged by its suffix)."""
    if _kind_by_suffix(path) != "transcript":
        return None
    return (f"{path} is a transcript, not an agent manifest (YAML): give the MANIFEST first, then the "
            f"TRANSCRIPT, or leave the manifest out to replay the transcript as its own agent")


def add_replay(sub: SubParsers) -> None:
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
    _add_replay_options(p)
    p.add_argument("--payloads", action="store_true", help="JSON: include each call's exact messages")
    add_output_options(p, default="json")
    p.set_defaults(handler=_guard(cmd_replay))


def _frame_rows(rp: Any, t: Any) -> list[dict[str, Any]]:
    """The frames table's rows (plain dicts: no pandas on the terminal-table path) led by the file
    and conversation and ending with the forgotten-reference count."""
    from inspector.forgetting import forgotten_references
    from inspector.report.tables import frame_rows

    lead = {"transcript": _file_label(t), "conversation": t.conversation}
    k = rp.pending_call
    return [{**lead, **row, "forgotten": len(lost), "pending": i == k}
            for i, (row, lost) in enumerate(zip(frame_rows(rp), forgotten_references(rp), strict=True))]


def _pending_table_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table's rows with the pending next call starred in its ``call`` cell (the note says why)."""
    return [{**r, "call": f"{r['call']}*"} if r["pending"] else r for r in rows]


def pending_note(rp: Any) -> str | None:
    """The line under a replay's table when its last call is the pending next call."""
    from inspector.replay import PENDING_WORDS

    k = rp.pending_call
    if k is None:
        return None
    return (f"* call {k} ({PENDING_WORDS}): the transcript ends before its reply, so the agent never made it; "
            f"it is shown, and left out of the totals row")


def _replay_table(rp: Any, t: Any, args: argparse.Namespace, colour: bool) -> str:
    import textwrap

    text = co.render_table(_pending_table_rows(_frame_rows(rp, t)), FRAME_COLUMNS, title=_replay_title(rp, t),
                           wide=args.wide, color=colour)
    note = pending_note(rp)
    if note:
        text += "\n".join(textwrap.wrap(note, co.WIDE_WIDTH if args.wide else co.TABLE_WIDTH)) + "\n"
    return text


def _warn_failed_checks(t: Any, rp: Any) -> None:
    """A payload a provider would refuse is said on stderr whatever the output format: the terminal
    table leaves the check column out at 100 columns, and such a call must not look sent."""
    failed = [(k, f.check) for k, f in enumerate(rp.frames) if f.check != "ok"]
    if failed:
        k, check = failed[0]
        co.warning(f"{_file_label(t)} conversation {t.conversation}: {len(failed):,} call(s) fail the provider "
                   f"check (first, call {k}: {check})")


def _replay_title(rp: Any, t: Any) -> str:
    calls = len(rp.counted_frames())
    pending = " + 1 pending" if rp.pending_call is not None else ""
    return (f"{_file_label(t)} · conversation {t.conversation} · {calls:,} calls{pending} · "
            f"counter {rp.counter} · summarizer {rp.summarizer_label}")


def cmd_replay(args: argparse.Namespace) -> int:
    loaded = _manifest_or_none(args)
    transcripts = _collect(args, [args.transcript])
    llm = _llm(args)
    replays: list[tuple[Any, Any]] = []
    with co.Progress("replaying", len(transcripts) if len(transcripts) > 1 else None) as bar:
        for t in transcripts:
            replays.append((t, _replay(args, loaded, t, llm)))
            bar.advance()
    for _, rp in replays[:1]:
        _state(rp.stated())
    for t, rp in replays:
        _warn_failed_checks(t, rp)
    if args.fmt == "json":
        co.write(replays_json(replays, payloads=args.payloads, single=args.conversation.single), args.output)
    elif args.fmt == "csv":
        import pandas as pd

        co.write(pd.DataFrame([r for t, rp in replays for r in _frame_rows(rp, t)]).to_csv(index=False), args.output)
    else:
        colour = co.stdout_colour(args.output)
        co.write("\n".join(_replay_table(rp, t, args, colour) for t, rp in replays), args.output)
    return EXIT_OK


# --- compare --------------------------------------------------------------------------------------

RUN_COLUMNS: tuple[Column, ...] = (
    Column("transcript"), Column("conversation"), Column("strategy"), Column("frames", "sum"),
    Column("tokens_sent", "sum"), Column("peak_payload", "max"), Column("over_budget", "sum"),
    Column("summaries", "sum"), Column("summarizer_in_turn", "sum", narrow=False),
    Column("summarizer_commit", "sum", narrow=False), Column("summarizer_failures", "sum", narrow=False), Column("trimmed", "sum"), Column("repairs", "sum"),
    Column("folded", "sum", narrow=False), Column("cost_usd", "sum"),
)
FLEET_COLUMNS: tuple[Column, ...] = (
    Column("conversations", "sum"), Column("conversations_over_budget", "sum"), Column("over_budget", "sum"),
    Column("peak_payload", "max"), Column("summaries", "sum"), Column("trimmed", "sum"), Column("repairs", "sum"),
    Column("cost_usd", "sum"), Column("errors", "sum"),
)


def _strategy(text: str) -> tuple[str, str]:
    name, sep, spec = text.partition("=")
    if not sep or not name.strip() or not spec.strip():
        raise argparse.ArgumentTypeError(f"{text!r} must look like NAME=SPEC (a context_manager value or a manifest file)")
    return name.strip(), spec


def add_compare(sub: SubParsers) -> None:
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
    _add_replay_options(p)
    p.add_argument("--strategy", action="append", type=_strategy, required=True, metavar="NAME=SPEC",
                   help="a named strategy: a context_manager value (sliding-window, '{type: stack, params: "
                        "{max_messages: 40}}') or a manifest file; repeatable")
    _add_dask_option(p)
    add_output_options(p, default="table")
    _add_fleet_option(p)
    p.set_defaults(handler=_guard(cmd_compare))


def cmd_compare(args: argparse.Namespace) -> int:
    import pandas as pd

    from inspector.compare import infra_docs, strategy_manifest
    from inspector.report.fleet import fleet_table
    from inspector.report.tables import totals_row

    names = [n for n, _ in args.strategy]
    if len(set(names)) != len(names):
        raise UsageError("strategy names must be unique")
    _split_paths(args)
    base = _manifest_or_none(args)
    manifests = {name: strategy_manifest(base.raw, spec, file=base.file, infra_documents=infra_docs(base))
                 for name, spec in args.strategy}
    transcripts = _collect(args, args.transcripts)
    llm = _llm(args)
    per_transcript: list[dict[str, Any]] = []
    if args.dask is not None:
        from inspector.fleet import FleetError, connect, parse_dask, replay_on

        try:
            target = parse_dask(args.dask)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        try:
            with co.Progress("comparing on dask", len(transcripts) * len(manifests)) as bar, connect(target) as client:
                for t in transcripts:
                    per_transcript.append(replay_on(client, manifests, t, progress=lambda done: bar.advance(),
                                                    **_replay_kw(args, llm)))
        except FleetError as exc:
            raise UsageError(str(exc)) from None
        _state([f"dask: {next(iter(per_transcript[0].values())).fleet.words()}"] if per_transcript else [])
    else:
        with co.Progress("comparing", len(transcripts) * len(manifests)) as bar:
            for t in transcripts:
                done: dict[str, Any] = {}
                for name, manifest in manifests.items():
                    done[name] = _replay(args, manifest, t, llm)
                    bar.advance()
                per_transcript.append(done)
    rows: list[dict[str, Any]] = []
    for t, replays in zip(transcripts, per_transcript, strict=True):
        for name, rp in replays.items():
            if not rows:
                _state([*rp.stated()[:2], *([rp.prefix_line()] if rp.prefix_line() else [])])
            row = {"transcript": _file_label(t), "conversation": t.conversation}
            row.update(totals_row(rp, name))
            row["summaries"] = row["summarizer_in_turn"] + row["summarizer_commit"]  # model calls, both kinds
            row["pending_call"] = rp.pending_call is not None  # left out of every number of the row
            rows.append(row)
    runs = pd.DataFrame(rows)
    fleet = fleet_table(runs, ["strategy"]) if len(transcripts) > 1 or args.fleet_summary else None
    _write_runs(args, runs, RUN_COLUMNS, fleet, "strategies", transcripts,
                fleet_title="fleet summary: per strategy, over every conversation")
    return EXIT_OK


def _write_runs(args: argparse.Namespace, runs: Any, columns: Sequence[Column], fleet: Any, key: str,
                transcripts: Sequence[Any], *, fleet_title: str, extra: dict[str, Any] | None = None) -> None:
    """A per-run table and, over many conversations, the fleet summary, as a table, JSON or CSV.

    Table and JSON carry both (JSON under ``fleet``). A CSV file holds one table, so CSV output is
    the per-run rows and the fleet summary goes to ``--fleet-summary FILE`` (a stderr line says so
    when it was left out); ``--fleet-summary`` writes the summary alone in every format."""
    fleet_file = getattr(args, "fleet_summary", None)
    files = sorted({_file_label(t) for t in transcripts})
    fleet_heading = f"{fleet_title} ({len(transcripts):,} conversations of {', '.join(files)})"

    def fleet_text(fmt: str, colour: bool) -> str:
        if fmt == "json":
            return json.dumps(json.loads(fleet.to_json(orient="records")), ensure_ascii=False, indent=1)
        if fmt == "csv":
            return str(fleet.to_csv(index=False))
        lead = [Column(c) for c in fleet.columns if c not in {f.key for f in FLEET_COLUMNS}]
        return co.render_table(fleet.to_dict(orient="records"), [*lead, *FLEET_COLUMNS], wide=args.wide,
                               color=colour, title=fleet_heading)

    if fleet is not None and fleet_file:
        co.write(fleet_text(args.fmt, False), fleet_file)
    if args.fmt == "json":
        doc: dict[str, Any] = dict(extra or {})
        doc[key] = json.loads(runs.to_json(orient="records"))
        if fleet is not None:
            doc["fleet"] = json.loads(fleet.to_json(orient="records"))
        co.write(json.dumps(doc, ensure_ascii=False, indent=1), args.output)
        return
    if args.fmt == "csv":
        co.write(runs.to_csv(index=False), args.output)
        if fleet is not None and not fleet_file:
            _state([f"fleet summary: not in the CSV (one table per file); --fleet-summary FILE writes it "
                    f"({len(transcripts):,} conversations)"])
        return
    colour = co.stdout_colour(args.output)
    many = len(transcripts) > 1
    cols = list(columns) if many else [c for c in columns if c.key not in ("transcript", "conversation")]
    title = None if many else f"{_file_label(transcripts[0])} · conversation {transcripts[0].conversation}"
    text = co.render_table(runs.to_dict(orient="records"), cols, title=title, wide=args.wide, color=colour)
    if fleet is not None:
        text += "\n" + fleet_text("table", colour)
    note = _pending_runs_note(runs)
    if note:
        import textwrap

        text += "\n".join(textwrap.wrap(note, co.WIDE_WIDTH if args.wide else co.TABLE_WIDTH)) + "\n"
    co.write(text, args.output)


def _pending_runs_note(runs: Any) -> str | None:
    """Under a compare/sweep table: how many runs end on a pending next call, left out of the numbers."""
    if "pending_call" not in runs.columns:
        return None
    n = int(runs["pending_call"].fillna(False).astype(bool).sum())
    if not n:
        return None
    return (f"{n:,} of {len(runs):,} run(s) end without a reply: their pending next call (never made by the agent; "
            f"`replay` shows it) is left out of calls, tokens, peaks, costs and the fleet summary")


def _add_fleet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fleet-summary", dest="fleet_summary", default=None, metavar="FILE",
                   help="also write the fleet summary alone to FILE, in the output format (CSV holds one "
                        "table, so this is how a CSV run gets its fleet summary); given, it is written for "
                        "one conversation too")


# --- sweep ----------------------------------------------------------------------------------------
def _add_dask_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dask", default=None, metavar="local[:N]|tcp://HOST:PORT",
                   help="run on Dask: local[:N] starts a LocalCluster of N worker processes for this command, "
                        "tcp://HOST:PORT uses a running scheduler (needs context-inspector[fleet])")


def add_sweep(sub: SubParsers) -> None:
    from inspector.sweep import SHORT_NAMES

    names = "\n".join(f"  {k:<18} {v}" for k, v in SHORT_NAMES.items())
    p = add_parser(
        sub, "sweep", "replay transcripts under every combination of a parameter grid",
        "Replay every selected conversation of every transcript under every combination of the "
        "--grid values (one row per file, conversation and combination; all cores by default), then "
        "summarise the fleet per setting: conversations over budget, peak payload, summaries, trims, "
        "repairs and cost. Without a manifest each transcript is replayed as its own agent.\n\n"
        "Grid keys are dotted manifest paths or these short names:\n" + names,
        ["context-inspector sweep sample:small-window sample:demo_support --grid keep_turns=2,4,6,8",
         "context-inspector sweep sample:small-window sample:demo_support sample:planted_facts --grid keep_turns=2,4 "
         "--grid hysteresis_ratio=0,0.1",
         "context-inspector sweep sample:demo_support --grid context_manager=[stack,sliding-window] "
         "--format csv -o sweep.csv --fleet-summary fleet.csv"])
    p.add_argument("paths", nargs="+", metavar="[MANIFEST] TRANSCRIPT",
                   help="an optional agent manifest (.yaml/.yml), then one or more transcript files")
    p.add_argument("--grid", action="append", required=True, metavar="NAME=V1,V2,...",
                   help="a grid axis: a short name (below) or a dotted manifest path, and its values "
                        "(e.g. keep_turns=2,4,6 or spec.models[0].context_window=8000,16000); repeatable")
    add_transcript_options(p, conversation="all")
    _add_policy_options(p)
    p.add_argument("--processes", type=int, default=None, metavar="N",
                   help="worker processes (default: every core available; 1 = no pool)")
    _add_dask_option(p)
    p.add_argument("--dask-ship", dest="dask_ship", choices=["bytes", "path"], default="bytes",
                   help="with --dask: send transcripts to the workers as bytes, or let them read the paths from "
                        "shared storage (default: bytes)")
    _add_prefix_option(p)
    add_output_options(p, default="table")
    _add_fleet_option(p)
    add_manifest_options(p)
    p.set_defaults(handler=_guard(cmd_sweep))


SWEEP_RUN_LEAD: tuple[Column, ...] = (Column("transcript"), Column("conversation"))
SWEEP_METRICS: tuple[Column, ...] = (
    Column("frames", "sum", narrow=False), Column("tokens_sent", "sum"), Column("peak_payload", "max"),
    Column("over_budget", "sum"), Column("summarizer_calls", "sum"), Column("trimmed", "sum"),
    Column("repairs", "sum"), Column("cost_usd", "sum"), Column("error", narrow=False),
)


def cmd_sweep(args: argparse.Namespace) -> int:
    from inspector.report.fleet import fleet_table
    from inspector.sweep import combinations, param_columns, parse_grid, sweep

    try:
        grid = parse_grid(args.grid)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _split_paths(args)
    if args.manifest is not None:
        _require_file(args.manifest, "manifest")
    transcripts = _collect(args, args.transcripts)
    total = len(transcripts) * len(combinations(grid))
    policy = _policy(args)
    _state([policy.describe()])
    if args.unrecorded_prefix is not None:
        _state(["unrecorded prefix: added to every call's budget as a fixed part ("
                + ("each transcript's fitted offset" if args.unrecorded_prefix == "auto"
                   else f"{args.unrecorded_prefix:,} tokens") + ")"])
    if args.dask is not None:
        from inspector.fleet import FleetError, FleetReport, connect, parse_dask

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
                           unrecorded_prefix=args.unrecorded_prefix)
        except FleetError as exc:
            raise UsageError(str(exc)) from None
        _state([f"dask: {FleetReport(**df.attrs['fleet']).words()}"])
    else:
        with co.Progress("sweeping", total) as bar:
            df = sweep(args.manifest, transcripts, grid, policy=policy,
                       processes=args.processes, overrides=args.overrides, allow_imports=args.allow_imports,
                       progress=bar, unrecorded_prefix=args.unrecorded_prefix)
    params = param_columns(df)
    fleet = fleet_table(df, params) if len(transcripts) > 1 or args.fleet_summary else None
    columns = [*SWEEP_RUN_LEAD, *(Column(p) for p in params), *SWEEP_METRICS]
    _write_runs(args, df, columns, fleet, "rows", transcripts, extra={"grid": grid},
                fleet_title="fleet summary: per setting, over every conversation")
    failed = df[df["error"].notna()]
    for _, row in failed.iterrows():
        combo = ", ".join(f"{k}={row[k]}" for k in grid)
        co.error(f"{row['transcript']} conversation {row['conversation']} [{combo}]: {row['error']}")
    return EXIT_INVALID if len(failed) else EXIT_OK


# --- observed -------------------------------------------------------------------------------------

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
    """What differs in one payload, and why, in words: ``system: different system text (observed 67
    chars, ours 178)``; the part (``system``, ``tools``, ``rows``) leads each note; ``nothing`` when
    the two payloads are identical."""
    return "; ".join(f"{k}: {row[k]}" for k in ("system", "tools", "rows") if row.get(k)) or "nothing"


def add_observed(sub: SubParsers) -> None:
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
    _add_policy_options(p)
    add_output_options(p, default="table")
    add_manifest_options(p)
    p.set_defaults(handler=_guard(cmd_observed))


def cmd_observed(args: argparse.Namespace) -> int:
    import pandas as pd

    from inspector.observed import compare_observed

    policy = _policy(args)
    loaded = _manifest_or_none(args)
    transcripts = _collect(args, [args.transcript])
    _state([policy.describe()])
    frames = []
    for t in transcripts:
        df = compare_observed(loaded, t, policy=policy, sample=_sample(args))
        df.insert(0, "conversation", t.conversation)
        df.insert(0, "transcript", _file_label(t))
        frames.append(df)
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if df.empty:
        co.error(f"{args.transcript} records no observed payloads (mas-lab and Letta files do)")
        return EXIT_INVALID
    if args.fmt == "json":
        co.write(json.dumps({"payloads": json.loads(df.to_json(orient="records"))}, ensure_ascii=False, indent=1),
                 args.output)
    elif args.fmt == "csv":
        co.write(df.to_csv(index=False), args.output)
    else:
        rows = [{**r, "why": observed_why(r)} for r in df.to_dict(orient="records")]
        co.write(co.render_table(rows, OBSERVED_COLUMNS, wide=args.wide, color=co.stdout_colour(args.output)),
                 args.output)
    return EXIT_OK


# --- calibrate ------------------------------------------------------------------------------------

def add_calibrate(sub: SubParsers) -> None:
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
    add_output_options(p, default="table")
    p.set_defaults(handler=_guard(cmd_calibrate))


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


def cmd_calibrate(args: argparse.Namespace) -> int:
    from inspector.calibration import advice, calibrate

    transcripts = _collect(args, [args.transcript])
    cal = calibrate(transcripts[0])
    if cal.calls.empty:
        co.error(f"{args.transcript} records no provider usage per call: nothing to calibrate against")
        return EXIT_INVALID
    if args.fmt == "json":
        co.write(json.dumps({"calls": json.loads(cal.calls.to_json(orient="records")),
                             "factors": json.loads(cal.factors.to_json(orient="records")),
                             "advice": advice(cal), "notes": cal.notes},
                            ensure_ascii=False, indent=1), args.output)
    elif args.fmt == "csv":
        co.write(cal.calls.to_csv(index=False), args.output)
    else:
        import textwrap

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
        co.write(text, args.output)
    return EXIT_OK


# --- app ------------------------------------------------------------------------------------------

def add_app(sub: SubParsers) -> None:
    p = add_parser(
        sub, "app", "start the inspector app (Streamlit) in your browser",
        "Start the Streamlit inspector app with the same settings as `make run`: bound to 127.0.0.1, "
        "no usage statistics, headless. Opens on TRANSCRIPT under --manifest when given; TRANSCRIPT alone "
        "opens as its own agent (its system text, tools, model and window, as `replay TRANSCRIPT` does); "
        "with neither, the bundled demo under the sample manifest designed with it (support-demo.yaml).",
        ["context-inspector app",
         "context-inspector app sample:demo_support --manifest sample:stack",
         "context-inspector app --follow calls.jsonl --manifest sample:stack --port 8600"])
    p.add_argument("transcript", nargs="?", default=None, metavar="TRANSCRIPT",
                   help="open this transcript (default: the bundled demo)")
    p.add_argument("--manifest", default=None, metavar="FILE", help="open this manifest (default: none for a TRANSCRIPT, "
                        "which then runs as its own agent; the bundled support-demo sample for the demo)")
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8501")), help="port to serve on")
    p.add_argument("--follow", default=None, metavar="FILE",
                   help="follow a live JSON Lines file of model calls (written by inspector.live.JsonlLogger): new "
                        "calls appear as they arrive; the file may not exist yet")
    _add_prefix_option(p)
    p.add_argument("--dry-run", action="store_true", help="print the streamlit command instead of running it")
    p.set_defaults(handler=_guard(cmd_app))


def cmd_app(args: argparse.Namespace) -> int:
    from inspector.bundled import app_command

    for path, what in ((args.transcript, "transcript"), (args.manifest, "manifest")):
        if path is not None:
            _require_file(path, what)
    if args.follow and args.transcript:
        raise UsageError("give either a TRANSCRIPT or --follow FILE, not both")
    cmd = app_command(transcript=args.transcript, manifest=args.manifest, port=args.port,
                      unrecorded_prefix=args.unrecorded_prefix, follow=args.follow)
    if args.dry_run:
        import shlex

        print(shlex.join(cmd))
        return EXIT_OK
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":  # become the server: signals (Ctrl-C, terminate) reach Streamlit itself
        os.execv(cmd[0], cmd)
    import subprocess

    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return EXIT_OK


# --- samples --------------------------------------------------------------------------------------

def add_samples(sub: SubParsers) -> None:
    p = add_parser(
        sub, "samples", "list the bundled sample manifests and transcripts, or copy one out",
        "The package ships sample manifests and transcripts. Name one as sample:NAME wherever a "
        "manifest or transcript file is taken (it works from any folder, in a checkout or after pip "
        "install). `samples` lists them; `samples copy NAME [DEST]` writes a copy to edit (a manifest "
        "without its sample marker, so the copy is your own agent: its system text and tools are "
        "sent, not the transcript's).",
        ["context-inspector samples",
         "context-inspector samples copy small-window my-agent.yaml",
         "context-inspector samples copy demo_support"])
    p.add_argument("action", nargs="?", choices=["list", "copy"], default="list",
                   help="list the samples, or copy one out")
    p.add_argument("name", nargs="?", default=None, metavar="NAME", help="copy: the sample to copy")
    p.add_argument("dest", nargs="?", default=None, metavar="DEST",
                   help="copy: the file or folder to write (default: the sample's file name, here)")
    p.add_argument("--force", action="store_true", help="copy: overwrite DEST if it exists")
    p.set_defaults(handler=cmd_samples)


def cmd_samples(args: argparse.Namespace) -> int:
    from inspector import bundled

    if args.action == "list":
        if args.name is not None:
            raise UsageError(f"unexpected {args.name!r}: `samples` lists, `samples copy NAME [DEST]` copies")
        import textwrap

        rows = bundled.samples()
        width = max(len(bundled.SAMPLE_SCHEME + s.name) for s in rows)
        lead = width + 2 + 10 + 2
        lines = [f"{'NAME':<{width}}  {'KIND':<10}  ABOUT"]
        for s in rows:
            about = textwrap.wrap(s.about, co.TABLE_WIDTH - lead) or [""]
            lines.append(f"{bundled.SAMPLE_SCHEME + s.name:<{width}}  {s.kind:<10}  {about[0]}")
            lines += [" " * lead + more for more in about[1:]]
        lines.append("")
        lines += textwrap.wrap("Give sample:NAME wherever a manifest or transcript file is taken; "
                               "`context-inspector samples copy NAME [DEST]` copies one out to edit.", co.TABLE_WIDTH)
        co.write("\n".join(lines), args.output if hasattr(args, "output") else None)
        return EXIT_OK
    if args.name is None:
        raise UsageError("samples copy: give the NAME of a sample (`context-inspector samples` lists them)")
    try:
        target = bundled.copy_sample(args.name, args.dest, overwrite=args.force)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    except FileExistsError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"{args.dest or args.name}: cannot write it ({exc.strerror or exc})") from None
    kind = bundled.find_sample(args.name).kind
    note = " (without the sample marker: it is your own agent now)" if kind == "manifest" else ""
    print(f"wrote {target}{note}", file=sys.stderr)
    return EXIT_OK


APP_PRELOAD: tuple[str, ...] = (
    "pandas", "plotly.graph_objects", "yaml", "inspector.replay", "inspector.compare", "inspector.transcripts",
    "inspector.report.tables", "inspector.report.figures", "inspector.live", "inspector.app.page",
)
"""What the app's script imports, imported by :func:`serve` before the server starts listening.

A fresh Streamlit server imports nothing of the script until the first browser connects, so the
first page waited about 1.5 s for these imports (pandas alone 0.4 s) before it could show
anything. Imported first, they are already in ``sys.modules`` when the script runs: the server
takes that much longer to come up, and the first page that much less to appear."""


def warm_up(args: Sequence[str] = ()) -> None:
    """Import :data:`APP_PRELOAD`, then prepare the first page: the replay of the transcript and
    manifest the app is launched on (``args``: :func:`serve`'s, the launch options after ``--``;
    none: the bundled demo), kept under the cache key the first page reads
    (:mod:`inspector.app.first_page`).

    The first replay in a process pays about 0.4 s once (the tokenizer's ranks, the model map,
    the validators), and a long transcript's replay and forgetting analysis seconds more. Done here,
    before the server listens, the first page does not wait for them. Sets the offline defaults of
    :func:`inspector.apply_offline_defaults` in this process, as the app's script itself does. Best
    effort: a failure here changes nothing (the app reports any real problem when it replays)."""
    import importlib
    import logging

    for name in APP_PRELOAD:
        importlib.import_module(name)
    from inspector import apply_offline_defaults
    from inspector.app.first_page import launch_from_serve_args, prepare_first_page

    apply_offline_defaults()
    log = logging.getLogger("inspector")
    level = log.level
    log.setLevel(logging.ERROR)  # the replay's own trim warnings are the app's to show, not the server log's
    try:
        prepare_first_page(launch_from_serve_args(args))
    except Exception:  # noqa: BLE001 - best effort, see the docstring
        pass
    finally:
        log.setLevel(level)


def serve(argv: Sequence[str] | None = None) -> int:
    """``python -m inspector.cli_commands run APP [flags]``: Streamlit's own command line, after
    :func:`warm_up`. Used by :func:`app_command`; takes Streamlit's arguments."""
    args = list(sys.argv[1:] if argv is None else argv)
    warm_up(args)
    from streamlit.web import cli

    sys.argv = ["streamlit", *args]  # streamlit's click command reads its arguments from sys.argv
    cli.main(prog_name="streamlit")
    return 0


ADDERS = [add_import, add_replay, add_compare, add_sweep, add_observed, add_calibrate, add_app, add_samples]


if __name__ == "__main__":  # the app's server: see serve()
    raise SystemExit(serve())
