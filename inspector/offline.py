"""Offline data from litellm's wheel, read without importing litellm, and the offline defaults.

Why: tiktoken downloads its BPE files on first use and litellm fetches its price map at import;
neither can reach the network on our machines, and importing litellm costs seconds. litellm's
wheel ships both as plain files: the BPE files in tiktoken's cache layout
(``litellm_core_utils/tokenizers``) and the model map (``model_prices_and_context_window_backup.json``,
context windows and prices per model). We locate them with :func:`importlib.util.find_spec`, which
finds the package without running it, so litellm stays the source of truth for model facts while
only a live model call imports it.

Guarantees: importing :mod:`inspector` (or this module) never changes ``os.environ``. The faces
(the CLI, the app, the Makefile) call :func:`apply_offline_defaults` for their own process; the
library sets a default only for the duration of the one step that needs it (building a tiktoken
encoding, importing litellm) and restores the environment right after. A value the user set
always wins.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

MODEL_MAP_FILE = "model_prices_and_context_window_backup.json"
_env_lock = threading.Lock()


def litellm_dir() -> Path | None:
    """litellm's installed package folder, found without importing it; None when not installed."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def litellm_tokenizer_dir() -> Path | None:
    """The folder of BPE files litellm's wheel ships in tiktoken's cache layout, if present."""
    root = litellm_dir()
    folder = root / "litellm_core_utils" / "tokenizers" if root is not None else None
    return folder if folder is not None and folder.is_dir() else None


@functools.lru_cache(maxsize=1)
def model_map() -> Mapping[str, Mapping[str, Any]]:
    """litellm's bundled model map (model name → context window, prices, provider...), read as
    JSON from its wheel. Empty when litellm is not installed or the file is unreadable."""
    root = litellm_dir()
    if root is None:
        return {}
    try:
        data = json.loads((root / MODEL_MAP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict) and k != "sample_spec"}


def offline_defaults() -> dict[str, str]:
    """The environment values that keep tiktoken and litellm off the network."""
    out = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    folder = litellm_tokenizer_dir()
    if folder is not None:
        out["TIKTOKEN_CACHE_DIR"] = str(folder)
    return out


def apply_offline_defaults(environ: dict[str, str] | Any = None) -> None:
    """Set every :func:`offline_defaults` value the user has not set. For the faces (CLI, app) to
    call on their own process; the library itself never calls it."""
    env = os.environ if environ is None else environ
    for key, value in offline_defaults().items():
        env.setdefault(key, value)


@contextmanager
def scoped_offline_defaults(*keys: str) -> Iterator[None]:
    """Within the block, the named offline defaults are set where the user set nothing; on exit
    the environment is exactly as before. Serialised by a lock (threads share ``os.environ``)."""
    defaults = offline_defaults()
    with _env_lock:
        added = [k for k in keys if k in defaults and k not in os.environ]
        for k in added:
            os.environ[k] = defaults[k]
        try:
            yield
        finally:
            for k in added:
                os.environ.pop(k, None)


CACHE_DIR_ENV = "CONTEXT_INSPECTOR_CACHE_DIR"
_RANKS_FORMAT = 1
_encodings: dict[str, Any] = {}


def cache_dir() -> Path:
    """Where parsed BPE ranks are kept: ``$CONTEXT_INSPECTOR_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/context-inspector``, else ``~/.cache/context-inspector``."""
    explicit = os.environ.get(CACHE_DIR_ENV, "").strip()
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "context-inspector"


def _ranks_file(name: str, version: str) -> Path:
    return cache_dir() / f"tiktoken-{version}-{name}.ranks"


def _read_ranks(path: Path, name: str, version: str) -> dict[str, Any] | None:
    """The constructor arguments stored by :func:`_write_ranks`, or None for a missing, foreign,
    truncated or altered file (the body's SHA-256 is checked). Never runs code from the file."""
    import array
    import hashlib
    import itertools

    try:
        data = path.read_bytes()
        head_end = data.index(b"\n")
        head = json.loads(data[:head_end])
        body = memoryview(data)[head_end + 1:]
        if (not isinstance(head, dict) or head.get("format") != _RANKS_FORMAT or head.get("name") != name
                or head.get("tiktoken") != version or hashlib.sha256(body).hexdigest() != head.get("sha256")):
            return None
        n = int(head["n"])
        lengths, ranks = array.array("I"), array.array("I")
        lengths.frombytes(body[: 4 * n])
        ranks.frombytes(body[4 * n: 8 * n])
        blob = bytes(body[8 * n:])
        ends = list(itertools.accumulate(lengths, initial=0))
        if len(lengths) != n or len(ranks) != n or ends[-1] != len(blob):
            return None
        mergeable = dict(zip((blob[a:b] for a, b in zip(ends, ends[1:])), ranks))
        return {"name": name, "pat_str": head["pat_str"], "mergeable_ranks": mergeable,
                "special_tokens": head["special_tokens"], "explicit_n_vocab": head.get("explicit_n_vocab")}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_ranks(path: Path, kwargs: Mapping[str, Any], version: str) -> None:
    """Best effort: a cache that cannot be written (read-only home, full disk) changes nothing."""
    import array
    import hashlib

    ranks = kwargs["mergeable_ranks"]
    body = (array.array("I", (len(k) for k in ranks)).tobytes() + array.array("I", ranks.values()).tobytes()
            + b"".join(ranks))
    head = {"format": _RANKS_FORMAT, "name": kwargs["name"], "tiktoken": version, "n": len(ranks),
            "pat_str": kwargs["pat_str"], "special_tokens": kwargs["special_tokens"],
            "explicit_n_vocab": kwargs.get("explicit_n_vocab"), "sha256": hashlib.sha256(body).hexdigest()}
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")  # one writer per name
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(json.dumps(head).encode() + b"\n" + body)
        os.replace(tmp, path)  # atomic: a reader sees the old file or the whole new one
    except OSError:
        try:
            tmp.unlink()
        except OSError:  # never written, or its folder cannot exist
            pass


def load_encoding(name: str) -> tuple[Any, str]:
    """A tiktoken encoding and where its BPE ranks came from: ``"memory"`` (this process already
    built it), ``"cache"`` (the parsed ranks kept on disk by an earlier process) or ``"tiktoken"``
    (tiktoken's own loader, reading litellm's BPE files offline unless ``TIKTOKEN_CACHE_DIR`` says
    otherwise; the parsed ranks are then kept for the next process).

    Why: parsing the 200 000-line o200k BPE file costs tiktoken about 0.2 s of CPU in every
    process, a fifth of a short replay's start-up; reading the parsed ranks back costs about 0.06 s.
    The file tiktoken reads is pinned by a hash per encoding, so (encoding, tiktoken version)
    determines the ranks; the cached body carries its own SHA-256 and anything unexpected falls back
    to tiktoken. Guarantee: the same encoding as ``tiktoken.get_encoding(name)`` (same ranks, pattern
    and special tokens)."""
    import tiktoken

    with _env_lock:
        enc = _encodings.get(name)
    if enc is not None:
        return enc, "memory"
    version = tiktoken.__version__
    path = _ranks_file(name, version)
    kwargs = _read_ranks(path, name, version)
    source = "cache"
    if kwargs is None:
        try:
            from tiktoken_ext.openai_public import ENCODING_CONSTRUCTORS  # tiktoken's plugin interface
        except ImportError:
            ENCODING_CONSTRUCTORS = {}
        if name not in ENCODING_CONSTRUCTORS:
            with scoped_offline_defaults("TIKTOKEN_CACHE_DIR"):
                enc = tiktoken.get_encoding(name)
            with _env_lock:
                _encodings[name] = enc
            return enc, "tiktoken"
        with scoped_offline_defaults("TIKTOKEN_CACHE_DIR"):
            kwargs = ENCODING_CONSTRUCTORS[name]()
        _write_ranks(path, kwargs, version)
        source = "tiktoken"
    enc = tiktoken.Encoding(**{k: v for k, v in kwargs.items() if v is not None})
    with _env_lock:
        enc = _encodings.setdefault(name, enc)
    return enc, source


def tiktoken_encoding(name: str) -> Any:
    """A tiktoken encoding, built once per process (see :func:`load_encoding`)."""
    return load_encoding(name)[0]


def litellm() -> ModuleType:
    """Import litellm (3-6 s; only for a live model call) with its local model map and its debug
    chatter silenced."""
    with scoped_offline_defaults("LITELLM_LOCAL_MODEL_COST_MAP", "TIKTOKEN_CACHE_DIR"):
        import litellm as _litellm

    _litellm.suppress_debug_info = True
    return _litellm
