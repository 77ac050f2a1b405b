"""The final check nothing can skip (docs/design.md §3.8) and ids at the engine's boundary (Q19).

Bug class: a shortcut trusted beyond what it proves. ``ContextEngine.assemble`` skips reading the
payload again when the default assembler's pairing pass already read it (``verified``) and reads
only outside its clean ranges otherwise. A plugin assembler that wraps the default one and edits
``messages`` afterwards — a new list, or the same list edited in place — used to send an unpaired
payload with no error. The reference's kernel refuses it; so does ours now: only the default
assembler's own record is trusted, every other payload is checked whole.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from builders import ask, tool

from inspector.engine import ContextEngine
from inspector.engine.pairing import check_provider_payload
from inspector.engine.types import ProviderPayloadError
from inspector.manifest import settings_from_dict

PLUGIN = '''
from inspector.engine import ContextAssembler


class Replaces:
    """Wraps the default assembler and sends a new list without the last row."""

    def __init__(self):
        self.inner = ContextAssembler()

    def assemble(self, engine):
        r = self.inner.assemble(engine)
        r.messages = r.messages[:-1]
        return r


class DeletesInPlace:
    """Wraps the default assembler and deletes the last row of the list it was given."""

    def __init__(self):
        self.inner = ContextAssembler()

    def assemble(self, engine):
        r = self.inner.assemble(engine)
        del r.messages[-1]
        return r


class Relabels(ContextAssembler):
    """A subclass that relabels a result inside a clean range and says nothing was verified: only
    the stale ``clean`` ranges would let it pass."""

    def assemble(self, engine):
        r = super().assemble(engine)
        r.verified = False
        r.messages = [dict(m, tool_call_id="zz") if m.get("tool_call_id") == "a1" else m for m in r.messages]
        return r


class Passes:
    """Wraps the default assembler and changes nothing."""

    def __init__(self):
        self.inner = ContextAssembler()

    def assemble(self, engine):
        return self.inner.assemble(engine)
'''


@pytest.fixture()
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    name = f"final_check_probe_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def _engine(plugin: str | None, cls: str = "") -> ContextEngine:
    spec: dict[str, Any] = {"assembler": {"ref": f"{plugin}:{cls}"}} if plugin else {}
    allow = [plugin] if plugin else []
    engine = ContextEngine(settings_from_dict({"kind": "Agent", "spec": spec}, allow_imports=allow).settings,
                           counter="estimate", allow_imports=allow)
    engine.user("first")
    engine.record(ask("a1"))
    engine.record(tool("a1", "r1"))
    engine.record({"role": "assistant", "content": "done"})
    engine.commit()
    engine.user("look it up")
    engine.record(ask("c1"))
    engine.record(tool("c1", "found"))
    return engine


@pytest.mark.parametrize(("cls", "error"), [
    ("Replaces", "tool results 0 != tool calls 1 at messages[5]"),
    ("DeletesInPlace", "tool results 0 != tool calls 1 at messages[5]"),
    ("Relabels", "orphan tool results: {'zz'}"),
])
def test_a_payload_edited_after_the_default_assembler_checked_it_is_refused(plugin: str, cls: str, error: str) -> None:
    engine = _engine(plugin, cls)
    with pytest.raises(ProviderPayloadError, match=error.replace("{", r"\{").replace("[", r"\[").replace("}", r"\}")
                       .replace("]", r"\]")):
        engine.assemble()
    call = _engine(plugin, cls).assemble(strict=False)
    assert call.check == error


def test_the_default_assembler_and_a_wrapper_that_changes_nothing_pass(plugin: str) -> None:
    for call in (_engine(None).assemble(), _engine(plugin, "Passes").assemble()):
        assert call.check == "ok"
        assert [m["role"] for m in call.messages] == ["user", "assistant", "tool", "assistant", "user", "assistant",
                                                      "tool"]


# -- Q19 at the engine's boundary -------------------------------------------------------------------
def test_record_converts_numeric_ids_and_the_call_record_says_so() -> None:
    """A live loop that records ``{"id": 2}`` and a result for ``2`` reaches the repair with strings
    (the reference answers it under ``"2"``); the caller's dicts stay as given."""
    engine = _engine(None)
    call_row = {"role": "assistant", "content": "", "tool_calls": [
        {"id": 2, "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    result_row = {"role": "tool", "tool_call_id": 2, "content": "two"}
    engine.record(call_row)
    engine.record(result_row)
    call = engine.assemble()
    assert call.check == "ok" and call.repairs == []
    assert call.messages[-2]["tool_calls"][0]["id"] == "2" and call.messages[-1]["tool_call_id"] == "2"
    assert call.messages[-1]["content"] == "two"
    assert call_row["tool_calls"][0]["id"] == 2 and result_row["tool_call_id"] == 2  # not mutated
    assert "non-string tool-call id converted to a string when recorded: 2 → '2', tool_call_id 2 → '2'" in \
        call.warnings
    assert not any("converted" in w for w in engine.assemble().warnings)  # said once, at the call that follows


@pytest.mark.parametrize(("rows", "error"), [
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [
        {"id": 2, "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "2", "content": "r"}], "tool call id 2 at messages[1] is not a string"),
    ([{"role": "user", "content": "q"}, ask("a"), {"role": "tool", "tool_call_id": 7.5, "content": "r"}],
     "tool result id 7.5 at messages[2] is not a string"),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": ["b"], "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      tool("a", "r")], "tool call id ['b'] at messages[1] is not a string"),
])
def test_the_final_check_refuses_a_non_string_id(rows: list[dict], error: str) -> None:
    with pytest.raises(ProviderPayloadError) as exc:
        check_provider_payload(rows)
    assert str(exc.value) == error


def test_a_call_without_an_id_is_still_ignored_by_the_check() -> None:
    """Only a present, non-string id is refused: a call with no id at all is not paired (§3.8)."""
    check_provider_payload([{"role": "user", "content": "q"}, {"role": "assistant", "content": "x", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": "{}"}}]}])
