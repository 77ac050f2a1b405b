"""The replay measures its rows up front, and a short turn is derived again.

* :meth:`~inspector.engine.tokens._CachedCounter.prime` measures each message not cached yet, once,
  with the same units as measuring it on first use; a replay primes the rows it sends (a
  transcript's system row only when the transcript's prompt is in force), so priming changes no
  frame, no commit and not how many messages were tokenised — only when.
* :class:`~inspector.engine.assembly.row_index.RowIndex` takes working memory's facts over at commit only
  from :attr:`~inspector.engine.assembly.row_index.RowIndex.CARRY_MIN` rows on (below, deriving the rows
  again costs less): the facts are the same either way (the general property is
  ``test_a_log_taking_working_memorys_facts_over_equals_one_deriving_them``), and a replay of long
  turns still takes them over.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.assembly.row_index import RowIndex
from inspector.engine.tokens import EstimateCounter, TiktokenCounter, make_counter
from inspector.manifest import settings_from_dict
from inspector.replay import replay
from inspector.transcripts import load_transcript, sample_path
from inspector.transcripts.model import Transcript
from tests import builders

_text = st.text(alphabet="ab cdé\n{}", max_size=30)
_call = st.fixed_dictionaries({"id": st.sampled_from(["a", "b", "c"]), "type": st.just("function"),
                               "function": st.fixed_dictionaries({"name": st.sampled_from(["f", "g", ""]),
                                                                  "arguments": _text})})
_message = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system", "tool"]),
                           "content": st.one_of(_text, st.none(), st.just([{"type": "text", "text": "hi"}]))}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": _text,
                           "tool_calls": st.lists(_call, max_size=3)}),
    st.fixed_dictionaries({"role": st.just("user"), "content": _text, "name": st.sampled_from(["ann", "bo"])}),
)


@settings(max_examples=200, deadline=None)
@given(msgs=st.lists(_message, max_size=12), first=st.integers(0, 12), kind=st.sampled_from(["estimate", "tiktoken"]))
def test_priming_measures_each_new_message_once_with_the_units_of_first_use(msgs: list[dict[str, Any]], first: int,
                                                                             kind: str) -> None:
    """Whatever was measured before (``first`` rows), priming measures each other message exactly
    once (a message listed twice once), priming again measures nothing, and every unit is the one
    a counter that never primed gives."""
    primed, plain = make_counter(kind, "gpt-4o"), make_counter(kind, "gpt-4o")
    for m in msgs[:first]:
        primed.unit(m)
    before = primed.computed
    primed.prime(msgs + msgs[:2])  # a repeated object is measured once
    assert primed.computed - before == len({id(m) for m in msgs[first:]} - {id(m) for m in msgs[:first]})
    after = primed.computed
    primed.prime(msgs)
    assert primed.computed == after
    assert [primed.unit(m) for m in msgs] == [plain.unit(m) for m in msgs]
    assert [primed.history_unit(m) for m in msgs] == [plain.history_unit(m) for m in msgs]
    assert primed.computed == after  # every read after priming was a cache hit


def _transcript(msgs: list[dict[str, Any]]) -> Transcript:
    return Transcript(format="synthetic", path=None, messages=msgs, origins=[str(i) for i in range(len(msgs))],
                      tools=None, model="gpt-4o", usage={}, irregularities=[])


def _with_system_rows() -> Transcript:
    """A transcript with a system row first and another mid-way (the band changes there)."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are the transcript's agent."}]
    for t in range(8):
        if t == 4:
            msgs.append({"role": "system", "content": "From now on answer in French."})
        msgs.append({"role": "user", "content": f"question {t} " * (t + 1)})
        if t % 2:
            msgs.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{t}", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"t": t})}}]})
            msgs.append({"role": "tool", "tool_call_id": f"c{t}", "content": "result " * 30})
        msgs.append({"role": "assistant", "content": f"answer {t}"})
    return _transcript(msgs)


CASES = {
    "demo, summarising drop": (lambda: load_transcript(sample_path("demo_support.json")),
                               {"type": "summarising", "params": {"keep_turns": 2, "summarizer": "drop"}}, 600),
    "demo, stack": (lambda: load_transcript(sample_path("demo_support.json")), {"type": "stack"}, 400),
    "system rows, sliding": (_with_system_rows, {"type": "sliding-window", "params": {"keep_turns": 2}}, 500),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("counter", ["estimate", "tiktoken"])
@pytest.mark.parametrize("system", ["transcript", "manifest"])
def test_a_primed_replay_equals_one_that_measures_on_first_use(case: str, counter: str, system: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Same frames, commits and payloads, and the same number of messages tokenised: priming only
    moves the tokenisation before the first call. Under the manifest's prompt a transcript's
    system rows are not sent, so they are not primed either."""
    make, cm, window = CASES[case]
    s = settings_from_dict({"kind": "Agent", "spec": {
        "system_prompt": "You are the manifest's agent.", "context_manager": cm,
        "models": [{"model": "gpt-4o", "context_window": window}]}})

    def run() -> tuple[str, int, int]:
        tr = make()  # fresh message objects: nothing cached by an earlier run
        rp = replay(s, tr, counter=counter, system=system)
        return rp.dumps(payloads=True), rp.tokens_computed, len(rp.frames)

    primed = run()
    for cls in (EstimateCounter, TiktokenCounter):
        monkeypatch.setattr(cls, "prime", None)  # the replay then measures each row on first use
    plain = run()
    assert primed[2] > 3
    assert primed == plain


def test_a_replay_tokenises_before_its_first_call() -> None:
    """The priming is real: before the first call every row a call may send is measured — here every
    row, as the transcript ends with a question (a call is pending); nothing is measured later."""
    tr = _with_system_rows()
    tr.messages.append({"role": "user", "content": "one more question"})
    tr.origins.append("last")
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": "stack"},
                                                      "models": [{"model": "gpt-4o", "context_window": 8000}]}})
    seen: list[int] = []
    real = TiktokenCounter.prime

    def spy(self: TiktokenCounter, msgs: Any) -> None:
        real(self, msgs)
        seen.append(self.computed)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(TiktokenCounter, "prime", spy)
        rp = replay(s, tr, counter="tiktoken", system="transcript")
    assert seen == [len(tr.messages)] == [rp.tokens_computed]


def _turn(t: int, rounds: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for r in range(rounds):
        rows.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{t}_{r}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
        rows.append({"role": "tool", "tool_call_id": f"c{t}_{r}", "content": "out"})
    return rows


@pytest.mark.parametrize("rounds", [1, 5, 6, 30])
def test_the_log_takes_working_memorys_facts_over_from_carry_min_rows(rounds: int) -> None:
    """A turn of fewer than CARRY_MIN working-memory rows is derived again at commit; a longer one is
    taken over (only the user row is derived); the facts equal an index that derives every row."""
    counter = EstimateCounter()
    log = [{"role": "user", "content": "q0"}, {"role": "assistant", "content": "a0"}]
    wm = _turn(1, rounds)
    carry = RowIndex(counter).sync(wm)
    rows = list(log)  # the log grows in place (a new list is indexed from scratch)
    taken, plain = RowIndex(counter).sync(rows), RowIndex(counter).sync(rows)
    rows += [{"role": "user", "content": "q1"}, *wm]
    before = taken.measured
    taken.sync(rows, carry)
    plain.sync(rows)
    derived = taken.measured - before
    assert derived == (len(wm) + 1 if len(wm) < RowIndex.CARRY_MIN else 2)  # the user row and carry's row 0
    assert (taken.n, taken.pre, taken.back, taken.starts, taken.dirty, taken.asks, taken.chain, taken.blocks,
            taken.others) == (plain.n, plain.pre, plain.back, plain.starts, plain.dirty, plain.asks, plain.chain,
                              plain.blocks, plain.others)


def test_a_short_text_is_encoded_once_per_counter_and_a_longer_one_each_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A message text of at most ``SHORT`` characters is encoded once per counter whatever the rows
    that carry it (a strategy's placeholders: new rows, other call ids, a ``name``); one of ``SHORT``
    + 1 characters is encoded for each row; every row gets a fresh counter's units."""
    fresh = TiktokenCounter(model="gpt-4o")  # measured before the spy: its encodes are not counted
    short, long = "x" * TiktokenCounter.SHORT, "x" * (TiktokenCounter.SHORT + 1)
    rows = [{"role": "tool", "tool_call_id": cid, "content": text} for text in (short, long) for cid in "abc"]
    rows.append({"role": "tool", "tool_call_id": "d", "content": short, "name": "x"})
    want = [fresh.unit(r) for r in rows]
    encoded = builders.spy(monkeypatch, TiktokenCounter, "text_tokens", arg=1)
    counter = TiktokenCounter(model="gpt-4o")
    assert [counter.unit(r) for r in rows] == want
    assert want[-1] == want[0] + TiktokenCounter.PER_NAME + 1  # the name's 1 token is counted, not the id
    assert encoded == [short, long, long, long, "x"]  # the name is encoded, the short text only once


def test_a_counter_remembers_at_most_short_kept_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo is bounded: past ``SHORT_KEPT`` distinct short texts, a new one is encoded each time
    (with the same tokens), the first ones still once."""
    monkeypatch.setattr(TiktokenCounter, "SHORT_KEPT", 2)
    encoded = builders.spy(monkeypatch, TiktokenCounter, "text_tokens", arg=1)
    counter = TiktokenCounter(model="gpt-4o")
    units = [counter.unit({"role": "user", "content": t}) for t in ["a b", "c d", "e f", "a b", "c d", "e f"]]
    assert units[:3] == units[3:]
    assert encoded == ["a b", "c d", "e f", "e f"]
