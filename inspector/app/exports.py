"""The Export view's downloads: the frames as JSON or CSV, one call's payload as JSON (secrets
masked). No Streamlit import."""

from __future__ import annotations

from inspector.json_text import masked_document_text
from inspector.replay import Replay
from inspector.report.tables import frames_table


def frames_json(rp: Replay) -> str:
    """The replay's frames as the JSON ``context-inspector replay --json`` writes (no payloads)."""
    from inspector.replay_document import replay_dumps

    return replay_dumps(rp, payloads=False)


def frames_csv(rp: Replay) -> str:
    """The replay's frames as CSV, one row per call (:func:`~inspector.report.tables.frames_table`)."""
    return frames_table(rp).to_csv(index=False)


def payload_json(rp: Replay, call: int) -> str:
    """Call ``call``'s frame with its payload as JSON, secrets masked, by the one writer (one line
    per field and per payload row); the frame carries its summary text (``summary``)."""
    f = rp.frames[call]
    return masked_document_text({"call": call, **f.to_json(rp.messages, alone=True)})
