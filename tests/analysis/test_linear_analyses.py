"""What the faces compute per replay stays linear: operation counts, not times.

Bug classes: a per-row property that rebuilds a frame's whole row list read inside a loop over the
rows (a payload of n rows costs n²), and a per-call view that recomputes a whole-replay analysis
(the forgetting detector) at every call or step.
"""

from __future__ import annotations

import pytest

from inspector.manifest import load_manifest
from inspector.replay import Frame, Replay, replay
from inspector.transcripts import Transcript, load_transcript, sample_path


@pytest.fixture(scope="module")
def demo() -> Replay:
    return replay(load_manifest("sample_manifests/small-window.yaml"), load_transcript(sample_path("demo_support.json")),
                  counter="estimate")


def _count_expansions(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"refs": 0, "row_bands": 0, "synthetic": 0}
    for name in counts:
        original = getattr(Frame, name)

        def counting(self: Frame, _name: str = name, _original: property = original) -> list:
            counts[_name] += 1
            return _original.fget(self)  # type: ignore[misc]

        monkeypatch.setattr(Frame, name, property(counting))
    return counts


def test_a_payload_table_expands_the_frames_rows_once_not_once_per_row(demo: Replay,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.app.chat import payload_rows
    from inspector.report.tables import payload_table

    k = max(range(len(demo.frames)), key=lambda i: demo.frames[i].message_count)
    assert demo.frames[k].message_count > 5  # a payload long enough that per-row expansion would show
    counts = _count_expansions(monkeypatch)
    payload_table(demo, k)
    assert counts == {"refs": 1, "row_bands": 1, "synthetic": 1}
    payload_rows(demo, k)  # its own expansion (1) plus the payload_table it reads (1)
    assert counts == {"refs": 3, "row_bands": 3, "synthetic": 3}


def test_every_view_of_forgotten_references_shares_one_detector_run(demo: Replay,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import inspector.forgetting as forgetting
    from inspector.report.figures import forgotten_per_call
    from inspector.report.tables import forgotten_table, step_events

    runs = [0]
    original = forgetting.call_needs

    def counting(rp: Replay, *a: object, **kw: object) -> list:
        runs[0] += 1
        return original(rp, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(forgetting, "call_needs", counting)
    rp = replay(load_manifest("sample_manifests/small-window.yaml"),
                load_transcript(sample_path("demo_support.json")), counter="estimate")
    per_call = [len(forgotten_table(rp, k)) for k in range(len(rp.frames))]
    step_events(rp)
    forgotten_per_call(rp)
    forgotten_table(rp)
    assert runs[0] == 1
    assert sum(per_call) == len(forgotten_table(rp)) > 0


def test_calibration_measures_each_transcript_row_once_per_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Usage on every reply: each call's payload is the whole transcript before it. Counting each
    payload anew reads rows² rows; the running sums read each row once per counter (two counters),
    and every call's count is still the counter's ``count`` of its rows."""
    from inspector.calibration import calibrate
    from inspector.engine.tokens import _CachedCounter, make_counter
    from inspector.transcripts.model import Transcript

    msgs: list[dict] = []
    usage = {}
    for i in range(60):
        msgs += [{"role": "user", "content": f"question {i} about order A-{10000 + i}"},
                 {"role": "assistant", "content": f"answer {i}: order A-{10000 + i} ships today"}]
        usage[len(msgs) - 1] = {"prompt_tokens": 20 * len(msgs)}
    tr = Transcript(format="synthetic", path=None, messages=msgs, origins=[str(i) for i in range(len(msgs))],
                    tools=None, model="gpt-4o", usage=usage, irregularities=[])
    from builders import count_unit_reads

    original = _CachedCounter.unit
    reads = count_unit_reads(monkeypatch)
    calls = calibrate(tr).calls
    assert len(calls) == 60 and reads[0] <= 2 * len(msgs)
    monkeypatch.setattr(_CachedCounter, "unit", original)
    for kind in ("tiktoken", "estimate"):
        c = make_counter(kind, "gpt-4o")
        assert list(calls[kind]) == [c.count(msgs[:i]) for i in calls["index"]], kind
    assert list(calls["messages"]) == list(calls["index"])


def _nested_tool_turn(rounds: int) -> Transcript:
    """One user turn of ``rounds`` tool calls whose JSON arguments nest a list and an object (the
    shape argument_identifiers walks), each answered."""
    import json

    msgs: list[dict] = [{"role": "user", "content": "ship order ORD-1001"}]
    for k in range(rounds):
        args = json.dumps({"order": f"ORD-{1000 + k}", "items": [{"sku": f"SKU-{k}", "qty": 20_000 + k}, "express"]})
        msgs += [{"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": "ship", "arguments": args}}]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": f"shipped ORD-{1000 + k} as TRK-{k:05d}"}]
    msgs.append({"role": "assistant", "content": "done"})
    return Transcript(format="synthetic", path=None, messages=msgs, origins=[str(i) for i in range(len(msgs))],
                      tools=None, model="gpt-4o", usage={}, irregularities=[])


@pytest.mark.parametrize("strategy", [spec.name for spec in __import__("inspector.plugins", fromlist=["x"])
                                      .default_registry().specs("context_manager")])
def test_a_replay_and_its_forgetting_analysis_leave_no_garbage_for_the_collector(strategy: str) -> None:
    """Both run with the cyclic collector paused (gc_paused), so a reference cycle they drop waits
    there and the next collection pays for it: with the collector off, a full collection after them
    finds nothing unreachable, for every strategy. (A recursive closure per tool call's arguments
    left 11 objects a call.)"""
    import gc

    from inspector.forgetting import call_needs
    from inspector.manifest import settings_from_dict

    settings = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": strategy},
                                                             "models": [{"model": "gpt-4o", "context_window": 4000}]}})
    call_needs(replay(settings, _nested_tool_turn(3), counter="estimate"))  # imports and one-off classes
    tr = _nested_tool_turn(40)
    gc.collect()
    gc.disable()
    try:
        answer = call_needs(replay(settings, tr, counter="estimate"))
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert len(answer) == 41 and unreachable == 0


def test_the_garbage_collector_is_paused_during_a_replay_and_its_analysis_and_restored_after() -> None:
    """replay() and call_needs() run with the cyclic collector off (a full collection re-reads every
    object alive, which made a long replay's time grow faster than its work) and leave it as found,
    also after an error."""
    import gc

    import inspector.forgetting as forgetting
    from inspector.forgetting_index import TranscriptIndex
    from inspector.manifest import load_manifest
    from inspector.replay import replay
    from inspector.replay.run import gc_paused
    from inspector.transcripts import load_transcript, sample_path

    seen: list[bool] = []
    real = TranscriptIndex.__init__

    def spy(self: object, *a: object) -> None:
        seen.append(gc.isenabled())
        real(self, *a)  # type: ignore[arg-type]

    TranscriptIndex.__init__ = spy  # type: ignore[method-assign]
    try:
        assert gc.isenabled()
        rp = replay(load_manifest("sample_manifests/small-window.yaml"), load_transcript(sample_path()), counter="estimate")
        forgetting.call_needs(rp)
    finally:
        TranscriptIndex.__init__ = real  # type: ignore[method-assign]
    assert seen == [False] and gc.isenabled()
    try:
        with gc_paused():
            assert not gc.isenabled()
            raise KeyError("x")
    except KeyError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # left as found
    finally:
        gc.enable()
