"""The command line's floor: exit statuses, the parser class, and the helpers every subcommand
uses to declare itself and read a manifest.

Every other module of :mod:`inspector.cli` builds on this one, and it imports none of them, so the
subcommand modules never import each other or the package's ``__init__`` (no cycle)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from inspector.errors import EXIT_INVALID, EXIT_USAGE
from inspector.manifest import Issue, LoadedManifest, load_manifest

__all__ = ["EXIT_BROKEN_PIPE", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_INVALID", "EXIT_OK", "EXIT_USAGE",
           "ArgumentParser", "Handler", "HelpFormatter", "SubParsers", "add_manifest_options", "add_parser",
           "load_manifest_from_args", "print_issues"]

EXIT_OK = 0
"""The command did what was asked."""
EXIT_INTERNAL = 3
"""A bug of ours (an exception no rule anticipated): one ``error: internal error: ...`` line."""
EXIT_INTERRUPTED = 130
"""Ctrl-C: 128 + SIGINT, what a shell reports for a tool the interrupt stopped."""
EXIT_BROKEN_PIPE = 141
"""The reader of stdout went away (``| head``): 128 + SIGPIPE, what a shell reports for a tool that
the closed pipe stopped. Nothing is printed."""

Handler = Callable[[argparse.Namespace], int]
SubParsers = Any  # argparse._SubParsersAction is private; typed loosely on purpose


# --- shared helpers for subcommands ---------------------------------------------------------------

def _override(text: str) -> str:
    """``--set``'s value as given, once it has the ``PATH=VALUE`` shape (argparse's usage error otherwise)."""
    path, sep, _ = text.partition("=")
    if not sep or not path.strip():
        raise argparse.ArgumentTypeError(f"{text!r} must look like PATH=VALUE")
    return text


def add_manifest_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--set PATH=VALUE`` and ``--allow-import MODULE`` (both repeatable) to ``parser``: the
    options every manifest-reading command accepts, read by :func:`load_manifest_from_args`."""
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE", type=_override,
                        help="override a field before reading, value parsed as YAML "
                             "(e.g. --set spec.context_manager.params.keep_turns=3); repeatable")
    parser.add_argument("--allow-import", dest="allow_imports", action="append", default=[], metavar="MODULE",
                        help="allow a plugin 'ref: module:Class' from this module to be imported; repeatable")


def load_manifest_from_args(args: argparse.Namespace, path: str, *, mode: str = "assemble") -> LoadedManifest:
    """Load the manifest at ``path`` in ``mode`` (``"assemble"`` or ``"validate"``) with the command's
    ``--set`` and ``--allow-import`` options from ``args``; returns the
    :class:`inspector.manifest.LoadedManifest`. Raises :class:`inspector.manifest.ManifestError`
    when the file cannot be read or its content is invalid."""
    return load_manifest(path, mode=mode,  # type: ignore[arg-type]
                         allow_imports=getattr(args, "allow_imports", ()),
                         overrides=getattr(args, "overrides", ()))


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and examples keep their line breaks; every option with a default shows it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS, []) or not action.option_strings:
            return text
        return text + " (default: %(default)s)"


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the command line's error format: one ``error:`` line (the hint), then one short
    usage line naming ``--help`` (exit 2); the full usage of a command with many options would bury
    the hint."""

    def error(self, message: str) -> NoReturn:
        """Print ``message`` (secrets masked) and the short usage on stderr, then exit 2."""
        from inspector.redact import mask_text

        self.exit(EXIT_USAGE, f"error: {mask_text(message)}\n{self.short_usage()}\n")

    def short_usage(self) -> str:
        """``usage: PROG [options] POSITIONALS (PROG --help says more)``, one line."""
        fmt = self._get_formatter()
        positionals = [a for a in self._actions if not a.option_strings and a.help != argparse.SUPPRESS]
        words = []
        for action in positionals:
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001 - argparse names it privately
                words.append("COMMAND ...")
                continue
            shown = fmt._format_args(action, action.dest.upper())  # noqa: SLF001 - uses action.metavar when set
            words.append(shown)
        options = " [options]" if any(a.option_strings for a in self._actions) else ""
        return f"usage: {self.prog}{options} {' '.join(words)} ({self.prog} --help says more)"


def add_parser(subparsers: SubParsers, name: str, summary: str, description: str,
               examples: Sequence[str]) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` to ``subparsers`` and return its parser: ``summary`` is its line
    in the main ``--help``, ``description`` its own help (the first paragraph wrapped at 96
    columns, the rest kept as written) and ``examples`` the command lines listed after it."""
    import textwrap

    body = "\n".join(textwrap.fill(par, 96) for par in description.split("\n\n")[:1])
    rest = description.split("\n\n", 1)[1:]
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=summary, description=body + ("\n\n" + rest[0] if rest else ""), epilog=epilog,
        formatter_class=HelpFormatter)
    return parser


def print_issues(issues: Sequence[Issue], *, prefix: str = "error: ", stream: TextIO | None = None) -> None:
    """Print one line per issue on ``stream`` (default stderr), ``prefix`` first
    (``error: FILE:LINE: field.path: message``), secrets masked."""
    from inspector.redact import mask_text

    out = stream if stream is not None else sys.stderr
    for issue in issues:  # an issue may quote the offending value, e.g. a key pasted into the wrong field
        print(f"{prefix}{mask_text(str(issue))}", file=out)
