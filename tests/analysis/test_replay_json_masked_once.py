"""The replay JSON is masked by testing its written text, not by walking every value.

Rule (inspector/json_text.py :func:`masked_document_text`, inspector/redact.py
:func:`json_may_hold_secret`): the text written equals ``document_text(mask_secrets(doc))``; a
frame list whose text holds no secret's needle is never walked by the masker, and when it may, each
frame is walked at most once. Bug classes: a fast path that lets a secret through (a needle the
JSON escaping hides, a secret key name, an assignment written inside a string), and a return to
walking every value of a long replay.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import inspector.redact as redact
from inspector.redact import json_may_hold_secret, mask_secrets
from inspector.json_text import document_text, json_text, masked_document_bytes, masked_document_text

# pieces of secrets, of secret-like names and of JSON's escaping, and ordinary words
_PIECES = ["Bearer ", "bearer\t", "authorization: basic ", "https://", "user:", "pw@", "sk-", "sk-ant-", "ghp_",
           "github_pat_", "xoxb-", "AKIA", "AIza", "eyJ", "api_key", "TOKEN", "Secret", "passwd", "PassPhrase",
           "\u212aey", "\u017fecret", "author\u0130zation", "\u0131", "—", "=", ": ", ":", '"', "'", " ", "\t", "\n", "\x0b", "\xa0", "abcdefghijklmnop",
           "0123456789ABCDEF", "_", "-", ".", "payload_tokens", "monkey", "é", "call_1"]
_text = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)
_scalar = st.one_of(st.integers(-5, 10**6), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                    st.none(), _text)
_value = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(_text, inner, max_size=4)), max_leaves=12)
_frame = st.dictionaries(st.one_of(_text, st.sampled_from(["at", "cm", "api_key", "token ", "x"])), _value,
                         max_size=5)


@given(_value)
def test_a_text_that_says_no_secret_masks_to_itself(value: Any) -> None:
    """json_may_hold_secret(text) is False only when masking changes nothing."""
    text = json.dumps(value, ensure_ascii=False)
    if not json_may_hold_secret(text):
        assert mask_secrets(value) == value


@given(_value)
def test_a_text_the_one_writer_wrote_that_says_no_secret_masks_to_itself(value: Any) -> None:
    """The same over the one writer's compact text (orjson: no blank after ``,`` or ``:``)."""
    text = json_text(value)
    assert json.loads(text) == value
    if not json_may_hold_secret(text):
        assert mask_secrets(value) == value


@given(st.dictionaries(st.sampled_from(["frames", "commits", "totals", "summaries", "api_key", "x"]),
                       st.one_of(st.lists(_frame, max_size=5), st.lists(_text, max_size=5), _value), max_size=4))
def test_the_masked_text_is_document_text_of_the_masked_document(doc: dict[str, Any]) -> None:
    """masked_document_text(doc) == document_text(mask_secrets(doc)), byte for byte."""
    assert masked_document_text(doc) == document_text(mask_secrets(doc))


@pytest.mark.parametrize("secret", ["Bearer abcdef123456ghijkl", "OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234",
                                    'the config {"api_key": "abcd1234efgh5678"}', "DB_PASSWORD\t= 'c0rrect-h0rse'",
                                    "— author\u0130zation: Basic dXNlcjpwYXNzd29yZA=="])
def test_a_secret_in_one_frame_is_masked_and_the_other_frames_are_not_walked(
        secret: str, monkeypatch: pytest.MonkeyPatch) -> None:
    frames = [{"call": k, "summary": f"turn {k}"} for k in range(50)]
    frames[17]["summary"] = secret
    doc = {"frames": frames, "totals": {"calls": 50}}
    expected = document_text(mask_secrets(doc))
    walked = _count_walks(monkeypatch)
    text = masked_document_text(doc)
    assert text == expected
    assert secret not in text
    assert walked["frames"] == 1  # frame 17 alone


def test_a_frame_list_without_a_needle_is_never_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """4 000 frames and totals holding no needle: the masker walks nothing (every field is tested by its text)."""
    frames = [{"call": k, "payload_tokens": 10 * k, "cm": {"action": "unchanged-under-budget"},
               "budget": {"window_source": "manifest"}, "forgotten": [{"identifier": f"ORD-{k}"}]}
              for k in range(4_000)]
    walked = _count_walks(monkeypatch)
    masked_document_text({"frames": frames, "totals": {"calls": 4_000}})
    assert walked == {"frames": 0, "other": 0}


def _count_walks(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the masker's walks of one frame (a dict with ``call``) and of anything else (nested values too)."""
    counts = {"frames": 0, "other": 0}
    original = redact.mask_secrets

    def counting(obj: Any) -> Any:
        counts["frames" if isinstance(obj, dict) and "call" in obj else "other"] += 1
        return original(obj)

    monkeypatch.setattr(redact, "mask_secrets", counting)
    return counts


_DIGITS = str.maketrans("", "", "0123456789")


@given(_value)
def test_a_text_without_its_digits_says_may_hold_wherever_the_text_does(value: Any) -> None:
    """The writer tests a list's digit-free shapes: removing a text's ASCII digits never hides a
    needle (none holds a digit; an escape ``\\u000b`` loses its digits)."""
    for text in (json.dumps(value, ensure_ascii=False), json.dumps(value), json_text(value)):
        if json_may_hold_secret(text):
            assert json_may_hold_secret(text.translate(_DIGITS))


def test_an_escaped_blank_after_a_secret_name_is_found_without_its_digits() -> None:
    """Boundary of the digit-free shape: ``api_key\\u000b=`` (an escape of four digits) and ``token\\u2028:``."""
    for text in ('"api_key\\u000b=x"', '"token\\u2028: x"'):
        assert json_may_hold_secret(text) and json_may_hold_secret(text.translate(_DIGITS))


def test_frames_that_differ_only_in_numbers_are_tested_as_one_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """4 000 frames whose texts differ only in their digits: the secret test runs once for them all
    (their one digit-free shape) and once for the totals line: 2 tests, not 4 001, and the text
    tested for the frames is one frame's shape, not megabytes."""
    frames = [{"call": k, "payload_tokens": 10 * k, "cost_usd": k / 7, "cm": {"action": "unchanged-under-budget"}}
              for k in range(4_000)]
    doc = {"frames": frames, "totals": {"calls": 4_000}}
    tested: list[str] = []
    original = redact.json_may_hold_secret

    def counting(text: str) -> bool:
        tested.append(text)
        return original(text)

    monkeypatch.setattr(redact, "json_may_hold_secret", counting)
    text = masked_document_text(doc)
    assert text == document_text(doc)
    assert len(tested) == 2
    assert tested[0] == '{"call":,"payload_tokens":,"cost_usd":.,"cm":{"action":"unchanged-under-budget"}}'


class _Shape(bytes):
    hashes = 0

    def __hash__(self) -> int:
        _Shape.hashes += 1
        return bytes.__hash__(self)


class _Row(bytes):
    def translate(self, table: Any, delete: bytes = b"") -> bytes:  # type: ignore[override]
        return _Shape(bytes.translate(self, table, delete))


def test_a_few_shapes_are_found_by_comparing_them_not_by_hashing_them() -> None:
    """3 000 rows of 3 distinct digit-free shapes (at most ``_FEW``, 32): the 3 shapes in order of first
    use, none hashed (hashing reads every byte of every shape); 40 distinct shapes: a set of all 40."""
    from inspector.json_text import _FEW, _distinct_shapes

    rows = [_Row(b'{"call":%d,"cm":"%s"}' % (k, bytes([65 + k % 40]) * (k % 40))) for k in range(3_000)]
    few = [row for k, row in enumerate(rows) if k % 40 < 3]
    _Shape.hashes = 0
    assert _distinct_shapes(few) == [b'{"call":,"cm":""}', b'{"call":,"cm":"B"}', b'{"call":,"cm":"CC"}']
    assert _Shape.hashes == 0 and _FEW == 32
    assert set(_distinct_shapes(rows)) == {b'{"call":,"cm":"%s"}' % (bytes([65 + k]) * k) for k in range(40)}
    assert _Shape.hashes > 0


@given(st.lists(st.binary(max_size=3), max_size=60))
def test_the_distinct_shapes_are_the_set_of_the_shapes(rows: list[bytes]) -> None:
    from inspector.json_text import _distinct_shapes

    found = list(_distinct_shapes(rows))
    assert len(found) == len(set(found)) and set(found) == {r.translate(None, b"0123456789") for r in rows}


def test_a_list_orjson_refuses_is_masked_element_by_element() -> None:
    """A frame with a key that is not a text (orjson refuses the list): the standard encoder writes
    it, and the frame holding a secret is masked as ``mask_secrets`` masks it."""
    doc = {"frames": [{"call": 0, 1: "x"}, {"call": 1, "note": "Bearer abcdef123456ghijkl"}, {"call": 2}]}
    text = masked_document_text(doc)
    assert text == document_text(mask_secrets(doc)) and "abcdef123456" not in text and '{"call": 0, "1": "x"}' in text


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_list_whose_element_holds_the_row_separator_is_written_element_by_element(n: int) -> None:
    """The one-call writer splits orjson's text of the whole list at the separator it put between
    the elements; an element holding that separator's text (a list with the separator as a text)
    makes one more piece, and the list is then written element by element: the same text."""
    from inspector.json_text import _ROW

    frames: list[Any] = [{"call": k, "rows": ["a", _ROW, "b"]} if k == n - 1 else {"call": k} for k in range(n)]
    doc = {"frames": frames, "summaries": [_ROW] * n}
    assert masked_document_text(doc) == document_text(doc)
    assert json.loads(masked_document_text(doc)) == doc


def test_a_list_of_frames_is_written_by_one_orjson_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """4 000 frames and totals: 4 orjson calls — the two keys, the frames list, the totals — not one
    per frame (each call touched fresh memory pages: per-frame calls cost as much as the writing)."""
    import types

    import inspector.json_text as json_text_module

    calls = [0]
    real = json_text_module.orjson.dumps

    def counting(value: Any) -> bytes:
        calls[0] += 1
        return real(value)

    monkeypatch.setattr(json_text_module, "orjson", types.SimpleNamespace(dumps=counting))
    frames = [{"call": k, "payload_tokens": 10 * k} for k in range(4_000)]
    doc = {"frames": frames, "totals": {"calls": 4_000}}
    assert masked_document_text(doc) == document_text(doc)
    calls[0] = 0
    masked_document_text(doc)
    assert calls[0] == 4


@given(st.dictionaries(st.sampled_from(["frames", "summaries", "api_key", "x"]),
                       st.one_of(st.lists(_frame, max_size=5), st.lists(_text, max_size=5), _value), max_size=4))
def test_the_masked_bytes_are_the_masked_text_in_utf8(doc: dict[str, Any]) -> None:
    """masked_document_bytes(doc) == masked_document_text(doc) encoded in UTF-8, byte for byte."""
    assert masked_document_bytes(doc) == masked_document_text(doc).encode("utf-8")


def test_a_lone_surrogate_is_kept_in_the_text_and_refused_by_the_bytes() -> None:
    """A text UTF-8 cannot hold (a lone surrogate, written by the standard library's encoder): the
    masked text keeps it as ``json.dumps`` writes it; the bytes refuse it (as writing that text to a
    UTF-8 file did)."""
    doc = {"frames": [{"summary": "a \ud800 b"}], "x": "\udfff"}
    assert masked_document_text(doc) == document_text(doc)
    with pytest.raises(UnicodeEncodeError):
        masked_document_bytes(doc)
