"""``context-inspector samples [copy NAME [DEST]]``: list the bundled sample manifests and
transcripts, or copy one out to edit.

The samples themselves, their names and the copy (a manifest loses its sample marker, so the copy
is the user's own agent) are :mod:`inspector.bundled`'s; this command lists and reports.
"""

from __future__ import annotations

import argparse
import sys
import textwrap

from inspector.cli import output as co
from inspector.cli.base import EXIT_OK, SubParsers, add_parser
from inspector.errors import UsageError


def add_samples(sub: SubParsers) -> None:
    """Add ``samples`` and its arguments to ``sub``."""
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


def _sample_list() -> str:
    """The samples as a three-column list (name, kind, what it is, wrapped at 100 columns) and a hint."""
    from inspector import bundled

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
    return "\n".join(lines)


def _copy_sample(args: argparse.Namespace) -> None:
    """Copy sample ``args.name`` to ``args.dest`` and say where on stderr. Raises
    :class:`inspector.errors.UsageError` when no name is given, the name is unknown, or the
    destination exists (without ``--force``) or cannot be written."""
    from inspector import bundled

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


def cmd_samples(args: argparse.Namespace) -> int:
    """List the samples on stdout, or copy one out; returns 0. Raises
    :class:`inspector.errors.UsageError` for a stray argument after ``list`` or a failed copy."""
    if args.action == "list":
        if args.name is not None:
            raise UsageError(f"unexpected {args.name!r}: `samples` lists, `samples copy NAME [DEST]` copies")
        co.write(_sample_list(), None)
        return EXIT_OK
    _copy_sample(args)
    return EXIT_OK
