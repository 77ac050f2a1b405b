"""The facts of one call the app shows beside its payload, read from the replay's frames.

The budget (:func:`budget_facts`, :func:`band_table`), the token calibration against the provider's
reported usage, the request really sent when the log keeps it, the trimmer's cuts, the summary
block sent (or computed and not sent, Q18) and why a message is or is not in the payload. Nothing
here recomputes a budget; the one extra count is :func:`estimate_check`, which tokenises the
current call's payload with the real tokenizer to say how far the ``estimate`` counter is off. No
Streamlit import.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd

from inspector.app.words import plain_md
from inspector.redact import mask_secrets, mask_text
from inspector.replay import Replay
from inspector.report.figures import BAND_LABELS, band_segments
from inspector.report.tables import counter_of, not_sent_table
from inspector.vocabulary import action_words


def band_table(rp: Replay, call: int) -> pd.DataFrame:
    """Every band of the call with tokens and share of the window (the bar's numbers, as a table).
    Over budget there is no headroom row and no "over budget" band: the shares then add up to more
    than 100 %, by exactly the overflow (:func:`~inspector.report.figures.band_segments`)."""
    f = rp.frames[call]
    window = f.budget.window or 0
    rows = []
    for name, tokens in band_segments(f):
        rows.append({"band": BAND_LABELS.get(name, name), "tokens": tokens,
                     "% of window": round(100.0 * tokens / window, 1) if window else None})
    return pd.DataFrame(rows, columns=["band", "tokens", "% of window"])


def budget_facts(rp: Replay, call: int) -> dict[str, Any]:
    """The figures shown next to the band bar, straight from the frame."""
    f = rp.frames[call]
    b = f.budget
    return {
        "window": b.window, "window_source": b.window_source, "reserve": b.reserve,
        "reserve_source": b.reserve_source, "margin": b.margin, "max_tokens": b.max_tokens,
        "input_budget": f.input_budget, "payload_tokens": f.payload_tokens,
        "headroom": f.headroom, "over_budget": f.headroom < 0, "cm_action": f.decision.action, "check": f.check,
        "cm_words": action_words(f.decision.action, f.summary_sent),
        "cost_usd": f.cost_usd, "model": rp.limits.get("effective_model") or rp.limits.get("model") or "none named",
        "calibration": b.calibration, "calibration_source": b.calibration_source,
        "prefix": b.prefix, "prefix_source": b.prefix_source, "prefix_line": rp.prefix_line(),
    }


def _calibration(rp: Replay) -> Any:
    from inspector.calibration import calibrate

    return rp.view("app_calibration", lambda: calibrate(rp.transcript))


def call_calibration(rp: Replay, call: int) -> pd.DataFrame | None:
    """This call's token counts beside the provider's reported input tokens, or None when the
    transcript records no usage for the reply this call produced.

    Rows: the provider's count, ours (``tiktoken``, ``estimate``) of the payload the provider
    counted (see :mod:`inspector.calibration`), and this replay's own payload under the manifest;
    each with its error against the provider's count."""
    cal = _calibration(rp)
    f = rp.frames[call]
    hit = cal.calls[cal.calls["index"] == f.at]
    if hit.empty:
        return None
    row = hit.iloc[0]
    provider = int(row["provider_tokens"])

    def line(what: str, tokens: int | None) -> dict[str, Any]:
        err = None if tokens is None else tokens - provider
        return {"count": what, "tokens": tokens, "error vs provider": err,
                "error %": None if err is None or not provider else round(100.0 * err / provider, 1)}

    payload = _rows_words(str(row["payload"]))
    rows = [line("provider (reported usage)", provider),
            line(f"tiktoken, {payload}", int(row["tiktoken"])),
            line(f"estimate, {payload}", int(row["estimate"])),
            line(f"this replay's payload ({rp.counter}, under the manifest)", f.payload_tokens)]
    return pd.DataFrame(rows, columns=["count", "tokens", "error vs provider", "error %"])


def _rows_words(text: str) -> str:
    """``rows A-B`` (the calibration's span of transcript rows) in words: "transcript messages A–B",
    "transcript message A" when the span is one row."""
    def span(m: re.Match[str]) -> str:
        a, b = int(m.group(1)), int(m.group(2))
        return f"transcript message {a}" if a == b else f"transcript messages {a}–{b}"

    return re.sub(r"rows (\d+)-(\d+)", span, text)


def calibration_caption(rp: Replay) -> str:
    """The fitted line first, then what to apply (:func:`inspector.calibration.advice`: the factor, or
    the slope and the offset as the unrecorded prefix), and what the counts cannot include."""
    from inspector.calibration import advice

    cal = _calibration(rp)
    return " ".join([*(plain_md(a) for a in advice(cal)), *cal.notes]).strip()


def compaction_note(rp: Replay, call: int) -> str | None:
    """Where the source framework itself compacted the conversation before this call, if it did."""
    f = rp.frames[call]
    before = [c for c in getattr(rp.transcript, "compactions", None) or [] if c.index < f.at]
    if not before:
        return None
    c = before[-1]
    return (f"Observed compaction: the recording framework compacted the conversation at transcript row {c.index} "
            f"({c.origin}); the real model saw that summary, not the rows before it. This replay applies the "
            "manifest's own policy instead.")


def trim_note(rp: Replay, call: int) -> str | None:
    """Tool results the trimmer cut at this call and the calls the repair then answered with empty
    results, in words (Q24: e.g. "2 results cut for budget; the repair answered their 2 calls with
    empty results"); None when the trimmer cut no result."""
    from inspector.vocabulary import cut_results_words

    f = rp.frames[call]
    cut_ids = [rp.messages[i].get("tool_call_id") for a, b in f.trimmed for i in range(a, b)
               if i < len(rp.messages) and rp.messages[i].get("role") == "tool"]
    if not cut_ids:
        return None
    ids = set(cut_ids)
    answered = sum(1 for r in f.repairs if r.repair.kind == "empty_result_synthesised" and r.repair.tool_call_id in ids)
    return cut_results_words(len(cut_ids), answered) + "."


def _observed_at(rp: Replay, call: int) -> Any:
    f = rp.frames[call]
    return next((op for op in getattr(rp.transcript, "observed_payloads", None) or []
                 if getattr(op, "reply", None) == f.at), None)


def observed_beside(rp: Replay, call: int) -> pd.DataFrame | None:
    """The request the agent really sent for this call's reply (the log's observed payload: a
    litellm or openai-log line, a live file) beside this replay's payload under the manifest:
    messages and tokens (this replay's counter), and the provider's count when the log has it.
    None when the log keeps no request for this call."""
    op = _observed_at(rp, call)
    if op is None:
        return None
    f = rp.frames[call]
    tk = counter_of(rp)
    provider = None
    if (usage := (getattr(rp.transcript, "usage", None) or {}).get(f.at)) is not None:
        from inspector.calibration import provider_input_tokens

        provider = provider_input_tokens(usage)
    rows = [{"payload": "really sent (the request as logged)", "messages": len(op.messages),
             "tokens": tk.count(op.messages) + tk.count_tools(op.tools), "provider's count": provider},
            {"payload": f"this replay (under the manifest, {rp.counter})", "messages": f.message_count,
             "tokens": f.payload_tokens, "provider's count": None}]
    return pd.DataFrame(rows, columns=["payload", "messages", "tokens", "provider's count"])


def observed_words(rp: Replay, call: int) -> str:
    """What differs between the request really sent and this replay's payload, in words."""
    from inspector.observed import payload_differences

    op = _observed_at(rp, call)
    if op is None:
        return ""
    f = rp.frames[call]
    diff = payload_differences(op.messages, op.tools, f.payload(rp.messages), _engine_tools(rp) if
                               f.bands.get("tool_schemas") else None)
    said = "; ".join(f"{k}: {v}" for k, v in diff.items() if v)
    return ("The replay sends exactly what the agent sent." if not said else
            f"Where the replay differs from what the agent sent — {said}.")


def _engine_tools(rp: Replay) -> Any:
    tools = getattr(rp.settings, "tools", None)
    return [dict(t) for t in tools] if tools else rp.transcript.tools


def estimate_check(rp: Replay, call: int) -> tuple[str, str] | None:
    """With the ``estimate`` counter: how the real tokenizer counts this call's payload.

    Returns ``(level, text)`` — ``error`` when the real count plus the completion reserve does not
    fit the window, ``warning`` when it eats into the safety margin, ``info`` for a smaller
    under-count — or None when the counter is ``tiktoken`` or the estimate is not lower."""
    if rp.counter != "estimate":
        return None
    from inspector.engine.tokens import make_counter

    f = rp.frames[call]
    tk = rp.view("app_tiktoken", lambda: make_counter("tiktoken", rp.limits.get("effective_model")))
    real = tk.count(f.payload(rp.messages)) + (tk.count_tools(_engine_tools(rp)) if f.bands.get("tool_schemas") else 0)
    est = f.payload_tokens
    if real <= est:
        return None
    b = f.budget
    pct = 100.0 * (real - est) / est if est else 100.0
    text = (f"The estimate counter under-counts this call: {est:,} estimated vs {real:,} by the model's "
            f"tokenizer (+{real - est:,}, +{pct:.0f}%).")
    if real + b.reserve > b.window:
        return "error", text + f" The real payload plus the completion reserve ({b.reserve:,}) exceeds the " \
                               f"{b.window:,}-token window: the provider would reject or truncate it."
    if real > f.input_budget:
        return "warning", text + " It would eat into the safety margin."
    return "info", text


def transcript_message_text(rp: Replay, index: int) -> str:
    """Transcript message ``index`` as pretty JSON, secrets masked (shown with ``st.code``)."""
    return json.dumps(mask_secrets(rp.messages[index]), ensure_ascii=False, indent=2, default=str)


def explain_message(rp: Replay, call: int, index: int, not_sent: pd.DataFrame | None = None) -> str:
    """Why transcript message ``index`` is or is not in this call's payload — one sentence.
    ``not_sent`` is this call's :func:`not_sent_table` when the caller already has it."""
    f = rp.frames[call]
    msgs = rp.messages
    if not 0 <= index < len(msgs):
        return f"There is no message {index}: the transcript has {len(msgs)} messages (0–{len(msgs) - 1})."
    if index >= f.at:
        return (f"Message {index} comes after this call (the call replies at message {f.at}), "
                "so it does not exist yet at this point of the conversation.")
    for pos, ref in enumerate(f.refs):
        if ref == index:
            band = BAND_LABELS.get(f.row_bands[pos], f.row_bands[pos])
            changed = " (rewritten by the pairing repair)" if pos in f.own else ""
            return f"Message {index} is sent: payload row {pos}, band '{band}'{changed}."
    df = not_sent_table(rp, call) if not_sent is None else not_sent
    row = df[df["ref"] == index]
    reason = row["reason"].iloc[0] if not row.empty else "not part of the payload"
    return f"Message {index} is not sent: {reason}."


def summary_block_text(rp: Replay, call: int) -> str | None:
    """The summary block this call *sends* (the summary row of its payload), or None. A summary
    computed but trimmed is not sent and is never returned here (Q18): see
    :func:`summary_not_sent`."""
    f = rp.frames[call]
    for pos, band in enumerate(f.row_bands):
        if band == "summary":
            content = f.payload(rp.messages)[pos].get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
            return mask_text(text)
    return None


def summary_not_sent(rp: Replay, call: int) -> list[tuple[str, str]]:
    """Summary blocks computed for this call but not sent: ``(reason, masked text)`` each (Q18)."""
    out = []
    for n in rp.frames[call].not_sent:
        content = n.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
        out.append((str(n["reason"]), mask_text(text)))
    return out


def summary_caption(rp: Replay, call: int) -> str:
    """The summary block's size at this call and the summarizer that wrote it, in one line."""
    f = rp.frames[call]
    tokens = f.bands.get("summary", 0)
    return f"summary block: {tokens:,} tokens · summarizer: {rp.summarizer_label}"
