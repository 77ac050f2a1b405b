"""The notebooks run top to bottom with nbclient against the bundled samples and show their key outputs.

Offline by default (the labelled stand-in summarizer, no network, no key); with a real model when
MODEL/API_BASE are set, here the local fake OpenAI-compatible server. A probe cell appended to the
executed copy reports the notebook's own variables, so the checks read data, not rendered HTML.
Bug classes: a notebook that errors on a fresh environment, one committed with outputs or with its
parameters cell anywhere but first, logic creeping back into cells, default parameters that no
longer show what the notebook promises, figures lost on export, and a stepper that shows another
call than the one selected. The notebooks are ordinary notebooks: edit them in Jupyter and clear
the outputs before committing (``make notebooks-clean``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from inspector.plugins import default_registry

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
PLOTLY = "application/vnd.plotly.v1+json"
PROBE = "PROBE "


def _execute(name: str, monkeypatch: pytest.MonkeyPatch, *, params: str = "", probe: str = "") -> Any:
    for var in ("MODEL", "API_BASE", "API_KEY"):
        monkeypatch.delenv(var, raising=False)  # the kernel inherits this environment
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    if params:  # papermill-style: a cell right after the one tagged "parameters"
        at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
        cell = nbformat.v4.new_code_cell(params)
        cell.metadata["tags"] = ["injected-parameters"]
        nb.cells.insert(at + 1, cell)
    if probe:
        nb.cells.append(nbformat.v4.new_code_cell(f"import json as _json\nprint({PROBE!r} + _json.dumps({probe}))"))
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    return nb


def _outputs(nb: Any) -> list[Any]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]


def _probe(nb: Any) -> dict[str, Any]:
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    line = next(ln for ln in text.splitlines() if ln.startswith(PROBE))
    return json.loads(line[len(PROBE):])


def _markdown(nb: Any) -> str:
    return "\n".join(o["data"]["text/markdown"] for o in _outputs(nb) if "text/markdown" in o.get("data", {}))


def _cell_outputs(nb: Any, marker: str) -> list[Any]:
    cell = next(c for c in nb.cells if c.cell_type == "code" and marker in c.source)
    return list(cell.outputs)


# --- as committed ---------------------------------------------------------------------------------

NAMES = ("tune_keep_turns.ipynb", "compaction_demo.ipynb")
MAX_CELL_LINES = 10
"""Code cells other than the parameters have at most this many lines besides imports and comments:
logic and wording live in the package."""


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_clean_parameters_first_and_cells_short(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code), f"{name}: clear its outputs (make notebooks-clean)"
    assert "parameters" in nb.cells[0].metadata.get("tags", []) and nb.cells[0].cell_type == "code", name
    assert sum("parameters" in c.metadata.get("tags", []) for c in code) == 1, name
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert "widgets" not in nb.metadata, f"{name}: saved widget state (make notebooks-clean)"

    def logic(src: str) -> list[str]:  # imports, blank lines and comments are not logic
        return [ln for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith(("from ", "import ", "#"))]

    long = {c.source.splitlines()[0]: len(logic(c.source)) for c in code[1:] if len(logic(c.source)) > MAX_CELL_LINES}
    assert not long, f"{name}: cells longer than {MAX_CELL_LINES} lines belong in the package: {long}"
    assert not list(NOTEBOOKS.glob("_build*.py"))  # no generator: the notebooks are the source


# --- executed -------------------------------------------------------------------------------------

def test_tune_keep_turns_runs_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _execute("tune_keep_turns.ipynb", monkeypatch, probe=(
        '{"rows": len(df), "transcripts": len(transcripts), "grid": GRID, '
        '"order": df[["transcript", *GRID]].astype(str).values.tolist(), "labels": sorted(set(df.summarizer)), '
        '"errors": int(df.error.notna().sum()), "settings": len(per_setting), "pick": rec.setting, '
        '"metrics": df[["keep_turns", "hysteresis_ratio", "forgotten", "cost_usd", "over_budget"]].values.tolist()}'))
    assert not [o for o in _outputs(nb) if o.output_type == "error"]
    p = _probe(nb)
    assert p["transcripts"] == 2
    assert p["grid"] == {"keep_turns": [1, 2, 3, 4, 6, 8, 10], "hysteresis_ratio": [0, 0.1, 0.3]}
    assert p["rows"] == 2 * 7 * 3 and p["settings"] == 7 * 3 and p["errors"] == 0
    assert p["order"][:4] == [["demo_support.json", "1", "0.0"], ["demo_support.json", "1", "0.1"],
                              ["demo_support.json", "1", "0.3"], ["demo_support.json", "2", "0.0"]]
    assert p["order"][21][0] == "planted_facts.json"  # two distinct conversations, not one in two formats
    assert p["labels"] == ["offline stand-in (not a model)"]
    # the sweep table is displayed, with every row
    table = [o for o in _cell_outputs(nb, "nb.run_sweep(") if "text/html" in o.get("data", {})]
    html = table[-1]["data"]["text/html"]
    assert table and html.split("<tbody>")[1].count("<tr>") == p["rows"]
    # a table that fits: a few columns, the conversation named (single-conversation files: the file alone)
    heads = re.findall(r"<th>([^<]*)</th>", html.split("<tbody>")[0])
    assert len([h for h in heads if h]) <= 10 and "conversation" in heads
    assert "demo_support.json#" not in html and "planted_facts.json</td>" in html
    # progress is an ordinary output updated in place, not a stream
    assert any(re.fullmatch(r"replayed (\d+) of \1 runs — done\.", o["data"]["text/markdown"])
               for o in _cell_outputs(nb, "nb.run_sweep(") if "text/markdown" in o.get("data", {}))
    figures = [o for o in _outputs(nb) if PLOTLY in o.get("data", {})]
    titles = [f["data"][PLOTLY]["layout"]["title"]["text"] for f in figures]
    assert titles == ["Tokens and cost against keep_turns", "What each setting forgets, by keep_turns",
                      "Summarizer calls against hysteresis_ratio", "Peak payload against the budget, by keep_turns"]
    md = _markdown(nb)
    assert "offline stand-in (not a model)" in md
    pick = ", ".join(f"{k} = {v}" for k, v in p["pick"].items())
    assert f"**Recommendation: {pick}**" in md
    assert "in-turn summarizer calls" in md  # the hysteresis sentence, computed from the sweep
    assert "**Fleet summary** over 2 conversation(s)" in md  # the fleet section, from fleet_table
    # The pick, worked out from the rule on the notebook's own rows (summed over both transcripts): among
    # settings never over budget, the cheapest of those that forget no more than the least-forgetting one.
    totals: dict[tuple[float, float], list[float]] = {}
    for keep, ratio, forgotten, cost, over in p["metrics"]:
        t = totals.setdefault((keep, ratio), [0, 0.0, 0])
        t[0] += forgotten
        t[1] += cost
        t[2] += over
    valid = {k: t for k, t in totals.items() if t[2] == 0}
    least = min(t[0] for t in valid.values())
    cheapest = min(t[1] for t in valid.values() if t[0] <= least)
    picked = totals[(p["pick"]["keep_turns"], p["pick"]["hysteresis_ratio"])]
    assert picked[2] == 0 and picked[0] == least and picked[1] == pytest.approx(cheapest)
    # progress goes to stdout (stderr renders as an error in notebooks)
    assert not [o for o in _outputs(nb) if o.output_type == "stream" and o.get("name") == "stderr"]
    _assert_figures_survive_html_export(nb, len(figures))


def test_tune_keep_turns_tunes_the_strategy_the_user_names(monkeypatch: pytest.MonkeyPatch) -> None:
    # sliding-window defines keep_turns, not hysteresis_ratio: the ratio leaves the grid, said in words
    params = ('STRATEGY = "sliding-window"\nTRANSCRIPTS = TRANSCRIPTS[:1]\nPROCESSES = 1\n'
              'GRID = {"keep_turns": [1, 2], "hysteresis_ratio": [0, 0.3]}\n')
    nb = _execute("tune_keep_turns.ipynb", monkeypatch, params=params, probe=(
        '{"strategies": sorted(set(df.strategy)), "rows": len(df), "grid": tuned.grid, "axes": [X, H], '
        '"ratio": "hysteresis_ratio" in df.columns, "pick": rec.setting}'))
    assert not [o for o in _outputs(nb) if o.output_type == "error"]
    p = _probe(nb)
    assert p["grid"] == {"context_manager": ["sliding-window"], "keep_turns": [1, 2]}
    assert p["strategies"] == ["sliding-window"] and p["rows"] == 2 and not p["ratio"]
    assert p["axes"] == ["keep_turns", "keep_turns"] and p["pick"]["context_manager"] == "sliding-window"
    md = _markdown(nb)
    assert "The grid tunes **sliding-window** (`STRATEGY`) in every run; its own parameters: `keep_turns`" in md
    assert "Left out of the grid, since sliding-window does not define them: `hysteresis_ratio` (defined by" in md
    # the cost panels are what the rows hold: with prompt caching (ranked on) and without, side by side
    first = next(o["data"][PLOTLY] for o in _outputs(nb) if PLOTLY in o.get("data", {}))
    assert [a["text"] for a in first["layout"]["annotations"]][1:] == [
        "cost with prompt caching (USD, agent + summarizer)", "cost without prompt caching (USD, agent + summarizer)"]


def test_compaction_demo_runs_offline_and_shows_every_mechanism(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _execute("compaction_demo.ipynb", monkeypatch, probe=(
        '{"actions": sorted({f.decision.action for f in rp.frames}), "commit_folds": len(story.commit_folds(rp)), '
        '"repairs": sum(len(f.repairs) for f in rp.frames), "strategies": table.strategy.tolist(), '
        '"label": rp.summarizer_label, "calls": len(rp.frames), "start": story.crossing_call(rp), '
        '"turn": turn, "by_ratio": by_ratio.values.tolist(), "ratios": RATIOS, '
        '"frames": [[f.turn, f.step, f.decision.action, f.decision.raw_tokens, f.budget.hint, '
        'f.bands.get("summary", 0), f.bands.get("working_memory", 0)] for f in rp.frames]}'))
    assert not [o for o in _outputs(nb) if o.output_type == "error"]
    p = _probe(nb)
    assert "reused" in p["actions"]  # the trigger is crossed; the previous summary is reused (Q23), not re-summarised
    assert "summarized" not in p["actions"]  # every commit folds (Q4): no summary is computed inside a call
    assert p["commit_folds"] > 0 and p["repairs"] > 0
    # every registered strategy, one row each, in the registry's order (the kernel runs this environment)
    assert p["strategies"] == [s.name for s in default_registry().specs("context_manager")]
    # The seeds' mechanism, shown happening: inside one turn the working memory grows, the trigger falls
    # under the unchanged history, and the summary is reused and sent (support-demo.yaml: turn 4, call 8).
    k = p["start"]
    before, at = p["frames"][k - 1], p["frames"][k]
    assert (k, p["turn"], before[0], at[0]) == (8, 4, 4, 4)
    assert before[3] == at[3] and before[3] <= before[4] and at[4] < at[3]  # same history; under, then over
    assert at[6] > before[6] and at[2] == "reused" and at[5] > 0  # working memory grew; summary reused and sent
    # The ratio's effect, measured on that turn: a larger ratio lowers the trigger, so the history crosses it
    # at an earlier step (budget ÷ (1 + ratio) at the turn's first call: 3 848 ÷ (1 + r), floored)
    rows = {r[0]: r for r in p["by_ratio"]}
    assert [rows[r][1] for r in p["ratios"]] == [3848 * 100 // (100 + round(100 * r)) for r in p["ratios"]]
    assert [rows[r][2] for r in p["ratios"]] == [2, 1, 1, 0, 0]
    assert [rows[r][3] for r in p["ratios"]] == [1, 2, 2, 3, 3]
    assert p["label"] == "offline stand-in (not a model)"
    figures = [o["data"][PLOTLY]["layout"].get("title", {}).get("text", "") for o in _outputs(nb)
               if PLOTLY in o.get("data", {})]
    assert figures[0] == "Payload per LLM call"
    assert len(figures) == 3  # the strategies side by side, and the tokens read from cache with the cache breaks
    assert figures[2] == "Tokens read from cache per call, and cache breaks"
    # the band bar at the first call over the trigger: the app's own HTML bar
    assert any("ci-band-bar" in "".join(o.get("data", {}).get("text/html", "")) for o in _outputs(nb))
    side = [o["data"][PLOTLY] for o in _outputs(nb) if PLOTLY in o.get("data", {})][1]
    # the strategies side by side in columns, one legend under each column
    n = len(p["strategies"])
    assert [a["text"] for a in side["layout"]["annotations"]][:n] == p["strategies"]
    assert {t.get("xaxis", "x") for t in side["data"]} == {"x", *(f"x{k}" for k in range(2, n + 1))}
    assert {t.get("legend", "legend") for t in side["data"]} == {"legend", *(f"legend{k}" for k in range(2, n + 1))}
    stack = [t["name"] for t in side["data"] if t.get("legend") == f"legend{p['strategies'].index('stack') + 1}"]
    assert "summary trigger" not in stack and "summary" not in stack  # the stack never summarises
    md = _markdown(nb)
    for sentence in ("The first fold happens at the commit of turn", "the manager reuses that summary",
                     "needed a repair", "sends the fewest input tokens", "In turn 4, from a ratio of 0 to 1",
                     "Forgotten references", "correction factor ×", "fitted line provider ≈",
                     "Do not apply the factor"):
        assert sentence in md
    prose = md + "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for code in ("unchanged-too-few-turns", "unchanged-under-budget", "ask_stripped", "`reused`", "next_tool_call",
                 "window-slid", "stack-capped"):
        assert code not in prose, code  # the engine's codes are said in words
    # the stepper: a live widget, and for a static export the call it starts on as HTML
    stepper = [o for o in _cell_outputs(nb, "nb.show(") if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(stepper) == 1 and f"call {p['start']} · turn" in stepper[0]["data"]["text/html"]
    _assert_figures_survive_html_export(nb, len(figures))


def _assert_figures_survive_html_export(nb: Any, n_figures: int) -> None:
    """nbconvert's HTML keeps every figure (drawn by embedded plotly.js, not only the mimetype a
    browser without Jupyter cannot read), and embeds plotly.js itself."""
    from nbconvert import HTMLExporter

    html, _ = HTMLExporter().from_notebook_node(nb)
    assert html.count("Plotly.newPlot(") >= n_figures > 0
    assert "plotly.js v" in html or "Plotly.register" in html or "window.Plotly" in html


def test_tune_keep_turns_with_a_real_model(monkeypatch: pytest.MonkeyPatch, llm: Any, tmp_path: Path) -> None:
    params = (f'MODEL = "openai/test-model"\nAPI_BASE = {llm.api_base!r}\nSUMMARY_CACHE = {str(tmp_path)!r}\n'
              'TRANSCRIPTS = TRANSCRIPTS[:1]\nGRID = {"keep_turns": [2, 3]}\nPROCESSES = 2\n')
    nb = _execute("tune_keep_turns.ipynb", monkeypatch, params=params,
                  probe='{"rows": len(df), "labels": sorted(set(df.summarizer)), '
                        '"calls": int(df.summarizer_calls.sum())}')
    p = _probe(nb)
    assert p == {"rows": 2, "labels": ["llm"], "calls": p["calls"]} and p["calls"] > 0
    assert llm.requests and all(r["model"] == "test-model" for r in llm.requests)
    md = _markdown(nb)
    assert "Summaries come from **openai/test-model** through litellm" in md
    assert "offline stand-in" not in md
    # a grid without hysteresis_ratio: no sentence about what the ratio did, read off keep_turns instead
    assert "`hysteresis_ratio` is not swept" in md and "From `keep_turns`" not in md


def test_tune_keep_turns_on_a_dask_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    from inspector.sweep import sweep

    samples = ROOT / "inspector" / "samples"
    files = [samples / "demo_support.json", samples / "planted_facts.json"]
    window = ["spec.models[0].context_window=6000"]
    params = (f'DASK = "local:1"\nGRID = {{"keep_turns": [2, 4], "hysteresis_ratio": [0, 0.3]}}\n'
              f'TRANSCRIPTS = {[str(f) for f in files]!r}\nSET = {window!r}')
    nb = _execute("tune_keep_turns.ipynb", monkeypatch, params=params,
                  probe='{"rows": _json.loads(df.to_json(orient="records")), "fleet": df.attrs.get("fleet")}')
    assert not [o for o in _outputs(nb) if o.output_type == "error"]
    p = _probe(nb)
    here = sweep(ROOT / "sample_manifests" / "small-window.yaml", files,
                 {"keep_turns": [2, 4], "hysteresis_ratio": [0, 0.3]}, overrides=window,
                 processes=1, progress=False)
    assert p["rows"] == json.loads(here.to_json(orient="records"))
    assert p["fleet"]["workers"] == 1 and p["fleet"]["runs"] == len(here)
    assert "**On Dask:**" in _markdown(nb)


def test_tune_keep_turns_labels_each_conversation_of_a_multi_conversation_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every conversation of a multi-conversation file is swept and named ``file#N`` — conversation 0
    included, also when it is the only one taken — while a one-conversation file keeps its name."""
    from cli_run import tau_bench_file

    tb = tau_bench_file(tmp_path / "tb3.json", 3)
    demo = ROOT / "inspector" / "samples" / "demo_support.json"
    for limit, expected in ((None, ["tb3.json#0", "tb3.json#1", "tb3.json#2", "demo_support.json"]),
                            (1, ["tb3.json#0", "demo_support.json"])):
        params = (f'TRANSCRIPTS = [{str(tb)!r}, {str(demo)!r}]\nGRID = {{"keep_turns": [2]}}\nPROCESSES = 1\n'
                  f'MAX_CONVERSATIONS = {limit!r}\n')
        nb = _execute("tune_keep_turns.ipynb", monkeypatch, params=params,
                      probe='{"labels": sweep_view(df, GRID, transcripts).conversation.tolist(), '
                            '"convs": df.conversation.tolist()}')
        assert not [o for o in _outputs(nb) if o.output_type == "error"]
        p = _probe(nb)
        assert p["labels"] == expected
        assert p["convs"] == [int(x.split("#")[1]) if "#" in x else 0 for x in expected]
        html = [o for o in _cell_outputs(nb, "nb.run_sweep(") if "text/html" in o.get("data", {})][-1]
        assert all(f"<td>{label}</td>" in html["data"]["text/html"] for label in expected)


# --- the stepper widget, driven without a browser -------------------------------------------------

@pytest.fixture(scope="module")
def demo_replay() -> Any:
    from inspector.manifest import load_manifest
    from inspector.replay import replay
    from inspector.transcripts import load_transcript

    loaded = load_manifest(ROOT / "sample_manifests" / "support-demo.yaml")  # the notebook's default
    return replay(loaded, load_transcript(ROOT / "inspector" / "samples" / "demo_support.json"), summarizer="stand-in")


def _payload_refs(widget_html: str) -> list[str]:
    """The transcript # column of the rendered payload table."""
    body = widget_html.split("<tbody>")[1]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row)[1] for row in body.split("<tr>")[1:]]


def test_stepper_shows_the_selected_calls_payload_and_what_is_not_sent(demo_replay: Any) -> None:
    pytest.importorskip("ipywidgets")
    from inspector.notebook import show

    rp = demo_replay
    w = show(rp)
    assert w.step.value == 0 and w.step.max == len(rp.frames) - 1
    seen = set()
    for k in (0, len(rp.frames) // 2, len(rp.frames) - 1):
        w.step.value = k
        f = rp.frames[k]
        expected = ["synthesised" if r is None else str(r) for r in f.refs]  # straight from the frame
        assert _payload_refs(w.payload.value) == expected
        assert f"call {k} · turn {f.turn} · step {f.step}" in w.heading.value
        assert f"{f.payload_tokens:,} tokens sent" in w.bar.value
        not_sent = set(range(min(f.at, len(rp.messages)))) - {r for r in f.refs if r is not None}
        if not_sent:
            rows = w.not_sent.value.split("<tbody>")[1].split("</tbody>")[0]
            shown = {int(x) for x in re.findall(r"<tr><td[^>]*>(\d+)</td>", rows)}
            assert shown == not_sent
        seen.add(w.payload.value)
    assert len(seen) == 3  # each call renders its own payload


def test_stepper_buttons_and_jump_move_to_the_right_call(demo_replay: Any) -> None:
    pytest.importorskip("ipywidgets")
    from inspector.notebook import show

    rp = demo_replay
    w = show(rp, call=3)
    w.next_button.click()
    assert w.step.value == 4
    w.prev_button.click()
    w.prev_button.click()
    assert w.step.value == 2
    w.go(-5)
    assert w.step.value == 0  # clamped
    repairs = [k for k, f in enumerate(rp.frames) if f.repairs]
    assert repairs, "the demo has an interrupted tool round"
    w.event.value = "pairing repair"
    w.jump_button.click()
    assert w.step.value == repairs[0]
    assert "pairing repair" in w.heading.value
    w.go(len(rp.frames) - 1)
    assert w.jump("pairing repair") is None and w.step.value == len(rp.frames) - 1
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and w.payload.value in bundle["text/html"]


# --- the tuner's figures: lines that do not hide each other, axes from zero, trims shown ----------

def _agg(rows: list[tuple[int, float, int, int]]) -> Any:
    """A by_setting table: (keep_turns, hysteresis_ratio, forgotten, trimmed) per setting; two ratios
    with identical numbers make lines that would lie exactly on top of each other."""
    import pandas as pd

    return pd.DataFrame([{"keep_turns": k, "hysteresis_ratio": r, "runs": 1, "errors": 0, "tokens_sent": 1000 * k,
                          "peak_payload": 900 + k, "input_budget": 1000, "over_budget": 0, "min_headroom": 100 - k,
                          "trimmed": t, "messages_summarised": 2, "messages_dropped": 0, "forgotten": f,
                          "forgotten_calls": f, "summarizer_in_turn": 1, "summarizer_commit": 3,
                          "cost_usd": 0.001 * k} for k, r, f, t in rows])


def test_sweep_lines_with_equal_values_stay_apart_on_true_ticks_from_zero() -> None:
    from inspector.report.sweep_figures import forgetting, peak_vs_budget, summarizer_calls, tokens_and_cost

    agg = _agg([(k, r, 3 - k, 2 if k == 1 else 0) for k in (1, 2) for r in (0.0, 0.3)])
    for fig in (tokens_and_cost(agg, "keep_turns"), forgetting(agg, "keep_turns"), peak_vs_budget(agg, "keep_turns")):
        lines = {t.name: t for t in fig.data if t.name.startswith("hysteresis_ratio=")}
        a, b = lines["hysteresis_ratio=0.0"], lines["hysteresis_ratio=0.3"]
        assert list(a.y) == list(b.y)  # the same numbers ...
        assert all(xa != xb for xa, xb in zip(a.x, b.x, strict=True))  # ... drawn side by side, not on top
        assert all(abs(x - k) < 0.5 for x, k in zip(a.x, [1, 2], strict=True))  # near their own setting
        assert [int(v) for v in a.text] == [1, 2]  # hover names the true value
        assert list(fig.layout.xaxis.tickvals) == [1.0, 2.0]
        assert fig.layout.yaxis.rangemode == "tozero" or fig.layout.yaxis.range[0] == 0
    counts = forgetting(agg, "keep_turns")
    assert counts.layout.yaxis.dtick >= 1 and counts.layout.yaxis.tickformat == ",d"  # no "1.5 references"
    assert summarizer_calls(agg, "hysteresis_ratio").layout.yaxis.dtick >= 1
    trims = [t for t in peak_vs_budget(agg, "keep_turns").data if t.name == "trimmer cut messages"]
    assert sorted(round(x) for t in trims for x in t.x) == [1, 1]  # only keep_turns 1 trimmed, once per line
    assert [t.showlegend for t in trims] == [None, False] or [t.showlegend for t in trims] == [True, False]


# --- the demo's sentences, against the replay's own records ----------------------------------------

def test_walkthrough_sentences_name_the_calls_and_commits_the_replay_recorded(demo_replay: Any) -> None:
    from inspector.report import walkthrough as story

    rp = demo_replay
    folds = [c for c in rp.commits if c.action in ("summarized", "reused")]
    assert folds and story.commit_folds(rp) == folds
    first = folds[0]
    text = story.commit_fold(rp)
    assert f"at the commit of turn {first.turn}: {first.folded_turns} turn(s)" in text
    assert f"{len(folds)} commit-time summaries in all" in text
    after = next(k for k, f in enumerate(rp.frames) if f.turn > first.turn)
    assert f"(call {after}) carries a summary band of {rp.frames[after].bands['summary']:,} tokens" in text
    over = [k for k, f in enumerate(rp.frames) if f.decision.action in ("summarized", "reused")]
    assert story.trigger_call(rp) == (over[0] if over else None)
    # the crossing inside a turn: the call before, same turn, under the trigger; this one over it
    crossing = [k for k in over if k and rp.frames[k - 1].turn == rp.frames[k].turn
                and rp.frames[k - 1].decision.action == "unchanged-under-budget"]
    assert story.crossing_call(rp) == crossing[0] == 8
    f = rp.frames[8]
    assert story.trigger(rp).startswith(f"**Turn {f.turn}** is a tool loop. At call 7 (step 0)")
    assert f"the trigger falls to {f.budget.hint:,} and the same history is over it" in story.trigger(rp)
    assert "at call 8, sent (236 tokens); at call 9, computed earlier but trimmed for budget" in story.trigger(rp)
    repaired = [k for k, f in enumerate(rp.frames) if f.repairs]
    assert story.repair_call(rp) == repaired[0]
    assert f"{sum(len(rp.frames[k].repairs) for k in repaired)} time(s), up to call {repaired[-1]}" in story.repair(rp)
    assert story.commits_table(rp)["after turn"].tolist() == [c.turn for c in rp.commits]
