"""A summary's text is scanned for secrets once, and a non-ASCII text is scanned one byte a character.

Rules (inspector/json_text.py ``_any_may_hold``, inspector/redact.py :func:`json_may_hold_secret`):
a replay document lists each summary twice, bare and as its summary block (the same text after a
header line); a text string that ends a longer text already found clear, after its opening quote,
is not scanned again (no pattern's match starts with a quote). A non-ASCII text is answered as its
ASCII form: each character no pattern can read (neither a blank nor one of the four letters an
ignore-case pattern folds to ASCII) written as ``\\x01`` bytes — replaced, never removed.

Bug classes: a summary's tens of kilobytes scanned twice per document; a shortcut that lets a secret
through (a shorter text skipped when it is not the longer one's tail, a non-ASCII blank or fold
letter dropped, two neighbours joined by removing what stood between them).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inspector.redact as redact
from builders import spy
from inspector.json_text import document_text, masked_document_text
from inspector.redact import json_may_hold_secret, mask_secrets
from inspector.engine.summary_block import summary_block

_FOLDS = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))


def rule_may_hold(text: str) -> bool:
    """The rule as first written: the four fold letters replaced, the text lowered, every pattern searched."""
    for letter, ascii_letter in _FOLDS:
        text = text.replace(letter, ascii_letter)
    low = text.lower()
    return any(p.search(low) is not None for p in redact._LOWER_PATTERNS)


_PIECES = ["key", "Token", "secret", "passwd", "passphrase", "bearer", "sk-", "AKIA", "eyJ", "://", ":", "=", '"',
           "\\n", " ", "\t", "\xa0", "\u2028", "\u3000", "\u0085", "—", "…", "é", "中文", "😀", "\u0130", "\u0131",
           "\u017f", "\u212a", "ke", "y", "x", "\ud800"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_a_non_ascii_text_says_what_the_rule_says(text: str) -> None:
    assert json_may_hold_secret(text) == rule_may_hold(text)


def test_non_ascii_characters_by_hand() -> None:
    assert not json_may_hold_secret('"key—: abcdefgh"')  # a dash is no blank: no assignment
    assert json_may_hold_secret('"key\xa0: abcdefgh"')  # a no-break space is one
    assert json_may_hold_secret('"\u212aey: abcdefgh"')  # the Kelvin sign folds to k
    assert not json_may_hold_secret('"ke—y: abcdefgh"')  # replaced, not removed: "ke" and "y" do not meet
    assert json_may_hold_secret('"— sk-abcdefghijklmnop …"')
    assert not json_may_hold_secret('"— s…k-abcdefghijklmnop"')


SUMMARY = "[offline stand-in summary — not produced by a model]\n" + "\n".join(
    f"- user: order OR{k:04d}Z is confirmed…" for k in range(40))


def test_a_summary_listed_bare_and_as_its_block_is_scanned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The block's text ends with the bare text: 1 scan of the two (the block, the longer); two
    unrelated summaries: 2 scans; the output is the masked document's either way."""
    block = summary_block(3, SUMMARY)["content"]
    doc: dict[str, Any] = {"summaries": [SUMMARY, block]}
    scans = spy(monkeypatch, redact, "json_may_hold_secret")
    assert masked_document_text(doc) == document_text(mask_secrets(doc))
    assert len(scans) == 1 and scans[0].startswith('"[Conversation summary')
    scans.clear()
    other = SUMMARY.replace("user", "agent")
    masked_document_text({"summaries": [SUMMARY, other]})
    assert len(scans) == 2


@pytest.mark.parametrize("secret", ["sk-abcdefghijklmnop1234", "api_key: abcd1234efgh5678"])
def test_a_secret_in_the_bare_summary_is_masked_when_the_block_is_clear(secret: str) -> None:
    """Only a shape that ends a clear one is skipped: a bare summary holding a secret is not the
    tail of a block that does not hold it, so it is scanned (and masked)."""
    block = summary_block(3, SUMMARY)["content"]
    doc: dict[str, Any] = {"summaries": [SUMMARY + "\n- " + secret, block]}
    text = masked_document_text(doc)
    assert text == document_text(mask_secrets(doc)) and secret not in text
    assert re.search(r"\*\*\*\*", text)
