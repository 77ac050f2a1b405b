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
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason="/usr/bin/chromium is not installed (run `make browser` as root); "
                              "in CI this test never skips"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early with status {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"streamlit did not answer /_stcore/health on port {port} within {timeout:.0f} s")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    log = (ARTIFACTS / "streamlit.log")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_healthy(port, proc)
            yield f"http://127.0.0.1:{port}/"
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)


@pytest.fixture(scope="module")
def page(server: str) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api") if not os.environ.get("CI") else \
        __import__("playwright.sync_api", fromlist=["sync_playwright"])
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1500, "height": 1100})
            pg.set_default_timeout(60_000)
            pg.goto(server)
            pg.get_by_text("Token budget — call 0 ·").wait_for()
            pg.wait_for_selector(".js-plotly-plot .barlayer")
            yield pg
        finally:
            browser.close()


# --- what is on screen ----------------------------------------------------------------------------------

def slider_value(pg: Any) -> str:
    return str(pg.locator("input[type=range]").first.input_value())


def band_title(pg: Any) -> str:
    """The band bar's title ('turn T · step S — N tokens sent')."""
    titles = pg.locator(".js-plotly-plot .gtitle").all_text_contents()
    return next(t for t in titles if "tokens sent" in t)


def band_labels(pg: Any) -> list[str]:
    """The numbers printed inside the band bar's segments."""
    plots = pg.locator(".js-plotly-plot")
    for k in range(plots.count()):
        if "tokens sent" in (plots.nth(k).locator(".gtitle").all_text_contents() or [""])[0]:
            return plots.nth(k).locator(".bartext").all_text_contents()
    raise AssertionError("no band bar on the page")


PAYLOAD_JS = """() => [...document.querySelectorAll('[data-testid=stDataFrame] table')]
    .map(t => t.textContent).find(t => t.includes('transcript #') && t.includes('band')) || null"""


def payload_text(pg: Any) -> str:
    """Visible cells of the payload table (the data grid keeps an accessible table in the DOM,
    filled once the grid has drawn, hence the wait)."""
    return str(pg.wait_for_function(PAYLOAD_JS).json_value())


def wait_for_call(pg: Any, k: int) -> None:
    pg.get_by_text(f"Token budget — call {k} ·").wait_for()
    pg.wait_for_function("k => { const s = document.querySelector('input[type=range]'); return s && s.value == k; }",
                         arg=str(k))


# --- the test --------------------------------------------------------------------------------------------------------

def test_step_and_select_in_a_real_browser(page: Any) -> None:
    pg = page
    assert slider_value(pg) == "0"
    assert pg.locator(".js-plotly-plot").count() >= 2  # timeline + band bar at least
    title0, labels0, payload0 = band_title(pg), band_labels(pg), payload_text(pg)
    assert title0.startswith("turn 1 · step 0")

    pg.get_by_role("button", name="Next ▶").click()
    wait_for_call(pg, 1)
    pg.wait_for_function("t => ![...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                         ".some(e => e.textContent === t)", arg=title0)
    assert band_title(pg) != title0 and band_title(pg).startswith("turn 1 · step 1")
    assert band_labels(pg) != labels0
    pg.wait_for_function(f"() => ({PAYLOAD_JS})() !== {json.dumps(payload0)}")
    assert payload_text(pg) != payload0

    # Select a bar of call 15 on the timeline (the first chart): the app jumps there.
    timeline = pg.locator(".js-plotly-plot").first
    bar = timeline.locator(".barlayer .trace.bars").nth(2).locator(".point path").nth(15)
    box = bar.bounding_box()
    assert box is not None
    # Plotly's drag layer sits on top of the bars: click where the bar is, as a user does.
    pg.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    pg.wait_for_timeout(200)
    pg.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_for_call(pg, 15)
    assert band_title(pg).startswith("turn 8 · step 0")

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg.wait_for_timeout(500)  # let plotly finish its transition before the picture
    shot = ARTIFACTS / "app.png"
    pg.screenshot(path=str(shot))
    assert shot.stat().st_size > 20_000
    if os.environ.get("UPDATE_DOCS_SCREENSHOT"):
        shutil.copyfile(shot, ROOT / "docs" / "screenshot.png")
    # The app scrolls inside its own container, so a "full page" shot needs a tall window.
    pg.set_viewport_size({"width": 1500, "height": 4000})
    pg.wait_for_timeout(1500)
    pg.screenshot(path=str(ARTIFACTS / "app_tall.png"))
