"""The app in a real browser: `streamlit run` on 127.0.0.1, driven by headless Chromium (playwright).

Guards what AppTest cannot see: the page actually renders in a browser, Next and the timeline's
point selection round-trip through the websocket, and the band chart and payload table on screen
change with the call. Saves screenshots to tests/artifacts/ (``UPDATE_DOCS_SCREENSHOT=1`` also
refreshes docs/screenshot.png for the README).

Uses Debian's chromium (never ``playwright install``). Skips only when /usr/bin/chromium is missing
and ``CI`` is not set; in CI a missing browser fails the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit_server import free_port, served

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason="/usr/bin/chromium is not installed (run `make browser` as root); "
                              "in CI this test never skips"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The app served the way ``context-inspector app`` serves it (:func:`inspector.bundled.app_command`)."""
    from inspector.bundled import app_command

    port = free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with (ARTIFACTS / "streamlit.log").open("wb") as out, \
            served([*app_command(port=port), "--server.fileWatcherType", "none"], port, cwd=ROOT, env=env, out=out):
        yield f"http://127.0.0.1:{port}/"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api") if not os.environ.get("CI") else \
        __import__("playwright.sync_api", fromlist=["sync_playwright"])
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            yield b
        finally:
            b.close()


def open_app(browser: Any, server: str, width: int = 1500, height: int = 1100) -> Any:
    """A fresh session (its own context) on the demo, at call 0 with the timeline drawn."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    pg = ctx.new_page()
    pg.set_default_timeout(90_000)
    pg.goto(server)
    wait_for_call(pg, 0)
    pg.wait_for_selector(".st-key-timeline .js-plotly-plot .barlayer")
    return pg


@pytest.fixture()
def page(browser: Any, server: str) -> Iterator[Any]:
    pg = open_app(browser, server)
    try:
        yield pg
    finally:
        pg.context.close()


def demo_replay() -> Any:
    """The demo under the app's default manifest and policy, replayed by the package itself."""
    from inspector.manifest import load_manifest
    from inspector.replay import replay
    from inspector.transcripts import load_transcript, sample_path

    from inspector.app import inputs

    return replay(load_manifest(ROOT / "sample_manifests" / inputs.DEFAULT_MANIFEST), load_transcript(sample_path()),
                  summarizer="stand-in")


# --- what is on screen ----------------------------------------------------------------------------------

def band_title(pg: Any) -> str:
    """The band bar's title ('turn T · step S — N tokens sent')."""
    return str(pg.locator(".st-key-band_bar .ci-band-title").text_content())


def band_labels(pg: Any) -> list[str]:
    """The numbers printed inside the band bar's segments."""
    return pg.locator(".st-key-band_bar .ci-seg").all_text_contents()


# Counts every change under the timeline's chart from now on (window.__timelineMutations).
WATCH_TIMELINE = """() => { window.__timelineMutations = 0;
  new MutationObserver(ms => { window.__timelineMutations += ms.length; })
    .observe(document.querySelector('.st-key-timeline'), {subtree: true, childList: true, attributes: true,
                                                           characterData: true}); }"""


def chat_text(pg: Any) -> str:
    """The payload's chat rows as text."""
    return str(pg.locator(".ci-chat").first.text_content())


# The page is settled when no element is stale and the script is not running: a key pressed or a
# field filled while a rerun is still under way can be overwritten by that rerun (seen on a loaded
# CI machine), which would test the machine's speed rather than the app.
IDLE = ("!document.querySelector('[data-stale=\"true\"]')"
        " && !document.querySelector('[data-testid=stStatusWidgetRunningIcon]')")


def wait_idle(pg: Any) -> None:
    pg.wait_for_function(f"() => {IDLE}")


def wait_for_call(pg: Any, k: int) -> None:
    pg.wait_for_function("k => { const p = document.querySelector('.st-key-call_position');"
                         f" return p && p.textContent.includes(`call ${{k}} ·`) && {IDLE}; }}", arg=k)
    wait_idle(pg)


def current_call(pg: Any) -> int:
    text = str(pg.locator(".st-key-call_position").text_content())
    return int(text.split("call ", 1)[1].split(" ")[0])


def choose_view(pg: Any, view: str) -> None:
    from inspector.vocabulary import VIEW_WORDS

    button = pg.locator(".st-key-view button", has_text=VIEW_WORDS[view])
    button.click()
    # The click is registered when its button turns active; the view is drawn when the rerun has
    # ended. Idle is checked twice, apart, because a loaded machine may start the rerun late.
    pg.wait_for_function("e => e.getAttribute('aria-checked') === 'true'", arg=button.element_handle())
    for _ in range(2):
        pg.wait_for_timeout(400)
        wait_idle(pg)


def shot(pg: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg.wait_for_timeout(600)  # let plotly finish its transition before the picture
    path = ARTIFACTS / name
    pg.screenshot(path=str(path))
    assert path.stat().st_size > 20_000
    if os.environ.get("UPDATE_DOCS_SCREENSHOT"):
        shutil.copyfile(path, ROOT / "docs" / name)
    return path


# --- the tests -----------------------------------------------------------------------------------------------------

def test_step_and_select_in_a_real_browser(page: Any) -> None:
    pg = page
    assert pg.locator(".st-key-timeline .js-plotly-plot").count() == 1
    title0, labels0, chat0 = band_title(pg), band_labels(pg), chat_text(pg)
    assert title0.startswith("turn 1 · step 0")
    assert pg.locator(".ci-cursor").get_attribute("data-call") == "0"

    pg.evaluate(WATCH_TIMELINE)
    pg.locator(".st-key-next button:visible").click()
    wait_for_call(pg, 1)
    pg.wait_for_function("t => document.querySelector('.st-key-band_bar .ci-band-title').textContent !== t",
                         arg=title0)
    assert band_title(pg).startswith("turn 1 · step 1")
    assert band_labels(pg) != labels0
    assert chat_text(pg) != chat0
    assert pg.locator(".ci-cursor").get_attribute("data-call") == "1"  # the strip under the timeline moved
    pg.wait_for_timeout(300)
    assert pg.evaluate("() => window.__timelineMutations") == 0  # the timeline itself was not touched

    # Select a bar of call 15 on the timeline: the app jumps there.
    bar = pg.locator(".st-key-timeline .barlayer .trace.bars").nth(2).locator(".point path").nth(15)
    box = bar.bounding_box()
    assert box is not None
    # Plotly's drag layer sits on top of the bars: click where the bar is, as a user does.
    pg.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    pg.wait_for_timeout(200)
    pg.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_for_call(pg, 15)
    f15 = demo_replay().frames[15]
    assert band_title(pg).startswith(f"turn {f15.turn} · step {f15.step}")
    # The selection dims no call: the figure outlives the steps that follow, and the strip marks the call.
    opacity = "els => els.map(e => getComputedStyle(e).opacity)"
    assert set(pg.eval_on_selector_all(".st-key-timeline .barlayer .point path", opacity)) == {"1"}
    shot(pg, "screenshot.png")


def test_keyboard_steps_forward_and_back(page: Any) -> None:
    pg = page
    pg.locator("h1").first.click()  # focus the page, not a field
    pg.wait_for_timeout(500)
    pg.keyboard.press("ArrowRight")
    wait_for_call(pg, 1)
    pg.keyboard.press("ArrowRight")
    wait_for_call(pg, 2)
    pg.keyboard.press("ArrowLeft")
    wait_for_call(pg, 1)
    assert current_call(pg) == 1


def test_jump_to_next_event_lands_on_that_event(page: Any) -> None:
    pg = page
    rp = demo_replay()
    reused = [k for k, f in enumerate(rp.frames) if f.decision.action == "reused"]
    repaired = [k for k, f in enumerate(rp.frames) if f.repairs]
    assert reused and len(repaired) >= 2
    pg.locator(".st-key-jump_kind").click()
    pg.get_by_role("option", name=re.compile(r"^pairing repair \(")).click()
    pg.wait_for_timeout(300)  # the rerun starts
    wait_idle(pg)
    pg.locator(".st-key-jump_next button:visible").click()
    wait_for_call(pg, repaired[0])
    pg.locator(".st-key-jump_next button:visible").click()
    wait_for_call(pg, repaired[1])
    pg.locator(".st-key-jump_prev button:visible").click()
    wait_for_call(pg, repaired[0])


def test_drill_down_into_a_tool_call_message(page: Any) -> None:
    pg = page
    rp = demo_replay()
    k, pos = next((k, pos) for k, f in enumerate(rp.frames) for pos, m in enumerate(f.payload(rp.messages))
                  if m.get("role") == "assistant" and m.get("tool_calls"))
    call = rp.frames[k].payload(rp.messages)[pos]["tool_calls"][0]
    name, args = call["function"]["name"], json.loads(call["function"]["arguments"])
    for _ in range(k):
        pg.locator(".st-key-next button:visible").click()
        pg.wait_for_timeout(50)
    wait_for_call(pg, k)
    row = pg.locator(".ci-chat details", has_text="assistant").filter(has_text=f"tool call {name}").first
    assert not row.locator("pre").last.is_visible()  # collapsed: one readable line
    # Away from the top edge, where the sticky stepper covers the page.
    row.evaluate("e => e.scrollIntoView({block: 'center'})")
    row.locator("summary").click()
    stepper = pg.locator(".st-key-stepper").bounding_box()  # scrolled down to the row, the stepper stays on screen
    assert stepper is not None and 0 <= stepper["y"] < 200
    args_block = row.locator("pre").last
    args_block.wait_for(state="visible")
    shown = json.loads(str(args_block.text_content()))
    assert shown == args  # the tool call's arguments, in full (the row said `null` before)
    assert name in str(row.text_content())


def test_the_editor_stays_on_screen_through_an_error_and_its_fix(page: Any) -> None:
    pg = page
    choose_view(pg, "manifest")
    box = pg.locator(".st-key-manifest_yaml textarea")
    good = box.input_value()
    box.fill(good.replace("keep_turns: 2", "keep_turns: -2"))
    box.press("Control+Enter")
    pg.get_by_text("spec.context_manager.params.keep_turns").first.wait_for()
    assert box.is_visible()
    assert "▶" in str(pg.locator("[data-testid=stCode]").last.text_content())  # the error line marked
    bad_line = next(k for k, text in enumerate(good.split("\n"), 1) if "keep_turns: 2" in text)
    gutter = gutter_svg(pg)  # the editor itself: every line numbered, the error line marked
    assert f">▶ {bad_line}</text>" in gutter and f">{len(good.split(chr(10)))}</text>" in gutter
    wait_idle(pg)
    box.fill(good)
    box.press("Control+Enter")
    pg.get_by_text("Valid manifest.").wait_for()
    assert box.is_visible() and box.input_value() == good  # still on the editor
    pg.wait_for_function("() => !decodeURIComponent(getComputedStyle(document.querySelector("
                         "'.st-key-manifest_yaml textarea')).backgroundImage).includes('▶')")
    assert f">{bad_line}</text>" in gutter_svg(pg)  # fixed: numbered, no mark
    shot(pg, "screenshot_editor.png")


def gutter_svg(pg: Any) -> str:
    """The line-number gutter the manifest editor shows (its background image), decoded."""
    from urllib.parse import unquote

    bg = pg.evaluate("() => getComputedStyle(document.querySelector('.st-key-manifest_yaml textarea')).backgroundImage")
    return unquote(str(bg))


def test_side_by_side_three_strategies_in_columns(page: Any) -> None:
    pg = page
    choose_view(pg, "compare")
    charts = [pg.locator(f".st-key-compare_timeline_{k} .js-plotly-plot") for k in range(3)]
    for c in charts:
        c.wait_for()
    boxes = [c.bounding_box() for c in charts]
    assert all(b is not None for b in boxes)
    assert abs(boxes[0]["y"] - boxes[1]["y"]) < 5 and abs(boxes[1]["y"] - boxes[2]["y"]) < 5  # one row
    assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]
    pg.locator(".st-key-next button:visible").click()
    wait_for_call(pg, 1)
    # The columns sit under the main timeline: bring them up to the sticky stepper for the picture.
    charts[0].evaluate("e => e.scrollIntoView({block: 'center'})")
    shot(pg, "screenshot_side_by_side.png")


def test_1024x768_nothing_is_cut_off(browser: Any, server: str) -> None:
    pg = open_app(browser, server, 1024, 768)
    try:
        overflow = pg.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        for key in ("prev", "next", "jump_prev", "jump_next"):
            b = pg.locator(f".st-key-{key} button:visible").bounding_box()
            assert b is not None and b["x"] >= 0 and b["x"] + b["width"] <= 1024
        cut = pg.evaluate("""() => [...document.querySelectorAll('.st-key-stepper button, .st-key-stepper button *, [data-testid=stMetricValue], [data-testid=stMetricValue] *')]
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)""")
        assert cut == []
        shot(pg, "screenshot_1024.png")
    finally:
        pg.context.close()


def long_transcript(turns: int) -> bytes:
    """An OpenAI-format conversation of ``turns`` user turns with a tool round every third turn
    (4 LLM calls per 3 turns)."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a support assistant."}]
    for i in range(turns):
        msgs.append({"role": "user", "content": f"Turn {i}: where is order A-{i}?"})
        if i % 3 == 0:
            cid = f"call_{i}"
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"id": i})}}]})
            msgs.append({"role": "tool", "tool_call_id": cid, "content": json.dumps({"order": i, "status": "late"})})
        msgs.append({"role": "assistant", "content": f"Order A-{i} is in transit."})
    return json.dumps({"messages": msgs}).encode()


def test_a_timeline_click_at_over_1000_calls_lands_on_the_call_clicked(page: Any, tmp_path: Path) -> None:
    pg = page
    path = tmp_path / "long_1200.json"
    path.write_bytes(long_transcript(900))
    wait_idle(pg)
    pg.locator("[data-testid=stSidebar] input[type=file]").nth(1).set_input_files(str(path))
    pg.get_by_text(path.name).first.wait_for()
    calls = "() => +((document.body.innerText.match(/([\\d,]+) LLM calls/) || [0, '0'])[1].replace(/,/g, ''))"
    pg.wait_for_function(f"() => ({calls})() >= 1000")  # the upload replayed (the demo has 27 calls)
    wait_for_call(pg, 0)
    n = int(pg.evaluate(calls))
    plot = ".st-key-timeline .js-plotly-plot"
    pg.wait_for_function("n => { const g = document.querySelector('%s');"
                         " return g && g._fullLayout && g._fullLayout.xaxis.range[1] > n - 1; }" % plot, arg=n)
    geo = "() => { const g = document.querySelector('%s'); const r = g.querySelector('.nsewdrag').getBoundingClientRect();" \
          " return {range: g._fullLayout.xaxis.range, x: r.x, y: r.y, w: r.width, h: r.height}; }" % plot
    g = pg.evaluate(geo)
    assert g["range"][1] - g["range"][0] > n * 0.9  # the whole conversation at first

    def px(call: float, g: dict[str, Any]) -> float:
        r0, r1 = g["range"]
        return float(g["x"] + (call - r0) / (r1 - r0) * g["w"])

    # Zoom as a user does: drag a box over roughly calls 600-640 of the plot.
    y = g["y"] + g["h"] * 0.9  # low in the plot: inside the stacked areas of every call
    pg.mouse.move(px(600, g), y)
    pg.mouse.down()
    pg.mouse.move(px(620, g), y, steps=5)
    pg.mouse.move(px(640, g), y, steps=5)
    pg.mouse.up()
    pg.wait_for_function("() => { const r = document.querySelector('%s')._fullLayout.xaxis.range;"
                         " return r[1] - r[0] < 100; }" % plot)
    wait_idle(pg)
    g = pg.evaluate(geo)
    lo, hi = g["range"]
    target = round(lo + (hi - lo) * 0.6)  # a call in the zoomed window, read from plotly's own axis
    pg.mouse.move(px(target, g), y)
    pg.wait_for_timeout(300)
    pg.mouse.click(px(target, g), y)
    wait_for_call(pg, target)
    assert current_call(pg) == target
    assert pg.locator(".ci-cursor").get_attribute("data-call") == str(target)
