"""What the prompt-cache account (inspector.prompt_cache.account) does per call, counted, never timed:
a call's consecutive transcript runs are read as one run, the transcript's running sums are made in
one pass before the calls, a frontier table's differences are made in one pass, and a break
under a rule that writes nothing is priced without the general break price (docs/performance.md,
"Why some code is shaped for speed")."""

from __future__ import annotations

from typing import Any

import pytest

import inspector.prompt_cache as prompt_cache
import inspector.prompt_cache_rows as rows
from inspector.prompt_cache import account
from inspector.prompt_cache_rows import CallRows, RowUnits
from tests.analysis.test_frontier_analyses import _masked_turns, _replay


class _Chars:
    """A counter whose unit of a message is its content's length and whose total is the units."""

    additive = True

    def unit(self, msg: dict[str, Any]) -> int:
        return len(msg["content"])

    def total(self, units: int, n: int) -> int:
        return units


def _units() -> RowUnits:
    """Rows 0 … 11, row ``i`` of ``i + 1`` characters (units 1 … 12)."""
    return RowUnits(_Chars(), [{"role": "user", "content": "x" * (i + 1)} for i in range(12)])


def test_a_calls_consecutive_transcript_runs_are_read_as_one_run() -> None:
    """System row 0, history 5 … 7, user row 8, working memory 9 … 10: four runs, the last three
    consecutive (8 follows 7, 9 follows 8), read as two: (0, 1) of 1 unit and (5, 6) of
    6 + 7 + 8 + 9 + 10 + 11 = 51 units; 7 rows, 52 units, 5 + 52 = 57 tokens with a 5-token head."""
    segs = [(0, 1, "system", None, None), (5, 3, "history", None, None), (8, 1, "user", None, None),
            (9, 2, "working_memory", None, None)]
    lay = CallRows(5, segs, _units())
    assert lay.runs == [(0, 1, "system", None, None), (5, 6, "history", None, None)]
    assert lay.sizes == [1, 51] and lay.rows == 7 and lay.total_tokens == 57
    assert lay.tokens_upto(1 + 4) == 5 + 1 + 6 + 7 + 8  # the head and the first four rows: within the joined run


def test_a_made_row_or_a_gap_ends_a_joined_run() -> None:
    """A made row (a summary of index 1, 4 characters) is its own run and ends the run before it;
    rows 2 … 3 and 4 then join (one run of 3 + 4 + 5 = 12 units), and row 7 after the gap at 5 … 6
    starts another."""
    summary = {"role": "user", "content": "S" * 4}
    segs = [(0, 1, "system", None, None), (1, 1, "summary", "summary", summary), (2, 2, "history", None, None),
            (4, 1, "user", None, None), (7, 1, "working_memory", None, None)]
    lay = CallRows(0, segs, _units())
    assert lay.runs == [(0, 1, "system", None, None), (1, 1, "summary", "summary", summary),
                        (2, 3, "history", None, None), (7, 1, "working_memory", None, None)]
    assert lay.sizes == [1, 4, 12, 8] and lay.rows == 6 and lay.total_tokens == 25


class _CountedReads(list):  # type: ignore[type-arg]
    """A list that counts the entries read from it by index."""

    reads = 0

    def __getitem__(self, i: Any) -> Any:
        _CountedReads.reads += 1
        return super().__getitem__(i)


def test_a_joined_run_is_summed_once_not_once_per_segment() -> None:
    """Rule: a joined run's units are one difference of the running sums (the segments' differences add
    up to it). The four runs of the first test join into two: 2 × 2 = 4 reads of the sums (8 when each
    segment was summed and the sizes added). On a frontier frame of one table (rows 6 and 9 replaced,
    each by a 2-character row: differences 2 − 7 = −5 and 2 − 10 = −8), the same run reads the sums
    twice and the table's differences twice: 6 + … + 11 − 5 − 8 = 38 units."""
    from inspector.replay.replaced import FrontierSegments, FrontierTable

    segs = [(0, 1, "system", None, None), (5, 3, "history", None, None), (8, 1, "user", None, None),
            (9, 2, "working_memory", None, None)]
    units = _units()
    units.extend(12)
    units.sums = _CountedReads(units.sums)
    _CountedReads.reads = 0
    assert CallRows(5, segs, units).sizes == [1, 51]
    assert _CountedReads.reads == 4
    fr = FrontierTable([])
    fr.refs, fr.rows = [6, 9], [{"role": "tool", "content": "ab"}] * 2
    d = units.delta(fr, 2)
    assert d == [0, -5, -13]
    units.last = (fr, _CountedReads(d))
    _CountedReads.reads = 0
    lay = CallRows(5, FrontierSegments(segs, fr, 2), units)
    assert lay.sizes == [1, 38] and lay.total_tokens == 5 + 39
    assert _CountedReads.reads == 2 + 2 + 2  # the system run's sums, the joined run's sums and differences


@pytest.mark.parametrize("turns", [10, 20])
def test_the_transcripts_running_sums_are_made_in_one_pass_before_the_calls(
        turns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """T tool turns under observation-masking (2T calls, each sending two or three rows more than the
    one before): the running sums are extended once, before the first call, up to the last call's
    reply; not a few rows at a time as the calls reach them (3T − 1 times: 29, 59)."""
    from builders import spy

    extended = spy(monkeypatch, rows.RowUnits, "extend")
    account(_masked_turns(turns))
    assert len(extended) == 1


@pytest.mark.parametrize("turns", [10, 20])
def test_a_frontier_tables_differences_are_made_in_one_pass_when_a_call_first_reads_it(
        turns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """T tool turns under observation-masking with ``attention_window`` 2: one table, which gains one
    entry a turn from the second turn's calls on (1 … T − 1 entries, each held by two calls). Its
    differences are made once, all T − 1 entries in one pass, when the first frontier call reads
    it; not once per call whose table grew (T − 1: 9, 19), nor once per frontier call (2T − 3: 17, 37)."""
    from builders import spy

    rp = _masked_turns(turns)
    asked = spy(monkeypatch, rows.RowUnits, "delta")
    account(rp)
    frontier = [f.segments for f in rp.frames if getattr(f.segments, "upto", 0)]
    assert len(frontier) == 2 * turns - 3 and len({id(s.fr) for s in frontier}) == 1
    assert len(asked) == 1 and len(frontier[-1].fr.refs) == turns - 1


def test_a_break_under_a_rule_that_writes_nothing_is_priced_without_the_general_break_price(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """gpt-4o under OpenAI's rule (no write price, nothing written): the general ``_break_cost`` is
    asked once, for the price of no break, however many calls break the cache (over a hundred here);
    each break's price is the read and input rates' difference found once."""
    from builders import spy

    rp = _replay("observation-masking", 80)
    priced = spy(monkeypatch, prompt_cache, "_break_cost")
    acct = account(rp)
    assert acct.rule.name == "openai" and acct.prices.write is None
    assert acct.totals()["cache_breaks"] > 100 and len(priced) == 1
    assert all(c.break_cost_usd is not None and c.break_cost_usd > 0 for c in acct.calls if c.resent)


def test_a_break_between_two_frontier_calls_of_one_table_searches_the_table_twice_a_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: at a break between two frontier calls of one table (a sliding history: rows 4 … 10, then
    5 … 11; rows 6 and 9 replaced in both by 2-character rows), the resent rows are the shared rows past
    the break, 5 … 10: 6 + 7 + 8 + 9 + 10 + 11 = 51 units, less 5 and 8 for the two replacements = 38,
    all uncached (nothing cached past the head). The shared run's piece searches the table twice: the
    place of the run's first row (which is also the piece's first row) and of the piece's end; not
    three times (the run's first row, then the piece's, then its end). The previous call's ranges past
    the break are its history run, 4 … 10, and it made no row: no made-row table is built (None)."""
    from inspector.engine.cache import CallCache
    from inspector.replay.replaced import FrontierSegments, FrontierTable

    units = _units()
    fr = FrontierTable([])
    fr.refs, fr.rows = [6, 9], [{"role": "tool", "content": "ab"}] * 2
    sys_run = (0, 1, "system", None, None)
    prev = CallRows(0, FrontierSegments([sys_run, (4, 7, "history", None, None)], fr, 2), units)
    cur = CallRows(0, FrontierSegments([sys_run, (5, 7, "history", None, None)], fr, 2), units)
    searched: list[Any] = []
    real = rows.bisect_left

    def counted(*args: Any) -> int:
        searched.append(args[1])
        return real(*args)

    monkeypatch.setattr(rows, "bisect_left", counted)
    assert rows.sent_from(prev, 1) == ([(4, 11)], None)
    call = CallCache(cur.total_tokens, 0, 0, cur.total_tokens, 2, 1)
    assert rows.resent_tokens(call, cur, prev) == (0, 38)
    assert searched == [5, 11]
