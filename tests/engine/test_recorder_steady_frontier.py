"""The recorder's steady frontier call (inspector/replay/recorder.py, ``_Recorder._payload``): a call whose
record is a view of the table the last frame was a view of, on the same side, its frontier moved on or
standing, is recorded without the general path (no ``FrontierTable.sync``, ``frontier_frame`` or
``kept_prefix`` call), and every frame it records is the one the general path records."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import drawn_ask, one_turn_asks, spy, tool
from inspector.engine.types import Message
from inspector.manifest import settings_from_dict
from inspector.transcripts.model import Transcript


def _transcript(msgs: list[Message]) -> Transcript:
    return Transcript(format="synthetic", path=None, messages=msgs, origins=[str(i) for i in range(len(msgs))],
                      tools=None, model="gpt-4o", usage={}, irregularities=[])


def _settings(cm: dict[str, Any], window: int) -> Any:
    return settings_from_dict({"kind": "Agent", "spec": {"context_manager": cm,
                                                          "models": [{"model": "gpt-4o", "context_window": window}]}})


@st.composite
def agents(draw: Any) -> list[Message]:
    """A tool-using agent's transcript: turns (one of them, often: a one-turn agent, whose record
    replaces working-memory rows only) of a user row, tool rounds (one or two calls of tools
    ``a``/``b``, results of varied sizes) and a reply; sometimes a turn that ends without one."""
    msgs: list[Message] = []
    k = 0
    for t in range(draw(st.sampled_from([1, 1, 2, 3, 5]))):
        msgs.append({"role": "user", "content": f"q{t}"})
        for _r in range(draw(st.integers(0, 12))):
            row, ids = drawn_ask(draw, k)
            k += len(ids)
            msgs.append(row)
            msgs.extend(tool(i, "x" * draw(st.integers(1, 300))) for i in ids)
        if draw(st.integers(0, 5)):
            msgs.append({"role": "assistant", "content": "done"})
    return msgs


def _frames(rp: Any) -> list[tuple[Any, ...]]:
    """What a frame records of its payload, read as every reader reads it."""
    return [(type(f.replaced).__name__, list(f.segments), list(f.replaced), f.replaced_kept, f.trimmed,
             f.payload_tokens) for f in rp.frames]


def _general(monkeypatch: Any) -> None:
    """The recorder with its steady path off: no frame's ``replaced`` is taken for a frontier view of its
    own (the steady path's first test), so every call takes the general path; ``kept`` is the same number
    (``kept_prefix`` of any two frames' lists)."""
    from inspector.replay import recorder

    monkeypatch.setattr(recorder, "ReplacedRefs", type("NotAFrontierView", (), {}))


@settings(max_examples=100, deadline=None)
@given(msgs=agents(), strategy=st.sampled_from(["clear-tool-results", "observation-masking"]),
       trigger=st.integers(1, 600), keep=st.integers(0, 3), exclude=st.sampled_from([[], ["b"]]),
       window=st.sampled_from([400, 900, 128_000]), events=st.integers(1, 6))
def test_the_steady_path_records_the_frames_the_general_path_records(
        msgs: list[Message], strategy: str, trigger: int, keep: int, exclude: list[str], window: int,
        events: int) -> None:
    """Random tool rounds in one or several turns, clear-tool-results (trigger, keep, exclude_tools) or
    observation-masking (a window of events), a small or a large context window (the budget trims
    the payload, or not): the frames and the replay's JSON are those of the general path, call by call."""
    from inspector.replay import recorder, replay

    cm: dict[str, Any] = {"type": strategy, "params": {"trigger": trigger, "keep": keep, "exclude_tools": exclude}
                          if strategy == "clear-tool-results" else {"attention_window": events}}
    s, t = _settings(cm, window), _transcript(msgs)
    steady = replay(s, t, counter="estimate")
    with pytest.MonkeyPatch.context() as mp:
        _general(mp)
        general = replay(s, t, counter="estimate")
    assert recorder.ReplacedRefs.__name__ == "ReplacedRefs"
    assert _frames(steady) == _frames(general)
    assert steady.to_json() == general.to_json()


@pytest.mark.parametrize("rounds", [30, 60])
def test_a_one_turn_clearing_replay_maps_each_entry_once_without_sync_frame_or_prefix_calls(
        monkeypatch: Any, rounds: int) -> None:
    """clear-tool-results over a 1-token trigger keeping 2 results, one turn of ``rounds`` asks: call k
    (k >= 3) clears the results of asks 0..k-3, so the table grows by one entry a call and the frontier
    moves on by one. The first frontier frame (call 3) takes the general path: ``FrontierTable.sync``,
    ``frontier_frame`` and ``kept_prefix`` once each. Each later call (rounds - 3 of them) is the steady
    one: the new entry is mapped in place (its row looked up once in the transcript index), and none
    of the three runs again (they ran once each per call: rounds - 2 times). Each frame keeps all of
    the last frame's list (``kept`` = its count)."""
    from inspector.replay import recorder, replay
    from inspector.replay.replaced import FrontierTable, ReplacedRefs

    synced = spy(monkeypatch, FrontierTable, "sync")
    framed = spy(monkeypatch, recorder, "frontier_frame")
    compared = spy(monkeypatch, recorder, "kept_prefix")
    s = _settings({"type": "clear-tool-results", "params": {"trigger": 1, "keep": 2}}, 128_000)
    rp = replay(s, _transcript(one_turn_asks(rounds, "x" * 200)), counter="estimate")
    frontier = [f for f in rp.frames if type(f.replaced) is ReplacedRefs]
    assert [f.replaced.upto for f in frontier] == list(range(1, rounds - 1))
    assert (len(synced), len(framed), len(compared)) == (1, 1, 1)
    fr = frontier[0].replaced.fr
    assert all(f.replaced.fr is fr for f in frontier) and len(fr.refs) == rounds - 2
    assert [f.replaced_kept for f in frontier] == [0, *range(1, rounds - 2)]


def test_a_frontier_that_does_not_map_falls_back_to_the_general_path(monkeypatch: Any) -> None:
    """A table entry the transcript index does not hold (here: the transcript index made to forget
    the rows of asks 10 on, as if they were not transcript messages) is not mapped by the steady path:
    the general path's ``sync`` finds it does not map and the frame lists its rows one by one, as
    before; the frames up to there are frontier views."""
    from inspector.replay import recorder, replay
    from inspector.replay.replaced import ReplacedRefs

    made: list[Any] = []
    init = recorder._Recorder.__init__

    def forgetting(self: Any, *a: Any, **k: Any) -> None:
        init(self, *a, **k)
        made.append(self)
        for m in self.msgs[21:]:  # the results of asks 10 on
            if m["role"] == "tool":
                self.refs.ref.pop(id(m), None)

    monkeypatch.setattr(recorder._Recorder, "__init__", forgetting)
    s = _settings({"type": "clear-tool-results", "params": {"trigger": 1, "keep": 2}}, 128_000)
    rp = replay(s, _transcript(one_turn_asks(20, "x" * 200)), counter="estimate")
    kinds = [type(f.replaced) is ReplacedRefs for f in rp.frames]
    assert kinds[3:13] == [True] * 10 and not any(kinds[13:])
    assert not made[0].work.ok
    assert [len(f.replaced) for f in rp.frames][3:13] == list(range(1, 11))
