"""The contract every registered context manager keeps: it returns its edit record, the history
derived from it and its decision as one result (:class:`Managed`), and the engine's ``manage`` reads that result and never state a manager
left behind; ``manage_history`` is ``decide`` with its decision kept.

Parametrised over the plugin registry (:func:`inspector.plugins.default_registry`), so a strategy
added to it is held to the same contract. Each manager is built as a manifest would build it with
no params (its params model's defaults), a summarising one with the ``drop`` summarizer."""

from __future__ import annotations

import pytest

from inspector.engine.contracts import check_record
from inspector.engine.managers.base import ContextManager, Managed, manage
from inspector.engine.summarizers.drop import DropSummarizer
from inspector.plugins import PluginSpec, default_registry

MANAGERS = default_registry().specs("context_manager")


def _turns(n: int) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for i in range(n):
        out += [{"role": "user", "content": f"question {i} " * 40}, {"role": "assistant", "content": f"answer {i} " * 40}]
    return out


def build(spec: PluginSpec) -> ContextManager:
    cm = spec.load()()
    if cm.accepts_summarizer:
        cm.bind_summarizer(DropSummarizer())
    return cm


@pytest.mark.parametrize("spec", MANAGERS, ids=lambda s: s.name)
def test_manage_reads_the_result_not_last_decision(spec: PluginSpec) -> None:
    """Over a history longer than any default keeps, under a small hint: the result carries an edit
    record over the history that passes its check, the rows sent on are that record applied, the
    decision's folded rows are exactly the rows the record leaves out, its action is one the
    strategy declares, and the history is left as it was."""
    past = _turns(30)
    before = list(past)
    cm = build(spec)
    result = manage(cm, past, 50)
    assert isinstance(result, Managed)
    assert cm.last_decision is None  # decide() leaves nothing behind for the engine to read
    check_record(result.edits, past, ())
    assert [id(m) for m in result.messages] == [id(m) for m in result.edits.apply(past)]
    left_out = [m for a, b in result.edits.dropped() for m in past[a:b]]
    assert [id(m) for m in result.decision.folded] == [id(m) for m in left_out]
    assert result.decision.action in {a.code for a in spec.declared("actions")}
    assert all(a is b for a, b in zip(past, before, strict=True)) and len(past) == len(before)


@pytest.mark.parametrize("spec", MANAGERS, ids=lambda s: s.name)
def test_manage_history_is_decide_with_its_decision_kept(spec: PluginSpec) -> None:
    past = _turns(12)
    cm = build(spec)
    expected = build(spec).decide(past, 0)
    assert cm.manage_history(past, 0) == expected.messages
    assert cm.last_decision == expected.decision
