"""The header's call count and the stepper's "of N" say the same thing when a call is pending.

Rule (:func:`inspector.report.per_call.calls_words`): the header counts the LLM calls the agent made
(one per assistant reply in the transcript) and, when the transcript ends before a reply, names the
pending next call the stepper also steps to, in the words every face marks it with. Bug class: the
header said "26 LLM calls" while the stepper said "of 27", with nothing saying why.
"""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from inspector.manifest import load_manifest
from inspector.replay import PENDING_WORDS, replay
from inspector.report.per_call import calls_words
from inspector.transcripts import load_transcript

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DEMO = ROOT / "inspector" / "samples" / "demo_support.json"


def test_the_demo_header_counts_its_replies_and_names_the_pending_call_the_stepper_counts() -> None:
    messages = json.loads(DEMO.read_text())["messages"]
    replies = sum(1 for m in messages if m.get("role") == "assistant")  # 26: one LLM call each
    assert messages[-1]["role"] == "user"  # it ends before a reply: one call pending, number `replies`
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    header = next(str(c.value) for c in at.caption if "LLM calls" in str(c.value))
    assert f"· {replies} LLM calls and call {replies} ({PENDING_WORDS}) ·" in header
    assert any(f"of {replies + 1}" in str(md.value) for md in at.markdown)


def test_a_transcript_that_ends_on_a_reply_is_counted_without_a_pending_call(tmp_path: Path) -> None:
    convo = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
             {"role": "user", "content": "and?"}, {"role": "assistant", "content": "done"}]
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"messages": convo}))
    rp = replay(load_manifest(ROOT / "sample_manifests" / "support-demo.yaml"), load_transcript(path))
    assert calls_words(rp) == "2 LLM calls"


def test_a_count_of_thousands_is_grouped_as_the_stepper_groups_it(tmp_path: Path) -> None:
    convo = [m for k in range(1000) for m in ({"role": "user", "content": f"q{k}"},
                                             {"role": "assistant", "content": f"a{k}"})]
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"messages": [*convo, {"role": "user", "content": "last"}]}))
    rp = replay(load_manifest(ROOT / "sample_manifests" / "support-demo.yaml"), load_transcript(path))
    assert calls_words(rp) == f"1,000 LLM calls and call 1000 ({PENDING_WORDS})"
