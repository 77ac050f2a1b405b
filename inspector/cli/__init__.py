"""``context-inspector`` command line (also ``python -m inspector``).

Structure: one module per subcommand (:mod:`~inspector.cli.validate`, :mod:`~inspector.cli.import_`,
:mod:`~inspector.cli.replay`, :mod:`~inspector.cli.compare`, :mod:`~inspector.cli.sweep`,
:mod:`~inspector.cli.observed`, :mod:`~inspector.cli.calibrate`, :mod:`~inspector.cli.app`,
:mod:`~inspector.cli.samples`), each with ``add_<name>(subparsers)``, which adds its subparser and
sets ``handler`` to its ``cmd_<name>(args) -> int``. The parts they share have their own modules:
:mod:`~inspector.cli.base` (exit statuses, the parser class, manifest options),
:mod:`~inspector.cli.options` (the option groups several commands take),
:mod:`~inspector.cli.inputs` (file arguments, manifests, transcripts and the checks before any
work), :mod:`~inspector.cli.output` (tables, progress, warnings, errors) and
:mod:`~inspector.cli.runs` (the many-run tables of ``compare`` and ``sweep``). To add a command,
write its module and append its adder to :data:`SUBCOMMANDS`. Heavy libraries (pandas, plotly,
litellm, streamlit) are imported inside the handlers that use them, never at module level.

Exit status: 0 success, 1 invalid manifest content, 2 usage error or unusable input file
(missing, unreadable, too large, not UTF-8, YAML syntax), 3 internal error, 141 stdout closed by
its reader (``| head``; nothing printed). Bad input never prints a
traceback (set ``CONTEXT_INSPECTOR_DEBUG=1`` to see one for an internal error). Every error is a
line on stderr starting ``error:``; every warning one line starting ``warning:``.

A command run as the process (:func:`run`: the console script, ``python -m inspector``) may end
the process as soon as its output is written and flushed (``replay``: :func:`inspector.cli.output.end_process`),
skipping the interpreter's teardown; :func:`main` called from Python never ends the process.

The command line sets the offline defaults for its own process (``LITELLM_LOCAL_MODEL_COST_MAP``,
``TIKTOKEN_CACHE_DIR``; a value you set wins); importing the package never does.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from inspector import __version__
from inspector.cli.app import add_app
from inspector.cli.base import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    ArgumentParser,
    Handler,
    HelpFormatter,
    SubParsers,
    print_issues,
)
from inspector.cli.calibrate import add_calibrate
from inspector.cli.compare import add_compare
from inspector.cli.import_ import add_import
from inspector.cli.observed import add_observed
from inspector.cli.replay import add_replay
from inspector.cli.samples import add_samples
from inspector.cli.sweep import add_sweep
from inspector.cli.validate import add_validate
from inspector.errors import InspectorError
from inspector.manifest import ManifestError

__all__ = ["EXIT_BROKEN_PIPE", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_INVALID", "EXIT_OK", "EXIT_USAGE",
           "SUBCOMMANDS", "build_parser", "main", "run"]

SUBCOMMANDS: list[Callable[[SubParsers], None]] = [
    add_validate, add_import, add_replay, add_compare, add_sweep, add_observed, add_calibrate, add_app, add_samples,
]
"""Every subcommand's adder, in the order the main ``--help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The ``context-inspector`` parser, every subcommand of :data:`SUBCOMMANDS` added; parsing sets
    ``args.handler`` to the chosen command's handler."""
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
    for add in SUBCOMMANDS:
        add(subparsers)
    return parser


def _parse(argv: Sequence[str] | None) -> argparse.Namespace | int:
    """The parsed arguments, or the exit status argparse chose (usage error 2, ``--help`` 0)."""
    try:
        return build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits on usage errors and --help/--version
        return exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_USAGE)


def _internal_error(exc: Exception) -> int:
    """An exception no rule anticipated: one ``error: internal error:`` line (a traceback only with
    ``CONTEXT_INSPECTOR_DEBUG`` set); returns :data:`EXIT_INTERNAL`."""
    if os.environ.get("CONTEXT_INSPECTOR_DEBUG"):
        traceback.print_exc()
    from inspector.redact import mask_text

    print(f"error: internal error: {type(exc).__name__}: {mask_text(str(exc))}", file=sys.stderr)
    return EXIT_INTERNAL


def _run(handler: Handler, args: argparse.Namespace) -> int:
    """Run ``handler`` and turn what it raises into an ``error:`` line and an exit status."""
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
        from inspector.cli.output import error

        error(str(exc))
        return exc.exit_status
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - last line of defence: no traceback for users
        return _internal_error(exc)


def main(argv: Sequence[str] | None = None, *, end_process: bool = False) -> int:
    """Run one command with ``argv`` (default: this process's arguments) and return its exit status
    (see the module's list; argparse usage errors 2, ``--help`` and ``--version`` 0). Raises
    nothing: every error becomes an ``error:`` line on stderr. ``end_process`` (:func:`run`'s):
    a command that succeeds may end the process once its output is flushed, with status 0
    (:func:`inspector.cli.output.end_process`), instead of returning."""
    from inspector.cli.output import install_warning_format
    from inspector.offline import apply_offline_defaults

    apply_offline_defaults()  # this process only: the CLI never reaches the network by itself
    install_warning_format()
    args = _parse(argv)
    if isinstance(args, int):
        return args
    args.end_process = end_process
    return _run(args.handler, args)


def run() -> int:
    """The process's own entry (the ``context-inspector`` console script, ``python -m inspector``):
    :func:`main` with ``end_process``. Why: at exit the interpreter frees every object a long replay
    built and every module and encoding it loaded (about 0.07-0.1 s of CPU, a fifth of a short
    replay), work whose only effect is on a process that is ending (docs/performance.md)."""
    return main(end_process=True)


def _silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush at exit finds no closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (a test's buffer)
        pass

