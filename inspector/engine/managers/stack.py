"""``stack`` (alias ``full-history``): keep everything, optionally capped at ``max_messages``."""

from __future__ import annotations

from collections.abc import Sequence

from inspector.engine.history import split_user_turns, start_of_tool_group
from inspector.engine.managers.base import CMDecision, ContextManager, Managed
from inspector.engine.types import Message
from inspector.params import STACK, StackParams


class StackConversation(ContextManager):
    """Full history, or its last ``max_messages`` rows moved back to the start of a tool group.

    The hint is ignored (the token trimmer handles overflow). The cut never lands on a tool result
    whose ask it would lose, so the result may be a little longer than the cap.
    """

    name = "stack"

    def __init__(self, max_messages: int | None = STACK.max_messages) -> None:
        """The default and the check come from :class:`~inspector.params.StackParams`."""
        super().__init__()
        self.max_messages = StackParams.build(self.name, max_messages=max_messages).max_messages

    @property
    def message_cap(self) -> int | None:
        return self.max_messages

    def _turns(self, past: Sequence[Message]) -> int:
        """User-turn count, updated incrementally while the committed log only grows (uncapped stack)."""
        memo = getattr(self, "_memo", None)
        n = len(past)
        if memo is not None and memo[0] is past and memo[1] <= n and (memo[1] == 0 or past[memo[1] - 1] is memo[2]):
            count = memo[3] + sum(1 for m in past[memo[1]:] if m.get("role") == "user")
            if memo[1] == 0 and past and past[0].get("role") != "user":
                count += 1  # grown from empty: a leading non-user row is a preamble turn
        else:
            count = sum(1 for m in past if m.get("role") == "user") + (1 if past and past[0].get("role") != "user" else 0)
        self._memo = (past, n, past[-1] if past else None, count)
        turns: int = count
        return turns

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        cap = self.max_messages
        if not past or cap is None or len(past) <= cap:
            decision = CMDecision("unchanged-under-budget", kept_turns=self._turns(past))
            return Managed(list(past), decision)
        start = start_of_tool_group(past, len(past) - cap)
        kept = list(past[start:])
        decision = CMDecision(
            "stack-capped", kept_turns=len(split_user_turns(kept)), folded=list(past[:start]),
            dropped_turns=len(split_user_turns(past)) - len(split_user_turns(kept)),
        )
        return Managed(kept, decision)
