"""``clear-tool-results``: over a token trigger, the oldest tool results are sent as a placeholder.

The rule of Anthropic's context editing (``clear_tool_uses_20250919``) and LangChain's
``ClearToolUsesEdit`` (docs/design.md §3.13): when the input (the manager's counter over the
committed log and the current turn's working memory) exceeds ``trigger`` tokens, every tool result
but the last ``keep`` is replaced by a placeholder, oldest first, skipping ``exclude_tools`` and
results whose ask is not found; ``clear_tool_inputs`` blanks the cleared calls' arguments in the
asking row too (its ids stay, so pairing holds). ``clear_at_least`` > 0 stops clearing once that many
tokens are freed, and clears nothing when every candidate together frees fewer. Every log row is
kept; rows are only replaced, in the log and in working memory older than its newest group.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from inspector.engine.contracts import EditRecord, Replacement, newest_group_start
from inspector.engine.managers.base import CMDecision, ContextManager, Managed, managed
from inspector.engine.managers.shared import BuiltFromParams
from inspector.engine.types import Message
from inspector.params import CLEAR_TOOL_RESULTS as D
from inspector.params import ClearToolResultsParams
from inspector.vocabulary import Action, Reason

CLEARED = "tool-result-cleared"
INPUT_CLEARED = "tool-input-cleared"
DEFAULT_PLACEHOLDER = "[tool result cleared: {tool}, {tokens} tokens]"


def _calls(msg: Message) -> list[dict[str, object]]:
    """The row's tool calls that are mappings (a malformed ``tool_calls`` asks nothing)."""
    calls = msg.get("tool_calls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _grouped(n: int) -> str:
    """``1234`` as ``1 234``: the placeholder's size in the project's plain number style."""
    return f"{n:,}".replace(",", " ")


@dataclass(slots=True)
class _Clearing:
    """The rows being replaced (by position in log + working memory) and the tokens freed so far."""

    rows: dict[int, tuple[Message, str]] = field(default_factory=dict)
    freed: int = 0


class ClearToolResults(BuiltFromParams, ContextManager):
    """Tool results beyond the last ``keep`` tool uses sent as a placeholder once the input passes
    ``trigger`` tokens; parameters from :class:`~inspector.params.ClearToolResultsParams`."""

    name = "clear-tool-results"
    edits_working_memory = True
    actions = (
        Action("tool-results-under-trigger", "kept: input at or under the clearing trigger"),
        Action("tool-results-nothing-to-clear", "kept: no tool result to clear (or fewer tokens than clear_at_least)"),
        Action("tool-results-cleared", "older tool results cleared", "edit", marker="tool results cleared"),
    )
    reasons = (
        Reason(CLEARED, "tool result cleared (a placeholder was sent)"),
        Reason(INPUT_CLEARED, "tool call's arguments cleared (sent blank)"),
    )

    def __init__(self, trigger: int = D.trigger, keep: int = D.keep, clear_at_least: int = D.clear_at_least,
                 exclude_tools: list[str] | None = D.exclude_tools, clear_tool_inputs: bool = D.clear_tool_inputs,
                 placeholder: str | None = D.placeholder, *, params: ClearToolResultsParams | None = None) -> None:
        """The defaults and the check come from :class:`~inspector.params.ClearToolResultsParams` (a
        value it refuses raises ``ValueError``); ``params``, a validated model, is used as it is instead."""
        super().__init__()
        if params is None:
            params = ClearToolResultsParams.build(
                self.name, trigger=trigger, keep=keep, clear_at_least=clear_at_least, exclude_tools=exclude_tools,
                clear_tool_inputs=clear_tool_inputs, placeholder=placeholder)
        self.params = params

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        """The result for ``past`` alone (no working memory): see :meth:`decide_with_working`."""
        return self.decide_with_working(past, (), hint)

    def decide_with_working(self, past: Sequence[Message], working: Sequence[Message], hint: int) -> Managed:
        """The whole log kept, its older tool results (and those of ``working`` before its newest
        group) replaced when the input exceeds ``trigger`` (``hint`` is not read). The decision's
        ``raw_tokens`` is the input counted, ``threshold`` the trigger."""
        del hint
        rows = [*past, *working]
        tokens = self.counter.count(rows)
        trigger = self.params.trigger
        n = len(past)
        if tokens <= trigger:  # both sources clear only above it: exactly at the trigger is kept
            return managed(past, EditRecord.keep_all(n),
                           CMDecision("tool-results-under-trigger", raw_tokens=tokens, threshold=trigger))
        limit = n + newest_group_start(working) if working else n
        clearing = self._clear(rows, limit)
        if not clearing.rows:
            return managed(past, EditRecord.keep_all(n),
                           CMDecision("tool-results-nothing-to-clear", raw_tokens=tokens, threshold=trigger))
        log = tuple(Replacement(i, row, why) for i, (row, why) in sorted(clearing.rows.items()) if i < n)
        wm = tuple(Replacement(i - n, row, why) for i, (row, why) in sorted(clearing.rows.items()) if i >= n)
        record = EditRecord(n, ((0, n),) if n else (), log, (), wm)
        return managed(past, record, CMDecision("tool-results-cleared", raw_tokens=tokens, threshold=trigger))

    def _candidates(self, rows: Sequence[Message], limit: int) -> Iterator[tuple[int, int, str]]:
        """``(result position, asking row's position, tool name)`` of each clearable result, oldest
        first: every tool result but the last ``keep`` (excluded tools count among them, as in both
        sources), before ``limit``, with its ask found and its tool not excluded."""
        results = [i for i, m in enumerate(rows) if m.get("role") == "tool"]
        keep = self.params.keep
        older = results[:max(0, len(results) - keep)]
        asks: dict[str, tuple[int, str]] = {}
        for i, m in enumerate(rows):
            for call in _calls(m):
                fn = call.get("function")
                asks[str(call.get("id"))] = (i, str(fn.get("name", "")) if isinstance(fn, dict) else "")
        excluded = set(self.params.exclude_tools or ())
        for i in older:
            ask = asks.get(str(rows[i].get("tool_call_id")))
            if i < limit and ask is not None and ask[0] < i and ask[1] not in excluded:
                yield i, ask[0], ask[1]

    def _clear(self, rows: Sequence[Message], limit: int) -> _Clearing:
        """The replacements, oldest first, with the tokens they free (the counter's count of each
        original row minus its replacement's); stopped once ``clear_at_least`` > 0 is reached, and
        empty when every candidate together frees less."""
        at_least = self.params.clear_at_least
        done = _Clearing()
        for i, ask, tool in self._candidates(rows, limit):
            original = rows[i]
            size = self.counter.count([original])
            new = {**original, "content": self._placeholder(tool, size)}
            done.rows[i] = (new, CLEARED)
            done.freed += size - self.counter.count([new])
            if self.params.clear_tool_inputs:
                self._blank_input(rows, ask, str(original.get("tool_call_id")), done)
            if at_least and done.freed >= at_least:
                return done
        return done if done.freed >= at_least else _Clearing()

    def _blank_input(self, rows: Sequence[Message], ask: int, call_id: str, done: _Clearing) -> None:
        """Blank the arguments of call ``call_id`` in the asking row (its latest replacement when
        another call of it was blanked already), adding the tokens that frees."""
        before = done.rows[ask][0] if ask in done.rows else rows[ask]
        calls = [self._blank_call(c) if isinstance(c, dict) and str(c.get("id")) == call_id else c
                 for c in before.get("tool_calls") or ()]
        after = {**before, "tool_calls": calls}
        done.rows[ask] = (after, INPUT_CLEARED)
        done.freed += self.counter.count([before]) - self.counter.count([after])

    @staticmethod
    def _blank_call(call: dict[str, object]) -> dict[str, object]:
        """``call`` with its function's arguments blanked to ``{}`` (its id and name kept)."""
        fn = call.get("function")
        return {**call, "function": {**(fn if isinstance(fn, dict) else {}), "arguments": json.dumps({})}}

    def _placeholder(self, tool: str, tokens: int) -> str:
        """The text a cleared result is sent as: ``placeholder`` (or the default note) with
        ``{tool}`` and ``{tokens}`` filled in."""
        text = self.params.placeholder if self.params.placeholder is not None else DEFAULT_PLACEHOLDER
        return text.replace("{tool}", tool).replace("{tokens}", _grouped(tokens))
