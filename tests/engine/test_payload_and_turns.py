"""The assembled payload and the turn lifecycle: docs/design.md §3.9–§3.11 through ContextEngine."""

from __future__ import annotations

import json

import pytest

from builders import T, ask, asst, tool, user
from inspector.engine.archive import Archive, ArchiveError
from inspector.engine import ContextEngine
from inspector.manifest import settings_from_dict


class Recorder:
    def __init__(self) -> None:
        self.inputs: list[list[dict]] = []

    def summarize(self, msgs: list[dict]) -> str:
        self.inputs.append(msgs)
        return f"summary #{len(self.inputs)}"


def engine(spec: dict | None = None, *, summarizer: object = "drop", counter: str = "estimate") -> ContextEngine:
    settings = settings_from_dict({"kind": "Agent", "spec": spec or {}}).settings
    return ContextEngine(settings, counter=counter, summarizer=summarizer)


def play_turn(e: ContextEngine, rows: list[dict]) -> None:
    """Feed one committed turn: a user row then its in-turn rows."""
    e.user(rows[0])
    for r in rows[1:]:
        e.record(r)
    e.commit()


def test_assembly_order_user_then_tool_round() -> None:
    e = engine()
    e.user("Who is POTUS?")
    e.record(ask("call_1"))
    e.record(tool("call_1", "search result"))
    out = e.assemble()
    assert [m["role"] for m in out.messages] == ["user", "assistant", "tool"]
    assert out.messages[-1]["content"] == "search result"
    assert out.bands["working_memory"] > 0 and out.bands["user"] > 0 and out.check == "ok"


def test_empty_state_sends_hello() -> None:
    assert engine().assemble().messages == [{"role": "user", "content": "Hello"}]


def test_hitl_pause_then_resume_pairs_across_the_boundary() -> None:
    e = engine({"context_manager": "stack"})
    e.user("q")
    e.record(ask("call_1"))
    rec = e.finalize_turn(None)
    assert rec is not None and [m["role"] for m in e.conversation.committed_messages] == ["user", "assistant"]
    assert e.conversation.working == [] and e.conversation.last_user_text == ""
    e.record(tool("call_1", "ok"))
    out = e.assemble()
    assert [m["role"] for m in out.messages[-3:]] == ["user", "assistant", "tool"]
    assert out.messages[-1]["content"] == "ok"
    e.record(asst("Your flight is booked!"))
    e.finalize_turn("Your flight is booked!")
    committed = e.conversation.committed_messages
    assert sum(1 for m in committed if m["role"] == "user") == 1
    assert committed[-1]["content"] == "Your flight is booked!"
    assert e.finalize_turn(None) is None  # nothing to fold → nothing committed


def fat_tool_turn(k: int) -> list[dict]:
    return [user(f"q{k}"), ask(f"old_{k}"), tool(f"old_{k}", f"old_{k}-result " + "x" * 400), asst(f"done {k}")]


def test_summarising_never_compresses_the_live_round() -> None:
    rec = Recorder()
    spec = {"context_manager": {"type": "summarising", "params": {
        "keep_turns": 2, "trimmer": {"max_tokens": 500, "reserve_tokens": 0, "safety_margin_ratio": 0}}}}
    e = engine(spec, summarizer=rec)
    for k in range(6):
        e.user(fat_tool_turn(k)[0])
        for r in fat_tool_turn(k)[1:]:
            e.record(r)
        e.commit()
    e.user("now")
    e.record(ask("live"))
    e.record(tool("live", "live-result"))
    out = e.assemble()
    seen = json.dumps(rec.inputs)
    assert "old_0" in seen and "live-result" not in seen
    text = json.dumps(out.messages)
    assert "live-result" in text and "old_5-result" in text and "old_0-result" not in text
    assert out.messages[-1]["content"] == "live-result" and out.check == "ok"


def test_tiny_trimmer_drops_history_before_the_live_round() -> None:
    spec = {"context_manager": {"type": "stack", "params": {"trimmer": {"max_tokens": 40, "reserve_tokens": 0}}}}
    e = engine(spec)
    for k in range(4):
        play_turn(e, fat_tool_turn(k))
    e.user("go")
    e.record(ask("live"))
    e.record(tool("live", "keep-me"))
    out = e.assemble()
    assert out.messages[-1]["content"] == "keep-me" and out.trimmed and out.check == "ok"
    assert all(r.source in ("history",) for r in out.trimmed)


def test_two_calls_on_one_engine_summarise_once() -> None:
    class Fixed(Recorder):
        def summarize(self, msgs: list[dict]) -> str:
            self.inputs.append(msgs)
            return "the same summary"

    rec = Fixed()
    e = engine({"context_manager": {"type": "summarising", "params": {"keep_turns": 2}}}, summarizer=rec)
    for i in range(3):
        play_turn(e, [user(f"u{i} " + "x" * 100), asst(f"a{i} " + "y" * 100)])
    e.cm.keep_turns = 1  # so a turn, not only the previous summary, is older than keep_turns (else Q23 reuses)
    e.user("now")
    e.cm.summary_threshold = e.counter.count_history(e.conversation.committed_messages) - 1
    e.cm._cache = None
    before = len(rec.inputs)
    first = e.assemble()
    second = e.assemble()
    assert len(rec.inputs) == before + 1
    assert (first.decision.action, second.decision.action) == ("summarized", "reused")
    assert first.messages == second.messages and first.messages[0] is second.messages[0]


def test_turn_commits_and_tool_rows_are_visible_next_turn() -> None:
    e = engine({"context_manager": "stack"})
    for i in range(3):
        play_turn(e, T(i))
    committed = e.conversation.committed_messages
    assert [m["role"] for m in committed].count("user") == 3
    assert [m["role"] for m in committed].count("assistant") == 3
    e.user("follow-up")
    e.record(ask("c1"))
    e.record(tool("c1", "res"))
    e.record(asst("answer"))
    e.commit("answer")  # equal to the recorded text: not committed twice
    assert [m["role"] for m in e.conversation.committed_messages][-4:] == ["user", "assistant", "tool", "assistant"]
    assert e.conversation.working == []
    e.user("next")
    out = e.assemble()
    assert sum(1 for m in out.messages if m["role"] == "user") >= 4
    assert any(m["role"] == "tool" for m in out.messages)


@pytest.mark.parametrize(("spec", "turns", "expected_users"), [
    ({"context_manager": {"type": "sliding-window", "params": {"keep_turns": 3}}}, 8, ["u5", "u6", "u7"]),
    ({"context_manager": {"type": "sliding-window", "params": {"window_size": 1}}}, 3, ["u2"]),
    ({}, 12, [f"u{i}" for i in range(2, 12)]),  # default summarising, no engine → drop, keeps 10
    ({"context_manager": {"type": "summarising", "params": {"keep_turns": 2, "summarizer": "drop"}}}, 6, ["u4", "u5"]),
])
def test_write_back_caps_the_committed_log(spec: dict, turns: int, expected_users: list[str]) -> None:
    e = engine(spec)
    for i in range(turns):
        play_turn(e, [user(f"u{i}"), asst(f"a{i}")])
    users = [m["content"] for m in e.conversation.committed_messages if m["role"] == "user"]
    assert users == expected_users


def test_stack_write_back() -> None:
    e = engine({"context_manager": {"type": "stack", "params": {"max_messages": 4}}})
    for i in range(6):
        play_turn(e, [user(f"q{i}"), asst(f"a{i}")])
    assert [m["content"] for m in e.conversation.committed_messages] == ["q4", "a4", "q5", "a5"]


def test_archive_keeps_every_folded_leaf() -> None:
    e = engine({"context_manager": {"type": "summarising", "params": {"keep_turns": 2}}}, summarizer=Recorder())
    for i in range(6):
        play_turn(e, [user(f"q{i}"), asst(f"a{i}")])
    arch = e.conversation.archive
    archived = [m["content"] for m in arch.archived_messages()]
    assert archived == [x for i in range(6) for x in (f"q{i}", f"a{i}")]
    committed = e.conversation.committed_messages
    assert committed[0]["content"].startswith("[Conversation summary — ")
    assert [m["content"] for m in committed[1:]] == ["q4", "a4", "q5", "a5"]
    snap = json.loads(json.dumps(arch.snapshot()))
    again = Archive.load(snap)
    assert again.projection() == arch.projection() and again.archived_messages() == arch.archived_messages()


def test_edited_or_truncated_snapshot_is_refused() -> None:
    e = engine({"context_manager": {"type": "sliding-window", "params": {"keep_turns": 1}}})
    for i in range(3):
        play_turn(e, [user(f"q{i}"), asst(f"a{i}")])
    snap = e.conversation.archive.snapshot()
    edited = json.loads(json.dumps(snap))
    leaf = next(n for n in edited["nodes"] if n["kind"] == "leaf")
    leaf["messages"][0]["content"] = "something else"
    with pytest.raises(ArchiveError, match="checksum"):
        Archive.load(edited)
    # a file cut off mid-write: the text itself is handed to load, which must refuse it
    text = json.dumps(snap)
    with pytest.raises(ArchiveError, match="not valid JSON"):
        Archive.load(text[: len(text) // 2])
    # a snapshot that parses but lost its newest node: the checksum catches it
    cut = json.loads(text)
    cut["nodes"] = cut["nodes"][:-1]
    with pytest.raises(ArchiveError, match="checksum"):
        Archive.load(cut)
    assert Archive.load(text).projection() == e.conversation.archive.projection()  # the intact one loads


def test_system_band_is_rebuilt_not_accumulated() -> None:
    e = engine({"system_prompt": "You are helpful.", "context": {"policy": "Be brief."}})
    e.user("a")
    one = e.assemble().messages[0]["content"]
    e.commit()
    e.user("b")
    two = e.assemble().messages[0]["content"]
    assert one == two and one.count("Be brief.") == 1 and "[policy] Be brief." in one


def test_bands_add_up_and_budget_is_recorded() -> None:
    e = engine({"system_prompt": "S" * 400, "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]})
    play_turn(e, [user("u" * 400), asst("a" * 400)])
    e.user("q" * 40)
    out = e.assemble()
    assert out.bands["system"] == 104 and out.bands["user"] == 14 and out.bands["history"] == 208
    assert out.bands["tool_schemas"] > 0
    assert out.payload_tokens == e.counter.count(out.messages) + out.bands["tool_schemas"]
    assert out.headroom == out.budget.max_tokens - out.payload_tokens - out.budget.reserve - out.budget.margin


def test_unpaired_custom_payload_raises_even_under_O(tmp_path) -> None:  # noqa: ANN001, N802
    import subprocess
    import sys

    code = ("from inspector.engine.pairing import check_provider_payload\n"
            "from inspector.engine.types import ProviderPayloadError\n"
            "try:\n"
            "    check_provider_payload([{'role':'user','content':'q'},{'role':'assistant','content':'',"
            "'tool_calls':[{'id':'call_1','type':'function','function':{'name':'f','arguments':'{}'}}]}])\n"
            "except ProviderPayloadError as e:\n"
            "    print('raised', 'tool results' in str(e))\n")
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "raised True"


def test_archive_stats_match_the_tree_after_folds_and_splits() -> None:
    e = engine({"context_manager": {"type": "stack", "params": {"max_messages": 3}}})
    for i in range(5):
        play_turn(e, [user(f"q{i}"), ask(f"c{i}"), tool(f"c{i}", "r"), asst(f"a{i}")])
    arch = e.conversation.archive
    st = arch.stats()
    assert st["leaves"] == len(arch.base_leaves())
    assert st["archived_messages"] == len(arch.archived_messages()) == 20
    assert st["folds"] == sum(1 for n in arch.nodes.values() if n.kind == "fold") > 0
    assert Archive.load(arch.snapshot()).stats() == st


def test_tool_schemas_are_tokenised_once_while_they_stay_the_same() -> None:
    """The schemas go out with every call; the tiktoken counter keeps the last text's count, so a
    replay tokenises them once — and a changed schema list is counted afresh, as a new counter would."""
    from inspector.engine.tokens import TiktokenCounter

    class Counting(TiktokenCounter):
        texts = 0

        def text_tokens(self, text: str) -> int:
            Counting.texts += 1
            return super().text_tokens(text)

    tools = [{"type": "function", "function": {"name": "lookup", "description": "find an order",
                                               "parameters": {"type": "object", "properties": {}}}}]
    c = Counting(model="gpt-4o")
    first = c.count_tools(tools)
    assert [c.count_tools(tools) for _ in range(5)] == [first] * 5
    assert Counting.texts == 1
    more = [*tools, {"type": "function", "function": {"name": "refund", "parameters": {}}}]
    assert c.count_tools(more) == TiktokenCounter(model="gpt-4o").count_tools(more) != first
    assert Counting.texts == 2


def test_a_tool_call_name_is_tokenised_once_per_counter_and_every_count_is_unchanged() -> None:
    """An agent calls the same few tools over and over: the tiktoken counter encodes each name once
    (its arguments, which differ, every time), and every message's count equals a fresh counter's."""
    from inspector.engine.tokens import TiktokenCounter

    class Counting(TiktokenCounter):
        texts: list[str] = []

        def text_tokens(self, text: str) -> int:
            Counting.texts.append(text)
            return super().text_tokens(text)

    asks = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": f"c{i}_{k}", "type": "function", "function": {"name": name, "arguments": f'{{"q": {i}}}'}}
        for k, name in enumerate(("lookup", "bash")[: 1 + i % 2])]} for i in range(6)]
    c = Counting(model="gpt-4o")
    assert [c.unit(m) for m in asks] == [TiktokenCounter(model="gpt-4o").unit(m) for m in asks]
    assert Counting.texts.count("lookup") == 1 and Counting.texts.count("bash") == 1
    assert sum(t.startswith('{"q"') for t in Counting.texts) == sum(len(m["tool_calls"]) for m in asks)
