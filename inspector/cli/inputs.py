"""What a command reads: file arguments (``sample:NAME`` included), the manifest, the transcripts,
and the checks made on them before any work starts.

A missing, unreadable or unwritable file, a manifest where the transcript belongs (or both
swapped) is a :class:`inspector.errors.UsageError` (exit 2) said in words before the work, never a
traceback. :func:`guard` wraps every handler that reads files with these checks.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from inspector.cli import output as co
from inspector.cli.base import EXIT_USAGE, Handler, load_manifest_from_args
from inspector.errors import UsageError

TRANSCRIPT_SUFFIXES = (".json", ".jsonl", ".traj", ".af", ".eval", ".zip")
"""Suffixes that name a transcript (a manifest is ``.yaml``/``.yml``)."""


# --- files --------------------------------------------------------------------------------------

def require_file(path: str, what: str) -> None:
    """Check that ``path`` is a readable file. Raises :class:`inspector.errors.UsageError` (exit 2)
    naming the file and ``what`` it is (``"transcript"``, ``"manifest"``) when it is missing, a
    folder or not readable."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such {what} file")
    if not p.is_file():
        raise UsageError(f"{path}: the {what} is not a file")
    if not os.access(p, os.R_OK):
        raise UsageError(f"{path}: the {what} file is not readable")


def check_writable(out: str | None) -> None:
    """Check that ``out`` (``-o FILE`` or ``--fleet-summary FILE``; None: stdout) can be written,
    before any work is done. Nothing is created or changed by the check. Raises
    :class:`inspector.errors.UsageError` when it is a folder, its folder is missing or permission
    is denied."""
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


def kind_by_suffix(path: str) -> str | None:
    """``"manifest"`` or ``"transcript"`` as ``path``'s suffix says, None when it says neither."""
    from inspector.policy import MANIFEST_SUFFIXES

    low = path.lower()
    return "manifest" if low.endswith(MANIFEST_SUFFIXES) else "transcript" if low.endswith(TRANSCRIPT_SUFFIXES) \
        else None


def file_label(t: Any) -> str:
    """How tables and messages name transcript ``t``: its file's name (``<transcript>`` without one)."""
    return Path(t.path).name if getattr(t, "path", None) else "<transcript>"


# --- bundled samples ----------------------------------------------------------------------------

def _sample_path(text: str) -> str:
    """``text`` itself, or the packaged file when it is ``sample:NAME``."""
    from inspector.bundled import SAMPLE_SCHEME, resolve_sample

    if not text.startswith(SAMPLE_SCHEME):
        return text
    try:
        return str(resolve_sample(text))
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None


def resolve_samples(args: argparse.Namespace) -> None:
    """Replace every ``sample:NAME`` among the command's file arguments in ``args`` (``manifest``,
    ``transcript``, ``file``, ``paths``, the specs of ``--strategy``) by the packaged file. Raises
    :class:`inspector.errors.UsageError` naming the samples there are when a name is unknown."""
    for key in ("manifest", "transcript", "file"):
        value = getattr(args, key, None)
        if isinstance(value, str):
            setattr(args, key, _sample_path(value))
    if isinstance(getattr(args, "paths", None), list):
        args.paths = [_sample_path(p) for p in args.paths]
    if isinstance(getattr(args, "strategy", None), list):
        args.strategy = [(name, _sample_path(spec.strip()) if spec.strip().startswith("sample:") else spec)
                         for name, spec in args.strategy]


# --- the argument order -------------------------------------------------------------------------

def check_argument_order(args: argparse.Namespace) -> None:
    """A manifest where the transcript belongs (or both swapped) is said in words, naming which is
    which. Raises :class:`inspector.errors.UsageError` then; judged by the files' suffixes."""
    manifest, transcript = getattr(args, "manifest", ""), getattr(args, "transcript", "")
    if not isinstance(transcript, str) or kind_by_suffix(transcript) != "manifest":
        return
    if manifest is None:
        raise UsageError(f"{transcript} is a manifest; give a TRANSCRIPT after it")
    if isinstance(manifest, str) and kind_by_suffix(manifest) == "transcript":
        raise UsageError(f"the arguments are swapped: {manifest} is the transcript and {transcript} the manifest; "
                         f"give the MANIFEST first, then the TRANSCRIPT")


def split_paths(args: argparse.Namespace) -> None:
    """Split ``[MANIFEST] TRANSCRIPT...`` (``args.paths``) into ``args.manifest`` (or None) and
    ``args.transcripts``. Raises :class:`inspector.errors.UsageError` when no transcript is given or
    a manifest follows a transcript."""
    from inspector.policy import split_manifest_argument

    args.manifest, args.transcripts = split_manifest_argument(args.paths)
    if not args.transcripts:
        raise UsageError("give at least one TRANSCRIPT")
    late = next((t for t in args.transcripts if kind_by_suffix(t) == "manifest"), None)
    if late is not None:
        raise UsageError(f"{late} is a manifest, given after a transcript: give the MANIFEST first, then the "
                         f"TRANSCRIPTs")


# --- manifests ----------------------------------------------------------------------------------

def not_a_manifest(path: str) -> str | None:
    """What to say when a transcript was given where the manifest belongs (judged by its suffix);
    None when ``path`` does not look like a transcript."""
    if kind_by_suffix(path) != "transcript":
        return None
    return (f"{path} is a transcript, not an agent manifest (YAML): give the MANIFEST first, then the "
            f"TRANSCRIPT, or leave the manifest out to replay the transcript as its own agent")


def _load_manifest(args: argparse.Namespace) -> Any:
    """The manifest ``args.manifest``, loaded with the command's options; a transcript given there
    is a usage error saying so, any other invalid manifest its :class:`ManifestError`."""
    from inspector.manifest import ManifestError

    require_file(args.manifest, "manifest")
    try:
        return load_manifest_from_args(args, args.manifest)
    except ManifestError as exc:
        hint = not_a_manifest(args.manifest)
        if hint is None:
            raise
        raise UsageError(hint) from exc


def manifest_or_none(args: argparse.Namespace) -> Any:
    """The manifest given (a :class:`inspector.manifest.LoadedManifest`), or, none given, the
    transcript's own agent (:data:`inspector.policy.NO_MANIFEST`) with the ``--set`` overrides.
    Raises :class:`inspector.errors.UsageError` for an unusable file and
    :class:`inspector.manifest.ManifestError` for invalid content."""
    if args.manifest is not None:
        return _load_manifest(args)
    from inspector.manifest import settings_from_dict
    from inspector.policy import NO_MANIFEST

    return settings_from_dict(dict(NO_MANIFEST), allow_imports=args.allow_imports, overrides=args.overrides)


# --- transcripts --------------------------------------------------------------------------------

def _transcripts(args: argparse.Namespace, paths: Sequence[str]) -> Iterator[Any]:
    """Every selected conversation (``--conversation``) of every file, in order; every file is
    checked before the first is read."""
    from inspector.transcripts.selection import select_transcripts

    for path in paths:
        require_file(path, "transcript")
    for path in paths:
        yield from select_transcripts(path, args.conversation, format=args.transcript_format)


def collect(args: argparse.Namespace, paths: Sequence[str]) -> list[Any]:
    """Import the selected conversations of the transcript files ``paths`` (a spinner on a terminal:
    a big file takes a while). Raises :class:`inspector.errors.UsageError` for a file that cannot
    be read and :class:`inspector.transcripts.TranscriptError` for content no importer accepts."""
    with co.spinner(f"importing {', '.join(Path(p).name for p in paths)}"):
        return list(_transcripts(args, paths))


# --- the handlers' wrapper ----------------------------------------------------------------------

def guard(fn: Handler) -> Callable[[argparse.Namespace], int]:
    """``fn`` with the checks every file-reading handler makes first: ``sample:NAME`` resolved, the
    argument order and the output files checked, the over-budget log notices silenced (they are part
    of every frame's record). An unreadable file met during the work exits 2. Every deliberate error
    (bad transcript, model mapping, plugin, calibration, late usage error: an
    :class:`inspector.errors.InspectorError`) goes on to :func:`inspector.cli.main`, which prints it
    with its kind's exit status. Never a traceback."""

    def run(args: argparse.Namespace) -> int:
        import logging

        logging.getLogger("inspector").setLevel(logging.ERROR)
        resolve_samples(args)
        check_argument_order(args)
        for out in (getattr(args, "output", None), getattr(args, "fleet_summary", None)):
            check_writable(out)  # before the work: a replay of an hour must not end on "cannot write"
        try:
            return fn(args)
        except BrokenPipeError:  # the reader of stdout has gone: inspector.cli._run ends quietly (141)
            raise
        except OSError as exc:
            co.error(str(exc))
            return EXIT_USAGE

    return run
