"""The prompt-cache accounting over frontier frames (observation-masking, clear-tool-results: a
frame keeps its transcript runs and how many rows of its manager's table it replaces,
:class:`~inspector.replay.FrontierSegments`): read in that compact form, it answers what it answers
over the frames' replaced rows split out (one segment each), and reads a bounded number of runs a
call however many rows are replaced."""

from __future__ import annotations

import dataclasses
import functools
import sys
from pathlib import Path
from typing import Any

import pytest

import inspector.prompt_cache_rows as rows
from inspector.prompt_cache import account
from inspector.replay import FrontierSegments, Replay

ROOT = Path(__file__).resolve().parents[2]
MANAGERS = {"observation-masking": {"type": "observation-masking", "params": {"attention_window": 6}},
            "clear-tool-results": {"type": "clear-tool-results", "params": {"trigger": 3_000, "keep": 2}}}


@functools.lru_cache(maxsize=None)
def _replay(name: str, turns: int) -> Replay:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from replay_scaling import run, synth

    return run(synth(turns), MANAGERS[name], window=6_000)[1]


class _Expanded:
    """The replay with every frame's segments read out as a list (each replaced row its own segment)."""

    def __init__(self, rp: Replay) -> None:
        self.rp = rp
        self.frames = [dataclasses.replace(f, segments=list(f.segments)) for f in rp.frames]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rp, name)


@pytest.mark.parametrize("rule", ["openai", "anthropic"])
@pytest.mark.parametrize("name", sorted(MANAGERS))
def test_a_frontier_frames_account_is_the_account_of_its_rows_split_out(name: str, rule: str) -> None:
    rp = _replay(name, 80)
    assert sum(type(f.segments) is FrontierSegments and f.segments.upto > 0 for f in rp.frames) > 20
    compact, expanded = account(rp, rule=rule), account(_Expanded(rp), rule=rule)  # type: ignore[arg-type]
    assert compact.calls == expanded.calls
    assert compact.totals()["cache_breaks"] > 0 and compact.totals()["resent"] > 0  # breaks were priced


@pytest.mark.parametrize("name", sorted(MANAGERS))
def test_the_cache_accounting_reads_the_runs_not_the_replaced_rows(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads per call (a run's units, ``CallRows.run_units``; a search of the table,
    ``prompt_cache_rows.bisect_left``; a counter's units, ``_CachedCounter.unit``): bounded as the calls
    double (80 → 160 turns) while the table doubles, and a fraction of what the same account reads
    with every frame's replaced rows split out (each one's units asked per call: measured ≈ 78 and
    68 a call at 80 turns, against ≈ 16)."""
    from bisect import bisect_left

    from builders import count_unit_reads

    reads = count_unit_reads(monkeypatch)
    real = rows.CallRows.run_units

    def counted(self: Any, *args: Any) -> int:
        reads[0] += 1
        return real(self, *args)

    def search(*args: Any) -> int:
        reads[0] += 1
        return bisect_left(*args)

    monkeypatch.setattr(rows.CallRows, "run_units", counted)
    monkeypatch.setattr(rows, "bisect_left", search)
    per_call = []
    replaced = []
    for turns in (80, 160):
        rp = _replay(name, turns)
        reads[0] = 0
        account(rp)
        per_call.append(reads[0] / len(rp.frames))
        replaced.append(max(f.segments.upto for f in rp.frames if type(f.segments) is FrontierSegments))
    assert replaced[1] >= 1.8 * replaced[0]  # the rows replaced did grow
    assert per_call[1] <= 1.25 * per_call[0], per_call  # measured ≈ 15.6 → 16.1 and 15.5 → 16.8
    reads[0] = 0
    account(_Expanded(_replay(name, 80)))  # type: ignore[arg-type]
    assert per_call[0] <= 0.3 * reads[0] / len(_replay(name, 80).frames), per_call


@functools.lru_cache(maxsize=None)
def _demo(name: str) -> Replay:
    from inspector.manifest import settings_from_dict
    from inspector.replay import replay
    from inspector.transcripts import load_transcript, sample_path

    cm = {"observation-masking": {"type": "observation-masking", "params": {"attention_window": 2}},
          "clear-tool-results": {"type": "clear-tool-results", "params": {"trigger": 500, "keep": 1}}}[name]
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": cm, "budget": {"context_window": 3_000}}})
    return replay(s, load_transcript(sample_path("demo_support.json")), counter="estimate")


@pytest.mark.parametrize("name", sorted(MANAGERS))
def test_the_forgetting_of_frontier_frames_is_that_of_their_rows_split_out(name: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The detector reads a frontier frame's runs split at its replaced rows (``FrontierSegments.plain``),
    not its segments one per replaced row (each call needing an identifier read them), and finds what
    it finds over the rows split out."""
    from inspector.forgetting import call_needs
    from inspector.replay.replaced import FrontierSegments as Segments

    rp = _demo(name)
    assert any(type(f.segments) is Segments and f.segments.upto > 0 for f in rp.frames)
    expanded = call_needs(_Expanded(rp))  # type: ignore[arg-type]
    reads = [0]
    real = Segments._expand

    def counted(self: Any) -> Any:
        reads[0] += 1
        return real(self)

    monkeypatch.setattr(Segments, "_expand", counted)
    compact = call_needs(rp)
    assert compact == expanded and sum(c.earlier for c in compact) > 0
    needing, forgot = sum(1 for c in compact if c.earlier), sum(1 for c in compact if c.forgotten)
    assert needing >= 10 * forgot  # 25 calls need an earlier message's identifier, 2 forgot one
    assert reads[0] <= forgot  # only a call that may have forgotten reads its own rows' text


def _masked_turns(turns: int) -> Replay:
    from inspector.replay import replay
    from tests.analysis.test_forgetting import _settings, _transcript
    from tests.builders import toolturn

    msgs = [m for i in range(turns) for m in toolturn(f"c{i}", f"output {i} " * 5)]
    cm = {"type": "observation-masking", "params": {"attention_window": 2}}
    return replay(_settings(cm), _transcript(msgs), counter="estimate")


@pytest.mark.parametrize(("turns", "reads"), [(10, 48), (20, 98)])
def test_the_frontier_account_asks_the_counter_for_each_row_once(turns: int, reads: int,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """T tool turns ``[user, ask, tool, done]`` (4T rows, 2T calls) under observation-masking with
    ``attention_window`` 2: the last call sends rows 0 … 4T − 2 (4T − 1 rows) and replaces the T − 1
    tool results of the earlier turns (its table's T − 1 entries). The account asks the counter once
    per transcript row it sends (4T − 1) and once per placeholder (T − 1): 5T − 2 in all (48, 98).
    The first frontier call is compared with the plain call before it in its compact form (splitting
    its rows out asked once more, 5T − 1). A replaced message's own units come from the running sums;
    asking the counter for them again per entry would make it 6T − 3."""
    from builders import count_unit_reads

    rp = _masked_turns(turns)
    last = rp.frames[-1].segments
    assert type(last) is FrontierSegments and last.upto == turns - 1 and len(rp.frames) == 2 * turns
    counted = count_unit_reads(monkeypatch)
    account(rp)
    assert counted[0] == reads == 5 * turns - 2


@pytest.mark.parametrize("name", sorted(MANAGERS))
def test_the_first_frontier_call_after_a_call_that_replaces_nothing_is_not_split_out(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first call that clears or masks follows a call that replaces nothing: the rows whose
    replacement differs are the new call's table entries ``[0, upto)``, read in the compact form, so
    no call of the account splits a frontier frame's replaced rows out (``CallRows.expanded`` of a
    frontier call: 0 calls; before, 1 to compare the two calls and 1 more at a cache break)."""
    from builders import spy

    rp = _replay(name, 80)
    firsts = [i for i in range(1, len(rp.frames)) if type(rp.frames[i].segments) is FrontierSegments
              and rp.frames[i].segments.upto > 0 and type(rp.frames[i - 1].segments) is not FrontierSegments]
    assert firsts  # a plain call is followed by one that replaces rows
    split = spy(monkeypatch, rows.CallRows, "expanded")  # (a plain call's returns itself: not counted)
    acct = account(rp)
    assert [lay for lay in split if lay.fr is not None] == []
    assert acct.calls == account(_Expanded(rp)).calls  # type: ignore[arg-type]
