"""Regression: invalid payloads passed the provider check (Q19).

Bug class: a check that is weaker than the provider. A transcript row with an invented role
(``wizard``) was sent and the check said ``ok``; integer tool-call ids were kept as integers, which
providers (and the reference's check) reject. Ids are now strings from the import on, reported as
an irregularity, and a non-standard role fails the check with a reason that names it.
"""

from __future__ import annotations

import json

import pytest

from inspector.engine.pairing import check_provider_payload
from inspector.engine.types import ProviderPayloadError
from inspector.replay import replay
from inspector.transcripts import parse_transcript

ROWS = [
    {"role": "user", "content": "u"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": 7, "type": "function",
                                                          "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": 7, "content": "r"},
    {"role": "assistant", "content": "done"},
]
MANIFEST = {"kind": "Agent", "spec": {"models": [{"id": "main", "model": "gpt-4o", "context_window": 8000}]}}


def test_integer_tool_call_ids_become_strings_at_import_and_are_reported() -> None:
    tr = parse_transcript(json.dumps(ROWS), name="ids.json")
    assert tr.messages[1]["tool_calls"][0]["id"] == "7"
    assert tr.messages[2]["tool_call_id"] == "7"
    converted = {r.index for r in tr.irregularities if r.kind == "tool_call_id_converted"}
    assert converted == {1, 2}
    rp = replay(MANIFEST, tr, counter="estimate", summarizer="drop")
    assert [f.check for f in rp.frames] == ["ok", "ok"]


def test_a_nonstandard_role_fails_the_provider_check_with_its_name() -> None:
    rows = [{"role": "user", "content": "u"}, {"role": "wizard", "content": "abracadabra"},
            {"role": "assistant", "content": "ok"}]
    tr = parse_transcript(json.dumps(rows), name="wizard.json")
    rp = replay(MANIFEST, tr, counter="estimate", summarizer="drop")
    sent_roles = [m["role"] for m in rp.frames[0].payload(rp.messages)]
    assert "wizard" in sent_roles  # sent as recorded: the check, not a silent repair, says what is wrong
    assert rp.frames[0].check != "ok" and "'wizard'" in rp.frames[0].check
    assert rp.totals()["checks_failed"] == 1


@pytest.mark.parametrize("role", ["wizard", "developer", "function", "", None])
def test_role_check_accepts_only_the_four_provider_roles(role: object) -> None:
    with pytest.raises(ProviderPayloadError, match="role"):
        check_provider_payload([{"role": "user", "content": "u"}, {"role": role, "content": "x"}])
    for ok in ("system", "user", "assistant"):
        check_provider_payload([{"role": "user", "content": "u"}, {"role": ok, "content": "x"}])
