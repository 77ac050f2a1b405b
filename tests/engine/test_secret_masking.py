"""Secret masking (inspector.redact), table-driven: what must be masked, what must stay as written.

Guards two failure modes at once: a key or token leaking into any output (CLI JSON, tables, app,
exports), and over-eager masking that mangles ordinary numbers and prose (``max_tokens: 4000``,
``prompt_tokens``, "the token budget"), which would make the inspector's own output unreadable.
Also: masking stays linear on hostile text (no regex backtracking blow-up) and is idempotent.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.redact import MASK, is_secret_key, mask_secrets, mask_text

# (text, secret substring that must disappear, context that must survive)
MASKED = [
    ("OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234", "abcdefghijklmnop1234", "OPENAI_API_KEY="),
    ("export ANTHROPIC_API_KEY='sk-ant-api03-AAAABBBBCCCCDDDD'", "AAAABBBBCCCCDDDD", "export ANTHROPIC_API_KEY="),
    ("use sk-abcdefghijklmnopqrstuvwx for the call", "abcdefghijklmnopqrstuvwx", "for the call"),
    ("Authorization: Bearer abcdef123456ghijkl", "abcdef123456ghijkl", "Authorization: Bearer "),
    ("curl -H 'authorization: bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX3g'",
     "eyJzdWIiOiIxIn0", "curl -H"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "Authorization: Basic "),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "dozjgNryP4J3jVmNHl0w5N", "jwt "),
    ("GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123", "abcdefghijklmnopqrstuvwxyz0123", "GITHUB_TOKEN="),
    ("clone with github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "0123456789_abcdefghijklmnop", "clone with"),
    ("slack xoxb-1234567890-abcdefghij", "1234567890-abcdefghij", "slack "),
    ("aws AKIAIOSFODNN7EXAMPLE key", "IOSFODNN7EXAMPLE", " key"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "K7MDENG/bPxRfiCYEXAMPLEKEY",
     "AWS_SECRET_ACCESS_KEY="),
    ("SECRET_KEY=django-insecure-abc123", "insecure-abc123", "SECRET_KEY="),
    ("google AIzaSyA1234567890abcdefghijklmnopqrstu", "1234567890abcdefghijklmnopqrstu", "google "),
    ("password: hunter22", "hunter22", "password: "),
    ("DB_PASSWORD = 'c0rrect-h0rse'", "c0rrect-h0rse", "DB_PASSWORD"),
    ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz", "HF_TOKEN="),
    ('{"api_key": "abcd1234efgh5678"}', "abcd1234efgh5678", '{"api_key": '),
    ("{'password': 'hunter2hunter2'}", "hunter2hunter2", "{'password': "),
    ('curl -H "x-api-key: abcdef123456xyz"', "abcdef123456xyz", "x-api-key: "),
    ("--api-key=abcd1234 --verbose", "abcd1234", "--verbose"),
    ("DATABASE_URL=postgres://app:s3cretpass@db.example.com:5432/app", "s3cretpass", "@db.example.com:5432/app"),
    ("proxy https://user:hunter2pass@proxy.example.com/v1", "hunter2pass", "proxy https://user:"),
    ("url=https://x.example/cb?token=abcd1234&x=1", "abcd1234", "url=https://x.example/cb?token="),
    ("passphrase: correct-horse-battery", "correct-horse-battery", "passphrase: "),
    ("client_secret=Zx9_long_opaque_value_42", "Zx9_long_opaque_value_42", "client_secret="),
    ("access_token: ya29.a0AfH6SMBx", "a0AfH6SMBx", "access_token: "),
]

# Text that must come back byte for byte: counts, field names, prose about tokens and passwords.
UNMASKED = [
    "max_tokens: 4000",
    "max_tokens=100",
    "prompt_tokens=1234",
    "completion_tokens: 55",
    '"prompt_tokens": 812, "completion_tokens": 96, "total_tokens": 908',
    "token_budget: 9000",
    "tokens_used: 1234",
    "num_tokens = 42",
    "tokens: 5",
    "The token budget is 8000 tokens.",
    "Each token costs money; the model has a 128000 token context window.",
    "bearer tokens are sent in a header",
    "Bearer short",
    "password is required",
    "password: required",
    "Reset your password: visit the settings page.",
    "the secret: it is blue",
    "spec.models[0].api_key: unknown key, passed through unchecked",
    "spec.context_manager.params.api_key: not a parameter of the summarising context manager",
    "TOKENIZER=cl100k_base",
    "the task-based approach; ask-questions-first; risk-management-framework-2024",
    "see https://example.com:8080/path@v2 and mailto:someone@example.com",
    "call_abc123 toolu_01ABCDEF chatcmpl-test",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "order #12345 shipped on 2024-05-01 to 221B Baker Street",
    "",
]


@pytest.mark.parametrize(("text", "secret", "context"), MASKED, ids=[c[0][:40] for c in MASKED])
def test_secrets_in_text_are_masked(text: str, secret: str, context: str) -> None:
    out = mask_text(text)
    assert secret not in out
    assert context in out, "the text around the secret is kept"
    assert MASK in out


@pytest.mark.parametrize("text", UNMASKED, ids=[t[:40] or "empty" for t in UNMASKED])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert mask_text(text) == text


@pytest.mark.parametrize(("text", "secret", "context"), MASKED, ids=[c[0][:40] for c in MASKED])
def test_masking_is_idempotent(text: str, secret: str, context: str) -> None:
    once = mask_text(text)
    assert mask_text(once) == once


def test_two_different_keys_stay_distinguishable_but_never_reusable() -> None:
    a = mask_text("sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA")
    b = mask_text("sk-ant-api03-BBBBBBBBBBBBBBBBBBBB")
    assert a != b
    assert a.startswith("sk-proj-") and b.startswith("sk-ant-api03-")
    assert "AAAAAAAAAAAA" not in a and "BBBBBBBBBBBB" not in b


@pytest.mark.parametrize("value", [None, 5, 2.5, True, b"bytes"])
def test_non_text_passes_through(value: object) -> None:
    assert mask_text(value) is value  # type: ignore[arg-type]


# --- structured values ----------------------------------------------------------------------------

SECRET_KEYS = ["api_key", "apiKey", "API-KEY", "x-api-key", "openai_api_key", "token", "access_token",
               "refresh_token", "auth_token", "secret", "client_secret", "secret_key", "SECRET_KEY",
               "aws_secret_access_key", "password", "passwd", "passphrase", "Authorization", "private_key",
               "access_key", "bearer", "session_token", " api_key "]
PLAIN_KEYS = ["max_tokens", "prompt_tokens", "completion_tokens", "total_tokens", "token_budget", "tokens",
              "token_count", "max_completion_tokens", "keep_turns", "model", "api_base", "api_key_env",
              "secretary", "tokenizer", "password_hint_shown", "key", "keys", "id"]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_secret_named_keys(key: str) -> None:
    assert is_secret_key(key)
    out = mask_secrets({key: "opaque-value-123456"})
    assert "opaque-value-123456" not in str(out)


@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_ordinary_keys_keep_their_values(key: str) -> None:
    assert not is_secret_key(key)
    assert mask_secrets({key: 4000}) == {key: 4000}
    assert mask_secrets({key: "gpt-4o"}) == {key: "gpt-4o"}


@pytest.mark.parametrize(("value", "expected"), [
    (12345678, MASK),  # a numeric PIN under a secret key is still a secret
    (3.5, MASK),
    ("", ""),  # nothing to hide
    (None, None),
    (True, True),  # a flag, not a secret
    ({"nested": "sk-proj-abcdefghijklmnopqrst"}, {"nested": "sk-proj-abc…****"}),  # walked, not blanked
    (["a", "b"], ["a", "b"]),
])
def test_values_under_a_secret_key(value: object, expected: object) -> None:
    assert mask_secrets({"api_key": value}) == {"api_key": expected}


def test_nested_structures_are_walked_and_the_input_is_not_mutated() -> None:
    doc = {
        "settings": {"models": [{"model": "gpt-4o", "max_tokens": 2000, "extra": {"api_key": "sk-live-0123456789abcdef"}}],
                     "injected_context": ["OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234"]},
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
        "frames": [{"payload": [{"role": "user", "content": "my key is sk-abcdefghijklmnopqrstuv"},
                                {"role": "tool", "content": [{"type": "text", "text": "Bearer zzzzzzzzzzzzzzzz"}]}]}],
        "tuple": ("password: hunter22", 7),
        7: "int keys are fine",
    }
    before = copy.deepcopy(doc)
    out = mask_secrets(doc)
    assert doc == before, "mask_secrets returns a copy"
    text = repr(out)
    for secret in ("0123456789abcdef", "abcdefghijklmnop1234", "abcdefghijklmnopqrstuv", "zzzzzzzzzzzzzzzz", "hunter22"):
        assert secret not in text
    assert out["usage"] == {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    assert out["settings"]["models"][0]["max_tokens"] == 2000
    assert out["tuple"] == ["password: ****", 7]
    assert out[7] == "int keys are fine"
    assert mask_secrets(out) == out


# --- hostile input --------------------------------------------------------------------------------

HOSTILE = {
    "hyphen-runs": "a-" * 100_000,
    "underscore-runs": "a_" * 100_000,
    "colon-runs": "a:" * 100_000,
    "key-like-runs": "api_key-" * 25_000,
    "repeated-assignments": "token=" * 30_000,
    "quoted-keys": "'api_key':'" * 20_000,
    "scheme-no-at": "http://a:" * 20_000,
    "long-url": "https://" + "a" * 200_000,
    "bearer-words": "bearer " * 30_000,
    "basic-auth-words": "authorization: basic " * 10_000,
    "one-long-word": "x" * 200_000,
}


def test_masking_hostile_text_finishes_and_masks_nothing_that_is_no_secret() -> None:
    """Each input is ~200 KB of repeated near-matches; none holds a secret value, so nothing changes.
    A quadratic pattern would not finish here in minutes (it did not: 149 s on 40 KB of ``a-a-a-…``
    before the key pattern was anchored); ``benchmarks/hostile_text.py`` prints how the time grows
    with the input (tests never assert wall-clock times)."""
    for name in ("hyphen-runs", "underscore-runs", "colon-runs", "long-url", "one-long-word"):
        assert mask_text(HOSTILE[name]) == HOSTILE[name], name
    for text in HOSTILE.values():
        assert isinstance(mask_text(text), str)


def test_a_secret_inside_a_huge_text_is_still_found() -> None:
    text = "filler " * 200_000 + "OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234 " + "filler " * 10
    out = mask_text(text)
    assert "abcdefghijklmnop1234" not in out and len(out) < len(text)


# -- boundaries pinned by mutation testing (`make mutation`): exact outputs worked out from the rules --
def test_prefix_is_kept_from_exactly_twelve_characters() -> None:
    # a value of 12+ characters keeps a 3-character prefix; shorter ones are masked whole
    assert mask_secrets({"api_key": "abcdefghijkl"}) == {"api_key": "abc…" + MASK}
    assert mask_secrets({"api_key": "abcdefghijk"}) == {"api_key": MASK}
    assert mask_secrets({"token": 123456789012}) == {"token": "123…" + MASK}
    assert mask_secrets({"api_key": "sk-live-0123456789abcdef"}) == {"api_key": "sk-…" + MASK}


def test_a_secret_named_value_is_masked_whatever_it_says() -> None:
    # even a value that looks like a placeholder: a secret-named key never passes its value through
    assert mask_secrets({"password": "XXXX"}) == {"password": MASK}
    assert mask_secrets({"password": ""}) == {"password": ""}  # nothing to hide
    assert mask_secrets({"password": None}) == {"password": None}


def test_letters_only_assignment_is_prose_below_sixteen_characters() -> None:
    assert mask_text("password: abcdefghijklmno") == "password: abcdefghijklmno"  # 15 letters: prose
    assert mask_text("password: abcdefghijklmnop") == "password: abc…" + MASK  # 16: a secret


def test_every_assignment_in_a_text_is_masked_and_the_rest_kept() -> None:
    text = "A_TOKEN=abcd1234efgh then B_TOKEN=wxyz9876vuts end"
    assert mask_text(text) == f"A_TOKEN=abc…{MASK} then B_TOKEN=wxy…{MASK} end"
    # a skipped assignment (prose, or no value) does not stop the scan
    assert mask_text("password: required, API_KEY=abcd1234efgh") == f"password: required, API_KEY=abc…{MASK}"
    assert mask_text("TOKEN= , SECRET=abcd1234efgh") == f"TOKEN= , SECRET=abc…{MASK}"


# --- the pre-scan guard: a text without any pattern's trigger has nothing to mask ---------------------

_PIECES = ["Bearer ", "bearer\t", "authorization: basic ", "Authorization=Digest ", "https://", "user:", "pw@",
           "host", "sk-", "sk-proj-", "ghp_", "github_pat_", "xoxb-", "AKIA", "AIza", "eyJ", "api_key", "TOKEN",
           "password", "=", ": ", '"', "'", " ", "abcdefghijklmnop", "0123456789ABCDEF", "_", "-", ".", "\n", "é"]


def _unguarded(text: str) -> str:
    import inspector.redact as redact

    out = text
    for pat in redact._PATTERNS:
        out = pat.sub(redact._mask_match, out)
    return redact._mask_assignments(out)


@given(st.lists(st.sampled_from(_PIECES), max_size=24).map("".join), st.integers(0, 300))
def test_the_masking_guard_and_memo_change_no_answer(text: str, pad: int) -> None:
    """mask_text (guarded by one pre-scan, remembered for short texts) equals every pattern applied
    in turn, for short and long texts."""
    for t in (text, text + " " + "x" * pad):
        assert mask_text(t) == _unguarded(t)
