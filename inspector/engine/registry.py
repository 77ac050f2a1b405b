"""The plugin registry, kept importable under its old name for third-party plugins.

The registry lives in :mod:`inspector.plugins`, the floor the manifest and the engine both build on
(so the manifest never imports the engine package). This module re-exports it unchanged.
"""

from inspector.plugins import (
    DEFAULTS,
    ENTRY_POINT_GROUP,
    SLOTS,
    PluginLookupError,
    PluginSpec,
    Registry,
    Slot,
    default_registry,
    register,
)

__all__ = ["DEFAULTS", "ENTRY_POINT_GROUP", "SLOTS", "PluginLookupError", "PluginSpec", "Registry", "Slot",
           "default_registry", "register"]
