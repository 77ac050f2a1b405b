"""``context-inspector`` command line (also ``python -m inspector``).

Structure: :func:`build_parser` asks every entry of :data:`SUBCOMMANDS` to add its subparser; each
subparser sets ``handler`` to a ``cmd_<name>(args) -> int`` function. To add a command (``replay``,
``compare``, ``import``, ``sweep``), write ``add_<name>(subparsers)`` + ``cmd_<name>(args)`` and
append the adder to :data:`SUBCOMMANDS`; reuse :func:`add_manifest_options` and
:func:`load_manifest_from_args` so every command reads manifests the same way.

Exit status: 0 success, 1 invalid manifest content, 2 usage error or unusable input file
(missing, unreadable, too large, not UTF-8, YAML syntax), 3 internal error, 141 stdout closed by
its reader (``| head``; nothing printed). Bad input never prints a
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

from inspector import __version__
from inspector.cli_base import (
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    ArgumentParser,
    Handler,
    HelpFormatter,
    SubParsers,
    add_manifest_options,
    add_parser,
    load_manifest_from_args,
    print_issues,
)
from inspector.errors import InspectorError
from inspector.manifest import ManifestError, ManifestReadError

__all__ = ["EXIT_INTERNAL", "EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "SUBCOMMANDS", "add_manifest_options",
           "add_parser", "build_parser", "load_manifest_from_args", "main", "print_issues"]


# --- validate -------------------------------------------------------------------------------------

def add_validate(subparsers: SubParsers) -> None:
    p = add_parser(
        subparsers, "validate", "check a manifest strictly (every error with its field path and line)",
        "Validate an Agent manifest. Prints OK on stdout and any warnings on stderr (exit 0), or one "
        "'error: FILE:LINE: field.path: message' line per error on stderr (exit 1). A missing, "
        "unreadable or syntactically invalid file exits 2. The key metadata.context-inspector/sample "
        "(true or false) marks a bundled sample: replays under it keep the transcript's own system "
        "text and tools; `context-inspector samples copy` writes a copy without it.",
        ["context-inspector validate sample:default",
         "context-inspector validate sample:small-window --show",
         "context-inspector validate sample:stack --set spec.context_manager.params.max_messages=20"])
    p.add_argument("file", metavar="FILE", help="manifest YAML file")
    p.add_argument("--show", action="store_true",
                   help="after OK, print the normalised settings (every default resolved) as JSON")
    add_manifest_options(p)
    p.set_defaults(handler=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    from inspector.cli_commands import not_a_manifest, resolve_samples

    resolve_samples(args)
    try:
        loaded = load_manifest_from_args(args, args.file, mode="validate")
    except ManifestError as exc:
        print_issues(exc.issues)
        if not isinstance(exc, ManifestReadError):
            print_issues(exc.warnings, prefix="warning: ")
        hint = not_a_manifest(args.file)
        if hint is not None:
            print(f"error: {hint}", file=sys.stderr)
        return exc.exit_status
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
               "  context-inspector samples\n"
               "  context-inspector validate sample:small-window\n"
               "  context-inspector replay sample:small-window sample:demo_support --format table\n"
               "  context-inspector sweep sample:small-window sample:demo_support --grid keep_turns=2,4,6\n"
               "  context-inspector app\n\n"
               "sample:NAME names a bundled sample (`context-inspector samples` lists them).\n"
               "`context-inspector COMMAND --help` explains each command.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    from inspector.cli_commands import ADDERS  # import, replay, compare, sweep (lazy: a fast --version)

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
        status = handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return status
    except BrokenPipeError:  # `... | head`: the reader has gone; end quietly, as any Unix tool does
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except ManifestError as exc:  # every issue on its own line, each naming file, line and field
        print_issues(exc.issues)
        return exc.exit_status
    except InspectorError as exc:  # the one root of every deliberate error (inspector.errors)
        from inspector.cli_output import error

        error(str(exc))
        return exc.exit_status
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - last line of defence: no traceback for users
        if os.environ.get("CONTEXT_INSPECTOR_DEBUG"):
            traceback.print_exc()
        from inspector.redact import mask_text

        print(f"error: internal error: {type(exc).__name__}: {mask_text(str(exc))}", file=sys.stderr)
        return EXIT_INTERNAL


EXIT_BROKEN_PIPE = 141
"""Exit status when the reader of stdout went away (``| head``): 128 + SIGPIPE, what a shell reports
for a tool that the closed pipe stopped. Nothing is printed."""


def _silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush at exit finds no closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (a test's buffer)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
