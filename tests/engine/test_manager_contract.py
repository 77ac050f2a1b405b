"""Managers return their history and decision as one result (:class:`Managed`): the engine's
``manage`` reads that result and never state a manager left behind."""

from __future__ import annotations

from inspector.engine.managers.base import Managed, manage
from inspector.engine.managers.sliding_window import SlidingWindowConversation
from inspector.engine.managers.stack import StackConversation
from inspector.engine.managers.summarising import SummarizingConversation
from inspector.engine.summarizers.drop import DropSummarizer


def _turns(n: int) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for i in range(n):
        out += [{"role": "user", "content": f"question {i} " * 40}, {"role": "assistant", "content": f"answer {i} " * 40}]
    return out


def test_manage_reads_the_result_not_last_decision() -> None:
    past = _turns(5)
    for cm in (SlidingWindowConversation(keep_turns=2), StackConversation(max_messages=4),
               SummarizingConversation(keep_turns=2, summarizer=DropSummarizer())):
        result = manage(cm, past, 50)
        assert isinstance(result, Managed)
        assert cm.last_decision is None  # decide() leaves nothing behind for the engine to read
        # two verbatim user turns survive, the rest is folded away by identity
        assert result.messages == past[-4:]
        assert [id(m) for m in result.decision.folded] == [id(m) for m in past[:-4]]


def test_manage_history_is_decide_with_its_decision_kept() -> None:
    past = _turns(4)
    cm = SlidingWindowConversation(keep_turns=1)
    expected = SlidingWindowConversation(keep_turns=1).decide(past, 0)
    assert cm.manage_history(past, 0) == expected.messages
    assert cm.last_decision == expected.decision
