"""Every conversation of a file through the console script: ``--conversation N|A-B|all`` on replay,
compare, sweep and observed; every row names its file and conversation; fleet summaries whose
figures are worked out here from the per-run rows (never from the code under test)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from cli_run import DEMO, SMALL, run, tau_bench_file
from conftest import TRANSCRIPTS, need_shared
from inspector.transcripts import list_conversations
from inspector.transcripts.selection import ALL, Selection, parse_selection

EPISODES = 5
LONG_FROM = 3  # episodes 3 and 4 carry a question bigger than the small window


@pytest.fixture(scope="module")
def tb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tau_bench_file(tmp_path_factory.mktemp("tb") / "tb5.json", EPISODES, long_from=LONG_FROM)


# --- the selector ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("0", Selection(0, 0, "0")), ("7", Selection(7, 7, "7")), ("2-5", Selection(2, 5, "2-5")),
    (" 3 - 3 ", Selection(3, 3, " 3 - 3 ".strip())), ("all", ALL), ("ALL", ALL),
])
def test_selector_forms(text: str, expected: Selection) -> None:
    got = parse_selection(text)
    assert (got.first, got.last) == (expected.first, expected.last)


@pytest.mark.parametrize("text", ["", "-1", "5-2", "a", "1,2", "1-", "all-3"])
def test_bad_selectors_are_usage_errors_naming_the_forms(text: str) -> None:
    out = run("replay", str(SMALL), str(DEMO), "--conversation", text)
    assert out.returncode == 2 and "--conversation" in out.stderr and out.stdout == ""


# --- replay ---------------------------------------------------------------------------------------

def test_replay_a_range_equals_the_single_replays(tb: Path) -> None:
    many = run("replay", str(SMALL), str(tb), "--conversation", "1-3", "--counter", "estimate", "--summarizer", "drop")
    assert many.returncode == 0, many.stderr
    replays = json.loads(many.stdout)["replays"]
    singles = [json.loads(run("replay", str(SMALL), str(tb), "--conversation", str(k), "--counter", "estimate",
                              "--summarizer", "drop").stdout) for k in (1, 2, 3)]
    assert replays == singles
    assert [r["transcript"]["conversation"] for r in replays] == [1, 2, 3]


def test_replay_all_covers_every_conversation_and_each_table_names_it(tb: Path) -> None:
    out = run("replay", str(SMALL), str(tb), "--conversation", "all", "--counter", "estimate", "--summarizer", "drop",
              "--format", "table")
    assert out.returncode == 0, out.stderr
    titles = [line for line in out.stdout.splitlines() if line.startswith("tb5.json · conversation ")]
    assert [t.split(" · ")[1] for t in titles] == [f"conversation {k}" for k in range(EPISODES)]
    csv_rows = list(csv.DictReader(io.StringIO(run(
        "replay", str(SMALL), str(tb), "--conversation", "all", "--counter", "estimate", "--summarizer", "drop",
        "--format", "csv").stdout)))
    assert {(r["transcript"], r["conversation"]) for r in csv_rows} == {("tb5.json", str(k)) for k in range(EPISODES)}
    # episode k has k + 2 user turns and one assistant reply per turn: k + 2 calls
    assert len(csv_rows) == sum(k + 2 for k in range(EPISODES))


def test_a_range_past_the_end_names_the_file_and_its_count(tb: Path) -> None:
    out = run("replay", str(SMALL), str(tb), "--conversation", "3-9", "--counter", "estimate")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("error: tb5.json: ") and f"holds {EPISODES} conversations" in out.stderr


# --- compare and its fleet summary ----------------------------------------------------------------

def fleet_by_hand(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        f = out.setdefault(r[key], {"conversations": 0, "conversations_over_budget": 0, "over_budget": 0,
                                    "peak_payload": 0, "summaries": 0, "trimmed": 0, "repairs": 0, "cost_usd": 0.0})
        f["conversations"] += 1
        f["conversations_over_budget"] += r["over_budget"] > 0
        f["over_budget"] += r["over_budget"]
        f["peak_payload"] = max(f["peak_payload"], r["peak_payload"])
        f["summaries"] += r.get("summarizer_calls", r.get("summarizer_in_turn", 0) + r.get("summarizer_commit", 0))
        f["trimmed"] += r["trimmed"]
        f["repairs"] += r["repairs"]
        f["cost_usd"] += r["cost_usd"] if r["cost_usd"] is not None else float("nan")
    return out


def test_compare_over_every_conversation_with_a_fleet_summary(tb: Path) -> None:
    out = run("compare", str(SMALL), str(tb), "--conversation", "all", "--counter", "estimate", "--summarizer", "drop",
              "--strategy", "window=sliding-window", "--strategy", "stack={type: stack, params: {max_messages: 4}}",
              "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    rows = doc["strategies"]
    assert [(r["conversation"], r["strategy"]) for r in rows] == \
        [(k, s) for k in range(EPISODES) for s in ("window", "stack")]
    assert {r["transcript"] for r in rows} == {"tb5.json"}
    expected = fleet_by_hand(rows, "strategy")
    for f in doc["fleet"]:
        want = expected[f["strategy"]]
        assert f["cost_usd"] == pytest.approx(want.pop("cost_usd"))
        assert {k: f[k] for k in want} == want
    # the huge questions of the last episodes cannot fit: exactly those conversations go over budget
    assert all(f["conversations_over_budget"] == EPISODES - LONG_FROM for f in doc["fleet"])


def test_compare_table_names_file_and_conversation_on_every_row(tb: Path) -> None:
    out = run("compare", str(SMALL), str(tb), "--conversation", "0-1", "--counter", "estimate", "--summarizer", "drop",
              "--strategy", "a=sliding-window", "--strategy", "b=stack")
    assert out.returncode == 0, out.stderr
    body = [line.split() for line in out.stdout.split("fleet summary")[0].splitlines() if line.startswith("tb5.json")]
    assert [(cols[0], cols[1], cols[2]) for cols in body] == [
        ("tb5.json", "0", "a"), ("tb5.json", "0", "b"), ("tb5.json", "1", "a"), ("tb5.json", "1", "b")]
    assert "fleet summary: per strategy" in out.stdout and "2 conversations of tb5.json" in out.stdout


# --- sweep ----------------------------------------------------------------------------------------

def test_sweep_defaults_to_every_conversation(tb: Path) -> None:
    out = run("sweep", str(SMALL), str(tb), str(DEMO), "--grid", "keep_turns=1,3", "--summarizer", "drop",
              "--processes", "1", "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    rows = doc["rows"]
    want = [("tb5.json", k, kt) for k in range(EPISODES) for kt in (1, 3)] + \
        [("demo_support.json", 0, kt) for kt in (1, 3)]
    assert [(r["transcript"], r["conversation"], r["keep_turns"]) for r in rows] == want
    expected = fleet_by_hand(rows, "keep_turns")
    for f in doc["fleet"]:
        want_f = expected[f["keep_turns"]]
        assert f["cost_usd"] == pytest.approx(want_f.pop("cost_usd"))
        assert {k: f[k] for k in want_f} == want_f and f["errors"] == 0


def test_sweep_can_take_a_single_conversation(tb: Path) -> None:
    out = run("sweep", str(SMALL), str(tb), "--conversation", "2", "--grid", "keep_turns=1", "--processes", "1",
              "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert out.returncode == 0 and [(r["transcript"], r["conversation"]) for r in rows] == [("tb5.json", "2")]


def test_conversation_counts_match_the_listing(tb: Path) -> None:
    assert len(list_conversations(tb)) == EPISODES


# --- observed -------------------------------------------------------------------------------------

def test_observed_rows_name_file_and_conversation() -> None:
    path = need_shared(TRANSCRIPTS / "mas-lab" / "events.r1.jsonl")
    infos = list_conversations(path)
    out = run("observed", str(SMALL), str(path), "--conversation", "all", "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["payloads"]
    assert rows and {r["transcript"] for r in rows} == {path.name}
    assert {r["conversation"] for r in rows} <= {c.index for c in infos}
