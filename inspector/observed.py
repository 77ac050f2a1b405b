"""Observed payloads vs the engine: what the reference runtime sent, and what ours would send.

Some transcripts record the exact ``messages[]`` a runtime sent (mas-lab ``context_assembled``
events, Letta's in-context window). For each such payload we rebuild the same conversation state —
system row, the stored log before the last user message (one archive leaf per user turn, as it was
stored), the current user message, and the in-turn rows after it — and let our engine assemble the
call under the given manifest. The two payloads then sit side by side: counts, tokens, whether they
are identical, and what our engine would have changed (manager action, trims, pairing repairs).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from inspector.engine import Assembly, ContextEngine
from inspector.engine.history import split_user_turns
from inspector.engine.types import Message
from inspector.manifest import as_settings


def engine_for_observed(settings: Any, messages: list[Message], tools: list[dict[str, Any]] | None, *,
                        counter: str = "estimate", summarizer: str = "stand-in",
                        system: str = "auto") -> tuple[ContextEngine, Assembly]:
    """Our engine's call for the state the observed payload was assembled from.

    ``system``: ``transcript`` keeps the payload's own system row, ``manifest`` the manifest's
    system band; ``auto`` = the payload's own unless the manifest declares system text."""
    engine = ContextEngine(settings, counter=counter, summarizer=summarizer,
                           tools=tools if tools is not None else None)
    rest = list(messages)
    if rest and rest[0].get("role") == "system":
        declares = bool(settings.injected_context or settings.memory_seeds or settings.parts)
        if system == "transcript" or (system == "auto" and not declares):
            engine.conversation.system_message = rest[0]
        rest = rest[1:]
    last_user = max((i for i, m in enumerate(rest) if m.get("role") == "user"), default=None)
    history, current, wm = (rest, None, []) if last_user is None else \
        (rest[:last_user], rest[last_user], rest[last_user + 1:])
    for turn, group in enumerate(split_user_turns(history), start=1):
        engine.conversation.archive.add_leaf(turn, group)
    if current is not None:
        engine.user(current)
    for m in wm:
        engine.record(m)
    return engine, engine.assemble(strict=False)


def _tool_names(tools: Sequence[Mapping[str, Any]] | None) -> list[str]:
    out = []
    for t in tools or ():
        fn = t.get("function") if isinstance(t, Mapping) else None
        name = fn.get("name") if isinstance(fn, Mapping) else t.get("name") if isinstance(t, Mapping) else None
        out.append(str(name))
    return out


def payload_differences(observed: Sequence[Message], observed_tools: Sequence[Mapping[str, Any]] | None,
                        ours: Sequence[Message], our_tools: Sequence[Mapping[str, Any]] | None) -> dict[str, str]:
    """What differs between a recorded payload and ours, in words: ``system`` (the system text),
    ``tools`` (the schemas by name), ``rows`` (which rows are only on one side, or changed). Each
    value is ``""`` when that part is the same."""
    def system_text(msgs: Sequence[Message]) -> str | None:
        return msgs[0].get("content") if msgs and msgs[0].get("role") == "system" else None  # type: ignore[return-value]

    a, b = system_text(observed), system_text(ours)
    if a == b:
        system = ""
    elif a is None or b is None:
        system = "observed has no system text" if a is None else "ours has no system text"
    else:
        system = f"different system text (observed {len(str(a)):,} chars, ours {len(str(b)):,})"
    ta, tb = _tool_names(observed_tools), _tool_names(our_tools)
    if list(observed_tools or []) == list(our_tools or []):
        tools = ""
    else:
        only_a = [n for n in ta if n not in tb]
        only_b = [n for n in tb if n not in ta]
        bits = [f"observed {len(ta)}, ours {len(tb)}"]
        if only_a:
            bits.append("only observed: " + ", ".join(only_a[:8]))
        if only_b:
            bits.append("only ours: " + ", ".join(only_b[:8]))
        if not only_a and not only_b:
            bits.append("same names, different schemas")
        tools = "; ".join(bits)
    start_a = 1 if a is not None else 0
    start_b = 1 if b is not None else 0
    rest_a, rest_b = list(observed[start_a:]), list(ours[start_b:])
    matcher = difflib.SequenceMatcher(a=[_key(m) for m in rest_a], b=[_key(m) for m in rest_b], autojunk=False)
    parts = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op == "delete":
            parts.append(f"only observed: rows {_span(i1 + start_a, i2 + start_a)}")
        elif op == "insert":
            parts.append(f"only ours: rows {_span(j1 + start_b, j2 + start_b)}")
        else:
            parts.append(f"observed rows {_span(i1 + start_a, i2 + start_a)} differ from ours "
                         f"{_span(j1 + start_b, j2 + start_b)}")
    return {"system": system, "tools": tools, "rows": "; ".join(parts[:6]) + (" …" if len(parts) > 6 else "")}


def _key(m: Message) -> str:
    return json.dumps(m, sort_keys=True, default=str)


def _span(lo: int, hi: int) -> str:
    return str(lo) if hi - lo == 1 else f"{lo}–{hi - 1}"


def compare_observed(manifest: Any, transcript: Any, *, counter: str | None = None, policy: Any = None,
                     sample: bool | None = None) -> pd.DataFrame:
    """One row per observed payload of ``transcript`` (empty when the format records none).

    ``manifest`` None = the transcript's own agent. The policy (default
    :data:`~inspector.policy.DEFAULT_POLICY`, ``counter`` overriding its counter) chooses whose system
    text and tools our side uses, as for a replay (Q21). Beside the counts, ``differs`` says what
    differs — system text, tools, which rows — and ``system``/``tools``/``rows`` hold each part."""
    from inspector.policy import DEFAULT_POLICY, NO_MANIFEST, resolve_agent, summarizer_choice

    pol = (policy or DEFAULT_POLICY).with_(counter=counter)
    settings = as_settings(NO_MANIFEST if manifest is None else manifest, ())
    if sample is None:  # a bundled sample says so inside the file (Q25)
        sample = manifest is None or settings.sample
    declares_system = bool(settings.injected_context or settings.memory_seeds or settings.parts)
    system = pol.system if pol.system != "auto" else ("manifest" if declares_system and not sample else "transcript")
    tools_from = pol.tools if pol.tools != "auto" else (
        "manifest" if settings.tools is not None and not sample else "transcript")
    settings, _agent = resolve_agent(settings, transcript, pol, sample=sample)  # the model (and window) in force
    mode = summarizer_choice(settings, pol.summarizer, live=False)
    rows = []
    for k, op in enumerate(getattr(transcript, "observed_payloads", []) or []):
        tools = op.tools if tools_from == "transcript" else (
            [dict(t) for t in settings.tools] if settings.tools else None)
        engine, call = engine_for_observed(settings, op.messages, tools, counter=pol.counter, summarizer=mode,
                                           system=system)
        observed_tokens = engine.counter.count(op.messages) + engine.counter.count_tools(op.tools)
        diff = payload_differences(op.messages, op.tools, call.messages, call.tools)
        identical = call.messages == op.messages and list(op.tools or []) == list(call.tools or [])
        rows.append({
            "payload": k, "label": op.label, "turn": op.turn,
            "observed_messages": len(op.messages), "engine_messages": len(call.messages),
            "observed_tokens": observed_tokens, "engine_tokens": call.payload_tokens,
            "identical": identical,
            "differs": "nothing" if identical else ", ".join(p for p in ("system", "tools", "rows") if diff[p]),
            "system": diff["system"], "tools": diff["tools"], "rows": diff["rows"],
            "cm_action": call.decision.action, "trimmed": call.trimmed_count, "repairs": len(call.repairs),
            "repair_kinds": ", ".join(sorted({r.kind for r in call.repairs})), "check": call.check,
        })
    return pd.DataFrame(rows, columns=["payload", "label", "turn", "observed_messages", "engine_messages",
                                       "observed_tokens", "engine_tokens", "identical", "differs", "system", "tools",
                                       "rows", "cm_action", "trimmed", "repairs", "repair_kinds", "check"])
