"""The prompt cache on screen in a real browser (headless Chromium, as tests/app/test_app_browser.py):
the header's totals with caching, the timeline's cache line and cache-break markers with their
legend, and at a call with a cache break the band bar's strip and words. Saves
tests/artifacts/screenshot_cache.png."""

from __future__ import annotations

from typing import Any

import pytest
from test_app_browser import (  # noqa: F401 - the module-scoped fixtures are used by name
    CHROMIUM,
    browser,
    demo_replay,
    open_app,
    server,
    shot,
    wait_for_call,
)

from inspector.report import cache_view

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium")]


@pytest.fixture()
def page(browser: Any, server: str) -> Any:  # noqa: F811 - the imported fixtures
    pg = open_app(browser, server, 1440, 1000)
    try:
        yield pg
    finally:
        pg.context.close()


def test_cache_hits_breaks_and_costs_are_on_screen(page: Any) -> None:
    pg = page
    rp = demo_replay()
    breaks = cache_view.break_calls(rp)
    first = breaks[0]
    assert first == 7  # the fold when turn 3 was committed
    header = pg.locator("[data-testid=stCaptionContainer]", has_text="Cost with caching").first.text_content()
    assert "read from cache" in str(header) and "cache break(s)" in str(header)
    names = pg.evaluate("() => document.querySelector('.st-key-timeline .js-plotly-plot').data.map(t => t.name)")
    assert cache_view.CACHED_LINE_WORDS in names and cache_view.BREAK_WORDS in names
    marks = pg.evaluate("w => document.querySelector('.st-key-timeline .js-plotly-plot').data"
                        ".find(t => t.name === w).x", cache_view.BREAK_WORDS)
    assert list(marks) == breaks
    assert cache_view.BREAK_WORDS in str(pg.locator(".ci-legend-tl").first.text_content())
    pg.locator(".st-key-timeline").evaluate("e => e.scrollIntoView({block: 'center'})")
    shot(pg, "screenshot_cache_timeline.png")
    pg.locator("h1").first.click()  # focus the page, not a field
    pg.wait_for_timeout(500)
    for k in range(1, first + 1):
        pg.keyboard.press("ArrowRight")
        wait_for_call(pg, k)
    words = str(pg.locator(".st-key-band_bar .ci-cache-words").text_content())
    c = cache_view.cache_account(rp).calls[first]
    assert f"{c.cache.cached:,} read from cache" in words and "Cache break (summary computed when turn 3 was committed):" in words
    assert f"{c.resent:,} tokens the previous call sent were sent again without the cache" in words
    assert pg.locator(".st-key-band_bar .ci-cache-seg[data-cache='cached']").is_visible()
    pg.locator(".st-key-band_bar").evaluate("e => e.scrollIntoView({block: 'center'})")
    shot(pg, "screenshot_cache.png")
