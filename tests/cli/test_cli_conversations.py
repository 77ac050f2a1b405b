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


# --- the fleet summary in every output format -------------------------------------------------------

def _typed(row: dict[str, str]) -> dict[str, Any]:
    """A CSV row with its numbers read back (an empty cell is no value)."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if v == "":
            out[k] = None
            continue
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def _check_fleet(fleet: list[dict[str, Any]], rows: list[dict[str, Any]], key: str) -> None:
    expected = fleet_by_hand(rows, key)
    assert [f[key] for f in fleet] == list(expected)
    for f in fleet:
        want = dict(expected[f[key]])
        cost = want.pop("cost_usd")
        assert (f["cost_usd"] is None and cost != cost) or f["cost_usd"] == pytest.approx(cost)
        assert {k: f[k] for k in want} == want


COMPARE_ARGS = ("--conversation", "all", "--counter", "estimate", "--summarizer", "drop",
                "--strategy", "window=sliding-window", "--strategy", "stack={type: stack, params: {max_messages: 4}}")


def test_compare_csv_writes_the_fleet_summary_to_its_own_file(tb: Path, tmp_path: Path) -> None:
    runs_csv, fleet_csv = tmp_path / "runs.csv", tmp_path / "fleet.csv"
    out = run("compare", str(SMALL), str(tb), *COMPARE_ARGS, "--format", "csv", "-o", str(runs_csv),
              "--fleet-summary", str(fleet_csv))
    assert out.returncode == 0, out.stderr
    rows = [_typed(r) for r in csv.DictReader(io.StringIO(runs_csv.read_text()))]
    fleet = [_typed(r) for r in csv.DictReader(io.StringIO(fleet_csv.read_text()))]
    assert len(rows) == 2 * EPISODES and "fleet" not in runs_csv.read_text()
    _check_fleet(fleet, rows, "strategy")
    assert [f["conversations_over_budget"] for f in fleet] == [EPISODES - LONG_FROM] * 2


def test_csv_without_the_option_says_where_the_fleet_summary_went(tb: Path) -> None:
    out = run("compare", str(SMALL), str(tb), *COMPARE_ARGS, "--format", "csv")
    assert out.returncode == 0, out.stderr
    assert "--fleet-summary FILE" in out.stderr and f"{EPISODES} conversations" in out.stderr
    assert len(list(csv.DictReader(io.StringIO(out.stdout)))) == 2 * EPISODES  # stdout stays one CSV table


def test_sweep_csv_and_json_fleet_summaries_agree_with_the_rows(tb: Path, tmp_path: Path) -> None:
    common = ("sweep", str(SMALL), str(tb), "--grid", "keep_turns=1,3", "--summarizer", "drop", "--processes", "1")
    fleet_csv, fleet_json = tmp_path / "fleet.csv", tmp_path / "fleet.json"
    as_csv = run(*common, "--format", "csv", "--fleet-summary", str(fleet_csv))
    as_json = run(*common, "--format", "json", "--fleet-summary", str(fleet_json))
    assert as_csv.returncode == 0 and as_json.returncode == 0, as_csv.stderr + as_json.stderr
    rows = [_typed(r) for r in csv.DictReader(io.StringIO(as_csv.stdout))]
    fleet = [_typed(r) for r in csv.DictReader(io.StringIO(fleet_csv.read_text()))]
    _check_fleet(fleet, rows, "keep_turns")
    doc = json.loads(as_json.stdout)
    assert json.loads(fleet_json.read_text()) == doc["fleet"]  # the file is the document's summary, alone
    _check_fleet(doc["fleet"], doc["rows"], "keep_turns")


def test_the_table_fleet_summary_file_is_the_table_output_s_summary(tb: Path, tmp_path: Path) -> None:
    fleet_txt = tmp_path / "fleet.txt"
    out = run("compare", str(SMALL), str(tb), *COMPARE_ARGS, "--fleet-summary", str(fleet_txt))
    assert out.returncode == 0, out.stderr
    text = fleet_txt.read_text()
    assert text.startswith("fleet summary: per strategy") and f"{EPISODES} conversations of tb5.json" in text
    assert out.stdout.endswith(text)  # the same summary ends the table output


def test_the_option_gives_a_one_conversation_fleet_summary_too(tmp_path: Path) -> None:
    fleet_json = tmp_path / "fleet.json"
    out = run("compare", str(SMALL), str(DEMO), "--counter", "estimate", "--summarizer", "drop",
              "--strategy", "w=sliding-window", "--format", "json", "--fleet-summary", str(fleet_json))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    fleet = json.loads(fleet_json.read_text())
    assert [f["conversations"] for f in fleet] == [1]
    _check_fleet(fleet, doc["strategies"], "strategy")
