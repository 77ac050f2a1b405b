"""A table's words for a call must be true of the strategy in force: a sliding-window replay that
has nothing to slide yet says it keeps its turns, not that it has too few turns *to summarise*
(a sliding window never summarises). The words come from :data:`inspector.vocabulary.ACTION_WORDS`."""

from __future__ import annotations

import json

from inspector.manifest import settings_from_dict
from inspector.replay import replay
from inspector.transcripts import parse_transcript
from inspector.vocabulary import action_words


def _chat(turns: int) -> object:
    rows = []
    for i in range(turns):
        rows += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]
    return parse_transcript(json.dumps(rows), name="chat.json")


def test_a_sliding_window_that_keeps_everything_is_not_said_to_summarise() -> None:
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {
        "type": "sliding-window", "params": {"keep_turns": 5}}}})
    rp = replay(s, _chat(3), counter="estimate")
    words = {action_words(f.decision.action) for f in rp.frames}
    assert words == {"kept: no more than keep_turns turns"}
    assert not any("summar" in w for w in words)
