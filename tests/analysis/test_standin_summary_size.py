"""The offline stand-in summary's size rule (docs/design.md, "The stand-in summary's size"): its kept
lines fit a target of min(cap, max(floor, ⌈ratio × folded⌉), folded) tokens at four characters a
token (ratio 0.1, floor 256, cap 20 000); over the target the least salient go first, the oldest
first within a kind, so what a heavy fold keeps is the most recent.

Bug classes guarded here: a stand-in that keeps every identifier whatever the compression (so
summarising looks lossless offline), a summary larger than what it folds, a float ratio rounding
a target up (0.1 × 30 is 3.0000000000000004).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from builders import asst, user
from inspector.engine.summarizers.standin import (
    CAP_TOKENS,
    CHARS_PER_TOKEN,
    FLOOR_TOKENS,
    RATIO,
    STANDIN_LABEL,
    StandInSummarizer,
    folded_tokens,
    target_tokens,
)


def _orders(n: int, start: int = 1) -> list[dict]:
    """``n`` user messages "Order OR0001Z is confirmed." (27 characters each; the kept line
    "user: Order OR0001Z is confirmed." costs 33 + 3 = 36 characters)."""
    return [user(f"Order OR{i:04d}Z is confirmed.") for i in range(start, start + n)]


def _kept(text: str) -> list[str]:
    return [ln[2:] for ln in text.splitlines() if ln.startswith("- ")]


def test_the_published_numbers() -> None:
    assert (RATIO, FLOOR_TOKENS, CAP_TOKENS, CHARS_PER_TOKEN) == (0.1, 256, 20_000, 4)


def test_target_at_the_floor_in_the_middle_and_at_the_cap() -> None:
    assert target_tokens(0) == 0
    assert target_tokens(100) == 100  # below the floor: never more than the fold itself
    assert target_tokens(256) == 256
    assert target_tokens(1_000) == 256  # a tenth is 100: the floor
    assert target_tokens(2_560) == 256  # a tenth is exactly the floor
    assert target_tokens(2_561) == 257  # ⌈256.1⌉
    assert target_tokens(30, floor=0) == 3  # exact: not ⌈3.0000000000000004⌉ = 4
    assert target_tokens(50_000) == 5_000  # the middle: a tenth
    assert target_tokens(200_000) == 20_000  # a tenth is exactly the cap
    assert target_tokens(1_000_000) == 20_000  # the cap


def test_a_fold_at_the_floor_keeps_the_most_recent_lines_that_fit() -> None:
    """200 x 27 = 5 400 characters = 1 350 tokens; a tenth is 135, so the floor: 256 tokens = 1 024
    characters = 28 lines of 36 (1 008). All are the user's: the oldest go first, the last 28 stay."""
    msgs = _orders(200)
    assert folded_tokens(msgs) == 1_350 and StandInSummarizer().target(msgs) == 256
    kept = _kept(StandInSummarizer().summarize(msgs))
    assert kept == [f"user: Order OR{i:04d}Z is confirmed." for i in range(173, 201)]


def test_a_fold_in_the_middle_keeps_a_tenth() -> None:
    """2 000 x 27 = 54 000 characters = 13 500 tokens; a tenth: 1 350 tokens = 5 400 characters =
    150 lines of 36 (exactly 5 400): the last 150 stay."""
    msgs = _orders(2_000)
    assert StandInSummarizer().target(msgs) == 1_350
    kept = _kept(StandInSummarizer().summarize(msgs))
    assert kept == [f"user: Order OR{i:04d}Z is confirmed." for i in range(1_851, 2_001)]


def test_a_fold_at_the_cap_keeps_no_more_than_the_cap() -> None:
    """The same fold under a cap of 300 tokens: 1 200 characters = 33 lines of 36 (1 188)."""
    msgs = _orders(2_000)
    summ = StandInSummarizer(cap=300)
    assert summ.target(msgs) == 300
    assert _kept(summ.summarize(msgs)) == [f"user: Order OR{i:04d}Z is confirmed." for i in range(1_968, 2_001)]


def test_tool_traffic_goes_before_the_users_words_whatever_its_age() -> None:
    """A floor of 256 tokens (1 024 characters) over 28 user lines (1 008) and one newer tool line:
    the tool line goes first, though it is the newest."""
    msgs = [*_orders(200), {"role": "tool", "tool_call_id": "c1", "content": "Found order OR9999Z."}]
    kept = _kept(StandInSummarizer().summarize(msgs))
    assert "tool result: Found order OR9999Z." not in kept and len(kept) == 28


_WORDS = st.sampled_from(["Order", "OR0001Z", "confirmed.", "will", "ship", "SEC-88213", "to", "li@example.com",
                          "on", "2026-12-05.", "ok", "Refund", "42", "EUR.", "\n"])
_TEXT = st.lists(_WORDS, min_size=1, max_size=40).map(" ".join)
_MESSAGE = st.tuples(st.sampled_from([user, asst]), _TEXT).map(lambda p: p[0](p[1]))


@settings(max_examples=150, deadline=None)
@given(msgs=st.lists(_MESSAGE, min_size=1, max_size=30), cap=st.integers(1, 400), floor=st.integers(0, 300),
       ratio=st.sampled_from([0.01, 0.1, 0.25, 1.0]))
def test_the_kept_lines_never_exceed_the_cap_nor_what_they_fold(msgs: list[dict], cap: int, floor: int,
                                                                 ratio: float) -> None:
    summ = StandInSummarizer(ratio=ratio, floor=floor, cap=cap)
    text = summ.summarize(msgs)
    content = sum(len(line) + 3 for line in _kept(text))  # each kept line and its "\n- "
    tokens = content // CHARS_PER_TOKEN
    assert tokens <= cap and tokens <= folded_tokens(msgs)
    assert content <= summ.target(msgs) * CHARS_PER_TOKEN
    assert text.startswith(STANDIN_LABEL)


def test_the_ratio_is_made_a_fraction_once_per_summarizer(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every summary's target multiplies the ratio as a fraction (0.1 is 1/10): made once per
    summarizer, not per summary (a condenser's replay writes dozens), again when the ratio changes.
    Three folds of 100 orders (2 700 characters, 675 tokens: the floor, 256) write what a new summarizer writes."""
    from inspector.engine.summarizers import standin

    made: list[float] = []
    real = standin._exact_ratio

    def counting(ratio: float) -> object:
        made.append(ratio)
        return real(ratio)

    monkeypatch.setattr(standin, "_exact_ratio", counting)
    s = StandInSummarizer()
    texts = [s.summarize(_orders(100, k * 100)) for k in range(3)]
    assert made == [0.1] and s._target(900) == 256
    assert texts[2] == StandInSummarizer().summarize(_orders(100, 200))
    s.ratio = 0.5
    assert s._target(900) == 450 and made == [0.1, 0.1, 0.5]  # the new summarizer's, then the new ratio
