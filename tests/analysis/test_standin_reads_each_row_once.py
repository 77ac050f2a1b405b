"""The offline stand-in reads each distinct row text once and searches each distinct sentence once
over all the summaries one summarizer writes (inspector/engine/summarizers/standin.py, ``_Reading``):
rows repeat their texts (tool calls, acknowledgements, restated facts), and a condenser folds its
previous summary, whose lines the stand-in ranked when it first read them. Operation counts worked
out by hand, not times; and the rules stay the ones documented: a sentence ends at a line break or
after ``.``/``!``/``?`` and whitespace before a capital, digit, quote, bracket or ``#``; a decision
word is matched case-insensitively.

Bug classes: a stand-in that re-splits and re-searches every folded row on every fold (its cost
grows as folds × rows, the condenser's 2 000-turn replay spent 0.24 s in it); a memo that changes
a summary (what one summarizer writes must not depend on what it read before); a faster splitter
or decision search that cuts or matches elsewhere than the documented one-pattern rule.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import spy
from inspector.engine.managers.condenser import Condenser
from inspector.engine.summarizers import standin
from inspector.engine.summarizers.standin import StandInSummarizer

RULE_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[A-Z0-9#])|\n+")
"""The sentence rule as one pattern (how the stand-in first wrote it)."""
RULE_DECISION = re.compile(r"\b(decid\w*|confirm\w*|agree\w*|approv\w*|cancel\w*|refund\w*|book\w*|chose|chosen|"
                           r"will|must|should|need to|instead|resolved|escalat\w*|scheduled|deadline|prefer\w*)\b",
                           re.IGNORECASE)


def rule_sentences(text: str) -> list[str]:
    """The sentences by the one-pattern rule: cut, blanks made single, empty ones left out, cut at 240."""
    out = []
    for piece in RULE_SENTENCE.split(text):
        s = " ".join(piece.split())
        if s:
            out.append(s if len(s) <= 240 else s[:239] + "…")
    return out


def counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Spy on the stand-in's sentence splitting (per row text) and identifier extraction (per sentence)."""
    return {"split": spy(monkeypatch, standin, "_sentences"), "extract": spy(monkeypatch, standin, "extract_identifiers")}


def rows(n: int) -> list[dict[str, Any]]:
    """``n`` events, user and assistant in turn. The user's rows say one of three orders in turn
    ("Order OR0000Z is confirmed.", OR0001Z, OR0002Z), the assistant's always "I will check. Done.":
    four distinct row texts, five distinct sentences."""
    return [{"role": "user", "content": f"Order OR000{(i // 2) % 3}Z is confirmed."} if i % 2 == 0
            else {"role": "assistant", "content": "I will check. Done."} for i in range(n)]


def test_a_condenser_s_summaries_split_each_row_text_once_and_search_each_sentence_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """max_size 10, keep_first 2 (tests/engine/test_condenser_hashes_each_row_once.py): over 40 rows
    5 condensations fold rows 2-8, then the previous summary and rows 9-14, 15-20, 21-26, 27-32: 31
    rows (16 user, 15 assistant), 47 sentences, and the summaries' carried lines. Read once: 4 row
    texts split, 5 distinct sentences, 3 searched for identifiers (the three orders differ only in a
    digit: one search, on the first read, OR0001Z in row 2; the carried lines' ranks are known from
    their rows: no search). Read on every fold, it was 31 splits and 47 + the carried lines' searches."""
    seen = counting(monkeypatch)
    summarizer = StandInSummarizer()
    cm = Condenser(10, 2, summarizer=summarizer)
    log: list[dict[str, Any]] = []
    for row in rows(40):
        log.append(row)
        cm.decide(log, 0)
    assert summarizer.calls == 5
    assert sorted(seen["split"]) == sorted({r["content"] for r in rows(6)})  # the 4 texts, once each
    assert sorted(seen["extract"]) == ["Done.", "I will check.", "Order OR0001Z is confirmed."]


def test_a_repeated_sentence_in_a_new_row_is_split_but_not_searched_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool call repeated within one row gives one sentence searched once; a new row whose only
    sentence was read before is split (a new text) but not searched; a row read before is neither."""
    seen = counting(monkeypatch)
    s = StandInSummarizer()
    call = {"type": "function", "function": {"name": "lookup", "arguments": '{"q": "OR0001Z"}'}}
    asking = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", **call}, {"id": "c2", **call}]}
    first = [{"role": "user", "content": "My ticket is SEC-88213. I will wait."}, asking]
    s.summarize(first)
    assert len(seen["split"]) == 2
    assert seen["extract"] == ["My ticket is SEC-88213.", "I will wait.", 'lookup {"q": "OR0001Z"}']
    s.summarize([*first, {"role": "user", "content": "I will wait."}])
    assert len(seen["split"]) == 3 and len(seen["extract"]) == 3


POOL = ["My ticket is SEC-88213. I will wait.", "Checked case LK0001X.", "ok", "Found order OR0001Z.",
        "We agreed. Refund #W2378156 tomorrow!", "see /var/log/app.log\nthen retry", "Done."]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.sampled_from(POOL)),
                         min_size=1, max_size=6), min_size=1, max_size=5),
       st.sampled_from([1, 8, 256]))
def test_a_summary_does_not_depend_on_what_the_summarizer_read_before(folds: list[list[tuple[str, str]]],
                                                                      cap: int) -> None:
    """One summarizer over a sequence of folds (each after the first holding the previous summary,
    as a condenser's do) writes, fold by fold, what a new summarizer writes for that fold alone."""
    from inspector.engine.summary_block import summary_block

    kept = StandInSummarizer(cap=cap)
    previous: str | None = None
    for fold in folds:
        msgs = [{"role": role, "content": text, **({"tool_call_id": "c"} if role == "tool" else {})}
                for role, text in fold]
        if previous is not None:
            msgs.insert(0, summary_block(1, previous))
        previous = kept.summarize(msgs)
        assert previous == StandInSummarizer(cap=cap).summarize(msgs)


TEXT = st.lists(st.sampled_from(list(".!? \n\t\r\u2028\u0085\x0b\x1c\x7faAz\"'“([#0_Kİſ…")
                                + ["will", "Will", "need to", "WILL", "refunds", "xwill", "NEED  TO", "a" * 250, " " * 300, "b " * 120]),
                max_size=30).map("".join)
"""Texts of the characters the rules turn on (Unicode blanks, capitals that fold, quotes) and decision words."""


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_sentences_end_where_the_one_pattern_rule_ends_them(text: str) -> None:
    assert standin._sentences(text) == rule_sentences(text)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_a_decision_word_is_found_as_the_case_insensitive_rule_finds_it(text: str) -> None:
    assert standin._decides(text) == (RULE_DECISION.search(text) is not None)


def test_sentence_rule_boundaries_by_hand() -> None:
    assert standin._sentences("Done. Next one.  ok? 3 left!\n\nx") == ["Done.", "Next one. ok?", "3 left!", "x"]
    assert standin._sentences("v2.3 is out. (see notes)\t. A") == ["v2.3 is out.", "(see notes) .", "A"]
    assert standin._sentences("a" * 300) == ["a" * 239 + "…"]
    # read as far as the cut: 480 characters of "ab " made single are 480, longer than 240
    assert standin._sentences("ab " * 1000) == [("ab " * 80)[:239] + "…"]
    # 480 characters of "a" + 300 blanks make 180: too short, the whole piece is read
    assert standin._sentences("a" * 180 + " " * 300 + "b" * 100) == ["a" * 180 + " " + "b" * 58 + "…"]
    assert standin._decides("WE AGREED") and standin._decides("need to") and not standin._decides("needed to")
    assert not standin._decides("willow") and standin._decides("İnstead") == bool(RULE_DECISION.search("İnstead"))
    assert standin._decides("we will…") and not standin._decides("willow…") and standin._decides("ſhould…")


def test_a_long_piece_is_made_single_blanked_only_as_far_as_its_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3 000-character tool result is one sentence cut at 240: its first 480 characters are read
    (made single-blanked: 480, longer than the cut), not its 3 000; a piece whose first 480 make
    fewer than 241 is read whole."""
    read: list[int] = []
    real = standin._single_blanks

    def counting(piece: str) -> str:
        read.append(len(piece))
        return real(piece)

    monkeypatch.setattr(standin, "_single_blanks", counting)
    assert standin._sentences("ab " * 1000) == [("ab " * 80)[:239] + "…"] and read == [480]
    read.clear()
    assert standin._sentences("a " * 100 + " " * 2800)[0] == ("a " * 100).strip() and read == [480, 3000]


def test_a_closing_ellipsis_is_left_out_of_the_identifier_guard_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sentences are asked whether they may hold identifiers without a closing ``…`` (a cut
    sentence's, or the text's own): it is no guard character, and without it the batch of ASCII
    sentences is ASCII. What is found and kept is unchanged: the 300-character row is cut to 239
    ``a`` and ``…`` (no identifier, no decision: not kept), the agent's ``…`` stays on its line."""
    asked = spy(monkeypatch, standin, "may_hold_identifiers")
    text = StandInSummarizer().summarize([{"role": "user", "content": "a" * 300},
                                          {"role": "assistant", "content": "Order OR1234Z wait…"}])
    assert asked == [["a" * 239, "Order OR1234Z wait"]]
    assert text.splitlines()[1:] == ["2 message(s), 1 user message(s); 1 sentence(s) with identifiers or decisions kept.",
                                     "- agent: Order OR1234Z wait…"]
