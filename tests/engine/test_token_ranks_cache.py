"""The parsed tiktoken ranks kept on disk (``inspector.offline.load_encoding``): a process that finds
them skips tiktoken's BPE parse, and the encoding is exactly tiktoken's own; a cache that is
missing, altered, truncated, from another tiktoken version or unwritable falls back to tiktoken.

Each load runs in a fresh process (the encoding is built once per process) and reports where its
ranks came from; the reference encoding is ``tiktoken.get_encoding`` in this process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from inspector.offline import CACHE_DIR_ENV, scoped_offline_defaults

NAME = "o200k_base"
PROBE = ("import json, sys; from inspector.offline import load_encoding; enc, src = load_encoding(sys.argv[1]); "
         "texts = json.loads(sys.stdin.read()); print(json.dumps([src, [enc.encode(t, disallowed_special=()) "
         "for t in texts], enc.n_vocab]))")
TEXTS = ["hello world", "Order 7 ships tomorrow.", "naïve café – 東京 🚀", "def f(x):\n    return x ** 2\n", ""]


def load(cache: Path, texts: list[str] = TEXTS) -> tuple[str, list[list[int]], int]:
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR",)}
    env.update(PYTHONPATH=str(ROOT), **{CACHE_DIR_ENV: str(cache)})
    proc = subprocess.run([sys.executable, "-c", PROBE, NAME], input=json.dumps(texts), capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    src, tokens, n_vocab = json.loads(proc.stdout)
    return src, tokens, n_vocab


@pytest.fixture(scope="module")
def reference():  # noqa: ANN201
    """tiktoken's own encoding, built by tiktoken from litellm's BPE file (offline)."""
    import tiktoken

    with scoped_offline_defaults("TIKTOKEN_CACHE_DIR"):
        return tiktoken.get_encoding(NAME)


def ranks_file(cache: Path) -> Path:
    (path,) = cache.glob(f"tiktoken-*-{NAME}.ranks")
    return path


def test_the_second_process_reads_the_cache_and_gets_tiktokens_encoding(tmp_path: Path, reference) -> None:  # noqa: ANN001
    first = load(tmp_path)
    second = load(tmp_path)
    assert (first[0], second[0]) == ("tiktoken", "cache")
    want = [reference.encode(t, disallowed_special=()) for t in TEXTS]
    assert first[1] == want and second[1] == want
    assert first[2] == second[2] == reference.n_vocab


@settings(max_examples=10, deadline=None)  # each example is a fresh process
@given(st.lists(st.text(max_size=60), min_size=1, max_size=8))
def test_the_cached_encoding_encodes_like_tiktoken(reference, tmp_path_factory, texts: list[str]) -> None:  # noqa: ANN001
    cache = tmp_path_factory.getbasetemp() / "shared-ranks"
    src, tokens, _ = load(cache, texts)
    assert tokens == [reference.encode(t, disallowed_special=()) for t in texts], src


@pytest.mark.parametrize("damage", ["flip-a-byte", "truncate", "other-version", "empty", "not-json"])
def test_a_damaged_cache_falls_back_to_tiktoken_and_is_rewritten(tmp_path: Path, damage: str, reference) -> None:  # noqa: ANN001
    load(tmp_path)
    path = ranks_file(tmp_path)
    data = path.read_bytes()
    head, body = data.split(b"\n", 1)
    if damage == "flip-a-byte":
        data = head + b"\n" + body[:-1] + bytes([body[-1] ^ 1])
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "other-version":
        meta = json.loads(head)
        meta["tiktoken"] = "0.0.0"
        data = json.dumps(meta).encode() + b"\n" + body
    elif damage == "empty":
        data = b""
    else:
        data = b"{not json\n" + body
    path.write_bytes(data)
    src, tokens, _ = load(tmp_path)
    assert src == "tiktoken" and tokens == [reference.encode(t, disallowed_special=()) for t in TEXTS]
    assert load(tmp_path)[0] == "cache"  # the fallback wrote a good file again


def test_an_unwritable_cache_folder_changes_nothing(tmp_path: Path, reference) -> None:  # noqa: ANN001
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cache = blocker / "cache"  # cannot be created: its parent is a file
    for _ in range(2):
        src, tokens, _ = load(cache)
        assert src == "tiktoken" and tokens == [reference.encode(t, disallowed_special=()) for t in TEXTS]
    assert blocker.read_text() == "not a folder"
