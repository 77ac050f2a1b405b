"""``inspector.engine.cache.common_prefix``: the one count of shared first entries that the prompt-cache
rules and a frame's kept replacements (``replay.replaced.kept_prefix``) both read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from inspector.engine.cache import common_prefix


def test_the_shared_first_entries_are_counted_up_to_the_first_difference() -> None:
    assert common_prefix((1, 2, 3), (1, 2, 4)) == 2
    assert common_prefix((1, 2), (1, 2, 3)) == 2  # one is the other's prefix: its whole length
    assert common_prefix((), (1,)) == 0
    assert common_prefix((5,), (6, 5)) == 0  # the first entries differ: nothing shared after either


@given(st.lists(st.integers(0, 2), max_size=8), st.lists(st.integers(0, 2), max_size=8))
def test_the_count_is_the_longest_equal_head(a: list[int], b: list[int]) -> None:
    k = common_prefix(a, b)
    assert a[:k] == b[:k]
    assert k == min(len(a), len(b)) or a[k] != b[k]
