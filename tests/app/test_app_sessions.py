"""Four concurrent browser sessions on different transcripts never mix their state, under load.

One real `streamlit run` server, four isolated Chromium contexts (four websocket sessions alive at
once). Each uploads its own transcript, then the sessions step in an interleaved order; every page
must keep showing its own transcript and its own call position.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_app_browser import CHROMIUM, LAUNCH_ARGS, server, wait_for_call  # noqa: F401 - `server` is a fixture

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                       reason="/usr/bin/chromium is not installed; in CI this test never skips"),
]


def transcript(path: Path, turns: int, tag: str) -> Path:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": f"You are test agent {tag}."}]
    for t in range(turns):
        msgs += [{"role": "user", "content": f"{tag} question {t}"}, {"role": "assistant", "content": f"{tag} answer {t}"}]
    path.write_text(json.dumps({"messages": msgs}))
    return path


@pytest.fixture()
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            yield b
        finally:
            b.close()


def test_four_sessions_keep_their_own_state(server: str, browser: Any, tmp_path: Path) -> None:  # noqa: F811
    sessions = []
    for i in range(4):
        turns = 3 + 2 * i  # 3, 5, 7, 9 calls: each session's transcript is recognisable by its size
        path = transcript(tmp_path / f"session{i}.json", turns, f"S{i}")
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        pg = ctx.new_page()
        pg.set_default_timeout(90_000)
        pg.goto(server)
        pg.get_by_text("Token budget — call 0 ·").wait_for()
        sessions.append((pg, path, turns))
    for pg, path, turns in sessions:  # all four are connected before any uploads
        pg.locator("input[type=file]").nth(1).set_input_files(str(path))
    for pg, path, turns in sessions:
        pg.get_by_text(f"{turns} LLM calls").first.wait_for()
        pg.get_by_text(path.name).first.wait_for()
    # interleaved stepping: session i ends on call i
    for step in range(3):
        for i, (pg, _, _) in enumerate(sessions):
            if step < i:
                pg.get_by_role("button", name="Next ▶").click()
                wait_for_call(pg, step + 1)
    for i, (pg, path, turns) in enumerate(sessions):
        wait_for_call(pg, i)
        body = pg.locator("body").inner_text()
        assert f"{turns} LLM calls" in body and path.name in body
        others = [p.name for j, (_, p, _) in enumerate(sessions) if j != i]
        assert not any(o in body for o in others), f"session {i} shows another session's transcript"
        assert f"S{i} question 0" in body or pg.get_by_text(f"S{i} question").count() > 0
    for pg, _, _ in sessions:
        pg.context.close()
