"""The context-assembly engine: manifest + conversation state -> paired, budgeted ``messages[]``.

The public API is re-exported here: :class:`ContextEngine` (the live loop), the records it returns
(:class:`Assembly`, :class:`PayloadRow`, :class:`CommitRecord`), the default assembler plugin
(:class:`ContextAssembler`) and the plugin builders (:func:`build_context_manager`,
:func:`build_summarizer`).
"""

from inspector.engine.assembly.assembler import ContextAssembler
from inspector.engine.assembly.records import Assembly, CommitRecord, PayloadRow
from inspector.engine.builders import build_context_manager, build_summarizer
from inspector.engine.engine import ContextEngine

__all__ = ["Assembly", "CommitRecord", "ContextAssembler", "ContextEngine", "PayloadRow", "build_context_manager",
           "build_summarizer"]
