"""The compaction demo shows a cache break and its cost: in words (the call, what changed, the tokens
re-sent and the money), on the band bar of that call, on a timeline with a marker at every cache
break, and per strategy with caching (issue acceptance: "the compaction demo shows a cache break and
its cost"). Executes the notebook offline, as tests/notebooks/test_notebooks.py does."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
PLOTLY = "application/vnd.plotly.v1+json"


def _run(monkeypatch: pytest.MonkeyPatch) -> Any:
    for var in ("MODEL", "API_BASE", "API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    nb = nbformat.read(ROOT / "notebooks" / "compaction_demo.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    return nb


def test_the_compaction_demo_shows_a_cache_break_and_its_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _run(monkeypatch)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "cache_view.break_story" in c.source)
    assert not [o for o in cell.outputs if o.output_type == "error"]
    md = "\n".join(o["data"]["text/markdown"] for o in cell.outputs if "text/markdown" in o.get("data", {}))
    # support-demo.yaml folds turns 1-2 into a summary when turn 3 is committed: call 7 (turn 4) keeps
    # only the tool schemas and the system text of the cached prefix.
    assert "The costliest **cache break** is at call 7 (turn 4, step 0; summary computed when turn 3 was committed)" in md
    assert "2,636 tokens the previous call had sent were sent again uncached, $0.00330 more than reading them" in md
    assert "Cost with caching $" in md and "(without caching $" in md and "cache break(s) cost $" in md
    bars = [html.unescape("".join(o["data"]["text/html"])) for o in cell.outputs if "text/html" in o.get("data", {})
            and "ci-band-bar" in "".join(o["data"]["text/html"])]
    assert len(bars) == 1 and "1,536 read from cache" in bars[0] and "Cache break (summary computed when turn 3 was committed):" in bars[0]
    fig = next(o["data"][PLOTLY] for o in cell.outputs if PLOTLY in o.get("data", {}))
    marks = [t for t in fig["data"] if t.get("name", "").startswith("cache break")]
    assert len(marks) == 1 and 7 in marks[0]["x"] and 8 not in marks[0]["x"]
    table = "".join("".join(o["data"].get("text/html", "")) for o in cell.outputs if "text/html" in o.get("data", {}))
    for words in ("cost with caching $", "cost without caching $", "cache-hit share", "cache breaks"):
        assert words in table
