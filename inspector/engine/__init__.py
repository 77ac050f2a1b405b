"""The context-assembly engine: manifest + conversation state -> paired, budgeted ``messages[]``.

The public API is re-exported here: :class:`ContextEngine` (the live loop), the records it returns
(:class:`Assembly`, :class:`PayloadRow`, :class:`CommitRecord`), the default assembler plugin
(:class:`ContextAssembler`) and the plugin builders (:func:`build_context_manager`,
:func:`build_summarizer`). Each is imported on first use, so importing one engine module (the
token counters, say) does not import the whole engine and the manifest with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspector.engine.assembly.assembler import ContextAssembler
    from inspector.engine.assembly.records import Assembly, CommitRecord, PayloadRow
    from inspector.engine.builders import build_context_manager, build_summarizer
    from inspector.engine.engine import ContextEngine

_EXPORTS = {
    "Assembly": "inspector.engine.assembly.records",
    "CommitRecord": "inspector.engine.assembly.records",
    "PayloadRow": "inspector.engine.assembly.records",
    "ContextAssembler": "inspector.engine.assembly.assembler",
    "ContextEngine": "inspector.engine.engine",
    "build_context_manager": "inspector.engine.builders",
    "build_summarizer": "inspector.engine.builders",
}

__all__ = ["Assembly", "CommitRecord", "ContextAssembler", "ContextEngine", "PayloadRow", "build_context_manager",
           "build_summarizer"]


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use. Raises
    :class:`AttributeError` for any other name."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'inspector.engine' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
