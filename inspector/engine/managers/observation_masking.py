"""``observation-masking``: tool results older than the attention window are sent as a placeholder.

OpenHands' ``ObservationMaskingCondenser`` (``openhands/memory/condenser/impl/
observation_masking_condenser.py``): over a view of ``n`` events, the event at index ``i`` is masked
when it is an observation and ``i < n - attention_window``, so the last ``attention_window`` events
keep their results. Here an event is one row of the log followed by the current turn's working
memory (user, assistant and tool rows alike count); only tool results are masked, and never one in
working memory's newest group (the ask the model is answering and its results).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from inspector.engine.contracts import EditRecord, Replacement, newest_group_start
from inspector.engine.managers.base import CMDecision, ContextManager, Managed, managed
from inspector.engine.managers.shared import BuiltFromParams
from inspector.engine.types import Message
from inspector.params import ObservationMaskingParams
from inspector.vocabulary import Action, Reason

DEFAULTS = ObservationMaskingParams()
"""The model's defaults (``attention_window`` 100, OpenHands' ``<MASKED>``), which the constructor's keywords read."""

MASKED = "observation-masked"
"""The replacement reason of a masked tool result."""


def mask_text(placeholder: str, tool: str, size: int) -> str:
    """``placeholder`` with ``{tool}`` replaced by the tool's name and ``{size}`` by the characters
    masked (a placeholder without them is sent as written, e.g. OpenHands' ``<MASKED>``)."""
    return placeholder.replace("{tool}", tool).replace("{size}", str(size))


def _tool_name(call: object) -> str:
    """The tool an ask's call names (``tool`` when the call names none)."""
    fn = call.get("function") if isinstance(call, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    return name if isinstance(name, str) and name else "tool"


def _tool_names(*parts: Sequence[Message]) -> dict[str, str]:
    """``{tool_call_id: tool name}`` of every ask in ``parts`` (a malformed ask names none)."""
    out: dict[str, str] = {}
    for rows in parts:
        for m in rows:
            calls = m.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict) and isinstance(call.get("id"), str):
                    out[call["id"]] = _tool_name(call)
    return out


class ObservationMasking(BuiltFromParams, ContextManager):
    """Every log row kept; each tool result more than ``attention_window`` events from the end of
    log + working memory sent as the placeholder, in the log and in working memory alike (a one-turn
    agent lives in working memory), never in working memory's newest group. The hint is ignored."""

    name = "observation-masking"
    edits_working_memory = True
    actions = (
        Action("observations-kept", "kept: no tool result older than the attention window"),
        Action("observations-masked", "old tool results masked", "edit", marker="old tool results masked"),
    )
    reasons = (Reason(MASKED, "tool result masked (a placeholder was sent)"),)

    def __init__(self, attention_window: int = DEFAULTS.attention_window, placeholder: str = DEFAULTS.placeholder,
                 *, params: ObservationMaskingParams | None = None) -> None:
        """The defaults and the check come from :class:`~inspector.params.ObservationMaskingParams`
        (a value it refuses raises ``ValueError``); ``params``, a validated model, is used as it is instead."""
        super().__init__()
        if params is None:
            params = ObservationMaskingParams.build(self.name, attention_window=attention_window,
                                                    placeholder=placeholder)
        self.attention_window = params.attention_window
        self.placeholder = params.placeholder

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        """The result with no working memory (:meth:`decide_with_working` with none)."""
        return self.decide_with_working(past, (), hint)

    def decide_with_working(self, past: Sequence[Message], working: Sequence[Message], hint: int) -> Managed:
        """The whole log kept, and a :class:`~inspector.engine.contracts.Replacement` for each tool
        result at event index ``i < len(past) + len(working) - attention_window`` (working memory's
        rows indexed after the log's; its newest group never), reason ``observation-masked``. The
        decision is ``observations-masked`` when one was masked, else ``observations-kept``."""
        del hint
        n = len(past)
        cut = n + len(working) - self.attention_window  # events before ``cut`` are outside the window
        names = _tool_names(past, working)
        in_log = tuple(self._masked(past, range(min(cut, n)), names))
        in_working = tuple(self._masked(working, range(min(cut - n, newest_group_start(working))), names))
        record = EditRecord(n, ((0, n),) if n else (), in_log, (), in_working)
        action = "observations-masked" if in_log or in_working else "observations-kept"
        return managed(past, record, CMDecision(action))

    def _masked(self, rows: Sequence[Message], span: range, names: dict[str, str]) -> Iterator[Replacement]:
        """A replacement for each tool result of ``rows`` at an index in ``span``."""
        for i in span:
            m = rows[i]
            if m.get("role") == "tool":
                content = m.get("content")
                size = len(content if isinstance(content, str) else str(content or ""))
                text = mask_text(self.placeholder, names.get(str(m.get("tool_call_id")), "tool"), size)
                yield Replacement(i, {**m, "content": text}, MASKED)
