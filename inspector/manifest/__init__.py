"""Manifest reading: YAML → validated, normalised :class:`ContextSettings` (docs/design.md §2).

Two modes: ``validate`` (strict, every error with its field path and line) and ``assemble``
(lenient like the runtime: a malformed binding falls back to the default plugin, a non-numeric
trimmer value to automatic; an unknown plugin name is still an error).
"""

from inspector.manifest.bindings import compaction_to_context_manager, overlay_binding
from inspector.manifest._yaml import MAX_BYTES, parse_value
from inspector.manifest.load import ManifestSource, as_settings, load_manifest, load_manifest_text, settings_from_dict
from inspector.manifest.overrides import apply_overrides, set_dotted
from inspector.manifest.settings import (
    Binding,
    ContextSettings,
    InfraModels,
    Issue,
    LoadedManifest,
    ManifestError,
    ManifestReadError,
    ModelRow,
    PartSpec,
    TrimmerSettings,
    UnknownPluginError,
)
from inspector.manifest.validate import validate_file

__all__ = [
    "MAX_BYTES",
    "Binding",
    "ContextSettings",
    "InfraModels",
    "Issue",
    "LoadedManifest",
    "ManifestSource",
    "ManifestError",
    "ManifestReadError",
    "ModelRow",
    "PartSpec",
    "TrimmerSettings",
    "UnknownPluginError",
    "apply_overrides",
    "as_settings",
    "compaction_to_context_manager",
    "load_manifest",
    "load_manifest_text",
    "overlay_binding",
    "parse_value",
    "set_dotted",
    "settings_from_dict",
    "validate_file",
]
