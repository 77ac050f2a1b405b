"""``context-inspector`` command line (also ``python -m inspector``).

Structure: :func:`build_parser` asks every entry of :data:`SUBCOMMANDS` to add its subparser; each
subparser sets ``handler`` to a ``cmd_<name>(args) -> int`` function. To add a command (``replay``,
``compare``, ``import``, ``sweep``), write ``add_<name>(subparsers)`` + ``cmd_<name>(args)`` and
append the adder to :data:`SUBCOMMANDS`; reuse :func:`add_manifest_options` and
:func:`load_manifest_from_args` so every command reads manifests the same way.

Exit status: 0 success, 1 invalid manifest content, 2 usage error or unusable input file
(missing, unreadable, too large, not UTF-8, YAML syntax), 3 internal error. Bad input never prints a
traceback (set ``CONTEXT_INSPECTOR_DEBUG=1`` to see one for an internal error). Every error is a
line on stderr starting ``error:``; every warning one line starting ``warning:``.

The command line sets the offline defaults for its own process (``LITELLM_LOCAL_MODEL_COST_MAP``,
``TIKTOKEN_CACHE_DIR``; a value you set wins); importing the package never does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from inspector import __version__
from inspector.manifest import (
    Issue,
    LoadedManifest,
    ManifestError,
    ManifestReadError,
    load_manifest,
)

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

Handler = Callable[[argparse.Namespace], int]
SubParsers = Any  # argparse._SubParsersAction is private; typed loosely on purpose


# --- shared helpers for subcommands ---------------------------------------------------------------

def _override(text: str) -> str:
    path, sep, _ = text.partition("=")
    if not sep or not path.strip():
        raise argparse.ArgumentTypeError(f"{text!r} must look like PATH=VALUE")
    return text


def add_manifest_options(parser: argparse.ArgumentParser) -> None:
    """Options every manifest-reading command accepts."""
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE", type=_override,
                        help="override a field before reading, value parsed as YAML "
                             "(e.g. --set spec.context_manager.params.keep_turns=3); repeatable")
    parser.add_argument("--allow-import", dest="allow_imports", action="append", default=[], metavar="MODULE",
                        help="allow a plugin 'ref: module:Class' from this module to be imported; repeatable")


def load_manifest_from_args(args: argparse.Namespace, path: str, *, mode: str = "assemble") -> LoadedManifest:
    """Load ``path`` with the command's ``--set`` / ``--allow-import`` options."""
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
    """argparse with the command line's error format: the usage, then one ``error:`` line (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        from inspector.redact import mask_text

        self.exit(EXIT_USAGE, f"error: {mask_text(message)}\n")


def add_parser(subparsers: SubParsers, name: str, summary: str, description: str,
               examples: Sequence[str]) -> argparse.ArgumentParser:
    """A subcommand with a one-line summary, a description and its examples (shown by ``--help``)."""
    import textwrap

    body = "\n".join(textwrap.fill(par, 96) for par in description.split("\n\n")[:1])
    rest = description.split("\n\n", 1)[1:]
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    return subparsers.add_parser(name, help=summary, description=body + ("\n\n" + rest[0] if rest else ""),
                                 epilog=epilog, formatter_class=HelpFormatter)


def print_issues(issues: Sequence[Issue], *, prefix: str = "error: ", stream: TextIO | None = None) -> None:
    """One line per issue on stderr (``error: FILE:LINE: field.path: message``), secrets masked."""
    from inspector.redact import mask_text

    out = stream if stream is not None else sys.stderr
    for issue in issues:  # an issue may quote the offending value, e.g. a key pasted into the wrong field
        print(f"{prefix}{mask_text(str(issue))}", file=out)


# --- validate -------------------------------------------------------------------------------------

def add_validate(subparsers: SubParsers) -> None:
    p = add_parser(
        subparsers, "validate", "check a manifest strictly (every error with its field path and line)",
        "Validate an Agent manifest. Prints OK on stdout and any warnings on stderr (exit 0), or one "
        "'error: FILE:LINE: field.path: message' line per error on stderr (exit 1). A missing, "
        "unreadable or syntactically invalid file exits 2.",
        ["context-inspector validate sample_manifests/default.yaml",
         "context-inspector validate agent.yaml --show",
         "context-inspector validate agent.yaml --set spec.context_manager.params.keep_turns=3"])
    p.add_argument("file", metavar="FILE", help="manifest YAML file")
    p.add_argument("--show", action="store_true",
                   help="after OK, print the normalised settings (every default resolved) as JSON")
    add_manifest_options(p)
    p.set_defaults(handler=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        loaded = load_manifest_from_args(args, args.file, mode="validate")
    except ManifestReadError as exc:
        print_issues(exc.issues)
        return EXIT_USAGE
    except ManifestError as exc:
        print_issues(exc.issues)
        print_issues(exc.warnings, prefix="warning: ")
        return EXIT_INVALID
    print("OK")
    print_issues(loaded.warnings, prefix="warning: ")
    if args.show:
        from inspector.redact import mask_secrets

        print(json.dumps(mask_secrets(loaded.settings.to_dict()), indent=2, ensure_ascii=False))
    return EXIT_OK


# --- extension point ------------------------------------------------------------------------------

SUBCOMMANDS: list[Callable[[SubParsers], None]] = [add_validate]
"""Adders, in help order; the other commands' adders are in :data:`inspector.cli_commands.ADDERS`."""


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="context-inspector", formatter_class=HelpFormatter,
        description="See exactly what your agent's model is sent on every call, and why.",
        epilog="examples:\n"
               "  context-inspector validate agent.yaml\n"
               "  context-inspector replay agent.yaml run.json --format table\n"
               "  context-inspector sweep agent.yaml tau_bench.json --grid keep_turns=2,4,6\n"
               "  context-inspector app\n\n"
               "`context-inspector COMMAND --help` explains each command.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    from inspector.cli_commands import ADDERS  # import, replay, compare, sweep (lazy: avoids a cycle)

    for add in [*SUBCOMMANDS, *ADDERS]:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status (argparse usage errors return 2, --help 0)."""
    from inspector.offline import apply_offline_defaults
    from inspector.cli_output import install_warning_format

    apply_offline_defaults()  # this process only: the CLI never reaches the network by itself
    install_warning_format()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on usage errors and --help/--version
        return exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_USAGE)
    handler: Handler = args.handler
    try:
        return handler(args)
    except ManifestReadError as exc:
        print_issues(exc.issues)
        return EXIT_USAGE
    except ManifestError as exc:
        print_issues(exc.issues)
        return EXIT_INVALID
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - last line of defence: no traceback for users
        if os.environ.get("CONTEXT_INSPECTOR_DEBUG"):
            traceback.print_exc()
        from inspector.redact import mask_text

        print(f"error: internal error: {type(exc).__name__}: {mask_text(str(exc))}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
