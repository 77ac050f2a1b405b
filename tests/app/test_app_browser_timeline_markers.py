"""Every event of a long replay is drawn on the app's timeline, in a real browser.

The timeline of a long conversation leaves out what is never seen (the invisible markers that carry a
click are not drawn: ``marker.maxdisplayed``); this guards that no event marker goes with them. The
events are counted from the replay itself (its frames, commits, forgetting analysis and cache
account), the markers from the SVG elements plotly drew in the page, trace by trace.

Uses Debian's chromium (never ``playwright install``); skips when it is missing outside CI.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from streamlit_server import free_port, served

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason="/usr/bin/chromium is not installed"),
]


def eventful_transcript(turns: int) -> bytes:
    """``turns`` user turns with a tool round every third turn (4 calls per 3 turns), long tool
    results, and every 60th user message too long for a 4 000-token window: under
    ``small-window.yaml`` the replay trims, goes over budget, computes summaries it cannot send,
    folds at commits and breaks the prompt cache."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a support assistant."}]
    for i in range(turns):
        big = " ".join(f"detail{i}-{k}" for k in range(1500)) if i % 60 == 59 else ""
        msgs.append({"role": "user", "content": f"Turn {i}: where is order A-{i}? {big}"})
        if i % 3 == 0:
            cid = f"call_{i}"
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function",
                 "function": {"name": "lookup_order", "arguments": json.dumps({"order_id": f"A-{i}"})}}]})
            msgs.append({"role": "tool", "tool_call_id": cid, "content": json.dumps(
                {"order": f"A-{i}", "events": [f"scan {k} at hub {i}" for k in range(40)]})})
        msgs.append({"role": "assistant", "content": f"Order A-{i} is in transit; it was scanned at hub {i}."})
    return json.dumps({"messages": msgs}).encode()


def events_in(rp: Any) -> dict[str, int]:
    """How many calls (folds: commits) carry each kind of event, by the timeline's words for it,
    read from the replay: the frames' decisions, trims, repairs and headroom, the commits, the
    forgetting analysis and the prompt-cache account."""
    from inspector.forgetting import forgotten_references
    from inspector.report import cache_view
    from inspector.vocabulary import EVENT_WORDS, TIMELINE_WORDS, summary_event

    frames = rp.frames
    turns = {f.turn for f in frames}
    decided = Counter(summary_event(f.decision.action, f.summary_sent) or f.decision.action for f in frames)
    out = {EVENT_WORDS[e]: n for e, n in decided.items() if e in EVENT_WORDS}
    out[EVENT_WORDS["fold"]] = sum(1 for c in rp.commits if c.action != "unchanged" and c.turn in turns)
    out[EVENT_WORDS["trimmed"]] = sum(1 for f in frames if sum(b - a for a, b in f.trimmed) + f.trimmed_synthetic)
    out[EVENT_WORDS["repair"]] = sum(1 for f in frames if f.repairs)
    out[TIMELINE_WORDS["over_budget"]] = sum(1 for f in frames if f.headroom < 0)
    out[EVENT_WORDS["forgotten"]] = sum(1 for lost in forgotten_references(rp) if lost)
    out[cache_view.BREAK_WORDS] = len(cache_view.break_calls(rp))
    return out


# Per trace of the timeline as plotly drew it: its name and how many marker elements it holds.
DRAWN_JS = """() => document.querySelector('.st-key-timeline .js-plotly-plot').calcdata
  .map(cd => [cd[0].trace.name, cd[0].node3 ? cd[0].node3.selectAll('path.point').size() : -1])"""


def test_every_event_the_replay_holds_is_drawn_as_a_marker_on_a_long_timeline(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    from inspector.app.first_page import prepare_first_page
    from inspector.bundled import app_command, app_launch
    from inspector.report.figures import TIMELINE_BAR_MAX
    from inspector.vocabulary import EVENT_WORDS, TIMELINE_WORDS

    path = tmp_path / "eventful.json"
    path.write_bytes(eventful_transcript(330))
    manifest = ROOT / "sample_manifests" / "small-window.yaml"
    # The replay the server prepares for its first page (the same function, the same launch options).
    rp = prepare_first_page(app_launch(["--transcript", str(path), "--manifest", str(manifest)]))
    assert rp is not None and len(rp.frames) > TIMELINE_BAR_MAX  # the long timeline: stepped areas
    expected = events_in(rp)
    for kind in ("fold", "trimmed", "summary_not_sent"):
        assert expected[EVENT_WORDS[kind]] > 0, f"the transcript was built to have {kind} events"
    assert expected[TIMELINE_WORDS["over_budget"]] > 0

    port = free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with served([*app_command(transcript=str(path), manifest=str(manifest), port=port),
                 "--server.fileWatcherType", "none"], port, cwd=ROOT, env=env, timeout=180.0), \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            pg = browser.new_page(viewport={"width": 1440, "height": 900})
            pg.set_default_timeout(120_000)
            pg.goto(f"http://127.0.0.1:{port}/")
            pg.wait_for_function("() => { const p = document.querySelector('.st-key-call_position');"
                                 " return p && p.textContent.includes('call 0 ·'); }")
            pg.wait_for_selector(".st-key-timeline .js-plotly-plot .scatterlayer .trace")
            pg.wait_for_timeout(500)
            drawn = pg.evaluate(DRAWN_JS)
        finally:
            browser.close()
    per_trace = dict(drawn)
    assert len(per_trace) == len(drawn), "two traces share a name"
    for name, n in expected.items():
        assert per_trace.get(name, 0) == n, f"{name}: {n} in the replay, {per_trace.get(name, 0)} drawn"
    # The invisible markers that carry a click (on the last budget line) are not drawn.
    assert 0 <= per_trace[TIMELINE_WORDS["ceiling"]] <= 1
