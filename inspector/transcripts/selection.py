"""Which conversations of a file to use: ``N``, ``A-B`` (inclusive) or ``all``.

tau-bench and tau2-bench files hold hundreds of conversations; every face that replays a file
(CLI ``--conversation``, notebooks) selects them through :func:`parse_selection` and
:func:`select_transcripts`, so "which conversations" means the same thing everywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from inspector.transcripts.api import iter_transcripts, list_conversations, load_transcript
from inspector.transcripts.model import Transcript, TranscriptError

_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


@dataclass(frozen=True)
class Selection:
    """``first``..``last`` inclusive; ``last is None`` means "to the end of the file" (``all`` is
    ``Selection(0, None)``)."""

    first: int = 0
    last: int | None = 0
    text: str = "0"

    @property
    def single(self) -> bool:
        """True when exactly one conversation is selected (the outputs keep their one-replay shape)."""
        return self.last is not None and self.first == self.last


ALL = Selection(0, None, "all")


def parse_selection(text: str | int) -> Selection:
    """``"3"`` → conversation 3; ``"2-5"`` → 2, 3, 4, 5; ``"all"`` → every conversation.
    Raises :class:`ValueError` naming the accepted forms for anything else."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    raw = str(text).strip()
    if raw.lower() == "all":
        return ALL
    if raw.isdigit():
        return Selection(int(raw), int(raw), raw)
    m = _RANGE.match(raw)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        if a > b:
            raise ValueError(f"conversation range {raw!r} is backwards (write {b}-{a})")
        return Selection(a, b, raw)
    raise ValueError(f"conversation {raw!r} must be a number N, a range A-B or 'all'")


def select_transcripts(path: str | os.PathLike[str], selection: Selection, *,
                       format: str | None = None) -> Iterator[Transcript]:
    """The selected conversations of ``path``, in file order, each imported once.

    A selection reaching past the file's last conversation is a :class:`TranscriptError` naming
    the file and how many conversations it holds (``all`` never is)."""
    if selection.single:
        yield load_transcript(path, format=format, conversation=selection.first)
        return
    count = len(list_conversations(path, format=format))
    last = count - 1 if selection.last is None else selection.last
    if selection.last is not None and selection.last >= count:
        name = os.path.basename(os.fspath(path))
        raise TranscriptError(name, f"conversations {selection.text} are out of range: the file holds {count} "
                                    f"conversation{'s' if count != 1 else ''} (0-{count - 1})")
    for t in iter_transcripts(path, format=format):
        if selection.first <= t.conversation <= last:
            yield t
