"""A strategy is one module, one registration and its tests (docs/contributing.md "Add a strategy").

The throw-away strategy below stands for the module: it replaces every tool result older than
``older_than`` rows by a placeholder naming the tool and the size cleared, and declares its params
model, its actions and its replacement reason in its own class. The fixture is the registration
(:func:`inspector.plugins.register`). Nothing else in the package is edited, and the strategy is
seen by ``validate``, a replay (its JSON, the forgetting reasons, the app's payload, not-sent and
stepper views, the timeline's markers), the sweep, the compare function behind Side by side
(:func:`inspector.compare.compare`, its presets, :func:`inspector.report.tables.compare_table`) and
the app's Side by side itself (AppTest).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated

import pytest
import yaml
from pydantic import PositiveInt

from inspector.engine.contracts import EditRecord, Replacement
from inspector.engine.managers.base import CMDecision, ContextManager, Managed, managed
from inspector.engine.types import Message
from inspector.params import Doc, PluginParams
from inspector.plugins import PluginSpec, default_registry, register
from inspector.vocabulary import Action, Reason

SAMPLES = Path(__file__).resolve().parents[2] / "inspector" / "samples"
TRANSCRIPT = SAMPLES / "demo_support.json"
NAME = "clear-old-results"


# --- the module ---------------------------------------------------------------------------------

class ClearOldParams(PluginParams):
    """``clear-old-results``: tool results older than ``older_than`` rows become a placeholder."""

    older_than: Annotated[PositiveInt, Doc("clear tool results more than N rows from the log's end")] = 4


def placeholder(tool: str, size: int) -> str:
    """The placeholder a cleared result is sent as: the tool and the size cleared."""
    return f"[{tool} result cleared: {size} characters]"


class ClearOldResults(ContextManager):
    """Every tool result more than ``older_than`` rows from the log's end, sent as a placeholder."""

    name = NAME
    actions = (Action("results-kept", "kept: no old tool result"),
               Action("results-cleared", "old tool results cleared", "edit", marker="tool results cleared"))
    reasons = (Reason("tool-result-cleared", "tool result cleared (a placeholder was sent)"),)

    def __init__(self, params: ClearOldParams | None = None) -> None:
        super().__init__()
        self.older_than = (params or ClearOldParams()).older_than

    @classmethod
    def from_params(cls, params: ClearOldParams) -> ClearOldResults:
        return cls(params)

    def decide(self, past: Sequence[Message], hint: int) -> Managed:
        tools = {c["id"]: c["function"]["name"] for m in past for c in m.get("tool_calls") or ()}
        cleared = tuple(
            Replacement(i, {"role": "tool", "tool_call_id": m["tool_call_id"],
                            "content": placeholder(tools.get(m["tool_call_id"], "tool"), len(str(m["content"])))},
                        "tool-result-cleared")
            for i, m in enumerate(past[:max(0, len(past) - self.older_than)]) if m.get("role") == "tool")
        n = len(past)
        record = EditRecord(n, ((0, n),) if n else (), cleared)
        return managed(past, record, CMDecision("results-cleared" if cleared else "results-kept"))


# --- the registration ---------------------------------------------------------------------------

@pytest.fixture
def registered() -> Iterator[None]:
    register(PluginSpec("context_manager", NAME, "test.cm.clear_old_results", ClearOldResults,
                        params_model=ClearOldParams))
    yield
    default_registry().unregister("context_manager", NAME)


def manifest(tmp_path: Path, older_than: object = 4) -> Path:
    doc = yaml.safe_load((SAMPLES / "manifests" / "stack.yaml").read_text(encoding="utf-8"))
    doc["spec"]["context_manager"] = {"type": NAME, "params": {"older_than": older_than}}
    path = tmp_path / "clear.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


# --- what the registration alone buys -----------------------------------------------------------

def test_the_record_keeps_every_row_and_replaces_results_older_than_the_window() -> None:
    past = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "lookup_order", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "x" * 120},
            {"role": "assistant", "content": "done"}]
    # 4 rows, older_than 2: rows 0 and 1 are older than the window; row 2 (the result) is not
    assert ClearOldResults(ClearOldParams(older_than=2)).decide(past, 0).edits.replaced == ()
    got = ClearOldResults(ClearOldParams(older_than=1)).decide(past, 0)
    assert [r.index for r in got.edits.replaced] == [2] and got.edits.dropped() == ()
    assert got.messages[2]["content"] == "[lookup_order result cleared: 120 characters]"
    assert [m is p for m, p in zip(got.messages, past, strict=True)] == [True, True, False, True]
    assert got.decision.action == "results-cleared" and got.decision.folded == []


def test_validate_accepts_its_params_and_names_a_bad_one(registered: None, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.cli import main

    assert main(["validate", str(manifest(tmp_path))]) == 0
    capsys.readouterr()
    assert main(["validate", str(manifest(tmp_path, 0))]) != 0
    assert "older_than" in capsys.readouterr().err


def test_a_replay_shows_the_replaced_rows_with_their_reason_and_forgetting_says_why(
        registered: None, tmp_path: Path) -> None:
    from inspector.forgetting import not_sent_reasons
    from inspector.replay import replay
    from inspector.transcripts.api import load_transcript
    from inspector.vocabulary import ACTION_WORDS, reason_words

    rp = replay(str(manifest(tmp_path, 3)), load_transcript(TRANSCRIPT), counter="estimate")
    frames = [k for k, f in enumerate(rp.frames) if f.replaced]
    assert frames, "the sample's older tool results are cleared"
    k = frames[-1]
    f = rp.frames[k]
    doc = json.loads(json.dumps(f.to_json(rp.messages, alone=True)))  # one call alone: every replaced row listed
    assert doc["replaced_kept"] == 0
    assert doc["replaced_added"] == [{"ref": i, "reason": "tool-result-cleared"} for i, _ in f.replaced]
    rows = {row["ref"]: row for row in doc["payload"] if row["synthetic"] == "tool-result-cleared"}
    assert set(rows) == {i for i, _ in f.replaced}
    for i, row in rows.items():
        original = rp.messages[i]
        assert original["role"] == "tool" and row["tool_call_id"] == original["tool_call_id"]
        assert row["content"].endswith(f"result cleared: {len(str(original['content']))} characters]")
    reasons = not_sent_reasons(rp, k)
    assert {i: reasons[i] for i in rows} == {i: reason_words("tool-result-cleared") for i in rows}
    assert ACTION_WORDS["results-cleared"] == "old tool results cleared"
    # the app's payload and not-sent views (the functions its This call view shows) say the same
    from inspector.app.chat import not_sent_rows, payload_rows

    words = reason_words("tool-result-cleared")
    sent = {row.anchor: row.why for row in payload_rows(rp, k)}
    assert all(f"sent in place of transcript #{i}: {words}" in sent[f"msg-{i}"] for i in rows)
    missing = " ".join(f"{row.why} {row.note}" for row in not_sent_rows(rp, k))
    assert words in missing
    # its marker: a kind of call the stepper jumps to, and a trace of the timeline
    from inspector.app.stepping import event_calls
    from inspector.report.figures import timeline
    from inspector.vocabulary import EVENT_WORDS

    assert EVENT_WORDS["results-cleared"] == "tool results cleared"
    assert event_calls(rp)["results-cleared"] == [j for j, g in enumerate(rp.frames)
                                                  if g.decision.action == "results-cleared"]
    names = {getattr(trace, "name", None) for trace in timeline(rp).data}
    assert "tool results cleared" in names
    # a call that clears nothing has no "replaced_…" keys: replays of other strategies read as before
    assert not {"replaced_kept", "replaced_added"} & set(rp.frames[0].to_json())


def test_the_sweep_runs_a_grid_over_its_parameter(registered: None, tmp_path: Path) -> None:
    from inspector.sweep import sweep

    key = "spec.context_manager.params.older_than"
    df = sweep(str(manifest(tmp_path)), [str(TRANSCRIPT)], {key: [2, 1000]}, processes=1, progress=False,
               counter="estimate")
    assert list(df[key]) == [2, 1000]
    small, large = df["tokens_sent"]
    assert small < large  # clearing more results sends fewer tokens; 1000 rows clears nothing


def test_side_by_side_offers_and_compares_it(registered: None, tmp_path: Path) -> None:
    from inspector.compare import PRESETS, compare
    from inspector.report.tables import compare_table

    assert PRESETS[NAME] == {"type": NAME}
    from inspector.transcripts.api import load_transcript

    replays = compare(str(manifest(tmp_path)), load_transcript(TRANSCRIPT),
                      {"stack": {"type": "stack"}, NAME: {"type": NAME, "params": {"older_than": 2}}},
                      counter="estimate")
    table = compare_table(replays)
    assert len(table) == 2
    by = dict(zip(table.iloc[:, 0], table["tokens_sent"], strict=True))
    assert by[NAME] < by["stack"]


@pytest.mark.slow
def test_the_apps_side_by_side_offers_it_and_puts_it_in_a_column(registered: None) -> None:
    """The app (AppTest, its bundled support demo): the registered strategy is one of Side by
    side's presets, and chosen beside ``stack`` it gets its column of totals, sending fewer tokens
    than the uncapped stack (its preset clears results older than 4 rows)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    at.run()
    at.segmented_control(key="view").set_value("compare").run()
    assert NAME in at.multiselect(key="cmp_strategies").options
    at.multiselect(key="cmp_strategies").set_value(["stack", NAME]).run()
    assert not at.exception, [e.value for e in at.exception]
    totals = next(d.value for d in at.dataframe if "tokens sent" in map(str, d.value.index))
    assert list(totals.columns) == ["stack", NAME]
    sent = {name: float(str(totals.loc["tokens sent", name]).replace(",", "")) for name in totals.columns}
    assert sent[NAME] < sent["stack"]
