"""One prompt-cache vocabulary: :data:`inspector.vocabulary.CACHE_WORDS` holds every cache code with
its words, and every face derives from it (issue 30 §3: totals, compare, sweep rows and the tuner
speak of the cost with caching in one set of codes). Bug classes: a second table of cache words
drifting from the first (the app said "cost with caching $" where the CLI said "with caching $"), a
row, CSV or JSON carrying a cache column no vocabulary words, and an old code coming back beside
its successor (``cache_cost_usd`` beside ``cost_with_caching_usd``)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from inspector.cli import main
from inspector.prompt_cache import (
    CACHE_COLUMNS,
    CALL_CACHE_COLUMNS,
    TOTALS_CACHE_COLUMNS,
    add_cache_to_document,
    cache_frame_rows,
    cache_metrics,
)
from inspector.replay import replay
from inspector.report import cache_view
from inspector.sweep import by_setting, sweep_one
from inspector.transcripts import load_transcript, sample_path
from inspector.vocabulary import CACHE_WORDS, column_words
from tests.builders import two_calls

OLD_CODES = ("cache_cost_usd", "uncached_cost_usd", "break_cost_usd", "breaks")
"""The codes the one vocabulary replaced (CHANGELOG): none may come back in a table or a document."""


def _cache_columns(columns: Any) -> set[str]:
    """The columns that speak of the prompt cache (their code says so) or repeat a replaced code."""
    return {c for c in columns if "cach" in c or c in OLD_CODES}


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_every_cache_code_has_words_and_the_faces_headings_are_those_words() -> None:
    for code in {*CACHE_COLUMNS, *TOTALS_CACHE_COLUMNS, *CALL_CACHE_COLUMNS, *cache_view.FLEET_TOKEN_COLUMNS}:
        assert CACHE_WORDS.get(code), code
    assert len(set(CACHE_WORDS.values())) == len(CACHE_WORDS)  # no two codes read alike
    assert all(column_words(code) == words for code, words in CACHE_WORDS.items())  # CLI and app headings
    assert not set(OLD_CODES) & set(CACHE_WORDS)


def test_no_row_csv_or_json_carries_a_cache_column_missing_from_the_vocabulary(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = two_calls(tmp_path / "two.json")
    rp = replay(None, load_transcript(path))
    rows: dict[str, set[str]] = {
        "cache_metrics": set(cache_metrics(rp)),
        "cache_frame_rows": set(cache_frame_rows(rp)[0]),
        "strategy row": set(cache_view.cache_totals_row(rp)),
        "fleet row": set(cache_view.fleet_cache_row(rp)),
        "sweep row": set(sweep_one(None, load_transcript(path), {})),
        "replay CSV": set(next(csv.DictReader(io.StringIO(_cli(capsys, "replay", str(path), "--format", "csv"))))),
        "calibrate CSV": set(next(csv.DictReader(io.StringIO(_cli(
            capsys, "calibrate", str(sample_path("demo_session.claude-code.jsonl")), "--format", "csv"))))),
    }
    doc = json.loads(_cli(capsys, "compare", str(path), str(path), "--strategy", "s=stack", "--format", "json"))
    rows["compare JSON"] = set(doc["strategies"][0])
    rows["fleet JSON"] = set(doc["fleet"][0])
    rows["by setting"] = set(by_setting(pd.DataFrame([sweep_one(None, load_transcript(path), {})])).columns)
    for face, columns in rows.items():
        assert _cache_columns(columns), face  # each face carries cache columns ...
        assert _cache_columns(columns) <= set(CACHE_WORDS), (face, _cache_columns(columns) - set(CACHE_WORDS))
    assert set(CACHE_COLUMNS) <= rows["sweep row"] and set(CACHE_COLUMNS) <= rows["compare JSON"]
    # Replay JSON nests the cache per call and in the totals: its costs, share and breaks are the codes too
    replay_doc = add_cache_to_document(rp.to_json(), rp)
    for obj in (replay_doc["frames"][1]["cache"], replay_doc["totals"]["cache"]):
        measures = {k for k in obj if k.endswith(("_usd", "share", "breaks"))}
        assert measures and measures <= set(CACHE_WORDS), measures
        assert not set(OLD_CODES) & set(obj)


def test_the_side_by_side_caching_table_reads_its_measures_from_the_vocabulary(tmp_path: Path) -> None:
    rp = replay(None, load_transcript(two_calls(tmp_path / "two.json")))
    table = cache_view.strategy_cache_table({"own": rp})
    assert list(table.index) == [CACHE_WORDS[code] for code in TOTALS_CACHE_COLUMNS]
