"""Every not-sent reason in the words the vocabulary declares (inspector.forgetting's ``_Why``, the
one source of :func:`~inspector.forgetting.not_sent_reasons`). Each case rewrites the last frame of a
small replay so that one rule decides each row; the expected words are written out, not derived."""

from __future__ import annotations

import dataclasses

import pytest

from inspector.forgetting import not_sent_reasons
from tests.analysis.test_forgetting import _settings, _transcript
from tests.builders import asst, user

_BUDGET = "trimmed for budget (token trimmer)"
_REPAIR = "removed by the pairing repair"


def _rewritten(**changes: object) -> object:
    """The replay of user/assistant/user/assistant under ``stack``, its last call (reply = row 3)
    rewritten with ``changes``; ``action`` replaces the decision's action."""
    from inspector.replay import replay

    rp = replay(_settings({"type": "stack"}), _transcript([user("one"), asst("two"), user("three"), asst("four")]),
                counter="estimate")
    f = rp.frames[-1]
    assert f.at == 3
    action = changes.pop("action", None)
    if action is not None:
        changes["decision"] = f.decision._replace(action=action)
    rp.frames[-1] = dataclasses.replace(f, **changes)
    return rp


def _reasons(rp: object) -> dict[int, str]:
    return not_sent_reasons(rp, len(rp.frames) - 1)  # type: ignore[attr-defined]


def test_a_trimmed_row_and_a_row_nothing_explains_read_budget_and_pairing_repair() -> None:
    rp = _rewritten(segments=((2, 1, "user", None, None),), trimmed=((0, 1),), folded=(), replaced=())
    assert _reasons(rp) == {0: _BUDGET, 1: _REPAIR}


def test_a_replaced_row_reads_its_reasons_declared_words() -> None:
    own = {"role": "assistant", "content": "[cleared]"}
    rp = _rewritten(segments=((0, 1, "user", None, None), (1, 1, "history", "tool-result-cleared", own),
                              (2, 1, "user", None, None)),
                    trimmed=(), folded=(), replaced=((1, "tool-result-cleared"),))
    assert _reasons(rp) == {1: "tool result cleared (a placeholder was sent)"}


def test_rows_an_unregistered_action_folds_read_dropped_by_the_context_manager() -> None:
    rp = _rewritten(segments=((2, 1, "user", None, None),), trimmed=(), folded=((0, 2),), replaced=(),
                    action="no-such-action")
    assert _reasons(rp) == {0: "dropped by the context manager (no summary)",
                            1: "dropped by the context manager (no summary)"}


def test_an_action_without_words_for_an_unsent_summary_uses_its_not_sent_words() -> None:
    rp = _rewritten(segments=((2, 1, "user", None, None),), trimmed=(), folded=((0, 2),), replaced=(),
                    action="stack-capped")
    assert _reasons(rp) == {0: "dropped by the stack cap", 1: "dropped by the stack cap"}


@pytest.mark.parametrize(("not_sent", "expected"), [
    ((), "summarised into this call's summary block, which was not sent"),
    (({"kind": "summary", "reason": "trimmed", "tokens": 5, "content": "s"},),
     "summarised into this call's summary block, which was trimmed for budget — not sent"),
])
def test_a_summary_missing_from_the_payload_says_not_sent_or_trimmed(not_sent: tuple, expected: str) -> None:
    rp = _rewritten(segments=((2, 1, "user", None, None),), trimmed=(), folded=((0, 2),), replaced=(),
                    action="summarized", not_sent=not_sent)
    assert rp.frames[-1].summary_sent is False
    assert _reasons(rp) == {0: expected, 1: expected}


def test_a_system_text_the_manifest_replaces_reads_system_text_replaced() -> None:
    from inspector.replay import replay

    msgs = [{"role": "system", "content": "Be terse."}, user("hello"), asst("hi"), user("again"), asst("ok")]
    rp = replay(_settings({"type": "stack"}, system_prompt="You are a helper."), _transcript(msgs),
                counter="estimate", system="manifest")
    assert _reasons(rp) == {0: "system text replaced (the manifest's system band, or a later system message, wins)"}


def test_a_call_reads_only_the_commits_of_earlier_turns() -> None:
    """One-turn window over three turns: the commit of turn 2 folds rows 0-1 (turn 1). The call of
    turn 3 reads that commit; the call of turn 2 (rewritten to leave rows 0-1 out) comes before its
    own turn's commit, so nothing but the pairing repair explains the gap."""
    from inspector.replay import replay
    from tests.analysis.test_forgetting import WINDOW_1

    msgs = [user("My ticket is SEC-88213."), asst("Noted SEC-88213."), user("a"), asst("b"), user("c"), asst("d")]
    rp = replay(_settings(WINDOW_1), _transcript(msgs), counter="estimate")
    assert [(c.turn, c.folded) for c in rp.commits if c.folded] == [(2, ((0, 2),)), (3, ((2, 4),))]
    assert [f.turn for f in rp.frames] == [1, 2, 3]
    dropped = "dropped at the commit of turn 2 (the stored history keeps the newest turns)"
    assert not_sent_reasons(rp, 2) == {0: dropped, 1: dropped}
    rp.frames[1] = dataclasses.replace(rp.frames[1], segments=((2, 1, "user", None, None),))
    assert not_sent_reasons(rp, 1) == {0: _REPAIR, 1: _REPAIR}
