"""Plain types shared by every engine stage (the hot path uses dicts and dataclasses, not pydantic).

Messages are OpenAI chat-completions dicts. The engine never mutates a message it was given:
stages return new lists that hold the *same* dict objects where a message passes through
unchanged, so callers (the replay) can map payload rows back to transcript rows by identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Message = dict[str, Any]


class ProviderPayloadError(ValueError):
    """The assembled payload would be rejected by the provider (tool calls and results unpaired).

    Raised by :func:`inspector.engine.pairing.check_provider_payload`; a real exception, never an
    ``assert``, so it survives ``python -O``.
    """


RepairKind = Literal[
    "orphan_dropped",  # a tool result whose id no ask in the payload declares
    "duplicate_dropped",  # a second result for an id already answered
    "id_rebound",  # a result under a wrong id moved to the first unanswered id of its ask
    "ask_stripped",  # unanswered ask not at the end: tool_calls removed, its text kept
    "ask_removed",  # unanswered ask not at the end with no text: removed
    "empty_result_synthesised",  # missing result at the end of the payload: "" added
    "stray_result_dropped",  # a declared result that is not in the run right after its ask
]


@dataclass(frozen=True, slots=True)
class Repair:
    """One change the pairing pass made. ``index`` is the position in the sanitizer's input."""

    kind: RepairKind
    tool_call_id: str | None
    index: int | None
    detail: str = ""
    new_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "tool_call_id": self.tool_call_id, "index": self.index}
        if self.new_id is not None:
            d["new_id"] = self.new_id
        if self.detail:
            d["detail"] = self.detail
        return d


@dataclass(slots=True)
class SanitizeResult:
    """``origin[i]`` is the input position the output row ``messages[i]`` came from (None = synthesised)."""

    messages: list[Message]
    repairs: list[Repair]
    origin: list[int | None]


@dataclass(frozen=True, slots=True)
class Removal:
    """One message the token trimmer removed (the same dict object that was passed in)."""

    message: Message
    source: Literal["history", "working_memory"]
    reason: Literal["budget", "answer_of_dropped_ask"] = "budget"


@dataclass(slots=True)
class TrimResult:
    messages: list[Message]
    removed: list[Removal] = field(default_factory=list)
    over_budget: bool = False  # pinned content alone exceeds the budget (warning, never silent deletion)
    tokens: int = 0  # counter total of ``messages`` after trimming
