"""Sweep: every row equals an individual replay, and the table is the same whatever the parallelism.

Bug classes guarded here: a parallel run that reorders or mixes up rows; a grid value applied to
the wrong field (or a strategy's params set before the strategy replaces them); a shorthand manifest
whose other settings are silently reset by the sweep; a recommendation that picks a setting that
went over budget or states numbers that are not in the table.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from inspector.manifest import ManifestError, apply_overrides, load_manifest, set_dotted, settings_from_dict
from inspector.replay import replay
from inspector.replay.ranges import expand_ranges
from inspector.sweep import (
    METRIC_COLUMNS,
    apply_params,
    by_setting,
    combinations,
    cost_column,
    parse_grid,
    sweep,
    sweep_one,
)
from inspector.report.recommend import recommend
from inspector.transcripts import load_transcript, sample_path

from cli_run import run

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "sample_manifests" / "small-window.yaml"
T1, T2 = sample_path("demo_support.json"), sample_path("demo_support.anthropic.json")
SET = ["spec.models[0].context_window=6000"]  # room for the demo's own system text and 15 tools (Q21)
GRID = {"keep_turns": [2, 4], "hysteresis_ratio": [0, 0.3]}


@pytest.fixture(scope="module")
def inline() -> pd.DataFrame:
    return sweep(MANIFEST, [T1, T2], GRID, overrides=SET, processes=1, progress=False)


def _replay(params: dict[str, Any], transcript: Path, manifest: Path = MANIFEST, overrides: list[str] = SET) -> Any:
    """The reference: one plain replay with the same fields set by hand."""
    doc = apply_overrides(load_manifest(manifest).raw, overrides)
    for key, value in params.items():
        path = key if "." in key else f"spec.context_manager.params.{key}"
        doc = set_dotted(doc, path, str(value))
    return replay(settings_from_dict(doc, file=str(manifest)), load_transcript(transcript))  # the default policy


# --- correctness ----------------------------------------------------------------------------------

def test_one_row_per_transcript_and_combination_in_input_order(inline: pd.DataFrame) -> None:
    assert len(inline) == 2 * 4
    expected = [(t, kt, hr) for t in ("demo_support.json", "demo_support.anthropic.json")
                for kt in (2, 4) for hr in (0, 0.3)]
    assert list(inline[["transcript", "keep_turns", "hysteresis_ratio"]].itertuples(index=False, name=None)) == expected
    assert list(inline.columns[:4]) == ["transcript", "conversation", "keep_turns", "hysteresis_ratio"]
    assert inline["conversation"].tolist() == [0] * 8
    assert set(METRIC_COLUMNS) <= set(inline.columns)
    assert inline["error"].isna().all()


def test_every_row_equals_an_individual_replay(inline: pd.DataFrame) -> None:
    paths = {"demo_support.json": T1, "demo_support.anthropic.json": T2}
    for row in inline.itertuples(index=False):
        rp = _replay({"keep_turns": row.keep_turns, "hysteresis_ratio": row.hysteresis_ratio}, paths[row.transcript])
        t = rp.totals()
        assert row.frames == t["frames"]
        assert row.tokens_sent == t["payload_tokens"]
        assert row.peak_payload == t["max_payload_tokens"]
        assert row.over_budget == t["over_budget"]
        assert row.summarizer_in_turn == t["summarizer_calls"]["in_turn"]
        assert row.summarizer_commit == t["summarizer_calls"]["commit"]
        assert row.summarizer_calls == row.summarizer_in_turn + row.summarizer_commit
        assert row.summarizer_failures == t["summarizer_failures"]
        assert (row.repairs, row.trimmed, row.folded) == (t["repairs"], t["trimmed"], t["folded"])
        assert row.payload_cost_usd == pytest.approx(t["payload_cost_usd"])
        assert row.summarizer == rp.summarizer_label == "offline stand-in (not a model)"
        budgets = {f.budget.max_tokens - f.budget.reserve - f.budget.margin for f in rp.frames}
        assert row.input_budget == min(budgets)
        assert row.min_headroom == min(f.headroom for f in rp.frames)
        summarised = {i for c in rp.commits if c.action in ("summarized", "reused") for i in expand_ranges(c.folded)}
        summarised |= {i for f in rp.frames if f.decision.action in ("summarized", "reused") for i in expand_ranges(f.folded)}
        assert row.messages_summarised == len(summarised)


def _e1(msgs: list[dict[str, str]]) -> int:
    """docs/design.md E1 for plain-text rows: floor(string chars / 4) + 4 per message."""
    return sum(len(m["content"]) for m in msgs) // 4 + 4 * len(msgs)


def test_sweep_rows_match_numbers_worked_out_from_the_sliding_window_rule(tmp_path: Path) -> None:
    """An independent expectation (not a second replay): four plain turns, a sliding window of
    ``keep_turns`` user turns written back at each commit, and the estimate counter. The call for turn
    t sends [system, the last keep_turns committed turns before t, q_t]; a wider window sends more
    and drops fewer rows, and every number below comes from that rule and E1."""
    turns = [({"role": "user", "content": f"q{i}" * (10 * i)}, {"role": "assistant", "content": f"a{i}" * (7 * i)})
             for i in range(1, 5)]
    path = tmp_path / "four.json"
    path.write_text(json.dumps({"messages": [m for t in turns for m in t]}))
    system_text = "Be brief."
    doc = {"apiVersion": "mas/v1", "kind": "Agent", "spec": {
        "system_prompt": system_text,
        "models": [{"model": "gpt-4o", "context_window": 100_000, "max_tokens": 1_000}],
        "context_manager": {"type": "sliding-window", "params": {"keep_turns": 1}}}}
    df = sweep(doc, [path], {"keep_turns": [1, 2, 5]}, counter="estimate", processes=1, progress=False)
    system_row = {"role": "system", "content": system_text}
    for row in df.itertuples(index=False):
        k = row.keep_turns
        payloads = [[system_row, *[m for t in turns[max(0, i - k):i] for m in t], turns[i][0]] for i in range(4)]
        sizes = [_e1(p) for p in payloads]
        budget = 100_000 - 1_000 - 10_000  # window − completion reserve − ceil(10 % margin)
        assert (row.frames, row.user_turns, row.tokens_sent, row.peak_payload) == (4, 4, sum(sizes), max(sizes))
        assert (row.input_budget, row.min_headroom, row.over_budget, row.trimmed) == (budget, budget - max(sizes), 0, 0)
        # rows out of the window after the last commit (it keeps the newest k of the four turns)
        assert row.messages_dropped == 2 * max(0, 4 - k)
    # worked by hand for k = 1: 15 + 36 + 50 + 63 (e.g. turn 3: [system, q2, a2, q3] = 137 chars → 34 + 16)
    assert df["tokens_sent"].tolist() == [164, 205, 222]


def test_the_grid_actually_changes_the_replay(inline: pd.DataFrame) -> None:
    """A sweep whose values never reach the engine would give identical rows."""
    first = inline[inline.transcript == "demo_support.json"]
    assert first.groupby("keep_turns")["tokens_sent"].first().is_monotonic_increasing
    assert first["tokens_sent"].nunique() > 1


# --- determinism ----------------------------------------------------------------------------------

def test_parallel_table_is_identical_to_the_inline_one(inline: pd.DataFrame) -> None:
    seen: list[tuple[int, int]] = []
    parallel = sweep(MANIFEST, [T1, T2], GRID, overrides=SET, processes=2, progress=lambda d, n: seen.append((d, n)))
    pd.testing.assert_frame_equal(inline, parallel)
    assert seen == [(d, 8) for d in range(1, 9)]


def test_repeated_runs_and_odd_worker_counts_agree(inline: pd.DataFrame) -> None:
    again = sweep(MANIFEST, [T1, T2], GRID, overrides=SET, processes=3, progress=False)
    pd.testing.assert_frame_equal(inline, again)
    assert inline.to_json(orient="records") == again.to_json(orient="records")


def test_sweep_one_is_pure_and_its_arguments_travel() -> None:
    doc = apply_overrides(load_manifest(MANIFEST).raw, SET)
    args = (doc, str(T1), {"keep_turns": 3}, "estimate", "stand-in")
    shipped = pickle.loads(pickle.dumps(args))  # what a cluster executor does
    a = sweep_one(*args, manifest_file=str(MANIFEST))
    b = sweep_one(*shipped, manifest_file=str(MANIFEST))
    assert a == b
    c = sweep_one(doc, load_transcript(T1), {"keep_turns": 3}, "estimate", "stand-in", manifest_file=str(MANIFEST))
    assert {k: c[k] for k in METRIC_COLUMNS} == {k: a[k] for k in METRIC_COLUMNS}
    assert doc == apply_overrides(load_manifest(MANIFEST).raw, SET)  # not mutated


# --- grid keys ------------------------------------------------------------------------------------

def test_short_names_and_dotted_paths_set_the_same_field() -> None:
    short = sweep(MANIFEST, T1, {"keep_turns": [3]}, overrides=SET, processes=1, progress=False)
    dotted = sweep(MANIFEST, T1, {"spec.context_manager.params.keep_turns": [3]}, overrides=SET, processes=1,
                   progress=False)
    assert short[list(METRIC_COLUMNS)].equals(dotted[list(METRIC_COLUMNS)])
    assert "spec.context_manager.params.keep_turns" in dotted.columns


def test_any_dotted_manifest_path_is_a_grid_key() -> None:
    df = sweep(MANIFEST, T1, {"spec.models[0].context_window": [3000, 6000]}, processes=1, progress=False)
    for row in df.itertuples(index=False):
        rp = _replay({"spec.models[0].context_window": row[2]}, T1, overrides=[])
        assert row.tokens_sent == rp.totals()["payload_tokens"]
    assert df["input_budget"].tolist() == [3000 - 1000 - 300, 6000 - 1000 - 600]


def test_a_strategy_is_applied_before_its_params_and_a_foreign_param_never_reaches_it() -> None:
    grid = {"keep_turns": [2], "context_manager": ["sliding-window", "stack", {"type": "summarising"}]}
    df = sweep(MANIFEST, T1, grid, overrides=SET, processes=1, progress=False)
    window, stack, summ = (r for _, r in df.iterrows())
    assert pd.isna(window["error"]) and window["summarizer"] == "none"
    assert window["tokens_sent"] == _replay({}, T1, overrides=[*SET, "spec.context_manager=sliding-window",
                                                                "spec.context_manager.params.keep_turns=2"]
                                            ).totals()["payload_tokens"]
    # stack defines no keep_turns: the run goes without it (Q9 holds), and the row says so
    assert pd.isna(stack["error"]) and stack["keep_turns"] is None
    assert stack["settings_not_applicable"] == "keep_turns=[2]" and stack["settings_applied"] == "context_manager=stack"
    assert stack["tokens_sent"] == _replay({}, T1, overrides=[*SET, "spec.context_manager=stack"]).totals()["payload_tokens"]
    assert summ["context_manager"] == '{"type": "summarising"}'  # mappings are shown as JSON text
    assert pd.isna(summ["error"])
    bad = {"context_manager": [{"type": "stack", "params": {"max_messages": 0}}]}  # a value out of range
    with pytest.raises(ManifestError):
        sweep(MANIFEST, T1, bad, overrides=SET, processes=1, progress=False, on_error="raise")


def test_the_compaction_shorthand_survives_a_sweep_of_its_manager() -> None:
    loaded = load_manifest(ROOT / "sample_manifests" / "compaction-sugar.yaml")
    doc = apply_params(loaded.raw, {"keep_turns": 2})
    assert "compaction" not in doc["spec"]["working_memory"]
    cm = doc["spec"]["context_manager"]
    assert cm["params"]["keep_turns"] == 2
    assert cm["params"]["summarizer"]["params"]["model"] == "gpt-4o-mini"  # not reset to the default
    assert settings_from_dict(doc).warnings == ()
    assert loaded.raw["spec"]["working_memory"]["compaction"]["keep_turns"] == 4  # input untouched


@pytest.mark.parametrize(("items", "grid"), [
    (["keep_turns=2,4,6"], {"keep_turns": [2, 4, 6]}),  # YAML ints
    (["hysteresis_ratio=0, 0.1", "keep_turns=3"], {"hysteresis_ratio": [0, 0.1], "keep_turns": [3]}),  # order kept
    (["summary_threshold=null,500"], {"summary_threshold": [None, 500]}),  # null is None
    (["context_manager=[sliding-window, {type: stack, params: {max_messages: 20}}]"],  # commas inside a value
     {"context_manager": ["sliding-window", {"type": "stack", "params": {"max_messages": 20}}]}),
    (["spec.models[0].context_window=3000,6000"], {"spec.models[0].context_window": [3000, 6000]}),
    (["keep_turns=2", "keep_turns=4"], {"keep_turns": [2, 4]}),  # a key given again adds to its axis
    (["context_manager={type: stack, params: {max_messages: 20}}", "context_manager=sliding-window"],  # a whole spec
     {"context_manager": [{"type": "stack", "params": {"max_messages": 20}}, "sliding-window"]}),
])
def test_parse_grid(items: list[str], grid: dict[str, list[Any]]) -> None:
    assert parse_grid(items) == grid


@pytest.mark.parametrize("items", [
    ["keep_turns"],  # no '='
    ["=2,4"],  # no name
    ["keep_turns="],  # no values
    ["context_manager=[stack"],  # broken YAML list
])
def test_parse_grid_rejects(items: list[str]) -> None:
    with pytest.raises(ValueError):
        parse_grid(items)


def test_combinations() -> None:
    assert combinations({}) == [{}]
    assert combinations({"a": [1, 2], "b": ["x"]}) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    with pytest.raises(ValueError):
        combinations({"a": []})
    with pytest.raises(ValueError):
        combinations({"a": "24"})  # a string is not a list of values


# --- progress and command line --------------------------------------------------------------------

def test_default_progress_is_one_line_on_a_non_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    sweep(MANIFEST, T1, {"keep_turns": [2, 3]}, overrides=SET, processes=1)
    assert capsys.readouterr().err.strip().splitlines()[-1] == "sweep: 2/2 runs"


def test_the_sweep_command_writes_each_format(tmp_path: Path) -> None:
    """The CLI is the one writer of a sweep (inspector/cli/sweep.py); the analysis layer returns a table."""
    common = ["sweep", str(MANIFEST), str(T1), "--set", SET[0], "--counter", "estimate"]
    out = tmp_path / "sweep.csv"
    proc = run(*common, "--grid", "keep_turns=2,3", "--format", "csv", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    csv = pd.read_csv(out)
    assert csv["keep_turns"].tolist() == [2, 3] and "tokens_sent" in csv.columns
    proc = run(*common, "--grid", "keep_turns=2", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["grid"] == {"keep_turns": [2]} and doc["rows"][0]["keep_turns"] == 2
    proc = run(*common, "--grid", "keep_turns=2")
    assert proc.returncode == 0 and "keep" in proc.stdout and "total" in proc.stdout  # the table, for people


def test_the_sweep_command_errors() -> None:
    common = ["sweep", str(MANIFEST), str(T1), "--set", SET[0], "--counter", "estimate"]
    proc = run(*common, "--grid", "keep_turns")
    assert proc.returncode == 2 and "NAME=V1,V2" in proc.stderr
    assert run(*common, "--grid", "keep_turns=2", "--format", "xml").returncode == 2
    proc = run(*common, "--grid", "context_manager=[stack, sliding-window]", "--grid", "keep_turns=2")
    assert proc.returncode == 0, proc.stderr  # keep_turns applies to the window only; the stack runs without it
    assert "sliding-window" in proc.stdout and "stack" in proc.stdout
    proc = run(*common, "--grid", "context_manager={type: stack, params: {max_messages: 0}}")
    assert proc.returncode == 1  # an invalid value: the row records the error; the table is still written
    assert "context_manager=" in proc.stderr and "max_messages" in proc.stderr


# --- reading a sweep: aggregate and recommendation ------------------------------------------------

def _row(kt: int, transcript: str = "a", **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"transcript": transcript, "keep_turns": kt}
    row.update(dict.fromkeys(METRIC_COLUMNS, 0))
    row.update(frames=10, tokens_sent=1000 * kt, peak_payload=100 * kt, input_budget=1000,
               min_headroom=1000 - 100 * kt, payload_cost_usd=0.01 * kt, summary_cost_usd=None, cost_usd=None,
               forgotten_ids="[]", user_turns=10, summary_cost_basis="none (no summary calls)",
               summarizer="stand-in", counter="estimate", error=None)
    row.update(over)
    return row


@pytest.mark.parametrize(("rows", "pick", "metric"), [
    # the cheapest setting went over budget: the next one is picked
    ([_row(1, over_budget=2), _row(2), _row(3)], {"keep_turns": 2}, "payload_cost_usd"),
    # every run priced (a real summarizer): total cost decides, not the agent's share
    ([_row(1, cost_usd=0.9), _row(2, cost_usd=0.5)], {"keep_turns": 2}, "cost_usd"),
    # no price anywhere: input tokens decide
    ([_row(2, payload_cost_usd=None), _row(1, payload_cost_usd=None)], {"keep_turns": 1}, "tokens_sent"),
    # a tie on cost goes to more context (fewer messages folded away, then the larger grid value)
    ([_row(2, payload_cost_usd=0.5, messages_summarised=9), _row(1, payload_cost_usd=0.5, messages_summarised=3)],
     {"keep_turns": 1}, "payload_cost_usd"),
    ([_row(1, payload_cost_usd=0.5, tokens_sent=10), _row(2, payload_cost_usd=0.5, tokens_sent=10)],
     {"keep_turns": 2}, "payload_cost_usd"),
    # a failed run disqualifies its setting
    ([_row(1, error="ManifestError: bad", tokens_sent=None), _row(2)], {"keep_turns": 2}, "payload_cost_usd"),
    # over budget on one transcript is over budget for the setting
    ([_row(1), _row(1, "b", over_budget=1), _row(2), _row(2, "b")], {"keep_turns": 2}, "payload_cost_usd"),
])
def test_recommend_picks_the_cheapest_setting_within_budget(rows: list[dict[str, Any]], pick: dict[str, Any],
                                                            metric: str) -> None:
    rec = recommend(pd.DataFrame(rows))
    assert rec.setting == pick and rec.metric == metric
    assert rec.text.startswith(f"**Recommendation: keep_turns = {pick['keep_turns']}**")


def test_recommend_words_come_from_the_table() -> None:
    rec = recommend(pd.DataFrame([_row(1, trimmed=7, summarizer_calls=4, summarizer_commit=4), _row(3)]))
    assert "$0.0100" in rec.text and "$0.0300" in rec.text  # the pick and the dearest, as in the table
    assert "67 % less" in rec.text
    assert "removed 7 message(s)" in rec.text and "called 4 time(s)" in rec.text
    assert "offline stand-in" in rec.text
    strict = recommend(pd.DataFrame([_row(1, trimmed=7), _row(3)]), allow_trims=False)
    assert strict.setting == {"keep_turns": 3}


def test_no_setting_qualifies() -> None:
    rec = recommend(pd.DataFrame([_row(1, over_budget=3), _row(2, over_budget=1)]))
    assert rec.setting is None and rec.qualifying == 0
    assert "No recommendation" in rec.text and "keep_turns = 2, with 1 call(s) over budget" in rec.text


def test_by_setting_sums_over_transcripts_and_keeps_grid_order() -> None:
    df = pd.DataFrame([_row(4), _row(1), _row(4, "b", peak_payload=999, cost_usd=0.2), _row(1, "b")])
    agg = by_setting(df)
    assert agg["keep_turns"].tolist() == [4, 1]
    four = agg.iloc[0]
    assert (four.runs, four.tokens_sent, four.peak_payload) == (2, 8000, 999)
    assert four.cost_usd is None  # one transcript has no total price: no partial sums
    assert four.payload_cost_usd == pytest.approx(0.08)
    assert cost_column(agg) == "payload_cost_usd"


# --- figures --------------------------------------------------------------------------------------

def test_sweep_figures(inline: pd.DataFrame) -> None:
    from inspector.report.sweep_figures import peak_vs_budget, summarizer_calls, tokens_and_cost

    agg = by_setting(inline)
    rec = recommend(agg)
    fig = tokens_and_cost(inline, "keep_turns", recommended=rec)  # a raw table is aggregated first
    names = [t.name for t in fig.data]
    # tokens, the cost with caching the tuner ranks on, and the cost without caching beside it
    assert [a.text for a in fig.layout.annotations] == ["total input tokens",
                                                        "cost with prompt caching (USD, agent + summarizer)",
                                                        "cost without prompt caching (USD, agent + summarizer)"]
    assert names.count("hysteresis_ratio=0.0") == 3 and names.count("recommended") == 3
    without = [t for t in fig.data if t.name == "hysteresis_ratio=0.0"][2]
    assert list(without.y) == agg[agg.hysteresis_ratio == 0.0]["cost_without_caching_usd"].tolist()
    star = [t for t in fig.data if t.name == "recommended"][0]
    assert list(star.x) == [rec.setting["keep_turns"]]
    line = [t for t in fig.data if t.name == "hysteresis_ratio=0.3"][0]
    assert list(line.y) == agg[agg.hysteresis_ratio == 0.3]["tokens_sent"].tolist()
    calls = summarizer_calls(agg, "hysteresis_ratio")
    assert {t.name for t in calls.data} == {"keep_turns=2", "keep_turns=4"} and len(calls.data) == 4
    peak = peak_vs_budget(agg, "keep_turns")
    assert [s.y0 for s in peak.layout.shapes] == [agg["input_budget"].iloc[0]]  # the budget line
    with pytest.raises(ValueError, match="not a grid column"):
        peak_vs_budget(agg, "max_messages")
