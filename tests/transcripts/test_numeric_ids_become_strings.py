"""Regression (Q19, every importer): a numeric tool-call id is converted to a string, not refused
and not kept as a number.

Bug class: a rule enforced in one importer only. The ``openai`` importer converted integer ids and
reported them, while the Letta, tau2-bench, SWE-agent, Anthropic, bashkit and Claude Code importers
refused the same transcript ("tool result without id", "id must be a string"). Providers reject
non-string ids, so every format must hand the engine strings, and say it did
(``tool_call_id_converted``, docs/design.md Q19). Each case below is the smallest document of its
format whose call and result carry the number 7 as their id; the expectation is written from the
format's own shape, independently of the importer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.ids import stringify_ids
from inspector.replay import replay
from inspector.transcripts import parse_transcript
from cli_run import run as run_cli

ID = 7  # the numeric id every document below uses for its one call and its result

OPENAI_ROWS: list[dict[str, Any]] = [
    {"role": "system", "content": "You help."},
    {"role": "user", "content": "look it up"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": ID, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": ID, "content": "found"},
    {"role": "assistant", "content": "done"},
]
ANTHROPIC_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "look it up"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": ID, "name": "lookup", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": ID, "content": "found"}]},
    {"role": "assistant", "content": "done"},
]


def _claude_code() -> str:
    env = {"sessionId": "s-1", "isSidechain": False}
    lines = [
        {**env, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "look it up"}},
        {**env, "type": "assistant", "uuid": "u2", "message": {
            "id": "msg_1", "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": ID, "name": "lookup", "input": {}}]}},
        {**env, "type": "user", "uuid": "u3", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": ID, "content": "found"}]}},
        {**env, "type": "assistant", "uuid": "u4", "message": {
            "id": "msg_2", "role": "assistant", "model": "claude-x", "content": [{"type": "text", "text": "done"}]}},
    ]
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def _openai_log() -> str:
    request = {"model": "gpt-4o", "messages": OPENAI_ROWS[:4]}
    response = {"model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": "done"}}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 1}}
    return json.dumps({"request": request, "response": response}) + "\n"


def _mas_lab() -> str:
    events = [{"kind": "context_assembled", "agent_id": "a", "llm_call_id": "c1",
               "messages": json.dumps(OPENAI_ROWS[:4])}]
    return "\n".join(json.dumps(e) for e in events) + "\n"


def _otel_genai() -> str:
    call = {"type": "tool_call", "id": ID, "name": "lookup", "arguments": {}}
    messages = [{"role": "system", "parts": [{"type": "text", "content": "You help."}]},
                {"role": "user", "parts": [{"type": "text", "content": "look it up"}]},
                {"role": "assistant", "parts": [call]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": ID, "response": "found"}]}]
    output = [{"role": "assistant", "parts": [{"type": "text", "content": "done"}], "finish_reason": "stop"}]
    attrs = [{"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(messages)}},
             {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(output)}}]
    span = {"traceId": "t1", "spanId": "s1", "attributes": attrs}
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})


def _openhands() -> str:
    response = {"id": "chatcmpl-1", "model": "gpt-4o", "choices": [{"index": 0, "message": {
        "role": "assistant", "content": "", "tool_calls": [
            {"id": ID, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 1}}
    meta = {"function_name": "lookup", "tool_call_id": ID, "model_response": response, "total_calls_in_response": 1}
    return json.dumps([
        {"id": 0, "source": "user", "action": "message", "args": {"content": "look it up"}},
        {"id": 1, "source": "agent", "action": "run", "args": {"command": "lookup"}, "tool_call_metadata": meta},
        {"id": 2, "source": "agent", "observation": "run", "content": "found", "cause": 1, "tool_call_metadata": meta},
        {"id": 3, "source": "agent", "action": "message", "args": {"content": "done"}}])


def _litellm() -> str:
    response = {"model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": "done"}}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21}}
    return json.dumps({"id": "c1", "call_type": "completion", "status": "success", "model": "gpt-4o",
                       "messages": OPENAI_ROWS[:4], "response": response, "model_parameters": {}}) + "\n"


DOCUMENTS: dict[str, str] = {
    "openai": json.dumps(OPENAI_ROWS),
    "tau-bench": json.dumps([{"task_id": 1, "trial": 0, "reward": 1.0, "traj": OPENAI_ROWS}]),
    "tau2-bench": json.dumps({"info": {"environment_info": {"policy": "You help."}}, "tasks": [], "simulations": [
        {"messages": [
            {"role": "user", "content": "look it up"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": ID, "name": "lookup", "arguments": {}}]},
            {"role": "tool", "id": ID, "content": "found"},
            {"role": "assistant", "content": "done"}]}]}),
    "swe-agent": json.dumps({"trajectory": [], "replay_config": "{}", "history": [
        {"role": "system", "content": "You help."},
        {"role": "user", "content": "look it up"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": ID, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_ids": [ID], "content": "found"},
        {"role": "assistant", "content": "done"}]}),
    "letta": json.dumps({"agent_type": "memgpt_agent", "llm_config": {"model": "gpt-4o"}, "messages": [
        {"role": "system", "content": [{"type": "text", "text": "You help."}]},
        {"role": "user", "content": [{"type": "text", "text": "look it up"}]},
        {"role": "assistant", "content": [], "tool_calls": [
            {"id": ID, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": ID, "content": [{"type": "text", "text": "found"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]}]}),
    "anthropic": json.dumps({"system": "You help.", "messages": ANTHROPIC_MESSAGES}),
    "inspect-ai": json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "openai/gpt-4o"},
                              "samples": [{"id": 1, "epoch": 1, "messages": [
                                  {"role": "system", "content": "You help."},
                                  {"role": "user", "content": "look it up"},
                                  {"role": "assistant", "content": "", "tool_calls": [
                                      {"id": ID, "function": "lookup", "arguments": {}}]},
                                  {"role": "tool", "tool_call_id": ID, "function": "lookup", "content": "found"},
                                  {"role": "assistant", "content": "done"}]}]}),
    "bashkit": json.dumps({"model": "claude-x", "results": [
        {"task": {"id": "t1", "system": "You help."}, "trace": {"messages": ANTHROPIC_MESSAGES}}]}),
    "claude-code": _claude_code(),
    "openai-log": _openai_log(),
    "mas-lab": _mas_lab(),
    "otel-genai": _otel_genai(),
    "openhands": _openhands(),
    "litellm": _litellm(),
}


def _id_rows(messages: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    calls = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    return calls, results


def test_every_importer_is_covered() -> None:
    from inspector.transcripts import list_formats

    assert set(DOCUMENTS) == set(list_formats())


@pytest.mark.parametrize("fmt", sorted(DOCUMENTS))
def test_a_numeric_tool_call_id_becomes_a_string_with_an_irregularity(fmt: str) -> None:
    tr = parse_transcript(DOCUMENTS[fmt], name=f"ids.{fmt}", format=fmt)
    calls, results = _id_rows(tr.messages)
    assert calls == [str(ID)] and results == [str(ID)]
    converted = [r for r in tr.irregularities if r.kind == "tool_call_id_converted"]
    call_row = next(i for i, m in enumerate(tr.messages) if m.get("tool_calls"))
    result_row = next(i for i, m in enumerate(tr.messages) if m["role"] == "tool")
    assert {r.index for r in converted} == {call_row, result_row}
    assert all(str(ID) in r.detail for r in converted)
    # the converted ids pair: the replayed payloads pass the provider check with nothing repaired
    rp = replay({"kind": "Agent", "spec": {"models": [{"id": "main", "model": "gpt-4o", "context_window": 8000}]}},
                tr, counter="estimate", summarizer="drop")
    assert rp.frames and all(f.check == "ok" for f in rp.frames)
    assert not any(f.repairs for f in rp.frames)


@pytest.mark.parametrize("fmt", ["tau2-bench", "anthropic", "claude-code"])
def test_the_console_script_imports_numeric_ids_as_strings(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / "ids.txt"
    path.write_text(DOCUMENTS[fmt])
    out = run_cli("import", str(path), "--transcript-format", fmt)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    calls, results = _id_rows(doc["messages"])
    assert calls == [str(ID)] and results == [str(ID)]
    assert any(r["kind"] == "tool_call_id_converted" for r in doc["irregularities"])


_IDS = st.one_of(st.text(max_size=3), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False, width=16),
                 st.booleans(), st.none())
_CALLS = st.lists(st.one_of(st.fixed_dictionaries({"id": _IDS, "type": st.just("function")}), st.text(max_size=2)),
                  max_size=3)


@settings(max_examples=300, deadline=None)
@given(calls=st.one_of(st.none(), _CALLS), tcid=_IDS, has_tcid=st.booleans())
def test_stringify_ids_converts_exactly_the_numbers_and_keeps_any_other_row_as_it_is(
        calls: list[Any] | None, tcid: Any, has_tcid: bool) -> None:
    """Q19's rule (inspector.ids), worked independently: an int or float id (never a bool) becomes
    ``str(int)`` for a whole float, else ``str``; a row with no such id comes back as the same object
    with nothing reported (the usual row's shortcut must say exactly what the full rule says)."""
    row: dict[str, Any] = {"role": "assistant", "content": "x"}
    if calls is not None:
        row["tool_calls"] = calls
    if has_tcid:
        row["tool_call_id"] = tcid

    def text(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)

    numeric_calls = [c for c in calls or [] if isinstance(c, dict) and text(c["id"]) is not None]
    numeric_tcid = has_tcid and text(tcid) is not None
    out, changed = stringify_ids(row)
    assert len(changed) == len(numeric_calls) + numeric_tcid
    if not changed:
        assert out is row
        return
    for c_in, c_out in zip(calls or [], out.get("tool_calls", calls or []), strict=True):
        # by identity: {"id": False} == {"id": 0} in Python, and a bool id is never converted
        numeric = any(c_in is c for c in numeric_calls)
        expected = {**c_in, "id": text(c_in["id"])} if numeric else c_in
        assert c_out == expected
    if has_tcid:
        assert out["tool_call_id"] == (text(tcid) if numeric_tcid else tcid)
