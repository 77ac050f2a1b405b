"""Replay (docs/design.md §5): frames and commits over real and bundled transcripts, determinism, cost, summaries."""

from __future__ import annotations

import pytest

from conftest import need_shared, shared_cases, shared_files
from inspector.manifest import settings_from_dict
from inspector.replay import replay
from inspector.transcripts import load_transcript, sample_path

SHARED_FILES = shared_files()
STRATEGIES = {
    "summarising": {"type": "summarising", "params": {"keep_turns": 3}},
    "sliding-window": {"type": "sliding-window", "params": {"keep_turns": 3}},
    "stack": {"type": "stack", "params": {"max_messages": 12}},
}


def settings(cm: object = None, **spec: object):  # noqa: ANN201
    s = dict(spec)
    if cm is not None:
        s["context_manager"] = cm
    return settings_from_dict({"kind": "Agent", "spec": s})


def test_shared_transcripts_are_present_when_required() -> None:
    need_shared()
    assert len(SHARED_FILES) == 6


@pytest.mark.parametrize("name", list(STRATEGIES))
@pytest.mark.parametrize("path", shared_cases(), ids=lambda p: p.parent.name if p else "no-shared-data")
def test_every_shared_transcript_replays_with_every_check_ok(path, name) -> None:  # noqa: ANN001
    tr = load_transcript(path)
    rp = replay(settings(STRATEGIES[name], models=[{"model": "gpt-4o", "context_window": 8000, "max_tokens": 1000}]),
                tr, counter="estimate", summarizer="stand-in")
    assert rp.frames, "every transcript has at least one LLM call"
    assert all(f.check == "ok" for f in rp.frames)
    assert sum(1 for m in tr.messages if m.get("role") == "assistant") <= len(rp.frames)


def demo():  # noqa: ANN201
    return load_transcript(sample_path("demo_support.json"))


def test_replay_is_byte_identical_twice() -> None:
    s = settings(STRATEGIES["summarising"], models=[{"model": "gpt-4o", "context_window": 6000}])
    a = replay(s, demo(), counter="tiktoken", summarizer="stand-in").dumps(payloads=True)
    b = replay(s, demo(), counter="tiktoken", summarizer="stand-in").dumps(payloads=True)
    assert a == b


def test_frames_reference_transcript_messages_instead_of_copying() -> None:
    tr = demo()
    rp = replay(settings("stack"), tr, counter="estimate")
    for f in rp.frames:
        for k, ref in enumerate(f.refs):
            if ref is not None and k not in f.own:
                assert f.payload(tr.messages)[k] is tr.messages[ref]
        assert len(f.own) <= 1 + sum(1 for s in f.synthetic if s)  # only synthesised or rebound rows are held


def test_one_frame_per_assistant_message_and_a_pending_one() -> None:
    tr = demo()
    rp = replay(settings("stack"), tr, counter="estimate")
    n_asst = sum(1 for m in tr.messages if m.get("role") == "assistant")
    pending = 1 if tr.messages[-1].get("role") != "assistant" else 0
    assert len(rp.frames) == n_asst + pending
    assert [(f.turn, f.step) for f in rp.frames] == sorted((f.turn, f.step) for f in rp.frames)
    assert rp.frames[-1].at == len(tr.messages) if pending else True


def test_each_message_is_tokenised_once() -> None:
    tr = demo()
    rp = replay(settings("stack"), tr, counter="tiktoken")
    synthesised = {id(m) for f in rp.frames for m in f.own.values()}
    assert rp.tokens_computed <= len(tr.messages) + len(synthesised) + 1


def test_openai_and_anthropic_forms_replay_to_the_same_frames() -> None:
    s = settings(STRATEGIES["sliding-window"])
    # the two files record different models (gpt-4o / claude): compare under one model, the manifest's (Q21)
    a = replay(s, load_transcript(sample_path("demo_support.json")), counter="estimate",
               model="manifest").to_json(payloads=True)
    b = replay(s, load_transcript(sample_path("demo_support.anthropic.json")), counter="estimate",
               model="manifest").to_json(payloads=True)
    assert a["frames"] == b["frames"] and a["commits"] == b["commits"]


def test_cost_uses_the_model_input_price() -> None:
    rp = replay(settings("stack", models=[{"model": "gpt-4o"}]), demo(), counter="estimate")
    from inspector.engine.limits import litellm_model_info

    price = litellm_model_info("gpt-4o")["input_cost_per_token"]
    f = rp.frames[0]
    assert f.cost_usd == pytest.approx(f.payload_tokens * price)
    unknown = replay(settings("stack", models=[{"model": "acme/unknown-model-x"}]), demo(), counter="estimate")
    assert unknown.frames[0].cost_usd is None and unknown.totals()["cost_usd"] is None


def test_llm_summaries_through_litellm_are_cached_on_disk(llm, tmp_path) -> None:  # noqa: ANN001
    from inspector.engine.llm import LLMEngine

    engine = LLMEngine(model="openai/test-model", api_base=llm.api_base, api_key="x", timeout=10)
    s = settings({"type": "summarising", "params": {"keep_turns": 2, "summarizer": "llm"}},
                 models=[{"model": "gpt-4o", "context_window": 6000, "max_tokens": 500}])
    first = replay(s, demo(), counter="estimate", llm=engine, summary_cache=tmp_path)
    calls = len(llm.requests)
    assert calls > 0 and first.totals()["summarizer_calls"]["commit"] > 0
    assert any(f.summary_text == llm.reply for f in first.frames) or any(c.summarizer_called for c in first.commits)
    second = replay(s, demo(), counter="estimate", llm=engine, summary_cache=tmp_path)
    assert len(llm.requests) == calls  # no new model call
    assert second.summary_cache_hits >= calls
    a, b = first.to_json(payloads=True), second.to_json(payloads=True)

    def strip(rows: list[dict]) -> list[dict]:  # a cache hit costs 0, a live call at an unknown price is null
        return [{k: v for k, v in r.items() if k != "summary_cost_usd"} for r in rows]

    assert strip(a["frames"]) == strip(b["frames"]) and strip(a["commits"]) == strip(b["commits"])
    assert all(c["summary_cost_usd"] == 0.0 for c in b["commits"])
    assert second.totals()["summary_cost_usd"] == 0.0  # cache hits cost nothing
