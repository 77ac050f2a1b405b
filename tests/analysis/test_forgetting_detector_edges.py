"""The forgetting detector's rule at its edges, on hand-built conversations: calls before the first
user message (the preamble), a manifest's tool schemas, a custom extractor, the same identifier in a
reply's text and its tool call, a system text newer than the holder, a row of the turn left out at
the very call that first reads it. Every expected number is counted by hand from the rule in
:mod:`inspector.forgetting`."""

from __future__ import annotations

import dataclasses

import pytest

from inspector.engine.identifiers import Identifier, extract_identifiers
from inspector.forgetting import call_needs, replay_needs
from tests.analysis.test_forgetting import _LOOKUP_TOOL, WINDOW_1, _settings, _tool_name_conversation, _transcript
from tests.builders import ask, asst, tool, user


def _replay(msgs: list[dict], cm: dict | None = None, **kw: object) -> object:
    from inspector.replay import replay

    return replay(kw.pop("settings", None) or _settings(cm or {"type": "stack"}), _transcript(msgs, kw.pop("transcript_tools", None)),
                  counter="estimate", **kw)


def _counts(rp: object, extractor: object = None) -> list[tuple[int, int, int]]:
    needs = call_needs(rp) if extractor is None else call_needs(rp, extractor)  # type: ignore[arg-type]
    return [(c.call, c.needed, c.earlier) for c in needs]


def test_preamble_calls_read_the_rows_before_them_from_the_first_row_skipping_system_text() -> None:
    """Calls 0 and 1 come before the first user message (turn 0). Call 0 (reply = row 1) needs
    ESC-40417 and SEC-88213 from its reply; row 0 (system, sent) holds ESC-40417 but is in the
    preamble and sent, so nothing counts as earlier. Call 1 (reply = row 2) reads row 1 as working
    memory (ESC-40417 and SEC-88213, both sent: not earlier); row 0 is system text, never read as
    working memory. Call 2 (turn 1) needs
    PRJ-7781 from its user message; nothing before holds it."""
    msgs = [{"role": "system", "content": "Escalation code ESC-40417 applies."},
            asst("Hello, code ESC-40417 and ticket SEC-88213."), asst("Still open."),
            user("What is PRJ-7781?"), asst("PRJ-7781 is a project.")]
    rp = _replay(msgs)
    assert [(f.turn, f.at) for f in rp.frames] == [(0, 1), (0, 2), (1, 4)]
    assert _counts(rp) == [(0, 2, 0), (1, 2, 0), (2, 1, 0)]


def test_a_preamble_row_zero_that_is_not_system_text_is_working_memory() -> None:
    """The transcript opens with the agent's own message (row 0, the reply of call 0). Call 1 reads
    row 0 as working memory: SEC-88213, needed once, held by row 0 but sent, so not earlier."""
    rp = _replay([asst("Ticket SEC-88213 opened."), asst("Done."), user("ok?"), asst("fine")])
    assert [(f.turn, f.at) for f in rp.frames] == [(0, 0), (0, 1), (1, 3)]
    assert _counts(rp) == [(0, 1, 0), (1, 1, 0), (2, 0, 0)]


def test_a_tool_schema_the_manifest_declares_is_visible_text() -> None:
    """The transcript has no schemas; the manifest declares ``lookup_order_status`` and the replay
    sends the manifest's tools: the name is shown by the payload at the last call, so not forgotten
    (the control, with no schema at all, is in test_forgetting.py)."""
    from inspector.manifest import settings_from_dict

    spec = {"context_manager": WINDOW_1, "models": [{"model": "gpt-4o", "context_window": 128_000}],
            "tools": _LOOKUP_TOOL}
    rp = _replay(_tool_name_conversation(), settings=settings_from_dict({"kind": "Agent", "spec": spec}),
                 tools="manifest")
    assert rp.settings.tools is not None and rp.transcript.tools is None
    last = call_needs(rp)[-1]
    assert (last.needed, last.earlier, last.forgotten) == (1, 1, [])


_WEATHER_TOOL = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
                                                   "parameters": {"type": "object", "properties": {}}}}]


@pytest.mark.parametrize("tools_from", ["manifest", "transcript"])
def test_a_tool_schema_that_was_not_sent_shows_the_model_nothing(tools_from: str) -> None:
    """The transcript's schemas name ``lookup_order_status``; the manifest's name only ``get_weather``.
    With the manifest's tools in force the transcript's schema is never sent, so the name, held only by
    message 1 (dropped by the one-turn window), is a loss at the last call; with the transcript's tools
    it is still shown by the schema, so nothing is forgotten."""
    from inspector.manifest import settings_from_dict

    spec = {"context_manager": WINDOW_1, "models": [{"model": "gpt-4o", "context_window": 128_000}],
            "tools": _WEATHER_TOOL}
    rp = _replay(_tool_name_conversation(), transcript_tools=_LOOKUP_TOOL,
                 settings=settings_from_dict({"kind": "Agent", "spec": spec}), tools=tools_from)
    assert rp.agent is not None and rp.agent.tools == tools_from
    last = call_needs(rp)[-1]
    assert rp.frames[last.call].at == 7 and 1 not in rp.frames[last.call].refs
    got = [(x.identifier, x.message) for x in last.forgotten]
    assert got == ([("lookup_order_status", 1)] if tools_from == "manifest" else [])


def _nothing(text: str) -> list[Identifier]:
    return []


def test_a_custom_extractor_reads_replies_and_tool_arguments_and_is_never_cached_as_the_default() -> None:
    """Call 0's reply asks ``lookup`` with a long argument naming ORD-12345. The default extractor
    finds it (needed 1 at call 0); an extractor that finds nothing finds nothing, in the reply's text
    and in the arguments alike (a long value is not a quoted identifier), and asking for it first
    does not hand the default's lists to a later default call, nor the reverse."""
    msgs = [user("Find my order."), ask("c1", name="lookup", args='{"query": "look up ORD-12345 today"}'),
            tool("c1", "shipped"), asst("It shipped.")]
    rp = _replay(msgs)
    assert [(c.call, c.needed) for c in replay_needs(rp, _nothing)] == [(0, 0), (1, 0)]
    assert [(c.call, c.needed) for c in replay_needs(rp)] == [(0, 1), (1, 1)]
    assert [(c.call, c.needed) for c in replay_needs(rp, _nothing)] == [(0, 0), (1, 0)]


def test_an_empty_identifier_is_held_by_every_message_and_never_forgotten() -> None:
    """An extractor that returns one empty identifier for every text: the empty key is in every
    text, so from call 1 on an earlier message holds it (earlier 1), and a payload always shows it."""
    def empty(text: str) -> list[Identifier]:
        return [Identifier("", "empty")]

    rp = _replay([user("a"), asst("b"), user("c"), asst("d")], WINDOW_1)
    needs = call_needs(rp, empty)
    assert [(c.call, c.needed, c.earlier, c.forgotten) for c in needs] == [(0, 1, 0, []), (1, 1, 1, [])]


def test_an_identifier_in_a_replys_text_and_its_tool_call_is_needed_in_both() -> None:
    """ORD-12345 is held by turn 1 only (rows 0-1); a one-turn window drops it by turn 3, whose reply
    (row 5) names it in its text and in its tool call's arguments: lost at call 2, needed in both."""
    msgs = [user("My order is ORD-12345."), asst("Noted ORD-12345."), user("a"), asst("b"), user("status?"),
            ask("c1", content="Checking ORD-12345.", name="lookup", args='{"order": "ORD-12345"}'),
            tool("c1", "shipped"), asst("It shipped.")]
    rp = _replay(msgs, WINDOW_1)
    lost = [(x.call, x.identifier, x.needed_in, x.message) for c in call_needs(rp) for x in c.forgotten]
    assert lost == [(2, "ORD-12345", ("next_reply", "next_tool_call"), 1)]


def test_the_holder_named_is_the_newest_not_sent_one_that_is_not_system_text() -> None:
    """SEC-88213 is held by row 0 (user) and row 2 (a system message in the middle): under the
    manifest's system band and a one-turn window neither is sent at the last call (reply = row 8);
    the newest holder is the system text, so the one named is row 0."""
    msgs = [user("My ticket is SEC-88213."), asst("Noted."), {"role": "system", "content": "SEC-88213 is urgent."},
            user("a"), asst("b"), user("c"), asst("d"), user("what next?"), asst("Closing SEC-88213.")]
    rp = _replay(msgs, settings=_settings(WINDOW_1, system_prompt="You are a helper."), system="manifest")
    lost = [(x.call, x.identifier, x.message) for c in call_needs(rp) for x in c.forgotten]
    assert lost == [(3, "SEC-88213", 0)]


def test_a_row_of_the_turn_left_out_at_the_call_that_first_reads_it_counts_as_earlier() -> None:
    """Row 0 (turn 1) holds ORD-12345; in turn 2 the tool result (row 4) holds it too. The last
    call (reply = row 5, needing it) is rewritten to send rows 2-3 only: row 4, working memory first
    read at this call, is not sent, and row 0 is before the turn. Holders counting as earlier:
    1 before the turn + 1 in the turn not sent = 2; none sent as it is, so it is lost here, needed
    in the working memory and the next reply, the newest not-sent holder being row 4."""
    msgs = [user("Order ORD-12345."), asst("Noted."), user("look it up"), ask("c1", name="lookup"),
            tool("c1", "ORD-12345 shipped"), asst("ORD-12345 shipped.")]
    rp = _replay(msgs)
    assert [f.at for f in rp.frames] == [1, 3, 5]
    rp.frames[2] = dataclasses.replace(rp.frames[2], segments=((2, 2, "user", None, None),))
    last = call_needs(rp)[2]
    assert (last.needed, last.earlier) == (1, 1)
    assert [(x.identifier, x.needed_in, x.message) for x in last.forgotten] == \
        [("ORD-12345", ("working_memory", "next_reply"), 4)]


def test_an_identifier_the_user_message_and_the_working_memory_both_need_is_needed_in_both() -> None:
    """ORD-12345 is in row 0 (turn 1), the user message of turn 2 (row 2) and its tool result (row
    4). The last call (reply = row 5) is rewritten to send row 1 only: every holder before it is
    left out, so it is lost there, needed in the user message, the working memory and the reply."""
    msgs = [user("Order ORD-12345."), asst("Noted."), user("look up ORD-12345"), ask("c1", name="lookup"),
            tool("c1", "ORD-12345 shipped"), asst("ORD-12345 shipped.")]
    rp = _replay(msgs)
    rp.frames[2] = dataclasses.replace(rp.frames[2], segments=((1, 1, "history", None, None),))
    lost = [(x.call, x.identifier, x.needed_in, x.message) for c in call_needs(rp) for x in c.forgotten]
    assert lost == [(2, "ORD-12345", ("user", "working_memory", "next_reply"), 4)]


def test_a_row_sent_only_as_its_replacement_does_not_show_its_text() -> None:
    """The tool result (row 2) is the only earlier holder of ORD-12345; the call whose reply (row 3)
    names it is rewritten to send row 2 as a cleared placeholder (``replaced``): the identifier is
    lost, with the replacement's words as the reason."""
    msgs = [user("look it up"), ask("c1", name="lookup"), tool("c1", "ORD-12345 shipped"), asst("ORD-12345 shipped.")]
    rp = _replay(msgs)
    assert [f.at for f in rp.frames] == [1, 3]
    own = {"role": "tool", "tool_call_id": "c1", "content": "[cleared]"}
    rp.frames[1] = dataclasses.replace(rp.frames[1], replaced=((2, "tool-result-cleared"),),
                                       segments=((0, 2, "history", None, None),
                                                 (2, 1, "working_memory", "tool-result-cleared", own)))
    lost = [(x.call, x.identifier, x.needed_in, x.message, x.reason) for c in call_needs(rp) for x in c.forgotten]
    assert lost == [(1, "ORD-12345", ("working_memory", "next_reply"), 2, "tool result cleared (a placeholder was sent)")]


_BOOK_TOOL = [{"type": "function", "function": {"name": "book", "description": "Cities: zürich, genève.",
                                               "parameters": {"type": "object", "properties": {}}}}]


def test_a_tool_schema_shows_a_non_ascii_identifier_as_written() -> None:
    """``zürich`` (a short tool argument, so an identifier) is held by row 0 only, out of a one-turn
    window by turn 3; the schema's description writes it as is, so it is shown, not forgotten; with
    no schema it is lost at call 2 (needed by the next tool call)."""
    msgs = [user("Book a trip to zürich."), asst("Noted."), user("a"), asst("b"), user("go"),
            ask("c1", name="book", args='{"city": "zürich"}'), tool("c1", "booked"), asst("done")]
    shown = call_needs(_replay(msgs, WINDOW_1, transcript_tools=_BOOK_TOOL))
    assert [x for c in shown for x in c.forgotten] == []
    lost = [(x.call, x.identifier, x.needed_in, x.message) for c in call_needs(_replay(msgs, WINDOW_1))
            for x in c.forgotten]
    assert lost == [(2, "zürich", ("next_tool_call",), 0)]


def test_a_reply_in_several_text_parts_is_read_as_its_parts_joined_by_new_lines() -> None:
    """The last reply is two text parts, the second ``SEC-88213``; row 0 (dropped by the one-turn
    window) holds it: lost at call 3, read as the second part's own word."""
    reply = {"role": "assistant", "content": [{"type": "text", "text": "Closing:"}, {"type": "text", "text": "SEC-88213"}]}
    msgs = [user("My ticket is SEC-88213."), asst("Noted."), user("a"), asst("b"), user("c"), asst("d"),
            user("what next?"), reply]
    lost = [(x.call, x.identifier, x.needed_in, x.message) for c in call_needs(_replay(msgs, WINDOW_1))
            for x in c.forgotten]
    assert lost == [(3, "SEC-88213", ("next_reply",), 0)]


def test_the_extractor_is_called_once_per_distinct_text_it_reads() -> None:
    """Two identical turns: the user message, the ask (read whole as working memory), its result and
    the reply repeat word for word. The texts read are five distinct ones — the user message, the
    ask's whole text, the result (also the reply's text), the ask's empty content (its reply text)
    and the argument value ``ORD-12345`` — so the extractor runs five times, not once per use (12:
    each row's whole text, each reply's content again, each argument value)."""
    turn = [user("Find ORD-12345"), ask("c1", name="lookup", args='{"id": "ORD-12345"}'),
            tool("c1", "ORD-12345 shipped"), asst("ORD-12345 shipped")]
    rp = _replay(turn + [dict(m) for m in turn])
    seen: list[str] = []

    def counting(text: str) -> list[Identifier]:
        seen.append(text)
        return extract_identifiers(text)

    assert call_needs(rp, counting) == call_needs(rp, extract_identifiers)
    assert sorted(seen) == sorted(["Find ORD-12345", '\nlookup {"id": "ORD-12345"}', "ORD-12345 shipped", "",
                                   "ORD-12345"])


class _CountingHolders(list):  # type: ignore[type-arg]
    """Holder indices that count how many of them are read."""

    reads = 0

    def __getitem__(self, k: object) -> object:
        type(self).reads += 1
        return super().__getitem__(k)  # type: ignore[index]


def test_the_newest_unsent_holder_skips_a_sent_runs_holders_at_once() -> None:
    """A key held by rows 0..999, rows 1..999 sent as one run, the call's reply at row 1 000: the
    newest holder not sent is row 0, found by two bisections (below the reply, below the sent run;
    10 reads each over 1 000 holders) and two reads (rows 999 and 0): 22, not the 1 000 of a walk
    over the sent holders."""
    import types

    from inspector.forgetting import _newest_unsent_holder
    from inspector.replay.runs import IndexRuns

    h = _CountingHolders(range(1000))
    fr = types.SimpleNamespace(sent=IndexRuns([(1, 1000)]), at=1000)
    msgs = [{"role": "user"}] * 1000
    _CountingHolders.reads = 0
    assert _newest_unsent_holder(h, fr, msgs) == 0  # type: ignore[arg-type]
    assert _CountingHolders.reads <= 22
    assert _newest_unsent_holder(h, types.SimpleNamespace(sent=IndexRuns([(0, 1000)]), at=1000), msgs) is None  # type: ignore[arg-type]
