"""What one call's assembly starts from, and the rules both assembly paths apply to it.

:class:`EngineView` is what an assembler reads of the engine (the engine satisfies it; an assembler
never imports the engine, which holds the assembler). :class:`Call` is the facts of one call, read
once by :class:`~inspector.engine.assembly.assembler.ContextAssembler` and handed to the path it
picks. :func:`band_rule`, :data:`HELLO` and :func:`takes_group` are the rules the reference and the
incremental path share, written once so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from inspector.engine.budget import Budget
from inspector.engine.limits import ModelLimits
from inspector.engine.managers.base import CMDecision, Managed
from inspector.engine.memory import Conversation
from inspector.engine.summary_block import is_summary_block
from inspector.engine.tokens import TokenCounter
from inspector.engine.types import Message
from inspector.manifest import ContextSettings

__all__ = ["HELLO", "BandRule", "Call", "EngineView", "band_rule", "takes_group"]

HELLO: Message = {"role": "user", "content": "Hello"}
"""The placeholder row sent when a call would otherwise send nothing (no system band, no history,
no user turn, no working memory): a provider refuses an empty ``messages[]``."""

BandRule = Callable[[Message, bool], tuple[str, str | None]]
"""``band_of(source row, in working memory) -> (band, synthetic kind or None)``."""


class EngineView(Protocol):
    """What an assembler reads of the engine on each call (:class:`~inspector.engine.engine.ContextEngine`
    has all of it): the conversation, the counter, the tools, the context manager, the model's limits,
    the manifest's settings, the token calibration in force and the system band's row."""

    @property
    def conversation(self) -> Conversation:
        """The conversation state (turns, working memory, the committed log)."""

    @property
    def counter(self) -> TokenCounter:
        """The token counter every decision of the call uses."""

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        """The tool schemas sent with each call (None: none)."""

    @property
    def cm(self) -> Any:
        """The context manager."""

    @property
    def limits(self) -> ModelLimits:
        """The model's window, completion reserve and prices."""

    @property
    def settings(self) -> ContextSettings:
        """The manifest's resolved settings (the assembler reads the trimmer's)."""

    @property
    def calibration(self) -> float | None:
        """Provider tokens per one of the counter's, when a calibration is in force (else None)."""

    @property
    def calibration_source(self) -> str | None:
        """Where the calibration was set (None without one)."""

    def system_message(self) -> Message | None:
        """The system band's row for this call (None: there is none)."""


@dataclass(slots=True)
class Call:
    """The facts of one call that both assembly paths start from, read once by the assembler.

    ``past`` is the committed log's projection, ``outcome`` the context manager's result for this
    call (``decision``, why; :attr:`managed`, the history, derived when first read), ``wm`` working memory, ``user`` the current user row (an empty one
    when there is none; ``has_user`` says whether it says something), ``tool_tokens`` the tool
    schemas' tokens and ``hitl`` whether working memory opens with a ``tool`` row answering an ask
    committed earlier (a turn resumed after a human's answer)."""

    engine: EngineView
    system: Message | None
    past: list[Message]
    wm: list[Message]
    user: Message
    has_user: bool
    tool_tokens: int
    budget: Budget
    outcome: Managed
    decision: CMDecision
    hitl: bool

    @property
    def managed(self) -> Sequence[Message]:
        """The context manager's history for this call (the reference path reads it; the
        incremental path reads the edit record instead)."""
        return self.outcome.messages


def takes_group(first: Message) -> bool:
    """Whether the pre-cut cuts through the trimmer group that ``first`` starts (the group of the
    newest overflowing row) rather than stopping before it: when ``first`` is not a ``tool`` row (a
    result that is a group of one, which the trimmer drops itself) and not a summary block (those
    stay the trimmer's to drop). One rule for both paths."""
    return first.get("role") != "tool" and not is_summary_block(first)


def band_rule(system: Message | None, user: Message, has_user: bool, placeholder: bool,
              own_system: bool) -> BandRule:
    """The band (and synthetic kind) of a payload row from the row it came from: one rule, both paths.

    ``system`` is the system band's row, ``user`` the current user row (a band of its own when
    ``has_user``), ``placeholder`` whether :data:`HELLO` was sent, and ``own_system`` whether the
    system band's row is the conversation's own system message (a transcript's) rather than one the
    engine built (then its rows are marked ``system_band``). Returns ``band_of(row, in_wm)``."""

    def band_of(src: Message, in_wm: bool) -> tuple[str, str | None]:
        if system is not None and src is system:
            return "system", None if own_system else "system_band"
        if src is HELLO and placeholder:
            return "user", "placeholder"
        if has_user and src is user:
            return "user", None
        if in_wm:
            return "working_memory", None
        if is_summary_block(src):
            return "summary", "summary"
        return "history", None

    return band_of
