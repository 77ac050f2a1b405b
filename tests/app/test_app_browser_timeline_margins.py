"""The timeline's margins are set to what plotly's automatic margins make of them, in a real browser.

Streamlit's chart theme turns ``automargin`` on for the x axis: plotly draws every trace, measures
the call numbers and the axis title, widens the margins and draws every trace again. The app sets
the margins plotly arrives at before the first draw (:func:`inspector.app.timeline.app_timeline_margins`),
so the second draw is skipped. This holds the shortcut to the general path: the chart's plot area is
the one plotly computes from the old margins (drawn again in the same page, same width, same
theme), and plotly's margin check never drew it again (on the old margins it does: checked). Two lengths: one whose last call number sticks out past the plot (the right margin
widened), one whose last tick lies well inside it.

Uses Debian's chromium (never ``playwright install``); skips when it is missing outside CI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from streamlit_server import free_port, served
from test_app_browser import CHROMIUM, LAUNCH_ARGS

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason="/usr/bin/chromium is not installed"),
]

# The app's chart's plot area, and the one plotly computes for the same figure from the margins the
# app set before (bottom 36, right 12) in a fresh div of the same width; and whether plotly's margin
# check ever drew the app's chart again (it keeps a count of those draws on the layout from the
# first one on, kept across the chart's later updates).
SIZES_JS = """async () => {
  const gd = document.querySelector('.st-key-timeline .js-plotly-plot');
  const ref = document.createElement('div'); document.body.appendChild(ref);
  const layout = {...gd.layout, margin: {...gd.layout.margin, b: 36, r: 12}};
  await Plotly.newPlot(ref, gd.data, layout);
  const pick = s => ({l: s.l, r: s.r, t: s.t, b: s.b, w: s.w, h: s.h});
  const out = {app: pick(gd._fullLayout._size), general: pick(ref._fullLayout._size),
               preset: {b: gd.layout.margin.b, r: gd.layout.margin.r},
               redrawn: '_redrawFromAutoMarginCount' in gd._fullLayout};
  Plotly.purge(ref); ref.remove(); return out; }"""


def chat_transcript(turns: int) -> bytes:
    """``turns`` user messages each answered once: one LLM call per turn."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a support assistant."}]
    for i in range(turns):
        msgs.append({"role": "user", "content": f"Turn {i}: where is order A-{i}?"})
        msgs.append({"role": "assistant", "content": f"Order A-{i} is in transit."})
    return json.dumps({"messages": msgs}).encode()


@pytest.mark.parametrize("turns", [1001, 1100])
def test_the_timeline_margins_are_plotlys_and_need_no_second_draw(tmp_path: Path, turns: int) -> None:
    from playwright.sync_api import sync_playwright

    from inspector.app.first_page import prepare_first_page
    from inspector.app.timeline import app_timeline_margins
    from inspector.bundled import app_command, app_launch
    from inspector.report.figures import TIMELINE_MARGIN

    path = tmp_path / "chat.json"
    path.write_bytes(chat_transcript(turns))
    rp = prepare_first_page(app_launch(["--transcript", str(path)]))
    assert rp is not None and len(rp.frames) == turns
    # 1 001 calls: the tick "1000" sits 0.6 calls from the right end and sticks out; 1 100: well inside.
    assert (app_timeline_margins(turns)["r"] > TIMELINE_MARGIN["r"]) == (turns == 1001)

    port = free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with served([*app_command(transcript=str(path), port=port), "--server.fileWatcherType", "none"], port,
                cwd=ROOT, env=env, timeout=180.0), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1440, "height": 900})
            pg.set_default_timeout(120_000)
            pg.goto(f"http://127.0.0.1:{port}/")
            pg.wait_for_function("() => { const p = document.querySelector('.st-key-call_position');"
                                 " return p && p.textContent.includes('call 0 ·'); }")
            pg.wait_for_selector(".st-key-timeline .js-plotly-plot .scatterlayer .trace")
            pg.wait_for_timeout(1000)
            sizes = pg.evaluate(SIZES_JS)
        finally:
            browser.close()
    assert sizes["app"] == sizes["general"], "the plot area moved"
    assert not sizes["redrawn"], "plotly widened the margins and drew the timeline again"
    assert sizes["preset"] == app_timeline_margins(turns)
