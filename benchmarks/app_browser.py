"""How fast the app feels in a real browser: first meaningful render and Next-click settle time.

Serves app.py on 127.0.0.1 as ``context-inspector app`` does, drives Debian's headless Chromium with playwright's
Python client (never ``playwright install``) and prints, measured in this one run:

* **first meaningful render** — from the moment the server answers ``/_stcore/health`` to the demo's
  call 0 being on screen with its timeline drawn;
* **Next-click settle** — from a click on "Next ▶" to the page showing the next call with nothing
  stale left (no element greyed out as stale, no script running, the strip under the timeline moved), median
  and p90 over ``--steps`` clicks, on the bundled demo and on a generated 2 000-turn transcript
  (the one of ``benchmarks/app_step.py``, uploaded through the sidebar).

The clock runs inside the page (``performance.now()``, polled every animation frame), so the
figures do not include playwright's round trips. Nothing is asserted; the numbers depend on the
machine (say how busy it was when you quote them).

    .venv/bin/python benchmarks/app_browser.py [--steps 20] [--turns 2000] [--width 1440 --height 900]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from streamlit_server import free_port, served  # noqa: E402  (the tests' server helper)

from inspector.bundled import STREAMLIT_FLAGS  # noqa: E402

CHROMIUM = "/usr/bin/chromium"

# Clicks the button, then waits (one check per animation frame) until the stepper shows call
# `target`, no element is stale, Streamlit's status widget says nothing runs, and the timeline's
# strip under it marks the target (when the app has that strip); then two more frames so the paint is
# included. Returns milliseconds.
SETTLE_JS = """async ([selector, target, cursor]) => {
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const idle = () => {
    if (document.querySelector('[data-stale="true"]')) return false;
    const status = document.querySelector('[data-testid="stStatusWidget"]');
    return !(status && status.textContent.match(/Running|Stop/));
  };
  const settled = () => {
    if (!idle()) return false;
    const pos = document.querySelector('.st-key-call_position');
    if (!pos || !pos.textContent.includes(`call ${target} ·`)) return false;
    const mark = cursor && document.querySelector(cursor);  // an app without the strip: no such check
    return !mark || mark.getAttribute('data-call') === String(target);
  };
  const visible = () => [...document.querySelectorAll(selector)].find(b => b.offsetParent !== null);
  const w0 = performance.now();  // the previous rerun may still be replacing the button: wait for it
  while ((!visible() || !idle()) && performance.now() - w0 < 20000) await frame();
  const btn = visible();
  const t0 = performance.now();
  btn.click();
  await frame();
  while (!settled()) { await frame(); if (performance.now() - t0 > 60000) return -1; }
  await frame(); await frame();
  return performance.now() - t0;
}"""


# Installed before the page loads: records, per animation frame, when each milestone of the first
# render first appears (milliseconds since the navigation started, the page's own clock).
MILESTONES = {
    "title": "h1",
    "stepper on call 0": ".st-key-call_position",
    "band bar": ".st-key-band_bar .ci-seg, .st-key-band_bar .js-plotly-plot .barlayer",
    "payload rows": ".ci-chat",
    "timeline drawn": ".st-key-timeline .js-plotly-plot .barlayer",
}
RECORD_JS = """(() => { const marks = %s; window.__firstSeen = {};
  const poll = () => { for (const [name, sel] of Object.entries(marks))
      if (!(name in window.__firstSeen) && document.querySelector(sel)) window.__firstSeen[name] = performance.now();
    if (Object.keys(window.__firstSeen).length < Object.keys(marks).length) requestAnimationFrame(poll); };
  requestAnimationFrame(poll); })()"""


def wait_call(pg, k: int) -> None:  # noqa: ANN001
    pg.wait_for_function("k => { const p = document.querySelector('.st-key-call_position');"
                         " return p && p.textContent.includes(`call ${k} ·`); }", arg=k)


CURSOR = ".ci-cursor"


def steps(pg, n: int, cursor: str | None = CURSOR) -> list[float]:  # noqa: ANN001
    start = int(pg.evaluate("() => document.querySelector('.st-key-call_position').textContent"
                            ".match(/call (\\d+) ·/)[1]"))
    out = []
    for k in range(n):
        ms = pg.evaluate(SETTLE_JS, [".st-key-next button", start + k + 1, cursor])
        if ms < 0:
            raise TimeoutError(f"step {k + 1} did not settle within 60 s")
        out.append(float(ms))
    return out


def line(label: str, xs: list[float]) -> str:
    s = sorted(xs)
    p90 = s[min(len(s) - 1, round(0.9 * (len(s) - 1)))]
    return f"{label:<46} n={len(s):>3}  median {statistics.median(s):6.0f} ms  p90 {p90:6.0f} ms  max {s[-1]:6.0f} ms"


@contextlib.contextmanager
def serve(script: Path) -> Iterator[tuple[int, float]]:
    """``streamlit run script`` on a free port, served as ``context-inspector app`` serves the app;
    yields (port, seconds until /_stcore/health answered)."""
    port = free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    # This checkout's app is served as `context-inspector app` serves it (its imports done before the
    # server listens); any other script (the trivial page, another checkout's app.py) by plain streamlit.
    ours = script.resolve() == (ROOT / "app.py").resolve()
    cmd = [sys.executable, "-m", *(("inspector.cli.app_server",) if ours else ("streamlit",)), "run", str(script),
           *STREAMLIT_FLAGS, "--server.port", str(port)]
    with served(cmd, port, cwd=ROOT, env=env, out=subprocess.DEVNULL, timeout=120.0) as t_up:
        yield port, t_up


def floor(browser, args: argparse.Namespace) -> None:  # noqa: ANN001
    """The same clicks on ``benchmarks/app_floor.py`` (one button, one line): the best any
    Streamlit app can do here, printed beside the inspector's figures."""
    with serve(ROOT / "benchmarks" / "app_floor.py") as (port, _):
        def opened(query: str = "") -> tuple[Any, float, float]:
            """A fresh page on the floor app: (page, seconds from goto to call 0 shown, goto's clock)."""
            pg = browser.new_page(viewport={"width": args.width, "height": args.height})
            pg.set_default_timeout(180_000)
            t_goto = time.perf_counter()
            pg.goto(f"http://127.0.0.1:{port}/{query}")
            wait_call(pg, 0)
            return pg, time.perf_counter() - t_goto, t_goto

        pg, first, _ = opened()
        steps(pg, 2, cursor=None)
        print(line("reference: trivial Streamlit app, Next-click", steps(pg, args.steps, cursor=None))
              + f"  (first render {first:4.2f} s)")
        pg.close()
        pg, text, t_goto = opened("?plotly=1")
        pg.wait_for_selector(".st-key-floor_chart .js-plotly-plot .barlayer")
        print(f"reference: the same page with one three-bar Plotly chart: text {text:4.2f} s, "
              f"chart drawn {time.perf_counter() - t_goto:4.2f} s after the page was opened")
        pg.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--width", type=int, default=1440)
    ap.add_argument("--height", type=int, default=900)
    ap.add_argument("--view", default="call", help="the view to step in (a key of inspector.vocabulary.VIEW_WORDS)")
    ap.add_argument("--demo-only", action="store_true", help="skip the long generated transcript")
    ap.add_argument("--no-floor", action="store_true", help="skip the trivial reference app")
    ap.add_argument("--app", action="append", type=Path, default=None, metavar="SCRIPT",
                    help="the app script(s) to measure, one after the other in this run (default: this "
                         "checkout's app.py); e.g. another checkout's app.py to compare two versions")
    args = ap.parse_args(argv)

    from playwright.sync_api import sync_playwright

    from app_step import synthetic_transcript

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    with sync_playwright() as pw, tempfile.TemporaryDirectory() as tmp:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        if not args.no_floor:
            floor(browser, args)
        for script in args.app or [ROOT / "app.py"]:
            measure(browser, script, args, Path(tmp), synthetic_transcript)
        browser.close()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end")
    return 0


def measure(browser, script: Path, args: argparse.Namespace, tmp: Path, synthetic_transcript) -> None:  # noqa: ANN001
    """First render, then Next-click settle on the demo and on the long generated transcript."""
    print(f"app: {script}")
    with serve(script) as (port, t_up):
        pg = browser.new_page(viewport={"width": args.width, "height": args.height})
        pg.set_default_timeout(180_000)
        pg.add_init_script(RECORD_JS % json.dumps(MILESTONES))
        t_goto = time.perf_counter()
        pg.goto(f"http://127.0.0.1:{port}/")
        wait_call(pg, 0)
        pg.wait_for_selector(".st-key-timeline .js-plotly-plot .barlayer")
        pg.wait_for_selector(".st-key-band_bar")
        t_first = time.perf_counter()
        print(f"server up after {t_up:5.2f} s; first meaningful render (call 0 with its timeline and band bar) "
              f"{t_first - t_goto:5.2f} s after the page was opened")
        pg.wait_for_function(f"() => Object.keys(window.__firstSeen).length === {len(MILESTONES)}")
        seen = pg.evaluate("() => window.__firstSeen")
        print("  first seen (s after navigation start): "
              + ", ".join(f"{name} {seen[name] / 1000:.2f}" for name in sorted(seen, key=seen.get)))
        if args.view != "call":
            from inspector.vocabulary import VIEW_WORDS

            pg.locator(".st-key-view button", has_text=VIEW_WORDS[args.view]).click()
            pg.wait_for_timeout(1500)
        steps(pg, 2)  # warm the caches of the first steps' views (a user's first clicks)
        print(line(f"Next-click settle, demo (26 calls), view {args.view}", steps(pg, args.steps)))
        if not args.demo_only:
            path = tmp / f"synthetic_{args.turns}.json"
            path.write_bytes(synthetic_transcript(args.turns))
            t0 = time.perf_counter()
            pg.locator("[data-testid=stSidebar] input[type=file]").nth(1).set_input_files(str(path))
            pg.get_by_text(f"{path.name}").first.wait_for()
            pg.wait_for_function("() => (document.body.innerText.match(/([\\d,]+) LLM calls/) || [0, '26'])[1] !== '26'")
            wait_call(pg, 0)
            pg.wait_for_function("() => !document.querySelector('[data-stale=\"true\"]')")
            n = pg.evaluate("() => document.body.innerText.match(/([\\d,]+) LLM calls/)[1]")
            print(f"upload of a {args.turns:,}-turn transcript ({n} calls) replayed and shown in "
                  f"{time.perf_counter() - t0:5.2f} s")
            steps(pg, 2)
            print(line(f"Next-click settle, {args.turns:,} turns", steps(pg, args.steps)))
        pg.close()


if __name__ == "__main__":
    raise SystemExit(main())
