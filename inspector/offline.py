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


def tiktoken_encoding(name: str) -> Any:
    """A tiktoken encoding, loaded offline from litellm's BPE files unless the user points
    ``TIKTOKEN_CACHE_DIR`` elsewhere (tiktoken keeps it in memory after the first load)."""
    import tiktoken

    with scoped_offline_defaults("TIKTOKEN_CACHE_DIR"):
        return tiktoken.get_encoding(name)


def litellm() -> ModuleType:
    """Import litellm (3-6 s; only for a live model call) with its local model map and its debug
    chatter silenced."""
    with scoped_offline_defaults("LITELLM_LOCAL_MODEL_COST_MAP", "TIKTOKEN_CACHE_DIR"):
        import litellm as _litellm

    _litellm.suppress_debug_info = True
    return _litellm
