"""pandas tables over a replay. Every number comes from the frames: nothing is recounted here.

pandas is imported by the functions that build a DataFrame, not by this module: :func:`frame_rows`
gives the same rows as plain dicts, which is what the CLI's terminal table is built from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inspector.replay import Frame, Replay
from inspector.vocabulary import BANDS, EVENT_WORDS, drop_actions

if TYPE_CHECKING:
    import pandas as pd

BAND_ORDER = BANDS  # the payload order, from inspector.vocabulary


def preview_text(content: Any, n: int = 160) -> str:
    """A one-line, secret-masked preview of message content (always plain text)."""
    from inspector.redact import mask_text

    if content is None:
        return ""  # an assistant message with only tool calls has no text (never the word "null")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
    text = mask_text(text or "")
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def frames_table(rp: Replay) -> pd.DataFrame:
    """One row per LLM call: position, bands, budget lines, manager decision, trims, repairs, cost
    (the rows of :func:`frame_rows` as a DataFrame)."""
    import pandas as pd

    return pd.DataFrame(frame_rows(rp))


def frame_rows(rp: Replay) -> list[dict[str, Any]]:
    """The rows of :func:`frames_table` as plain dicts, in call order, without pandas."""
    rows = []
    for k, f in enumerate(rp.frames):
        b = f.budget
        row: dict[str, Any] = {"call": k, "turn": f.turn, "step": f.step, "at": f.at,
                               "payload_tokens": f.payload_tokens}
        row.update({band: f.bands.get(band, 0) for band in BAND_ORDER})
        row.update({
            "reserve": b.reserve, "margin": b.margin, "headroom": f.headroom, "window": b.window,
            "window_source": b.window_source, "max_tokens": b.max_tokens, "input_budget": f.input_budget,
            "calibration": b.calibration,
            "trigger": b.fixed + b.hint, "ceiling": b.fixed + b.ceiling,
            "cm_action": f.decision.action, "compressed_turns": f.decision.compressed_turns,
            "kept_turns": f.decision.kept_turns, "summarizer_called": f.decision.summarizer_called,
            "trimmed": sum(b_ - a for a, b_ in f.trimmed) + f.trimmed_synthetic, "repairs": len(f.repairs),
            "check": f.check, "cost_usd": f.cost_usd, "over_budget": f.headroom < 0,
            "summary_sent": f.summary_sent, "summary_not_sent": "; ".join(n["reason"] for n in f.not_sent),
        })
        rows.append(row)
    return rows


def totals_row(rp: Replay, name: str = "") -> dict[str, Any]:
    """One row of a replay's totals under strategy ``name``: calls, tokens sent, the peak payload,
    calls over budget, summarizer calls and failures, folds, repairs, trimmed and folded messages,
    cost (the columns ``context-inspector compare`` prints)."""
    t = rp.totals()
    return {"strategy": name, "frames": t["frames"], "tokens_sent": t["payload_tokens"],
            "peak_payload": t["max_payload_tokens"], "over_budget": t["over_budget"],
            "summarizer_in_turn": t["summarizer_calls"]["in_turn"], "summarizer_commit": t["summarizer_calls"]["commit"],
            "summarizer_failures": t["summarizer_failures"], "folds_in_turn": t["folds"]["in_turn"],
            "folds_commit": t["folds"]["commit"], "repairs": t["repairs"], "trimmed": t["trimmed"],
            "folded": t["folded"], "cost_usd": t["cost_usd"]}


def compare_table(replays: Mapping[str, Replay]) -> pd.DataFrame:
    """One :func:`totals_row` per named replay, in order, as a DataFrame."""
    import pandas as pd

    return pd.DataFrame([totals_row(rp, name) for name, rp in replays.items()])


def payload_table(rp: Replay, call: int) -> pd.DataFrame:
    """The exact messages of one call, in order, with band, transcript index and token count."""
    import pandas as pd

    f: Frame = rp.frames[call]
    counter = counter_of(rp)
    rows = []
    refs, bands, synthetic = f.refs, f.row_bands, f.synthetic  # the payload's rows, position by position
    for k, msg in enumerate(f.payload(rp.messages)):
        calls = msg.get("tool_calls") or []
        names = ", ".join(str((c.get("function") or {}).get("name")) for c in calls if isinstance(c, dict))
        rows.append({"pos": k, "ref": refs[k], "band": bands[k], "synthetic": synthetic[k] or "",
                     "role": msg.get("role"), "tool_call_id": msg.get("tool_call_id") or "",
                     "tool_calls": names, "tokens": counter.count([msg]) if counter else None,
                     "content": preview_text(msg.get("content"))})
    return pd.DataFrame(rows)


def counter_of(rp: Replay) -> Any:
    """The replay's token counter; a replay rebuilt from JSON, which has none, gets one made for its
    counter and model (kept on it)."""
    from inspector.engine.tokens import make_counter

    if rp.token_counter is None:  # a replay rebuilt from JSON has no live counter
        rp.token_counter = make_counter(rp.counter, rp.limits.get("effective_model"))
    return rp.token_counter


def not_sent_table(rp: Replay, call: int) -> pd.DataFrame:
    """Transcript messages that exist at this call but are not in its payload, and why (reasons from
    :func:`inspector.forgetting.not_sent_reasons`); first, any synthesised row computed for the call
    but not sent (a trimmed summary block, ``ref`` empty)."""
    import pandas as pd
    from inspector.forgetting import not_sent_reasons

    f = rp.frames[call]
    rows: list[dict[str, Any]] = [  # computed for this call and not sent (Q18): never shown as sent
        {"ref": None, "role": "system", "reason": n["reason"], "content": preview_text(n.get("content"))}
        for n in f.not_sent]
    rows += [{"ref": i, "role": rp.messages[i].get("role"), "reason": reason, "content": _cached_preview(rp, i)}
             for i, reason in not_sent_reasons(rp, call).items()]
    df = pd.DataFrame(rows, columns=["ref", "role", "reason", "content"])
    df["ref"] = df["ref"].astype("Int64")  # empty for a synthesised row (a trimmed summary block)
    return df


def _cached_preview(rp: Replay, i: int) -> str:
    """Transcript message ``i``'s masked preview, made once per replay and kept on it (every call's
    table shows the same text)."""
    cache: dict[int, str] = rp.view("previews", dict)
    text = cache.get(i)
    if text is None:
        text = cache[i] = preview_text(rp.messages[i].get("content"))
    return text


def repairs_table(rp: Replay, call: int | None = None) -> pd.DataFrame:
    """Every pairing repair of one call (``call``), or of every call: where (call, turn, step), its
    kind, the transcript message repaired (``ref``, empty for a synthesised row), the tool call ids
    it names and its detail."""
    import pandas as pd

    frames = [(call, rp.frames[call])] if call is not None else list(enumerate(rp.frames))
    rows = []
    for k, f in frames:
        for fr in f.repairs:
            r = fr.repair
            rows.append({"call": k, "turn": f.turn, "step": f.step, "kind": r.kind, "ref": fr.ref,
                         "tool_call_id": r.tool_call_id, "new_id": r.new_id, "detail": r.detail})
    df = pd.DataFrame(rows, columns=["call", "turn", "step", "kind", "ref", "tool_call_id", "new_id", "detail"])
    df["ref"] = df["ref"].astype("Int64")  # the transcript message repaired; empty for a synthesised row
    return df


def forgotten_table(rp: Replay, call: int | None = None) -> pd.DataFrame:
    """Forgotten references (:mod:`inspector.forgetting`) of one call, or of every call: the
    identifier, where the call needed it, the not-sent transcript message holding it and why."""
    import pandas as pd
    from inspector.forgetting import forgotten_references
    from inspector.redact import mask_text

    lost = forgotten_references(rp)  # computed once per replay (kept on it)
    calls = [call] if call is not None else range(len(lost))
    rows = [{"call": k, "turn": rp.frames[k].turn, "identifier": mask_text(x.identifier), "kind": x.kind,
             "needed in": ", ".join(x.needed_in), "message": x.message, "why not sent": x.reason}
            for k in calls for x in lost[k]]
    return pd.DataFrame(rows, columns=["call", "turn", "identifier", "kind", "needed in", "message", "why not sent"])


STEP_EVENTS: tuple[str, ...] = (EVENT_WORDS["summarized"], EVENT_WORDS["reused"], EVENT_WORDS["summary_not_sent"],
                                "turns dropped", "trimmed", "pairing repair", "over budget", "forgot a reference")
"""The kinds of call a stepper can jump to, in the order offered."""


def step_events(rp: Replay) -> dict[str, list[int]]:
    """For each of :data:`STEP_EVENTS`, the calls (ascending) where it happened, read from the
    frames: the manager's action (a summary computed or reused *and sent*; a summary action whose
    block the trimmer cut is its own event, :func:`inspector.vocabulary.summary_event`; a drop or
    slide), a trimmer cut, a pairing repair, a payload over budget, a forgotten reference
    (:mod:`inspector.forgetting`)."""
    from inspector.forgetting import forgotten_references
    from inspector.vocabulary import summary_event

    df = frames_table(rp)
    lost = forgotten_references(rp)
    events = [summary_event(a, s) for a, s in zip(df["cm_action"], df["summary_sent"], strict=True)] if len(df) else []
    dropped = df["cm_action"].isin(sorted(drop_actions()))
    sel = {"turns dropped": dropped, "trimmed": df["trimmed"] > 0, "pairing repair": df["repairs"] > 0,
           "over budget": df["over_budget"]}
    out = {kind: [int(k) for k in df["call"][mask]] for kind, mask in sel.items()} if len(df) else \
        {kind: [] for kind in sel}
    for event in ("summarized", "reused", "summary_not_sent"):
        out[EVENT_WORDS[event]] = [k for k, e in enumerate(events) if e == event]
    out["forgot a reference"] = [k for k, x in enumerate(lost) if x]
    return {kind: out[kind] for kind in STEP_EVENTS}


def conversation_labels(df: pd.DataFrame, multi: Any = ()) -> pd.Series:
    """``file#N`` for a run of conversation N of a multi-conversation file, the file alone otherwise.

    ``df`` is a sweep table (``transcript`` = the file, ``conversation`` = N). A file counts as
    multi-conversation when the table holds more than one of its conversations, when N > 0, or
    when it is in ``multi`` (file labels known to hold several conversations even if one was swept),
    so conversation 0 of such a file is ``file#0``, never the bare file name."""
    import pandas as pd

    files = df["transcript"].astype(str)
    convs = df["conversation"].fillna(0).astype(int)
    many = set(multi) | {f for f, n in convs.groupby(files).nunique().items() if n > 1} | set(files[convs > 0])
    return pd.Series([f"{f}#{c}" if f in many else f for f, c in zip(files, convs, strict=True)], index=df.index,
                     name="conversation")


def sweep_view(df: pd.DataFrame, grid: Any, transcripts: Any = ()) -> pd.DataFrame:
    """A sweep table that fits a page: the conversation (``file#N``, :func:`conversation_labels`),
    the grid values, then user turns, LLM calls, input tokens, calls over budget, summarizer calls,
    trimmed messages and forgotten references, with readable headings. Failed runs keep their row.

    ``transcripts``: the loaded transcripts the sweep ran on, in order; a file that holds several
    conversations is then labelled ``file#N`` even when only one of them was swept."""
    import pandas as pd

    from inspector.vocabulary import column_words

    items = list(transcripts)
    per = len(df) // len(items) if items and len(df) % len(items) == 0 else 0
    multi = {df["transcript"].iloc[i * per] for i, t in enumerate(items)
             if per and len(getattr(t, "conversations", None) or []) > 1}

    out = pd.DataFrame({"conversation": conversation_labels(df, multi)})
    for key in grid:
        out[key] = df[key]
    for col in ("user_turns", "frames", "tokens_sent", "over_budget", "summarizer_calls", "trimmed", "forgotten"):
        out[column_words(col) if col != "user_turns" else "user turns"] = df[col]
    return out
