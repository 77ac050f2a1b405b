"""Forgotten references: the extractor's rules, the detector against planted ground truth, the
extractive stand-in carrying facts forward, and Q23 (no summary of a summary).

Bug classes: a detector that reports what the payload still shows (precision) or misses a fact
whose only holder was folded away (recall); a stand-in that drops an earlier summary's facts; a
summarizer call spent re-summarising the previous summary.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.identifiers import argument_identifiers, extract_identifiers
from inspector.engine.managers.summarising import SummarizingConversation, summary_block
from inspector.engine.summarizers.standin import STANDIN_LABEL, StandInSummarizer
from inspector.forgetting import call_needs, forgotten_references, replay_document
from inspector.manifest import load_manifest
from inspector.planted import KINDS, evaluate, planted_conversation, score, strategies, truth
from inspector.compare import compare

from tests.builders import asst, user

MANIFEST = "sample_manifests/small-window.yaml"
PRECISION_FLOOR = 0.9
RECALL_FLOOR = 0.8


@pytest.fixture(scope="module")
def manifest() -> object:
    return load_manifest(MANIFEST, overrides=["spec.models[0].context_window=4000"])


# --- the extractor -------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("My ticket is SEC-88213.", ("SEC-88213", "id")),
    ("Write to dana.whitfield@example.com today", ("dana.whitfield@example.com", "email")),
    ("see https://status.example.com/a/1.", ("https://status.example.com/a/1", "url")),
    ("logs in /srv/app/export.log", ("/srv/app/export.log", "path")),
    ('we call it "blue-green plan" here', ("blue-green plan", "quoted")),
    ("the export is 45 GB", ("45 GB", "quantity")),
    ("call me at 14:30", ("14:30", "quantity")),
    ("order #W2378156 shipped", ("#W2378156", "id")),
    ("set retry_budget_ms lower", ("retry_budget_ms", "word")),
])
def test_extractor_finds_each_documented_kind(text: str, expected: tuple[str, str]) -> None:
    assert expected in [(i.text, i.kind) for i in extract_identifiers(text)]


def test_extractor_ignores_ordinary_prose() -> None:
    assert extract_identifiers("Thanks, I will check it and get back to you in a moment. It's fine.") == []


def test_tool_arguments_count_short_values_as_identifiers() -> None:
    found = {i.text for i in argument_identifiers('{"reservation_id": "ZFA04Y", "cabin": "economy", "note": "a b"}')}
    assert {"ZFA04Y", "economy"} <= found and "a b" not in found


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_extractor_never_raises_and_every_identifier_is_in_the_text(text: str) -> None:
    for ident in extract_identifiers(text):
        assert ident.text and ident.text in text


# --- the detector against planted ground truth ----------------------------------------------------

def test_planted_conversation_is_deterministic_and_plants_every_kind() -> None:
    a, b = planted_conversation(3), planted_conversation(3)
    assert json.dumps(a.transcript.messages) == json.dumps(b.transcript.messages)
    assert {f.kind for f in a.facts} == set(KINDS)
    for f in a.facts:  # each fact is stated where the generator says and used where it says
        assert f.text in a.transcript.messages[f.planted_at]["content"]
        assert f.text in json.dumps(a.transcript.messages[f.needed_at])
        assert f.planted_at < f.needed_at


def test_detector_precision_and_recall_meet_the_floor_under_every_strategy(manifest: object) -> None:
    scores = evaluate(manifest, seeds=range(3))
    assert set(scores) == set(strategies())
    for name, s in scores.items():
        assert s.precision >= PRECISION_FLOOR, (name, s)
        assert s.recall >= RECALL_FLOOR, (name, s)
    # the window forgets planted facts (the truth is not empty, so the floor above means something)
    assert scores["sliding-window"].true_positives + scores["sliding-window"].false_negatives > 0


def test_a_fact_still_in_the_payload_or_restated_is_never_reported(manifest: object) -> None:
    conv = planted_conversation(1)
    rp = compare(manifest, conv.transcript, {"w": strategies(4)["sliding-window"]}, counter="estimate",
                 summarizer="stand-in")["w"]
    reported = {(x.call, x.identifier) for calls in forgotten_references(rp) for x in calls}
    restated = [f for f in conv.facts if f.restated]
    assert restated
    for f in restated:
        k = next(i for i, fr in enumerate(rp.frames) if fr.at == f.needed_at)
        assert (k, f.text) not in reported
    for calls in forgotten_references(rp):
        for x in calls:
            f = rp.frames[x.call]
            assert x.message not in f.refs and x.message < f.at  # the holder exists and is not sent
            sent = "\n".join(json.dumps(m, ensure_ascii=False) for m in f.payload(rp.messages))
            assert x.identifier.casefold() not in sent.casefold()


def test_score_counts_a_missed_truth_as_a_false_negative(manifest: object) -> None:
    conv = planted_conversation(0)
    rp = compare(manifest, conv.transcript, {"w": strategies(4)["sliding-window"]}, counter="estimate",
                 summarizer="stand-in")["w"]
    t = truth(rp, conv)
    assert t
    full = score(rp, conv)
    blind = score(rp, conv, extractor=lambda text: [])  # only the tool-argument value rule still applies
    for s in (full, blind):
        assert s.true_positives + s.false_negatives == len(t)
    assert blind.true_positives < full.true_positives
    reply_facts = {f.text.casefold() for f in conv.facts if f.needed_in == "next_reply"}
    assert {x for x in t if x[1] in reply_facts} and blind.false_negatives >= len({x for x in t if x[1] in reply_facts})


def test_replay_json_carries_forgotten_per_frame(manifest: object) -> None:
    conv = planted_conversation(2)
    rp = compare(manifest, conv.transcript, {"w": strategies(4)["sliding-window"]}, counter="estimate",
                 summarizer="stand-in")["w"]
    doc = replay_document(rp)
    lists = [fr["forgotten"] for fr in doc["frames"]]
    assert len(lists) == len(rp.frames)
    total = sum(len(x) for x in lists)
    assert total == doc["totals"]["forgetting"]["forgotten"] > 0
    first = next(x for fr in lists for x in fr)
    assert set(first) == {"identifier", "kind", "needed_in", "message", "reason"}
    assert "sliding window" in first["reason"] or "commit" in first["reason"]
    needs = call_needs(rp)
    assert doc["totals"]["forgetting"]["needing_calls"] == sum(1 for c in needs if c.earlier)


# --- the stand-in --------------------------------------------------------------------------------

def test_standin_keeps_identifier_sentences_and_carries_the_previous_summary_forward() -> None:
    s = StandInSummarizer()
    first = s.summarize([user("Hello there. My ticket is SEC-88213 and it is urgent."), asst("Sure, I will look.")])
    assert first.startswith(STANDIN_LABEL) and "SEC-88213" in first
    second = s.summarize([summary_block(1, first), user("Also email me at li.reyes@example.com please."),
                          asst("Noted.")])
    assert second.startswith(STANDIN_LABEL)
    assert "SEC-88213" in second and "li.reyes@example.com" in second  # carried forward + new
    assert "Hello there" not in second  # a sentence with neither identifier nor decision is not kept
    assert s.summarize([user("My ticket is SEC-88213.")]) == s.summarize([user("My ticket is SEC-88213.")])
    assert len(s.usage) == 4 and all(u["estimated"] for u in s.usage)


def test_standin_size_cap_drops_tool_traffic_before_what_the_user_said() -> None:
    s = StandInSummarizer(max_chars=300)
    msgs = [user("My ticket is SEC-88213.")] + [asst(f"Checked case LK{i:04d}X.") for i in range(40)]
    text = s.summarize(msgs)
    assert "SEC-88213" in text and len(text) < 300 + 200


def test_summarising_keeps_planted_facts_that_the_window_forgets(manifest: object) -> None:
    conv = planted_conversation(0)
    rps = compare(manifest, conv.transcript, strategies(4), counter="estimate", summarizer="stand-in")
    lost = {k: {x.identifier for calls in forgotten_references(rp) for x in calls} for k, rp in rps.items()}
    planted = {f.text for f in conv.facts}
    assert lost["sliding-window"] & planted
    assert not (lost["summarising"] & planted) or len(lost["summarising"] & planted) < len(lost["sliding-window"] & planted)


# --- Q23 ------------------------------------------------------------------------------------------

class _Counting:
    model = "m"
    model_source = "test"

    def __init__(self) -> None:
        self.inputs: list[list[dict]] = []

    def summarize(self, msgs: list[dict]) -> str:
        self.inputs.append(list(msgs))
        return "new summary"


def test_q23_previous_summary_alone_is_reused_not_resummarised() -> None:
    summ = _Counting()
    cm = SummarizingConversation(keep_turns=2, summarizer=summ)
    block = summary_block(3, "ticket SEC-88213")
    past = [block, user("a " * 200), asst("b " * 200), user("c " * 200), asst("d " * 200)]
    out = cm.manage_history(past, 10)
    assert summ.inputs == []  # no summarizer call
    assert out == past and out[0] is block
    d = cm.last_decision
    assert d is not None and d.action == "reused" and not d.summarizer_called
    assert d.summary_text == "ticket SEC-88213" and d.compressed_turns == 3 and d.folded == []
    # with one more turn there is something new to fold: the summarizer runs on block + that turn
    cm.manage_history([*past, user("e " * 200), asst("f")], 10)
    assert len(summ.inputs) == 1 and summ.inputs[0][0] is block and len(summ.inputs[0]) == 3


def test_q23_no_replay_call_summarises_only_a_summary(manifest: object) -> None:
    conv = planted_conversation(4)
    seen: list[list[dict]] = []

    class Spy(StandInSummarizer):
        def summarize(self, messages: list[dict]) -> str:
            seen.append(list(messages))
            return super().summarize(messages)

    compare(manifest, conv.transcript, {"s": strategies(2)["summarising"]}, counter="estimate", summarizer=Spy())
    assert seen
    from inspector.engine.managers.summarising import is_summary_block
    assert not any(all(is_summary_block(m) for m in msgs) for msgs in seen)


def test_bundled_planted_sample_is_the_generator_output() -> None:
    from inspector.transcripts import sample_path

    doc = json.loads(sample_path("planted_facts.json").read_text(encoding="utf-8"))
    assert doc["messages"] == planted_conversation(7, turns=30, facts=9).transcript.messages


# --- cost: the detector reads frames' runs, never expands them (issue 13) ---------------------------

def _reference_not_sent(rp: object, call: int) -> set[int]:
    """Independent expectation: messages before the reply that the expanded payload does not show."""
    f = rp.frames[call]  # type: ignore[attr-defined]
    sent = {r for r in f.refs if r is not None}
    return {i for i in range(min(f.at, len(rp.messages))) if i not in sent}  # type: ignore[attr-defined]


def test_not_sent_reasons_cover_exactly_the_messages_the_expanded_payload_omits(manifest: object) -> None:
    from inspector.forgetting import not_sent_reasons

    conv = planted_conversation(1, turns=30)
    for name, rp in compare(manifest, conv.transcript, strategies(), counter="estimate",
                            summarizer="stand-in").items():
        for k in range(len(rp.frames)):
            assert set(not_sent_reasons(rp, k)) == _reference_not_sent(rp, k), (name, k)


def test_forgetting_never_expands_a_frames_payload_runs(manifest: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Operation count, not time: expanding ``Frame.refs`` per call is what made the analysis
    quadratic (every frame holds the whole history run). The detector must answer from the runs."""
    from inspector.replay import Frame

    conv = planted_conversation(2, turns=30)
    replays = compare(manifest, conv.transcript, strategies(), counter="estimate", summarizer="stand-in")
    expected = {name: [c.forgotten for c in call_needs(rp)] for name, rp in replays.items()}
    expanded = [0]
    original = Frame.refs

    def counting(self: Frame) -> list[int | None]:
        out = original.fget(self)  # type: ignore[attr-defined]
        expanded[0] += len(out)
        return out

    monkeypatch.setattr(Frame, "refs", property(counting))
    # the counter itself works: one expansion of a long frame counts its rows
    rp = replays["stack"]
    assert len(rp.frames[-1].refs) == expanded[0] > 0
    expanded[0] = 0
    for name, rp in replays.items():
        assert [c.forgotten for c in call_needs(rp)] == expected[name]
    assert expanded[0] == 0
