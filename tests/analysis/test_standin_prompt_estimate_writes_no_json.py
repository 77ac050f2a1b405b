"""The stand-in's estimated prompt is counted from orjson's text, not written again by ``json.dumps``.

Rule (inspector/engine/summarizers/standin.py :func:`json_size`): the prompt the ``llm`` summarizer
would send holds the folded messages as ``json.dumps(messages, default=str)``; its length is
orjson's compact UTF-8 length plus one blank per ``,``/``:`` separator, five per DEL, and per
non-ASCII character its ``\\uXXXX`` escape (6 characters; 12 beyond U+FFFF) less its UTF-8 bytes.
Messages holding a float, a subclass or any other object are written by ``json.dumps``.

Bug classes: an estimate that differs from the prompt's length by a blank, an escape or a float's
spelling (the priced summary usage would change); a return to writing megabytes of JSON per fold.
"""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.engine.summarizers import standin
from inspector.engine.summarizers.llm import build_prompt
from inspector.engine.summarizers.standin import StandInSummarizer, json_size
from inspector.engine.tokens import EstimateCounter


class Colour(enum.Enum):
    RED = 1


class Text(str):
    pass


_texts = st.text(alphabet=st.sampled_from(["a", " ", ",", ":", '"', "\\", "\n", "\x00", "\x1f", "\x7f", "é",
                                           "—", "中", "😀", "\u2028", "\ud800", "{", "["]), max_size=8)
_scalars = st.one_of(_texts, st.integers(-(2**70), 2**70), st.booleans(), st.none(),
                     st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([Colour.RED, Text("x")]))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                                                         st.dictionaries(st.one_of(_texts, st.integers(0, 3)),
                                                                         inner, max_size=3)), max_leaves=8)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_values, st.dictionaries(_texts, _values, max_size=4)), max_size=4))
def test_the_size_is_the_length_of_what_json_dumps_writes(messages: list[Any]) -> None:
    assert json_size(messages) == len(json.dumps(messages, default=str))


def test_sizes_by_hand() -> None:
    assert json_size([]) == 2  # []
    assert json_size([{"role": "user", "content": "hi"}]) == 35  # [{"role": "user", "content": "hi"}]
    assert json_size([{"a": "\x7f"}, {"b": "é😀"}]) == len('[{"a": "\\u007f"}, {"b": "\\u00e9\\ud83d\\ude00"}]') == 46
    assert json_size([{"a": [1, True, None]}]) == len('[{"a": [1, true, null]}]') == 24
    assert json_size([{"a": 1.5}]) == len('[{"a": 1.5}]') and json_size([{"a": float("nan")}]) == len('[{"a": NaN}]')
    # non-ASCII bytes are read in 16 KiB pieces: characters split across a piece's end count once
    for pad in range(16370, 16390):
        long = [{"a": "x" * pad + "é😀—" * 3 + "\x7f"}]
        assert json_size(long) == len(json.dumps(long, default=str))


def rows(n: int) -> list[dict[str, Any]]:
    """``n`` rows of the three shapes a fold holds: user, assistant with a tool call, tool result."""
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "OR1"}'}}
    shapes = [{"role": "user", "content": "Where is order OR1? — thanks…"},
              {"role": "assistant", "content": None, "tool_calls": [call]},
              {"role": "tool", "tool_call_id": "c1", "content": "shipped, 3 items"}]
    return [shapes[i % 3] for i in range(n)]


def test_a_fold_of_texts_is_estimated_without_json_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    """30 rows of texts, a tool call and None: no ``json.dumps`` call; the estimate is the counter's
    count of the prompt the ``llm`` summarizer builds. One row holding a float: one call."""
    folded = rows(30)
    expected = EstimateCounter().count(build_prompt(folded))
    calls: list[Any] = []
    real = json.dumps

    def counting(obj: Any, **kw: Any) -> str:
        calls.append(obj)
        return real(obj, **kw)

    monkeypatch.setattr(standin.json, "dumps", counting)
    s = StandInSummarizer()
    s.summarize(folded)
    assert calls == [] and s.usage[0]["prompt_tokens"] == expected
    s.summarize([*folded, {"role": "tool", "tool_call_id": "c2", "content": "ok", "score": 0.5}])
    assert len(calls) == 1
