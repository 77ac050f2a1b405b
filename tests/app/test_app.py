"""The Streamlit app under AppTest (no browser): loading, stepping, selection, compare, bad input.

What these guard: the app only presents what the package computed, stepping never replays, and
bad input (YAML, validation, corrupt or oversized transcripts) is shown on the page while the app
keeps working on the last good input — never a traceback.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from inspector.compare import DEFAULT_STRATEGIES, OWN_STRATEGY
from inspector.app import call_facts, editor, exports, inputs, stepping
from inspector.vocabulary import EVENT_WORDS

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SAMPLES = sorted(p.name for p in (ROOT / "sample_manifests").glob("*.yaml"))
DEMO_CALLS = 27  # assistant messages of inspector/samples/demo_support.json


# --- helpers ------------------------------------------------------------------------------------------------

def start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert_healthy(at)
    return at


def assert_healthy(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def charts(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def chart_ids(at: AppTest) -> list[str]:
    return [c.proto.id for c in at.get("plotly_chart")]


def band_bar(at: AppTest) -> str:
    """The band bar's HTML (an ``st.html`` block, not a figure)."""
    return next(h.proto.body for h in at.html if "ci-band-bar" in h.proto.body)


def band_title(at: AppTest) -> str:
    """The band bar's title: 'turn T · step S — N tokens sent'."""
    return html.unescape(band_bar(at).split("class='ci-band-title", 1)[1].split(">", 1)[1].split("</div>", 1)[0])


def strip_call(at: AppTest) -> int:
    """The call the strip under the timeline marks."""
    body = next(h.proto.body for h in at.html if "ci-cursor" in h.proto.body)
    return int(body.split("data-call='", 1)[1].split("'", 1)[0])


def frame_by_columns(at: AppTest, *cols: str) -> pd.DataFrame:
    for df in at.dataframe:
        value = df.value
        if isinstance(value, pd.DataFrame) and all(c in value.columns for c in cols):
            return value
    raise AssertionError(f"no dataframe with columns {cols}")


def why_text(at: AppTest) -> str:
    """The answer to "why did my message disappear?" (the one info box that starts with "Message")."""
    return next(i.value for i in at.info if i.value.startswith("Message "))


def show(at: AppTest, view: str) -> AppTest:
    """Switch the app to one of its views (only the visible view is drawn)."""
    at.segmented_control(key="view").set_value(view).run()
    assert_healthy(at)
    return at


def payload(at: AppTest) -> pd.DataFrame:
    """The payload as a table (the This call view shows chat rows unless switched to the table)."""
    if at.session_state["view"] != "call":
        show(at, "call")
    if at.session_state["payload_as"] != "table":
        at.segmented_control(key="payload_as").set_value("table").run()
    return frame_by_columns(at, "pos", "band", "tokens", "synthetic")


def compare_totals(at: AppTest) -> pd.DataFrame:
    """Side by side's totals (drawn one row per measure, one column per strategy) read back as one
    row per strategy with numbers."""
    if at.session_state["view"] != "compare":
        show(at, "compare")

    def number(cell: str) -> float | None:
        text = str(cell).replace(",", "").replace("$", "").replace("%", "")
        return None if text in ("—", "no price") else float(text)

    shown = next(d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame)
                 and {"tokens sent", "peak payload"} <= set(map(str, d.value.index)))
    out = pd.DataFrame({"strategy": [str(c) for c in shown.columns]})
    for measure, row in shown.iterrows():
        out[str(measure)] = [number(v) for v in row]
    return out


def tau_bench_file(episodes: int = 3) -> bytes:
    """A tiny multi-conversation tau-bench file: episode k has k + 1 user turns."""
    out = []
    for k in range(episodes):
        traj: list[dict[str, Any]] = [{"role": "system", "content": "You are an airline agent."}]
        for i in range(k + 1):
            traj += [{"role": "user", "content": f"episode {k} question {i}"},
                     {"role": "assistant", "content": f"episode {k} answer {i}"}]
        out.append({"task_id": k, "trial": 0, "reward": 1.0, "traj": traj})
    return json.dumps(out).encode()


# --- loading ------------------------------------------------------------------------------------------------

def test_default_view_is_populated() -> None:
    at = start()
    assert errors(at) == []
    assert at.session_state["manifest_sample"] == inputs.DEFAULT_MANIFEST
    assert at.session_state["n_calls"] == DEMO_CALLS and at.session_state["call"] == 0
    ids = chart_ids(at)
    assert any("timeline" in i for i in ids) and "tokens sent" in band_title(at)
    assert len(payload(at)) > 0
    assert list(compare_totals(at)["strategy"]) == list(DEFAULT_STRATEGIES)  # the manifest's own first
    # The summarizer is labelled as the offline stand-in, never passed off as a model.
    assert any("offline stand-in" in c.value for c in at.caption)


@pytest.mark.parametrize("name", SAMPLES)
def test_each_sample_manifest_loads(name: str) -> None:
    at = start()
    at.selectbox(key="manifest_sample").select(name).run()
    assert_healthy(at)
    assert errors(at) == []
    show(at, "manifest")
    assert at.text_area(key="manifest_yaml").value == (ROOT / "sample_manifests" / name).read_text(encoding="utf-8")
    assert at.session_state["n_calls"] == DEMO_CALLS
    show(at, "call")
    assert band_title(at).startswith("turn ")
    at.button(key="next").click().run()
    assert_healthy(at)
    assert at.session_state["call"] == 1


# --- stepping -----------------------------------------------------------------------------------------------

def test_next_and_previous_move_the_call_and_change_the_views() -> None:
    at = start()
    title0, payload0 = band_title(at), payload(at)
    at.button(key="next").click().run()
    at.button(key="next").click().run()
    assert at.session_state["call"] == 2
    assert band_title(at) != title0
    assert not payload(at).equals(payload0)
    assert "call 2 · turn 2 · step 0" in at.subheader[0].value  # the position is shown in the view
    at.button(key="prev").click().run()
    assert at.session_state["call"] == 1
    at.button(key="prev").click().run()
    assert at.session_state["call"] == 0
    at.button(key="prev").click().run()  # at the first call Prev (and ←) stays there
    assert at.session_state["call"] == 0


def test_slider_jumps_to_any_call_and_is_clamped_at_the_end() -> None:
    at = start()
    at.slider(key="call").set_value(DEMO_CALLS - 1).run()
    assert at.session_state["call"] == DEMO_CALLS - 1
    at.button(key="next").click().run()  # at the last call Next (and →) stays there
    assert at.session_state["call"] == DEMO_CALLS - 1
    assert stepping.clamp_call(DEMO_CALLS + 5, DEMO_CALLS) == DEMO_CALLS - 1
    assert stepping.clamp_call(-1, DEMO_CALLS) == 0


def test_stepping_never_replays(monkeypatch: pytest.MonkeyPatch) -> None:
    at = start()
    import inspector.replay as replay_mod

    def boom(*a: Any, **k: Any) -> None:
        raise AssertionError("replay called while stepping")

    monkeypatch.setattr(replay_mod, "replay", boom)
    monkeypatch.setattr("inspector.compare.replay", boom)
    for _ in range(3):
        at.button(key="next").click().run()
        assert_healthy(at)
    at.slider(key="call").set_value(20).run()
    assert_healthy(at)
    assert at.session_state["call"] == 20 and errors(at) == []


def test_timeline_point_selection_jumps_to_that_call() -> None:
    """Drive the chart's real selection channel: a widget state for the timeline's element id,
    shaped like the browser sends it (AppTest has no public setter for chart selections)."""
    at = start()
    chart_id = next(i for i in chart_ids(at) if "timeline" in i)
    states = at._tree.get_widget_states()
    w = states.widgets.add()
    w.id = chart_id
    w.string_value = json.dumps({"selection": {
        "points": [{"x": 7, "y": 300, "curve_number": 0, "point_number": 7, "point_index": 7}],
        "point_indices": [7], "box": [], "lasso": []}})
    at._run(states)
    assert_healthy(at)
    assert at.session_state["call"] == 7
    # The next ordinary rerun (Next) is not pulled back to the selected point.
    at.button(key="next").click().run()
    assert at.session_state["call"] == 8


@pytest.mark.parametrize(("points", "expected"), [
    ([{"x": 4}], 4),                 # a bar of call 4
    ([{"x": 3.5}], 4),               # a commit-fold marker between calls 3 and 4: the call after it
    ([{"x": 2}, {"x": 9}], 9),       # several points: the last one clicked
    ([{"x": 999}], DEMO_CALLS - 1),  # beyond the end: clamped
    ([{"y": 5}], None),              # no x: ignored
    ([], None),
])
def test_call_from_selection(points: list[dict[str, Any]], expected: int | None) -> None:
    assert stepping.call_from_selection({"selection": {"points": points}}, DEMO_CALLS) == expected


# --- compare ------------------------------------------------------------------------------------------------

def test_compare_two_to_four_strategies() -> None:
    at = show(start(), "compare")
    at.multiselect(key="cmp_strategies").set_value(["summarising", "stack"]).run()
    assert_healthy(at)
    assert list(compare_totals(at)["strategy"]) == ["summarising", "stack"]
    keep = frame_by_columns(at, "#", "message", "summarising", "stack")
    assert len(keep) > 1
    # Four, with a pasted context_manager YAML.
    at.multiselect(key="cmp_strategies").set_value(["summarising", "sliding-window", "stack", "custom A"]).run()
    at.text_area(key="cmp_spec_custom A").input("type: sliding-window\nparams:\n  keep_turns: 1\n").run()
    assert_healthy(at)
    totals = compare_totals(at)
    assert list(totals["strategy"]) == ["summarising", "sliding-window", "stack", "custom A"]
    assert totals.set_index("strategy").loc["custom A", "peak payload"] <= \
        totals.set_index("strategy").loc["stack", "peak payload"]
    compare_charts = [c for c in chart_ids(at) if "compare_timeline" in c]
    assert len(compare_charts) == 4
    # One totals table, its measures in words; the narrow charts leave their legend to the main
    # timeline's, which is drawn as wrapping HTML under it (plotly's own legend is off there too).
    tables = [d.value for d in at.dataframe if "tokens sent" in map(str, d.value.index)]
    assert len(tables) == 1 and not [c for c in tables[0].index if "_" in str(c)]
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "compare_timeline" in c.proto.id]
    assert [s["layout"]["showlegend"] for s in specs] == [False] * 4
    assert any("ci-legend-tl" in str(h.proto.body) and "input budget" in str(h.proto.body) for h in at.get("html"))
    # Same y axis on every aligned timeline.
    ranges = {tuple(c["layout"]["yaxis"]["range"]) for c in charts(at) if c["layout"].get("yaxis", {}).get("range")}
    assert len(ranges) == 1
    # Stepping moves the per-call view of every strategy.
    before = frame_by_columns(at, "#", "message", "custom A")
    at.button(key="next").click().run()
    assert not frame_by_columns(at, "#", "message", "custom A").equals(before)


def test_compare_needs_two_and_shows_a_bad_strategy_without_breaking() -> None:
    at = show(start(), "compare")
    at.multiselect(key="cmp_strategies").set_value(["stack"]).run()
    assert any("at least two" in i.value for i in at.info)
    at.multiselect(key="cmp_strategies").set_value(["stack", "custom A", "custom B"]).run()
    at.text_area(key="cmp_spec_custom B").input("type: no-such-manager\n").run()
    assert_healthy(at)
    assert any("custom B" in e for e in errors(at))
    assert list(compare_totals(at)["strategy"]) == ["stack", "custom A"]


# --- bad manifests ------------------------------------------------------------------------------------------

def test_invalid_manifest_shows_the_field_path_and_recovers() -> None:
    at = show(start(), "manifest")
    good = str(at.text_area(key="manifest_yaml").value)
    bad = good.replace("keep_turns: 2", "keep_turns: -2")  # support-demo.yaml
    assert bad != good
    at.text_area(key="manifest_yaml").input(bad).run()
    assert_healthy(at)
    errs = " ".join(errors(at))
    assert "spec.context_manager.params.keep_turns" in errs
    assert at.session_state["n_calls"] == DEMO_CALLS  # still showing the last valid manifest
    assert at.session_state["view"] == "manifest"  # the view stays on the editor
    show(at, "call")
    at.button(key="next").click().run()
    assert at.session_state["call"] == 1
    # A valid edit is picked up: the window follows the manifest.
    show(at, "manifest")
    at.text_area(key="manifest_yaml").input(good.replace("context_window: 7200", "context_window: 9000")).run()
    assert errors(at) == []
    show(at, "call")
    assert any(m.value == "9,000" for m in at.metric)


def test_yaml_syntax_error_names_the_line() -> None:
    at = show(start(), "manifest")
    at.text_area(key="manifest_yaml").input("apiVersion: mas/v1\nkind: Agent\nspec: [unclosed\n").run()
    assert_healthy(at)
    errs = " ".join(errors(at))
    assert f"{inputs.DEFAULT_MANIFEST}:3" in errs or f"{inputs.DEFAULT_MANIFEST}:4" in errs  # FILE:LINE
    assert len(payload(at)) > 0  # the views still show the last valid manifest


def test_unreadable_manifest_upload_is_reported() -> None:
    at = start()
    at.file_uploader(key="manifest_upload").set_value(("bin.yaml", b"\xff\xfe\x00garbage", "application/x-yaml")).run()
    assert_healthy(at)
    assert any("not UTF-8" in e for e in errors(at))
    at.file_uploader(key="manifest_upload").set_value(
        ("mine.yaml", (ROOT / "sample_manifests" / "stack.yaml").read_bytes(), "application/x-yaml")).run()
    assert errors(at) == []
    show(at, "manifest")
    assert "type: stack" in str(at.text_area(key="manifest_yaml").value)


# --- transcripts --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "data", "needle"), [
    ("broken.json", b'{"messages": [{"role": "user", "content": "hi"}', "broken.json"),
    ("notes.txt", b"this is not a transcript at all", "notes.txt"),
    ("bad-role.json", json.dumps({"messages": [{"role": "user", "content": 5}]}).encode(), "bad-role.json"),
])
def test_broken_transcript_upload_shows_an_error_and_keeps_the_app_usable(name: str, data: bytes, needle: str) -> None:
    at = start()
    at.file_uploader(key="transcript_upload").set_value((name, data, "application/json")).run()
    assert_healthy(at)
    assert any(needle in e for e in errors(at)), errors(at)
    assert at.session_state["n_calls"] == DEMO_CALLS  # still the demo transcript
    at.button(key="next").click().run()
    assert_healthy(at)
    assert at.session_state["call"] == 1
    at.file_uploader(key="transcript_upload").set_value(None).run()
    assert errors(at) == []


def test_oversized_transcript_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "MAX_TRANSCRIPT_BYTES", 1_000)
    at = start()  # the bundled demo (32 KB) is over the lowered limit too: the app says so, no traceback
    assert any("too large" in e for e in errors(at))
    monkeypatch.setattr(inputs, "MAX_TRANSCRIPT_BYTES", 50_000_000)
    at.run()
    assert errors(at) == []
    monkeypatch.setattr(inputs, "MAX_TRANSCRIPT_BYTES", 40_000)
    at.run()  # the uploader's own size cap follows the limit (a new widget): render it first
    big = json.dumps({"messages": [{"role": "user", "content": "x" * 50_000}]}).encode()
    at.file_uploader(key="transcript_upload").set_value(("big.json", big, "application/json")).run()
    assert_healthy(at)
    assert any("too large" in e and "big.json" in e for e in errors(at))
    assert at.session_state["n_calls"] == DEMO_CALLS


def test_anthropic_upload_and_format_choice() -> None:
    at = start()
    data = (ROOT / "inspector" / "samples" / "demo_support.anthropic.json").read_bytes()
    at.file_uploader(key="transcript_upload").set_value(("demo.anthropic.json", data, "application/json")).run()
    assert_healthy(at)
    assert errors(at) == []
    assert at.session_state["n_calls"] == DEMO_CALLS
    assert any("anthropic" in c.value for c in at.caption)
    at.selectbox(key="transcript_format").select("tau-bench").run()  # a wrong explicit format
    assert_healthy(at)
    assert errors(at)
    at.selectbox(key="transcript_format").select("auto-detect").run()
    assert errors(at) == []


def test_conversation_picker_for_multi_conversation_files() -> None:
    at = start()
    at.file_uploader(key="transcript_upload").set_value(("runs.json", tau_bench_file(3), "application/json")).run()
    assert_healthy(at)
    picker = at.selectbox(key="conversation")
    assert len(picker.options) == 3
    assert at.session_state["n_calls"] == 1
    picker.select(2).run()
    assert at.session_state["n_calls"] == 3


@pytest.mark.parametrize("name", [n for n in inputs.sample_transcripts() if n.startswith("shared: ")] or
                         [pytest.param("shared", marks=pytest.mark.skip(reason="../shared/data/transcripts absent"))])
def test_shared_real_transcripts_are_offered_and_load(name: str) -> None:
    at = start()
    at.selectbox(key="transcript_sample").select(name).run()
    assert_healthy(at)
    assert errors(at) == []
    assert at.session_state["n_calls"] > 0
    at.button(key="next").click().run()
    assert_healthy(at)


def test_transcript_content_is_never_rendered_as_markdown_or_html() -> None:
    at = start()
    evil = "**bold** <img src=x onerror=alert(1)> [link](http://example.com) :red[red]"
    data = json.dumps({"messages": [{"role": "user", "content": evil},
                                    {"role": "assistant", "content": evil}]}).encode()
    at.file_uploader(key="transcript_upload").set_value(("evil **name**.json", data, "application/json")).run()
    assert_healthy(at)
    for el in [*at.markdown, *at.caption, *at.info, *at.error, *at.warning, *at.subheader]:
        assert "<img" not in el.value and "**bold**" not in el.value
    chat = [e.proto.body for e in at.get("html") if "ci-chat" in e.proto.body]
    assert chat and all("<img" not in b for b in chat)  # chat rows: escaped text, never markup
    assert any(html.escape(evil) in b for b in chat)
    show(at, "not_sent")
    at.number_input(key="why_index").set_value(0).run()
    assert any(evil in str(c.value) for c in at.code)  # shown as text in a code block


def test_secrets_in_transcripts_are_masked_in_every_view() -> None:
    at = start()
    key = "sk-proj-AbCdEfGhIjKlMnOpQrStUv123456"
    data = json.dumps({"messages": [{"role": "user", "content": f"my key is {key}, please debug"},
                                    {"role": "assistant", "content": "Never paste keys."}]}).encode()
    at.file_uploader(key="transcript_upload").set_value(("leak.json", data, "application/json")).run()
    shown = [e.proto.body for e in at.get("html")]
    show(at, "not_sent")
    at.number_input(key="why_index").set_value(0).run()
    assert_healthy(at)
    shown += [str(c.value) for c in at.code] + [df.value.to_csv() for df in at.dataframe
                                                if isinstance(df.value, pd.DataFrame)]
    assert any("sk-proj-" in x and "****" in x for x in shown)  # the message is shown, its key masked
    assert not any(key in x for x in shown)


# --- counters, summarizer modes, explanations, export -------------------------------------------------------

def test_estimate_counter_warns_about_under_counting() -> None:
    at = start()
    at.radio(key="counter").set_value("estimate").run()
    at.slider(key="call").set_value(3).run()
    assert_healthy(at)
    notes = [x.value for x in [*at.info, *at.warning, *at.error]]
    assert any("under-counts" in n for n in notes), notes


def test_live_summarizer_asks_for_a_hidden_key_and_calls_the_model_only_when_applied(llm: Any) -> None:
    at = start()
    at.radio(key="summarizer").set_value("live").run()
    assert_healthy(at)
    assert not llm.requests  # choosing "live" alone calls nothing: the stand-in stays until Apply
    assert any("offline stand-in" in c.value for c in at.caption)
    key_input = at.text_input(key="live_key")
    assert key_input.proto.type == key_input.proto.PASSWORD
    at.text_input(key="live_model").input("openai/test-model")
    at.text_input(key="live_base").input(llm.api_base)
    at.text_input(key="live_key").input("sk-secret-123")
    at.button(key="live_apply").click().run()
    assert_healthy(at)
    assert errors(at) == []
    assert llm.requests, "the live summarizer never called the model"
    page = " ".join(str(getattr(e, "value", "")) for e in [*at.markdown, *at.caption, *at.code, *at.text])
    assert "sk-secret-123" not in page
    assert not any("offline stand-in" in c.value for c in at.caption if "summarizer" in c.value)
    at.slider(key="call").set_value(15).run()
    assert any("SUMMARY: the user asked things" in str(c.value) for c in at.code)  # the model's summary


def test_summary_block_text_is_shown() -> None:
    at = start()
    at.slider(key="call").set_value(15).run()
    assert any("offline stand-in summary" in str(c.value) for c in at.code)


def test_why_did_my_message_disappear() -> None:
    at = start()
    at.slider(key="call").set_value(15).run()
    show(at, "not_sent")
    at.number_input(key="why_index").set_value(1).run()
    text = why_text(at)
    assert text.startswith("Message 1 is not sent") and "summar" in text
    at.number_input(key="why_index").set_value(54).run()
    assert "after this call" in why_text(at)


def test_repairs_are_said_in_words_and_linked_to_their_messages() -> None:
    from inspector.vocabulary import REPAIR_WORDS

    at = start()
    rp = at.session_state["_stepped_replay"]
    k = next(k for k, f in enumerate(rp.frames) if any(r.repair.kind == "ask_stripped" for r in f.repairs))
    at.slider(key="call").set_value(k).run()
    show(at, "repairs")
    blocks = [str(h.proto.body) for h in at.get("html") if "ci-findings" in str(h.proto.body)]
    assert blocks, "the repairs are drawn as sentences"
    here = blocks[0]
    assert html.escape(REPAIR_WORDS["ask_stripped"]) in here and "ask_stripped" not in here
    links = re.findall(r"href='#(rep-call-msg-\d+)'", here)
    assert links and all(f"id='{a}'" in here for a in links)  # every link opens its message on the page
    for code in ("tool_call_id", "new_id", "None"):
        assert code not in re.sub(r"<[^>]+>", " ", here)


def test_exports() -> None:
    at = show(start(), "export")
    assert len(at.get("download_button")) == 3
    from inspector.manifest import load_manifest
    from inspector.replay import replay
    from inspector.transcripts import load_transcript, sample_path

    rp = replay(load_manifest(ROOT / "sample_manifests" / "small-window.yaml"), load_transcript(sample_path()),
                summarizer="stand-in")
    assert len(json.loads(exports.frames_json(rp))["frames"]) == DEMO_CALLS
    assert exports.frames_csv(rp).count("\n") == DEMO_CALLS + 1
    doc = json.loads(exports.payload_json(rp, 3))
    assert doc["call"] == 3 and len(doc["payload"]) == doc["messages"]


@pytest.mark.parametrize(("counter", "call", "level"), [
    ("estimate", 0, None),         # the estimate over-counts this short call: nothing to say
    ("estimate", 1, "info"),       # under-counts, but the real count still fits the input budget
    ("estimate", 3, "warning"),    # the real count eats into the safety margin
    ("estimate", 6, "error"),      # real count + completion reserve exceed the window
    ("tiktoken", 6, None),         # the real tokenizer is the reference: no check
])
def test_estimate_check_levels(counter: str, call: int, level: str | None) -> None:
    from inspector.manifest import load_manifest_text
    from inspector.replay import replay
    from inspector.transcripts import load_transcript, sample_path

    from inspector.bundled import unmarked

    # small-window.yaml as the user's own agent (no sample marker, Q25): its prompt and tools are sent
    text = unmarked((ROOT / "sample_manifests" / "small-window.yaml").read_text(encoding="utf-8"))
    rp = replay(load_manifest_text(text),  # small-window.yaml: a 4 000-token window
                load_transcript(sample_path()), counter=counter, summarizer="stand-in")
    check = call_facts.estimate_check(rp, call)
    assert (check[0] if check else None) == level


def test_this_call_shows_calibration_against_provider_usage() -> None:
    from inspector.calibration import calibrate
    from inspector.transcripts import load_transcript, sample_path

    path = sample_path("demo_calls.openai-log.jsonl")
    expected = calibrate(load_transcript(path)).calls.iloc[0]
    at = start()
    at.file_uploader(key="transcript_upload").set_value((path.name, path.read_bytes(), "application/json")).run()
    assert_healthy(at)
    assert errors(at) == []
    table = next(df.value for df in at.dataframe if "error vs provider" in list(df.value.columns))
    assert table["tokens"].tolist()[:3] == [expected["provider_tokens"], expected["tiktoken"], expected["estimate"]]
    assert table["error vs provider"].tolist()[1] == expected["tiktoken_error"]
    # the fitted line first; the offset (3) is far below half the median call: the factor is offered
    assert any("fitted line provider" in c.value and "correction factor" in c.value for c in at.caption)


def test_a_claude_code_log_states_its_unrecorded_prefix_and_the_switch_adds_it() -> None:
    from inspector.transcripts import sample_path

    path = sample_path("demo_session.claude-code.jsonl")
    at = start()
    at.file_uploader(key="transcript_upload").set_value((path.name, path.read_bytes(), "application/json")).run()
    assert_healthy(at)
    said = [w.value for w in at.warning if "unrecorded prefix" in w.value]
    assert said and "15,860" in said[0] and "NOT in this budget" in said[0]
    assert any("Do not apply the factor" in c.value for c in at.caption)  # offset 15 860 > half of 15 967
    band = band_bar(at)
    assert "unrecorded prefix (estimated)" not in band
    at.sidebar.radio(key="prefix_choice").set_value("auto").run()
    assert_healthy(at)
    assert any("15,860 tokens added to the budget" in i.value for i in at.info)
    assert "unrecorded prefix (estimated)" in band_bar(at)


def test_this_call_notes_an_observed_compaction() -> None:
    from inspector.transcripts import sample_path

    path = sample_path("demo_session.claude-code.jsonl")
    at = start()
    at.file_uploader(key="transcript_upload").set_value((path.name, path.read_bytes(), "application/json")).run()
    assert_healthy(at)
    assert errors(at) == []
    at.session_state["call"] = at.session_state["n_calls"] - 1
    at.run()
    assert any("Observed compaction" in i.value for i in at.info)


# --- forgotten references and the fleet view --------------------------------------------------------------------------

def message_text(rp_messages: list[dict[str, Any]], index: int) -> str:
    return json.dumps(rp_messages[index], ensure_ascii=False)


def test_this_call_lists_forgotten_references_marks_the_timeline_and_links_the_message() -> None:
    at = start()
    # the demo's call 24 needs the account id for its resync_mobile_app call; the rolling summary dropped it
    # and message 22 (the booking re-read of turn 4) is the newest message holding it
    at.slider(key="call").set_value(24).run()
    lost = frame_by_columns(at, "identifier", "transcript #", "why not sent")
    assert "AUR-5521904" in set(lost["identifier"])
    # Independent check of every row: the named message holds the identifier, and it is not sent.
    demo = json.loads((ROOT / "inspector" / "samples" / "demo_support.json").read_text(encoding="utf-8"))
    msgs = [m for m in demo["messages"]] if isinstance(demo, dict) else demo
    sent = {int(r) for r in payload(at)["ref"] if str(r).isdigit()}  # "—": a row the engine wrote
    for ident, idx in zip(lost["identifier"], lost["transcript #"], strict=True):
        assert int(idx) not in sent
        assert ident in message_text(msgs, int(idx))
    # The timeline marks the calls that forgot something, this one among them.
    name = EVENT_WORDS["forgotten"]
    timeline_spec = next(c for c in charts(at) if any(t.get("name") == name for t in c["data"]))
    marked = next(t for t in timeline_spec["data"] if t.get("name") == name)
    assert 24 in marked["x"] and 0 not in marked["x"]
    # The link: pick the message and ask why — "Not sent & why" explains that very message.
    at.selectbox(key="forgotten_pick").select(22).run()
    at.button(key="forgotten_explain").click().run()
    assert_healthy(at)
    assert at.session_state["why_index"] == 22
    assert any(i.value.startswith("Message 22 is not sent") and "summar" in i.value for i in at.info)


def test_fleet_view_summarises_every_conversation_like_the_cli(tmp_path: Path) -> None:
    import subprocess
    import sys

    data = tau_bench_file(4)
    at = start()
    at.file_uploader(key="transcript_upload").set_value(("tau.json", data, "application/json")).run()
    show(at, "compare")
    at.multiselect(key="cmp_strategies").set_value(["summarising", "stack"]).run()
    show(at, "fleet")
    at.button(key="fleet_go").click().run()
    assert_healthy(at)
    assert errors(at) == []
    summary = frame_by_columns(at, "strategy", "convs", "peak payload")
    assert list(summary["strategy"]) == ["summarising", "stack"]
    assert list(summary["convs"]) == [4, 4]
    # The same numbers as `context-inspector compare --conversation all` on that file.
    path = tmp_path / "tau.json"
    path.write_bytes(data)
    manifest = ROOT / "sample_manifests" / inputs.DEFAULT_MANIFEST
    out = subprocess.run([sys.executable, "-m", "inspector", "compare", str(manifest), str(path), "--conversation",
                          "all", "--strategy", "summarising=summarising", "--strategy", "stack=stack",
                          "--format", "json"], capture_output=True, text=True, check=True, cwd=ROOT)
    cli = pd.DataFrame(json.loads(out.stdout)["fleet"])
    for col, heading in (("conversations", "convs"), ("peak_payload", "peak payload"), ("trimmed", "trimmed")):
        assert list(cli[col]) == list(summary[heading]), col
    # Extra uploads join the fleet.
    extra = json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]})
    at.file_uploader(key="fleet_uploads").set_value([("one.json", extra.encode(), "application/json")]).run()
    at.button(key="fleet_go").click().run()
    assert list(frame_by_columns(at, "strategy", "convs")["convs"]) == [5, 5]


# --- stepping by event, the editor, side by side ----------------------------------------------------

def test_jump_to_next_and_previous_event_lands_on_the_calls_the_replay_records() -> None:
    from inspector.manifest import load_manifest
    from inspector.replay import replay
    from inspector.transcripts import load_transcript, sample_path

    rp = replay(load_manifest(ROOT / "sample_manifests" / inputs.DEFAULT_MANIFEST), load_transcript(sample_path()),
                summarizer="stand-in")
    repaired = [k for k, f in enumerate(rp.frames) if f.repairs]  # independent of the app's event index
    assert len(repaired) >= 2
    at = start()
    at.selectbox(key="jump_kind").select("repair").run()
    at.button(key="jump_next").click().run()
    assert at.session_state["call"] == repaired[0]
    at.button(key="jump_next").click().run()
    assert at.session_state["call"] == repaired[1]
    at.button(key="jump_prev").click().run()
    assert at.session_state["call"] == repaired[0]
    at.slider(key="call").set_value(DEMO_CALLS - 1).run()
    assert at.button(key="jump_next").disabled == (repaired[-1] <= DEMO_CALLS - 1)


def test_the_editor_stays_on_screen_and_marks_the_error_line() -> None:
    at = show(start(), "manifest")
    good = str(at.text_area(key="manifest_yaml").value)
    lines = good.splitlines()
    n = next(k for k, line in enumerate(lines, 1) if "keep_turns:" in line)
    at.text_area(key="manifest_yaml").input(good.replace("keep_turns: 2", "keep_turns: -2")).run()
    assert at.session_state["view"] == "manifest" and at.text_area(key="manifest_yaml")
    excerpt = next(str(c.value) for c in at.code if "│" in str(c.value))
    marked = [line for line in excerpt.splitlines() if line.startswith("▶")]
    assert len(marked) == 1
    number, text = marked[0].lstrip("▶").split("│", 1)
    assert int(number) == n and text.strip() == lines[n - 1].strip().replace("keep_turns: 2", "keep_turns: -2")
    at.text_area(key="manifest_yaml").input(good).run()  # fixed: still on the editor, no excerpt
    assert at.session_state["view"] == "manifest" and errors(at) == []
    assert not any("│" in str(c.value) for c in at.code)


def test_error_excerpt_numbers_and_marks_lines() -> None:
    text = "\n".join(f"line {k}" for k in range(1, 21))
    out = editor.error_excerpt(text, [10], context=1).splitlines()
    assert out == ["   9 │ line 9", "▶ 10 │ line 10", "  11 │ line 11"]


def test_side_by_side_puts_strategies_in_columns_and_shows_only_differences() -> None:
    at = start()  # the demo under its own manifest: the manifest's strategy first, then two presets
    show(at, "compare")
    at.slider(key="call").set_value(DEMO_CALLS - 1).run()
    assert len([c for c in chart_ids(at) if "compare_timeline" in c]) == 3
    at.toggle(key="keep_diff").set_value(True).run()
    diff = frame_by_columns(at, "#", "differs", OWN_STRATEGY, "stack")
    assert len(diff) > 0 and diff["differs"].all()
    for _, row in diff.iterrows():  # each shown row really is treated differently
        assert len({row[OWN_STRATEGY], row["sliding-window"], row["stack"]}) > 1
    assert any("not sent\\:" in c.value for c in at.caption)  # each strategy's reason for what it left out


def timeline_spec(at: AppTest) -> dict[str, Any]:
    return next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "timeline" in c.proto.id)


def test_a_step_leaves_the_timeline_figure_as_it_was_and_moves_only_the_strip_under_it() -> None:
    """The timeline carries no cursor: a step sends the same figure (the browser test checks it is not
    even redrawn) and the strip under it marks the new call. ``layout.datarevision`` still changes
    with the data (another counter, other numbers), so plotly.js never keeps stale traces."""
    at = start()
    before = timeline_spec(at)
    assert strip_call(at) == 0
    at.button(key="next").click().run()
    after = timeline_spec(at)
    assert after == before and not before["layout"].get("shapes")
    assert strip_call(at) == 1 and at.session_state["call"] == 1
    at.radio(key="counter").set_value("estimate").run()
    other = timeline_spec(at)
    assert other["data"] != before["data"]
    assert other["layout"]["datarevision"] != before["layout"]["datarevision"]


def test_editor_gutter_numbers_every_line_and_marks_only_the_error_lines() -> None:
    import re
    from urllib.parse import unquote

    text = "kind: Agent\nspec:\n  context_manager:\n    params: {keep_turns: -2}\n"
    svg = editor.editor_gutter_svg(text, [4, 99])  # 99: past the end, ignored
    labels = re.findall(r">(▶ )?(\d+)</text>", svg)
    assert [int(n) for _, n in labels] == list(range(1, text.count("\n") + 2))  # the empty last line too
    assert [int(n) for mark, n in labels if mark] == [4]
    assert svg.count('class="error"') == 1
    tops = [int(y) for y in re.findall(r'class="error" x="0" y="(\d+)"', svg)]
    assert tops == [editor.EDITOR_PAD_PX + 3 * editor.EDITOR_LINE_PX]  # the band sits on line 4 of the grid
    assert "keep_turns" not in svg  # numbers only, never the text
    css = editor.editor_css("manifest_yaml", text, [4])
    assert ".st-key-manifest_yaml textarea" in css and f"line-height: {editor.EDITOR_LINE_PX}px" in css
    assert unquote(css.split("data:image/svg+xml,", 1)[1].split('")', 1)[0]) == svg


def test_the_budget_caption_says_no_model_was_named_in_words_not_none() -> None:
    """A transcript and a manifest that name no model: the call's facts say "none named" (the caption
    read "Model None" before), and a named model is said by its name."""
    from inspector.manifest import settings_from_dict
    from inspector.replay import replay
    from inspector.transcripts.api import parse_transcript

    t = parse_transcript(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                                  {"role": "assistant", "content": "hello"}]}))
    unnamed = replay(settings_from_dict({"kind": "Agent", "spec": {}}), t, counter="estimate")
    assert call_facts.budget_facts(unnamed, 0)["model"] == "none named"
    named = replay(settings_from_dict({"kind": "Agent", "spec": {"models": [{"model": "gpt-4o"}]}}), t,
                   counter="estimate")
    assert call_facts.budget_facts(named, 0)["model"] == "gpt-4o"
