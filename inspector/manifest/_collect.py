"""Issue collection shared by every manifest reader (private).

One collector per load. Readers never raise on bad content; they report and continue, so validate
mode can list *all* errors at once. The mode decides what a "strict" finding becomes: an error in
validate mode, a warning (or nothing) in assemble mode, where the runtime is lenient by design.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from inspector.manifest.settings import Issue, ManifestError, Mode, UnknownPluginError
from inspector.params import describe

__all__ = ["Collector", "Locator", "Path_", "PathPart", "describe", "dotted"]

PathPart = str | int
Path_ = tuple[PathPart, ...]
Locator = Callable[[int, Path_], "int | None"]


def dotted(parts: Sequence[PathPart]) -> str:
    """``("spec", "models", 0, "model")`` → ``spec.models[0].model``."""
    out = ""
    for p in parts:
        if isinstance(p, int) and not isinstance(p, bool):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


@dataclass
class Collector:
    """The issues found while reading one manifest: errors, warnings and deprecations, each with its
    field path and (when a locator is given) its line.

    ``mode`` decides how strict the reading is: ``validate`` makes every doubtful value an error,
    the lenient modes turn some of them into warnings and fall back to a default, as the runtime does.
    """

    mode: Mode
    file: str | None = None
    locate: Locator | None = None
    doc: int = 0
    """Index of the document paths refer to by default (the Agent document)."""
    doc_prefix: dict[int, str] = field(default_factory=dict)
    """Display prefix for paths in other documents, e.g. ``documents[1].``."""
    errors: list[Issue] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)
    deprecated: list[str] = field(default_factory=list)
    deprecated_issues: list[Issue] = field(default_factory=list)
    unknown_plugin: bool = False

    @property
    def strict(self) -> bool:
        """True when reading for ``validate``: a doubtful value is an error, not a warning."""
        return self.mode == "validate"

    def issue(self, path: Path_, message: str, severity: Literal["error", "warning"], doc: int | None = None) -> Issue:
        """An :class:`Issue` at ``path`` of document ``doc`` (default: the Agent document), with its
        line when the locator finds it; the issue is returned, not recorded."""
        d = self.doc if doc is None else doc
        line = self.locate(d, path) if self.locate is not None else None
        return Issue(self.doc_prefix.get(d, "") + dotted(path), message, line, self.file, severity)

    def error(self, path: Path_, message: str, *, doc: int | None = None) -> None:
        """An error in every mode (the runtime would fail too)."""
        self.errors.append(self.issue(path, message, "error", doc))

    def warn(self, path: Path_, message: str, *, doc: int | None = None, validate_only: bool = False) -> None:
        """Record a warning at ``path``; with ``validate_only`` only when reading for ``validate``."""
        if validate_only and not self.strict:
            return
        self.warnings.append(self.issue(path, message, "warning", doc))

    def invalid(self, path: Path_, message: str, *, lenient: Literal["warn", "silent"] = "warn",
                doc: int | None = None) -> None:
        """Error in validate mode; in assemble mode the caller falls back to a default and this
        becomes a warning (or nothing, where the runtime is silently lenient)."""
        if self.strict:
            self.error(path, message, doc=doc)
        elif lenient == "warn":
            self.warn(path, message, doc=doc)

    def unknown(self, path: Path_, message: str) -> None:
        """Record an error for a plugin name the registry does not know; :meth:`raise_if_errors`
        then raises :class:`UnknownPluginError` rather than :class:`ManifestError`."""
        self.unknown_plugin = True
        self.error(path, message)

    def deprecate(self, path: Path_, message: str) -> None:
        """Record a deprecated field: accepted and ignored, with a warning at ``path``."""
        self.deprecated.append(f"{dotted(path)} is accepted and ignored (deprecated)")
        self.warn(path, message)
        self.deprecated_issues.append(self.warnings[-1])

    def sort(self) -> None:
        """Order issues by line (stable; issues without a line keep their order, last), which is
        how a reader walks the file."""
        key = lambda i: (i.line is None, i.line or 0)  # noqa: E731
        self.errors.sort(key=key)
        self.warnings.sort(key=key)

    def raise_if_errors(self) -> None:
        """Sort the issues by line and raise when there is any error.

        Raises :class:`UnknownPluginError` when an error names an unknown plugin, else
        :class:`ManifestError`; both carry every error and the warnings."""
        self.sort()
        if self.errors:
            cls = UnknownPluginError if self.unknown_plugin else ManifestError
            raise cls(self.errors, warnings=self.warnings)


def first_not_json(value: Any, where: Path_) -> tuple[Path_, Any] | None:
    """The path and value of the first part of ``value`` that JSON cannot write (a YAML date, a set, a
    mapping with a key that is not a string), or None when all of it is JSON."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return where + (str(key),), key
            found = first_not_json(item, where + (key,))
            if found is not None:
                return found
        return None
    if isinstance(value, list):
        for k, item in enumerate(value):
            found = first_not_json(item, where + (k,))
            if found is not None:
                return found
        return None
    return where, value
