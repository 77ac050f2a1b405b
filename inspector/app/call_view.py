"""The views of the current call: *This call* (the budget, forgotten references, calibration, the
request really sent, the payload), *Not sent & why*, *Pairing repairs* and *Export*.

Each is a ``*_tab(rp, call)`` drawn inside the per-call fragment (:func:`inspector.app.page.stepped_view`),
so a step redraws only the view on screen.
"""

from __future__ import annotations

import streamlit as st

from inspector.app import call_facts, chat, exports, findings, stepping, words
from inspector.app.widgets import rows_switch
from inspector.redact import mask_text
from inspector.replay import Replay
from inspector.report import cache_view, per_call
from inspector.report.figures import band_bar_html, forgotten_per_call
from inspector.report.tables import not_sent_table

ss = st.session_state


def budget_view(rp: Replay, call: int) -> None:
    """The call's budget: the six figures, the line of where each came from, any warning (the
    unrecorded prefix, a calibration, over budget, the estimate counter's under-count, a pairing
    check, the frame's own warnings), the band bar and its table."""
    facts = call_facts.budget_facts(rp, call)
    cols = [*st.columns(3), *st.columns(3)]  # two rows of three: no number is cut at 1024 px
    cols[0].metric("Payload tokens", f"{facts['payload_tokens']:,}")
    cols[1].metric("Model window", f"{facts['window']:,}", help=f"source: {facts['window_source']}")
    cols[2].metric("Headroom", f"{facts['headroom']:,}")
    cols[3].metric("Input budget", f"{facts['input_budget']:,}",
                   help="max_tokens − completion reserve − safety margin")
    cols[4].metric("Messages sent", f"{len(rp.frames[call].refs):,}")
    label, value, cost_help = cache_view.call_cost_figure(rp, call, facts["cost_usd"])
    cols[5].metric(label, value, help=cost_help)
    st.caption(words.plain_md(f"Model {facts['model']} · window {facts['window']:,} tokens from "
                           f"{facts['window_source']} · completion reserve {facts['reserve']:,} "
                           f"({facts['reserve_source']}) · safety margin {facts['margin']:,} · context manager: "
                           f"{facts['cm_words']}"))
    if facts["prefix_line"]:
        (st.info if facts["prefix"] else st.warning)(words.plain_md(facts["prefix_line"]))
    if facts["calibration"]:
        st.info(f"Token calibration in force: ×{facts['calibration']} ({facts['calibration_source']}). The input "
                f"ceiling is the window divided by it ({facts['max_tokens']:,} of our tokens).")
    if facts["over_budget"]:
        st.error(f"Over budget by {-facts['headroom']:,} tokens: the payload, the completion reserve and the safety "
                 "margin do not fit the window (the shaded part of the bar, past the window line).")
    if (check := call_facts.estimate_check(rp, call)) is not None:
        level, text = check
        {"error": st.error, "warning": st.warning, "info": st.info}[level](text)
    if facts["check"] != "ok":
        st.warning(f"Pairing check: {words.plain_md(facts['check'])}")
    for w in rp.frames[call].warnings:
        st.warning(words.plain_md(mask_text(w)))
    with st.container(key="band_bar"):
        st.html(band_bar_html(rp, call))
    st.dataframe(call_facts.band_table(rp, call), hide_index=True, width="content", key="band_table",
                 column_config={"tokens": st.column_config.NumberColumn(format="localized"),
                                "% of window": st.column_config.NumberColumn(format="%.1f")})


def payload_view(rp: Replay, call: int) -> None:
    """The payload sent at this call, as chat rows or a table (:func:`~inspector.app.widgets.rows_switch`),
    with the summary block sent and any summary computed but not sent (Q18) above it."""
    f = rp.frames[call]
    st.subheader(f"Payload sent — {len(f.refs):,} messages")
    as_table = rows_switch("payload_as")  # on its own row: beside the heading it was clipped at 1024 px
    st.caption(call_facts.summary_caption(rp, call))
    if (summary := call_facts.summary_block_text(rp, call)) is not None:
        with st.expander("The summary block sent at this call", expanded=False):
            st.code(summary, language=None, wrap_lines=True)
    for reason, text in call_facts.summary_not_sent(rp, call):  # Q18: computed, not sent — never shown as sent
        st.warning(f"**Not sent:** {words.plain_md(reason)}")
        with st.expander("The summary that was computed but not sent"):
            st.code(text, language=None, wrap_lines=True)
    if as_table:
        df = words.shown(per_call.payload_view(rp, call))
        st.dataframe(df, hide_index=True, width="stretch", key="payload_table",
                     column_config={"ref": st.column_config.TextColumn("transcript #"),
                                    "content": st.column_config.TextColumn("content (preview)", width="large")})
    else:
        st.caption("Click a row for its full text, its tool calls with their arguments, and why it is there.")
        st.html(chat.chat_html(chat.payload_rows(rp, call)))


def calibration_view(rp: Replay, call: int) -> None:
    """An observed compaction before this call, and this call's token counts beside the provider's
    reported usage when the log records it (nothing otherwise)."""
    if (note := call_facts.compaction_note(rp, call)) is not None:
        st.info(note)
    table = call_facts.call_calibration(rp, call)
    if table is None:
        return
    st.subheader("Calibration: our count vs the provider's")
    st.dataframe(words.shown(table), hide_index=True, width="content", key="calibration_table")
    st.caption(call_facts.calibration_caption(rp))


def explain_forgotten() -> None:
    """Open the message that holds the picked forgotten identifier under *Not sent & why*."""
    picked = ss.get("forgotten_pick")
    if picked is not None:
        ss.why_index = int(picked)
        ss.view, ss._rerun_page = "not_sent", True


def forgotten_list(rp: Replay, call: int) -> None:
    """The identifiers this call needed that are only in messages not sent, and a button that opens
    the message holding one under *Not sent & why*; nothing when the call forgot none."""
    if not forgotten_per_call(rp)[call]:  # most calls: no table to build at this step
        return
    lost = per_call.forgotten_view(rp, call)
    st.markdown(f"**Forgotten at this call: {len(lost)} identifier(s)** the call needed (user message, working "
                "memory, or what the agent did next) that are only in messages not sent.")
    st.dataframe(words.shown(lost), hide_index=True, width="stretch", key="forgotten_table")
    messages = list(dict.fromkeys(int(i) for i in lost["transcript #"]))
    if ss.get("forgotten_pick") not in messages:
        ss.forgotten_pick = messages[0]
    ids = {i: ", ".join(lost.loc[lost["transcript #"] == i, "identifier"].astype(str)) for i in messages}
    c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
    c1.selectbox("Message holding a forgotten identifier", messages, key="forgotten_pick", persist_state="page",
                 format_func=lambda i: f"transcript #{i} — {ids[i]}")
    c2.button("Why was it not sent?", key="forgotten_explain", on_click=explain_forgotten,
              help="Opens this message under “Not sent & why”.")


def this_call_tab(rp: Replay, call: int) -> None:
    """*This call*: the budget, the forgotten references, the calibration, the request really sent
    and the payload, top to bottom."""
    st.subheader(f"Token budget — {per_call.call_label(rp, call)}")
    budget_view(rp, call)
    forgotten_list(rp, call)
    calibration_view(rp, call)
    observed_view(rp, call)
    payload_view(rp, call)


def observed_view(rp: Replay, call: int) -> None:
    """The request the agent really sent at this call (when the log keeps it) beside this replay's."""
    table = call_facts.observed_beside(rp, call)
    if table is None:
        return
    st.subheader("What was really sent, beside this replay")
    st.dataframe(words.shown(table), hide_index=True, width="content", key="observed_table")
    st.caption(words.plain_md(call_facts.observed_words(rp, call)))


def not_sent_tab(rp: Replay, call: int) -> None:
    """*Not sent & why*: every earlier message missing from this call with its reason (chat rows or a
    table), and the one-sentence answer for any transcript message the user picks."""
    st.subheader(f"Not sent, and why — {per_call.call_label(rp, call)}")
    df = not_sent_table(rp, call)
    st.caption(f"{len(df):,} earlier transcript message(s) are not in this payload.")
    as_table = rows_switch("not_sent_as")
    if as_table:
        st.dataframe(words.shown(df), hide_index=True, width="stretch", key="not_sent_table")
    elif len(df):
        st.html(chat.chat_html(chat.not_sent_rows(rp, call, df, limit=chat.CHAT_ROWS_MAX), total=len(df)))
    st.markdown("**Why did my message disappear?**")
    n = len(rp.messages)
    ss.why_index = stepping.clamp_call(ss.get("why_index", 0), n)
    index = st.number_input("Transcript message #", min_value=0, max_value=max(n - 1, 0), step=1, key="why_index",
                            persist_state="page")
    st.info(call_facts.explain_message(rp, call, int(index), df))
    if n:
        st.code(call_facts.transcript_message_text(rp, int(index)), language="json", wrap_lines=True)


def repairs_tab(rp: Replay, call: int) -> None:
    """*Pairing repairs*: the trimmer's cut results at this call, the repairs at this call and in the
    whole replay, and what the transcript itself contains (the importer's findings)."""
    st.subheader(f"Pairing repairs — {per_call.call_label(rp, call)}")
    here = findings.repair_findings(rp, call)
    if (note := call_facts.trim_note(rp, call)) is not None:
        st.info(note)
    if not here:
        st.caption("No repair at this call.")
    else:
        st.html(findings.findings_html(rp, here, "rep-call-"))
    st.subheader("Every repair in the replay")
    every = findings.repair_findings(rp)
    if not every:
        st.caption("The pairing repair changed nothing in this replay.")
    else:
        st.html(findings.findings_html(rp, every, "rep-all-"))
    found = findings.irregularity_findings(rp)
    if found:
        st.subheader("What the transcript itself contains (importer findings)")
        st.caption("Kept as found: the importer never repairs a transcript; the pairing repair above acts on what "
                   "a call sends.")
        st.html(findings.findings_html(rp, found, "irr-"))


def export_tab(rp: Replay, call: int) -> None:
    """*Export*: download buttons for the frames (JSON, CSV) and this call's payload (JSON); each file
    is built when its button is pressed."""
    st.subheader("Export")
    c1, c2, c3 = st.columns(3)
    c1.download_button("Frames (JSON)", data=lambda: exports.frames_json(rp), file_name="frames.json",
                       mime="application/json", key="dl_frames_json", on_click="ignore")
    c2.download_button("Frames (CSV)", data=lambda: exports.frames_csv(rp), file_name="frames.csv",
                       mime="text/csv", key="dl_frames_csv", on_click="ignore")
    c3.download_button(f"Payload of call {call} (JSON)", data=lambda: exports.payload_json(rp, call),
                       file_name=f"payload_call_{call}.json", mime="application/json", key="dl_payload",
                       on_click="ignore")
