"""Inputs for tuning: every conversation of every file, as the sweep and the notebooks need them.

:func:`expand_conversations` turns the tuner's ``TRANSCRIPTS`` (paths, ``path#N`` for one
conversation of a multi-conversation file, or already-loaded transcripts) into one
:class:`~inspector.transcripts.Transcript` per conversation, in input order: a multi-conversation
file (a 200-episode benchmark) contributes every conversation, labelled ``file#N`` by the sweep.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple


def expand_conversations(items: Iterable[Any], *, limit: int | None = None) -> list[Any]:
    """One transcript per conversation. ``limit`` keeps the first ``limit`` conversations of each
    file (``None``: all). A ``path#N`` selects conversation ``N`` only; a name that does not exist
    raises :class:`FileNotFoundError` naming it; ``#N`` past the file's conversations raises
    :class:`ValueError` naming the file and how many it has."""
    from inspector.transcripts import iter_transcripts, list_conversations, load_transcript

    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1 (got {limit})")
    out: list[Any] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            out.append(item)  # already loaded
            continue
        text = os.fspath(item)
        path, sep, index = text.rpartition("#") if "#" in text and not Path(text).exists() else (text, "", "")
        if not Path(path).exists():
            raise FileNotFoundError(f"transcript not found: {text}")
        if sep:
            if not index.isdigit():
                raise ValueError(f"{text}: expected PATH#N with N a conversation number")
            n = len(list_conversations(path))
            if int(index) >= n:
                raise ValueError(f"{text}: the file has {n} conversation(s) (0–{n - 1})")
            out.append(load_transcript(path, conversation=int(index)))
            continue
        for k, tr in enumerate(iter_transcripts(path)):
            if limit is not None and k >= limit:
                break
            out.append(tr)
    return out


def text_progress(stream: Any = None) -> Callable[[int, int], None]:
    """A :func:`~inspector.sweep.sweep` progress callback writing ``sweep: 7/42 runs`` in place to
    stdout (a notebook shows stderr as if it were an error), at most every tenth of the way."""
    out = stream if stream is not None else sys.stdout

    def report(done: int, total: int) -> None:
        if done == total or (10 * done) // total > (10 * (done - 1)) // total:
            out.write(f"\rsweep: {done}/{total} runs" + ("\n" if done == total else ""))
            out.flush()

    return report


class StrategyGrid(NamedTuple):
    """The tuner's grid for one strategy type (:func:`strategy_grid`): ``grid`` to sweep, ``x`` the
    dial the cost and forgetting charts read along, ``h`` the one the summarizer chart reads along,
    and ``words`` saying what is tuned and which grid keys were left out, in Markdown."""

    grid: dict[str, list[Any]]
    x: str
    h: str
    words: str


def _axes(grid: Mapping[str, Sequence[Any]]) -> tuple[str, str]:
    dials = [k for k in grid if k != "context_manager"]
    x = "keep_turns" if "keep_turns" in dials else dials[0]
    return x, "hysteresis_ratio" if "hysteresis_ratio" in dials else x


def strategy_grid(grid: Mapping[str, Sequence[Any]], strategy: str | None = None) -> StrategyGrid:
    """The grid the tuner sweeps. ``strategy`` None: ``grid`` as given, on the manifest's own
    context manager. Else the registered type ``strategy`` names (an alias too) runs in every row
    (``context_manager`` leads the grid), and a strategy parameter of ``grid`` its params model does
    not define is left out (a short-name key applies only to the types that define it,
    :mod:`inspector.grid`); ``words`` names each key left out and the types that define it.

    Raises :class:`~inspector.errors.PluginLookupError` naming ``STRATEGY`` for an unknown type, and
    :class:`ValueError` naming the strategy's own parameters when no key of ``grid`` is left to sweep."""
    from inspector.grid import strategy_parameter
    from inspector.manifest.bindings import ASSEMBLY_KEYS
    from inspector.plugins import default_registry

    if strategy is None:
        x, h = _axes(grid)
        return StrategyGrid({k: list(v) for k, v in grid.items()}, x, h,
                        "The grid tunes the manifest's own context manager.")
    reg = default_registry()
    spec = reg.resolve("context_manager", strategy, field_path="STRATEGY")
    own = [p for p in spec.params if p not in ASSEMBLY_KEYS]
    kept: dict[str, list[Any]] = {"context_manager": [spec.name]}
    left: list[str] = []
    for key, values in grid.items():
        param = strategy_parameter(key)
        if param is not None and param not in spec.params:
            types = [s.name for s in reg.specs("context_manager") if param in s.params]
            left.append(f"`{key}` (defined by {', '.join(types) or 'no registered strategy'})")
        elif key != "context_manager":
            kept[key] = list(values)
    if len(kept) == 1:
        raise ValueError(f"GRID sets no parameter of {spec.name}: name one of {', '.join(own) or '(none)'}")
    x, h = _axes(kept)
    words = f"The grid tunes **{spec.name}** (`STRATEGY`) in every run; its own parameters: " \
            + ", ".join(f"`{p}`" for p in own) + "."
    if left:
        words += f" Left out of the grid, since {spec.name} does not define them: " + "; ".join(left) + "."
    return StrategyGrid(kept, x, h, words)
