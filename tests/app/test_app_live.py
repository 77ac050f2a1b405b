"""The app following a live file (``context-inspector app --follow FILE``): calls written
by ``inspector.live.JsonlLogger`` appear as they arrive, the stepper stays on the newest call, and
each call's request as really sent sits beside the replay's payload. AppTest, in process."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def call_line(messages: list[dict[str, Any]], reply: str, prompt_tokens: int) -> str:
    """One standard logging payload line, the fields inspector.live writes and the importer reads."""
    return json.dumps({
        "id": f"chatcmpl-{len(messages)}", "call_type": "completion", "status": "success", "model": "gpt-4o-mini",
        "session_id": "", "messages": messages, "model_parameters": {},
        "response": {"choices": [{"index": 0, "message": {"role": "assistant", "content": reply}}],
                     "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 3, "total_tokens": prompt_tokens + 3}},
    }) + "\n"


SYSTEM = {"role": "system", "content": "You are a support agent."}
FIRST = [SYSTEM, {"role": "user", "content": "Where is order 1142?"}]
SECOND = [*FIRST, {"role": "assistant", "content": "It shipped on Monday."},
          {"role": "user", "content": "And order 1143?"}]


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_app_follows_a_growing_file_and_stays_on_the_newest_call(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "calls.jsonl"
    monkeypatch.setattr(sys, "argv", ["app.py", "--follow", str(path)])
    at = run(AppTest.from_file(APP, default_timeout=120))
    assert any("waiting for the agent's first model call" in i.value for i in at.info)  # no file yet

    path.write_text(call_line(FIRST, "It shipped on Monday.", 40))
    run(at)
    assert at.session_state["n_calls"] == 1 and at.session_state["call"] == 0
    assert any("Live: following" in c.value and "1 call(s) so far" in c.value for c in at.caption)

    with path.open("a") as fh:
        fh.write(call_line(SECOND, "It is on its way.", 61))
        fh.write('{"call_type": "completion", "status": "succ')  # a line still being written: not read yet
    run(at)
    assert at.session_state["n_calls"] == 2
    assert at.session_state["call"] == 1  # moved to the newest call
    table = next(d.value for d in at.dataframe if "payload" in d.value.columns and "provider's count" in d.value.columns)
    assert table["payload"].tolist()[0] == "really sent (the request as logged)"
    assert [int(x) for x in table["messages"]] == [4, 4]  # the agent's request and the replay's: system, user, reply, user
    assert str(table["provider's count"].tolist()[0]) == "61"
    assert any("The replay sends exactly what the agent sent" in c.value for c in at.caption)


def test_with_the_switch_off_the_stepper_stays_where_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text(call_line(FIRST, "It shipped on Monday.", 40))
    monkeypatch.setattr(sys, "argv", ["app.py", "--follow", str(path)])
    at = run(AppTest.from_file(APP, default_timeout=120))
    at.toggle(key="follow_newest").set_value(False)
    run(at)
    with path.open("a") as fh:
        fh.write(call_line(SECOND, "It is on its way.", 61))
    run(at)
    assert at.session_state["n_calls"] == 2 and at.session_state["call"] == 0
