"""The Manifest tab's *Context strategy* select box in a real browser (headless Chromium, as
tests/app/test_app_browser.py): it is on the tab with the strategy in force, it lists every
registered strategy, and choosing ``clear-tool-results`` rewrites the editor's text, which then
validates. Saves tests/artifacts/screenshot_manifest_strategy.png."""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_app_browser import (  # noqa: F401 - the module-scoped fixtures are used by name
    CHROMIUM,
    browser,
    choose_view,
    open_app,
    server,
    shot,
    wait_idle,
)

from inspector.plugins import default_registry

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium")]


@pytest.fixture()
def page(browser: Any, server: str) -> Any:  # noqa: F811 - the imported fixtures
    pg = open_app(browser, server, 1280, 1000)
    try:
        yield pg
    finally:
        pg.context.close()


def test_the_strategy_select_box_is_on_the_manifest_tab_and_rewrites_the_editor(page: Any) -> None:
    pg = page
    choose_view(pg, "manifest")
    box = pg.locator(".st-key-manifest_strategy")
    chosen = box.locator("input[role=combobox]")
    assert box.is_visible() and chosen.input_value().startswith("summarising — ")  # the demo's, in force
    box.click()
    pg.get_by_role("option").first.wait_for()
    names = [str(o).split(" — ", 1)[0] for o in pg.get_by_role("option").all_text_contents()]
    assert names == [spec.name for spec in default_registry().specs("context_manager")]
    pg.get_by_role("option", name=re.compile(r"^clear-tool-results — ")).click()
    pg.wait_for_function("() => document.querySelector('.st-key-manifest_yaml textarea').value"
                         ".includes('type: clear-tool-results')")
    for _ in range(2):
        pg.wait_for_timeout(400)
        wait_idle(pg)
    text = pg.locator(".st-key-manifest_yaml textarea").input_value()
    assert "      trigger: 100000\n      keep: 3\n" in text and "context_window: 7200" in text
    assert pg.get_by_text("Valid manifest.").is_visible()
    assert chosen.input_value().startswith("clear-tool-results — ")
    box.evaluate("e => e.scrollIntoView({block: 'center'})")
    shot(pg, "screenshot_manifest_strategy.png")
