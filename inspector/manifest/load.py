"""Public entry points: YAML file/text/dict → :class:`LoadedManifest`.

Every failure surfaces as :class:`~inspector.manifest.settings.ManifestError` (or its subclasses
:class:`ManifestReadError` for an unusable file and :class:`UnknownPluginError` for an unknown
plugin name), never as a YAML, OS or pydantic exception, so callers need exactly one ``except``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from inspector.manifest._collect import Collector
from inspector.manifest._yaml import MAX_BYTES, LineIndex, parse_documents
from inspector.manifest.build import build
from inspector.manifest.settings import ContextSettings, Issue, LoadedManifest, ManifestError, ManifestReadError, Mode


def load_manifest(path: str | Path, *, mode: Mode = "assemble", allow_imports: Iterable[str] = (),
                  overrides: Iterable[str] = ()) -> LoadedManifest:
    """Read a manifest file. Relative context files resolve against (and are confined to) the
    file's directory; ``sample:NAME`` names a bundled sample. ``overrides`` are ``PATH=VALUE`` strings applied before reading (``--set``)."""
    from inspector.bundled import resolve_sample

    try:
        p = resolve_sample(path)  # ``sample:NAME``: a bundled sample, wherever the package is
    except FileNotFoundError as exc:
        raise ManifestReadError([Issue("", str(exc), None, str(path))]) from None
    file = str(p)
    try:
        size = p.stat().st_size
        if not p.is_file():
            raise ManifestReadError([Issue("", "cannot read: not a regular file", None, file)])
        if size > MAX_BYTES:
            raise ManifestReadError([Issue("", f"file is too large ({size:,} bytes; the limit is {MAX_BYTES:,})",
                                           None, file)])
        with p.open("rb") as fh:
            data = fh.read(MAX_BYTES + 1)  # a file growing under us still cannot exceed the cap
    except OSError as exc:
        raise ManifestReadError([Issue("", f"cannot read: {exc.strerror or exc}", None, file)]) from None
    except ValueError as exc:  # e.g. an embedded NUL in the path
        raise ManifestReadError([Issue("", f"cannot read: {exc}", None, file)]) from None
    return load_manifest_text(data, file=file, base_dir=p.parent, mode=mode, allow_imports=allow_imports,
                              overrides=overrides)


ManifestSource = str | Path | Mapping[str, Any] | LoadedManifest | ContextSettings
"""Every form a manifest can be handed to the engine in: a path, a parsed document, a loaded manifest
or its settings."""


def as_settings(manifest: ManifestSource, allow_imports: Iterable[str] = ()) -> ContextSettings:
    """The :class:`ContextSettings` of any :data:`ManifestSource` (a path or a document is read in
    assemble mode). The one conversion the engine, the replay and the observed mode share, so the
    engine's entry takes typed settings instead of duck-typing its argument."""
    if isinstance(manifest, ContextSettings):
        return manifest
    if isinstance(manifest, LoadedManifest):
        return manifest.settings
    if isinstance(manifest, (str, Path)):
        return load_manifest(manifest, allow_imports=allow_imports).settings
    if isinstance(manifest, Mapping):
        return settings_from_dict(dict(manifest), allow_imports=allow_imports).settings
    raise TypeError(f"expected a manifest path, dict, LoadedManifest or ContextSettings, got {type(manifest).__name__}")


def load_manifest_text(text: str | bytes, *, file: str | None = None, base_dir: Path | None = None,
                       mode: Mode = "assemble", allow_imports: Iterable[str] = (),
                       overrides: Iterable[str] = ()) -> LoadedManifest:
    """Read manifest YAML from memory (one or more documents). Without ``base_dir`` no context
    file is ever read (chunks that need one are skipped with a warning)."""
    docs, lines, duplicates = parse_documents(text, file)
    return _load(docs, lines, duplicates, mode=mode, file=file, base_dir=base_dir,
                 allow_imports=allow_imports, overrides=overrides)


def settings_from_dict(doc: dict[str, Any], *, mode: Mode = "assemble", base_dir: Path | None = None,
                       file: str | None = None, allow_imports: Iterable[str] = (),
                       infra_documents: Sequence[dict[str, Any]] = (),
                       overrides: Iterable[str] = ()) -> LoadedManifest:
    """Read an already-parsed Agent document (e.g. after :func:`set_dotted` or an overlay).
    Issues carry no line numbers. ``infra_documents`` are extra LLMProxy/LLMLocal/Infra documents."""
    return _load([doc, *infra_documents], None, [], mode=mode, file=file, base_dir=base_dir,
                 allow_imports=allow_imports, overrides=overrides)


def _load(docs: list[Any], lines: LineIndex | None, duplicates: list[Issue], *, mode: Mode, file: str | None,
          base_dir: Path | None, allow_imports: Iterable[str], overrides: Iterable[str]) -> LoadedManifest:
    if mode not in ("assemble", "validate"):
        raise ValueError(f"mode must be 'assemble' or 'validate', not {mode!r}")
    col = Collector(mode, file=file, locate=lines.line if lines is not None else None)
    col.errors.extend(duplicates)
    try:
        raw, settings = build(docs, col, base_dir=base_dir, allow_imports=allow_imports, overrides=overrides)
    except ManifestError as exc:
        if not exc.warnings and col.warnings:
            exc.warnings = list(col.warnings)
        raise
    documents = tuple(d for d in docs if isinstance(d, dict))
    return LoadedManifest(raw=raw, settings=settings, warnings=tuple(col.warnings), file=file, documents=documents)
