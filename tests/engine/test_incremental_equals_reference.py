"""Incremental assembly equals the full-payload reference at every call.

The incremental path (running sums over the committed log and working memory, cuts by bisection,
pairing repair and final check over the dirty units only, bands from sums) must give exactly what
the reference path gives: the same payload rows with the same bands and synthetic kinds, the same
token bands, trims, pre-cut, repairs, check verdict and manager decision — for random
conversations (with broken pairing, unknown roles, HITL-shaped turns, fat rows), random manifests
of every shipped strategy, random budgets and both counters.
"""

from __future__ import annotations

from builders import registered_managers
from hypothesis import HealthCheck, given, settings
from hypothesis import event as _hevent
from hypothesis import strategies as st

from inspector.engine import Assembly, ContextEngine
from inspector.engine.assembly.row_index import RowIndex, clean_ranges
from inspector.engine.pairing import check_provider_payload, sanitize_provider_messages
from inspector.engine.tokens import make_counter
from inspector.engine.types import Span
from inspector.manifest import settings_from_dict


class Echo:
    """Deterministic summarizer, so summary blocks appear without a model."""

    def summarize(self, msgs: list[dict]) -> str:
        return f"summary of {len(msgs)} messages"


managers = registered_managers()  # every registered strategy (tests/builders.py)
trimmers = st.fixed_dictionaries({
    "max_tokens": st.one_of(st.integers(40, 2500), st.integers(200, 700)), "reserve_tokens": st.integers(0, 200),
    "safety_margin_ratio": st.sampled_from([0.0, 0.1, 0.25]),
})
text = st.text(alphabet="abcdefghij ", min_size=0, max_size=80)
body = st.one_of(text, text, st.integers(100, 700).map(lambda n: "k" * n))


@st.composite
def tool_round(draw, n: int):  # noqa: ANN001, ANN201
    ids = [f"c{n}_{k}" for k in range(draw(st.integers(1, 3)))]
    if draw(st.integers(0, 9)) == 0:
        ids.append(ids[0])  # an id declared twice
    calls: object = [{"id": i, "type": "function", "function": {"name": "f", "arguments": draw(text)}} for i in ids]
    if draw(st.integers(0, 19)) == 0:
        calls = {"id": ids[0]}  # a tool_calls that is not a list
    rows: list[dict] = [{"role": "assistant", "content": draw(st.sampled_from(["", "thinking"])), "tool_calls": calls}]
    for i in ids:
        fate = draw(st.sampled_from(["ok", "ok", "ok", "ok", "missing", "dup", "wrong", "orphan", "noid"]))
        if fate == "missing":
            continue
        rid = {"wrong": f"zz{n}", "orphan": "ghost", "noid": None}.get(fate, i)
        rows.append({"role": "tool", "tool_call_id": rid, "content": draw(body)})
        if fate == "dup":
            rows.append({"role": "tool", "tool_call_id": i, "content": "again"})
    if draw(st.integers(0, 14)) == 0:
        rows.insert(draw(st.integers(0, len(rows))), {"role": draw(st.sampled_from(["narrator", "tool", "assistant"])),
                                                       "content": draw(text), "tool_call_id": "stray"})
    return rows


@st.composite
def conversations(draw):  # noqa: ANN001, ANN201
    turns = []
    for t in range(draw(st.integers(1, 8))):
        steps = [draw(tool_round(t * 10 + s)) for s in range(draw(st.integers(0, 4)))]
        if steps and draw(st.integers(0, 6)) == 0:
            steps[0] = steps[0][1:]  # a turn whose working memory opens with results (HITL shape)
        final = draw(st.one_of(st.none(), text))
        user = draw(st.one_of(body, st.just(""), st.just("[Conversation summary — 2 earlier exchange(s)]\nold")))
        turns.append((user, steps, final, draw(st.integers(0, 4)) > 0))
    return turns


def _sig(call: Assembly) -> dict:
    """Everything a face reads from an assembly, in a form two engines can be compared by."""
    return {
        "messages": call.messages,
        "rows": [(r.message, r.band, r.synthetic, r.source) for r in call.rows],
        "bands": call.bands, "payload_tokens": call.payload_tokens, "headroom": call.headroom,
        "budget": call.budget, "cm": (call.decision.action, call.decision.summary_text, call.decision.kept_turns, len(call.decision.folded)),
        "trimmed": [(r.message, r.source, r.reason) for r in call.trimmed],
        "trimmer_removed": [(r.message, r.source, r.reason) for r in call.trimmer_removed],
        "precut": list(call.precut), "repairs": call.repairs, "check": call.check, "warnings": call.warnings,
    }


def drive(cm: dict, trimmer: dict, convo: list, system: str, counter: str, alone: bool = False,
          events: bool = True) -> int:
    """Replay ``convo`` through an incremental and a reference engine in lockstep; return the calls compared.
    ``alone``: a third engine runs the trimmer alone (no pre-cut), whose payload and trimmed rows the
    other two must give too (pre-cut + trimmer = trimmer). ``events``: record hypothesis events (a
    test that is no hypothesis test passes False)."""
    hevent = _hevent if events else (lambda _: None)
    cm = {**cm, "params": {**cm.get("params", {}), "trimmer": trimmer}}
    s = settings_from_dict({"kind": "Agent", "spec": {"system_prompt": system or None, "context_manager": cm}}).settings
    fast = ContextEngine(s, counter=counter, summarizer=Echo())
    ref = ContextEngine(s, counter=counter, summarizer=Echo())
    ref.assembler.incremental = False
    oracle = ContextEngine(s, counter=counter, summarizer=Echo())
    oracle.assembler.precut = False
    calls = 0

    def compare() -> None:
        nonlocal calls
        a, b = fast.assemble(strict=False), ref.assemble(strict=False)
        assert _sig(a) == _sig(b)
        if alone:
            c = oracle.assemble(strict=False)
            assert c.messages == a.messages and [(r.message, r.reason) for r in c.trimmed] == [
                (r.message, r.reason) for r in a.trimmed]
            if a.precut:
                hevent("pre-cut")
            if any(r.source == "working_memory" and r.message.get("role") == "tool" for r in a.trimmer_removed):
                hevent("a result cut from working memory")
        for call in (a, b):  # a payload the pairing pass verified skips the final check: it would pass
            if call.verified:
                check_provider_payload(call.messages)
        calls += 1
        spans = sum(1 for part in a.layout if isinstance(part, Span))
        hevent("incremental path" if a.skip_declares is not None else "reference path")
        if spans:
            hevent("clean units skipped")

    for user_text, steps, final, commit in convo:
        user = {"role": "user", "content": user_text}
        for e in (fast, ref, oracle):
            e.user(user)
        for rows in steps:
            compare()
            for r in rows:
                for e in (fast, ref, oracle):
                    e.record(r)
        if final is not None and final.strip():
            msg = {"role": "assistant", "content": final}
            for e in (fast, ref, oracle):
                e.record(msg)
        compare()
        if commit:
            ra, rb, rc = fast.finalize_turn(None), ref.finalize_turn(None), oracle.finalize_turn(None)
            assert (ra is None) == (rb is None) == (rc is None)
            if ra is not None and rb is not None:
                assert (ra.action, ra.folded_turns, ra.archive) == (rb.action, rb.folded_turns, rb.archive)
    return calls


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cm=managers, trimmer=trimmers, convo=conversations(), system=text,
       counter=st.sampled_from(["estimate", "estimate", "tiktoken"]))
def test_incremental_assembly_equals_the_reference_at_every_call(cm: dict, trimmer: dict, convo: list, system: str,
                                                                 counter: str) -> None:
    assert drive(cm, trimmer, convo, system, counter) >= 1


def test_a_summary_block_inside_the_log_is_never_stood_first_by_the_incremental_precut() -> None:
    """auto-compact's write-back makes the log ``kept users + summary block + later rows``; with no
    system band, a pre-cut that would leave that block first must not happen (the trimmer alone
    keeps a leading system row): both paths keep it, as the reference's guard does."""
    convo = [(("u%d " % t) * (10 + 7 * t), [], ("a%d " % t) * 30, True) for t in range(8)]
    cm = {"type": "auto-compact", "params": {"threshold_tokens": 300, "keep_user_tokens": 50}}
    for max_tokens in (160, 220):
        trimmer = {"max_tokens": max_tokens, "reserve_tokens": 0, "safety_margin_ratio": 0.0}
        assert drive(cm, trimmer, convo, "", "estimate", events=False) == 8


def test_rows_the_band_rule_singles_out_inside_a_range_keep_their_band() -> None:
    """A row of the committed log or of working memory that is the current user row, the system
    band's row or a summary block gets that band, not the range's (the incremental path reads the
    two ranges as whole Spans only when no such row stands in them)."""
    s = settings_from_dict({"kind": "Agent", "spec": {"system_prompt": "be brief",
                                                      "context_manager": {"type": "stack"}}}).settings
    fast, ref = ContextEngine(s, counter="estimate"), ContextEngine(s, counter="estimate")
    ref.assembler.incremental = False
    block = {"role": "system", "content": "[Conversation summary — 2 earlier exchange(s)]\nold"}
    seen = set()
    for turn in range(3):
        user = {"role": "user", "content": f"question {turn}"}
        for e in (fast, ref):
            e.user(user)
            e.record({"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{turn}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
            e.record({"role": "tool", "tool_call_id": f"c{turn}", "content": "r"})
            e.record(block if turn == 0 else user)  # a summary block committed; the user row itself in working memory
            e.record({"role": "assistant", "content": "ok"})
        a, b = fast.assemble(strict=False), ref.assemble(strict=False)
        assert _sig(a) == _sig(b)
        for call in (a, b):  # a payload the pairing pass verified skips the final check: it would pass
            if call.verified:
                check_provider_payload(call.messages)
        seen |= {r.band for r in a.rows}
        for e in (fast, ref):
            e.commit()
    assert {"summary", "user", "history", "working_memory"} <= seen


@st.composite
def payloads(draw):  # noqa: ANN001, ANN201
    rows: list[dict] = []
    for n in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["user", "text", "round", "round", "round"]))
        if kind == "user":
            rows.append({"role": "user", "content": draw(text)})
        elif kind == "text":
            rows.append({"role": "assistant", "content": draw(text)})
        else:
            rows.extend(draw(tool_round(n)))
    return rows


@settings(max_examples=400, deadline=None)
@given(rows=payloads(), cut=st.integers(0, 60))
def test_repair_and_check_skipping_clean_units_equal_the_full_pass(rows: list[dict], cut: int) -> None:
    """The pairing repair and the final check given the clean ranges of a suffix of a log (as the
    assembler passes them) give the full pass's result: same rows, origins and repairs, same verdict."""
    idx = RowIndex(make_counter("estimate")).sync(rows)
    lo = min(cut, len(rows))
    payload = [{"role": "system", "content": "band"}, *rows[lo:], {"role": "user", "content": "now"}]
    skip = [(a - lo + 1, b - lo + 1) for a, b in clean_ranges(idx, lo, len(rows))]

    def declares(rid: str) -> bool:
        return any(idx.declares(rid, a + lo - 1, b + lo - 1) for a, b in skip)

    full = sanitize_provider_messages(payload)
    part = sanitize_provider_messages(payload, skip=skip, skip_declares=declares)
    assert part.verified == full.verified
    if full.verified:  # verified: the final check, full or skipping the clean ranges, passes
        check_provider_payload(full.messages)
    assert (part.messages, list(part.origin), part.repairs) == (full.messages, list(full.origin), full.repairs)
    assert [part.messages[a:b] for a, b in part.clean] == [payload[a:b] for a, b in skip]
    verdicts = []
    for kw in ({}, {"skip": part.clean, "skip_declares": declares}):
        try:
            check_provider_payload(part.messages, **kw)
            verdicts.append("ok")
        except ValueError as exc:
            verdicts.append(str(exc))
    assert verdicts[0] == verdicts[1]
    # the unrepaired payload too: a check that skips clean units fails exactly when the full one does
    verdicts = []
    for kw in ({}, {"skip": skip, "skip_declares": declares}):
        try:
            check_provider_payload(payload, **kw)
            verdicts.append("ok")
        except ValueError as exc:
            verdicts.append(str(exc))
    assert verdicts[0] == verdicts[1]


def _facts(idx: RowIndex) -> tuple:
    return idx.n, idx.pre, idx.back, idx.starts, idx.dirty, idx.asks, idx.chain, idx.blocks, idx.others


@settings(max_examples=300, deadline=None)
@given(log=payloads(), turn=payloads(), seen=st.integers(0, 14), user=st.booleans(), reply=st.booleans(),
       after=payloads())
def test_a_log_taking_working_memorys_facts_over_equals_one_deriving_them(log: list[dict], turn: list[dict], seen: int,
                                                                          user: bool, reply: bool,
                                                                          after: list[dict]) -> None:
    """At commit the log's index takes working memory's facts over instead of deriving them again
    (``sync(rows, carry=...)``): the facts are exactly those of an index that derives every row, and
    stay so as more rows follow — whatever the log before, the turn's first row (a HITL answer, an
    ask, a broken unit) and however far working memory was indexed before it grew."""
    counter = make_counter("estimate")
    wm = turn[:seen]
    carry = RowIndex(counter).sync(wm)
    wm += turn[seen:]  # rows recorded after the last call's sync (the reply, late results)
    rows = list(log)
    taken, plain = RowIndex(counter).sync(rows), RowIndex(counter).sync(rows)
    taken.CARRY_MIN = 2  # take over whatever working memory holds (a replay does so from CARRY_MIN rows)
    rows += ([{"role": "user", "content": "next"}] if user else []) + wm + \
        ([{"role": "assistant", "content": "done"}] if reply else [])
    taken.sync(rows, carry)
    plain.sync(rows)
    _hevent("facts taken over" if taken.measured < plain.measured else "all derived")
    assert _facts(taken) == _facts(plain)
    rows += after
    assert _facts(taken.sync(rows)) == _facts(plain.sync(rows))


def test_an_owned_payload_that_needs_no_repair_is_the_result_and_one_that_does_is_left_alone() -> None:
    """``owned``: a well-paired list handed over is the result's list (no copy of a long payload per
    call); a list that needs repair is never changed — the repaired rows go to a new list."""
    ok = [{"role": "user", "content": "hi"},
          {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "type": "function",
                                                               "function": {"name": "f", "arguments": "{}"}}]},
          {"role": "tool", "tool_call_id": "a", "content": "r"}, {"role": "assistant", "content": "done"}]
    same = sanitize_provider_messages(ok, owned=True)
    assert same.messages is ok and same.repairs == [] and list(same.origin) == [0, 1, 2, 3]
    assert sanitize_provider_messages(ok).messages is not ok  # not owned: a copy, as always
    broken = [ok[0], {"role": "tool", "tool_call_id": "ghost", "content": "?"}, ok[3]]
    before = list(broken)
    fixed = sanitize_provider_messages(broken, owned=True)
    assert fixed.messages is not broken and broken == before
    assert fixed.messages == [ok[0], ok[3]] and [r.kind for r in fixed.repairs] == ["orphan_dropped"]


# -- Q24: the trimmer's groups are the reference's, on both paths and with or without the pre-cut ------
@st.composite
def q24_round(draw, n: int):  # noqa: ANN001, ANN201
    """A tool round whose results Q24 splits: mislabelled rows inside the run, a matching result
    after one, duplicates under a declared id, fat results that the budget cannot all hold."""
    ids = [f"c{n}_{k}" for k in range(draw(st.integers(1, 3)))]
    rows: list[dict] = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]}]
    for i in ids:
        fate = draw(st.sampled_from(["ok", "ok", "wrong", "dup", "wrong_then_ok"]))
        if fate in ("wrong", "wrong_then_ok"):
            rows.append({"role": "tool", "tool_call_id": f"zz{n}", "content": draw(body)})
        if fate != "wrong":
            rows.append({"role": "tool", "tool_call_id": i, "content": draw(body)})
        if fate == "dup":
            rows.append({"role": "tool", "tool_call_id": i, "content": "again"})
    return rows


@st.composite
def q24_conversations(draw):  # noqa: ANN001, ANN201
    turns = []
    for t in range(draw(st.integers(1, 6))):
        steps = [draw(q24_round(t * 10 + s)) for s in range(draw(st.integers(1, 3)))]
        if draw(st.integers(0, 2)) == 0:
            steps[0] = steps[0][1:]  # working memory opens with results: the HITL shape of the reference's case
        turns.append((draw(body), steps, draw(st.one_of(st.none(), text)), draw(st.integers(0, 4)) > 0))
    return turns


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cm=managers, convo=q24_conversations(), system=text, counter=st.sampled_from(["estimate", "tiktoken"]),
       trimmer=st.fixed_dictionaries({"max_tokens": st.integers(60, 900), "reserve_tokens": st.integers(0, 60),
                                      "safety_margin_ratio": st.just(0.0)}))
def test_trim_groups_give_one_result_on_both_paths_with_or_without_the_precut(cm: dict, trimmer: dict, convo: list,
                                                                             system: str, counter: str) -> None:
    assert drive(cm, trimmer, convo, system, counter, alone=True) >= 1


def test_the_condensers_head_rows_are_cut_as_the_reference_cuts_them() -> None:
    """The condenser's record is ``log[:2] + [summary] + log[k:]`` (``max_size`` 8, ``keep_first``
    2). The head is the first user row ``q0`` and a 500-token reply; at ``max_tokens`` 300 the short
    tail and the summary fit and the reply does not, so the pre-cut falls among the head rows (the
    incremental path walks back over them, not only over the log range). With a system band it cuts
    through the reply's group: ``q0`` and the reply. With none, the summary would then stand first
    and gain the trimmer's leading-row protection, so the cut stops before the reply (the
    reference's guard) and the trimmer drops the reply. Both paths give the same payload and pre-cut,
    the trimmer alone the same payload."""
    convo = [(f"q{t}", [], "a " * 1000 if t == 0 else f"r{t}", True) for t in range(8)]
    cm = {"type": "condenser", "params": {"max_size": 8, "keep_first": 2}}
    trimmer = {"max_tokens": 300, "reserve_tokens": 0, "safety_margin_ratio": 0.0}
    for system in ("be brief", ""):
        assert drive(cm, trimmer, convo, system, "estimate", alone=True, events=False) == 8
        s = settings_from_dict({"kind": "Agent", "spec": {"system_prompt": system or None, "context_manager": {
            **cm, "params": {**cm["params"], "trimmer": trimmer}}}}).settings
        engine = ContextEngine(s, counter="estimate", summarizer=Echo())
        seen = []
        for user_text, _steps, final, _commit in convo:
            engine.user({"role": "user", "content": user_text})
            asm = engine.assemble(strict=False)
            assert asm.skip_declares is not None  # the incremental path
            if asm.decision.action.startswith("condensed"):
                seen.append(([m["content"][:2] for m in asm.precut], [r.message["content"][:2] for r in asm.trimmer_removed],
                             asm.messages[1 if system else 0]["content"][:7]))
            engine.record({"role": "assistant", "content": final})
            engine.finalize_turn(None)
        want = (["q0", "a "], [], "[Conver") if system else (["q0"], ["a "], "[Conver")
        assert len(seen) == 3 and all(got == want for got in seen), seen
