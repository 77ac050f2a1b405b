"""A replay's result: the :class:`Replay` record (frames, commits, what was in force) and its totals and JSON."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from inspector.engine.managers.base import NO_TERMS, BudgetTerms
from inspector.engine.types import Message
from inspector.json_text import masked_document_text
from inspector.policy import DEFAULT_POLICY, AgentInForce, ReplayPolicy
from inspector.replay.records import Commit, Frame

T = TypeVar("T")

PENDING_WORDS = "next call, never made"
"""How every face marks the pending next call (:attr:`Replay.pending_call`): the call a transcript
that ends on a tool result or a user message would make next, which the agent never made."""


@dataclass
class Replay:
    """One replay of a transcript under settings: the :class:`Frame` of every LLM call
    and the :class:`Commit` of every turn boundary, with what was in force (counter, summarizer,
    limits, policy, agent, budget terms) and the summarizer's calls, failures and cost.
    Made by :func:`~inspector.replay.replay`."""

    transcript: Any
    settings: Any
    counter: str
    summarizer_mode: str
    summarizer_label: str
    frames: list[Frame] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    summarizer_calls: dict[str, int] = field(default_factory=lambda: {"in_turn": 0, "commit": 0})
    summarizer_failures: int = 0
    summary_cache_hits: int = 0
    summary_cost_usd: float | None = 0.0
    tokens_computed: int = 0
    limits: dict[str, Any] = field(default_factory=dict)
    token_counter: Any = None  # the replay's own counter: reports reuse its per-message cache, never recount
    policy: ReplayPolicy = DEFAULT_POLICY
    summary_price_model: str | None = None  # the stand-in's estimated summaries are priced at this model's rates
    agent: AgentInForce | None = None  # the system text, tools, model and window in force, with sources (Q21)
    unrecorded: Any = None
    """The transcript's unrecorded prefix (:class:`inspector.calibration.PrefixEstimate`) when its log
    leaves out the system prompt or tools, or when the user added one to the budget; else None."""
    terms: BudgetTerms = NO_TERMS
    """What the replay's context manager added to every call's budget (whether it summarises, its
    hysteresis ratio and summary threshold): what faces read instead of the manager's name or params."""
    views: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """Views the report layer derives from this replay once (masked previews, per-call indexes),
    by name; read through :meth:`view`. Never serialised: a view is a function of the replay."""

    def view(self, name: str, make: Callable[[], T]) -> T:
        """The derived view ``name``, made by ``make()`` on first use and kept on this replay (so a
        face stepping through a long conversation computes it once, and two replays never share it)."""
        if name not in self.views:
            self.views[name] = make()
        made: T = self.views[name]
        return made

    def stated(self) -> list[str]:
        """What every face prints above a replay: the policy, the agent, the summarizer (Q21, Q22)."""
        lines = [self.policy.describe()]
        if self.agent is not None:
            lines.append(self.agent.describe())
        lines.append(f"summarizer: {self.summarizer_label}")
        prefix = self.prefix_line()
        if prefix:
            lines.append(prefix)
        return lines

    def prefix_line(self) -> str:
        """The unrecorded prefix in words: what the log leaves out, the estimate, and whether this
        budget counts it (``unrecorded prefix: …``); empty when there is nothing to say."""
        est = self.unrecorded
        added = int(self.limits.get("unrecorded_prefix") or 0)
        if added:
            return (f"unrecorded prefix: {added:,} tokens added to the budget as a fixed part of every call "
                    f"({self.limits.get('unrecorded_prefix_source')})")
        if est is None or not est.missing:
            return ""
        size = f"≈ {est.tokens:,} tokens (estimated: fitted offset of the recorded usage)" if est.tokens is not None \
            else "size unknown (no usage to fit)"
        return (f"unrecorded prefix: the log does not record the {' or the '.join(est.missing)}, {size}; NOT in "
                "this budget, so the headroom is overstated by that much (add it: --unrecorded-prefix auto)")

    @property
    def messages(self) -> list[Message]:
        """The replayed transcript's messages (what frames' indices point at)."""
        return self.transcript.messages

    @property
    def pending_call(self) -> int | None:
        """Index of the **pending next call**, or None. A transcript that ends without a reply (on a
        tool result or a user message) gets one last frame: the payload that would be sent next
        (docs/design.md). The agent never made that call, so :meth:`totals` (and the sweep rows, fleet
        summaries and table totals built on them) leave it out by default; every face shows it
        marked with :data:`PENDING_WORDS`."""
        frames = self.frames
        return len(frames) - 1 if frames and frames[-1].at >= len(self.transcript.messages) else None

    def counted_frames(self, *, include_pending: bool = False) -> list[Frame]:
        """The calls the agent made: every frame but the pending next call (unless ``include_pending``)."""
        k = None if include_pending else self.pending_call
        return self.frames if k is None else self.frames[:k]

    def totals(self, *, include_pending: bool = False) -> dict[str, Any]:
        """Totals and peaks over the calls the agent made; the pending next call (if any) is left out
        unless ``include_pending`` — its payload and the summary computed for it (a summarizer call,
        failure and cost) — and ``pending_calls_left_out`` (present only then) says so."""
        frames = self.counted_frames(include_pending=include_pending)
        left_out = len(self.frames) - len(frames)
        summarizer_calls = dict(self.summarizer_calls)
        summary_cost = self.summary_cost_usd
        failures = self.summarizer_failures
        if left_out and self.frames[-1].decision.summarizer_called:  # its summary was never asked for either
            summarizer_calls["in_turn"] = max(0, summarizer_calls["in_turn"] - 1)
            failures -= self.frames[-1].decision.action == "summarizer-failed"
            pending_cost = self.frames[-1].summary_cost_usd
            summary_cost = None if summary_cost is None or pending_cost is None else \
                round(summary_cost - pending_cost, 8)
        costs = [f.cost_usd for f in frames]
        payload_cost = None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 8)
        total_cost = None if payload_cost is None or summary_cost is None else \
            round(payload_cost + summary_cost, 8)
        out = {
            "frames": len(frames),
            "payload_tokens": sum(f.payload_tokens for f in frames),
            "max_payload_tokens": max((f.payload_tokens for f in frames), default=0),
            "over_budget": sum(1 for f in frames if f.headroom < 0),
            "summarizer_calls": summarizer_calls,
            "folds": self.folds(frames),
            "summarizer_failures": failures,
            "summary_cache_hits": self.summary_cache_hits,
            "repairs": sum(len(f.repairs) for f in frames),
            "trimmed": sum(b - a for f in frames for a, b in f.trimmed) + sum(f.trimmed_synthetic for f in frames),
            "folded": sum(b - a for f in frames for a, b in f.folded),
            "checks_failed": sum(1 for f in frames if f.check != "ok"),
            "payload_cost_usd": payload_cost,
            "summary_cost_usd": summary_cost,
            "cost_usd": total_cost,
        }
        if left_out:
            out["pending_calls_left_out"] = left_out
        return out

    def folds(self, frames: Sequence[Frame] | None = None) -> dict[str, int]:
        """Older turns left out without a model call (Q20): ``drop``, or ``llm`` with no live model.
        Shown beside, never inside, the summarizer calls. ``frames``: the calls to count (default all)."""
        return {"in_turn": sum(1 for f in (self.frames if frames is None else frames)
                               if f.decision.action == "dropped"),
                "commit": sum(1 for c in self.commits if c.action == "dropped")}

    def to_json(self, *, payloads: bool = False) -> dict[str, Any]:
        """The replay as a JSON document: the transcript, the settings and what was in
        force, each distinct summary text once (``summaries``, in order of first use; a frame names
        its own by ``summary_index``), every frame (with its payload rows when ``payloads``; the
        pending call marked), every commit and the :meth:`totals`. Not masked: :meth:`dumps` is what
        leaves the process."""
        t = self.transcript
        msgs = t.messages
        summaries: dict[str, int] = {}
        frames = self._frames_json(payloads, summaries)
        return {
            "transcript": {"format": t.format, "path": t.path, "conversation": getattr(t, "conversation", 0),
                           "messages": len(msgs), "turns": sum(1 for m in msgs if m.get("role") == "user")},
            "settings": {**self.settings.to_dict(), "counter": self.counter, "summarizer_mode": self.summarizer_mode,
                         "summarizer_label": self.summarizer_label, "limits": self.limits,
                         "policy": self.policy.as_dict(),
                         "agent": self.agent.as_dict() if self.agent is not None else None},
            "summaries": list(summaries),
            "frames": frames,
            "commits": [c.to_json() for c in self.commits],
            "totals": self.totals(),
        }

    def _frames_json(self, payloads: bool, summaries: dict[str, int]) -> list[dict[str, Any]]:
        msgs = self.transcript.messages if payloads else None
        decisions: dict[int, dict[str, Any]] = {}  # frames of one shared decision record share its cm object
        budgets: dict[Any, dict[str, Any]] = {}  # and frames of equal budgets one budget object
        out = [f.to_json(msgs, summaries, decisions=decisions, budgets=budgets) for f in self.frames]
        k = self.pending_call
        if k is not None:  # the one frame the agent never sent: marked, and left out of "totals"
            out[k]["pending"] = True
        return out

    def dumps(self, *, payloads: bool = False) -> str:
        """The replay as JSON text, secrets masked (this is what leaves the process), written by the
        one writer (:func:`inspector.json_text.masked_document_text`: one line per frame)."""
        return masked_document_text(self.to_json(payloads=payloads))

