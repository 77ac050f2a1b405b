"""The app's text: plain words for Markdown elements, tables for the screen, the agent line.

Every text that quotes the input (an error message, an identifier) goes through :mod:`inspector.redact`
and is escaped, so nothing a transcript or a manifest holds is ever interpreted as Markdown or HTML.
No Streamlit import.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

import pandas as pd

from inspector.redact import mask_text
from inspector.replay import Replay


INTRO = ("What the model is sent on every LLM call of this conversation, and why. Each bar of the timeline is one "
         "call (tokens by band, against the budget lines); step with ◀ ▶ or the ← → keys, or jump to the next "
         "summary, trim, repair or forgotten reference; the views below explain the current call.")
"""The one-line statement of what the app shows and how to read it (shown under the title)."""


def code_span(text: Any) -> str:
    """``text`` as a Markdown inline code span, so no Markdown or HTML in it is ever interpreted
    (alert bodies are Markdown). Newlines become spaces: one message per span."""
    s = " ".join(str(text).split())
    if not s:
        return "``"
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def issue_list(lines: Iterable[Any]) -> str:
    """A Markdown bullet list of plain-text lines (each in a code span, secrets masked): error
    messages can quote the input they complain about."""
    return "\n".join(f"- {code_span(mask_text(str(x)))}" for x in lines)


def agent_words(rp: Replay) -> str:
    """The system text, tools, model and window in force and where each came from (Q21): the
    CLI's agent line (:meth:`~inspector.policy.AgentInForce.describe`), with a source that carries
    its own note in parentheses written "manifest; the transcript records no model" (not nested)."""
    a = rp.agent
    if a is None:
        return ""
    src = re.sub(r"^(\w+) \((.*)\)$", r"\1; \2", a.model_source)
    model = f"{a.model} ({src})" if a.model else src
    window = f"{a.window:,} tokens ({a.window_source})" if a.window is not None else "unknown"
    return f"agent: system text {a.system_detail} · tools {a.tools_detail} · model {model} · window {window}"


def plain_md(text: Any) -> str:
    """Plain text for a Markdown element (a caption, an alert): every Markdown, HTML or Streamlit
    directive character is escaped, so the text shows as typed in the page's own font (not as a
    monospace code span)."""
    s = " ".join(str(text).split())
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:=])", r"\\\1", s)


INDEX_COLUMNS = frozenset(("ref", "transcript #", "message", "#", "pos", "call", "turn", "step"))
"""Columns that hold a position (a transcript index, a call): written without thousands separators."""


def shown(df: pd.DataFrame) -> pd.DataFrame:
    """A table for the screen with no "None" / "null" cell: a missing value is "—" (numbers in a
    column that has one are written out: counts with thousands separators, as the other columns
    show them, positions such as a transcript index without)."""
    out = df.copy()
    for col in out.columns:
        if not out[col].isna().any():
            continue
        if pd.api.types.is_numeric_dtype(out[col]) and not pd.api.types.is_bool_dtype(out[col]):
            sep = "" if str(col) in INDEX_COLUMNS else ","
            out[col] = [("—" if pd.isna(v) else (f"{int(v):{sep}}" if float(v).is_integer() else f"{float(v):,.1f}"))
                        for v in out[col]]
        else:
            out[col] = out[col].astype(object).where(out[col].notna(), "—")
    return out


def number_words(value: Any, dollars: bool = False) -> str:
    """A number as a table cell: thousands separators, dollars with four decimals, "—" for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and dollars:
        return f"${value:,.4f}"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


def worded(df: pd.DataFrame) -> pd.DataFrame:
    """The same table with headings in words (:func:`inspector.vocabulary.column_words`; the prompt
    cache's columns among them, as :data:`inspector.vocabulary.CACHE_WORDS` words them)."""
    from inspector.vocabulary import column_words

    return df.rename(columns={c: column_words(c) for c in df.columns})
