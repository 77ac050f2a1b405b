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
from inspector.forgetting import call_needs, forgotten_references
from inspector.replay_document import replay_document
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


_RULE_CHARS = st.lists(st.sampled_from(list('aZk_1907-./@:"`“”#$€ %GBmsh\n') + ["https://", ".py", " GB", "li@acme.org", "SEC-88213", "14:30",
                                                                 "snake_case", "camelCase", "/srv/a/b"]),
                       max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_RULE_CHARS, st.text(max_size=120)))
def test_a_rule_skipped_for_a_text_could_not_have_matched_it(text: str) -> None:
    """Each rule's scan is skipped when the text lacks a character all of the rule's matches hold;
    the skip must never hide a match (the guard is a necessary condition of the pattern)."""
    from inspector.engine.identifiers import _GUARDS, _RULES

    for kind, rx in _RULES:
        if rx.search(text) is not None:
            assert _GUARDS[kind](text), (kind, text)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_RULE_CHARS, st.text(max_size=120), st.text(alphabet="aZ٣é1 ", max_size=20)))
def test_the_fast_guards_answer_as_their_patterns(text: str) -> None:
    """The digit guard (substring searches, the regex only for non-ASCII text) is ``\\d`` found; the
    capital guard (an ASCII text differs from its lower case) is ``[A-Z]`` found."""
    import re

    from inspector.engine.identifiers import _has_ascii_upper, _has_digit

    assert _has_digit(text) == (re.search(r"\d", text) is not None)
    assert _has_ascii_upper(text) == (re.search(r"[A-Z]", text) is not None)


_ASCII = st.one_of(_RULE_CHARS.filter(str.isascii), st.text(alphabet=st.characters(max_codepoint=127), max_size=120),
                   st.sampled_from(["order refund status", "Error at step", "a://b", "x.y", "RetryBudget", "_", "7"]))
_ANY = st.one_of(_ASCII, _RULE_CHARS, st.text(max_size=120), st.text(alphabet="aZ٣é1 “…\ud800:", max_size=20),
                 st.sampled_from(["order refund status…", "price ٣ items", "“quoted” words", "café\udcff", "SEC-1…"]))


@settings(max_examples=500, deadline=None)
@given(_ANY)
def test_a_texts_guards_read_from_its_guard_characters_answer_as_each_guard(text: str) -> None:
    """One byte translation keeps a text's ASCII guard characters (a non-ASCII text's ``“`` and
    non-ASCII digits are looked for among its non-ASCII characters); every guard read so answers as
    the guard asked of the whole text, and a text with none of them (None) passes no guard, so no
    rule is run on it."""
    from inspector.engine.identifiers import _GUARDS, _guards

    has = _guards(text)
    if has is None:
        assert not any(guard(text) for guard in _GUARDS.values()), text
    else:
        assert has == {kind: guard(text) for kind, guard in _GUARDS.items()}, text


def test_a_text_with_no_guard_character_is_not_scanned_by_any_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lower-case prose (the bulk of a tool result) holds none of ``:@/."`_``, a digit or a capital:
    no rule's pattern is run over it, ASCII or not (the stand-in's cut sentences end ``…``); one
    capital letter makes the word rule run."""
    import inspector.engine.identifiers as identifiers

    ran: list[str] = []

    class Spy:
        def __init__(self, kind: str, rx: object) -> None:
            self.kind, self.rx = kind, rx

        def finditer(self, text: str) -> object:
            ran.append(self.kind)
            return self.rx.finditer(text)  # type: ignore[attr-defined]

    monkeypatch.setattr(identifiers, "_RULES", tuple((k, Spy(k, rx)) for k, rx in identifiers._RULES))
    asked: list[str] = []  # the guards are read from one pass over the text, never asked one by one
    monkeypatch.setattr(identifiers, "_GUARDS", {k: (lambda t, k=k: asked.append(k) or True) for k in identifiers._GUARDS})
    assert extract_identifiers("order refund status, carrier label " * 50) == [] and ran == []
    assert extract_identifiers("order refund status, carrier label…") == [] and ran == []  # non-ASCII too
    assert extract_identifiers("order Refund status") == [] and ran == ["word"]
    assert extract_identifiers("Order Refund “st” ٣…") == [] and ran == ["word", "quoted", "quantity", "id", "word"]
    assert asked == []


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
    # one named reason per case, from the rule: a sliding window of 4 turns writes turn u out of the
    # log at the commit of turn u + 4, so a holder from turn u reads "dropped at the commit of turn u+4"
    for x in (x for fr in lists for x in fr):
        u = sum(1 for m in rp.messages[:x["message"] + 1] if m.get("role") == "user")
        assert x["reason"] == f"dropped at the commit of turn {u + 4} (the stored history keeps the newest turns)", x
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


def test_standin_size_target_drops_tool_traffic_before_what_the_user_said() -> None:
    """The drop order under the size target, by hand. The fold's text is 23 + 21 + 13 + 3 x 20 + 21 =
    138 characters = 34 tokens; each kept line costs len(sentence) + 3: decision-only 20 + 3 = 23,
    tool results 33 + 3 = 36 each, the agent's 28 + 3 = 31 each, the user's 29 + 3 = 32: 225 in all.
    Over the target (tokens x 4 characters) the lowest rank goes first, the oldest first within a rank."""
    msgs = [user("My ticket is SEC-88213."), asst("Checked case LK0001X."), asst("I will check."),
            {"role": "tool", "tool_call_id": "c1", "content": "Found order OR0001Z."},
            {"role": "tool", "tool_call_id": "c2", "content": "Found order OR0002Z."},
            {"role": "tool", "tool_call_id": "c3", "content": "Found order OR0003Z."},
            asst("Checked case LK0002X.")]
    u, a1, a2 = "user: My ticket is SEC-88213.", "agent: Checked case LK0001X.", "agent: Checked case LK0002X."
    t1, t2, t3 = (f"tool result: Found order OR000{i}Z." for i in (1, 2, 3))
    assert [len(x) for x in (u, a1, t1, "agent: I will check.")] == [29, 28, 33, 20]

    def kept(cap: int) -> list[str]:
        return [ln[2:] for ln in StandInSummarizer(cap=cap).summarize(msgs).splitlines() if ln.startswith("- ")]

    # the default target: the floor (256) is above the fold, so the fold itself: 34 tokens = 136 characters;
    # 225 - 23 (decision-only) - 36 (t1) - 36 (t2) = 130 fits
    assert StandInSummarizer().target(msgs) == 34
    assert kept(20_000) == [u, a1, t3, a2]
    assert kept(33) == [u, a1, t3, a2]  # 132 characters: 130 still fits
    assert kept(32) == [u, a1, a2]  # 128: the last tool line goes, 94 left
    assert kept(23) == [u, a2]  # 92: then the agent's, oldest first: 63
    assert kept(15) == [u]  # 60: 32 left; what the user said goes last
    assert kept(7) == []  # 28


def test_summarising_keeps_planted_facts_that_the_window_forgets(manifest: object) -> None:
    conv = planted_conversation(0)
    rps = compare(manifest, conv.transcript, strategies(4), counter="estimate", summarizer="stand-in")
    lost = {k: {x.identifier for calls in forgotten_references(rp) for x in calls} for k, rp in rps.items()}
    planted = {f.text for f in conv.facts}
    assert lost["sliding-window"] & planted
    # the stand-in's folds here hold 115 to 443 tokens, so its target is the fold itself, then the floor
    # (256 tokens = 1 024 characters); over it, it drops decision-only lines, tool traffic and the agent's
    # words first. The nine planted facts are the user's, one line each (31 to 89 characters, under 650
    # in all): they always fit, so summarising loses no planted fact at all
    assert lost["summarising"] & planted == set()


def test_heavy_compression_makes_the_standin_lose_the_oldest_planted_facts(manifest: object) -> None:
    """Under a cap of 120 tokens (480 characters) the user's fact lines no longer fit. The fold that
    first holds seven of them (65 + 44 + 69 + 53 + 89 + 88 + 83 = 491 characters, the agent's lines
    dropped already) is 11 over: the oldest, SEC-43936 (planted at message 9), goes first; the two
    next-oldest facts (#W6088743 at 13, the email at 17) go as the last two facts arrive. The later six
    stay (19:30 and 51 GB are also restated after the folds)."""
    conv = planted_conversation(0)
    rps = compare(manifest, conv.transcript, {"s": strategies(4)["summarising"]}, counter="estimate",
                  summarizer=StandInSummarizer(cap=120))
    lost = {x.identifier for calls in forgotten_references(rps["s"]) for x in calls}
    planted = {f.text: f.planted_at for f in conv.facts}
    assert {k: planted[k] for k in lost & set(planted)} == \
        {"SEC-43936": 9, "#W6088743": 13, "priya.lindqvist@example.com": 17}


# --- Q23 ------------------------------------------------------------------------------------------

class _Counting:
    model = "m"
    model_source = "test"

    def __init__(self) -> None:
        self.inputs: list[list[dict]] = []

    def summarize(self, msgs: list[dict]) -> str:
        self.inputs.append(list(msgs))
        return "new summary"


def test_a_previous_summary_alone_is_reused_not_resummarised() -> None:
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


def test_no_replay_call_summarises_only_a_summary(manifest: object) -> None:
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


# --- cost: the detector reads frames' runs, never expands them ---------------------------

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


# --- the detector's rules on hand-built conversations (each fails under a one-line bug) ---

def _transcript(msgs: list[dict], tools: list | None = None) -> object:
    from inspector.transcripts.model import Transcript

    return Transcript(format="synthetic", path=None, messages=msgs, origins=[str(i) for i in range(len(msgs))],
                      tools=tools, model="gpt-4o", usage={}, irregularities=[])


def _settings(cm: dict, system_prompt: str | None = None) -> object:
    from inspector.manifest import settings_from_dict

    spec: dict = {"context_manager": cm, "models": [{"model": "gpt-4o", "context_window": 128_000}]}
    if system_prompt is not None:
        spec["system_prompt"] = system_prompt
    return settings_from_dict({"kind": "Agent", "spec": spec})


WINDOW_1 = {"type": "sliding-window", "params": {"keep_turns": 1}}
_LOOKUP_TOOL = [{"type": "function", "function": {"name": "lookup_order_status", "description": "Order status.",
                                                  "parameters": {"type": "object", "properties": {}}}}]


def _tool_name_conversation() -> list[dict]:
    """Turn 1 calls ``lookup_order_status``; turns 2-3 never name it; the last reply does. Under a
    one-turn window the ask (message 1) is dropped by the last call, so only the schema shows it."""
    from tests.builders import ask, tool

    return [user("Please check the order."), ask("c1", name="lookup_order_status"), tool("c1", "shipped"),
            asst("It shipped."), user("thanks"), asst("welcome"), user("Run it once more."),
            asst("Ran lookup_order_status again.")]


@pytest.mark.parametrize("with_schema", [True, False])
def test_a_tool_schema_is_visible_text_so_a_tool_name_is_never_forgotten(with_schema: bool) -> None:
    from inspector.replay import replay

    rp = replay(_settings(WINDOW_1), _transcript(_tool_name_conversation(), _LOOKUP_TOOL if with_schema else None),
                counter="estimate")
    last = call_needs(rp)[-1]
    assert rp.frames[last.call].at == 7 and 1 not in rp.frames[last.call].refs  # the ask is not sent
    assert (last.needed, last.earlier) == (1, 1)  # the reply needs it, message 1 held it
    got = [(x.identifier, x.message, x.reason) for x in last.forgotten]
    if with_schema:  # the model still sees the name in the tool schemas it is sent
        assert got == []
    else:  # the control: without the schema the same name is a loss
        assert got == [("lookup_order_status", 1, "dropped at the commit of turn 2 (the stored history keeps the newest turns)")]


def test_a_system_message_the_system_band_replaces_is_never_the_holder() -> None:
    """Message 0 (the transcript's system text) is the only earlier holder of ``ESC-40417``; the
    manifest's system prompt replaces it (``system="manifest"``). That is the agent's configuration,
    not a loss of this setting: held earlier (counted), never reported."""
    from inspector.replay import replay

    msgs = [{"role": "system", "content": "Escalation code ESC-40417 applies."}, user("hello"), asst("hi"),
            user("Apply the escalation code now."), asst("Code ESC-40417 applied.")]
    rp = replay(_settings({"type": "stack"}, system_prompt="You are a helper."), _transcript(msgs),
                counter="estimate", system="manifest")
    last = call_needs(rp)[-1]
    assert rp.frames[last.call].at == 4 and 0 not in rp.frames[last.call].refs
    assert (last.needed, last.earlier, last.forgotten) == (1, 1, [])


def test_the_reported_holder_is_the_newest_message_not_sent() -> None:
    """``SEC-88213`` is held by messages 0 and 1 (turn 1), both out of a one-turn window by turn 4:
    the holder named is message 1, the newer, dropped at the commit of turn 2."""
    from inspector.replay import replay

    msgs = [user("My ticket is SEC-88213."), asst("Noted SEC-88213."), user("a"), asst("b"), user("c"), asst("d"),
            user("what next?"), asst("Closing SEC-88213.")]
    rp = replay(_settings(WINDOW_1), _transcript(msgs), counter="estimate")
    lost = [(x.call, x.identifier, x.needed_in, x.message, x.reason) for c in call_needs(rp) for x in c.forgotten]
    assert lost == [(3, "SEC-88213", ("next_reply",), 1, "dropped at the commit of turn 2 (the stored history keeps the newest turns)")]


# --- the words follow what was sent --------------------------------------------------------

def test_a_message_summarised_into_a_summary_that_was_trimmed_says_it_was_not_sent() -> None:
    """The demo under support-demo.yaml (keep_turns 2): the commit of turn 3 folds turn 1 into a
    summary; in turn 4 the history crosses the trigger at call 8 and the summary is reused and sent,
    at call 9 the trimmer cuts it."""
    from inspector.forgetting import not_sent_reasons
    from inspector.replay import replay
    from inspector.transcripts import load_transcript, sample_path

    rp = replay(load_manifest("sample_manifests/support-demo.yaml"),
                load_transcript(sample_path("demo_support.json")), counter="tiktoken")
    assert [(k, f.summary_sent) for k, f in enumerate(rp.frames) if f.decision.action == "reused"] == \
        [(8, True), (9, False)]
    assert not_sent_reasons(rp, 9)[1] == ("summarised at the commit of turn 3 (the stored history keeps the newest turns); "
                                          "the summary was trimmed for budget — not sent")
    assert not_sent_reasons(rp, 8)[1] == "summarised at the commit of turn 3 (the stored history keeps the newest turns)"
    for k in range(len(rp.frames)):
        for reason in not_sent_reasons(rp, k).values():
            assert ("not sent" in reason) == (reason.startswith("summarised") and not rp.frames[k].summary_sent), (k, reason)


@pytest.mark.parametrize(("action", "sent", "expected"), [
    ("reused", True, "summarised (reused summary, hysteresis)"),
    ("reused", False, "summarised into the reused summary (hysteresis), which was trimmed for budget — not sent"),
    ("summarized", True, "summarised into the summary block (this call)"),
    ("summarized", False, "summarised into this call's summary block, which was trimmed for budget — not sent"),
])
def test_a_message_folded_in_the_call_names_the_summary_only_if_it_was_sent(action: str, sent: bool,
                                                                          expected: str) -> None:
    """One frame rewritten to each case: message 0 folded by the manager in this call, the summary
    block sent (a ``summary`` segment) or trimmed (listed in ``not_sent``, as Q18 records it)."""
    import dataclasses

    from inspector.forgetting import not_sent_reasons
    from inspector.replay import replay

    msgs = [user("My ticket is SEC-88213."), asst("Noted."), user("next"), asst("ok")]
    rp = replay(_settings({"type": "stack"}), _transcript(msgs), counter="estimate")
    f = rp.frames[-1]
    block = {"role": "user", "content": "summary"}
    segs = (((None, 1, "summary", "summary", block),) if sent else ()) + ((2, 1, "user", None, None),)
    rp.frames[-1] = dataclasses.replace(
        f, decision=f.decision._replace(action=action), folded=((0, 2),), segments=segs,
        not_sent=() if sent else ({"kind": "summary", "reason": "trimmed", "tokens": 5, "content": "summary"},))
    assert rp.frames[-1].summary_sent is sent
    assert not_sent_reasons(rp, len(rp.frames) - 1) == {0: expected, 1: expected}


# --- cost: linear in the transcript: operation counts, not times ------------------------

def _one_long_turn(rounds: int) -> list[dict]:
    """One user message, then ``rounds`` tool rounds (an ask with one argument, its result)."""
    from tests.builders import ask, tool

    msgs = [user("fix the failing test")]
    for i in range(rounds):
        msgs += [ask(f"c{i}", name="bash", args=json.dumps({"cmd": f"ls dir{i}"})),
                 tool(f"c{i}", f"file_{i}.py changed by step {i}")]
    return [*msgs, asst("done")]


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    import inspector.forgetting_index as forgetting_index

    reads = [0]
    original = forgetting_index.message_parts

    def counting(msg: dict) -> object:
        reads[0] += 1
        return original(msg)

    monkeypatch.setattr(forgetting_index, "message_parts", counting)
    return reads


@pytest.mark.parametrize("window", [128_000, 1_500])  # the turn fits / the trimmer cuts it every call
def test_forgetting_reads_each_message_once_and_extracts_each_use_once(window: int,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Each message's text is read once; the extractor runs once per message for its full text, once
    more for the text of a reply that has tool calls, and once per string argument value (one here).
    The previous detector re-extracted the whole working memory at every call (rounds² calls)."""
    from inspector.replay import replay
    from inspector.manifest import settings_from_dict

    msgs = _one_long_turn(120)
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": "stack"},
                                                       "models": [{"model": "gpt-4o", "context_window": window}]}})
    rp = replay(s, _transcript(msgs), counter="estimate")
    assert len(rp.frames) == 121
    trimmed = sum(1 for f in rp.frames if f.trimmed)
    assert (trimmed > 60) if window < 10_000 else (trimmed == 0)
    expected = call_needs(rp)
    reads = _count_reads(monkeypatch)
    calls = [0]

    def extractor(text: str) -> list:
        calls[0] += 1
        return extract_identifiers(text)

    assert call_needs(rp, extractor) == expected
    asks = sum(1 for m in msgs if m.get("tool_calls"))
    assert reads[0] == len(msgs) == 242
    assert calls[0] <= len(msgs) + asks + asks  # 242 + 120 + 120


def test_forgetting_reads_each_message_once_under_every_strategy(manifest: object,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    conv = planted_conversation(3, turns=30)
    replays = compare(manifest, conv.transcript, strategies(), counter="estimate", summarizer="stand-in")
    reads = _count_reads(monkeypatch)
    for rp in replays.values():
        reads[0] = 0
        call_needs(rp)
        assert reads[0] == len(rp.messages)


def _lines_run(fn: object) -> int:
    """Python lines executed by ``fn()`` (every frame, the extractor and the index included)."""
    import sys

    count = [0]

    def tracer(frame: object, event: str, arg: object) -> object:
        if event == "line":
            count[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()  # type: ignore[operator]
    finally:
        sys.settrace(None)
    return count[0]


@pytest.mark.parametrize("shape", ["many turns", "one long turn"])
def test_forgetting_work_grows_linearly_with_the_transcript(shape: str, manifest: object) -> None:
    """Doubling the transcript at most doubles the work (×2.2 allowed for the planted facts' spread):
    a rescan per identifier, per call or per working-memory row makes this ratio about 4."""
    from inspector.replay import replay
    from inspector.manifest import settings_from_dict

    def build(n: int) -> object:
        if shape == "many turns":
            conv = planted_conversation(5, turns=n)
            return compare(manifest, conv.transcript, {"w": strategies(4)["sliding-window"]}, counter="estimate",
                           summarizer="stand-in")["w"]
        s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": "stack"},
                                                           "models": [{"model": "gpt-4o", "context_window": 128_000}]}})
        return replay(s, _transcript(_one_long_turn(n)), counter="estimate")

    small, big = (build(n) for n in ((20, 40) if shape == "many turns" else (80, 160)))

    def extractor(text: str) -> list:  # not the default: its results are remembered by text
        return extract_identifiers(text)

    ratio = _lines_run(lambda: call_needs(big, extractor)) / _lines_run(lambda: call_needs(small, extractor))
    assert ratio <= 2.2, ratio


# --- the incremental detector equals the rule read plainly, call by call ------------------------------

def _plain_rule(rp: object) -> list[tuple[int, int, list[tuple[str, str, tuple[str, ...], int]]]]:
    """The module docstring's rule with no index and no carried state: per call, every identifier of
    the user message, the working memory and the next reply; held earlier by a message that exists
    (before the turn, or in it and not sent); forgotten if no sent row, synthesised row or tool
    schema shows it, named with the newest not-sent, non-system holder; an identifier needed only
    through the working memory is named once, at the call that loses it, and again only after a
    holder was sent as it is (or none counted as earlier) in between, or when the next reply needs it.
    Quadratic; for small cases."""
    from inspector.engine.identifiers import message_text, tool_call_texts
    from inspector.forgetting import NEEDED_IN

    msgs = rp.messages  # type: ignore[attr-defined]
    texts = [message_text(m).casefold() for m in msgs]
    tools = json.dumps([rp.transcript.tools, getattr(rp.settings, "tools", None)],  # type: ignore[attr-defined]
                       ensure_ascii=False, default=str).casefold()
    out = []
    turn: object = object()
    reach = 0
    reported: set[str] = set()  # WM-only needs named in this turn and lost ever since
    for k, f in enumerate(rp.frames):  # type: ignore[attr-defined]
        users = [i for i in range(min(f.at, len(msgs))) if msgs[i].get("role") == "user"]
        user_at = users[-1] if users and f.turn > 0 else None
        if user_at != turn or min(f.at, len(msgs)) < reach:  # a new turn
            turn, reported, reach = user_at, set(), 0
        reach = max(reach, min(f.at, len(msgs)))
        needs: dict[str, tuple[object, set[str]]] = {}

        def add(idents: object, where: str) -> None:
            for x in idents:  # type: ignore[attr-defined]
                needs.setdefault(x.key, (x, set()))[1].add(where)

        if user_at is not None:
            add(extract_identifiers(message_text(msgs[user_at])), "user")
        for i in range(0 if user_at is None else user_at + 1, min(f.at, len(msgs))):
            if msgs[i].get("role") != "system":
                add(extract_identifiers(message_text(msgs[i])), "working_memory")
        persistent = {key: set(where) for key, (_x, where) in needs.items()}
        if f.at < len(msgs):
            add(extract_identifiers(message_text({a: b for a, b in msgs[f.at].items() if a != "tool_calls"})),
                "next_reply")
            for _, args in tool_call_texts(msgs[f.at]):
                add(argument_identifiers(args), "next_tool_call")
        refs = f.refs
        plain = {r for r, o in zip(refs, [None] * len(refs), strict=True) if r is not None} - \
            {seg[0] for seg in f.segments if seg[4] is not None}
        sent = {r for r in refs if r is not None}
        own = "\n".join([message_text(m).casefold() for m in f.own.values()] + [tools])
        start = user_at or 0
        earlier, lost = 0, []
        for key, (x, where) in needs.items():
            holders = [i for i in range(len(msgs)) if key in texts[i]]
            older = [i for i in holders if i < f.at and (i < start or i not in sent)]
            if not older:
                reported.discard(key)
                continue
            earlier += 1
            if any(i in plain for i in holders):
                reported.discard(key)
                continue
            wm_only = persistent.get(key) == {"working_memory"}
            if key in reported and where == {"working_memory"}:
                continue  # named at the call that lost it
            if key in own:
                continue
            holder = next((i for i in reversed(older) if i not in sent and msgs[i].get("role") != "system"), None)
            if holder is not None:
                if wm_only:
                    reported.add(key)
                lost.append((x.text, x.kind, tuple(w for w in NEEDED_IN if w in where), holder))  # type: ignore[attr-defined]
        out.append((len(needs), earlier, lost))
    return out


def test_the_linear_detector_equals_the_rule_read_plainly(manifest: object) -> None:
    from inspector.manifest import settings_from_dict
    from inspector.replay import replay
    from inspector.transcripts import load_transcript, sample_path

    replays = list(compare(manifest, planted_conversation(6, turns=16).transcript, strategies(3), counter="estimate",
                           summarizer="stand-in").values())
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": "stack"},
                                                       "models": [{"model": "gpt-4o", "context_window": 1_500}]}})
    replays.append(replay(s, _transcript(_one_long_turn(60)), counter="estimate"))  # the turn trimmed every call
    demo = load_transcript(sample_path("demo_support.json"))
    replays.append(replay(load_manifest(MANIFEST), demo, counter="estimate", system="manifest"))
    replays.append(replay(None, demo, counter="estimate"))
    lost_somewhere = 0
    for rp in replays:
        got = [(c.needed, c.earlier, [(x.identifier, x.kind, x.needed_in, x.message) for x in c.forgotten])
               for c in call_needs(rp, lambda t: extract_identifiers(t))]
        assert got == _plain_rule(rp)
        lost_somewhere += any(lost for _n, _e, lost in got)
    assert lost_somewhere >= 3  # the cases exercise the loss path, not only the counts


# --- where a working-memory loss is reported ------------------------------

def _rounds_turn(rounds: int, refs: dict[int, str] | None = None) -> list[dict]:
    """One user message, then ``rounds`` tool rounds: round j asks ``read`` with ``{"path": "file_j.py"}``
    (or ``{"ticket": refs[j]}``) and gets a 400-character result ending ``ticket TCK-(1000+j)``."""
    from tests.builders import ask, tool

    msgs = [user("please fix the build")]
    for j in range(rounds):
        args = {"ticket": refs[j]} if refs and j in refs else {"path": f"file_{j}.py"}
        msgs += [ask(f"c{j}", name="read", args=json.dumps(args)), tool(f"c{j}", "x" * 400 + f" ticket TCK-{1000 + j}")]
    return [*msgs, asst("done")]


def _stack_600() -> object:
    from inspector.manifest import settings_from_dict

    return settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": "stack"},
                                                         "models": [{"model": "gpt-4o", "context_window": 600}]}})


def test_a_working_memory_only_loss_is_reported_once_at_the_call_that_loses_it() -> None:
    """8 rounds, a 600-token window: call k (k ≥ 2) sends the user message and round k−1 only, so it
    trims rows [1, 2k−1) and loses round k−2 (rows 2k−3, 2k−2). Rule: each of round k−2's identifiers
    (``file_{k-2}.py`` in its ask, ``TCK-{1000+k-2}`` in its result) is reported once, at call k.
    Rounds 5 and 7 ask with ``TCK-1001`` instead of a path: round 1's ``TCK-1001`` (row 4) is
    reported at call 3 (lost, WM only), and again at call 5 (the next tool call needs it: holder 4)
    and call 7 (row 11 — round 5's ask — just lost, and the next tool call needs it)."""
    from inspector.replay import replay

    rp = replay(_stack_600(), _transcript(_rounds_turn(8, {5: "TCK-1001", 7: "TCK-1001"})), counter="estimate")
    assert [f.trimmed for f in rp.frames] == [()] * 2 + [((1, 2 * k - 1),) for k in range(2, 9)]
    wm, ntc = ("working_memory",), ("working_memory", "next_tool_call")
    got = [[(x.identifier, x.needed_in, x.message) for x in c.forgotten] for c in call_needs(rp)]
    assert got == [
        [], [],
        [("file_0.py", wm, 1), ("TCK-1000", wm, 2)],
        [("file_1.py", wm, 3), ("TCK-1001", wm, 4)],
        [("file_2.py", wm, 5), ("TCK-1002", wm, 6)],
        [("TCK-1001", ntc, 4), ("file_3.py", wm, 7), ("TCK-1003", wm, 8)],
        [("file_4.py", wm, 9), ("TCK-1004", wm, 10)],
        [("TCK-1001", ntc, 11), ("TCK-1005", wm, 12)],
        [("file_6.py", wm, 13), ("TCK-1006", wm, 14)],
    ]


@pytest.mark.parametrize("rounds", [50, 100])
def test_the_forgetting_answer_grows_linearly_with_the_rounds(rounds: int) -> None:
    """The same shape with n rounds and no references: calls 2..n each lose one round, two
    identifiers: 2(n−1) (call, identifier) pairs (98 / 198), where re-reporting every trimmed round at
    every later call gave 2 + 4 + … + 2(n−1) = n(n−1) (2 450 / 9 900)."""
    from inspector.replay import replay

    rp = replay(_stack_600(), _transcript(_rounds_turn(rounds)), counter="estimate")
    needs = call_needs(rp)
    assert sum(len(c.forgotten) for c in needs) == 2 * (rounds - 1)
    assert [len(c.forgotten) for c in needs] == [0, 0] + [2] * (rounds - 1)


def test_a_call_whose_reply_and_turn_need_nothing_is_not_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index keeps only the replies that hold an identifier (here the reply at index 3 of the
    four messages), and a call with no new need and no candidate builds its answer without judging
    its needs (no ordering of candidates): 2 calls, 1 judged — the one whose reply names SEC-88213,
    which its turn's user message holds and sends (needed 1, earlier 0, nothing lost)."""
    import inspector.forgetting as forgetting
    from inspector.forgetting_index import TranscriptIndex
    from inspector.replay import replay

    msgs = [user("hello there"), asst("fine"), user("ticket SEC-88213 please"), asst("Looking at SEC-88213 now")]
    rp = replay(_settings({"type": "stack"}), _transcript(msgs), counter="estimate")
    assert TranscriptIndex(rp, extract_identifiers, []).reply.keys() == {3}
    judged = [0]

    def counting_sorted(*a: object, **k: object) -> object:
        judged[0] += 1
        return sorted(*a, **k)  # type: ignore[call-overload]

    monkeypatch.setattr(forgetting, "sorted", counting_sorted, raising=False)
    assert [(c.needed, c.earlier, c.forgotten) for c in call_needs(rp)] == [(0, 0, []), (1, 0, [])]
    assert judged[0] == 1


@pytest.mark.parametrize("rounds", [3, 40])
def test_the_default_extractor_reads_one_text_per_digit_shape_that_holds_none(rounds: int,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A text whose digit shape (each digit made 0) an earlier text showed to hold no identifier is
    not extracted (the extractor finds identifiers in a text exactly where it finds them in its
    shape). ``one_turn_asks`` with results "out 000", "out 001", … holds five shapes, however many
    rounds: the user's "fix it", each ask's text "\\nbash {}" (one text), each ask's content "" read
    as a reply, the results (one shape: "out 000") and the last reply "done": five extractions, not
    one per text, and the same answer as a per-text extractor."""
    import inspector.forgetting_index as forgetting_index
    from inspector.replay import replay
    from tests.builders import one_turn_asks, spy

    rp = replay(_settings({"type": "stack"}), _transcript(one_turn_asks(rounds, "out {k:03d}")), counter="estimate")
    plain = call_needs(rp, lambda text: list(extract_identifiers(text)))
    forgetting_index.default_identifiers.cache_clear()
    read = spy(monkeypatch, forgetting_index, "default_identifiers")
    assert call_needs(rp) == plain
    assert sorted(read) == sorted(["fix it", "\nbash {}", "", "out 000", "done"])
