"""What ships inside the package: the sample manifests, the demo transcripts and the app's entry.

They are package data (``inspector/samples/``, ``inspector/_app/``), so ``pip install
context-inspector`` gives the app and the notebooks everything they open by default, outside a
checkout. In a checkout the same paths lead to ``sample_manifests/`` and ``app.py`` (one copy of
each file, reached through links that the wheel build resolves).
"""

from __future__ import annotations

import argparse
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


def app_script() -> Path:
    """The Streamlit script (the checkout's ``app.py``, shipped inside the package)."""
    return _package_path("_app", "app.py")


def app_command(*, transcript: str | None = None, manifest: str | None = None, port: int = 8501,
                python: str | None = None) -> list[str]:
    """The command that serves the app:
    ``python -m inspector.cli_commands run <app> <flags> -- [options]``
    (:func:`inspector.cli_commands.serve`: ``streamlit run`` with the app's imports and a first
    replay done before the server listens)."""
    cmd = [python or sys.executable, "-m", "inspector.cli_commands", "run", str(app_script()),
           *STREAMLIT_FLAGS, "--server.port", str(port)]
    extra: list[str] = []
    if transcript:
        extra += ["--transcript", str(Path(transcript).resolve())]
    if manifest:
        extra += ["--manifest", str(Path(manifest).resolve())]
    return cmd + (["--", *extra] if extra else [])


@dataclass(frozen=True)
class AppLaunch:
    """What the app was asked to open when it was started (``context-inspector app T --manifest M``)."""

    transcript: Path | None = None
    manifest: Path | None = None


def app_launch(argv: Sequence[str] | None = None) -> AppLaunch:
    """Read the options :func:`app_command` passes after ``--`` (unknown ones are ignored: Streamlit
    may pass its own)."""
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    p.add_argument("--transcript", default=None)
    p.add_argument("--manifest", default=None)
    ns, _ = p.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    return AppLaunch(Path(ns.transcript) if ns.transcript else None, Path(ns.manifest) if ns.manifest else None)
