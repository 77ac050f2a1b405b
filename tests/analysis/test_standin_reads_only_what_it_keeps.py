"""The offline stand-in searches a sentence for a decision word only when the answer can change its
summary, and searches one sentence of each digit shape for identifiers (inspector/engine/summarizers/
standin.py, ``_Reading.within`` and ``_Reading.read``; inspector/engine/identifiers.py,
``may_hold_identifiers`` and ``digit_shape``). Operation counts worked out by hand, not times; the
summary stays the one the documented rule writes (a reference implementation of it below).

The rule: a candidate line is ``"{who}: {sentence}"`` for each sentence of a folded row with an
identifier or a decision word (a previous summary's kept lines carried where its block stands),
each line once, oldest first; when the candidates do not fit the size target, the lowest rank goes
first, oldest first within a rank, and a line with no identifier is of rank 0. So when the lines of
rank 1 and more leave room, the lines of rank 0 kept are the newest that fit, and an older sentence
with no identifier cannot change the summary: it is never searched for a decision word.

Bug classes: a stand-in that searches every folded sentence for a decision word though a tenth of
them can be kept (auto-compact's 2 000-turn replay searched 7 451 to keep 1 600); one that extracts
identifiers from every tool call that differs only in its numbers; a lazy reading that keeps other
lines than the rule (a duplicate line whose first occurrence is older, a rank-0 line carried from
an earlier summary, a budget the ranked lines fill alone).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import spy
from inspector.engine.identifiers import (
    _guards,
    digit_shape,
    extract_identifiers,
    may_hold_identifiers,
    message_text,
)
from inspector.engine.summarizers import standin
from inspector.engine.summarizers.standin import StandInSummarizer, folded_tokens, target_tokens
from inspector.engine.summary_block import is_summary_block, summary_block, summary_body

RULE_DECISION = re.compile(r"\b(decid\w*|confirm\w*|agree\w*|approv\w*|cancel\w*|refund\w*|book\w*|chose|chosen|"
                           r"will|must|should|need to|instead|resolved|escalat\w*|scheduled|deadline|prefer\w*)\b",
                           re.IGNORECASE)
WHO = {"user": "user", "assistant": "agent", "tool": "tool result"}


def reference_lines(msgs: list[dict[str, Any]], budget: int) -> list[str]:
    """The kept lines by the rule, read eagerly: every sentence searched, every candidate ranked."""
    lines: list[str] = []
    for m in msgs:
        if is_summary_block(m):
            lines += standin._carried(summary_body(m))
        else:
            lines += [f"{WHO.get(m['role'], m['role'])}: {s}" for s in standin._sentences(message_text(m))
                      if extract_identifiers(s) or RULE_DECISION.search(s)]
    kept = list(dict.fromkeys(lines))
    size = sum(len(line) + 3 for line in kept)
    dropped: set[int] = set()
    for i in sorted(range(len(kept)), key=lambda i: (standin._rank(kept[i]), i)):
        if size <= budget:
            break
        dropped.add(i)
        size -= len(kept[i]) + 3
    return [line for i, line in enumerate(kept) if i not in dropped]


POOL = ["Order OR0001Z is confirmed.", "Order OR0002Z is confirmed.", "I will check.", "we will ship it",
        "nothing to see here", "ok", "Refund #W2378156 tomorrow!", "see /var/log/app.log\nthen retry",
        "we agreed on the blue one. it should arrive", "plain words " * 30, "we must wait " * 30, "Done.",
        "note: we will ship it"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool", "user: note"]),
                                   st.sampled_from(POOL)), min_size=1, max_size=12), min_size=1, max_size=4),
       st.sampled_from([4, 16, 40, 256]), st.sampled_from([1, 8, 30]), st.booleans())
def test_the_kept_lines_are_the_rules_whichever_sentences_were_searched(
        folds: list[list[tuple[str, str]]], cap: int, floor: int, block_last: bool) -> None:
    """One summarizer over a sequence of folds (each after the first holding the previous summary,
    first as a condenser's do, or last: its carried lines then repeat rows' lines already read),
    with targets small enough that the budget binds: every summary's kept lines are the rule's,
    read eagerly. A role holding ``: `` makes lines that two sentences share (that role's "we will
    ship it" and the user's "note: we will ship it"), ranked apart by :func:`_rank`."""
    kept = StandInSummarizer(cap=cap, floor=floor)
    previous: str | None = None
    for fold in folds:
        msgs = [{"role": role, "content": text} for role, text in fold]
        if previous is not None:
            msgs.insert(len(msgs) if block_last else 0, summary_block(1, previous))
        previous = kept.summarize(msgs)
        budget = target_tokens(folded_tokens(msgs), floor=floor, cap=cap) * standin.CHARS_PER_TOKEN
        assert [ln[2:] for ln in previous.splitlines()[2:]] == reference_lines(msgs, budget)


def counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Spy on the stand-in's decision-word searches and identifier extractions (per sentence)."""
    return {"decides": spy(monkeypatch, standin, "_decides"), "extract": spy(monkeypatch, standin, "extract_identifiers")}


def two_letters(i: int) -> str:
    return "abcdefghij"[i // 10] + "abcdefghij"[i % 10]


def test_a_fold_whose_target_keeps_five_lines_searches_six_sentences_for_a_decision_word(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """100 user rows "we will ship aa" … "we will ship jj" (15 characters, no identifier: no
    capital, digit or punctuation, so none is extracted): 1 500 characters, 375 tokens; floor and cap
    30 make the target 30 tokens, a budget of 120 characters, and each line "user: we will ship xy"
    costs 21 + 3 = 24: the newest 5 fit exactly (120). From the newest back, 5 sentences are searched
    and kept and the 6th is searched and does not fit: 6 searches, not 100."""
    seen = counting(monkeypatch)
    msgs = [{"role": "user", "content": f"we will ship {two_letters(i)}"} for i in range(100)]
    text = StandInSummarizer(cap=30, floor=30).summarize(msgs)
    assert text.splitlines()[2:] == [f"- user: we will ship {two_letters(i)}" for i in range(95, 100)]
    assert seen["decides"] == [f"we will ship {two_letters(i)}" for i in range(99, 93, -1)]
    assert seen["extract"] == []


def test_ranked_lines_that_fill_the_budget_alone_leave_no_sentence_to_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same 100 rows after 10 user rows "Order OR00NNZ is confirmed." (an identifier, rank 3:
    "user: Order OR0000Z is confirmed." is 33 + 3 = 36 characters; 10 make 360, over the 120-character
    budget: 1 770 characters fold to 442 tokens, floor and cap 30 keep the target at 30). No line of
    rank 0 can be kept, so none is searched; the 3 newest orders fit (108)."""
    seen = counting(monkeypatch)
    msgs = [{"role": "user", "content": f"Order OR00{i:02d}Z is confirmed."} for i in range(10)]
    msgs += [{"role": "user", "content": f"we will ship {two_letters(i)}"} for i in range(100)]
    text = StandInSummarizer(cap=30, floor=30).summarize(msgs)
    assert text.splitlines()[2:] == [f"- user: Order OR00{i:02d}Z is confirmed." for i in (7, 8, 9)]
    assert seen["decides"] == []
    assert seen["extract"] == ["Order OR0000Z is confirmed."]  # one digit shape: one extraction


def test_tool_calls_that_differ_only_in_their_numbers_are_searched_for_identifiers_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """40 asks ``lookup {"q": 10}`` … ``{"q": 49}`` (the benchmark transcript's tool calls): 40
    distinct sentences of one digit shape, ``lookup {"q": 00}``: one extraction, not 40."""
    seen = counting(monkeypatch)
    msgs = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "lookup", "arguments": f'{{"q": {i}}}'}}]}
        for i in range(10, 50)]
    StandInSummarizer().summarize(msgs)
    assert seen["extract"] == ['lookup {"q": 10}']


TEXT = st.one_of(st.text(max_size=80), st.text(alphabet='aZ09 .:/"`_@#-$%“…٣\x00é', max_size=30),
                 st.sampled_from(["OR0001Z", "SEC-88213", "12345", "1234", "45 GB", "14:30", "2024-05-01",
                                  "v2.3.1", "$1,200", "x9", "report.csv", '"q": 5']))


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_a_texts_digit_shape_holds_identifiers_exactly_where_the_text_does(text: str) -> None:
    """Every rule reads the ten ASCII digits alike: the shape's identifiers are the text's, at the
    same places and of the same kinds (only the digits' values differ)."""
    found, shaped = extract_identifiers(text), extract_identifiers(digit_shape(text))
    assert [(digit_shape(i.text), i.kind) for i in found] == [(i.text, i.kind) for i in shaped]


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXT, max_size=8))
def test_texts_read_together_may_hold_identifiers_where_each_guard_says(texts: list[str]) -> None:
    """One translation of the texts joined answers as :func:`_guards` of each (a NUL inside a text
    included), and a text it says False of holds no identifier."""
    may = may_hold_identifiers(texts)
    assert may == [_guards(t) is not None for t in texts]
    assert all(m or not extract_identifiers(t) for t, m in zip(texts, may, strict=True))


def test_digit_shape_and_may_hold_by_hand() -> None:
    assert digit_shape('lookup {"q": 17}') == 'lookup {"q": 00}' and digit_shape("٣ SEC-9") == "٣ SEC-0"
    assert may_hold_identifiers(["we will ship it", "Done", "x…", "٣…", "“a”", "a\x00b", ""]) == \
        [False, True, False, True, True, False, False]


def test_a_carried_line_after_the_row_that_says_it_is_kept_where_the_row_stands() -> None:
    """A fold whose previous summary comes last (a block after its rows) carries "user: we will
    ship it", which a row before it says too: the row's line (no identifier, waiting on its decision
    word) comes first, so the line stands there, as the rule reads it eagerly."""
    pad = {"role": "tool", "content": "plain words " * 200}
    row = {"role": "user", "content": "we will ship it"}
    s = StandInSummarizer()
    previous = s.summarize([pad, row])
    assert previous.splitlines()[2:] == ["- user: we will ship it"]
    msgs = [pad, row, {"role": "user", "content": "Order OR0001Z is confirmed."}, summary_block(1, previous)]
    budget = target_tokens(folded_tokens(msgs)) * standin.CHARS_PER_TOKEN
    assert s.summarize(msgs).splitlines()[2:] == [f"- {line}" for line in reference_lines(msgs, budget)] == \
        ["- user: we will ship it", "- user: Order OR0001Z is confirmed."]
