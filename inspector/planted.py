"""Conversations with planted facts: the ground truth that measures the forgetting detector.

:func:`planted_conversation` writes a deterministic support conversation (a seed picks the words)
in which facts of every identifier kind are stated early (a ticket id in turn 3, an email, a time,
a path, ...) and used by the agent many turns later, in its reply text or in a tool call's
arguments. Every turn also carries distractors the detector must *not* report: a fresh lookup id
used within its own turn, an id the agent mints for the first time, and facts the user restates in
the turn that needs them.

:func:`score` replays nothing itself: given a replay of the conversation, the truth for each use of
a fact is read from the payload rows — the fact is forgotten when none of the messages the
generator wrote it into is sent at that call and no synthesised row (a summary) contains its text —
and compared with the detector's reports: precision, recall and the counts behind them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.engine.identifiers import Extractor, extract_identifiers
from inspector.transcripts.model import Transcript

_WORDS = ("amber", "birch", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo", "juniper",
          "kestrel", "lumen", "meadow", "nimbus", "orchid", "pebble", "quartz", "raven", "sierra", "tundra")
_NAMES = ("dana", "li", "omar", "priya", "sven", "mara", "tomas", "yuki", "ines", "kofi")
_SURNAMES = ("whitfield", "okafor", "lindqvist", "moreau", "tanaka", "haddad", "novak", "reyes")
_FILLER = (
    "The customer asks for a status update and wants to understand the next steps in plain words.",
    "They mention that the team has been waiting since the morning and would like a clear answer soon.",
    "The agent checks the account history and explains the policy that applies to this kind of request.",
    "Everything else on the account looks normal and nothing needs to change for the moment.",
    "The user thanks the agent and adds that the previous answer was helpful but a little short.",
    "A colleague will follow up later in the week if anything else comes up on their side.",
)
KINDS = ("id", "order", "email", "time", "path", "url", "quoted", "quantity", "word")


@dataclass(frozen=True, slots=True)
class PlantedFact:
    """A fact written into the conversation: its text, kind, where it was stated and used."""

    text: str
    kind: str
    planted_at: int  # index of the user message that states it
    needed_at: int  # index of the assistant message that uses it
    needed_in: str  # "next_reply" or "next_tool_call"
    restated: bool  # the user repeats it in the turn that needs it (so it is never forgotten)
    mentions: tuple[int, ...]  # every message index holding its text before needed_at


@dataclass
class PlantedConversation:
    """A generated conversation and the facts planted in it (the ground truth for the forgetting check)."""

    transcript: Transcript
    facts: list[PlantedFact] = field(default_factory=list)


def _fact(kind: str, rng: random.Random) -> str:
    w = rng.sample(_WORDS, 2)
    if kind == "id":
        return f"SEC-{rng.randint(10000, 99999)}"
    if kind == "order":
        return f"#W{rng.randint(1000000, 9999999)}"
    if kind == "email":
        return f"{rng.choice(_NAMES)}.{rng.choice(_SURNAMES)}@example.com"
    if kind == "time":
        return f"{rng.randint(10, 19)}:{rng.choice(('05', '15', '30', '45'))}"
    if kind == "path":
        return f"/srv/{w[0]}/{w[1]}-export.log"
    if kind == "url":
        return f"https://status.example.com/{w[0]}/{rng.randint(100, 999)}"
    if kind == "quoted":
        return f"{w[0]}-{w[1]} plan"
    if kind == "quantity":
        return f"{rng.randint(11, 97)} GB"
    return f"{w[0]}_{w[1]}_limit"


def _state(kind: str, text: str) -> str:
    return {
        "id": f"My ticket number is {text}, please keep it for later.",
        "order": f"The order in question is {text}.",
        "email": f"Send any confirmation to {text} please.",
        "time": f"I can only take a call at {text} on weekdays.",
        "path": f"The failing export writes its log to {text} on our server.",
        "url": f"Our status page for this is {text} if that helps.",
        "quoted": f'Internally we call the migration the "{text}" so use that name.',
        "quantity": f"The export is {text} in total, which is why it times out.",
        "word": f"Our config key for this is {text} in case you need it.",
    }[kind]


def _ask(cid: str, name: str, args: str) -> dict[str, Any]:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": args}}]}


def planted_conversation(seed: int = 0, turns: int = 40, facts: int = 9, *, restate_every: int = 4,
                         gap: int | None = None) -> PlantedConversation:
    """A deterministic conversation of ``turns`` user turns with ``facts`` planted facts (kinds cycle
    through :data:`KINDS`). Fact *k* is stated in turn ``2 + k`` (0-based) and used at least
    ``turns // 3`` turns later (exactly ``gap`` turns later when given); every ``restate_every``-th
    use is restated by the user in its own turn (a negative case; 0 = never). The same arguments
    give the same conversation, byte for byte."""
    if turns < facts + 3:
        raise ValueError(f"planted_conversation: {turns} turns cannot hold {facts} facts (need {facts + 3})")
    rng = random.Random(seed)
    plan: list[tuple[str, str, int, int, str, bool]] = []
    spread = max(2, turns // 3)
    for k in range(facts):
        kind = KINDS[k % len(KINDS)]
        plant = 2 + k
        need = min(turns - 1, plant + gap if gap is not None else
                   plant + spread + rng.randint(0, max(0, turns - 1 - plant - spread)))
        if need <= plant:
            raise ValueError(f"planted_conversation: fact {k} stated in turn {plant} cannot be used by turn {need}")
        plan.append((kind, _fact(kind, rng), plant, need, "next_tool_call" if k % 2 else "next_reply",
                     restate_every > 0 and k % restate_every == restate_every - 1))
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful support agent. Use the tools."}]
    mentions: dict[int, list[int]] = {k: [] for k in range(facts)}
    needed_at: dict[int, int] = {}
    for t in range(turns):
        filler = " ".join(rng.sample(_FILLER, 2))
        stated = [k for k, p in enumerate(plan) if p[2] == t]
        restated = [k for k, p in enumerate(plan) if p[3] == t and p[5]]
        text = " ".join([filler] + [_state(plan[k][0], plan[k][1]) for k in stated]
                        + [f"Remember, it is {plan[k][1]}." for k in restated])
        msgs.append({"role": "user", "content": text})
        for k in stated + restated:
            mentions[k].append(len(msgs) - 1)
        lookup = f"LK{seed % 100:02d}{t:03d}X"
        cid = f"call_{t}_a"
        msgs.append(_ask(cid, "lookup_case", f'{{"case": "{lookup}"}}'))
        msgs.append({"role": "tool", "tool_call_id": cid,
                     "content": f"Case {lookup}: open. " + " ".join(rng.sample(_FILLER, 2))})
        uses = [k for k, p in enumerate(plan) if p[3] == t]
        for k in (u for u in uses if plan[u][4] == "next_tool_call"):
            needed_at[k] = len(msgs)
            c2 = f"call_{t}_{k}"
            msgs.append(_ask(c2, "update_case", f'{{"reference": "{plan[k][1]}", "case": "{lookup}"}}'))
            msgs.append({"role": "tool", "tool_call_id": c2, "content": "updated"})
        reply = [f"I checked case {lookup} and it is open."]
        if t % 5 == 4:
            reply.append(f"I opened follow-up NEW-{seed % 100:02d}{t:03d}7 for you.")
        for k in (u for u in uses if plan[u][4] == "next_reply"):
            needed_at[k] = len(msgs)
            reply.append(f"As agreed, I am using {plan[k][1]} for this.")
        msgs.append({"role": "assistant", "content": " ".join(reply)})
    planted = [PlantedFact(text, kind, mentions[k][0], needed_at[k], where, restated,
                           tuple(i for i in mentions[k] if i < needed_at[k]))
               for k, (kind, text, _p, _n, where, restated) in enumerate(plan)]
    tr = Transcript(format="openai-chat", path=f"planted(seed={seed})", messages=msgs,
                    origins=[f"messages[{i}]" for i in range(len(msgs))], tools=None, model=None, usage={},
                    irregularities=[])
    return PlantedConversation(tr, planted)


@dataclass(frozen=True, slots=True)
class Score:
    """Detector against ground truth over one or more replays."""

    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float:
        """True positives over everything reported; 1.0 when nothing was reported."""
        d = self.true_positives + self.false_positives
        return self.true_positives / d if d else 1.0

    @property
    def recall(self) -> float:
        """True positives over everything that should have been reported; 1.0 when nothing should."""
        d = self.true_positives + self.false_negatives
        return self.true_positives / d if d else 1.0

    def __add__(self, other: Score) -> Score:
        return Score(self.true_positives + other.true_positives, self.false_positives + other.false_positives,
                     self.false_negatives + other.false_negatives)


def truth(rp: Any, conv: PlantedConversation) -> set[tuple[int, str]]:
    """(call, fact) pairs where the call needed a planted fact and the model could not see it:
    none of the fact's mention messages is in the payload and no synthesised row contains it."""
    out: set[tuple[int, str]] = set()
    by_at = {f.at: k for k, f in enumerate(rp.frames)}
    for fact in conv.facts:
        k = by_at.get(fact.needed_at)
        if k is None:
            continue
        frame = rp.frames[k]
        refs = frame.refs  # a property that rebuilds the list: read it once per fact
        sent = {r for r in refs if r is not None}
        if any(i in sent for i in fact.mentions):
            continue
        frame_own = frame.own
        own = [frame_own[j] for j, r in enumerate(refs) if r is None and j in frame_own]
        if any(fact.text.casefold() in str(m.get("content") or "").casefold() for m in own):
            continue
        out.add((k, fact.text.casefold()))
    return out


def score(rp: Any, conv: PlantedConversation, extractor: Extractor = extract_identifiers) -> Score:
    """Compare :func:`inspector.forgetting.forgotten_references` with :func:`truth` on one replay."""
    from inspector.forgetting import forgotten_references

    detected = {(x.call, x.identifier.casefold()) for calls in forgotten_references(rp, extractor) for x in calls}
    t = truth(rp, conv)
    return Score(len(detected & t), len(detected - t), len(t - detected))


def strategies(keep_turns: int = 4) -> dict[str, dict[str, Any]]:
    """The three strategies the benchmark and tests measure, with the same recency setting."""
    return {"summarising": {"type": "summarising", "params": {"keep_turns": keep_turns}},
            "sliding-window": {"type": "sliding-window", "params": {"keep_turns": keep_turns}},
            "stack": {"type": "stack"}}


def evaluate(manifest: Any, seeds: Sequence[int] = range(5), *, keep_turns: int = 4, counter: str = "estimate",
             summarizer: str = "stand-in", turns: int = 40, facts: int = 9) -> dict[str, Score]:
    """Precision/recall of the detector per strategy over generated conversations (one per seed)."""
    from inspector.compare import compare

    totals: dict[str, Score] = {}
    for seed in seeds:
        conv = planted_conversation(seed, turns=turns, facts=facts)
        replays = compare(manifest, conv.transcript, strategies(keep_turns), counter=counter, summarizer=summarizer)
        for name, rp in replays.items():
            totals[name] = totals.get(name, Score(0, 0, 0)) + score(rp, conv)
    return totals
