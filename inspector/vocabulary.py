"""The engine's vocabulary, written once: the payload's bands, the context manager's actions and
how they group (a summary, a drop), and the plain words for each.

The actions are not listed here: each strategy declares its own (:class:`Action`, :class:`Reason`)
in its module, and the tables (``CM_ACTIONS``, ``ACTION_WORDS``, ``SUMMARY_ACTIONS``,
``DROP_ACTIONS``, ``FOLD_KINDS``, ``NOT_SENT_ACTION_WORDS``, ``EVENT_WORDS``) are derived from the
plugin registry when read, so a strategy registered by a third party has its words everywhere.

The identifiers are what the engine records and machine formats keep; the engine, the analysis
and the reports import the groups from here instead of spelling the lists again. The words are the
one place terminal tables (and any other face that wants words instead of identifiers) look them up.

Machine formats (JSON, CSV) keep the identifiers (``unchanged-too-few-turns``, ``payload_tokens``);
people reading a table get the words (``kept: no more than keep_turns turns``, ``tokens sent``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

BANDS: tuple[str, ...] = ("system", "summary", "history", "user", "working_memory", "tool_schemas")
"""The payload's bands, in payload order (every call's tokens are split into these)."""


@dataclass(frozen=True, slots=True)
class Action:
    """One action a context manager records, as its strategy declares it (the one source every face
    and analysis reads; :func:`registered_actions` gathers them from the plugin registry).

    ``code`` is the identifier machine formats keep; ``words`` its plain words; ``group`` how it
    bounds the history (``kept``: nothing left out; ``summary``: older turns stand in a summary
    block; ``drop``: older turns gone without one; ``edit``: rows replaced in place; ``failed``: the
    manager could not do what it meant to); ``fold_kind`` how the archive records a commit-time fold
    of it (None: it folds nothing); ``marker`` the timeline's words for a call where it happened
    and its summary was sent (None: no marker of its own); ``not_sent`` why a row it left out of
    this call was not sent; ``not_sent_trimmed`` the same when its summary block was trimmed
    (``{how}`` says how); ``trimmed_words`` the action's words then."""

    code: str
    words: str
    group: str = "kept"
    fold_kind: str | None = None
    marker: str | None = None
    not_sent: str | None = None
    not_sent_trimmed: str | None = None
    trimmed_words: str | None = None


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a strategy replaced a row by another (an :class:`~inspector.engine.contracts.Replacement`'s
    ``reason``): ``code`` kept by machine formats, ``words`` what the original row's not being sent
    reads as (the forgetting analysis, the app)."""

    code: str
    words: str


def registered_actions() -> tuple[Action, ...]:
    """Every action the registered context managers declare, each code once (the first declaration
    wins), in registration order: read from the process-wide registry on every call, so a strategy
    registered later is in it."""
    from inspector.plugins import default_registry

    return default_registry().declared("actions")


def registered_reasons() -> tuple[Reason, ...]:
    """Every replacement reason the registered context managers declare, each code once."""
    from inspector.plugins import default_registry

    return default_registry().declared("reasons")


def _actions_where(test: Callable[[Action], bool]) -> frozenset[str]:
    return frozenset(a.code for a in registered_actions() if test(a))


def cm_actions() -> tuple[str, ...]:
    """Every action code a registered context manager records (the ``CMAction`` set)."""
    return tuple(a.code for a in registered_actions())


def summary_actions() -> frozenset[str]:
    """Actions after which older turns are represented by a summary block."""
    return _actions_where(lambda a: a.group == "summary")


def drop_actions() -> frozenset[str]:
    """Actions after which older turns are gone without a summary."""
    return _actions_where(lambda a: a.group == "drop")


def fold_kinds() -> dict[str, str]:
    """How the archive records the fold an action makes (:data:`inspector.engine.archive.FoldKind`),
    for every action that folds."""
    return {a.code: a.fold_kind for a in registered_actions() if a.fold_kind is not None}


def fold_kind(action: str) -> str:
    """The archive's fold kind for a manager action; a drop for anything else that folds."""
    return fold_kinds().get(action, "drop")


def action_words_table() -> dict[str, str]:
    """Every action code → its plain words."""
    return {a.code: a.words for a in registered_actions()}


def not_sent_action_words() -> dict[str, str]:
    """A summary action whose summary block the token trimmer cut (``summary_sent`` false): the
    model saw no summary, so the words must not say one was sent."""
    return {a.code: a.trimmed_words for a in registered_actions() if a.trimmed_words is not None}


def reason_words(code: object) -> str:
    """The words for a replacement reason (the code with its dashes as spaces when none is declared)."""
    key = str(code)
    return next((r.words for r in registered_reasons() if r.code == key), key.replace("-", " "))


_DERIVED: dict[str, Callable[[], object]] = {
    "CM_ACTIONS": cm_actions, "SUMMARY_ACTIONS": summary_actions, "DROP_ACTIONS": drop_actions,
    "FOLD_KINDS": fold_kinds, "ACTION_WORDS": action_words_table, "NOT_SENT_ACTION_WORDS": not_sent_action_words,
    "EVENT_WORDS": lambda: event_words(),
}
"""The tables derived from the registry, by the names faces import (read afresh on each access)."""


def __getattr__(name: str) -> Any:
    """The derived tables (:data:`_DERIVED`) by their module-level names. Raises
    :class:`AttributeError` for any other name."""
    make = _DERIVED.get(name)
    if make is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return make()


CACHE_WORDS: dict[str, str] = {
    "cost_with_caching_usd": "cost with caching $",
    "cost_without_caching_usd": "cost without caching $",
    "cache_hit_share": "cache-hit share",
    "cache_breaks": "cache breaks",
    "cache_break_cost_usd": "cost of the cache breaks $",
    "cached_tokens": "read from cache (tokens)",
    "cache_input_tokens": "input tokens (cache's view)",
    "cache_written_tokens": "written to cache (tokens)",
    "uncached_tokens": "sent uncached (tokens)",
    "cache_broke_at": "cache broke at row",
    "cache_rule": "cache rule",
    "predicted_cached": "predicted cached", "recorded_cached": "recorded cached",
    "predicted_written": "predicted written", "recorded_written": "recorded written",
}
"""Every prompt-cache code → its words: the one vocabulary of the cache's columns (which row carries
which: :mod:`inspector.prompt_cache`). Tables for machines (CSV, JSON, sweep, compare and fleet rows)
carry the codes, faces the words (:func:`column_words`). A run's ``cost_with_caching_usd`` is the
agent's calls at the rule's read, write and input rates plus the summarizer's cost,
``cost_without_caching_usd`` every input token at the input price plus the summarizer's cost (None
when part of either has no price); a call's (:data:`inspector.prompt_cache.CALL_CACHE_COLUMNS`) is
that call's input cost alone. ``cache_hit_share`` = cached ÷ input tokens, where the input
(``cache_input_tokens``) counts the tool schemas and any unrecorded prefix; ``cache_breaks`` counts
the calls whose changed rows cut a live cached prefix and ``cache_break_cost_usd`` what they cost
above the cache-read rate. ``predicted_*`` / ``recorded_*``: calibrate's tokens read from and
written to the cache, ours beside the provider's."""

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
    "observed_tokens": "observed tokens", "engine_tokens": "engine tokens", "why": "what differs",
    # calibration (inspector.calibration)
    "provider_tokens": "provider tokens", "tiktoken_error_pct": "tiktoken error %",
    "estimate_error_pct": "estimate error %", "factor_tiktoken": "factor tiktoken",
    "factor_estimate": "factor estimate",
    "mean_abs_error_pct_tiktoken": "mean error % tiktoken", "mean_abs_error_pct_estimate": "mean error % estimate",
    # forgetting (inspector.forgetting)
    "forgotten": "refs lost", "forgotten_calls": "calls that forgot", "forgotten_per_call": "lost per call",
    # prompt caching (inspector.prompt_cache; calibrate's predicted beside recorded)
    **CACHE_WORDS,
}
"""Column identifiers → table headings."""



def action_words(action: object, summary_sent: bool | None = None) -> str:
    """The words for a context-manager action (the identifier itself when it has none).

    ``summary_sent``: whether the call's payload holds a summary block (``Frame.summary_sent``);
    False turns a summary action into its ``trimmed_words`` (computed or reused, then
    trimmed, is a different event from a summary sent). None: not known, the action's own words."""
    key = str(action)
    action_ = next((a for a in registered_actions() if a.code == key), None)
    if action_ is None:
        return key
    if summary_sent is False and action_.trimmed_words is not None:
        return action_.trimmed_words
    return action_.words


def summary_event(action: object, summary_sent: bool) -> str | None:
    """The summary event of a call for the app's markers, counts and jumps
    (:data:`EVENT_WORDS`): ``summarized`` / ``reused`` when the summary was sent,
    ``summary_not_sent`` when a summary action's block was trimmed, None for any other action."""
    if str(action) not in summary_actions():
        return None
    return str(action) if summary_sent else "summary_not_sent"


def column_words(column: str) -> str:
    """The heading for a column (underscores become spaces when it has no entry)."""
    return COLUMN_WORDS.get(column, column.replace("_", " "))


VIEW_WORDS: dict[str, str] = {
    "call": "This call", "not_sent": "Not sent & why", "repairs": "Repairs", "compare": "Side by side",
    "fleet": "Fleet", "manifest": "Manifest", "export": "Export",
}
"""The app's views, in the order the view switch offers them."""

_FIXED_EVENT_WORDS: dict[str, str] = {
    "summary_not_sent": "summary trimmed, not sent",
    "fold": "fold at a commit",
    "trimmed": "trim", "repair": "pairing repair", "over_budget": "over budget", "forgotten": "forgotten reference",
}


def event_words() -> dict[str, str]:
    """Kinds of call the stepper can jump to (and the timeline marks), in words: the registered
    actions' markers (e.g. ``summarized``: "summary computed, sent"), then the fixed kinds. A summary
    computed or reused whose block the trimmer cut counts as ``summary_not_sent``, never as computed
    or reused (:func:`summary_event`)."""
    marked = {a.code: a.marker for a in registered_actions() if a.marker is not None}
    return {**marked, **_FIXED_EVENT_WORDS}


REPAIR_WORDS: dict[str, str] = {
    "ask_stripped": "unanswered tool calls taken off the assistant's message (its text kept)",
    "ask_removed": "assistant message with only unanswered tool calls left out",
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


IRREGULARITY_WORDS: dict[str, str] = {
    "reused_tool_call_id": "a tool call id that an earlier call already used",
    "result_far_from_call": "a tool result that is not right after its call",
    "orphan_result": "a tool result that answers no call",
    "duplicate_result": "a second result for the same tool call",
    "unanswered_call": "a tool call that never got a result",
    "truncated_after_tool": "the transcript ends on a tool result, before the agent's reply",
    "nonstandard_role": "a message whose role providers do not accept",
    "non_text_content": "content that is not plain text",
    "tool_calls_on_non_assistant": "tool calls on a message that is not the assistant's",
    "multiple_tool_call_ids": "one result carrying several tool call ids",
    "synthetic_user_message": "a user message the importer added",
    "tool_call_id_converted": "a numeric tool call id read as text",
}
"""Importer findings (:class:`inspector.transcripts.model.Irregularity` kinds), in words."""


def irregularity_words(kind: object) -> str:
    """The words for an importer finding (underscores become spaces when it has none)."""
    return IRREGULARITY_WORDS.get(str(kind), str(kind).replace("_", " "))


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


STANDIN_ESTIMATE_WORDS = (
    "Summarising strategies' forgetting is an estimate here: with no summary model configured, the labelled "
    "offline stand-in writes their summaries (extractive, sized like a model's summary); configure a summary "
    "model and its summaries replace the stand-in's.")
"""What every face says beside a replay whose summaries the offline stand-in wrote (the CLI's summarizer
line, ``totals.forgetting.estimate_note`` in the replay JSON, the app)."""


def standin_estimate_words(summarizer_labels: object) -> list[str]:
    """``[STANDIN_ESTIMATE_WORDS]`` when any of ``summarizer_labels`` (a label, or an iterable of
    them: ``Replay.summarizer_label``, a sweep's ``summarizer`` column) names the offline stand-in,
    else ``[]`` — a list, so a face can print it as its lines."""
    labels = [summarizer_labels] if isinstance(summarizer_labels, str) else summarizer_labels
    if not isinstance(labels, Iterable):
        return []
    return [STANDIN_ESTIMATE_WORDS] if any("stand-in" in str(x) for x in labels) else []
