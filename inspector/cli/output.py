"""How the command line writes: tables, progress, warnings and errors (rich does the drawing).

Rules every command follows through this module:

- Results go to stdout (or ``-o FILE``); progress, warnings, errors and the settings in force
  (:func:`state`) go to stderr, so stdout stays the requested format.
- A progress bar appears only when stderr is a terminal; piped or redirected, nothing is drawn.
- A warning is one line, ``warning: <message>``; an error is one line, ``error: <message>``.
- A terminal table fits 100 columns (``--wide``: every column, no width limit), ends with a totals
  row where totals mean something, uses the plain words of :mod:`inspector.vocabulary` and prints
  numbers with thousands separators. JSON and CSV keep identifiers and raw numbers.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from inspector.vocabulary import action_words, column_words

TABLE_WIDTH = 100
"""Columns a terminal table may use unless ``--wide`` is given."""
WIDE_WIDTH = 400
"""Columns a terminal table may use with ``--wide``."""

Agg = Literal["sum", "max", "min", ""]


@dataclass(frozen=True)
class Column:
    """One table column: its identifier, how the totals row combines it, and whether it is shown
    in the default (100-column) view."""

    key: str
    agg: Agg = ""
    narrow: bool = True


# --- messages on stderr ---------------------------------------------------------------------------

def error(message: str, stream: TextIO | None = None) -> None:
    """``error: <message>`` on stderr, secrets masked."""
    from inspector.redact import mask_text

    print(f"error: {mask_text(str(message))}", file=stream if stream is not None else sys.stderr)


def warning(message: str, stream: TextIO | None = None) -> None:
    """``warning: <message>`` on stderr, one line, secrets masked."""
    from inspector.redact import mask_text

    text = " ".join(mask_text(str(message)).split())
    print(f"warning: {text}", file=stream if stream is not None else sys.stderr)


def _showwarning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: TextIO | None = None, line: str | None = None) -> None:
    """:func:`warnings.showwarning`'s signature; only the message is shown."""
    warning(str(message), file)


def install_warning_format() -> None:
    """Python warnings print as ``warning: <message>`` (never a file name or a source line)."""
    warnings.showwarning = _showwarning


def state(lines: Iterable[str]) -> None:
    """Print ``lines`` (the policy, the agent, the fleet in force) on stderr, one per line, so the
    reader of stdout gets only the requested format."""
    for line in lines:
        print(line, file=sys.stderr)


# --- progress -------------------------------------------------------------------------------------

def stderr_is_terminal(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default stderr) is a terminal, the one place a progress bar is drawn."""
    s = stream if stream is not None else sys.stderr
    return bool(getattr(s, "isatty", lambda: False)())


class Progress:
    """A progress bar on stderr when it is a terminal; a no-op otherwise. ``advance()`` after each
    unit of work; ``total=None`` draws a spinner with the elapsed time.

    ``label`` names the work, ``total`` counts its units, ``stream`` is where it is drawn (default
    stderr). Used as a context manager: the bar disappears when the block ends."""

    def __init__(self, label: str, total: int | None, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = total
        self._bar: Any = None
        self._task: Any = None
        self._stream = stream if stream is not None else sys.stderr
        self.live = stderr_is_terminal(self._stream)

    def __enter__(self) -> Progress:
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            cols: list[Any] = [SpinnerColumn(), TextColumn("{task.description}")]
            if self.total is not None:
                cols += [BarColumn(), MofNCompleteColumn()]
            cols.append(TimeElapsedColumn())
            self._bar = RichProgress(*cols, console=Console(file=self._stream), transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        if self._bar is not None:
            self._bar.advance(self._task, n)

    def __call__(self, done: int, total: int) -> None:
        """The ``(done, total)`` callback form (as :func:`inspector.sweep.sweep` calls it)."""
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)


@contextmanager
def spinner(label: str) -> Iterator[None]:
    """A context manager: a spinner labelled ``label`` with the elapsed time, on a terminal, while
    a single long step runs."""
    with Progress(label, None):
        yield


# --- tables ---------------------------------------------------------------------------------------

def cell(value: Any, key: str = "", row: Mapping[str, Any] | None = None) -> str:
    """``value`` of column ``key`` as table text: thousands separators, 4-decimal dollars, plain
    words, "–" for none. ``row``: the whole row, for words that depend on another column (a summary
    action's words follow ``summary_sent``)."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if key == "cm_action":
        sent = row.get("summary_sent") if row is not None else None
        return action_words(value, None if sent is None else bool(sent))
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if key.endswith("usd"):
            return f"{value:,.4f}"
        return f"{int(value):,}" if value.is_integer() else f"{value:,.3g}"
    return str(value)


def totals(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column], label_key: str) -> dict[str, Any]:
    """The totals row: sums, maxima or minima per :attr:`Column.agg`; a sum over a column with a
    missing value is missing (an unknown price makes the total unknown). A row marked
    ``pending: True`` (a replay's pending next call, never made) is shown but not counted."""
    rows = [r for r in rows if r.get("pending") is not True]
    out: dict[str, Any] = {c.key: None for c in columns}
    out[label_key] = "total"
    for c in columns:
        if not c.agg:
            continue
        raw = [r.get(c.key) for r in rows]
        if c.agg == "sum" and any(v is None or (isinstance(v, float) and math.isnan(v)) for v in raw):
            continue
        vals: list[Any] = [v for v in raw if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if not vals:
            continue
        if c.agg == "sum":
            total = sum(vals)
            out[c.key] = round(total, 8) if isinstance(total, float) else total
        else:
            out[c.key] = max(vals) if c.agg == "max" else min(vals)
    return out


_NO_WRAP = frozenset(("cm_action", "strategy", "check", "transcript"))
_TEXT_MAX = 40  # free text (errors, labels) wraps at this width


def _wrap_header(text: str, width: int) -> str:
    """The heading on as many lines as it takes to stay within ``width`` (never splitting a word)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _column_layout(shown: Sequence[Column], numeric: set[str],
                   text_rows: Sequence[Sequence[str]]) -> list[tuple[str, int]]:
    """Each shown column's heading (wrapped to its data) and width: its widest cell, free text capped
    at ``_TEXT_MAX``, never narrower than the heading's longest word."""
    layout: list[tuple[str, int]] = []
    for j, c in enumerate(shown):
        data = max([len(row[j]) for row in text_rows] or [0])
        if c.key not in numeric and c.key not in _NO_WRAP:
            data = min(data, _TEXT_MAX)
        header = _wrap_header(column_words(c.key), data)
        layout.append((header, max(data, *(len(line) for line in header.split("\n")))))
    return layout


def _columns_that_fit(layout: Sequence[tuple[str, int]], limit: int) -> int:
    """How many leading columns fit in ``limit`` characters (two between columns; at least one).
    A number is never cut: the last columns that do not fit are left out, and the table says so."""
    keep = len(layout)
    while keep > 1 and sum(w for _, w in layout[:keep]) + 2 * (keep - 1) > limit:
        keep -= 1
    return keep


def _draw(layout: Sequence[tuple[str, int]], shown: Sequence[Column], numeric: set[str], cells: list[list[str]],
          foot: list[str] | None, *, wide: bool, color: bool) -> list[str]:
    """The table drawn by rich with the columns of ``layout``, its lines stripped of trailing blanks."""
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold" if color else "")
    keep = len(layout)
    for (header, width), c in zip(layout, shown[:keep], strict=True):
        table.add_column(header, justify="right" if c.key in numeric else "left", overflow="fold",
                         no_wrap=c.key in numeric or c.key in _NO_WRAP, min_width=width, max_width=width)
    for row in cells:
        table.add_row(*row[:keep])
    if foot is not None:
        table.add_section()
        table.add_row(*foot[:keep], style="bold" if color else "")
    buf = io.StringIO()
    Console(file=buf, width=WIDE_WIDTH if wide else TABLE_WIDTH, color_system="auto" if color else None,
            force_terminal=color, highlight=False, soft_wrap=False).print(table)
    return [line.rstrip() for line in buf.getvalue().splitlines()]


def render_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column], *, title: str | None = None,
                 wide: bool = False, total: bool = True, color: bool = False) -> str:
    """The rows as a text table (rich), ``TABLE_WIDTH`` columns wide unless ``wide``.

    ``columns`` in order, each shown when ``wide`` or :attr:`Column.narrow` and present in a row;
    ``title`` wraps above the table, ``total`` adds the :func:`totals` row, ``color`` bold headings
    and terminal colours. Columns that do not fit are left out whole (a number is never cut) and a
    line under the table names them. Returns the text with a final newline."""
    import textwrap

    present = set().union(*(r.keys() for r in rows)) if rows else {c.key for c in columns}
    shown = [c for c in columns if (wide or c.narrow) and c.key in present]
    numeric = {c.key for c in shown if rows and all(
        isinstance(r.get(c.key), (int, float)) or r.get(c.key) is None for r in rows)}
    cells = [[cell(r.get(c.key), c.key, r) for c in shown] for r in rows]
    foot: list[str] | None = None
    if total and rows and any(c.agg for c in shown):
        t = totals(rows, shown, shown[0].key)
        foot = [cell(t[c.key], c.key) if t[c.key] is not None else "" for c in shown]
    layout = _column_layout(shown, numeric, [*cells, *([foot] if foot else [])])
    limit = WIDE_WIDTH if wide else TABLE_WIDTH
    keep = _columns_that_fit(layout, limit)
    lines = _draw(layout[:keep], shown, numeric, cells, foot, wide=wide, color=color)
    hidden = [column_words(c.key).replace("\n", " ") for c in shown[keep:]]
    if hidden:
        lines += textwrap.wrap(f"(not shown, too wide: {', '.join(hidden)}; --wide shows every column)", limit)
    if title:
        lines[:0] = textwrap.wrap(title, limit)
    return "\n".join(lines) + "\n"


def write(text: str | bytes, out: str | None) -> None:
    """``text`` to ``out`` (a file, UTF-8) or stdout, with exactly one final newline. ``bytes`` are
    UTF-8 text already (a replay's JSON): written as they are, never decoded to be encoded again
    (nor copied to add the newline)."""
    if isinstance(text, bytes):
        _write_bytes(text, b"" if text.endswith(b"\n") else b"\n", out)
        return
    text = text if text.endswith("\n") else text + "\n"
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def _write_bytes(data: bytes, end: bytes, out: str | None) -> None:
    """UTF-8 ``data`` then ``end`` to ``out`` or stdout: through stdout's byte stream when it has
    one (after what its text layer holds), else as text."""
    if out:
        with open(out, "wb") as f:
            f.write(data)
            f.write(end)
        return
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write((data + end).decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.write(end)
    buffer.flush()


def end_process(args: argparse.Namespace) -> None:
    """End the process with status 0 now, when the command runs as the process
    (``args.end_process``, set by :func:`inspector.cli.run`); otherwise return. Called by a command
    that has written everything it writes (an ``-o`` file is closed by :func:`write`): stdout and
    stderr are flushed first (a reader gone shows here as :class:`BrokenPipeError`, handled as
    everywhere), then :func:`os._exit` skips the interpreter's teardown: freeing the objects a
    replay built and the modules and encoding it loaded costs CPU and changes nothing the user
    sees. Only for a command whose process holds nothing to finish at exit (no temporary folder, no
    atexit work): ``replay``."""
    if not getattr(args, "end_process", False):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def stdout_colour(out: str | None) -> bool:
    """Whether to colour: only when the output goes to stdout (``out`` is None) and that is a terminal."""
    return not out and bool(getattr(sys.stdout, "isatty", lambda: False)())
