"""Regression: a summary shown as sent that was not sent (Q18).

Bug class: a computed-but-dropped thing shown as sent. On the demo a summary was computed, then
trimmed for budget; the frame still carried its text, the app printed it under "Payload sent" and
the summary band was 0 tokens. Now such a summary is listed as **not sent**, with the reason, in
the frame JSON, the tables and the app views. The acceptance property checks, over random
conversations and manifests, that every row a frame marks as sent is in the payload and every
summary the record says was computed is either in the payload or listed as not sent with a reason.
"""

from __future__ import annotations

import json

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from inspector.manifest import load_manifest, settings_from_dict
from inspector.replay import replay
from inspector.replay.ranges import SUMMARY_TRIMMED
from inspector.app import call_facts, exports
from inspector.report.tables import frames_table, not_sent_table
from inspector.transcripts import Transcript, load_transcript
from tests.engine.test_engine_invariants import Echo, conversations, managers, text, trimmers

SAMPLE = ROOT / "sample_manifests" / "small-window.yaml"
DEMO = ROOT / "inspector" / "samples" / "demo_support.json"


def demo_replay():  # noqa: ANN201
    return replay(load_manifest(SAMPLE), load_transcript(DEMO), counter="estimate", system="manifest",
                  tools="manifest")


def test_a_trimmed_summary_is_listed_as_not_sent_everywhere() -> None:
    rp = demo_replay()
    hit = [k for k, f in enumerate(rp.frames) if f.not_sent]
    assert hit, "the demo under small-window computes a summary the trimmer removes"
    k = hit[0]
    f = rp.frames[k]
    assert not f.summary_sent and f.bands["summary"] == 0
    assert f.not_sent[0]["reason"] == SUMMARY_TRIMMED
    doc = f.to_json(rp.messages)
    assert doc["summary_sent"] is False and doc["not_sent"][0]["reason"] == SUMMARY_TRIMMED
    assert all(row["band"] != "summary" for row in doc["payload"])
    table = not_sent_table(rp, k)
    assert table.iloc[0]["reason"] == SUMMARY_TRIMMED and pd.isna(table.iloc[0]["ref"])
    assert frames_table(rp).loc[k, "summary_not_sent"] == SUMMARY_TRIMMED
    assert call_facts.summary_block_text(rp, k) is None  # never under "Payload sent"
    assert call_facts.summary_not_sent(rp, k)[0][0] == SUMMARY_TRIMMED
    assert json.loads(exports.payload_json(rp, k))["not_sent"][0]["reason"] == SUMMARY_TRIMMED


def as_transcript(convo: list) -> Transcript:  # noqa: ANN001
    msgs: list[dict] = []
    for user_text, steps, final, _commit in convo:
        msgs.append({"role": "user", "content": user_text})
        for rows in steps:
            msgs.extend(dict(r) for r in rows)
        msgs.append({"role": "assistant", "content": final or "done"})
    return Transcript("openai", None, msgs, [f"[{i}]" for i in range(len(msgs))], None, None, {}, [])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cm=managers, trimmer=trimmers, convo=conversations(), system=st.one_of(st.just(""), text))
def test_sent_rows_are_in_the_payload_and_computed_summaries_are_sent_or_listed(cm: dict, trimmer: dict,
                                                                                convo: list, system: str) -> None:
    cm = {**cm, "params": {**cm.get("params", {}), "trimmer": trimmer}}
    s = settings_from_dict({"kind": "Agent", "spec": {"system_prompt": system or None, "context_manager": cm}}).settings
    rp = replay(s, as_transcript(convo), counter="estimate", summarizer=Echo(), system="manifest")
    msgs = rp.messages
    for k, f in enumerate(rp.frames):
        payload = f.payload(msgs)
        assert len(payload) == len(f.refs) == len(f.row_bands)
        for pos, ref in enumerate(f.refs):
            if ref is not None and pos not in f.own:
                assert payload[pos] is msgs[ref]  # marked sent -> that very message is in the payload
        assert f.summary_sent == any(b == "summary" for b in f.row_bands)
        assert (f.bands["summary"] > 0) == f.summary_sent
        missing = set(not_sent_table(rp, k)["ref"].dropna().astype(int))
        # a row sent is never listed as not sent, except one a strategy replaced (``f.replaced``): its
        # replacement is sent with its ref, and the original is listed as not sent, in its reason's words
        sent = {r for r in f.refs if r is not None} - {ref for ref, _reason in f.replaced}
        assert missing.isdisjoint(sent) and missing | sent >= set(range(min(f.at, len(msgs))))
        if f.decision.action in ("summarized", "reused") and f.summary_text:
            in_payload = any(b == "summary" and str(m.get("content", "")).endswith(f.summary_text)
                             for m, b in zip(payload, f.row_bands, strict=True))
            listed = any(str(n.get("content", "")).endswith(f.summary_text) and n["reason"] for n in f.not_sent)
            assert in_payload != listed, (k, f.decision, f.not_sent)
