"""The ``inspect-ai`` importer on real Inspect AI eval logs (``.eval`` zips and ``.json``) from the
inspect_ai repository's own tests (tests/data/transcripts/, see docs/SAMPLE_LOGS.md).

Guards: an ``.eval`` zip is read (it used to fail as "not UTF-8"); each sample is a conversation in
``summaries.json`` order; each model event is an observed payload of its reply, its input rebuilt
from the sample's message pool (``input_refs``); the call's usage sits at the reply's row in the
disjoint parts calibration reads, with the 0.3.184 rule on cached tokens; older logs
(``transcript`` holding events, messages without ids) read too; errors name the member.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.calibration import calibrate, provider_input_tokens
from inspector.transcripts import TranscriptError, detect_format, list_conversations, load_transcript, parse_transcript
from inspector.transcripts.inspect_ai import call_usage

DATA = Path(__file__).parents[1] / "data" / "transcripts"
POPULARITY = DATA / "popularity.eval"  # openai/gpt-4o-mini, 10 samples, inspect_ai 0.3.58
DEDUP = DATA / "log_message_deduplication.eval"  # 0.3.135: message_pool + input_refs, tool calls
OLD_JSON = DATA / "log_formats.json"  # 0.3.41 .json: events under sample.transcript


def members(path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(path) as z:
        return {n: json.loads(z.read(n)) for n in z.namelist()}


def rezip(files: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, v in files.items():
            z.writestr(n, json.dumps(v))
    return buf.getvalue()


def test_eval_zips_and_json_logs_are_detected() -> None:
    for path in (POPULARITY, DEDUP, OLD_JSON):
        assert detect_format(path.read_bytes(), path.name) == "inspect-ai"


def test_each_sample_is_a_conversation_in_summaries_order() -> None:
    order = [(s["id"], s["epoch"]) for s in members(POPULARITY)["summaries.json"]]
    infos = list_conversations(POPULARITY)
    assert [c.label for c in infos] == [f"sample {i} epoch {e}" for i, e in order]
    assert order[0] == (5, 1) and all((c.messages, c.user_turns) == (3, 1) for c in infos)


def test_usage_of_the_model_call_sits_at_its_reply() -> None:
    t = load_transcript(POPULARITY, conversation=0)  # samples/5_epoch_1.json
    assert [m["role"] for m in t.messages] == ["system", "user", "assistant"]
    assert t.origins[2] == "samples/5_epoch_1.json.messages[2]"
    # the model event's output.usage, as recorded (no cache fields in this log)
    assert t.usage == {2: {"input_tokens": 63, "output_tokens": 2, "total_tokens": 65}}
    (p,) = t.observed_payloads
    assert (p.reply, p.model, [m["role"] for m in p.messages]) == (2, "openai/gpt-4o-mini", ["system", "user"])
    calls = calibrate(t).calls
    assert calls["provider_tokens"].tolist() == [63] and calls["payload"].tolist() == ["request as logged"]


def test_pooled_inputs_are_rebuilt_from_input_refs() -> None:
    t = load_transcript(DEDUP)
    sample = members(DEDUP)["samples/0_epoch_1.json"]
    # five bash calls then "done": six model events, the k-th sent the first 2k-1 messages
    assert [(p.reply, len(p.messages)) for p in t.observed_payloads] == [(1, 1), (3, 3), (5, 5), (7, 7), (9, 9), (11, 11)]
    assert t.observed_payloads[2].messages == t.messages[:5]
    assert t.messages[1]["tool_calls"] == [{"id": "hardcoded_0", "type": "function",
                                            "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}]
    assert t.messages[2] == {"role": "tool", "content": sample["messages"][2]["content"],
                             "tool_call_id": "hardcoded_0", "name": "bash"}
    # an attachment:// reference in a tool description is put back
    assert t.tools is not None and not any("attachment://" in json.dumps(x) for x in t.tools)


def test_an_old_json_log_with_its_events_under_transcript_reads() -> None:
    t = load_transcript(OLD_JSON)
    assert t.origins[2] == "samples[0].messages[2]"
    assert t.usage == {2: {"input_tokens": 66, "output_tokens": 2, "total_tokens": 68}}
    assert t.observed_payloads[0].origin == "samples[0].transcript.events[5].input"


def test_cached_tokens_follow_the_0_3_184_rule() -> None:
    raw = {"input_tokens": 100, "output_tokens": 5, "total_tokens": 1105,
           "input_tokens_cache_read": 900, "input_tokens_cache_write": 100}
    since = call_usage(raw, cache_included=False)
    assert since == {"input_tokens": 100, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 100,
                     "output_tokens": 5, "total_tokens": 1105}
    assert provider_input_tokens(since) == 1100  # 100 + 900 + 100
    before = call_usage({**raw, "input_tokens": 1000}, cache_included=True)  # OpenAI before 0.3.184
    assert before is not None and before["input_tokens"] == 100 and provider_input_tokens(before) == 1100


def test_the_version_and_provider_choose_the_cache_rule() -> None:
    files = members(POPULARITY)
    sample = files["samples/5_epoch_1.json"]
    event = next(e for e in sample["events"] if e["event"] == "model")
    event["output"]["usage"] = {"input_tokens": 63, "output_tokens": 2, "total_tokens": 65, "input_tokens_cache_read": 40}
    for version, uncached in (("0.3.58", 23), ("0.3.184", 63)):
        header = {**files["header.json"], "eval": {**files["header.json"]["eval"], "packages": {"inspect_ai": version}}}
        data = rezip({"header.json": header, "samples/5_epoch_1.json": sample})
        t = parse_transcript(data, name="x.eval")
        assert t.usage[2]["input_tokens"] == uncached and t.usage[2]["cache_read_input_tokens"] == 40


def test_errors_name_the_file_and_the_member() -> None:
    files = members(POPULARITY)
    bad = {"header.json": files["header.json"], "samples/5_epoch_1.json": {**files["samples/5_epoch_1.json"],
                                                                           "messages": [{"content": "x"}]}}
    with pytest.raises(TranscriptError, match=r"x\.eval: samples/5_epoch_1\.json\.messages\[0\] must be a chat message"):
        parse_transcript(rezip(bad), name="x.eval")
    with pytest.raises(TranscriptError, match=r"x\.eval: a zip archive that is not an Inspect AI \.eval log \(no header\.json"):
        parse_transcript(rezip({"other.json": {}}), name="x.eval")
    broken = io.BytesIO()
    with zipfile.ZipFile(broken, "w") as z:
        z.writestr("header.json", "{not json")
    with pytest.raises(TranscriptError, match=r"x\.eval: header\.json: not JSON"):
        parse_transcript(broken.getvalue(), name="x.eval")


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400), st.integers(min_value=0, max_value=10_000))
def test_damaged_zips_raise_only_a_transcript_error(tail: bytes, cut: int) -> None:
    """Invariant: any bytes that start like a zip (random, or a real .eval cut short) give a
    transcript or a TranscriptError, never another exception."""
    for data in (b"PK\x03\x04" + tail, POPULARITY.read_bytes()[:cut] + tail):
        try:
            parse_transcript(data, name="x.eval")
        except TranscriptError:
            pass


def _ranges(indices: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for i in indices:
        if out and out[-1][1] == i:
            out[-1][1] = i + 1
        else:
            out.append([i, i + 1])
    return out


def test_a_chunked_sample_reads_as_its_single_entry_form() -> None:
    """The chunked shape (inspect_ai ``log/_recorders/chunked/``: a ``sample.json`` shell with
    ``message_refs`` into the ``messages/`` sequence, which is also the events' pool; ``events/`` and
    ``attachments/`` chunks named by their first index; attachments referenced by index), built from
    the real deduplication log as ``chunked_sample`` lays it out, with chunks of 4 items."""
    files = members(DEDUP)
    sample = files["samples/0_epoch_1.json"]
    pool = list(sample["message_pool"])
    ids = [m["id"] for m in pool]
    refs = []
    for m in sample["messages"]:
        if m["id"] not in ids:
            pool.append(m)
            ids.append(m["id"])
        refs.append(ids.index(m["id"]))
    hashes = list(sample["attachments"])

    def renumber(value: Any) -> Any:
        text = json.dumps(value)
        for i, h in enumerate(hashes):
            text = text.replace(f"attachment://{h}", f"attachment://{i}")
        return json.loads(text)

    skip = {"messages", "events", "attachments", "events_data", "metadata", "message_pool"}
    shell = renumber({**{k: v for k, v in sample.items() if k not in skip}, "message_refs": _ranges(refs)})
    chunked = {"header.json": files["header.json"], "summaries.json": files["summaries.json"],
               "samples/0_epoch_1/sample.json": shell,
               "samples/0_epoch_1/attachments/0.json": [sample["attachments"][h] for h in hashes]}
    for kind, items in (("messages", renumber(pool)), ("events", renumber(sample["events"]))):
        for start in range(0, len(items), 4):
            chunked[f"samples/0_epoch_1/{kind}/{start}.json"] = items[start:start + 4]
    a, b = load_transcript(DEDUP), parse_transcript(rezip(chunked), name="x.eval")
    assert len(pool) == 12 and len(sample["events"]) > 4  # the final reply is not pooled; several chunks
    assert b.messages == a.messages and b.usage == a.usage and b.tools == a.tools
    assert [(p.reply, p.messages) for p in b.observed_payloads] == [(p.reply, p.messages) for p in a.observed_payloads]
    assert b.origins[3] == "samples/0_epoch_1.messages[3]"
