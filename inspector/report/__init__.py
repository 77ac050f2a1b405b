"""Tables and figures built from a :class:`~inspector.replay.Replay` — shared by the app, notebooks and CLI."""

from inspector.report.tables import (
    compare_table,
    frames_table,
    not_sent_table,
    payload_table,
    repairs_table,
    totals_row,
)

__all__ = ["compare_table", "frames_table", "not_sent_table", "payload_table", "repairs_table", "totals_row"]
