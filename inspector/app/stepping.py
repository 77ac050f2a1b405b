"""Moving between calls: a call number kept in range, the call a timeline click names, and the
calls where each kind of event happens (the stepper's jumps). No Streamlit import."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from inspector.replay import Replay
from inspector.report.cache_view import break_calls
from inspector.report.tables import frames_table


def clamp_call(call: Any, n: int) -> int:
    """``call`` as a call number of a replay of ``n`` calls: an int within 0 … n − 1 (0 for anything
    that is not a number, or when there is no call)."""
    try:
        k = int(call)
    except (TypeError, ValueError):
        k = 0
    return max(0, min(k, n - 1)) if n > 0 else 0


def call_from_selection(selection: Any, n: int) -> int | None:
    """The call a timeline selection points at: the last selected point's x (a commit marker sits
    at k + 0.5 and jumps to the call after the fold). None when nothing usable is selected."""
    points = []
    if selection is not None:
        sel = selection.get("selection", selection) if isinstance(selection, Mapping) else None
        if isinstance(sel, Mapping):
            points = list(sel.get("points") or [])
    for point in reversed(points):
        x = point.get("x") if isinstance(point, Mapping) else None
        if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
            return clamp_call(math.floor(x + 0.5), n)
    return None


def event_calls(rp: Replay) -> dict[str, list[int]]:
    """For every kind of :data:`inspector.vocabulary.EVENT_WORDS`, and ``cache_break``
    (:func:`inspector.report.cache_view.break_calls`), the calls where it happens, in order (a fold
    at a commit counts for the first call after it). Computed once per replay."""
    return rp.view("app_events", lambda: _event_calls(rp))


def _event_calls(rp: Replay) -> dict[str, list[int]]:
    from inspector.report.figures import commit_positions, forgotten_per_call

    from inspector.vocabulary import registered_actions, summary_event

    df = frames_table(rp)
    n = len(rp.frames)
    summary = [summary_event(f.decision.action, f.summary_sent) for f in rp.frames]
    events = [e or f.decision.action for e, f in zip(summary, rp.frames, strict=True)]
    marked = [a.code for a in registered_actions() if a.marker is not None]  # summarized, reused, ...
    out: dict[str, list[int]] = {
        **{code: [k for k, e in enumerate(events) if e == code] for code in marked},
        "summary_not_sent": [k for k, e in enumerate(summary) if e == "summary_not_sent"],
        "fold": sorted({min(math.ceil(x), n - 1) for x, _ in commit_positions(rp)}),
        "trimmed": [int(k) for k in df["call"][df["trimmed"] > 0]],
        "repair": [int(k) for k in df["call"][df["repairs"] > 0]],
        "over_budget": [k for k, f in enumerate(rp.frames) if f.headroom < 0],
        "forgotten": [k for k, lost in enumerate(forgotten_per_call(rp)) if lost],
        "cache_break": break_calls(rp),
    }
    return out


def next_event(rp: Replay, call: int, kind: str, direction: int = 1) -> int | None:
    """The nearest call after (``direction`` = 1) or before (-1) ``call`` where ``kind`` happens."""
    import bisect

    calls = event_calls(rp).get(kind, [])
    if direction > 0:
        i = bisect.bisect_right(calls, call)
        return calls[i] if i < len(calls) else None
    i = bisect.bisect_left(calls, call)
    return calls[i - 1] if i > 0 else None
