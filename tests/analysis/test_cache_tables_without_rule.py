"""With no prompt-cache rule in force (rule ``none``), the tables that put strategies and runs side by
side say so instead of claiming cache hits and breaks: Side by side's rows and caption
(inspector.report.cache_view.strategy_cache_rows / strategy_cache_caption, through the app's
side_by_side.totals_by_strategy), the fleet's tables and caption (fleet_cache_shown /
fleet_cache_caption over side_by_side.fleet_runs / fleet_summary), the header's help tooltip
(totals_help) and the sweep's stderr line (the real CLI in a subprocess). The machine columns keep
their codes and numbers. Under a caching rule (gpt-4o: OpenAI's) every table reads as before.

Real replays of tests/builders.two_calls (call 0: 1 300 tokens, call 1: 1 319, no tools) under a
provider without caching (mistral) or under gpt-4o with ``prompt_cache: none`` or its OpenAI rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from inspector.app.side_by_side import FleetInput, fleet_runs, fleet_summary, totals_by_strategy
from inspector.engine.limits import litellm_model_entry
from inspector.prompt_cache import TOTALS_CACHE_COLUMNS
from inspector.replay import Replay, replay
from inspector.report import cache_view
from inspector.report.tables import compare_table
from inspector.transcripts import load_transcript
from inspector.vocabulary import CACHE_WORDS
from tests.builders import two_calls

ROOT = Path(__file__).resolve().parents[2]
MISTRAL = "mistral/mistral-large-latest"  # provider mistral: no prompt-cache rule
MISTRAL_WHY = f"the model's provider: litellm entry {MISTRAL}: provider mistral"
CLAIMS = ("cache-hit", "cache break", "read from cache", "with caching")  # what only a cache can have


def _manifest(model: str, strategy: Any = "stack", prompt_cache: str | None = None) -> dict:
    row = {"id": "main", "model": model, **({"prompt_cache": prompt_cache} if prompt_cache else {})}
    return {"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "tables"},
            "spec": {"models": [row], "context_manager": strategy}}


def _replay(path: Path, model: str, strategy: str = "stack", prompt_cache: str | None = None) -> Replay:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return replay(_manifest(model, strategy, prompt_cache), load_transcript(path))


@pytest.fixture()
def two(tmp_path: Path) -> Path:
    return two_calls(tmp_path / "two.json")


def _input_cost(model: str) -> float:
    found = litellm_model_entry(model)
    assert found is not None, model
    return (1300 + 1319) * float(found[1]["input_cost_per_token"])


def _claims_nothing(text: str) -> None:
    for words in CLAIMS:
        assert words not in text, (words, text)


def test_no_cache_rule_side_by_side_has_no_hit_or_break_rows_and_says_why(two: Path) -> None:
    replays = {"stack": _replay(two, MISTRAL), "window": _replay(two, MISTRAL, "sliding-window")}
    assert all(cache_view.cache_account(rp).rule.name == "none" for rp in replays.values())
    assert cache_view.strategy_cache_rows(replays) == {"prompt caching": ["none", "none"]}
    table = totals_by_strategy(compare_table(replays), replays)  # the app's Side by side totals
    assert list(table.index)[0] == "prompt caching" and list(table.loc["prompt caching"]) == ["none", "none"]
    _claims_nothing(" ".join(map(str, table.index)))
    assert not set(CACHE_WORDS.values()) & set(table.index)
    assert list(table.loc["cost $"]) == [f"${_input_cost(MISTRAL):,.4f}"] * 2  # the cost: every input token
    caption = cache_view.strategy_cache_caption(replays)
    assert caption == (f"Totals per strategy. No prompt caching applies ({MISTRAL_WHY}): every input token is paid "
                       "at the input price, so nothing is read from a cache and no call breaks one.")
    assert "Cost with caching" not in caption and "cost without caching" not in caption
    # the notebooks' table: the same one row
    assert cache_view.strategy_cache_table(replays).to_dict("index") == {"prompt caching": {"stack": "none",
                                                                                              "window": "none"}}


def test_no_cache_rule_for_one_strategy_reads_no_prompt_caching_in_its_hit_and_break_cells(two: Path) -> None:
    none, cached = _replay(two, "gpt-4o", prompt_cache="none"), _replay(two, "gpt-4o")
    rows = cache_view.strategy_cache_rows({"plain": none, "cached": cached})
    assert list(rows) == [CACHE_WORDS[code] for code in TOTALS_CACHE_COLUMNS]
    for code in ("cost_with_caching_usd", "cache_hit_share", "cache_breaks", "cache_break_cost_usd"):
        assert rows[CACHE_WORDS[code]][0] == "no prompt caching", code
    assert rows["cost without caching $"][0] == f"${_input_cost('gpt-4o'):,.5f}"  # its cost, once
    assert rows["cache-hit share"][1] == "48.9%" and rows["cache breaks"][1] == "0"  # 1 280 of 2 619 read
    caption = cache_view.strategy_cache_caption({"plain": none, "cached": cached})
    assert caption.endswith("No prompt caching applies to plain (chosen by name in the settings): its cells read "
                            "\"no prompt caching\".")


def test_a_caching_rule_keeps_the_side_by_side_rows_and_caption(two: Path) -> None:
    replays = {"stack": _replay(two, "gpt-4o"), "window": _replay(two, "gpt-4o", "sliding-window")}
    rows = cache_view.strategy_cache_rows(replays)
    assert list(rows) == [CACHE_WORDS[code] for code in TOTALS_CACHE_COLUMNS]
    assert rows["cache-hit share"] == ["48.9%", "48.9%"] and rows["cost with caching $"] == ["$0.00495"] * 2
    assert cache_view.strategy_cache_caption(replays) == (
        "Totals per strategy. Cost with caching counts the provider's prompt cache (read from cache, written to "
        "cache, sent uncached); cost without caching pays every input token at the input price.")
    assert cache_view.totals_help(replays["stack"]) == cache_view.TOTALS_HELP


def test_no_cache_rule_header_help_says_none_applies_and_why(two: Path) -> None:
    words = cache_view.totals_help(_replay(two, MISTRAL))
    assert words.startswith(f"No prompt caching applies ({MISTRAL_WHY}): ")
    assert "every input token is paid at the input price" in words
    assert "A cache break is" not in words and "read from cache at" not in words


def _fleet(tmp_path: Path, plain: str, other: str) -> tuple[Replay, ...]:
    """Two conversations under strategy ``s``: the first under ``plain`` (a model), the second under ``other``."""
    (tmp_path / "b").mkdir()
    return (_replay(two_calls(tmp_path / "a.json"), plain), _replay(two_calls(tmp_path / "b" / "b.json"), other))


def test_no_cache_rule_fleet_leaves_out_the_cache_columns_and_says_why(tmp_path: Path) -> None:
    one, other = _fleet(tmp_path, MISTRAL, MISTRAL)
    runs = fleet_runs([(FleetInput("a.json", 0, one.transcript), {"s": one}),
                       (FleetInput("b.json", 0, other.transcript), {"s": other})])
    assert list(runs["cache_rule"]) == ["none", "none"]  # the machine table keeps every code
    assert runs["cache_hit_share"].tolist() == [0.0, 0.0]
    summary = fleet_summary(runs)
    assert summary["cache_rule"].tolist() == ["none"]
    for table in (runs, summary):
        shown = cache_view.fleet_cache_shown(table)
        assert not set(cache_view.FLEET_CACHE_MEASURES) & set(shown.columns), shown.columns
        assert "cost_usd" in shown.columns and "cache_rule" in shown.columns
    assert cache_view.fleet_cache_shown(summary)["cost_usd"].tolist() == [pytest.approx(2 * _input_cost(MISTRAL))]
    caption = cache_view.fleet_cache_caption(runs, runs.attrs["no_caching_why"])
    assert caption == (f"No prompt caching applies ({MISTRAL_WHY}): every input token is paid at the input price, so "
                       "nothing is read from a cache, no call breaks one, and the prompt cache's columns are left out.")


def test_no_cache_rule_for_some_fleet_runs_reads_no_prompt_caching_in_their_cells(tmp_path: Path) -> None:
    one, other = _fleet(tmp_path, MISTRAL, "gpt-4o")
    runs = fleet_runs([(FleetInput("a.json", 0, one.transcript), {"s": one}),
                       (FleetInput("b.json", 0, other.transcript), {"s": other})])
    shown = cache_view.fleet_cache_shown(runs)
    for code in cache_view.CACHE_CLAIMS:
        assert shown[code].tolist()[0] == "no prompt caching", code
    assert shown["cache_hit_share"].tolist()[1] == "48.9%" and shown["cached_tokens"].tolist()[1] == "1,280"
    assert shown["cost_without_caching_usd"].tolist()[0] == pytest.approx(_input_cost(MISTRAL))
    assert cache_view.fleet_cache_caption(runs, runs.attrs["no_caching_why"]) == (
        f"No prompt caching applies to 1 of the 2 runs ({MISTRAL_WHY}): their cells for the cost with caching, the "
        "cache-hit share and the cache breaks read \"no prompt caching\".")
    summary = fleet_summary(runs)  # one strategy over both: its rules differ, its sums stay numbers
    assert summary["cache_rule"].tolist() == ["none, openai"]
    assert cache_view.fleet_cache_shown(summary)["cache_hit_share"].tolist() == [round(1280 / (2 * 2619), 4)]


def test_a_caching_rule_keeps_the_fleet_tables_as_they_are(tmp_path: Path) -> None:
    one, other = _fleet(tmp_path, "gpt-4o", "gpt-4o")
    runs = fleet_runs([(FleetInput("a.json", 0, one.transcript), {"s": one}),
                       (FleetInput("b.json", 0, other.transcript), {"s": other})])
    assert cache_view.fleet_cache_shown(runs) is runs and cache_view.fleet_cache_caption(runs, ()) == ""
    summary = fleet_summary(runs)
    assert cache_view.fleet_cache_shown(summary) is summary and summary["cache_breaks"].tolist() == [0]


def _sweep(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-m", "inspector", "sweep", *args, "--grid", "keep_turns=1,2",
                           "--processes", "1", "--format", "json"], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_no_cache_rule_sweep_says_no_caching_applies_so_both_costs_are_one(two: Path) -> None:
    proc = _sweep(str(two), "--cache-rule", "none")
    line = next(x for x in proc.stderr.splitlines() if "prompt cache: rule" in x)
    assert line.endswith("prompt cache: rule none (set by --cache-rule none); no prompt caching applies, so the "
                         "cost_with_caching_usd column is the cost without caching (cost_without_caching_usd)")
    assert "is the cost with caching" not in proc.stderr
    rows = json.loads(proc.stdout)["rows"]  # the machine columns keep their codes: both costs, equal
    assert all(r["cost_with_caching_usd"] == r["cost_without_caching_usd"] for r in rows)


def test_a_caching_rule_keeps_the_sweeps_line(two: Path) -> None:
    proc = _sweep(str(two), "--cache-rule", "openai")
    assert ("prompt cache: rule openai (set by --cache-rule openai); the cost_with_caching_usd column is the cost "
            "with caching") in proc.stderr
    assert "no prompt caching" not in proc.stderr


def _swept(two: Path, cache_rule: str) -> Any:
    from inspector.sweep import sweep

    manifest = _manifest("gpt-4o", {"type": "sliding-window", "params": {"keep_turns": 1}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sweep(manifest, [str(two)], {"keep_turns": [1, 2]}, processes=1, progress=False,
                     cache_rule=cache_rule)


def test_no_cache_rule_tuner_ranks_on_the_cost_and_says_no_caching_applies(two: Path) -> None:
    from inspector.report.recommend import recommend, settings_table
    from inspector.report.sweep_figures import tokens_and_cost

    df = _swept(two, "none")
    assert set(df["cache_rule"]) == {"none"}
    rec = recommend(df)
    assert rec.metric == "cost_with_caching_usd"  # the machine's metric code is unchanged
    assert "Ranked by total cost (no prompt caching applies: every run's cache rule is none" in rec.text
    assert "with prompt caching" not in rec.text and "Without prompt caching it would cost" not in rec.text
    assert list(settings_table(df).columns)[-1] == "cost usd (no prompt caching)"  # the notebook's table
    fig = tokens_and_cost(df, "keep_turns", recommended=rec)  # one cost panel, saying so
    assert [a.text for a in fig.layout.annotations] == ["total input tokens",
                                                        "cost, no prompt caching (USD, agent + summarizer)"]


def test_a_caching_rule_keeps_the_tuners_words_and_both_cost_panels(two: Path) -> None:
    from inspector.report.recommend import recommend, settings_table
    from inspector.report.sweep_figures import tokens_and_cost

    df = _swept(two, "openai")
    rec = recommend(df)
    assert list(settings_table(df).columns)[-1] == "cost with caching usd"
    assert "Ranked by total cost with prompt caching" in rec.text and "Without prompt caching it would cost" in rec.text
    assert [a.text for a in tokens_and_cost(df, "keep_turns").layout.annotations][1:] == [
        "cost with prompt caching (USD, agent + summarizer)", "cost without prompt caching (USD, agent + summarizer)"]


def test_a_setting_whose_transcripts_have_different_rules_is_not_read_as_no_caching(tmp_path: Path) -> None:
    # one transcript recorded on mistral (no prompt-cache rule), one on gpt-4o (OpenAI's); the manifest names no
    # model, so each run is costed under its transcript's rule: per setting the rules are "none, openai", and the
    # tuner's aggregate must not say that no prompt caching applies (it did when it kept the first run's rule)
    from inspector.report.recommend import settings_table
    from inspector.sweep import by_setting, no_prompt_caching, sweep

    gpt = two_calls(tmp_path / "gpt.json")
    doc = json.loads(gpt.read_text(encoding="utf-8"))
    doc["model"] = MISTRAL
    mis = tmp_path / "mistral.json"
    mis.write_text(json.dumps(doc), encoding="utf-8")
    manifest = {"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "mixed"},
                "spec": {"context_manager": {"type": "sliding-window", "params": {"keep_turns": 1}}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = sweep(manifest, [str(mis), str(gpt)], {"keep_turns": [1, 2]}, processes=1, progress=False)
    assert list(df["cache_rule"]) == ["none", "none", "openai", "openai"]
    agg = by_setting(df)
    assert list(agg["cache_rule"]) == ["none, openai", "none, openai"]
    assert not no_prompt_caching(agg)
    assert list(settings_table(df).columns)[-1] == "cost with caching usd"
