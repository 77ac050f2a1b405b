"""The engine's vocabulary, written once: the payload's bands, the context manager's actions and
how they group (a summary, a drop), and the plain words for each.

The identifiers are what the engine records and machine formats keep; the engine, the analysis
and the reports import the groups from here instead of spelling the lists again. The words are the
one place terminal tables (and any other face that wants words instead of identifiers) look them up.

Machine formats (JSON, CSV) keep the identifiers (``unchanged-too-few-turns``, ``payload_tokens``);
people reading a table get the words (``kept: no more than keep_turns turns``, ``tokens sent``).
"""

from __future__ import annotations

BANDS: tuple[str, ...] = ("system", "summary", "history", "user", "working_memory", "tool_schemas")
"""The payload's bands, in payload order (every call's tokens are split into these)."""

CM_ACTIONS: tuple[str, ...] = ("unchanged-under-budget", "unchanged-too-few-turns", "reused", "summarized",
                               "dropped", "summarizer-failed", "window-slid", "stack-capped")
"""Every action a shipped context manager records (``CMAction`` in the managers' base spells the
same list as a type; a test holds them equal)."""

SUMMARY_ACTIONS: frozenset[str] = frozenset(("summarized", "reused"))
"""Actions after which older turns are represented by a summary block."""

DROP_ACTIONS: frozenset[str] = frozenset(("dropped", "window-slid", "stack-capped"))
"""Actions after which older turns are gone without a summary."""

FOLD_KINDS: dict[str, str] = {"summarized": "summary", "reused": "summary", "window-slid": "window",
                              "stack-capped": "stack", "dropped": "drop"}
"""How the archive records the fold an action makes (:data:`inspector.engine.archive.FoldKind`)."""


def fold_kind(action: str) -> str:
    """The archive's fold kind for a manager action; a drop for anything else that folds."""
    return FOLD_KINDS.get(action, "drop")


ACTION_WORDS: dict[str, str] = {
    "unchanged-under-budget": "kept: under budget",
    "unchanged-too-few-turns": "kept: no more than keep_turns turns",
    "reused": "summary reused",
    "summarized": "summary computed",
    "dropped": "older turns dropped",
    "summarizer-failed": "summarizer failed",
    "window-slid": "window slid",
    "stack-capped": "stack capped",
}
"""The context manager's action on one call, in words."""

COLUMN_WORDS: dict[str, str] = {
    # where a row comes from
    "transcript": "file", "conversation": "conv", "strategy": "strategy", "call": "call", "turn": "turn",
    "step": "step", "label": "payload", "runs": "runs", "errors": "errors", "error": "error",
    # one call
    "payload_tokens": "tokens sent", "system": "system", "summary": "summary", "history": "kept history",
    "user": "user turn", "working_memory": "working memory", "tool_schemas": "tool schemas",
    "headroom": "headroom", "cm_action": "context manager", "check": "check", "input_budget": "input budget",
    "window": "window", "reserve": "reserve", "margin": "margin", "cost_usd": "cost $",
    # totals of one replay
    "frames": "calls", "tokens_sent": "tokens sent", "peak_payload": "peak payload",
    "over_budget": "calls over budget", "summarizer_in_turn": "summaries in turn",
    "summarizer_commit": "summaries at commit", "summarizer_calls": "summarizer calls",
    "summarizer_failures": "summarizer failures", "repairs": "repairs", "trimmed": "trimmed", "folded": "folded",
    "min_headroom": "least headroom", "messages_summarised": "msgs summarised", "messages_dropped": "msgs dropped",
    "checks_failed": "checks failed", "payload_cost_usd": "calls $", "summary_cost_usd": "summaries $",
    # fleet summaries
    "conversations": "convs", "conversations_over_budget": "convs over budget",
    "summaries": "summaries", "summarizer": "summarizer", "counter": "counter",
    # observed payloads
    "observed_tokens": "observed tokens", "engine_tokens": "engine tokens",
    # forgetting (inspector.forgetting)
    "forgotten": "refs lost", "forgotten_calls": "calls that forgot", "forgotten_per_call": "lost per call",
}
"""Column identifiers → table headings."""


def action_words(action: object) -> str:
    """The words for a context-manager action (the identifier itself when it has none)."""
    return ACTION_WORDS.get(str(action), str(action))


def column_words(column: str) -> str:
    """The heading for a column (underscores become spaces when it has no entry)."""
    return COLUMN_WORDS.get(column, column.replace("_", " "))


VIEW_WORDS: dict[str, str] = {
    "call": "This call", "not_sent": "Not sent & why", "repairs": "Repairs", "compare": "Side by side",
    "fleet": "Fleet", "manifest": "Manifest", "export": "Export",
}
"""The app's views, in the order the view switch offers them."""

EVENT_WORDS: dict[str, str] = {
    "summarized": "summary computed", "reused": "summary reused (within the hysteresis ceiling)",
    "fold": "fold at a commit",
    "trimmed": "trim", "repair": "pairing repair", "over_budget": "over budget", "forgotten": "forgotten reference",
}
"""Kinds of call the stepper can jump to (and the timeline marks)."""

REPAIR_WORDS: dict[str, str] = {
    "ask_stripped": "ask without its results removed (its tool calls stripped)",
    "ask_removed": "ask without its results removed",
    "empty_result_synthesised": "missing result filled with an empty one",
    "duplicate_dropped": "duplicate result dropped",
    "id_rebound": "result re-bound to its call's id",
    "orphan_dropped": "result without its call dropped",
    "stray_result_dropped": "result away from its call dropped",
}
"""Pairing repairs (:mod:`inspector.engine.pairing` kinds), in words."""


def repair_words(kind: object) -> str:
    """The words for a pairing-repair kind (the identifier itself when it has none)."""
    return REPAIR_WORDS.get(str(kind), str(kind).replace("_", " "))


def cut_results_words(cut: int, answered: int) -> str:
    """Q24 in words: ``cut`` tool results the trimmer removed for budget, ``answered`` of their calls
    the pairing repair then answered with empty results (e.g. "2 results cut for budget; the repair
    answered their 2 calls with empty results")."""
    text = f"{cut} result{'' if cut == 1 else 's'} cut for budget"
    if answered:
        text += (f"; the repair answered {'its' if cut == 1 else 'their'} {answered} "
                 f"call{'' if answered == 1 else 's'} with empty results")
    return text


TIMELINE_WORDS: dict[str, str] = {
    "input_budget": "input budget (trimmer ceiling)",
    "trigger": "summary trigger",
    "ceiling": "hysteresis ceiling (summary reused below it)",
    "over_budget": "over budget",
    "cursor": "this call",
    "off_scale": "above the chart",
}
"""The budget lines and markers of the timeline, in words."""
