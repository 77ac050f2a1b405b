"""``sliding-window``: keep the last N user turns (``keep_turns`` > ``window_size`` > ``max_turns``)."""

from __future__ import annotations

from collections.abc import Sequence

from inspector.engine.contracts import EditRecord
from inspector.engine.managers.base import CMDecision, ContextManager, Managed, managed
from inspector.engine.managers.shared import BuiltFromParams
from inspector.engine.types import Message
from inspector.params import SLIDING_WINDOW, SlidingWindowParams
from inspector.vocabulary import Action


def _as_int(value: object) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)  # type: ignore[call-overload,no-any-return]
    except (TypeError, ValueError):
        return None


class SlidingWindowConversation(BuiltFromParams, ContextManager):
    """The last N user turns verbatim, whole (a turn's tool rounds travel with it); hint ignored.

    The default N is :class:`~inspector.params.SlidingWindowParams`' ``keep_turns``. The constructor
    stays lenient on purpose (a bool or a text that is no number is skipped, 0 is floored at 1), as
    it always was for code that builds a manager by hand; a manifest's values are checked by the model.

    A leading preamble group (e.g. a summary block) counts as a turn and slides out like any other.
    """

    name = "sliding-window"
    actions = (
        Action("unchanged-too-few-turns", "kept: no more than keep_turns turns"),
        Action("window-slid", "window slid", "drop", "window", not_sent="dropped by the sliding window"),
    )

    def __init__(self, keep_turns: int | None = None, window_size: int | None = None,
                 max_turns: int | None = None, *, params: SlidingWindowParams | None = None) -> None:
        """``params``, a validated model whose aliases are already folded into ``keep_turns``, is used
        as it is instead of the three keywords (:meth:`from_params`)."""
        super().__init__()
        if params is not None:
            self.keep_turns = params.keep_turns
            return
        n = next((v for v in (_as_int(keep_turns), _as_int(window_size), _as_int(max_turns)) if v is not None),
                 SLIDING_WINDOW.keep_turns)
        self.keep_turns = max(1, n)

    @property
    def turn_cap(self) -> int | None:
        """The write-back's recency cap: ``keep_turns`` user turns."""
        return self.keep_turns

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        """The last ``keep_turns`` user turns of ``past`` (the hint is ignored) and the decision: ``window-
        slid`` when older turns were dropped, else ``unchanged-too-few-turns``."""
        keep = self.keep_turns
        same = self.same_log(past, keep)  # the hint is ignored: every call of a turn gets the same result
        if same is not None:
            return same
        starts = self.log_runs(past).starts  # turn_starts(past), each row read once while the log grows
        turns = len(starts)
        if turns <= keep:
            decision = CMDecision("unchanged-too-few-turns", kept_turns=turns)
            return self.remember(past, managed(past, EditRecord.keep_all(len(past)), decision), keep)
        cut = starts[turns - keep]
        decision = CMDecision("window-slid", kept_turns=keep, dropped_turns=turns - keep)
        return self.remember(past, managed(past, EditRecord.suffix(len(past), cut), decision), keep)
