"""The one root of every error the package raises on purpose (the lowest layer: imports nothing).

Every kind the package raises for bad input or an unusable setting — a manifest, a transcript, a
plugin name, a model mapping, a calibration, a snapshot, a provider payload, an LLM call, a Dask
fleet, a command line — derives from :class:`InspectorError`, so a face (the CLI, the app, the
notebook helpers) catches that one class instead of retyping a list of kinds. Each kind keeps its
historical built-in base as well (``ValueError``, ``LookupError``, ``RuntimeError``), so code written
against those bases still catches it.

:attr:`InspectorError.exit_status` is the CLI's exit status for the kind (1: the input is invalid;
2: the file or the command line itself is unusable), written once here and read by the CLI.
"""

from __future__ import annotations

EXIT_INVALID = 1
"""Exit status for input that was read but is invalid."""
EXIT_USAGE = 2
"""Exit status for a command line or a file that cannot be used at all."""


class InspectorError(Exception):
    """Root of the package's deliberate errors. ``str()`` is the user-facing message (it names the
    file, line or field when known); faces print it after ``error:`` and never show a traceback."""

    exit_status: int = EXIT_INVALID


class UsageError(InspectorError):
    """A command-line mistake found after parsing (exit 2, ``error: <message>``)."""

    exit_status = EXIT_USAGE


class PluginLookupError(InspectorError, LookupError):
    """Unknown plugin name for a slot; the message names the manifest field (``spec.<slot>``)."""
