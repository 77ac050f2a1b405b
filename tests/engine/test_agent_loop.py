"""The engine in a real agent loop: assemble before each litellm.completion against a local server."""

from __future__ import annotations

import json

from conftest import ROOT
from inspector.offline import litellm
from inspector.engine import ContextEngine


def test_agent_loop_end_to_end(llm) -> None:  # noqa: ANN001
    lm = litellm()
    engine = ContextEngine.from_manifest(ROOT / "sample_manifests" / "small-window.yaml", counter="tiktoken")
    tool_name = (engine.tools or [{"function": {"name": "lookup"}}])[0]["function"]["name"]
    llm.script = [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": tool_name, "arguments": "{\"id\": 7}"}}]},
        {"role": "assistant", "content": "Order 7 ships tomorrow."},
    ]
    sent: list[list[dict]] = []
    for question in ("Where is order 7?", "Thanks, and order 8?"):
        engine.user(question)
        while True:
            call = engine.assemble()
            sent.append(call.messages)
            reply = lm.completion(model="openai/test-model", api_base=llm.api_base, api_key="x", timeout=10,
                                  messages=call.messages, tools=call.tools)
            msg = reply.choices[0].message.model_dump(exclude_none=True)
            msg = {k: v for k, v in msg.items() if k in ("role", "content", "tool_calls")}
            if msg.get("tool_calls"):
                msg["tool_calls"] = [{"id": tc["id"], "type": "function", "function": tc["function"]}
                                     for tc in msg["tool_calls"]]
            engine.record(msg)
            if not msg.get("tool_calls"):
                break
            for tc in msg["tool_calls"]:
                engine.record({"role": "tool", "tool_call_id": tc["id"], "content": json.dumps({"status": "shipped"})})
        engine.commit()
    # the server received exactly what the engine assembled, call by call
    assert [r["messages"] for r in llm.requests] == json.loads(json.dumps(sent))
    assert len(llm.requests) == 3  # ask → result → answer, then one plain answer
    second_turn_first_call = llm.requests[2]["messages"]
    assert any(m.get("role") == "tool" and m.get("tool_call_id") == "call_1" for m in second_turn_first_call)
    assert second_turn_first_call[-1] == {"role": "user", "content": "Thanks, and order 8?"}
    committed = engine.conversation.committed_messages
    assert [m["role"] for m in committed][-2:] == ["user", "assistant"]
