"""Sweep and compare on Dask: the rows equal a local run's, transcripts travel by bytes or by path,
a worker that dies loses no row (and the result says a task re-ran), and the CLI's --dask works.

One real ``distributed.LocalCluster`` for the module: 2 worker *processes* (``processes=True``), one
thread each — so tasks really are pickled to other processes and a worker can really die — closed
at the end. The worker-death test kills one of them on purpose, so it runs last.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from inspector.cli import main  # noqa: E402
from inspector.compare import compare  # noqa: E402
from inspector.fleet import DaskTarget, FleetReport, parse_dask, run_tasks  # noqa: E402
from inspector.manifest import apply_overrides, load_manifest  # noqa: E402
from inspector.report.tables import compare_table  # noqa: E402
from inspector.sweep import combinations, sweep, sweep_one  # noqa: E402
from inspector.transcripts import load_transcript, sample_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "sample_manifests" / "small-window.yaml"
T1, T2 = sample_path("demo_support.json"), sample_path("demo_support.anthropic.json")
SET = ["spec.models[0].context_window=4000"]
GRID = {"keep_turns": [2, 4], "hysteresis_ratio": [0, 0.3]}


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


@pytest.fixture(scope="module")
def local() -> pd.DataFrame:
    return sweep(MANIFEST, [T1, T2], GRID, overrides=SET, processes=1, progress=False)


@pytest.mark.parametrize("ship", ["bytes", "path"])
def test_dask_rows_equal_local_rows(client: Any, local: pd.DataFrame, ship: str) -> None:
    seen: list[int] = []
    df = sweep(MANIFEST, [T1, T2], GRID, overrides=SET, client=client, ship=ship,
               progress=lambda done, total: seen.append(done))
    # every column (metrics added later included) and every value, in the same order
    assert list(df.columns) == list(local.columns)
    pd.testing.assert_frame_equal(df, local)
    # progress counts rows as their task finishes (one task per transcript here): rising to the total
    assert seen == sorted(seen) and seen[-1] == len(local) and len(seen) == 2
    assert df.attrs["fleet"]["runs"] == len(local) and df.attrs["fleet"]["tasks"] == 2  # one task per transcript
    assert df.attrs["fleet"]["workers"] == 2
    assert df.attrs["fleet"]["shipped"] == ship


def test_bytes_reach_workers_that_cannot_read_the_path(client: Any, local: pd.DataFrame, tmp_path: Path) -> None:
    # the workers look for the transcript under the same name, but only this process has the file
    path = tmp_path / "only-here" / T1.name
    path.parent.mkdir()
    path.write_bytes(T1.read_bytes())
    df = sweep(MANIFEST, [path], GRID, overrides=SET, client=client, ship="bytes", progress=False)
    mine = local[local["transcript"] == T1.name].reset_index(drop=True)
    pd.testing.assert_frame_equal(df.drop(columns="transcript"), mine.drop(columns="transcript"))


def test_a_bad_transcript_gives_the_same_error_row(client: Any, tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"messages": [{"role": 3}]}')
    grid = {"keep_turns": [2]}
    here = sweep(MANIFEST, [bad], grid, overrides=SET, processes=1, progress=False)
    for ship in ("bytes", "path"):
        there = sweep(MANIFEST, [bad], grid, overrides=SET, client=client, ship=ship, progress=False)
        pd.testing.assert_frame_equal(there, here)
        assert there["error"].iloc[0] and "broken.json" in there["error"].iloc[0]


def test_compare_on_dask_equals_compare_here(client: Any) -> None:
    t = load_transcript(T1)
    strategies = {"window": "sliding-window", "stack": {"type": "stack"}, "sum": {"type": "summarising"}}
    there = compare(MANIFEST, t, strategies, client=client, counter="estimate", summarizer="stand-in")
    here = compare(MANIFEST, t, strategies, counter="estimate", summarizer="stand-in")
    pd.testing.assert_frame_equal(compare_table(there), compare_table(here))
    for name in strategies:
        assert there[name].dumps(payloads=True) == here[name].dumps(payloads=True)
        assert there[name].transcript is t and there[name].fleet.tasks == len(strategies)


def test_cli_sweep_on_a_running_scheduler(client: Any, local: pd.DataFrame, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rows.json"
    argv = ["sweep", str(MANIFEST), str(T1), str(T2), "--grid", "keep_turns=2,4", "--grid", "hysteresis_ratio=0,0.3",
            "--set", SET[0], "--format", "json", "-o", str(out)]
    assert main([*argv, "--dask", client.scheduler.address]) == 0
    err = capsys.readouterr().err
    assert "dask: 8 run(s)" in err and "no worker died" in err  # progress is drawn on a terminal only
    assert main(argv) == 0
    capsys.readouterr()
    here = json.loads(out.read_text())
    assert main([*argv, "--dask", client.scheduler.address, "--dask-ship", "path"]) == 0
    assert json.loads(out.read_text()) == here


def test_cli_compare_on_a_local_cluster_of_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", str(MANIFEST), str(T1), "--strategy", "w=sliding-window", "--strategy", "s={type: stack}",
            "--counter", "estimate", "--summarizer", "drop", "--format", "json"]
    assert main(argv) == 0
    here = json.loads(capsys.readouterr().out)
    assert main([*argv, "--dask", "local:1"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == here
    assert "on 1 Dask worker(s)" in captured.err


@pytest.mark.parametrize(("text", "target"), [
    ("local", DaskTarget("local")), ("local:3", DaskTarget("local", workers=3)),
    ("tcp://10.0.0.5:8786", DaskTarget("scheduler", address="tcp://10.0.0.5:8786")),
])
def test_parse_dask(text: str, target: DaskTarget) -> None:
    assert parse_dask(text) == target


@pytest.mark.parametrize("text", ["local:0", "local:x", "10.0.0.5:8786", "tcp://host", "http://h:1", ""])
def test_parse_dask_rejects(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="--dask"):
        parse_dask(text)
    assert main(["sweep", str(MANIFEST), str(T1), "--grid", "keep_turns=2", "--dask", text]) == 2
    assert "--dask" in capsys.readouterr().err


def test_a_worker_that_dies_loses_no_row(client: Any, tmp_path: Path) -> None:
    """Runs last: one task kills its worker process the first time it runs; the scheduler re-runs it
    on a live worker, every row arrives, equal to a local run, and the report counts the re-run."""
    doc = apply_overrides(load_manifest(MANIFEST).raw, SET)
    combos = combinations(GRID)
    marker = str(tmp_path / "died-once")
    victim = combos[1]

    def task(d: Any, t: str, combo: dict[str, Any]) -> dict[str, Any]:
        if combo == victim and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)  # the worker process dies mid-task
        return sweep_one(d, t, combo, manifest_file=str(MANIFEST))

    calls = [((doc, str(T1), c), {}) for c in combos]
    rows, report = run_tasks(client, task, calls)
    expected = [sweep_one(doc, str(T1), c, manifest_file=str(MANIFEST)) for c in combos]
    assert rows == expected
    assert os.path.exists(marker)
    assert isinstance(report, FleetReport) and report.rescheduled + report.resubmitted >= 1
    assert "no row was lost" in report.words()
