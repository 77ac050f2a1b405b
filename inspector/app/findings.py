"""Pairing repairs and importer findings as sentences that link to the messages they name.

Read from the replay's repair records (:func:`inspector.report.tables.repairs_table`) and the
transcript's irregularities, never from their prose. No Streamlit import.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from inspector.app.chat import ChatRow, _message_text, _tool_call_index, _tool_calls, chat_html
from inspector.redact import mask_text
from inspector.replay import Replay
from inspector.report.tables import repairs_table
from inspector.vocabulary import irregularity_words, repair_words


def repairs_view(rp: Replay, call: int | None = None) -> pd.DataFrame:
    """:func:`repairs_table` plus ``messages``: the transcript message the repair concerned (its
    ``ref``) and every ask and result that carries an id the repair names (read from the record's
    fields, never from its prose)."""
    df = repairs_table(rp, call)
    index = _tool_call_index(rp)
    links = []
    for row in df.itertuples(index=False):
        ids = {x for x in (row.tool_call_id, row.new_id) if isinstance(x, str)}
        refs = sorted({i for cid in ids for i in index.get(cid, ())} | ({int(row.ref)} if pd.notna(row.ref) else set()))
        links.append(", ".join(str(i) for i in refs))
    df.insert(len(df.columns) - 1, "messages", links)
    df.insert(df.columns.get_loc("kind") + 1, "what", [repair_words(k) for k in df["kind"]])
    return df


@dataclass(frozen=True)
class Finding:
    """One repair or importer finding as a sentence: where (``place``), what (``words``), the tool
    call ids it names, a note (the record's own detail) and the transcript messages it concerns."""

    place: str
    words: str
    note: str
    messages: tuple[int, ...]


def repair_findings(rp: Replay, call: int | None = None) -> list[Finding]:
    """Every pairing repair of one call (or of the replay) in words, with the transcript messages
    it concerns (:func:`repairs_view`'s links)."""
    df = repairs_view(rp, call)
    out = []
    for row in df.itertuples(index=False):
        ids = ""
        if isinstance(row.tool_call_id, str) and row.tool_call_id:
            ids = f" (tool call {row.tool_call_id}" + (f", re-bound to {row.new_id}" if isinstance(row.new_id, str)
                                                       else "") + ")"
        note = "" if row.kind == "empty_result_synthesised" else str(row.detail or "")
        msgs = tuple(int(x) for x in str(row.messages).split(", ") if x.strip().isdigit())
        out.append(Finding(f"call {row.call} · turn {row.turn} · step {row.step}", repair_words(row.kind) + ids,
                           note, msgs))
    return out


def irregularity_findings(rp: Replay) -> list[Finding]:
    """What the transcript itself contains that a strict provider would object to (the importer's
    findings, kept as found), in words, each with the message it is about."""
    return [Finding("the file as a whole" if r.index is None else f"transcript #{r.index}", irregularity_words(r.kind),
                    str(r.detail or ""), () if r.index is None else (int(r.index),))
            for r in getattr(rp.transcript, "irregularities", [])]


FINDINGS_MAX = 200
"""Findings drawn per list; beyond it the list says how many are left out (the Export view's
frames hold every repair)."""


def findings_html(rp: Replay, findings: list[Finding], prefix: str) -> str:
    """Findings as a list of sentences, each linking to its messages; the messages follow as chat
    rows (anchors ``{prefix}msg-N``), so a link opens the message it names on the same page. At
    most :data:`FINDINGS_MAX` of them."""
    import html

    items: list[str] = []
    wanted: list[int] = []
    for f in findings[:FINDINGS_MAX]:
        links = ", ".join(f"<a href='#{prefix}msg-{i}'>transcript #{i}</a>" for i in f.messages)
        wanted += f.messages
        note = f"<div class='why'>{html.escape(mask_text(f.note))}</div>" if f.note else ""
        items.append(f"<li><b>{html.escape(f.place)}</b>: {html.escape(f.words)}"
                     + (f" — {links}" if links else "") + f"{note}</li>")
    rows = []
    for i in sorted(set(wanted)):
        if not 0 <= i < len(rp.messages):
            continue
        msg = rp.messages[i]
        rows.append(ChatRow(f"{prefix}msg-{i}", str(msg.get("role")), "", f"{msg.get('role')} · transcript #{i}",
                            "A message named above.", mask_text(_message_text(msg.get("content"))),
                            _tool_calls(msg)))
    if len(findings) > FINDINGS_MAX:
        items.append(f"<li>… {len(findings) - FINDINGS_MAX:,} more are not listed here (the Export view's frames "
                     "hold every repair).</li>")
    return ("<style>.ci-findings li{margin:2px 0}.ci-findings .why{color:#555;font-size:.82rem}</style>"
            f"<ul class='ci-findings'>{''.join(items)}</ul>"
            + (chat_html(rows) if rows else ""))
