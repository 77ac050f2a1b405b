"""Operation counts of the import and the replay's row boundary: a usual row (string ids or none, a
standard role, text content) is never put through the numeric-id rule (``inspector.ids.id_text``)
nor through the row-shape report (``_common._row_shape``); only the rows those rules concern are.
Either coming back for every row is per-row work a 100 000-row transcript pays twice over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import inspector.ids as ids
import inspector.transcripts._common as common
from builders import ask, asst, system, tool, user
from inspector.replay import replay
from inspector.transcripts import load_transcript


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    calls = [0]
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_usual_rows_are_never_put_through_the_number_rule_or_the_shape_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [system(), user("q"), ask("c1", "c2"), tool("c1"), tool("c2"), asst("a"),
            user([{"type": "text", "text": "parts"}]),  # content parts: one shape report, nothing to say
            {"role": "critic", "content": "odd"},  # a nonstandard role: one shape report
            asst("b")]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(rows))
    id_text, row_shape = _counting(monkeypatch, ids, "id_text"), _counting(monkeypatch, common, "_row_shape")
    t = load_transcript(path)
    assert (id_text[0], row_shape[0]) == (0, 2)  # the user row with parts and the critic row
    assert [r.kind for r in t.irregularities] == ["nonstandard_role"]
    replay(None, t, counter="estimate")  # the engine's boundary (ContextEngine.record) too
    assert id_text[0] == 0


def test_a_numeric_id_still_takes_the_number_rule_at_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [user("q"), {"role": "assistant", "content": "", "tool_calls": [
        {"id": 7, "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": 7, "content": "r"}, asst("a")]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(rows))
    id_text = _counting(monkeypatch, ids, "id_text")
    t = load_transcript(path)
    # the ask: its call's id read twice (any(), then the conversion) and its absent tool_call_id once;
    # the result: its tool_call_id once
    assert id_text[0] == 4
    assert t.messages[1]["tool_calls"][0]["id"] == "7" and t.messages[2]["tool_call_id"] == "7"


def test_only_rows_with_calls_are_put_through_the_id_rule_at_import(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Of nine rows, the import's id pass calls ``stringify_ids`` for the one ask with calls (its ids
    to read): one. A row without calls whose ``tool_call_id`` is a text or absent (the two results,
    every other row) is passed over by the loop itself."""
    rows = [system(), user("q"), ask("c1", "c2"), tool("c1"), tool("c2"), asst("a"), user("r"), asst("b"),
            user("s")]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(rows))
    stringify = _counting(monkeypatch, common, "stringify_ids")
    t = load_transcript(path)
    assert stringify[0] == 1
    assert t.messages == [{"content": r.get("content"), **r} for r in rows]
