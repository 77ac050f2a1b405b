"""A summary computed or reused whose block the token trimmer cut is "not sent", on
every face — the words come from one place (:func:`inspector.vocabulary.action_words`,
:func:`~inspector.vocabulary.summary_event`)."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.vocabulary import ACTION_WORDS, EVENT_WORDS, NOT_SENT_ACTION_WORDS, action_words, summary_event

ROOT = Path(__file__).resolve().parents[2]
TAU = ROOT.parent / "shared" / "data" / "transcripts" / "tau-bench" / "gpt-4o-airline.json"
SMALL = ROOT / "sample_manifests" / "small-window.yaml"


@pytest.mark.parametrize(("action", "sent", "words", "event"), [
    ("reused", True, ACTION_WORDS["reused"], "reused"),
    ("reused", False, "summary reused, trimmed — not sent", "summary_not_sent"),
    ("summarized", True, ACTION_WORDS["summarized"], "summarized"),
    ("summarized", False, "summary computed, trimmed — not sent", "summary_not_sent"),
    ("window-slid", False, ACTION_WORDS["window-slid"], None),  # no summary involved: sent or not is moot
    ("unchanged-under-budget", False, ACTION_WORDS["unchanged-under-budget"], None),
])
def test_a_summary_action_is_worded_and_counted_by_what_was_sent(action: str, sent: bool, words: str,
                                                                  event: str | None) -> None:
    assert action_words(action, sent) == words
    assert summary_event(action, sent) == event
    assert action_words(action) == ACTION_WORDS[action]  # unknown: the action's own words


def test_the_not_sent_words_never_say_sent_alone() -> None:
    for words in NOT_SENT_ACTION_WORDS.values():
        assert words.endswith("not sent")
    assert "not sent" in EVENT_WORDS["summary_not_sent"] and "not" not in EVENT_WORDS["reused"]


def test_the_cli_table_says_not_sent_on_the_tau_bench_calls_whose_summary_was_trimmed() -> None:
    """tau-bench under small-window: calls whose ``summary_sent`` is false read "not sent" in the
    table, never "summary reused"; the CSV keeps the engine's code and the flag."""
    if not TAU.exists():
        pytest.skip("the shared tau-bench transcript is not here")
    run = [sys.executable, "-m", "inspector", "replay", str(SMALL), str(TAU)]
    env_cwd = dict(capture_output=True, text=True, timeout=300, cwd=ROOT)
    rows = list(csv.DictReader(io.StringIO(subprocess.run([*run, "--format", "csv"], **env_cwd).stdout)))
    table = subprocess.run([*run, "--format", "table"], **env_cwd).stdout.splitlines()
    unsent = [r for r in rows if r["cm_action"] in ("reused", "summarized") and r["summary_sent"] == "False"]
    assert unsent  # the case of the issue (calls 7–15 on the shared file)
    for r in rows:
        line = next(x for x in table if [x.split()[0].rstrip("*"), *x.split()[1:2]] == [r["call"], r["turn"]])
        expected = action_words(r["cm_action"], r["summary_sent"] == "True")
        assert expected in line
        if r in unsent:
            assert "not sent" in line
