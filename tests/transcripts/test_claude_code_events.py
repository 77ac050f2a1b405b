"""Claude Code importer: a slash command and its expansion are one user turn; a ``compact_boundary``
system entry is an observed compaction; a log that opens with bookkeeping lines is still detected.

``tests/data/transcripts/claude-code-slash-command.jsonl`` is a real Claude Code 2.1.20 session,
meksys-dev/mekara ``docs/static/chats/sync-help-mechanized.jsonl`` (MIT), unmodified: line 1 a
``file-history-snapshot``, line 2 the ``/sync-help`` command entry, line 3 its expansion
(``isMeta: true``). The compaction cases add a ``compact_boundary`` entry in the shape community
descriptions of real files give (``content: "Conversation compacted"``, ``compactMetadata``
``{trigger, preTokens}``; see docs/SAMPLE_LOGS.md) and the ``isCompactSummary`` user entry after it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.calibration import calibrate
from inspector.transcripts import detect_format, list_conversations, load_transcript, parse_transcript
from inspector.transcripts.claude_code import COMPACTION_PREFIX

LOG = Path(__file__).parents[1] / "data" / "transcripts" / "claude-code-slash-command.jsonl"


def lines() -> list[dict[str, Any]]:
    return [json.loads(x) for x in LOG.read_text(encoding="utf-8").splitlines() if x.strip()]


def jsonl(values: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(v) + "\n" for v in values)


def test_a_log_opening_with_a_file_history_snapshot_is_detected() -> None:
    assert lines()[0]["type"] == "file-history-snapshot"
    assert detect_format(LOG.read_bytes(), "session.jsonl") == "claude-code"


def test_a_slash_command_and_its_expansion_are_one_user_turn() -> None:
    raw = lines()
    t = load_transcript(LOG)
    (info,) = list_conversations(LOG)
    assert info.user_turns == 1
    assert t.origins[0] == "lines 2-3"
    assert t.messages[0] == {"role": "user", "content": [
        {"type": "text", "text": raw[1]["message"]["content"]},
        *raw[2]["message"]["content"]]}
    assert t.meta["slash_commands"] == [0]
    assert [m["role"] for m in t.messages] == ["user", "assistant", "tool", "assistant"]


def test_an_expansion_without_a_command_before_it_stays_its_own_row() -> None:
    raw = lines()
    t = parse_transcript(jsonl([raw[0], raw[2], *raw[3:]]), name="s.jsonl")
    assert t.origins[0] == "line 2" and "slash_commands" not in t.meta


def _boundary(raw: list[dict[str, Any]]) -> dict[str, Any]:
    env = {k: raw[1][k] for k in ("sessionId", "version", "cwd")}
    return {**env, "type": "system", "subtype": "compact_boundary", "uuid": "b-1", "parentUuid": None,
            "content": "Conversation compacted", "compactMetadata": {"trigger": "auto", "preTokens": 155025}}


def _summary(raw: list[dict[str, Any]]) -> dict[str, Any]:
    env = {k: raw[1][k] for k in ("sessionId", "version", "cwd")}
    text = COMPACTION_PREFIX + " that ran out of context. The conversation is summarized below: ..."
    return {**env, "type": "user", "uuid": "s-1", "parentUuid": "b-1", "isCompactSummary": True,
            "message": {"role": "user", "content": text}}


def test_a_compact_boundary_then_its_summary_is_one_observed_compaction() -> None:
    raw = lines()
    follow = {**raw[1], "uuid": "u-9", "message": {"role": "user", "content": "and now the docs"}}
    t = parse_transcript(jsonl([*raw, _boundary(raw), _summary(raw), follow]), name="s.jsonl")
    (c,) = t.compactions
    assert (c.index, c.origin) == (4, "line 11")  # rows 0-3 as before; the summary row is 4
    assert c.detail == ("Claude Code compact_boundary entry (trigger auto, preTokens 155025); "
                        "the summary entry follows")
    assert t.messages[4]["content"].startswith(COMPACTION_PREFIX)


def test_a_boundary_alone_marks_the_next_row() -> None:
    raw = lines()
    follow = {**raw[1], "uuid": "u-9", "message": {"role": "user", "content": "and now the docs"}}
    t = parse_transcript(jsonl([*raw, _boundary(raw), follow]), name="s.jsonl")
    (c,) = t.compactions
    assert (c.index, c.detail) == (4, "Claude Code compact_boundary entry (trigger auto, preTokens 155025)")


def test_calibration_counts_from_the_compaction_on() -> None:
    raw = lines()
    reply = {**raw[-1], "uuid": "a-9", "message": {**raw[-1]["message"], "id": "msg_after"}}
    t = parse_transcript(jsonl([*raw, _boundary(raw), _summary(raw), reply]), name="s.jsonl")
    calls = calibrate(t).calls
    assert calls["payload"].tolist()[-1] == "rows 4-4 (since the observed compaction)"
