"""In a real browser, the app tells the truth at a glance, and is readable at 1024×768.

Each test drives the app served as ``context-inspector app`` serves it, in headless Chromium
(Debian's, never ``playwright install``), and checks what a user sees against what the package's
own replay says. Each one failed on an earlier app (the summary words and counts, the
over-budget bar, a failed upload, a manifest picked after an upload, the 1024×768 layout).
Browser tests are CPU-heavy: run this file alone. ``UPDATE_DOCS_SCREENSHOT=1`` refreshes the
screenshots in docs/.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from test_app_browser import (  # noqa: F401 - the module-scoped fixtures are used by name
    CHROMIUM,
    ROOT,
    browser,
    choose_view,
    demo_replay,
    open_app,
    server,
    shot,
    wait_for_call,
    wait_idle,
)

from inspector.app import chat, inputs, words

SHARED = inputs.SHARED_TRANSCRIPT_DIR
TAU = SHARED / "tau-bench" / "gpt-4o-airline.json"
TAU2 = SHARED / "tau2-bench" / "toolorchestra_airline_gpt-5_1trial.json"
SWE = SHARED / "swe-agent" / "marshmallow-code__marshmallow-1867.traj"
SMALL = ROOT / "sample_manifests" / "small-window.yaml"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason="/usr/bin/chromium is not installed (run `make browser` as root); "
                              "in CI this test never skips"),
]


def needs(*paths: Path) -> None:
    for p in paths:
        if not p.exists():
            pytest.skip(f"shared transcript {p.name} not here")


@pytest.fixture()
def page(browser: Any, server: str) -> Any:  # noqa: F811 - the imported fixtures
    pg = open_app(browser, server, 1440, 900)
    try:
        yield pg
    finally:
        pg.context.close()


def package_replay(transcript: Path, manifest: Path | None = SMALL, **policy: Any) -> Any:
    """What the command line replays for this pair (the app must show the same)."""
    from inspector.manifest import load_manifest
    from inspector.replay import replay
    from inspector.transcripts import load_transcript

    return replay(load_manifest(manifest) if manifest else None, load_transcript(transcript), summarizer="stand-in",
                  **policy)


# --- what is on screen ---------------------------------------------------------------------------

def settle(pg: Any) -> None:
    for _ in range(2):
        pg.wait_for_timeout(400)
        wait_idle(pg)


def header(pg: Any) -> str:
    """The header's captions: the manifest, the transcript, the calls and the agent in force."""
    return str(pg.evaluate("""() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stCaptionContainer]')]
        .map(e => e.innerText).filter(t => t.includes('LLM calls') || t.startsWith('agent:')).join('\\n')"""))


def upload_transcript(pg: Any, path: Path) -> None:
    wait_idle(pg)
    pg.locator("[data-testid=stSidebar] input[type=file]").nth(1).set_input_files(str(path))
    settle(pg)


def wait_header(pg: Any, text: str) -> None:
    pg.wait_for_function("""t => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stCaptionContainer]')]
        .some(e => e.innerText.includes(t))""", arg=text)
    settle(pg)


def pick(pg: Any, key: str, option: str) -> None:
    """Choose ``option`` in the selectbox with widget key ``key``."""
    wait_idle(pg)
    pg.locator(f".st-key-{key}").click()
    pg.get_by_role("option", name=option, exact=True).click()
    settle(pg)


def choose_radio(pg: Any, key: str, label: str) -> None:
    pg.locator(f".st-key-{key} label").filter(has_text=re.compile("^" + re.escape(label) + "$")).click()
    settle(pg)


def radio_choice(pg: Any, key: str) -> str:
    return str(pg.evaluate("""k => { const i = document.querySelector(`.st-key-${k} input[type=radio]:checked`);
        return i ? i.closest('label').innerText : ''; }""", key))


def jump_options(pg: Any) -> list[str]:
    pg.locator(".st-key-jump_kind").click()
    options = [str(o) for o in pg.get_by_role("option").all_text_contents()]
    pg.keyboard.press("Escape")
    settle(pg)
    return options


def jump_to(pg: Any, kind_words: str, call: int) -> None:
    """Pick the event kind whose words start the option, then ▶ to its next call (``call``)."""
    option = pg.get_by_role("option", name=re.compile("^" + re.escape(kind_words) + r" \("))
    for _ in range(3):  # a rerun that ends as the list opens closes it again: open it once more
        pg.locator(".st-key-jump_kind").click()
        try:
            option.click(timeout=10_000)
            break
        except Exception:  # noqa: BLE001 - playwright's timeout: try again
            settle(pg)
    settle(pg)
    pg.locator(".st-key-jump_next button:visible").click()
    wait_for_call(pg, call)
    settle(pg)


def timeline_traces(pg: Any) -> dict[str, list[float]]:
    """The timeline's traces as drawn by plotly in the page: name → x of every point."""
    return dict(pg.evaluate("""() => Object.fromEntries(document.querySelector('.st-key-timeline .js-plotly-plot').data
        .map(t => [t.name, Array.from(t.x || [])]))"""))


# --- 1. summary words follow what was sent ------------------------------------------------------------

def test_summary_markers_counts_and_words_follow_what_was_sent(page: Any) -> None:
    """tau-bench under small-window: the manager reuses its summary on calls whose payload holds no
    summary block (trimmed for budget). Picker counts, timeline markers and the context-manager line
    say "not sent" there, never "summary reused"."""
    from inspector.vocabulary import EVENT_WORDS, action_words, summary_event

    needs(TAU)
    rp = package_replay(TAU)
    events = [summary_event(f.decision.action, f.summary_sent) for f in rp.frames]
    sent = [k for k, e in enumerate(events) if e == "reused"]
    unsent = [k for k, e in enumerate(events) if e == "summary_not_sent"]
    assert unsent  # the case of the issue: reused, then trimmed
    pg = page
    pick(pg, "manifest_sample", SMALL.name)
    upload_transcript(pg, TAU)
    wait_header(pg, TAU.name)
    options = jump_options(pg)
    assert f"{EVENT_WORDS['summary_not_sent']} ({len(unsent)})" in options
    assert f"{EVENT_WORDS['reused']} ({len(sent)})" in options
    traces = timeline_traces(pg)
    assert traces[EVENT_WORDS["summary_not_sent"]] == unsent
    assert sorted(traces.get(EVENT_WORDS["reused"], [])) == sent
    jump_to(pg, EVENT_WORDS["summary_not_sent"], unsent[0])
    words = action_words(rp.frames[unsent[0]].decision.action, False)
    assert "not sent" in words
    assert f"context manager: {words}" in pg.locator("[data-testid=stMain]").inner_text()
    shot(pg, "screenshot_summary_not_sent.png")


# --- 2. the over-budget bar ---------------------------------------------------------------------------

def test_the_over_budget_bar_draws_the_overflow_past_the_window_line_once(page: Any) -> None:
    needs(TAU2)
    rp = package_replay(TAU2)
    over = [k for k, f in enumerate(rp.frames) if f.headroom < 0]
    assert over
    k = next((c for c in over if c > 0), over[0])
    f = rp.frames[k]
    pg = page
    pick(pg, "manifest_sample", SMALL.name)
    upload_transcript(pg, TAU2)
    wait_header(pg, TAU2.name)
    if k:
        from inspector.vocabulary import EVENT_WORDS

        jump_to(pg, EVENT_WORDS["over_budget"], k)
    segs = pg.eval_on_selector_all(".st-key-band_bar .ci-seg", """els => els.map(e => [e.dataset.band,
        parseFloat(e.style.width), +e.title.split(': ')[1].split(' tokens')[0].replace(/,/g, '')])""")
    bands = [s[0] for s in segs]
    assert "over budget" not in bands and "headroom" not in bands
    asked = f.payload_tokens + f.budget.reserve + f.budget.margin
    assert sum(s[2] for s in segs) == asked == f.budget.window - f.headroom  # the overflow counted once
    assert sum(s[1] for s in segs) == pytest.approx(100.0, abs=0.05)  # the bar stands for what the call asks
    part = pg.locator(".st-key-band_bar .ci-over-part")
    assert part.count() == 1
    left = float(str(part.get_attribute("style")).split("left:")[1].split("%")[0])
    assert left == pytest.approx(100.0 * f.budget.window / asked, abs=0.01)  # it starts at the window line
    assert f"{-f.headroom:,}" in str(part.get_attribute("title"))
    pg.locator(".st-key-band_bar").scroll_into_view_if_needed()
    shot(pg, "screenshot_over_budget.png")


# --- 3. a failed upload -----------------------------------------------------------------------------

def test_a_failed_upload_keeps_the_last_transcript_that_loaded_and_the_agent_switches(page: Any,
                                                                                     tmp_path: Path) -> None:
    needs(SWE)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    package = tmp_path / "package.json"
    package.write_text('{"name": "demo", "version": "1.0.0", "dependencies": {}}', encoding="utf-8")
    demo = inputs.sample_manifests()[inputs.DEFAULT_MANIFEST]
    window = package_replay(SWE, manifest=demo, model="manifest").agent.window
    pg = page
    choose_radio(pg, "model_source", inputs.MODEL_SOURCES["manifest"])
    upload_transcript(pg, SWE)
    wait_header(pg, SWE.name)
    for bad in (broken, package):
        upload_transcript(pg, bad)
        pg.get_by_text("showing the last transcript that loaded").first.wait_for()
        settle(pg)
        text = header(pg)
        assert SWE.name in text and "demo_support.json" not in text, (bad.name, text)
        assert radio_choice(pg, "model_source") == inputs.MODEL_SOURCES["manifest"]
        sample = pg.locator(".st-key-transcript_sample")  # says it is not what is shown
        assert "not shown: the upload is" in sample.inner_text() and sample.locator("input").is_disabled()
        assert f"window {window:,} tokens (manifest)" in text


# --- 4. a manifest picked after an upload -------------------------------------------------------------

def test_a_manifest_picked_after_an_upload_applies_its_window_as_the_command_line_does(page: Any) -> None:
    needs(SWE)
    cli = package_replay(SWE)  # `context-inspector replay small-window.yaml marshmallow….traj`
    own = package_replay(SWE, manifest=None)
    assert cli.agent.window != own.agent.window
    pg = page
    pick(pg, "manifest_sample", inputs.OWN_AGENT)
    upload_transcript(pg, SWE)
    wait_header(pg, SWE.name)
    assert f"window {own.agent.window:,} tokens" in header(pg)
    pick(pg, "manifest_sample", SMALL.name)
    wait_header(pg, f"window {cli.agent.window:,} tokens")
    text = header(pg)
    assert f"Manifest {SMALL.name}" in text and f"{cli.totals()['frames']} LLM calls" in text
    assert words.agent_words(cli) in text  # the same sources as the command line's agent line
    assert "a sample never does" not in pg.locator(".st-key-agent_source").inner_text()


# --- 7. readable at 1024×768 with the sidebar open ------------------------------------------------------

CLIPPED = """sel => [...document.querySelectorAll(sel)].filter(e => e.offsetParent !== null)
    .filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right >
                 document.querySelector('[data-testid=stMainBlockContainer]').getBoundingClientRect().right + 1)
    .map(e => e.textContent)"""


def test_1024x768_with_the_sidebar_open_nothing_is_cut_or_covered(browser: Any, server: str) -> None:  # noqa: F811
    pg = open_app(browser, server, 1024, 768)
    try:
        assert pg.locator("[data-testid=stSidebar]").bounding_box()["width"] > 200  # the sidebar is open
        # The "Chat rows | Table" switch: whole, inside the page.
        assert pg.evaluate(CLIPPED, ".st-key-payload_as button, .st-key-payload_as button *") == []
        # The timeline's legend: every entry shown, none in a scroll box.
        names = pg.evaluate("""() => document.querySelector('.st-key-timeline .js-plotly-plot').data
            .filter(t => t.showlegend !== false && t.name).map(t => t.name)""")
        legend = pg.locator(".ci-legend-tl")
        assert legend.count() == 1 and all(n in legend.inner_text() for n in names)
        assert pg.evaluate("() => { const l = document.querySelector('.ci-legend-tl');"
                           " return l.scrollHeight <= l.clientHeight + 1; }")
        assert pg.locator(".st-key-timeline .legend .scrollbar").count() == 0
        # The sticky stepper: nothing shows in the gap above it, and a link's row lands below it.
        rp = demo_replay()
        call, row_id, target = next((k, r.anchor, a) for k in range(len(rp.frames)) for r in chat.payload_rows(rp, k)
                                    for a in r.links if int(a.split("-")[-1]) in rp.frames[k].refs)
        for k in range(1, call + 1):
            pg.locator(".st-key-next button:visible").click()
            wait_for_call(pg, k)
        pg.mouse.move(700, 500)  # over the page, not the sidebar
        pg.mouse.wheel(0, 1400)
        settle(pg)
        stepper = pg.locator(".st-key-stepper").bounding_box()
        head = pg.evaluate("""() => { const h = document.querySelector('[data-testid=stHeader]');
            return [getComputedStyle(h).backgroundColor, h.getBoundingClientRect().bottom]; }""")
        assert head[0] not in ("rgba(0, 0, 0, 0)", "transparent") and head[1] >= stepper["y"] - 1
        row = pg.locator(f"details#{row_id}")
        row.evaluate("e => e.scrollIntoView({block: 'center'})")
        row.locator("summary").click()
        row.locator(f".why a[href='#{target}']").click()
        pg.wait_for_timeout(600)
        bottom = pg.locator(".st-key-stepper").bounding_box()
        top = pg.evaluate("id => document.getElementById(id).getBoundingClientRect().top", target)
        assert top >= bottom["y"] + bottom["height"] - 1, (top, bottom)
        # Side by side: the mini-charts' call ticks apart, the tables not cut at the right.
        choose_view(pg, "compare")
        pg.locator(".st-key-compare_timeline_2 .js-plotly-plot").wait_for()
        settle(pg)
        for k in range(3):
            ticks = pg.eval_on_selector_all(f".st-key-compare_timeline_{k} .xtick text",
                                            "els => els.map(e => { const r = e.getBoundingClientRect();"
                                            " return [r.left, r.right]; }).sort((a, b) => a[0] - b[0])")
            assert len(ticks) >= 2 and all(a[1] < b[0] for a, b in zip(ticks, ticks[1:], strict=False)), ticks
        pg.locator(".st-key-keep_diff").scroll_into_view_if_needed()
        settle(pg)
        cut = pg.eval_on_selector_all("[data-testid=stMain] [data-testid=stDataFrame] .dvn-scroller",
                                      "els => els.map(e => e.scrollWidth - e.clientWidth)")
        assert len(cut) >= 2 and all(c <= 1 for c in cut), cut
        pg.locator(".st-key-compare_timeline_0").evaluate("e => e.scrollIntoView({block: 'center'})")
        settle(pg)
        shot(pg, "screenshot_1024_side_by_side.png")
    finally:
        pg.context.close()


# --- 9. no engine code as text -----------------------------------------------------------------------

PAGE_TEXT = """() => { const main = document.querySelector('[data-testid=stMain]').cloneNode(true);
    main.querySelectorAll('[data-testid=stCode], [data-testid=stJson], textarea, style').forEach(e => e.remove());
    return main.textContent; }"""


def test_no_engine_code_appears_on_the_demo_pages_in_the_browser(page: Any) -> None:
    """The demo's views as the browser shows them (chat rows, HTML, captions, the timeline's SVG
    text), at a call of every kind of manager action and at the first repair. The shared
    transcripts and the table cells are scanned under AppTest (tests/app/test_app_plain_words.py)."""
    from test_app_plain_words import ENGINE_CODES

    rp = demo_replay()
    seen: dict[Any, int] = {}
    for k, f in enumerate(rp.frames):
        seen.setdefault((f.decision.action, f.summary_sent), k)
        if f.repairs:
            seen.setdefault("repair", k)
    wanted = set(seen.values())
    pg = page
    found: dict[str, list[str]] = {}
    for k in range(max(wanted) + 1):
        if k:
            pg.locator(".st-key-next button:visible").click()
            wait_for_call(pg, k)
        if k not in wanted:
            continue
        for view in ("call", "not_sent", "repairs"):
            choose_view(pg, view)
            text = str(pg.evaluate(PAGE_TEXT))
            found[f"{view} @ call {k}"] = [c for c in ENGINE_CODES if c in text]
    choose_view(pg, "compare")
    pg.locator(".st-key-compare_timeline_2 .js-plotly-plot").wait_for()
    settle(pg)
    found["compare"] = [c for c in ENGINE_CODES if c in str(pg.evaluate(PAGE_TEXT))]
    assert {where: codes for where, codes in found.items() if codes} == {}
