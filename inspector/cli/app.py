"""``context-inspector app [TRANSCRIPT] [--manifest FILE]``: start the inspector app (Streamlit) in
the browser, with the settings of ``make run`` (bound to 127.0.0.1, no usage statistics, headless).

:func:`inspector.bundled.app_command` builds the server's command line (it runs
:mod:`inspector.cli.app_server`); on POSIX this process becomes the server, so Ctrl-C and
termination reach Streamlit itself. ``--dry-run`` prints the command instead.
"""

from __future__ import annotations

import argparse
import os
import sys

from inspector.cli.base import EXIT_OK, SubParsers, add_parser
from inspector.cli.inputs import guard, require_file
from inspector.cli.options import add_prefix_option
from inspector.errors import UsageError


def add_app(sub: SubParsers) -> None:
    """Add ``app`` and its options to ``sub`` (``--port`` defaults to ``$PORT``, else 8501)."""
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
    p.add_argument("--manifest", default=None, metavar="FILE",
                   help="open this manifest (default: none for a TRANSCRIPT, which then runs as its own agent; "
                        "the bundled support-demo sample for the demo)")
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8501")), help="port to serve on")
    p.add_argument("--follow", default=None, metavar="FILE",
                   help="follow a live JSON Lines file of model calls (written by inspector.live.JsonlLogger): new "
                        "calls appear as they arrive; the file may not exist yet")
    add_prefix_option(p)
    p.add_argument("--dry-run", action="store_true", help="print the streamlit command instead of running it")
    p.set_defaults(handler=guard(cmd_app))


def cmd_app(args: argparse.Namespace) -> int:
    """Start the server (on POSIX, never returns: this process becomes it), or print its command
    with ``--dry-run``; returns the server's exit status elsewhere. Raises
    :class:`inspector.errors.UsageError` for an unreadable file or a TRANSCRIPT given with ``--follow``."""
    from inspector.bundled import app_command

    for path, what in ((args.transcript, "transcript"), (args.manifest, "manifest")):
        if path is not None:
            require_file(path, what)
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
