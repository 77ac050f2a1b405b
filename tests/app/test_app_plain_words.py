"""The app says what happened in plain words, and what it says follows what was sent.

AppTest (no browser): every rendered element of every view is read back as text — Markdown,
captions, alerts, headings, metrics, picker options, HTML blocks, table cells and the timeline's
trace names and hover texts — and scanned for the engine's codes. Raw JSON, code blocks, the
manifest's own YAML and the exports are exempt (they are machine text on purpose)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from inspector.app import chat, findings, inputs

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SHARED = inputs.SHARED_TRANSCRIPT_DIR
ENGINE_CODES = ("unchanged-under-budget", "unchanged-too-few-turns", "window-slid", "stack-capped",
                "summarizer-failed", "ask_stripped", "orphan_dropped", "reused_tool_call_id", "truncated_after_tool")
"""The engine's codes: none may appear as text in the app's views."""


def start(transcript: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    if transcript is not None:
        at.selectbox(key="transcript_sample").set_value(transcript).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def unescaped(markdown: str) -> str:
    """Markdown the app escaped to show as plain text, read back as that text."""
    return re.sub(r"\\(.)", r"\1", markdown)


def plotly_words(spec: str) -> list[str]:
    """The words a timeline shows: trace names, hover templates and hover texts (not its numbers)."""
    fig = json.loads(spec)
    out = []
    for trace in fig.get("data", []):
        out += [str(trace.get("name", "")), str(trace.get("hovertemplate", ""))]
        text = trace.get("text")
        out += [str(t) for t in text] if isinstance(text, list) else [str(text or "")]
    out += [str(a.get("text", "")) for a in fig.get("layout", {}).get("annotations", [])]
    return out


def page_text(at: AppTest) -> str:
    """Everything the page shows as words, raw JSON / code / the YAML editor / downloads excepted."""
    parts: list[str] = []
    for group in (at.title, at.header, at.subheader, at.markdown, at.caption, at.info, at.warning, at.error,
                  at.success):
        parts += [unescaped(str(e.value)) for e in group]
    parts += [str(m.label) + " " + str(m.value) for m in at.metric]
    for widget in (*at.selectbox, *at.radio, *at.multiselect):
        parts += [str(widget.label), *map(str, widget.options)]
    parts += [str(e.label) for e in at.expander]
    parts += [str(b.label) for b in at.button]
    parts += [html.unescape(re.sub(r"<[^>]+>", " ", str(h.proto.body))) for h in at.get("html")]
    for df in at.dataframe:
        value = df.value
        if isinstance(value, pd.DataFrame):
            parts += [" ".join(map(str, value.columns)), " ".join(map(str, value.index)),
                      value.astype(str).to_string()]
    for chart in at.get("plotly_chart"):
        parts += plotly_words(chart.proto.spec)
    return "\n".join(parts)


def codes_in(text: str) -> list[str]:
    return [code for code in ENGINE_CODES if code in text]


def interesting_calls(at: AppTest) -> list[int]:
    """A call of every kind of manager action, summary sent or not, and the first call with a repair."""
    rp = at.session_state["_stepped_replay"]
    seen: dict[Any, int] = {}
    for k, f in enumerate(rp.frames):
        seen.setdefault((f.decision.action, f.summary_sent), k)
        if f.repairs:
            seen.setdefault("repair", k)
    return sorted(set(seen.values()))[:8]


def scan(at: AppTest) -> dict[str, list[str]]:
    """Every view (This call, Not sent as rows and as a table, Repairs) at every interesting call, and
    Side by side once: the engine codes found on each."""
    found: dict[str, list[str]] = {}
    for call in interesting_calls(at):
        at.slider(key="call").set_value(call).run() if at.session_state["n_calls"] > 1 else None
        for view in ("call", "not_sent", "repairs"):
            at.segmented_control(key="view").set_value(view).run()
            assert not at.exception, [e.value for e in at.exception]
            found[f"{view} @ call {call}"] = codes_in(page_text(at))
            if view == "not_sent":
                at.segmented_control(key="not_sent_as").set_value("table").run()
                found[f"not_sent table @ call {call}"] = codes_in(page_text(at))
                at.segmented_control(key="not_sent_as").set_value("rows").run()
    at.segmented_control(key="view").set_value("compare").run()
    found["compare"] = codes_in(page_text(at))
    at.segmented_control(key="view").set_value("call").run()
    return {where: codes for where, codes in found.items() if codes}


def test_no_engine_code_appears_as_text_on_the_demo() -> None:
    assert scan(start()) == {}


@pytest.mark.parametrize("name", ["tau-bench/gpt-4o-airline.json", "swe-agent/marshmallow-code__marshmallow-1867.traj"])
def test_no_engine_code_appears_as_text_on_a_shared_transcript(name: str) -> None:
    if not (SHARED / name).exists():
        pytest.skip(f"shared transcript {name} not here")
    assert scan(start(f"shared: {name}")) == {}


def test_the_band_table_lists_no_over_budget_band_and_adds_up_to_what_the_call_asks_for() -> None:
    """Over budget, the overflow is the part past the window line, not a band; the
    shares are of the window, so they add up to (payload + reserve + margin) / window, once."""
    tau2 = "tau2-bench/toolorchestra_airline_gpt-5_1trial.json"
    if not (SHARED / tau2).exists():
        pytest.skip("the shared tau2 transcript (over budget under small-window.yaml) is not here")
    at = start(f"shared: {tau2}")
    at.selectbox(key="manifest_sample").select("small-window.yaml").run()
    rp = at.session_state["_stepped_replay"]
    k = next(k for k, f in enumerate(rp.frames) if f.headroom < 0)
    at.slider(key="call").set_value(k).run()
    f = rp.frames[k]
    table = next(d.value for d in at.dataframe if "% of window" in d.value.columns)
    assert "over budget" not in set(table["band"]) and "headroom" not in set(table["band"])
    asked = f.payload_tokens + f.budget.reserve + f.budget.margin
    assert int(table["tokens"].sum()) == asked == f.budget.window - f.headroom
    assert float(table["% of window"].sum()) == pytest.approx(100.0 * asked / f.budget.window, abs=0.3)


def test_the_context_manager_caption_says_a_trimmed_summary_was_not_sent() -> None:
    at = start()
    rp = at.session_state["_stepped_replay"]
    unsent = [k for k, f in enumerate(rp.frames) if f.decision.action in ("reused", "summarized") and not f.summary_sent]
    if not unsent:
        pytest.skip("the demo sends every summary it computes or reuses")
    at.slider(key="call").set_value(unsent[0]).run()
    text = "\n".join(unescaped(str(c.value)) for c in at.caption)
    assert "trimmed — not sent" in text
    options = at.selectbox(key="jump_kind").options
    assert any(o.startswith("summary trimmed, not sent") and o.endswith(f"({len(unsent)})") for o in options)


def test_every_not_sent_row_says_why_on_its_one_line() -> None:
    """A "Not sent & why" chat row says its reason before it is opened, not only in
    the box inside it."""
    from inspector.manifest import load_manifest
    from inspector.replay import replay
    from inspector.report.tables import not_sent_table
    from inspector.transcripts import load_transcript, sample_path

    rp = replay(load_manifest(ROOT / "sample_manifests" / "small-window.yaml"), load_transcript(sample_path()),
                summarizer="stand-in")
    k = max(range(len(rp.frames)), key=lambda c: len(not_sent_table(rp, c)))
    table = not_sent_table(rp, k)
    page = chat.chat_html(chat.not_sent_rows(rp, k))
    lines = [html.unescape(re.sub(r"<[^>]+>", "", s)) for s in re.findall(r"<summary>(.*?)</summary>", page)]
    assert len(lines) == len(table) > 0
    for line, reason in zip(lines, table["reason"], strict=True):
        assert f"not sent: {reason}" in line


def test_a_long_list_of_findings_stops_at_its_limit_and_says_how_many_are_left() -> None:
    from inspector.manifest import load_manifest
    from inspector.replay import replay
    from inspector.transcripts import load_transcript, sample_path

    rp = replay(load_manifest(ROOT / "sample_manifests" / "small-window.yaml"), load_transcript(sample_path()),
                summarizer="stand-in")
    one = findings.repair_findings(rp)[0]
    most = findings.FINDINGS_MAX
    for n, shown_items in ((most, most), (most + 3, most)):
        page = findings.findings_html(rp, [one] * n, "x-")
        assert page.count("<li><b>") == shown_items
        assert ("3 more are not listed" in page) == (n > findings.FINDINGS_MAX)
