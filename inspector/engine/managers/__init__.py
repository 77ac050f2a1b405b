"""Context managers (history strategies): one per module behind :class:`ContextManager`."""

from inspector.engine.managers.base import CMDecision, ContextManager

__all__ = ["CMDecision", "ContextManager"]
