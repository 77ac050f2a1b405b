"""The engine a live agent loop holds: manifest in, paired and budgeted ``messages[]`` out, plus the
record of every decision behind it (docs/design.md §3.9).

Live use::

    engine = ContextEngine.from_manifest("agent.yaml", counter="tiktoken")
    engine.user("Where is my order?")
    while True:
        call = engine.assemble()                       # paired, within budget, recorded
        reply = litellm.completion(model=..., messages=call.messages, tools=call.tools)
        msg = reply.choices[0].message.model_dump(exclude_none=True)
        engine.record(msg)
        if not msg.get("tool_calls"):
            break
        for tc in msg["tool_calls"]:
            engine.record({"role": "tool", "tool_call_id": tc["id"], "content": run_tool(tc)})
    engine.commit()                                    # archive + write-back of the recency cap

The assembly itself is the assembler plugin's (:mod:`inspector.engine.assembly`); the plugins are
made from the manifest's bindings by :mod:`inspector.engine.builders`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from inspector.engine.assembly.assembler import ContextAssembler
from inspector.engine.assembly.records import Assembly, CommitRecord
from inspector.engine.budget import resolve_calibration
from inspector.engine.builders import build_assembler, build_context_manager
from inspector.engine.history import LogRuns
from inspector.engine.limits import resolve_limits
from inspector.engine.llm import LLMEngine
from inspector.engine.managers.base import is_manager, manage
from inspector.engine.memory import Conversation
from inspector.engine.pairing import check_provider_payload
from inspector.engine.tokens import TokenCounter, make_counter
from inspector.engine.types import Message, ProviderPayloadError
from inspector.ids import stringify_ids
from inspector.manifest import ManifestSource, as_settings
from inspector.plugins import Registry, default_registry
from inspector.vocabulary import fold_kind, registered_actions

__all__ = ["PLACEMENTS", "ContextEngine"]

PLACEMENTS = ("system_header", "system_pattern", "system_agents", "system_tools", "system_skills",
              "system_ontology", "system_body", "system_memory")
"""The system band's part placements, in the order the band lays them out (then by priority)."""


class ContextEngine:
    """Manifest in, paired and budgeted ``messages[]`` out, plus the record of what was done.

    One instance per agent conversation: it owns the context manager (and so the hysteresis cache),
    the token counter's per-message cache, and the conversation state. ``settings`` is a manifest
    (a path, its text, a mapping or resolved settings); ``counter`` a counter name or object;
    ``llm`` the engine a model-calling summarizer calls through; ``summarizer`` overrides the
    manifest's (see :func:`~inspector.engine.builders.build_context_manager`); ``allow_imports``
    the modules a manifest ``ref`` may import; ``tools`` the tool schemas sent (default: the
    manifest's); ``calibration`` ``{model: factor}`` token calibration. Raises
    :class:`~inspector.errors.ManifestError` for a manifest that does not validate and
    :class:`TypeError` for a plugin that rejects its params.
    """

    def __init__(self, settings: ManifestSource, *, counter: str | TokenCounter = "tiktoken", llm: LLMEngine | None = None,
                 summarizer: Any = "manifest", summary_cache: Any = None, registry: Registry | None = None,
                 allow_imports: Iterable[str] = (), tools: Sequence[dict[str, Any]] | None = None,
                 calibration: Mapping[str, float] | None = None) -> None:
        self.settings = as_settings(settings, allow_imports)
        self.registry = registry or default_registry()
        self.limits = resolve_limits(self.settings)
        self.counter: TokenCounter = make_counter(counter, self.limits.effective_model) if isinstance(counter, str) \
            else counter
        # opt-in token calibration (manifest token_calibration or ``calibration={model: factor}``)
        self.calibration, self.calibration_source = resolve_calibration(
            self.settings.primary_model(), self.limits, self.counter.name, calibration)
        self.llm = llm
        self.cm = build_context_manager(self.settings, self.counter, registry=self.registry, summarizer=summarizer,
                                        llm=llm, summary_cache=summary_cache, allow_imports=allow_imports)
        self.assembler = build_assembler(self.settings, registry=self.registry, allow_imports=allow_imports)
        self.tools: list[dict[str, Any]] | None = list(tools) if tools is not None else (
            [dict(t) for t in self.settings.tools] if self.settings.tools else None)
        self.conversation = Conversation(injected_context=list(self.settings.injected_context),
                                         memory_seeds=list(self.settings.memory_seeds))
        self.summarizer_calls = {"in_turn": 0, "commit": 0}
        self._system_cache: tuple[str, Message] | None = None
        self._log_runs = LogRuns()  # the committed log's turn starts, for the write-back's recency cap
        self._ids_converted: list[str] = []  # numeric ids record() converted since the last call (Q19)
        self._fold: tuple[object, str, str] = ((), "", "")
        """(the registry's declared actions, an action, its fold kind): a write-back folds with the
        same action turn after turn, and the kind is derived afresh only when either changes."""

    @classmethod
    def from_manifest(cls, path: str | Path, **kw: Any) -> ContextEngine:
        """The engine for the manifest file at ``path`` (keywords as for the constructor)."""
        return cls(path, **kw)

    # -- the system band (rebuilt per call, never accumulates: docs/design.md Q15) -----------
    def system_message(self) -> Message | None:
        """The system band's row for this call: the conversation's own system message when it has
        one (a transcript's), else one built from the injected context, the memory seeds and the
        manifest's parts in placement order; None when all of those are empty."""
        conv = self.conversation
        if conv.system_message is not None:
            return conv.system_message
        lines = [s.strip() for s in conv.injected_context if isinstance(s, str) and s.strip()]
        lines += [f"[memory:{k}] {v}".strip() for k, v in conv.memory_seeds if str(v).strip()]
        parts = sorted(self.settings.parts, key=lambda p: (
            PLACEMENTS.index(p.placement) if p.placement in PLACEMENTS else 99, p.priority))
        lines += [p.content.strip() for p in parts if p.content.strip()]
        if not lines:
            return None
        text = "\n\n".join(lines)
        if self._system_cache is None or self._system_cache[0] != text:
            self._system_cache = (text, {"role": "system", "content": text})
        return self._system_cache[1]

    # -- the loop -------------------------------------------------------------------------------
    def user(self, text: str | Message) -> None:
        """Start a turn with the user's ``text`` (a dict is kept as the exact user row)."""
        self.conversation.note_user_input(text)

    def record(self, msg: Message) -> None:
        """Append one in-flight row (an assistant message or a tool result). A numeric tool-call id
        becomes its string form here, as at import (Q19, :mod:`inspector.ids`): the row recorded is
        a converted copy, and the next call's record says so in its warnings."""
        msg, changed = stringify_ids(msg)
        if changed:
            self._ids_converted += changed
        self.conversation.record(msg)

    def assemble(self, *, strict: bool = True) -> Assembly:
        """Build this call's payload. ``strict`` raises :class:`ProviderPayloadError` when the final
        check fails (as the kernel does); otherwise the verdict is recorded in ``check``."""

        assembler = self.assembler
        result: Assembly = assembler.assemble(self)
        if result.decision.summarizer_called:
            self.summarizer_calls["in_turn"] += 1
        if self._ids_converted:
            warnings = getattr(result, "warnings", None)
            if isinstance(warnings, list):
                warnings.append("non-string tool-call id converted to a string when recorded: "
                                + ", ".join(self._ids_converted))
            self._ids_converted = []
        try:
            # The final check nothing can skip. Its shortcuts (``verified``: the pairing pass read the
            # payload as the check does; ``clean``: ranges it need not read) are trusted only when the
            # rows sent are provably the rows checked: the default assembler itself returned this record
            # (not a subclass, a wrapper or a patched method, any of which may edit ``messages`` after it
            # was checked). Any other assembler's payload is checked whole.
            if type(assembler) is ContextAssembler and "assemble" not in vars(assembler) and type(result) is Assembly:
                if not result.verified:
                    check_provider_payload(result.messages, skip=result.clean, skip_declares=result.skip_declares)
            else:
                check_provider_payload(result.messages)
        except ProviderPayloadError as exc:
            result.check = str(exc)
            if strict:
                raise
        return result

    def commit(self, text: str | None = None) -> CommitRecord:
        """``note_agent_response``: archive the turn as one leaf, then write back the recency cap."""
        conv = self.conversation
        turn = conv.turn_index
        rows = conv.commit_rows(text)
        return self._write_back(turn, len(rows))

    def finalize_turn(self, text: str | None = None) -> CommitRecord | None:
        """The session controller's finalize with the HITL fix: fold whenever there is something to fold
        (a turn paused for a human's answer commits its open ask, and the answer pairs across the boundary)."""
        if (text and text.strip()) or self.conversation.working:
            return self.commit(text)
        return None

    def _write_back(self, turn: int, committed_rows: int) -> CommitRecord:
        conv = self.conversation
        past = conv.committed_messages
        cm = self.cm
        turn_cap = getattr(cm, "turn_cap", None)
        msg_cap = getattr(cm, "message_cap", None)
        # the turn count from running starts (each committed row read once), not a split per commit: a
        # shipped manager's own, which its decision reads next (one reader of the log, not two)
        runs = cm.log_runs if is_manager(cm) else self._log_runs.sync
        over = (turn_cap is not None and len(runs(past).starts) > turn_cap) or \
               (msg_cap is not None and len(past) > msg_cap)
        if not over:
            return CommitRecord(turn, "unchanged", False, 0, None, conv.archive.stats(), committed_rows)
        result = manage(cm, past, 1)
        d = result.decision
        if d.summarizer_called:
            self.summarizer_calls["commit"] += 1
        if d.action == "summarizer-failed":
            # Deliberate: a failed summary at commit leaves the stored log as it was (the next commit
            # retries) instead of writing back the verbatim tail and losing the older turns.
            return CommitRecord(turn, d.action, True, 0, d.error, conv.archive.stats(), committed_rows)
        kind = self._fold_kind(cm, d.action)
        text_ = d.summary_text if kind == "summary" else None
        conv.archive.apply_edits(result.edits, kind, text_)  # type: ignore[arg-type]
        return CommitRecord(turn, d.action, d.summarizer_called, d.compressed_turns + d.dropped_turns, d.error,
                            conv.archive.stats(), committed_rows, list(d.folded))

    def _fold_kind(self, cm: object, action: str) -> str:
        """How the archive records a fold of ``action``: as the running manager declares it when it
        declares that action (no other strategy's module is loaded for it), else
        :func:`~inspector.vocabulary.fold_kind` over the registry, kept while the registry's declared
        actions (one tuple until a strategy is registered or removed) and the action stay the same."""
        for a in getattr(type(cm), "actions", ()):
            if a.code == action:
                return a.fold_kind or "drop"
        actions = registered_actions()
        kept = self._fold
        if kept[0] is not actions or kept[1] != action:
            kept = self._fold = (actions, action, fold_kind(action))
        return kept[2]
