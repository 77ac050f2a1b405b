"""Inputs for tuning: every conversation of every file, as the sweep and the notebooks need them.

:func:`expand_conversations` turns the tuner's ``TRANSCRIPTS`` (paths, ``path#N`` for one
conversation of a multi-conversation file, or already-loaded transcripts) into one
:class:`~inspector.transcripts.Transcript` per conversation, in input order: a multi-conversation
file (a 200-episode benchmark) contributes every conversation, labelled ``file#N`` by the sweep.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


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
