"""Invariants of the whole engine over random conversations and random manifests (hypothesis).

For every call: the payload passes the provider check; a second pairing pass changes nothing
(repair is idempotent); the payload fits the trimmer's budget whenever the pinned parts (system
band, last non-pinned message, newest working-memory group) fit. For every commit: the archive
still holds every message ever committed, in order (nothing is lost by folding).
"""

from __future__ import annotations

import math
from fractions import Fraction

from builders import registered_managers
from hypothesis import HealthCheck, example, given, settings
from hypothesis import event as hevent
from hypothesis import strategies as st

from inspector.engine import ContextEngine
from inspector.engine.history import is_ask, start_of_tool_group
from inspector.engine.pairing import check_provider_payload, sanitize_provider_messages
from inspector.manifest import settings_from_dict


class Echo:
    """Deterministic summarizer: a short text, so summaries appear without a model."""

    def summarize(self, msgs: list[dict]) -> str:
        return f"summary of {len(msgs)} messages"


managers = registered_managers()  # every registered strategy (tests/builders.py)
trimmers = st.fixed_dictionaries({
    "max_tokens": st.one_of(st.integers(60, 3000), st.integers(300, 900)), "reserve_tokens": st.integers(0, 300),
    "safety_margin_ratio": st.sampled_from([0.0, 0.1, 0.25]),
})

text = st.text(alphabet="abcdefghij ", min_size=0, max_size=120)
# sometimes a fat row, so a small budget forces the manager to act inside a turn (summarise, reuse, drop)
body = st.one_of(text, text, st.integers(200, 900).map(lambda n: "k" * n))


@st.composite
def tool_round(draw, n: int):  # noqa: ANN001, ANN201
    ids = [f"c{n}_{k}" for k in range(draw(st.integers(1, 3)))]
    rows: list[dict] = [{"role": "assistant", "content": draw(st.sampled_from(["", "thinking"])),
                         "tool_calls": [{"id": i, "type": "function",
                                         "function": {"name": "f", "arguments": draw(text)}} for i in ids]}]
    # (results below may be fat: they are what pushes a turn's history over the hint)
    for i in ids:
        fate = draw(st.sampled_from(["ok", "ok", "ok", "missing", "dup", "wrong", "orphan"]))
        if fate == "missing":
            continue
        rid = {"wrong": f"zz{n}", "orphan": "ghost"}.get(fate, i)
        rows.append({"role": "tool", "tool_call_id": rid, "content": draw(body)})
        if fate == "dup":
            rows.append({"role": "tool", "tool_call_id": i, "content": "again"})
    return rows


@st.composite
def conversations(draw, always_commit: bool = False):  # noqa: ANN001, ANN201
    turns = []
    for t in range(draw(st.integers(1, 9))):
        steps = []
        for s in range(draw(st.integers(0, 3))):
            steps.append(draw(tool_round(t * 10 + s)))
        final = draw(st.one_of(st.none(), text))
        turns.append((draw(body), steps, final, always_commit or draw(st.booleans())))
    return turns


def pinned_tokens(engine: ContextEngine, call) -> int:  # noqa: ANN001
    """Tokens of what the trimmer may not cut, as the payload sends it: the system band, the last
    history group (or the user row), the answers it is owed at the front of working memory and the
    newest working-memory group, of the history and working memory as the manager's edit record
    hands them on (a placeholder may be longer than the row it stands for, as observation-masking's
    of an empty result; a compaction's kept user text is the history's last group)."""
    c = engine.counter
    system = engine.system_message()
    conv = engine.conversation
    edits = call.decision.edits
    hist = list(edits.apply(conv.committed_messages)) if edits is not None else conv.committed_messages
    wm = list(edits.apply_working(conv.working)) if edits is not None else conv.working
    first_newest = len(wm)
    for i in range(len(wm) - 1, -1, -1):
        if is_ask(wm[i]) or wm[i].get("role") != "tool":
            first_newest = i
            break
    newest = wm[first_newest:]
    if conv.last_user_text.strip():
        last = conv.current_user
    elif hist:
        last = hist[start_of_tool_group(hist, len(hist) - 1):]  # the trimmer keeps the last history group whole
    else:
        last = None if wm else {"role": "user", "content": "Hello"}  # the assembler's placeholder
    if isinstance(last, dict):
        last = [last]
    held: list[dict] = []  # answers at the front of WM of an ask that ends the history stay with it
    if last and is_ask(last[-1]) and not conv.last_user_text.strip():
        owed = {c["id"] for c in last[-1]["tool_calls"]}
        for k, m in enumerate(wm):
            if m.get("role") != "tool" or m.get("tool_call_id") not in owed:
                break
            owed.discard(m["tool_call_id"])
            if k < first_newest:
                held.append(m)
    rows = ([system] if system else []) + (last or []) + held + newest
    # Q18: with no system band, a summary block that opens the history is the payload's leading system
    # row, protected from every cut exactly like a system band
    lead = call.messages[0] if call.messages else None
    if not system and lead is not None and lead.get("role") == "system" and all(lead is not r for r in rows):
        rows.insert(0, lead)
    return c.count(rows)


def _ask(i: str, content: str = "") -> dict:
    return {"role": "assistant", "content": content,
            "tool_calls": [{"id": i, "type": "function", "function": {"name": "f", "arguments": ""}}]}


def _res(i: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": i, "content": content}


# Summarising managers that must act inside a turn: a small threshold, few kept turns, and every turn
# committed (so a summary block opens the log and the next turn's history is over the hint).
summarizing_busy = st.builds(
    lambda k, t, r: {"type": "summarising", "params": {"keep_turns": k, "summary_threshold": t, "hysteresis_ratio": r}},
    st.integers(1, 2), st.integers(1, 120), st.sampled_from([0.1, 0.3, 1.0]))


def _one_round(cid: str) -> list[dict]:
    return [_ask(cid), _res(cid, "")]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cm=managers, trimmer=trimmers, convo=conversations(), system=text, summarizer=st.sampled_from(["echo", "drop"]))
@example(  # found by this property: a masked empty result's placeholder is longer than the row, in the pinned group
    cm={"type": "observation-masking", "params": {"attention_window": 1, "placeholder": "[{tool}: {size} characters masked]"}},
    trimmer={"max_tokens": 60, "reserve_tokens": 33, "safety_margin_ratio": 0.1},
    convo=[("", [_one_round("c0_0")], None, True), ("", [_one_round("c10_0"), _one_round("c11_0")], None, False)],
    system="", summarizer="echo")
@example(  # found by this property: the compaction's kept user text is the pinned last history group
    cm={"type": "auto-compact", "params": {"threshold_tokens": 20, "keep_user_tokens": 9}},
    trimmer={"max_tokens": 60, "reserve_tokens": 37, "safety_margin_ratio": 0.1},
    convo=[("k" * 200, [_one_round("c0_0")], None, True), ("", [_one_round("c10_0"), _one_round("c11_0")], None, False),
           ("", [], None, False)],
    system="", summarizer="drop")
def test_engine_invariants(cm: dict, trimmer: dict, convo: list, system: str, summarizer: str) -> None:
    check_engine(cm, trimmer, convo, system, summarizer)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cm=summarizing_busy, trimmer=trimmers, convo=conversations(always_commit=True), system=text,
       summarizer=st.sampled_from(["echo", "echo", "drop"]))
@example(  # found by this property: no system band, so the summary block leads and Q18 protects it
    cm={"type": "summarising", "params": {"keep_turns": 1, "summary_threshold": 1, "hysteresis_ratio": 0.1}},
    trimmer={"safety_margin_ratio": 0.25, "max_tokens": 176, "reserve_tokens": 20},
    convo=[("", [[_ask("c0_0", "thinking"), _res("c0_0", "k" * 200)]], None, True),
           ("a", [[_ask("c10_0"), _res("c10_0", "")]], None, True),
           ("k" * 200, [[_ask("c70_0"), _res("c70_0", "k" * 200)], [_ask("c71_0"), _res("c71_0", "")]], None, True)],
    system="", summarizer="echo")
def test_engine_invariants_with_the_manager_acting_in_turn(cm: dict, trimmer: dict, convo: list, system: str,
                                                           summarizer: str) -> None:
    """Same invariants, with a summary or a drop in place (in-turn summarise, reuse and drop are
    reached in a share of examples shown by ``--hypothesis-show-statistics``)."""
    check_engine(cm, trimmer, convo, system, summarizer)


class Flaky:
    """A summarizer that fails on the calls whose number is in ``fails`` (a network error), so a
    commit's write-back can leave the log longer than the manager's cap for the next turn."""

    def __init__(self, fails: frozenset[int]) -> None:
        self.fails, self.calls = fails, 0

    def summarize(self, msgs: list[dict]) -> str:
        self.calls += 1
        if self.calls in self.fails:
            raise ConnectionError("summarizer unreachable")
        return f"summary of {len(msgs)} messages"


@st.composite
def prior_logs(draw):  # noqa: ANN001, ANN201
    """A committed log restored from an earlier session (written under a larger cap, or before a
    failed write-back): plain turns and tool turns, each turn whole and paired."""
    rows: list[dict] = []
    for t in range(draw(st.integers(2, 7))):
        rows.append({"role": "user", "content": draw(body)})
        if draw(st.booleans()):
            i = f"p{t}"
            rows.append(_ask(i))
            rows.append(_res(i, draw(body)))
        rows.append({"role": "assistant", "content": draw(body) or "ok"})
    return rows


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cm=st.one_of(managers, summarizing_busy), trimmer=trimmers, prior=prior_logs(),
       convo=conversations(always_commit=True), system=text,
       summarizer=st.one_of(st.sampled_from(["echo", "drop"]),
                            st.frozensets(st.integers(1, 6), max_size=3).map(Flaky)))
def test_engine_invariants_on_a_resumed_log(cm: dict, trimmer: dict, prior: list, convo: list, system: str,
                                            summarizer: object) -> None:
    """Same invariants on a log that starts over the manager's cap, so the first calls must act inside
    the turn: window slides, stack caps, summaries (with a flaky summarizer: failures, then a later
    summary), reuse and drops. Shares are reported by ``--hypothesis-show-statistics``."""
    check_engine(cm, trimmer, convo, system, summarizer, prior=prior)


def check_engine(cm: dict, trimmer: dict, convo: list, system: str, summarizer: object,
                 prior: list | None = None) -> None:
    cm = {**cm, "params": {**cm.get("params", {}), "trimmer": trimmer}}
    s = settings_from_dict({"kind": "Agent", "spec": {"system_prompt": system or None, "context_manager": cm}}).settings
    summ = Echo() if summarizer == "echo" else "drop" if summarizer == "drop" else summarizer
    engine = ContextEngine(s, counter="estimate", summarizer=summ)
    committed: list[dict] = []
    if prior:
        engine.conversation.archive.add_leaf(0, prior)  # restored as is: no write-back has capped it
        committed += prior
    for user_text, steps, final, commit in convo:
        engine.user(user_text)
        for rows in steps:
            call = engine.assemble()  # strict: raises if the payload were unpaired
            check_provider_payload(call.messages)
            again = sanitize_provider_messages(call.messages)
            assert again.repairs == [] and again.messages == call.messages
            hevent(f"in-turn action: {call.decision.action}")
            # the trimmer's budget from the drawn settings (no tools): max − reserve − ceil(max × ratio)
            margin = math.ceil(Fraction(trimmer["max_tokens"]) * Fraction(str(trimmer["safety_margin_ratio"])))
            budget = trimmer["max_tokens"] - trimmer["reserve_tokens"] - margin
            assert (call.budget.margin, call.budget.max_tokens - call.budget.trimmer_reserve) == (margin, budget)
            sent = engine.counter.count(call.messages)
            synth = engine.counter.count([r.message for r in call.rows if r.synthetic == "empty_result"])
            if pinned_tokens(engine, call) <= budget:
                assert sent - synth <= budget
            for r in rows:
                engine.record(r)
        if final is not None and final.strip():
            engine.record({"role": "assistant", "content": final})
        call = engine.assemble()
        check_provider_payload(call.messages)
        if commit:
            cur = engine.conversation.current_user
            expected = ([cur] if cur is not None and cur.get("content", "").strip() else []) + \
                list(engine.conversation.working)
            rec = engine.finalize_turn(None)
            if rec is not None:
                hevent(f"commit action: {rec.action}")
                committed += expected
            archived = engine.conversation.archive.archived_messages()
            assert len(archived) == len(committed)
            assert all(a is b for a, b in zip(archived, committed))
