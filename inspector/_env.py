"""Offline defaults applied once, before tiktoken or litellm are first used.

Why: tiktoken downloads its BPE files on first use and litellm fetches its price map at import;
neither can reach the network on our machines. litellm's wheel ships the BPE files in tiktoken's
cache layout, so we point ``TIKTOKEN_CACHE_DIR`` there (without importing litellm, which costs
seconds). A value the user already set always wins.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

_done = False


def litellm_tokenizer_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


def apply_offline_defaults() -> None:
    global _done
    if _done:
        return
    _done = True
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        folder = litellm_tokenizer_dir()
        if folder is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


def litellm():  # noqa: ANN201 - returns the module
    """Import litellm lazily (3-6 s) with offline defaults and its debug chatter silenced."""
    apply_offline_defaults()
    import litellm as _litellm

    _litellm.suppress_debug_info = True
    return _litellm
