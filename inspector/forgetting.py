"""Forgotten references: identifiers a call needed that the model could no longer see.

For every LLM call of a replay, the identifiers (:mod:`inspector.engine.identifiers`) the call
*needs* are read from three places: the current user message, the working memory (the turn's rows
so far) and what the agent did next in the transcript (the reply's text and its tool-call
arguments). One is **forgotten** at that call when

* no row of the payload shows it (summary text, system band and tool schemas included), and
* a transcript message that exists by then holds it but is not sent at this call — summarised,
  dropped, folded at a commit, trimmed or repaired away (a transcript system message the system
  band replaces does not count: that is the agent's configuration, not a setting's loss).

An identifier the agent produces for the first time is never forgotten (nothing earlier holds it),
nor is one still visible anywhere in the payload. The detector reports, per call: the identifier,
where it was needed, the newest not-sent message holding it and why that message was not sent
(:func:`not_sent_reasons`, the one source of those reasons; the report tables use it too).

The same rule measures every strategy, so the numbers compare settings; they are a lower bound on
what a model loses (a paraphrase in a summary counts as kept only if the identifier's text
survives, and a fact with no identifier is not seen at all).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from inspector.engine.identifiers import (
    Extractor,
    Identifier,
    argument_identifiers,
    extract_identifiers,
    message_text,
    tool_call_texts,
)
from inspector.replay import Frame, Replay, expand_ranges

NEEDED_IN = ("user", "working_memory", "next_reply", "next_tool_call")
"""Where an identifier can be needed: the current user message, the working memory, the text of the
reply the agent produced after this call, the arguments of the tool calls in that reply."""


@dataclass(frozen=True, slots=True)
class Forgotten:
    """One identifier a call needed and could no longer see."""

    call: int
    identifier: str
    kind: str  # the extractor rule that found it
    needed_in: tuple[str, ...]  # subset of NEEDED_IN, in that order
    message: int  # transcript index of the newest not-sent message holding it
    reason: str  # why that message was not sent at this call

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["needed_in"] = list(self.needed_in)
        d.pop("call")
        return d


@dataclass(frozen=True, slots=True)
class CallNeeds:
    """What one call needed (``needed``) and how many of those an earlier message held (``earlier``)."""

    call: int
    needed: int
    earlier: int
    forgotten: list[Forgotten]


class _Runs:
    """Membership in sorted, disjoint half-open ``[start, end)`` ranges by bisection: O(log runs) per
    question and O(runs) to build, so a frame's long history run is never expanded to a set."""

    __slots__ = ("starts", "ends")

    def __init__(self, ranges: Sequence[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(ranges):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
            else:
                merged.append((lo, hi))
        self.starts = [a for a, _ in merged]
        self.ends = [b for _, b in merged]

    def __contains__(self, i: object) -> bool:
        if not isinstance(i, int):
            return False
        k = bisect_right(self.starts, i) - 1
        return k >= 0 and i < self.ends[k]


def _sent_runs(f: Frame) -> _Runs:
    """The transcript indices a frame's payload shows, read from its segments (never ``refs``)."""
    return _Runs([(ref, ref + (n if own is None else 1)) for ref, n, _b, _s, own in f.segments
                  if ref is not None])


# --- why a message is not sent (one source for the tables, the app and the detector) ---------------

_IN_CALL_REASONS = {
    "summarized": "summarised into the summary block (this call)",
    "reused": "summarised (reused summary, hysteresis)",
    "window-slid": "dropped by the sliding window",
    "stack-capped": "dropped by the stack cap",
    "summarizer-failed": "left out: the summarizer failed, only the recent turns were sent",
}


def not_sent_reasons(rp: Replay, call: int) -> dict[int, str]:
    """Every transcript message that exists at ``call`` (index < the call's reply) but is not in its
    payload, mapped to the reason, in transcript order."""
    f = rp.frames[call]
    sent = _sent_runs(f)
    trimmed = _Runs(f.trimmed)
    folded_now = _Runs(f.folded)
    folded_at: dict[int, tuple[int, str]] = {}
    for c in rp.commits:
        if c.turn >= f.turn:
            break
        for i in expand_ranges(c.folded):
            folded_at.setdefault(i, (c.turn, c.action))
    in_call = _IN_CALL_REASONS.get(f.decision.action, "dropped by the context manager (no summary)")
    out: dict[int, str] = {}
    for i in range(min(f.at, len(rp.messages))):
        if i in sent:
            continue
        if i in trimmed:
            out[i] = "trimmed for budget (token trimmer)"
        elif i in folded_now:
            out[i] = in_call
        elif i in folded_at:
            turn, action = folded_at[i]
            kind = "summarised" if action in ("summarized", "reused") else "dropped"
            out[i] = f"{kind} at the commit of turn {turn} (write-back of the recency cap)"
        elif rp.messages[i].get("role") == "system":
            out[i] = "system text replaced (the manifest's system band, or a later system message, wins)"
        else:
            out[i] = "removed by the pairing repair"
    return out


# --- the detector ---------------------------------------------------------------------------------

class _Texts:
    """Case-folded message texts of one replay, computed once, and where each identifier occurs."""

    def __init__(self, rp: Replay) -> None:
        self.rp = rp
        self.text: dict[int, str] = {}
        self.where: dict[str, list[int]] = {}
        tools = rp.transcript.tools
        settings_tools = getattr(rp.settings, "tools", None)
        self.tools = json.dumps([tools, settings_tools], ensure_ascii=False, default=str).casefold()

    def of(self, i: int) -> str:
        t = self.text.get(i)
        if t is None:
            t = self.text[i] = message_text(self.rp.messages[i]).casefold()
        return t

    def holders(self, key: str) -> list[int]:
        """Transcript indices whose text contains ``key``, ascending."""
        w = self.where.get(key)
        if w is None:
            w = self.where[key] = [i for i in range(len(self.rp.messages)) if key in self.of(i)]
        return w


def _needs(rp: Replay, call: int, user_at: int | None, extractor: Extractor) -> dict[str, tuple[Identifier, list[str]]]:
    f = rp.frames[call]
    msgs = rp.messages
    needs: dict[str, tuple[Identifier, list[str]]] = {}

    def add(idents: Sequence[Identifier] | Any, where: str) -> None:
        for ident in idents:
            entry = needs.setdefault(ident.key, (ident, []))
            if where not in entry[1]:
                entry[1].append(where)

    if user_at is not None:
        add(extractor(message_text(msgs[user_at])), "user")
    start = user_at + 1 if user_at is not None else 0
    for i in range(start, min(f.at, len(msgs))):
        if msgs[i].get("role") != "system":
            add(extractor(message_text(msgs[i])), "working_memory")
    if f.at < len(msgs):
        nxt = msgs[f.at]
        content = {k: v for k, v in nxt.items() if k != "tool_calls"}
        add(extractor(message_text(content)), "next_reply")
        for _, args in tool_call_texts(nxt):
            add(argument_identifiers(args, extractor), "next_tool_call")
    return needs


def call_needs(rp: Replay, extractor: Extractor = extract_identifiers) -> list[CallNeeds]:
    """Per call, in order: identifiers needed, how many an earlier message held, and the forgotten ones.

    ``extractor`` is any ``str -> Iterable[Identifier]`` (default: :func:`extract_identifiers`).
    Deterministic: the same replay gives the same lists."""
    texts = _Texts(rp)
    msgs = rp.messages
    users = [i for i, m in enumerate(msgs) if m.get("role") == "user"]
    out: list[CallNeeds] = []
    u = 0
    for k, f in enumerate(rp.frames):
        while u < len(users) and users[u] < f.at:
            u += 1
        user_at = users[u - 1] if u and f.turn > 0 else None
        needs = _needs(rp, k, user_at, extractor)
        sent = _sent_runs(f)
        plain = _Runs([(ref, ref + n) for ref, n, _b, _s, own in f.segments if ref is not None and own is None])
        own_rows = [own for _r, _n, _b, _s, own in f.segments if own is not None]
        turn_start = user_at if user_at is not None else 0
        payload_text: str | None = None
        reasons: dict[int, str] | None = None
        earlier = 0
        lost: list[Forgotten] = []
        for key, (ident, where) in needs.items():
            # held earlier: by a message of an earlier turn, or by one of this turn that is not sent
            older = [i for i in texts.holders(key) if i < f.at and (i < turn_start or i not in sent)]
            if not older:
                continue
            earlier += 1
            # visible: a transcript row sent as is holds it (read from the runs), or a synthesised /
            # rebound row or the tool schemas do — never a join of the whole payload per call
            if any(i in plain for i in texts.holders(key)):
                continue
            if payload_text is None:
                payload_text = "\n".join([message_text(m).casefold() for m in own_rows] + [texts.tools])
            if key in payload_text:
                continue
            # a system message replaced by the band (Q21) is not a message this setting left out
            holder = next((i for i in reversed(older) if i not in sent and msgs[i].get("role") != "system"), None)
            if holder is None:
                continue
            if reasons is None:
                reasons = not_sent_reasons(rp, k)
            order = tuple(w for w in NEEDED_IN if w in where)
            lost.append(Forgotten(k, ident.text, ident.kind, order, holder,
                                  reasons.get(holder, "not in the payload")))
        out.append(CallNeeds(k, len(needs), earlier, lost))
    return out


def forgotten_references(rp: Replay, extractor: Extractor = extract_identifiers) -> list[list[Forgotten]]:
    """The forgotten identifiers of every call (one list per frame, in frame order)."""
    return [c.forgotten for c in call_needs(rp, extractor)]


def forgetting_totals(needs: Sequence[CallNeeds]) -> dict[str, Any]:
    """Totals over calls: ``forgotten`` (call, identifier) pairs, ``forgotten_calls`` (calls that
    forgot at least one), ``needing_calls`` (calls that needed an identifier an earlier message
    held), ``forgotten_per_call`` (forgotten ÷ needing_calls; 0 when no call needed one) and
    ``forgotten_ids`` (distinct identifiers, in order of first loss)."""
    forgotten = sum(len(c.forgotten) for c in needs)
    needing = sum(1 for c in needs if c.earlier)
    ids: list[str] = []
    for c in needs:
        for x in c.forgotten:
            if x.identifier not in ids:
                ids.append(x.identifier)
    return {"forgotten": forgotten, "forgotten_calls": sum(1 for c in needs if c.forgotten),
            "needing_calls": needing, "forgotten_per_call": round(forgotten / needing, 4) if needing else 0.0,
            "forgotten_ids": ids}


def replay_document(rp: Replay, *, payloads: bool = False, extractor: Extractor = extract_identifiers) -> dict[str, Any]:
    """The replay JSON (:meth:`Replay.to_json`) with ``forgotten`` on every frame and the forgetting
    totals under ``totals.forgetting``. Not masked: use :func:`replay_dumps` for what leaves the process."""
    doc = rp.to_json(payloads=payloads)
    needs = call_needs(rp, extractor)
    for frame, c in zip(doc["frames"], needs, strict=True):
        frame["forgotten"] = [x.to_json() for x in c.forgotten]
    doc["totals"]["forgetting"] = forgetting_totals(needs)
    return doc


def replay_dumps(rp: Replay, *, payloads: bool = False, extractor: Extractor = extract_identifiers) -> str:
    """:func:`replay_document` as JSON text, secrets masked."""
    from inspector.redact import mask_secrets

    return json.dumps(mask_secrets(replay_document(rp, payloads=payloads, extractor=extractor)),
                      ensure_ascii=False, indent=1)
