"""The band bar and the call strip the app draws as HTML (no plotly figure on a step).

Bug classes: a segment whose width is not its share of the bar, a legend in another order than the
bar, a window label drawn over a segment, a strip whose marker is not under the current call, and
transcript-derived text interpreted as HTML.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.app.timeline import call_strip_html
from inspector.report.figures import BAND_COLORS, BAND_LABELS, band_bar_html

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo() -> Any:
    from inspector.manifest import load_manifest
    from inspector.replay import replay
    from inspector.transcripts import load_transcript, sample_path

    return replay(load_manifest(ROOT / "sample_manifests" / "small-window.yaml"), load_transcript(sample_path()),
                  summarizer="stand-in")


def segments(bar: str) -> list[tuple[str, float, str]]:
    """(band, width %, hover title) of every segment, left to right."""
    return [(band, float(width), html.unescape(title)) for band, title, width in
            re.findall(r"<div class='ci-seg' data-band='([^']+)' title=\"([^\"]*)\" style='width:([\d.]+)%", bar)]


def test_every_segment_is_its_share_of_the_window_with_a_title_and_the_legend_follows_the_bar(demo: Any) -> None:
    for k, f in enumerate(demo.frames):
        bar = band_bar_html(demo, k)
        b = f.budget
        # Independent expectation: the frame's own bands, then reserve, margin and the headroom when
        # there is some; over budget no extra band (the overflow is the part past the window line).
        expected = {name: f.bands.get(name, 0) for name in
                    ("system", "summary", "history", "user", "working_memory", "tool_schemas")}
        expected.update(reserve=b.reserve, margin=b.margin)
        if f.headroom >= 0:
            expected["headroom"] = f.headroom
        expected = {name: t for name, t in expected.items() if t > 0}
        segs = segments(bar)
        assert [s[0] for s in segs] == list(expected)
        scale = max(b.window, sum(expected.values()))
        for band, width, title in segs:
            assert width == pytest.approx(100 * expected[band] / scale, abs=1e-3)
            assert title.startswith(f"{BAND_LABELS.get(band, band)}: {expected[band]:,} tokens")
        if f.headroom < 0:  # the shaded overflow starts at the window line and runs to the bar's end
            left, width = map(float, re.findall(r"class='ci-over-part'[^>]*style='left:([\d.]+)%;width:([\d.]+)%'",
                                                bar)[0])
            assert left == pytest.approx(100 * b.window / scale, abs=1e-3) and left + width == pytest.approx(100)
            assert sum(expected.values()) - b.window == -f.headroom  # the segments past the line are the overflow
        else:
            assert "class='ci-over-part'" not in bar
        legend = re.findall(r"<span class='ci-key'><i style='background:(#[0-9A-Fa-f]{6})'></i>([^<]*)</span>", bar)
        assert legend == [(BAND_COLORS[n], html.escape(BAND_LABELS.get(n, n))) for n in expected]
        assert f"{f.payload_tokens:,} tokens sent" in bar
        assert ("over budget by" in bar) == (f.headroom < 0)
        # The window label sits in its own row above the bar, never inside it.
        labels, body = bar.split("class='ci-mark-labels'", 1)[1].split("class='ci-bar'", 1)
        assert f"window {b.window:,}" in labels and "window " not in body.split("class='ci-legend'")[0]


@given(n=st.integers(min_value=1, max_value=5000), data=st.data())
def test_the_strip_marks_the_call_at_its_place_on_the_unzoomed_call_axis(n: int, data: Any) -> None:
    call = data.draw(st.integers(min_value=0, max_value=n - 1))
    strip = call_strip_html(n, call)
    pos = float(strip.split("class='ci-cursor'", 1)[1].split("left:", 1)[1].split("%", 1)[0])
    # Plotly's axis over [-0.6, n - 0.4]: call k's centre is at (k + 0.6) / (n + 0.2) of the plot width.
    assert pos == pytest.approx(100 * (call + 0.6) / (n + 0.2), abs=1e-3)
    assert f"call {call:,} of {n:,}" in strip and f"data-call='{call}'" in strip
    if call + 1 < n:
        assert pos < float(call_strip_html(n, call + 1).split("class='ci-cursor'", 1)[1].split("left:", 1)[1]
                           .split("%", 1)[0])


@pytest.mark.parametrize("turns", [6, 450])  # bars and the long timeline's areas, both with invisible click markers
def test_a_click_on_the_timeline_dims_nothing_and_shows_no_hidden_marker(turns: int) -> None:
    """The timeline is drawn once per replay: a selection's dimming would outlast the step away from it."""
    from inspector.manifest import settings_from_dict
    from inspector.replay import replay
    from inspector.report.figures import timeline
    from inspector.transcripts.model import Transcript

    msgs: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    for t in range(turns):
        msgs += [{"role": "user", "content": f"q{t}"}, {"role": "assistant", "content": f"a{t}"}]
    tr = Transcript(format="synthetic", path=None, messages=msgs, origins=[str(i) for i in range(len(msgs))],
                    tools=None, model="gpt-4o", usage={}, irregularities=[])
    rp = replay(settings_from_dict({"kind": "Agent", "spec": {}}), tr, counter="estimate")
    fig = timeline(rp).to_dict()
    for trace in fig["data"]:
        drawn = trace.get("marker", {}).get("opacity", 1)
        assert trace["selected"]["marker"]["opacity"] == drawn
        assert trace["unselected"]["marker"]["opacity"] == drawn
    # Only the last budget line carries the (invisible) click markers, over bars as over areas.
    hidden = [t["name"] for t in fig["data"] if t.get("marker", {}).get("opacity") == 0]
    lines = [t["name"] for t in fig["data"] if t.get("mode", "").startswith("lines")]
    assert hidden == lines[-1:]



def _chat(turns: int, window: int) -> Any:
    from inspector.manifest import settings_from_dict
    from inspector.replay import replay
    from inspector.transcripts.model import Transcript

    msgs: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    for t in range(turns):
        msgs += [{"role": "user", "content": f"question {t} " * 20}, {"role": "assistant", "content": f"a{t} " * 30}]
    tr = Transcript(format="synthetic", path=None, messages=msgs, origins=[str(i) for i in range(len(msgs))],
                    tools=None, model="gpt-4o", usage={}, irregularities=[])
    spec = {"models": [{"model": "gpt-4o", "context_window": window}]}
    return replay(settings_from_dict({"kind": "Agent", "spec": spec}), tr, counter="estimate")


def test_a_million_token_window_leaves_the_budget_line_off_the_scale_and_says_where_it_is() -> None:
    """Payloads of a few thousand tokens under a ~1M budget were flat lines at the bottom of the chart."""
    from inspector.report.figures import timeline
    from inspector.vocabulary import TIMELINE_WORDS

    rp = _chat(12, 1_000_000)
    tallest = max(f.payload_tokens for f in rp.frames)
    budgets = {f.input_budget for f in rp.frames}
    assert min(budgets) > 100 * tallest  # the shape of the bug
    fig = timeline(rp).to_dict()
    lo, hi = fig["layout"]["yaxis"]["range"]
    assert lo == 0 and tallest < hi < 2 * tallest  # the bars fill the chart
    notes = [a["text"] for a in fig["layout"].get("annotations", [])]
    assert len(notes) == 1 and TIMELINE_WORDS["off_scale"] in notes[0]
    words = f"{TIMELINE_WORDS['input_budget']} {min(budgets):,}" + (
        f"–{max(budgets):,}" if len(budgets) > 1 else "")
    assert words in notes[0]


def test_a_budget_line_near_the_payloads_stays_on_the_scale_with_no_note() -> None:
    from inspector.report.figures import OFF_SCALE, timeline

    rp = _chat(12, 4_000)
    tallest = max(f.payload_tokens for f in rp.frames)
    assert max(f.input_budget for f in rp.frames) <= OFF_SCALE * tallest
    fig = timeline(rp).to_dict()
    assert not fig["layout"].get("annotations")
    assert "range" not in fig["layout"]["yaxis"]  # plotly's own range: it reaches the budget line


def test_side_by_side_timelines_share_one_scale_and_each_names_the_lines_above_it() -> None:
    from inspector.app.timeline import compare_timelines

    small, huge = _chat(12, 4_000), _chat(12, 1_000_000)
    figs = [f.to_dict() for f in compare_timelines({"small": small, "huge": huge})]
    ranges = {tuple(f["layout"]["yaxis"]["range"]) for f in figs}
    assert len(ranges) == 1
    top = ranges.pop()[1]
    assert top >= max(f.input_budget for f in small.frames)  # the small window's line is on the scale
    assert top >= max(f.payload_tokens for rp in (small, huge) for f in rp.frames)
    assert not figs[0]["layout"].get("annotations")
    assert "input budget" in figs[1]["layout"]["annotations"][0]["text"]
