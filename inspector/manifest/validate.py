"""``validate``: the strict, compile-time reading of a manifest, as a non-raising function."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from inspector.manifest.load import load_manifest
from inspector.manifest.settings import Issue, ManifestError


def validate_file(path: str | Path, *, allow_imports: Iterable[str] = (),
                  overrides: Iterable[str] = ()) -> tuple[list[Issue], list[Issue]]:
    """Return ``(errors, warnings)`` for a manifest file in validate mode. Never raises for bad
    content or an unreadable file: those come back as errors (the CLI tells them apart through
    :func:`~inspector.manifest.load.load_manifest` raising :class:`ManifestReadError`)."""
    try:
        loaded = load_manifest(path, mode="validate", allow_imports=allow_imports, overrides=overrides)
    except ManifestError as exc:
        return list(exc.issues), list(exc.warnings)
    return [], list(loaded.warnings)
