"""One call as both the app and the notebook name and show it: its label, its payload rows and one
row's whole message, and the references it could no longer see.

The app (:mod:`inspector.app`) and the notebook stepper (:mod:`inspector.notebook`) read these, so
both faces show the same call the same way.
"""

from __future__ import annotations

import json

import pandas as pd

from inspector.redact import mask_secrets, mask_text
from inspector.replay import PENDING_WORDS, Replay
from inspector.report.figures import forgotten_per_call
from inspector.report.tables import payload_table


def calls_words(rp: Replay) -> str:
    """How many LLM calls the agent made ("26 LLM calls") and, when the transcript ends before a
    reply, the pending next call the stepper also shows ("26 LLM calls and call 26 (next call, never
    made)"): the header's count and the stepper's "of 27" then say the same thing."""
    k = rp.pending_call
    made = len(rp.counted_frames())
    return f"{made:,} LLM calls" + (f" and call {k} ({PENDING_WORDS})" if k is not None else "")


def call_label(rp: Replay, call: int) -> str:
    """"call k · turn T · step S"; the pending next call (:attr:`~inspector.replay.Replay.pending_call`,
    which the agent never made) says so in words."""
    f = rp.frames[call]
    pending = f" ({PENDING_WORDS})" if call == rp.pending_call else ""
    return f"call {call} · turn {f.turn} · step {f.step}{pending}"


def payload_view(rp: Replay, call: int) -> pd.DataFrame:
    """:func:`payload_table` with a nullable integer ``ref`` (transcript index; empty = synthesised)."""
    df = payload_table(rp, call)
    if not df.empty:
        df["ref"] = df["ref"].astype("Int64")
        df["synthetic"] = df["synthetic"].astype(str)
    return df


def payload_message_text(rp: Replay, call: int, pos: int) -> str:
    """One payload row as pretty JSON, secrets masked (shown with ``st.code``, never rendered)."""
    msg = rp.frames[call].payload(rp.messages)[pos]
    return json.dumps(mask_secrets(msg), ensure_ascii=False, indent=2, default=str)


def forgotten_view(rp: Replay, call: int) -> pd.DataFrame:
    """The identifiers this call needed and could no longer see, with the not-sent message holding
    each (``transcript #``) and why it was not sent. Computed once per replay."""
    from inspector.report.figures import forgotten_per_call

    cache = forgotten_per_call(rp)
    rows = [{"identifier": mask_text(x.identifier), "kind": x.kind, "needed in": ", ".join(x.needed_in),
             "transcript #": x.message, "why not sent": x.reason} for x in cache[call]]
    return pd.DataFrame(rows, columns=["identifier", "kind", "needed in", "transcript #", "why not sent"])
