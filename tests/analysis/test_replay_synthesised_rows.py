"""A Span in an assembly's layout may hold a row that is not a transcript message (a custom
assembler's synthesised note among log rows). The replay records the span as runs; a synthesised run
after a transcript run must record *its own* rows, not the span's first rows again (the recorder
once copied ``rows[lo:lo + n]`` for every such run without advancing ``lo``)."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from inspector.manifest import settings_from_dict
from inspector.replay import replay
from inspector.transcripts import parse_transcript

PLUGIN = '''
from inspector.engine import ContextAssembler
from inspector.engine.types import Span

NOTE = {"role": "user", "content": "[note synthesised by the custom assembler]"}


class Asm(ContextAssembler):
    """Sends the transcript rows it is given with a synthesised note after the first history row,
    laid out as ONE span over [history row, note, the other rows]."""

    def assemble(self, engine):
        asm = super().assemble(engine)
        msgs = list(asm.messages)
        if len(msgs) >= 2:
            rows = [msgs[0], NOTE, *msgs[1:]]
            asm.messages = rows
            asm.layout = [Span(rows, 0, len(rows), "history")]
        return asm
'''


@pytest.fixture()
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    name = f"span_probe_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_a_synthesised_row_inside_a_span_is_recorded_as_itself(plugin: str) -> None:
    rows: list[dict[str, Any]] = []
    for i in range(3):
        rows += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]
    tr = parse_transcript(json.dumps(rows), name="t.json")
    doc = {"kind": "Agent", "spec": {"assembler": {"ref": f"{plugin}:Asm"}}}
    rp = replay(settings_from_dict(doc, allow_imports=[plugin]), tr, counter="estimate", allow_imports=[plugin])
    last = rp.frames[-1]
    sent = last.payload(tr.messages)
    assert len(sent) >= 3
    assert sent[1]["content"] == "[note synthesised by the custom assembler]"
    assert sent[0] == tr.messages[0]  # the first history row, once, in its place
    assert sent[0]["content"] != sent[1]["content"]
    assert [m["content"] for m in sent[2:]] == [m["content"] for m in tr.messages[1:len(sent) - 1]]
