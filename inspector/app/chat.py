"""Messages as chat rows: the exact payload of a call, and what it leaves out, as expandable HTML.

A row's heading is always visible (role, band, tokens, transcript #, a preview); expanding it shows
the whole text, the tool calls with their arguments, why the message is where it is and links to
its related messages. Every text is masked (:mod:`inspector.redact`) and HTML-escaped. No Streamlit
import.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from inspector.app.call_facts import summary_not_sent
from inspector.redact import mask_secrets, mask_text
from inspector.replay import Replay, reason_lookup
from inspector.report.figures import BAND_COLORS, BAND_LABELS
from inspector.report.tables import not_sent_table, payload_table
from inspector.vocabulary import reason_words, repair_words


CHAT_TEXT_MAX = 20_000
"""Characters of one message shown in a chat row; longer texts say how much is left out (the
Export view has every message whole)."""


CHAT_ROWS_MAX = 400
"""Chat rows drawn per view; beyond it the view says how many rows are left out."""


@dataclass(frozen=True)
class ChatRow:
    """One message as a chat row: the line always shown, and what expanding it reveals."""

    anchor: str  # HTML id, so other rows and tables can link to it ("msg-12", "row-3")
    role: str
    band: str  # a BAND_COLORS key, or "" for a message that is not sent
    heading: str  # role · band · tokens · transcript # (plain text)
    why: str  # why the message is where it is (plain text)
    text: str  # the full text, masked
    tool_calls: tuple[tuple[str, str, str], ...] = ()  # (id, name, arguments as pretty JSON), masked
    links: tuple[str, ...] = ()  # anchors of related rows (a tool call's result, a result's ask)
    note: str = ""  # said right after the heading, in plain weight (why a row is not sent)


def _message_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: the text parts as text, anything else as JSON
        parts = [p.get("text") if isinstance(p, dict) and isinstance(p.get("text"), str)
                 else json.dumps(p, ensure_ascii=False, default=str) for p in content]
        return "\n".join(str(p) for p in parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def _tool_calls(msg: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    out = []
    for c in msg.get("tool_calls") or []:
        if not isinstance(c, Mapping):
            continue
        fn = c.get("function") or {}
        args = fn.get("arguments")
        try:
            parsed = json.loads(args) if isinstance(args, str) else args
            pretty = json.dumps(mask_secrets(parsed), ensure_ascii=False, indent=2, default=str)
        except ValueError:
            pretty = mask_text(str(args))
        out.append((str(c.get("id") or ""), str(fn.get("name") or "?"), pretty))
    return tuple(out)


def payload_rows(rp: Replay, call: int) -> list[ChatRow]:
    """The exact payload of one call as chat rows, in the order sent (masked text, tool calls with
    their arguments, why each row is there). Built from the same payload as :func:`payload_table`."""
    f = rp.frames[call]
    payload = f.payload(rp.messages)
    table = payload_table(rp, call)
    index = _tool_call_index(rp)
    repairs = {r.ref: r.repair for r in f.repairs if r.ref is not None}
    rows = []
    refs, bands, synthetic = f.refs, f.row_bands, f.synthetic  # the payload's rows, position by position
    replaced = reason_lookup(f.replaced)  # a frontier's view is bisected, not copied
    for k, msg in enumerate(payload):
        ref = refs[k]
        band = bands[k]
        tokens = table["tokens"].iloc[k]
        where = f"transcript #{ref}" if ref is not None else "synthesised"
        heading = (f"{msg.get('role')} · {BAND_LABELS.get(band, band)} · "
                   f"{'' if tokens is None else f'{int(tokens):,} tokens · '}{where}")
        why = f"Sent as part of the {BAND_LABELS.get(band, band)}"
        in_place = ref is not None and synthetic[k] is not None and replaced(ref) == synthetic[k]
        if in_place:  # the manager's edit record sent this row instead of the transcript message
            why += f"; sent in place of transcript #{ref}: {reason_words(synthetic[k])}"
        elif synthetic[k]:
            why += f"; written by the engine ({synthetic[k]})"
        if k in f.own and not in_place:
            rep = repairs.get(ref) if ref is not None else None
            why += "; rewritten by the pairing repair" + (f" ({repair_words(rep.kind)})" if rep is not None else "")
        calls = _tool_calls(msg)
        ids = [c[0] for c in calls] + ([str(msg["tool_call_id"])] if msg.get("tool_call_id") else [])
        links = tuple(f"msg-{i}" for cid in ids for i in index.get(cid, ()) if i != ref)
        rows.append(ChatRow(f"msg-{ref}" if ref is not None else f"row-{k}", str(msg.get("role")), band, heading,
                            why + ".", mask_text(_message_text(msg.get("content"))), calls, links))
    return rows


def not_sent_rows(rp: Replay, call: int, not_sent: pd.DataFrame | None = None,
                  limit: int | None = None) -> list[ChatRow]:
    """Every earlier transcript message missing from this call as a chat row, with the reason
    (the first ``limit`` of them when given: late in a long conversation that is most of it)."""
    df = not_sent_table(rp, call) if not_sent is None else not_sent
    if limit is not None:
        df = df.head(limit)
    index = _tool_call_index(rp)
    rows = [ChatRow(f"not-sent-{k}", "system", "", "system · summary block computed for this call",
                    f"Not sent: {reason}.", text, note=f"not sent: {reason}")
            for k, (reason, text) in enumerate(summary_not_sent(rp, call))]
    for ref, reason in zip(df["ref"], df["reason"], strict=True):
        if pd.isna(ref):
            continue  # the synthesised rows above
        i = int(ref)
        msg = rp.messages[i]
        calls = _tool_calls(msg)
        ids = [c[0] for c in calls] + ([str(msg["tool_call_id"])] if msg.get("tool_call_id") else [])
        rows.append(ChatRow(f"msg-{i}", str(msg.get("role")), "", f"{msg.get('role')} · transcript #{i}",
                            f"Not sent: {reason}.", mask_text(_message_text(msg.get("content"))), calls,
                            tuple(f"msg-{j}" for cid in ids for j in index.get(cid, ()) if j != i),
                            note=f"not sent: {reason}"))
    return rows


CHAT_CSS = (".ci-chat details{border-left:4px solid #ccc;margin:3px 0;padding:3px 8px;background:rgba(0,0,0,.025);"
            "scroll-margin-top:var(--ci-sticky-top, 15rem)}"
            ".ci-chat summary{cursor:pointer;font-size:.9rem;line-height:1.5}"
            ".ci-chat .why{color:#555;font-size:.82rem;margin:2px 0}"
            ".ci-chat pre{white-space:pre-wrap;word-break:break-word;max-height:26rem;overflow:auto;"
            "font-size:.8rem;margin:4px 0;padding:6px;background:rgba(0,0,0,.04)}"
            ".ci-chat .prev{color:#666}.ci-chat .note{color:#8a1c1c}")


def chat_html(rows: list[ChatRow], *, limit: int = CHAT_ROWS_MAX, total: int | None = None) -> str:
    """Chat rows as one HTML block of ``<details>`` elements: the heading line always visible
    (role, band, tokens, transcript #, a preview), the full text, the tool calls with their
    arguments, why the message is there and links to related messages on expanding. Every text
    is HTML-escaped: transcript content is shown as text, never interpreted."""
    import html

    out = [f"<style>{CHAT_CSS}</style><div class='ci-chat'>"]
    for r in rows[:limit]:
        color = BAND_COLORS.get(r.band, "#BBBBBB")
        preview = " ".join(r.text.split())[:110]
        if not preview and r.tool_calls:
            preview = ", ".join(f"{name}(…)" for _, name, _ in r.tool_calls)
        text = r.text if len(r.text) <= CHAT_TEXT_MAX else \
            r.text[:CHAT_TEXT_MAX] + f"\n… {len(r.text) - CHAT_TEXT_MAX:,} more characters (see Export)"
        body = [f"<div class='why'>{html.escape(r.why)}</div>"]
        if text:
            body.append(f"<pre>{html.escape(text)}</pre>")
        for cid, name, args in r.tool_calls:
            body.append(f"<div class='why'>tool call <b>{html.escape(name)}</b> · id {html.escape(cid)}</div>"
                        f"<pre>{html.escape(args)}</pre>")
        if r.links:
            body.append("<div class='why'>related: " + ", ".join(
                f"<a href='#{html.escape(a)}'>{html.escape(_anchor_words(a))}</a>"
                for a in dict.fromkeys(r.links)) + "</div>")
        out.append(f"<details id='{html.escape(r.anchor)}' style='border-left-color:{color}'>"
                   f"<summary><b>{html.escape(r.heading)}</b>"
                   + (f" · <span class='note'>{html.escape(r.note)}</span>" if r.note else "")
                   + f" <span class='prev'>{html.escape(preview)}</span>"
                   f"</summary>{''.join(body)}</details>")
    total = len(rows) if total is None else total
    if total > limit:
        out.append(f"<p>… {total - limit:,} more rows are not drawn here (the table view and the Export view "
                   "have all of them).</p>")
    out.append("</div>")
    return "".join(out)


def _anchor_words(anchor: str) -> str:
    """A chat row's anchor as link text: ``msg-12`` (or ``rep-msg-12``) is "transcript #12"."""
    m = re.search(r"msg-(\d+)$", anchor)
    return f"transcript #{m.group(1)}" if m else anchor


def _tool_call_index(rp: Replay) -> dict[str, list[int]]:
    """Tool call id → transcript indices of the ask(s) and result(s) that carry it (cached on the replay)."""
    return rp.view("app_call_index", lambda: _call_index(rp))


def _call_index(rp: Replay) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, m in enumerate(rp.messages):
        ids = [c.get("id") for c in (m.get("tool_calls") or []) if isinstance(c, dict)]
        if m.get("tool_call_id") is not None:
            ids.append(m.get("tool_call_id"))
        for cid in ids:
            if isinstance(cid, str) and cid:
                out.setdefault(cid, []).append(i)
    return out
