"""Digest of every replay a restructuring must leave byte-identical.

Runs ``context-inspector replay --format json --payloads`` (in-process, through the CLI's own
``main``) for every bundled sample transcript and every public transcript under ``../shared`` (when
present), under every bundled sample manifest and under none (the transcript's own agent), and prints
one line per run: the SHA-256 of the JSON written, the manifest and the transcript. Save the output
before a change and compare it after::

    .venv/bin/python scripts/replay_digests.py > /tmp/before.txt
    # ... restructure ...
    .venv/bin/python scripts/replay_digests.py | diff /tmp/before.txt -

A run that fails prints its exit status in place of the digest (and must fail the same way after).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CONTEXT_INSPECTOR_SHARED_DATA", ROOT.parent / "shared" / "data" / "transcripts"))
# Multi-conversation files: the first few conversations keep the run short and still cover the format.
CONVERSATIONS = {"gpt-4o-airline.json": "0-4", "toolorchestra_airline_gpt-5_1trial.json": "0-4"}


def transcripts() -> list[Path]:
    """The bundled sample transcripts, then the public ones under ``../shared`` (when present)."""
    samples = sorted(p for p in (ROOT / "inspector" / "samples").iterdir()
                     if p.is_file() and p.suffix in {".json", ".jsonl"} and p.name != "planted_facts.json")
    shared = sorted(p for p in SHARED.rglob("*") if p.is_file() and p.name != "SOURCES.md") if SHARED.is_dir() else []
    return samples + shared


def manifests() -> list[str | None]:
    """Every bundled sample manifest (as ``sample:NAME``) and ``None``: the transcript's own agent."""
    names = sorted(p.stem for p in (ROOT / "inspector" / "samples" / "manifests").glob("*.yaml"))
    return [f"sample:{n}" for n in names] + [None]


def digest(manifest: str | None, transcript: Path, out: Path) -> str:
    """The SHA-256 of one replay's JSON, or ``exit N`` when the command fails."""
    from inspector.cli import main

    # From the transcript's own folder, by its bare name: the JSON records the path as given, and the
    # same file must give the same bytes from any checkout.
    argv = ["replay", *([manifest] if manifest else []), transcript.name, "--format", "json", "--payloads",
            "-o", str(out)]
    if transcript.name in CONVERSATIONS:
        argv += ["--conversation", CONVERSATIONS[transcript.name]]
    with (contextlib.chdir(transcript.parent), contextlib.redirect_stderr(io.StringIO()),
          contextlib.redirect_stdout(io.StringIO())):
        status = main(argv)
    if status != 0:
        return f"exit {status}"
    return hashlib.sha256(out.read_bytes()).hexdigest()


def run() -> int:
    """Print one digest line per (manifest, transcript) run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "replay.json"
        for t in transcripts():
            name = t.relative_to(ROOT) if t.is_relative_to(ROOT) else t.relative_to(SHARED.parent.parent.parent)
            for m in manifests():
                print(digest(m, t, out), m or "(own agent)", name, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run())
