"""What the sidebar offers and what a session reads: the samples, the launch options, the input records.

The manifest and transcript pickers list the files named on the ``context-inspector app`` command
line (:func:`inspector.bundled.app_launch`), the bundled samples and, when that folder exists, the
shared real transcripts. :class:`ManifestInput`, :class:`TranscriptSource` and
:class:`LiveSettings` are what the page's cached functions are keyed on (compared by value). No
Streamlit import: the tests and the server's warm-up (:mod:`inspector.app.first_page`) read the
same choices the page offers.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.bundled import DEMO_MANIFEST, MAX_UPLOAD_MB, AppLaunch, app_launch, sample_manifest_dir
from inspector.manifest import MAX_BYTES as _MANIFEST_MAX
from inspector.policy import is_sample_manifest


ROOT = Path(__file__).resolve().parents[2]


SAMPLE_MANIFEST_DIR = sample_manifest_dir()


SHARED_TRANSCRIPT_DIR = ROOT.parent / "shared" / "data" / "transcripts"


DEFAULT_MANIFEST = DEMO_MANIFEST


DEFAULT_TRANSCRIPT = "demo_support.json"


MAX_TRANSCRIPT_BYTES = MAX_UPLOAD_MB * 1_000_000
"""Uploads and samples above this size are refused with a message (the server also caps uploads)."""


MANIFEST_MAX_BYTES = _MANIFEST_MAX
"""Manifest uploads above the reader's own limit are refused before they reach the editor."""


AGENT_SOURCES = {
    "auto": "The transcript's own, unless the manifest declares its own and is not marked as a sample",
    "transcript": "The transcript's own",
    "manifest": "The manifest's",
}
"""The Q21 switch for the system text and tools (values are :class:`~inspector.policy.ReplayPolicy` sources)."""


MODEL_SOURCES = {
    "auto": "The manifest's if it names one, else the transcript's",
    "transcript": "The transcript's recorded model",
    "manifest": "The manifest's",
}


SUMMARIZER_CHOICES = {
    "stand-in": "Offline stand-in (labelled, not a model)",
    "live": "Live model through litellm",
    "drop": "Drop (no summary at all)",
}


def launch_label(path: Path) -> str:
    """How a file named on the ``context-inspector app`` command line appears in the pickers."""
    return f"opened: {path.name}"


def follow_label(path: Path) -> str:
    """How the file followed with ``context-inspector app --follow FILE`` appears in the picker."""
    return f"live: {path.name}"


def followed(label: Any, launch: AppLaunch | None = None) -> Path | None:
    """The followed file when ``label`` is its picker entry, else None."""
    launch = app_launch() if launch is None else launch
    return launch.follow if launch.follow is not None and label == follow_label(launch.follow) else None


OWN_AGENT = "none: the transcript's own agent"
"""The manifest picker's entry for no manifest at all: the transcript replayed as its own agent
(its system text, tools and recorded model, the default strategy), as ``context-inspector replay
TRANSCRIPT`` does without a manifest. Its editor text is :func:`own_agent_yaml`."""


def own_agent_yaml() -> str:
    """The editor text of :data:`OWN_AGENT`: the policy's no-manifest document
    (:data:`inspector.policy.NO_MANIFEST`) as YAML, so what runs is what the editor shows and an
    edit (a strategy, a window) turns it into the user's own manifest."""
    import yaml

    from inspector.policy import NO_MANIFEST

    return ("# No manifest: the transcript's own system text, tools and recorded model, the default strategy.\n"
            "# Add spec.context_manager, spec.models, ... here to try other settings on this agent.\n"
            + yaml.safe_dump(dict(NO_MANIFEST), sort_keys=False))


def sample_manifests(folder: Path = SAMPLE_MANIFEST_DIR, launch: AppLaunch | None = None) -> dict[str, Path]:
    """The manifest named at launch (if any), then the bundled ones by file name, sorted."""
    launch = app_launch() if launch is None else launch
    out = {launch_label(launch.manifest): launch.manifest} if launch.manifest is not None else {}
    if folder.is_dir():
        out.update({p.name: p for p in sorted(folder.glob("*.yaml"))})
    return out


def manifest_choices(launch: AppLaunch | None = None) -> list[str]:
    """The manifest picker's entries: :func:`sample_manifests`' names, with :data:`OWN_AGENT` after
    a manifest named at launch (first when the app was launched on a transcript alone)."""
    names = list(sample_manifests(launch=launch))
    launched = app_launch() if launch is None else launch
    at = 1 if launched.manifest is not None else 0
    return [*names[:at], OWN_AGENT, *names[at:]]


def default_choices(launch: AppLaunch | None = None) -> tuple[str, str]:
    """The manifest and transcript the app opens on: those named at launch; a transcript named
    without a manifest opens as its own agent (:data:`OWN_AGENT`, like ``context-inspector replay
    TRANSCRIPT``); with neither, the bundled demo under its own sample manifest (:data:`DEMO_MANIFEST`)."""
    launch = app_launch() if launch is None else launch
    if launch.manifest is not None:
        manifest = launch_label(launch.manifest)
    else:
        manifest = OWN_AGENT if launch.transcript is not None or launch.follow is not None else DEFAULT_MANIFEST
    if launch.follow is not None:
        return manifest, follow_label(launch.follow)
    return (manifest, launch_label(launch.transcript) if launch.transcript is not None else DEFAULT_TRANSCRIPT)


def sample_transcripts(shared: Path = SHARED_TRANSCRIPT_DIR, launch: AppLaunch | None = None) -> dict[str, Path]:
    """The transcript named at launch (if any), the project's own demo transcripts, then the shared
    real ones when that folder exists (read in place, never copied)."""
    from importlib import resources

    launch = app_launch() if launch is None else launch
    out: dict[str, Path] = {}
    if launch.follow is not None:  # the live file: first, and listed even before the agent's first call
        out[follow_label(launch.follow)] = launch.follow
    if launch.transcript is not None:
        out[launch_label(launch.transcript)] = launch.transcript
    bundled = Path(str(resources.files("inspector") / "samples"))
    files = [*bundled.glob("*.json"), *bundled.glob("*.jsonl")]  # .jsonl: the provider-usage sample logs
    for p in sorted(files, key=lambda p: (p.name != DEFAULT_TRANSCRIPT, p.name)):
        out[p.name] = p
    if shared.is_dir():
        for p in sorted(shared.glob("*/*")):
            if p.is_file() and p.suffix.lower() not in (".md", ".txt"):
                out[f"shared: {p.parent.name}/{p.name}"] = p
    return out


@dataclass(frozen=True)
class TranscriptSource:
    """Where the transcript bytes come from; ``key`` identifies the bytes without hashing them."""

    name: str
    key: str
    data: bytes


@dataclass(frozen=True)
class ManifestInput:
    """The editor's manifest and how to read it (a cache key: compared by value)."""

    text: str
    name: str
    base_dir: str | None
    lenient: bool


@dataclass(frozen=True)
class LiveSettings:
    """The live summarizer connection typed in the sidebar; only its fingerprint enters cache keys."""

    model: str
    api_base: str
    api_key: str = field(repr=False)
    timeout: float = 30.0

    @property
    def fingerprint(self) -> str:  # the key itself never enters a cache key or the page
        """A short digest of every setting, the key among them: what enters cache keys instead of the key itself."""
        raw = "\0".join((self.model, self.api_base, self.api_key, str(self.timeout)))
        return hashlib.sha256(raw.encode()).hexdigest()[:16]


def is_sample_input(m: ManifestInput) -> bool:
    """Whether the editor's manifest is a bundled sample: what its text declares (the marker
    ``metadata.context-inspector/sample: true``, Q25), whether it was picked, uploaded or edited; a
    text that does not load is not a sample (the page reports why)."""
    return _text_is_sample(m.text)


@functools.lru_cache(maxsize=32)
def _text_is_sample(text: str) -> bool:
    """The marker of a manifest text, read once per text (the page asks on every rerun)."""
    from inspector.errors import InspectorError
    from inspector.manifest import load_manifest_text

    try:
        return is_sample_manifest(load_manifest_text(text))
    except (InspectorError, ValueError, TypeError):
        return False


def too_large(size: int, limit: int | None = None) -> str | None:
    """Why a file of ``size`` bytes is refused (over ``limit``, by default :data:`MAX_TRANSCRIPT_BYTES`),
    or None when it is not too large."""
    limit = MAX_TRANSCRIPT_BYTES if limit is None else limit
    if size > limit:
        return f"file is too large ({size:,} bytes; the limit is {limit:,})"
    return None


def effective_summarizer(settings: Any, choice: str) -> str:
    """The ``replay(summarizer=...)`` value for a UI choice, through the one policy (Q22).

    ``stand-in`` and ``live`` are the policy's ``auto`` without / with the live model (the stand-in
    replaces only an ``llm`` summarizer: a manifest that says ``drop`` or names a custom summarizer
    keeps it); ``drop`` is drop."""
    from inspector.policy import summarizer_choice

    return summarizer_choice(settings, "drop" if choice == "drop" else "auto", live=choice == "live")


PREFIX_CHOICES: dict[str, str] = {"none": "not added", "auto": "estimated (fitted offset)"}
"""The app's switch for the unrecorded prefix (``--unrecorded-prefix``): not added, or the estimate."""


def prefix_choice_default(launch: AppLaunch | None = None) -> str:
    """``auto`` when the app was started with ``--unrecorded-prefix auto`` (or a number), else ``none``."""
    launch = app_launch() if launch is None else launch
    return "auto" if launch.unrecorded_prefix not in (None, "", "0") else "none"


def prefix_value(choice: Any, launch: AppLaunch | None = None) -> str | int | None:
    """The replay's ``unrecorded_prefix`` for the switch: None, ``"auto"``, or the number given at launch."""
    if choice != "auto":
        return None
    launch = app_launch() if launch is None else launch
    given = launch.unrecorded_prefix
    return int(given) if given is not None and given.isdigit() and given != "0" else "auto"
