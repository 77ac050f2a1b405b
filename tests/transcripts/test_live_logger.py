"""Live: ``inspector.live.JsonlLogger``, a litellm callback, writes every real model call
as litellm's standard logging payload, one JSON object per line, and the ``litellm`` importer reads
the file back. End to end: real litellm calls to the local test server (tests/llm_server.py)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from inspector.live import follow_state, payload_line, read_complete
from inspector.transcripts import load_transcript

TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "find an order",
                                           "parameters": {"type": "object", "properties": {}}}}]


def wait_for_lines(path: Path, n: int, timeout: float = 20.0) -> list[dict[str, Any]]:
    """litellm runs success callbacks off the caller's thread: wait for them to land."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lines = read_complete(path).decode().splitlines()
        if len(lines) >= n:
            return [json.loads(x) for x in lines]
        time.sleep(0.05)
    raise AssertionError(f"{path}: {len(read_complete(path).splitlines())} of {n} lines after {timeout} s")


@pytest.fixture()
def logged(tmp_path: Path) -> Any:
    import litellm

    import inspector.live

    path = tmp_path / "calls.jsonl"
    before = list(litellm.callbacks)
    logger = inspector.live.JsonlLogger(path)
    litellm.callbacks = [logger]  # the one line a user adds
    yield path
    litellm.logging_callback_manager.remove_callback_from_all_lists(logger)
    litellm.callbacks = before


def test_every_call_is_written_and_the_litellm_importer_reads_it_back(llm: Any, logged: Path) -> None:
    import litellm

    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"}]
    kw = dict(model="openai/gpt-4o-mini", api_base=llm.api_base, api_key="test", tools=TOOLS)
    first = litellm.completion(messages=msgs, **kw)
    msgs += [{"role": "assistant", "content": first.choices[0].message.content}, {"role": "user", "content": "more"}]
    litellm.completion(messages=msgs, **kw)
    lines = wait_for_lines(logged, 2)
    assert [x["status"] for x in lines] == ["success", "success"]
    assert [len(x["messages"]) for x in lines] == [2, 4]  # the request as sent, each time
    t = load_transcript(logged)
    assert t.format == "litellm"
    # the second call continues the first: system, user, reply, user, reply
    assert [m["role"] for m in t.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert t.messages[2]["content"] == llm.reply
    # the server's usage (11 prompt tokens per call) at each reply, for `calibrate`
    assert sorted(t.usage) == [2, 4] and {u["prompt_tokens"] for u in t.usage.values()} == {11}
    assert [op.reply for op in t.observed_payloads] == [2, 4]
    assert [len(op.messages) for op in t.observed_payloads] == [2, 4]
    assert t.observed_payloads[0].tools is not None and t.observed_payloads[0].tools[0]["function"]["name"] == "lookup"


def test_async_calls_are_written_once(llm: Any, logged: Path) -> None:
    import litellm

    async def call() -> None:
        await litellm.acompletion(model="openai/gpt-4o-mini", messages=[{"role": "user", "content": "hi"}],
                                  api_base=llm.api_base, api_key="test")
        await asyncio.sleep(0.5)  # the async success callback runs as a task of this loop

    asyncio.run(call())
    assert len(wait_for_lines(logged, 1)) == 1
    time.sleep(0.5)
    assert len(read_complete(logged).splitlines()) == 1  # not once per hook


def test_a_line_being_written_is_left_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    assert read_complete(path) == b"" and follow_state(path) == (0, 0)  # no call yet
    path.write_bytes(b'{"a": 1}\n{"b": ')
    assert read_complete(path) == b'{"a": 1}\n'
    assert follow_state(path)[0] == 15


def test_without_a_standard_logging_object_the_same_fields_are_written() -> None:
    class Reply:
        def model_dump(self) -> dict[str, Any]:
            return {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}

    line = payload_line({"model": "m", "messages": [{"role": "user", "content": "hi"}], "call_type": "completion",
                         "optional_params": {"tools": TOOLS}}, Reply())
    assert line.endswith("\n") and line.count("\n") == 1
    assert json.loads(line) == {"call_type": "completion", "status": "success", "model": "m",
                                "messages": [{"role": "user", "content": "hi"}],
                                "model_parameters": {"tools": TOOLS},
                                "response": {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}}


def test_importing_the_live_module_does_not_import_litellm() -> None:
    code = "import sys, inspector, inspector.live; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False", out.stderr[-1000:]
