"""Replay: drive the engine with a transcript, one frame per LLM call (docs/design.md §5).

Each ``assistant`` message in the transcript is one LLM call: before it, the engine assembles the
payload with working memory = the turn's rows so far (a **frame**); then the assistant message
and the tool results after it are recorded. A ``user`` message commits the previous turn (a
**commit record**: the write-back fold, summarizer called or not) and starts the next. A
transcript that ends without a reply yields one last frame: the payload that would be sent next.

Frames hold transcript *indices* and the few synthesised rows (system band, summary block, empty
results), never copies of transcript messages, so a long replay stays small. The same inputs give
byte-identical JSON (no clocks, no ordering by hash).

One module per stage: :mod:`~inspector.replay.run` (the loop, :func:`replay`),
:mod:`~inspector.replay.recorder` (what the loop writes down), :mod:`~inspector.replay.ranges`
(an assembly's rows as transcript ranges), :mod:`~inspector.replay.runs` (membership in them,
for the forgetting detector), :mod:`~inspector.replay.records` (frames, commits and
their JSON), :mod:`~inspector.replay.replaced` (a frontier record's replaced rows, kept once) and :mod:`~inspector.replay.result` (the :class:`Replay`, its totals and its JSON).
"""

from inspector.policy import SUMMARIZER_MODES
from inspector.replay.records import (BUDGET_FIELDS, DECISION_FIELDS, CallDecision, Commit, Frame, FrameRepair,
                                      record_json, replaced_lists)
from inspector.replay.replaced import FrontierSegments, reason_lookup
from inspector.replay.result import PENDING_WORDS, Replay
from inspector.replay.run import replay

__all__ = ["BUDGET_FIELDS", "DECISION_FIELDS", "PENDING_WORDS", "SUMMARIZER_MODES", "CallDecision", "Commit", "Frame",
           "FrontierSegments",
           "FrameRepair", "Replay", "reason_lookup", "record_json", "replaced_lists", "replay"]
