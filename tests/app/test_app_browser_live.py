"""Live in a real browser: an agent's litellm calls, written by ``inspector.live.JsonlLogger``
against the local test server, appear in ``context-inspector app --follow FILE`` as they arrive, and
the stepper moves to the newest call. Headless Chromium, as tests/app/test_app_browser.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit_server import free_port, served
from test_app_browser import CHROMIUM, LAUNCH_ARGS, wait_for_call
from tests.transcripts.test_live_logger import wait_for_lines

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason="/usr/bin/chromium is not installed (run `make browser` as root)"),
]


@pytest.fixture()
def live_file(tmp_path: Path) -> Iterator[tuple[Path, Any]]:
    import litellm

    import inspector.live

    path = tmp_path / "calls.jsonl"
    logger = inspector.live.JsonlLogger(path)
    before = list(litellm.callbacks)
    litellm.callbacks = [logger]
    yield path, litellm
    litellm.logging_callback_manager.remove_callback_from_all_lists(logger)
    litellm.callbacks = before


def test_new_calls_appear_in_the_browser_as_they_arrive(llm: Any, live_file: tuple[Path, Any]) -> None:
    from inspector.bundled import app_command

    path, litellm = live_file
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"}]
    kw = dict(model="openai/gpt-4o-mini", api_base=llm.api_base, api_key="test")
    first = litellm.completion(messages=msgs, **kw)
    wait_for_lines(path, 1)
    sync_api = pytest.importorskip("playwright.sync_api")
    port = free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with served([*app_command(port=port, follow=str(path)), "--server.fileWatcherType", "none"], port, cwd=ROOT,
                env=env, out=open(os.devnull, "wb")), sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1500, "height": 1100})
            pg.set_default_timeout(90_000)
            pg.goto(f"http://127.0.0.1:{port}/")
            wait_for_call(pg, 0)
            assert "1 call(s) so far" in pg.content()
            msgs += [{"role": "assistant", "content": first.choices[0].message.content},
                     {"role": "user", "content": "more"}]
            litellm.completion(messages=msgs, **kw)  # the agent's next call, while the page is open
            wait_for_lines(path, 2)
            wait_for_call(pg, 1)  # the watcher saw the file grow; the stepper moved to the newest call
            pg.wait_for_function("() => document.body.innerText.includes('2 call(s) so far')")
            assert pg.get_by_text("What was really sent, beside this replay").count() == 1
        finally:
            browser.close()
