"""Small Streamlit pieces every view uses: problems in one error box, a figure kept per replay in
the session, number formats for tables, the *Chat rows / Table* switch and the agent line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from inspector.app import words
from inspector.replay import Replay
from inspector.report.figures import cursor_shape

ss = st.session_state


def session_figure(key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    """A figure built once per replay and kept in this session, so a step only moves its marker."""
    figs: dict[tuple[Any, ...], Any] = ss.setdefault("_figures", {})
    if key not in figs:
        if len(figs) > 12:
            figs.clear()
        figs[key] = build()
    return figs[key]


def grouped(df: Any) -> dict[str, Any]:
    """Whole-number columns with thousands separators (62,192, not 62192), as the CLI's tables show
    them; dollar columns with four decimals each (0.0120, not 0.012), other fractions with two."""
    out = {str(c): st.column_config.NumberColumn(format="localized") for c in df.select_dtypes("integer").columns}
    for c in df.select_dtypes("float").columns:
        out[str(c)] = st.column_config.NumberColumn(format="$%.4f" if str(c).endswith("$") else "%.2f")
    return out


def mark_call(fig: Any, call: int) -> Any:
    """``fig`` with the cursor at ``call`` (:func:`~inspector.report.figures.cursor_shape`) as its only
    shape; returns it."""
    fig.layout.shapes = [cursor_shape(call)]
    return fig


def show_problems(title: str, problems: list[str]) -> None:
    """One error box headed ``title`` listing ``problems`` (each as plain text, secrets masked); nothing
    when there is none."""
    if problems:
        st.error(f"**{title}**\n\n{words.issue_list(problems)}")


ROWS_AS = {"rows": "Chat rows", "table": "Table"}


def rows_switch(key: str) -> bool:
    """Chat rows (default) or a table; True for the table."""
    st.segmented_control("Show as", list(ROWS_AS), key=key, format_func=lambda k: ROWS_AS[k], required=True,
                         label_visibility="collapsed", persist_state="page")
    return ss.get(key) == "table"


def agent_caption(rp: Replay) -> None:
    """Which prompt, tools, model and window are in force and where each came from (Q21), in words."""
    if rp.agent is not None:
        st.caption(words.plain_md(words.agent_words(rp)))
