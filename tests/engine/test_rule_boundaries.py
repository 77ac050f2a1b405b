"""Boundary values of small stated rules that a one-character change used to slip past every test
(the mutation check, docs/mutation.md). Each expectation is written from the rule as documented, at the edge:
the smallest value the rule takes and the largest it refuses.

* identifiers (``inspector/engine/identifiers.py``, rule 6): a bare number of **5+** digits is an
  id (an order or ticket number), 4 digits is not; a tool-call argument value of **3–60**
  characters with no space counts itself (airport codes ``SFO``), 2 does not; a numeric argument
  counts from **10 000**.
* OpenAI logs (``inspector/transcripts/openai_log.py``): a request continues the conversation only
  when it begins with *every* row imported so far, the previous reply included; a regenerated
  request (same question, another reply) starts a new conversation.
* secrets (``inspector/redact.py``): an env/config assignment to a secret-named key masks a value of
  **4+** characters (``DB_PASSWORD=hunter2``); 3 characters stay; a masked value keeps a 3-character
  prefix only from 12 characters on.
"""

from __future__ import annotations

import json

import pytest

from inspector.engine.identifiers import (
    Identifier,
    argument_identifiers,
    extract_identifiers,
    message_text,
    tool_call_texts,
)
from inspector.redact import mask_secrets, mask_text
from inspector.transcripts import parse_transcript


# --- identifiers -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "found"), [
    ("order 48213 shipped", [Identifier("48213", "id")]),  # 5 digits: an order number
    ("order 4821 shipped", []),  # 4 digits: a small number
    ("ticket 1234567 open", [Identifier("1234567", "id")]),
    ("code A1B2 and AB1", [Identifier("A1B2", "id")]),  # a mixed token counts from 4 characters
])
def test_a_bare_number_is_an_identifier_from_five_digits(text: str, found: list[Identifier]) -> None:
    assert extract_identifiers(text) == found


@pytest.mark.parametrize(("value", "found"), [
    ("SFO", [Identifier("SFO", "quoted")]),  # 3 characters: tracked (an airport code)
    ("NY", []),  # 2 characters: not
    ("x" * 60, [Identifier("x" * 60, "quoted")]),  # 60: still one value
    ("x" * 61, []),  # 61: too long to be a name
    ("new york", []),  # a space: prose, not a code
])
def test_a_short_argument_value_is_tracked_from_three_characters(value: str, found: list[Identifier]) -> None:
    assert argument_identifiers(json.dumps({"origin": value})) == found


def test_both_airport_codes_of_a_flight_search_are_tracked() -> None:
    idents = argument_identifiers(json.dumps({"origin": "SFO", "destination": "JFK", "cabin": "Y"}))
    assert [i.text for i in idents] == ["SFO", "JFK"]


@pytest.mark.parametrize(("number", "found"), [(10_000, ["10000"]), (9_999, []), (-10_000, ["-10000"])])
def test_a_numeric_argument_counts_from_ten_thousand(number: int, found: list[str]) -> None:
    assert argument_identifiers(json.dumps({"order_id": number})) == [Identifier(f, "id") for f in found]


# the rules' order and overlaps (from mutmut's survivors, docs/mutation.md §4)
@pytest.mark.parametrize(("text", "found"), [
    # a span an earlier rule claimed is not matched again, but a match that only touches it is kept
    ('ID48213"blue-green rollout"', [Identifier("ID48213", "id"), Identifier("blue-green rollout", "quoted")]),
    ('"blue-green rollout"ID48213', [Identifier("blue-green rollout", "quoted"), Identifier("ID48213", "id")]),
    # after an overlapped match, the same rule's later matches still count
    ('"SEC-88213" and ABC123', [Identifier("SEC-88213", "quoted"), Identifier("ABC123", "id")]),
    # a quoted text is its inner text, for every kind of quote
    ("deploy `blue-green` now", [Identifier("blue-green", "quoted")]),
    # a short id is skipped, not the end of the search; so is a quoted run of dots
    ("codes a1b and SEC-88213", [Identifier("SEC-88213", "id")]),
    ('"..." then "XXX" then "blue"', [Identifier("XXX", "quoted"), Identifier("blue", "quoted")]),
    # each identifier once (case-folded), in order of first appearance whatever rule found it
    ("48213, again 48213", [Identifier("48213", "id")]),
    ("ID48213 at https://x.io/a and retryBudget", [Identifier("ID48213", "id"), Identifier("https://x.io/a", "url"),
                                                   Identifier("retryBudget", "word")]),
])
def test_rules_claim_spans_in_order_and_report_each_identifier_once(text: str, found: list[Identifier]) -> None:
    assert extract_identifiers(text) == found


@pytest.mark.parametrize(("arguments", "found"), [
    ("order 48213 to SFO", [Identifier("48213", "id")]),  # not JSON: read as plain text
    (json.dumps({"codes": ["SFO", "JFK"], "again": "SFO"}), [Identifier("SFO", "quoted"), Identifier("JFK", "quoted")]),
    (json.dumps({"note": "order 48213 please"}), [Identifier("48213", "id")]),  # a value with spaces: its identifiers
    (json.dumps({"trip": {"legs": [{"to": "LHR"}]}, "n": 2}), [Identifier("LHR", "quoted")]),
])
def test_argument_values_are_read_at_every_depth(arguments: str, found: list[Identifier]) -> None:
    assert argument_identifiers(arguments) == found


def test_a_message_is_read_as_its_content_parts_and_tool_calls() -> None:
    """Everything the model reads, as written: text parts as text, other parts and non-string
    content as JSON that keeps non-ASCII letters and writes what JSON cannot hold as text."""
    msg = {"role": "assistant", "content": [{"type": "text", "text": "see"}, {"type": "image", "alt": "Zoë", "raw": b"x"},
                                            "raw"],
           "tool_calls": [{"id": "c1", "function": {"name": "lookup", "arguments": '{"id": "ABC123"}'}},
                          {"id": "c2", "function": {"name": "book", "arguments": {"seat": "12A", "who": "Zoë",
                                                                                   "raw": b"y"}}},
                          {"id": "c3"}, "not a call"]}
    assert tool_call_texts(msg) == [("lookup", '{"id": "ABC123"}'), ("book", '{"seat": "12A", "who": "Zoë", "raw": "b\'y\'"}')]
    assert message_text(msg) == ('see\n{"type": "image", "alt": "Zoë", "raw": "b\'x\'"}\nraw\nlookup {"id": "ABC123"}\n'
                                 'book {"seat": "12A", "who": "Zoë", "raw": "b\'y\'"}')
    assert message_text({"role": "user", "content": "plain", "tool_calls": [
        {"function": {"name": "f", "arguments": "{}"}}]}) == "plain\nf {}"
    assert message_text({"role": "tool", "content": {"k": "é", "raw": b"z"}}) == '{"k": "é", "raw": "b\'z\'"}'
    assert message_text({"role": "user", "content": None}) == ""
    assert tool_call_texts({"role": "assistant", "tool_calls": "x"}) == []
    assert tool_call_texts({"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}) == [("", "{}")]


# --- OpenAI logs: when a request continues the conversation ------------------------------------------
def _call(messages: list[dict], reply: str) -> str:
    return json.dumps({"request": {"model": "gpt-4o", "messages": messages},
                       "response": {"choices": [{"message": {"role": "assistant", "content": reply}}]}})


def _conversations(*lines: str) -> list[int]:
    t = parse_transcript("\n".join(lines) + "\n", name="calls.jsonl")
    assert t.format == "openai-log"
    return [c.messages for c in t.conversations]


def test_a_request_that_does_not_repeat_the_previous_reply_starts_a_new_conversation() -> None:
    q = {"role": "user", "content": "Where is order 7?"}
    first = _call([q], "It ships tomorrow.")
    # regenerated: the same question answered again, then a follow-up — the earlier reply is not in it
    regenerated = _call([q, {"role": "assistant", "content": "It shipped today."},
                         {"role": "user", "content": "Thanks"}], "You're welcome.")
    assert _conversations(first, regenerated) == [2, 4]
    # the control: the follow-up repeats the reply it follows, so it continues the one conversation
    continued = _call([q, {"role": "assistant", "content": "It ships tomorrow."},
                       {"role": "user", "content": "Thanks"}], "You're welcome.")
    assert _conversations(first, continued) == [4]


def test_a_request_shorter_than_the_conversation_so_far_starts_a_new_one() -> None:
    q = {"role": "user", "content": "hi"}
    assert _conversations(_call([q], "hello"), _call([q], "hello again")) == [2, 2]


# --- secrets --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "shown"), [
    ("DB_PASSWORD=hunter2", "DB_PASSWORD=****"),  # 7 characters
    ("DB_PASSWORD=ab12", "DB_PASSWORD=****"),  # 4: the shortest value masked
    ("DB_PASSWORD=a12", "DB_PASSWORD=a12"),  # 3: too short to be a secret
    ("API_TOKEN: x9z8y7w6v5u4", "API_TOKEN: x9z…****"),  # 12 characters: a 3-character prefix stays
    ("API_TOKEN: x9z8y7w6v5u", "API_TOKEN: ****"),  # 11: nothing of it stays
    ("password: required", "password: required"),  # one short word of letters: prose
])
def test_an_assigned_secret_is_masked_from_four_characters(text: str, shown: str) -> None:
    assert mask_text(text) == shown


def test_a_secret_in_an_exported_record_is_masked_too() -> None:
    assert mask_secrets({"env": "DB_PASSWORD=hunter2 HOST=db1", "password": "abcd"}) == {
        "env": "DB_PASSWORD=**** HOST=db1", "password": "****"}


# --- OpenAI logs: what one conversation records (mutmut's survivors, docs/mutation.md §4) -------------
TOOL = {"type": "function", "function": {"name": "lookup", "description": "find", "parameters": {"type": "object"}}}


def test_an_openai_log_records_rows_origins_requests_tools_and_models() -> None:
    s, u1, u2 = ({"role": "system", "content": "S"}, {"role": "user", "content": "U1"},
                 {"role": "user", "content": "U2"})
    r1, r2 = {"role": "assistant", "content": "R1"}, {"role": "assistant", "content": "R2"}
    lines = [
        # the reply has no role (an assistant's); the request names the model and sends a tool
        {"request": {"model": "gpt-4o", "messages": [s, u1], "tools": [TOOL]},
         "response": {"choices": [{"message": {"content": "R1"}}], "usage": {"prompt_tokens": 10}}},
        # no model in the request: the response's; no tools sent this time
        {"request": {"messages": [s, u1, r1, u2]},
         "response": {"model": "gpt-4o-mini", "choices": [{"message": r2}]}},
        # the same rows again, nothing new: still the one conversation (a retry of the call)
        {"request": {"model": "gpt-4o", "messages": [s, u1, r1, u2, r2]},
         "response": {"choices": [{"message": {"role": "assistant", "content": "R3"}}]}},
    ]
    t = parse_transcript("\n".join(json.dumps(x) for x in lines) + "\n", name="calls.jsonl", path="/p/calls.jsonl")
    assert [m["content"] for m in t.messages] == ["S", "U1", "R1", "U2", "R2", "R3"]
    assert t.messages[2]["role"] == "assistant"
    assert t.origins == ["line 1.request.messages[0]", "line 1.request.messages[1]",
                         "line 1.response.choices[0].message", "line 2.request.messages[3]",
                         "line 2.response.choices[0].message", "line 3.response.choices[0].message"]
    assert t.usage == {2: {"prompt_tokens": 10}}
    assert [(o.label, o.turn, o.model, o.origin, o.reply, o.tools) for o in t.observed_payloads] == [
        ("request line 1", 0, "gpt-4o", "line 1.request", 2, [TOOL]),
        ("request line 2", 1, "gpt-4o-mini", "line 2.request", 4, None),
        ("request line 3", 1, "gpt-4o", "line 3.request", 5, None)]
    assert t.observed_payloads[1].messages == [s, u1, r1, u2]
    assert t.tools == [TOOL] and t.model == "gpt-4o" and t.path == "/p/calls.jsonl"
    assert t.meta == {"calls": 3, "models": ["gpt-4o", "gpt-4o-mini"]}
    assert [(c.index, c.label, c.messages, c.user_turns) for c in t.conversations] == [(0, "lines 1-3", 6, 2)]
    one = parse_transcript(json.dumps(lines[0]) + "\n", name="calls.jsonl")
    assert one.meta == {"calls": 1} and one.observed_payloads[0].turn == 0


def test_a_request_with_no_user_row_has_no_turn() -> None:
    line = {"request": {"messages": [{"role": "system", "content": "S"}]},
            "response": {"choices": [{"message": {"role": "assistant", "content": "R"}}]}}
    t = parse_transcript(json.dumps(line) + "\n", name="calls.jsonl", format="openai-log")
    assert t.observed_payloads[0].turn is None


@pytest.mark.parametrize(("line", "error"), [
    ([1], "expected an object with 'request' and 'response'"),
    ({"request": [], "response": {}}, "request must be an object (the chat-completions request body)"),
    ({"request": {"messages": {}}, "response": {}}, "request.messages must be a list"),
    ({"request": {"messages": []}, "response": []}, "response must be an object (the chat completion)"),
    ({"request": {"messages": []}, "response": {"choices": []}},
     "response.choices[0].message is missing (a failed call has no reply to import)"),
    ({"request": {"messages": []}, "response": {"choices": [{"message": {"role": "assistant", "content": "R"}}],
                                                "usage": 5}}, "response.usage must be an object"),
    ({"request": {"messages": []}, "response": {"choices": [{}]}},
     "response.choices[0].message is missing (a failed call has no reply to import)"),
    ({"request": {"messages": []}, "response": {"choices": [{"message": {"role": "assistant", "content": 5}}]}},
     "response.choices[0].message: "),
    ({"request": {"messages": [], "tools": "lookup"}, "response": {"choices": [{"message": {"content": "R"}}]}},
     "request.tools"),
])
def test_a_malformed_call_is_refused_naming_its_line_and_field(line: object, error: str) -> None:
    from inspector.transcripts import TranscriptError

    good = {"request": {"messages": [{"role": "user", "content": "hi"}]},
            "response": {"choices": [{"message": {"role": "assistant", "content": "yo"}}]}}
    with pytest.raises(TranscriptError) as err:
        parse_transcript(json.dumps(good) + "\n" + json.dumps(line) + "\n", name="calls.jsonl", format="openai-log")
    text = str(err.value)
    assert text == f"calls.jsonl: line 2: {error}" if not error.endswith((": ", "tools")) else \
        text.startswith(f"calls.jsonl: line 2: {error}") and len(text) > len(f"calls.jsonl: line 2: {error}") + 2


def test_an_openai_log_names_the_file_and_each_conversation() -> None:
    from inspector.transcripts import TranscriptError, list_conversations

    a = {"request": {"messages": [{"role": "user", "content": "a"}]},
         "response": {"model": 5, "choices": [{"message": {"content": "x"}}]}}
    b = {"request": {"messages": [{"role": "user", "content": "b"}]},
         "response": {"choices": [{"message": {"content": "y"}}]}}
    text = json.dumps(a) + "\n" + json.dumps(b) + "\n"
    assert [(c.index, c.label) for c in list_conversations(text.encode(), name="calls.jsonl")] == [
        (0, "line 1"), (1, "line 2")]
    t = parse_transcript(text, name="calls.jsonl", conversation=1)
    assert t.conversation == 1 and [m["content"] for m in t.messages] == ["b", "y"]
    assert parse_transcript(text, name="calls.jsonl").model is None  # a model that is not a string is no model
    with pytest.raises(TranscriptError) as err:
        parse_transcript(text, name="calls.jsonl", format="openai-log", conversation=2)
    assert str(err.value) == "calls.jsonl: conversation 2 is out of range: the file holds 2 conversations (0-1)"
    with pytest.raises(TranscriptError) as err:
        list_conversations((text + "{oops\n").encode(), name="calls.jsonl")
    assert str(err.value).startswith("calls.jsonl: line 3")


@pytest.mark.parametrize(("value", "is_log"), [
    ({"request": {"messages": []}, "response": {}}, True),
    ({"request": {"messages": []}, "response": []}, False),  # every part must have its shape
    ({"request": {"messages": {}}, "response": {}}, False),
    ({"request": [], "response": {}}, False),
    ({"messages": [], "response": {}}, False),
    ([{"request": {"messages": []}, "response": {}}], False),
])
def test_an_openai_log_is_recognised_by_the_shape_of_a_call(value: object, is_log: bool) -> None:
    from inspector.transcripts import TranscriptError, detect_format
    from inspector.transcripts.openai_log import sniff

    assert sniff(value, "calls.json") is is_log
    try:
        found = detect_format(json.dumps(value).encode(), "calls.jsonl")
    except TranscriptError:
        found = None
    assert (found == "openai-log") is is_log
