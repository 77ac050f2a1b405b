"""The options several subcommands share, declared once, and their reading into the package's
keywords.

Each ``add_*`` function adds one group of options to a subcommand's parser, with the same names,
help and defaults wherever it appears (``--format`` is always the *output* format,
``--transcript-format`` the transcript's). :func:`policy_from_args`, :func:`llm_from_args` and
:func:`replay_keywords` turn the parsed options into what :func:`inspector.replay.replay` and its
neighbours take; defaults are the package's own (:data:`inspector.policy.DEFAULT_POLICY`), never
restated here.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import Any

from inspector.cli.base import add_manifest_options
from inspector.cli.output import TABLE_WIDTH

OUTPUT_FORMATS = ("table", "json", "csv")
"""Every output format a command may offer (``--format``); JSON and CSV keep identifiers and raw numbers."""


# --- transcripts --------------------------------------------------------------------------------

def _transcript_formats() -> list[str]:
    """The transcript formats the importers' registry knows, in its order."""
    from inspector.transcripts import list_formats

    return list_formats()


def _transcript_format(text: str) -> str:
    """``--transcript-format``'s value, once it names a known format; an output format given here
    gets a hint naming ``--format``."""
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
    """``--conversation``'s value as a :func:`inspector.transcripts.selection.parse_selection` selection."""
    from inspector.transcripts.selection import parse_selection

    try:
        return parse_selection(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_transcript_options(p: argparse.ArgumentParser, *, conversation: str = "0") -> None:
    """Add ``--transcript-format`` and ``--conversation`` (default ``conversation``) to ``p``: the
    same on every command that reads transcripts."""
    p.add_argument("--transcript-format", dest="transcript_format", default=None, type=_transcript_format,
                   metavar="NAME", help=f"the transcript's format, one of: {', '.join(_transcript_formats())} "
                                        "(default: detected from the content)")
    p.add_argument("--conversation", type=_selection, default=conversation, metavar="N|A-B|all",
                   help="which conversations of a multi-conversation file (tau-bench holds 200): one index, "
                        "an inclusive range, or all")


# --- output -------------------------------------------------------------------------------------

def _output_format(choices: Sequence[str]) -> Callable[[str], str]:
    """The parser of ``--format`` among ``choices``; a transcript format given there gets a hint."""

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


def add_output_options(p: argparse.ArgumentParser, *, default: str, choices: Sequence[str] = OUTPUT_FORMATS,
                       table: bool = True) -> None:
    """Add ``--format`` (one of ``choices``, default ``default``), ``-o/--output FILE`` and, when the
    command draws a ``table``, ``--wide`` to ``p``."""
    p.add_argument("--format", dest="fmt", type=_output_format(choices), default=default, metavar="FORMAT",
                   help=f"output format: {', '.join(choices)}")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="write the output to FILE instead of stdout")
    if table:
        p.add_argument("--wide", action="store_true",
                       help=f"tables: every column, no width limit (default: fit {TABLE_WIDTH} columns)")


def add_fleet_option(p: argparse.ArgumentParser) -> None:
    """Add ``--fleet-summary FILE`` to ``p`` (written by :func:`inspector.cli.runs.write_runs`)."""
    p.add_argument("--fleet-summary", dest="fleet_summary", default=None, metavar="FILE",
                   help="also write the fleet summary alone to FILE, in the output format (CSV holds one "
                        "table, so this is how a CSV run gets its fleet summary); given, it is written for "
                        "one conversation too")


def add_dask_option(p: argparse.ArgumentParser) -> None:
    """Add ``--dask local[:N]|tcp://HOST:PORT`` to ``p`` (parsed by :func:`inspector.fleet.parse_dask`)."""
    p.add_argument("--dask", default=None, metavar="local[:N]|tcp://HOST:PORT",
                   help="run on Dask: local[:N] starts a LocalCluster of N worker processes for this command, "
                        "tcp://HOST:PORT uses a running scheduler (needs context-inspector[fleet])")


# --- the replay policy --------------------------------------------------------------------------

def add_policy_options(p: argparse.ArgumentParser) -> None:
    """Add the replay policy's options to ``p`` (``--counter``, ``--summarizer``, ``--system``,
    ``--tools``, ``--model-from``); each defaults to None, so :data:`inspector.policy.DEFAULT_POLICY`
    decides what was not given."""
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


def policy_from_args(args: argparse.Namespace) -> Any:
    """The :class:`inspector.policy.ReplayPolicy` of the parsed policy options: the default policy
    with every option that was given put in."""
    from inspector.policy import DEFAULT_POLICY

    return DEFAULT_POLICY.with_(counter=args.counter, summarizer=getattr(args, "summarizer", None),
                                system=args.system, tools=args.tools, model=args.model_from)


# --- a replay's other options -------------------------------------------------------------------

def _calibration(text: str) -> tuple[str, float]:
    """``--token-calibration MODEL=FACTOR`` as ``(model, factor)``, the factor positive and finite."""
    model, sep, factor = text.rpartition("=")
    try:
        value = float(factor)
    except ValueError:
        value = float("nan")
    if not sep or not model.strip() or not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must look like MODEL=FACTOR with a positive FACTOR")
    return model.strip(), value


def _prefix_value(text: str) -> str | int:
    """``--unrecorded-prefix``'s value: ``"auto"`` or a whole number of tokens."""
    if text.strip().lower() == "auto":
        return "auto"
    if text.strip().isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"{text!r} must be 'auto' or a whole number of tokens")


def add_prefix_option(p: argparse.ArgumentParser) -> None:
    """Add ``--unrecorded-prefix auto|N`` to ``p`` (off unless given)."""
    p.add_argument("--unrecorded-prefix", dest="unrecorded_prefix", default=None, type=_prefix_value,
                   metavar="auto|N", help="opt-in: add what the log does not record (Claude Code's, OpenHands' "
                                          "system prompt and tool schemas) to every call's budget: N provider "
                                          "tokens, or auto = the fitted offset of `context-inspector calibrate`")


def add_cache_option(p: argparse.ArgumentParser) -> None:
    """Add ``--cache-rule auto|none|openai|anthropic`` to ``p``: the provider prompt-cache rule the
    costs with caching follow (:mod:`inspector.prompt_cache`); None when not given, so the manifest's
    ``spec.models[].prompt_cache`` or the model's provider decides."""
    from inspector.prompt_cache import CACHE_RULE_CHOICES

    p.add_argument("--cache-rule", dest="cache_rule", choices=CACHE_RULE_CHOICES, default=None,
                   help="prompt-cache rule for the cost with caching: auto (by the model's provider), none, openai "
                        "(automatic prefix caching) or anthropic (cache_control breakpoints); default: the "
                        "manifest's spec.models[].prompt_cache, else auto")


def add_replay_options(p: argparse.ArgumentParser, *, conversation: str = "0") -> None:
    """Add every option a replaying command takes to ``p``: the transcript options (default
    ``conversation``), the policy, the live summarizer model (``--model``, ``--api-base``,
    ``--summary-cache``), ``--token-calibration``, ``--unrecorded-prefix``, ``--cache-rule`` and the
    manifest options."""
    add_transcript_options(p, conversation=conversation)
    add_policy_options(p)
    p.add_argument("--model", default=None, metavar="NAME",
                   help="live model for the llm summarizer (a LiteLLM name; key from CONTEXT_INSPECTOR_API_KEY)")
    p.add_argument("--api-base", default=None, metavar="URL", help="OpenAI-compatible endpoint for --model")
    p.add_argument("--summary-cache", default=None, metavar="DIR", help="cache real summaries on disk here")
    p.add_argument("--token-calibration", dest="token_calibration", default=None, type=_calibration,
                   metavar="MODEL=FACTOR", help="opt-in: divide the input ceiling by FACTOR (provider tokens per one "
                                                "of ours, from `context-inspector calibrate`); MODEL must be the "
                                                "manifest's model")
    add_prefix_option(p)
    add_cache_option(p)
    add_manifest_options(p)


def llm_from_args(args: argparse.Namespace) -> Any:
    """The live model of ``--model`` (an :class:`inspector.engine.llm.LLMEngine`, its key from
    ``CONTEXT_INSPECTOR_API_KEY``), or None when no model was given (litellm is then never imported)."""
    if not getattr(args, "model", None):
        return None
    from inspector.engine.llm import LLMEngine

    return LLMEngine(model=args.model, api_base=args.api_base, api_key=os.environ.get("CONTEXT_INSPECTOR_API_KEY"))


def sample_flag(args: argparse.Namespace) -> bool | None:
    """:func:`inspector.replay.replay`'s ``sample``: True without a manifest (the transcript's own
    agent), else None (the manifest's own marker decides when it is read)."""
    return True if args.manifest is None else None


def replay_keywords(args: argparse.Namespace, llm: Any) -> dict[str, Any]:
    """The replay options of the command line, as :func:`inspector.replay.replay` keywords, with
    ``llm`` (from :func:`llm_from_args`) as the live model."""
    return dict(policy=policy_from_args(args), llm=llm, summary_cache=args.summary_cache,
                allow_imports=args.allow_imports, sample=sample_flag(args),
                calibration=dict([args.token_calibration]) if args.token_calibration else None,
                unrecorded_prefix=getattr(args, "unrecorded_prefix", None))
