"""What ships inside the package: the sample manifests, the demo transcripts and the app's entry.

They are package data (``inspector/samples/``, ``inspector/_app/``), so ``pip install
context-inspector`` gives the app and the notebooks everything they open by default, outside a
checkout. In a checkout the same paths lead to ``sample_manifests/`` and ``app.py`` (one copy of
each file, reached through links that the wheel build resolves).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

MAX_UPLOAD_MB = 50
"""The largest file the app accepts, in MB (transcripts, manifests, fleet files alike)."""

STREAMLIT_FLAGS: tuple[str, ...] = (
    "--server.headless", "true", "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
    "--server.maxUploadSize", str(MAX_UPLOAD_MB), "--server.fileWatcherType", "none",
    "--client.toolbarMode", "minimal",
)
"""How the app is served (``make run`` and ``context-inspector app`` alike): local only, headless,
no usage statistics, uploads capped, no file watcher (watching a checkout with its ``.venv``
overflows inotify and keeps a core busy; the app needs no reloads), no deploy button. Given as
flags because ``.streamlit/config.toml`` is only read when the server starts in the checkout; that
file repeats them for a plain ``streamlit run app.py`` there (a test holds the two equal). The port
is added separately."""


def _package_path(*parts: str) -> Path:
    return Path(str(resources.files("inspector").joinpath(*parts)))


DEMO_MANIFEST = "support-demo.yaml"
"""The sample manifest designed with the bundled demo conversation: the app and ``context-inspector
app`` open the demo under it (every mechanism shows in that one conversation)."""


def sample_manifest_dir() -> Path:
    """The folder of bundled sample manifests."""
    return _package_path("samples", "manifests")


def sample_manifest(name: str = DEMO_MANIFEST) -> Path:
    """Path of one bundled sample manifest (default: the demo's own, :data:`DEMO_MANIFEST`);
    :class:`FileNotFoundError` names the ones there are."""
    path = sample_manifest_dir() / name
    if not path.is_file():
        known = ", ".join(p.name for p in sorted(sample_manifest_dir().glob("*.yaml")))
        raise FileNotFoundError(f"no bundled sample manifest {name!r} (bundled: {known})")
    return path


def find_file(path: str | Path, root: Path | None = None) -> Path:
    """``path`` as given when it exists; else under ``root``; else, when it names a bundled file by
    its checkout path (``sample_manifests/X.yaml``, ``inspector/samples/X.json``), the packaged copy —
    so notebooks written against a checkout also run from a plain ``pip install``. Otherwise
    ``path`` unchanged (the caller's own error then names it)."""
    p = Path(path).expanduser()
    if p.is_absolute() or p.exists():
        return p
    if root is not None and (root / p).exists():
        return root / p
    parts = p.parts
    if len(parts) == 2 and parts[0] == "sample_manifests":
        candidate = sample_manifest_dir() / parts[1]
    elif len(parts) == 3 and parts[:2] == ("inspector", "samples"):
        candidate = _package_path("samples", parts[2])
    else:
        return p
    return candidate if candidate.is_file() else p


# --- samples by name: ``sample:NAME`` -------------------------------------------------------------

SAMPLE_SCHEME = "sample:"
"""``sample:NAME`` names a bundled sample wherever a manifest or transcript path is taken (the CLI,
:func:`inspector.manifest.load_manifest`, :func:`inspector.transcripts.load_transcript`): the same
name works in a checkout and after ``pip install``. A bare name is always the user's own file."""

SAMPLE_MARKER = "context-inspector/sample"
"""``metadata.context-inspector/sample: true`` marks a bundled sample manifest (decision Q25): a sample
describes some other agent, so a replay under it keeps the transcript's own system text and tools.
The file behaves the same wherever it lies (checkout, installed package, a plain copy);
:func:`copy_sample` writes a copy without the marker, which is then the user's own agent."""

_MARKER_LINE = re.compile(rf"^[ \t]*{re.escape(SAMPLE_MARKER)}[ \t]*:.*(?:\r?\n|$)", re.MULTILINE)

SAMPLE_TRANSCRIPTS: dict[str, str] = {
    "demo_support.json": "OpenAI chat: airline support, parallel tool calls, a long log, an interrupted "
                         "tool round",
    "demo_support.anthropic.json": "the same conversation as Anthropic Messages",
    "demo_calls.openai-log.jsonl": "OpenAI request/response log: usage per call (calibrate, observed)",
    "demo_session.claude-code.jsonl": "Claude Code session log: usage per call (calibrate)",
    "planted_facts.json": "OpenAI chat: facts stated early and used late (forgotten references)",
}
"""The bundled transcripts (``inspector/samples/``) and what each one is."""


@dataclass(frozen=True)
class Sample:
    """One bundled sample: its name (``sample:NAME``), kind, file and a line about it."""

    name: str
    kind: str
    """``manifest`` | ``transcript``."""
    path: Path
    about: str


def _manifest_about(path: Path) -> str:
    """The first comment line of a sample manifest, without its file name."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").split(" — ", 1)[-1].strip().rstrip(".")
    return ""


def samples() -> list[Sample]:
    """Every bundled sample, manifests first, each by the name ``sample:NAME`` takes (the file name
    without its last suffix; the whole file name works too)."""
    out = [Sample(p.stem, "manifest", p, _manifest_about(p)) for p in sorted(sample_manifest_dir().glob("*.yaml"))]
    out += [Sample(Path(name).stem, "transcript", _package_path("samples", name), about)
            for name, about in SAMPLE_TRANSCRIPTS.items() if _package_path("samples", name).is_file()]
    return out


def find_sample(name: str) -> Sample:
    """The sample called ``name`` (``small-window``, ``small-window.yaml`` or ``sample:small-window``);
    :class:`FileNotFoundError` names every sample there is."""
    bare = name[len(SAMPLE_SCHEME):] if name.startswith(SAMPLE_SCHEME) else name
    for s in samples():
        if bare in (s.name, s.path.name):
            return s
    known = ", ".join(s.name for s in samples())
    raise FileNotFoundError(f"no bundled sample {bare!r} (bundled: {known}; `context-inspector samples` lists them)")


def resolve_sample(path: str | os.PathLike[str]) -> Path:
    """``sample:NAME`` → the packaged file; any other path unchanged. An unknown name raises
    :class:`FileNotFoundError` naming the samples there are."""
    text = str(path)
    if isinstance(path, str) and text.startswith(SAMPLE_SCHEME):
        return find_sample(text).path
    return Path(path)


def unmarked(text: str) -> str:
    """A sample manifest's text without its marker line (comments and layout kept)."""
    return _MARKER_LINE.sub("", text)


def copy_sample(name: str, dest: str | Path | None = None, *, overwrite: bool = False) -> Path:
    """Copy the sample ``name`` to ``dest`` (a file, or a folder to copy it into; default: the
    current folder under the sample's file name), a manifest without its marker: the copy is the
    user's own agent (Q25). Refuses to overwrite a file unless ``overwrite``."""
    sample = find_sample(name)
    target = Path(dest) if dest is not None else Path(sample.path.name)
    if target.is_dir():
        target = target / sample.path.name
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target}: already exists (choose another DEST, or --force to overwrite it)")
    data = sample.path.read_bytes()
    if sample.kind == "manifest":
        data = unmarked(data.decode("utf-8")).encode("utf-8")
    target.write_bytes(data)
    return target


def app_script() -> Path:
    """The Streamlit script (the checkout's ``app.py``, shipped inside the package)."""
    return _package_path("_app", "app.py")


def app_command(*, transcript: str | None = None, manifest: str | None = None, port: int = 8501,
                python: str | None = None, unrecorded_prefix: str | int | None = None,
                follow: str | None = None) -> list[str]:
    """The command that serves the app:
    ``python -m inspector.cli.app_server run <app> <flags> -- [options]``
    (:func:`inspector.cli.app_server.serve`: ``streamlit run`` with the app's imports and a first
    replay done before the server listens)."""
    cmd = [python or sys.executable, "-m", "inspector.cli.app_server", "run", str(app_script()),
           *STREAMLIT_FLAGS, "--server.port", str(port)]
    extra: list[str] = []
    if transcript:
        extra += ["--transcript", str(Path(transcript).resolve())]
    if manifest:
        extra += ["--manifest", str(Path(manifest).resolve())]
    if unrecorded_prefix is not None:
        extra += ["--unrecorded-prefix", str(unrecorded_prefix)]
    if follow:
        extra += ["--follow", str(Path(follow).resolve())]
    return cmd + (["--", *extra] if extra else [])


@dataclass(frozen=True)
class AppLaunch:
    """What the app was asked to open when it was started (``context-inspector app T --manifest M``)."""

    transcript: Path | None = None
    manifest: Path | None = None
    unrecorded_prefix: str | None = None  # "auto" or a number of tokens, as --unrecorded-prefix
    follow: Path | None = None  # a JSON Lines file of live calls to follow (``inspector.live``)


def app_launch(argv: Sequence[str] | None = None) -> AppLaunch:
    """Read the options :func:`app_command` passes after ``--`` (unknown ones are ignored: Streamlit
    may pass its own)."""
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    p.add_argument("--transcript", default=None)
    p.add_argument("--manifest", default=None)
    p.add_argument("--unrecorded-prefix", dest="unrecorded_prefix", default=None)
    p.add_argument("--follow", default=None)
    ns, _ = p.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    return AppLaunch(Path(ns.transcript) if ns.transcript else None, Path(ns.manifest) if ns.manifest else None,
                     ns.unrecorded_prefix, Path(ns.follow) if ns.follow else None)
