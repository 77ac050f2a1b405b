"""``stack`` (alias ``full-history``): keep everything, optionally capped at ``max_messages``."""

from __future__ import annotations

from collections.abc import Sequence

from inspector.engine.contracts import EditRecord
from inspector.engine.history import split_user_turns, start_of_tool_group
from inspector.engine.managers.base import CMDecision, ContextManager, Managed, managed
from inspector.engine.managers.shared import BuiltFromParams
from inspector.engine.types import Message
from inspector.params import STACK, StackParams
from inspector.vocabulary import Action


class StackConversation(BuiltFromParams, ContextManager):
    """Full history, or its last ``max_messages`` rows moved back to the start of a tool group.

    The hint is ignored (the token trimmer handles overflow). The cut never lands on a tool result
    whose ask it would lose, so the result may be a little longer than the cap.
    """

    name = "stack"
    actions = (
        Action("unchanged-under-budget", "kept: under budget"),
        Action("stack-capped", "stack capped", "drop", "stack", not_sent="dropped by the stack cap"),
    )

    def __init__(self, max_messages: int | None = STACK.max_messages, *, params: StackParams | None = None) -> None:
        """The default and the check come from :class:`~inspector.params.StackParams` (a value it
        refuses raises ``ValueError``); ``params``, a validated model, is used as it is instead."""
        super().__init__()
        if params is None:
            params = StackParams.build(self.name, max_messages=max_messages)
        self.max_messages = params.max_messages

    @property
    def message_cap(self) -> int | None:
        """The write-back's recency cap: ``max_messages`` rows (None: no cap)."""
        return self.max_messages

    def _turns(self, past: Sequence[Message]) -> int:
        """User-turn count (a preamble counts), read from running turn starts while the log grows."""
        return len(self.log_runs(past).starts)

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        """All of ``past`` (the hint is ignored), or, over ``max_messages``, its last rows from the start of a
        tool group (``stack-capped``)."""
        cap = self.max_messages
        if cap is None or not past or len(past) <= cap:
            same = self.same_log(past, cap)  # every call of a turn sees the same log: one result per turn
            if same is not None:
                return same
            decision = CMDecision("unchanged-under-budget", kept_turns=self._turns(past))
            # the whole log, as a read-only view: no copy of thousands of rows per call
            return self.remember(past, managed(past, EditRecord.keep_all(len(past)), decision), cap)
        start = start_of_tool_group(past, len(past) - cap)
        kept = past[start:]
        decision = CMDecision(
            "stack-capped", kept_turns=len(split_user_turns(kept)),
            dropped_turns=len(split_user_turns(past)) - len(split_user_turns(kept)),
        )
        return managed(past, EditRecord.suffix(len(past), start), decision)
