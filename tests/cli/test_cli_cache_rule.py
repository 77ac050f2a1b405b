"""The command line's prompt-cache faces: ``--cache-rule`` on replay, compare, sweep and calibrate, the
manifest's ``spec.models[].prompt_cache`` (and its validation), the policy line that says which rule
is in force and why, and the columns and words of each output. In-process through
:func:`inspector.cli.main`.

Numbers come from a two-call transcript (the one of tests/analysis/test_cost_with_caching.py; call 0: 1 300
tokens; call 1: 1 319, the first 1 300 unchanged): under openai call 1 reads 1 280 (ten 128-token
steps), so 1 280 of 2 619 input tokens are cached; gpt-4o input $2.5 and cache read $1.25 per
million tokens: $0.0049475 with caching, $0.0065475 without."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.transcripts import sample_path
from tests.builders import two_calls

Cap = pytest.CaptureFixture[str]

MANIFEST = """apiVersion: mas/v1
kind: Agent
metadata:
  name: cached
spec:
  models:
    - id: main
      model: gpt-4o
      prompt_cache: {rule}
"""


def run(capsys: Cap, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def last_heading(out: str, first: str) -> str:
    """The heading of a table's last column: the last word of each heading line, top to bottom (a
    heading wraps over lines); ``first`` is the first column's heading, on the heading's last line."""
    lines = out.splitlines()
    end = next(i for i, line in enumerate(lines) if line.split()[:1] == [first])
    start = end
    while start > 0 and lines[start - 1].startswith(" "):
        start -= 1
    return " ".join(line.split()[-1] for line in lines[start:end + 1])


@pytest.fixture()
def two(tmp_path: Path) -> str:
    return str(two_calls(tmp_path / "two.json"))


def test_the_replay_table_has_a_cached_column_and_says_the_cost_with_caching(capsys: Cap, two: str) -> None:
    status, out, err = run(capsys, "replay", two, "--format", "table")
    assert status == 0
    assert last_heading(out, "call") == "read from cache (tokens)"  # the words of CACHE_WORDS["cached_tokens"]
    total = next(line for line in out.splitlines() if line.startswith("total "))
    assert total.split()[-1] == "1,280"
    words = " ".join(out.split())
    assert ("total cost with prompt caching (rule openai): the 2 calls' input costs $0.0049, $0.0065 without "
            "caching; 1,280 of 2,619 input tokens (49 %) read from the cache") in words
    assert "prompt cache: rule openai (auto: by the model's provider; litellm entry gpt-4o: provider openai)" in err


def test_the_wide_table_shows_both_costs(capsys: Cap, two: str) -> None:
    _, out, _ = run(capsys, "replay", two, "--format", "table", "--wide")
    assert last_heading(out, "call") == "cost with caching $"
    total = next(line for line in out.splitlines() if line.startswith("total "))
    assert total.split()[-2:] == ["0.0065", "0.0049"]  # cost $ (without caching), then with caching


def test_replay_json_and_csv_carry_the_cache(capsys: Cap, two: str) -> None:
    _, out, _ = run(capsys, "replay", two, "--format", "json")
    doc = json.loads(out)
    assert doc["frames"][1]["cache"]["cached"] == 1_280 and doc["frames"][1]["cache"]["uncached"] == 39
    assert doc["totals"]["cache"]["cache_hit_share"] == 0.4887
    _, out, _ = run(capsys, "replay", two, "--format", "csv", "--cache-rule", "none")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["cached_tokens"] for r in rows] == ["0", "0"] and rows[0]["cache_rule"] == "none"
    assert {"cache_written_tokens", "uncached_tokens", "cache_broke_at", "cost_with_caching_usd"} <= set(rows[0])


def test_the_option_wins_and_says_so(capsys: Cap, two: str) -> None:
    _, out, err = run(capsys, "replay", two, "--format", "json", "--cache-rule", "anthropic")
    assert "prompt cache: rule anthropic (set by --cache-rule anthropic)" in err
    assert json.loads(out)["frames"][1]["cache"]["cached"] == 1_300


def test_an_unknown_rule_on_the_command_line_is_a_usage_error(capsys: Cap, two: str) -> None:
    status, _, err = run(capsys, "replay", two, "--cache-rule", "openia")
    assert status == 2 and "invalid choice: 'openia'" in err


def test_the_manifest_chooses_the_rule_when_the_option_is_not_given(capsys: Cap, tmp_path: Path, two: str) -> None:
    manifest = tmp_path / "agent.yaml"
    manifest.write_text(MANIFEST.format(rule="none"), encoding="utf-8")
    _, out, err = run(capsys, "replay", str(manifest), two, "--format", "json")
    assert "prompt cache: rule none (set in the manifest: spec.models[main].prompt_cache none)" in err
    assert json.loads(out)["totals"]["cache"]["cached"] == 0
    _, out, _ = run(capsys, "replay", str(manifest), two, "--format", "json", "--cache-rule", "auto")
    assert json.loads(out)["totals"]["cache"]["cached"] == 1_280


def test_validate_names_a_bad_manifest_rule_by_file_line_and_field(capsys: Cap, tmp_path: Path) -> None:
    manifest = tmp_path / "agent.yaml"
    manifest.write_text(MANIFEST.format(rule="openia"), encoding="utf-8")
    status, _, err = run(capsys, "validate", str(manifest))
    assert status == 1
    assert f"error: {manifest}:9: spec.models[0].prompt_cache:" in err and "'openia'" in err


def test_compare_rows_carry_the_cost_with_caching(capsys: Cap, two: str) -> None:
    _, out, err = run(capsys, "compare", two, "--strategy", "s=stack", "--strategy", "w=sliding-window",
                      "--format", "json")
    rows = json.loads(out)["strategies"]
    assert {"cost_with_caching_usd", "cache_hit_share", "cache_breaks", "cache_rule"} <= set(rows[0])
    assert rows[0]["cache_hit_share"] == 0.4887 and rows[0]["cache_breaks"] == 0
    assert "prompt cache: rule openai" in err
    _, out, _ = run(capsys, "compare", two, "--strategy", "s=stack", "--format", "table")
    assert last_heading(out, "strategy") == "cost with caching $"


def test_sweep_rows_carry_the_cost_with_caching(capsys: Cap, two: str) -> None:
    _, out, err = run(capsys, "sweep", two, "--grid", "keep_turns=1,2", "--processes", "1", "--format", "json",
                      "--cache-rule", "none")
    rows = json.loads(out)["rows"]
    assert [r["cache_rule"] for r in rows] == ["none", "none"] and rows[0]["cache_hit_share"] == 0.0
    assert rows[0]["cost_with_caching_usd"] == pytest.approx(rows[0]["cost_usd"])  # no cache: the same cost
    assert "prompt cache: rule none (set by --cache-rule none)" in err


def test_calibrate_reports_predicted_beside_recorded_cache_tokens(capsys: Cap) -> None:
    sample = str(sample_path("demo_session.claude-code.jsonl"))
    _, out, _ = run(capsys, "calibrate", sample)
    words = " ".join(out.split())
    assert "predicted beside recorded tokens" in words
    assert "cache reads: mean absolute error 54.8 tokens over 4 call(s) (0.46 % of the mean recorded)" in words
    _, out, _ = run(capsys, "calibrate", sample, "--format", "json")
    cache = json.loads(out)["prompt_cache"]
    assert [c["recorded_cached"] for c in cache["calls"]] == [0, 15_880, 15_860, 15_962]
    assert cache["rule"] == "anthropic" and cache["cached"]["calls"] == 4
    _, out, _ = run(capsys, "calibrate", sample, "--format", "csv", "--cache-rule", "none")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["predicted_cached"] for r in rows] == ["0"] * 4 and rows[1]["recorded_cached"] == "15880"


def test_the_fleet_summary_sums_the_cost_with_caching(capsys: Cap, tmp_path: Path) -> None:
    one, other = two_calls(tmp_path / "one.json"), two_calls(tmp_path / "other.json")
    _, out, _ = run(capsys, "compare", str(one), str(other), "--strategy", "s=stack", "--format", "json")
    doc = json.loads(out)
    runs = [r["cost_with_caching_usd"] for r in doc["strategies"]]
    assert runs == [pytest.approx(0.0049475)] * 2  # a stack never summarises: the calls' cost alone
    assert doc["fleet"][0]["cost_with_caching_usd"] == pytest.approx(2 * 0.0049475)


# --- under the rule none, the tables for people leave out the columns that claim a cache -------------------------
# (nothing is read from a cache, the cost with caching is the cost: those columns could only read 0 or repeat it;
# CSV and JSON keep every column, tests above and tests/analysis/test_cache_words_without_rule.py)

CACHE_WORDS_IN_HEADINGS = ("caching", "share", "breaks", "read")  # one word per line: a heading wraps


def test_under_rule_none_the_wide_replay_table_ends_on_the_one_cost(capsys: Cap, two: str) -> None:
    _, out, _ = run(capsys, "replay", two, "--format", "table", "--wide", "--cache-rule", "none")
    lines = out.splitlines()
    heading = next(i for i, line in enumerate(lines) if line.split()[:1] == ["call"])
    assert lines[heading].split()[-2:] == ["cost", "$"]  # the last column: the one cost
    assert not any(w in line for line in lines[1:heading + 1] for w in CACHE_WORDS_IN_HEADINGS)
    total = next(line for line in lines if line.startswith("total "))
    assert total.split()[-1] == "0.0065"  # 2 619 input tokens at gpt-4o's $2.5 per million
    _, out, _ = run(capsys, "replay", two, "--format", "csv", "--cache-rule", "none")
    header = next(csv.reader(io.StringIO(out)))
    assert "cached_tokens" in header and "cost_with_caching_usd" in header  # the CSV keeps its columns


def test_under_rule_none_the_compare_and_sweep_tables_leave_the_cache_columns_out(capsys: Cap, two: str) -> None:
    for argv in (("compare", two, "--strategy", "w=sliding-window"), ("sweep", two, "--grid", "keep_turns=1,2")):
        _, out, _ = run(capsys, *argv, "--format", "table", "--wide", "--cache-rule", "none")
        assert "cost" in out and not any(w in out for w in CACHE_WORDS_IN_HEADINGS), argv
        _, out, _ = run(capsys, *argv, "--format", "table", "--wide", "--cache-rule", "openai")
        assert all(w in out for w in ("caching", "share", "breaks")), argv  # a caching rule keeps them
