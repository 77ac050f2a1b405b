"""Prompt caching on the app's and notebooks' faces (inspector.report.cache_view): the band bar's
cache strip and words, the timeline's cache line and break markers, the totals with caching, and
Side by side's rows, with numbers worked out by hand from the OpenAI rule (prompts of 1 024+
tokens, hits in 128-token steps; gpt-4o: input $2.50, cache read $1.25 per million tokens)."""

from __future__ import annotations

import html
import json
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from streamlit.testing.v1 import AppTest

from inspector.app.words import plain_md
from inspector.replay import Replay, replay
from inspector.report import cache_view
from inspector.report.figures import band_bar_html, timeline
from inspector.transcripts import load_transcript, sample_path

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "inspector" / "samples" / "manifests"
INPUT, READ = 2.5e-06, 1.25e-06  # gpt-4o in litellm's map
FILLER = 1283  # " apple" × 1283 makes the system row 1 290 tokens and call 0 exactly 1 300 (checked below)


def _small(tmp_path: Path, manifest: str, turns: list[tuple[str, str]], **params: Any) -> Replay:
    doc = yaml.safe_load((MANIFESTS / f"{manifest}.yaml").read_text(encoding="utf-8"))
    doc["spec"]["context_manager"]["params"].pop("max_messages", None)
    doc["spec"]["context_manager"]["params"].update(params)
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful." + " apple" * FILLER}]
    for user, answer in turns:
        msgs += [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"messages": msgs}), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return replay(doc, load_transcript(path))


TWO_TURNS = [("Where is order A-1?", "It is in transit."), ("And order B-2?", "Delivered.")]


def test_a_1300_token_shared_prefix_shows_1280_read_from_cache_on_the_band_bar(tmp_path: Path) -> None:
    rp = _small(tmp_path, "stack", TWO_TURNS)
    assert [f.payload_tokens for f in rp.frames] == [1300, 1317]  # the example's premise
    c = cache_view.cache_account(rp).calls[1].cache
    assert (c.cached, c.written, c.uncached) == (1280, 0, 37)  # 1 300 shared → 10 whole steps of 128
    text = html.unescape(band_bar_html(rp, 1))
    assert "1,280 read from cache · 0 written to cache · 37 sent uncached" in text
    with_cache, without = 1280 * READ + 37 * INPUT, 1317 * INPUT
    assert f"input cost ${with_cache:.5f} with caching, ${without:.5f} without" in text
    assert "$0.00169 with caching, $0.00329 without" in text
    assert "OpenAI automatic prefix caching (the model's provider: litellm entry gpt-4o" in text
    assert "data-cache='cached'" in text and "data-cache='written'" not in text
    # The first call has nothing stored yet: all of it is sent uncached, and the strip says so.
    first = html.unescape(band_bar_html(rp, 0))
    assert "0 read from cache · 0 written to cache · 1,300 sent uncached" in first
    assert "data-cache='cached'" not in first and "cache break" not in first


def test_a_window_that_slides_past_a_128_token_step_breaks_the_cache_at_that_call_only(tmp_path: Path) -> None:
    """keep_turns 1 over three turns: call 2 drops turn 1 right after the 1 290-token system row.
    Call 1 stored its whole prompt (past 1 408 tokens), so a prefix longer than the 1 280 the system
    row still serves was alive: a break, at call 2 and nowhere else."""
    long_first = ("Where is order A-1?" + " pear" * 300, "It is in transit.")
    rp = _small(tmp_path, "sliding-window", [long_first, *TWO_TURNS[1:], ("Thanks.", "Bye.")], keep_turns=1)
    calls = cache_view.cache_account(rp).calls
    assert rp.frames[2].refs[:2] == [0, 3]  # the window slid: turn 1 is gone
    assert [c.frame for c in calls if c.cache.broke_at is not None] == [2] == cache_view.break_calls(rp)
    c = calls[2]
    assert c.cache.broke_at == 2 and c.cache.cached == 1280
    assert c.cache.lost == calls[1].cache.input - calls[1].cache.input % 128 - 1280
    assert c.resent > 0 and c.break_cost_usd == pytest.approx(c.resent * (INPUT - READ))
    words = html.unescape(band_bar_html(rp, 2))
    assert f"{c.resent:,} tokens the previous call sent were sent again without the cache" in words
    assert "cache break" not in html.unescape(band_bar_html(rp, 1))


def _support() -> Replay:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return replay(ROOT / "sample_manifests" / "support-demo.yaml", load_transcript(sample_path("demo_support.json")))


def _trace(fig: Any, name: str) -> Any:
    found = [t for t in fig.data if t.name == name]
    return found[0] if found else None


def test_the_timeline_marks_a_cache_break_exactly_at_the_calls_the_account_reports() -> None:
    rp = _support()
    calls = cache_view.cache_account(rp).calls
    breaks = [c.frame for c in calls if c.cache.broke_at is not None]
    assert 7 in breaks  # the fold when turn 3 was committed changes every row after the system text
    fig = timeline(rp)
    marker = _trace(fig, cache_view.BREAK_WORDS)
    assert list(marker.x) == breaks
    for x, text in zip(marker.x, marker.text, strict=True):
        assert text == f"{calls[x].resent:,} tokens re-sent, ${calls[x].break_cost_usd:,.5f} more"
    line = _trace(fig, cache_view.CACHED_LINE_WORDS)
    assert list(line.y) == [c.cache.cached for c in calls]


def test_a_replay_without_breaks_gets_no_break_marker(tmp_path: Path) -> None:
    rp = _small(tmp_path, "stack", TWO_TURNS)
    fig = timeline(rp)
    assert _trace(fig, cache_view.BREAK_WORDS) is None
    assert list(_trace(fig, cache_view.CACHED_LINE_WORDS).y) == [0, 1280]


def test_the_totals_with_caching_add_the_summaries_and_say_with_caching(tmp_path: Path) -> None:
    rp = _small(tmp_path, "stack", TWO_TURNS)
    t = cache_view.cache_totals(rp)
    assert t["cost_with_caching_usd"] == pytest.approx(1300 * INPUT + 1280 * READ + 37 * INPUT)
    assert t["cost_without_caching_usd"] == pytest.approx((1300 + 1317) * INPUT)
    assert t["cache_hit_share"] == round(1280 / 2617, 4)
    words = cache_view.totals_words(rp)
    assert words.startswith(f"Cost with caching ${t['cost_with_caching_usd']:,.5f} "
                            f"(without caching ${t['cost_without_caching_usd']:,.5f})")
    assert "49% of input tokens read from cache · 0 cache break(s)" in words


def test_the_compaction_demos_costliest_break_is_the_commit_fold_in_words() -> None:
    story = cache_view.break_story(_support())
    assert "cache break** is at call 7 (turn 4, step 0; summary computed when turn 3 was committed)" in story
    assert "2,636 tokens the previous call had sent were sent again uncached, $0.00330 more" in story


# --- the app ------------------------------------------------------------------------------------------------

def _app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_app_says_the_totals_with_caching_and_the_band_bar_its_cache() -> None:
    at = _app()
    assert any("Cost with caching" in c.value and "read from cache" in c.value for c in at.caption)
    bar = html.unescape(next(h.proto.body for h in at.html if "ci-band-bar" in h.proto.body))
    assert "read from cache" in bar and "sent uncached" in bar and "with caching" in bar


def test_side_by_side_shows_the_cost_with_caching_for_each_strategy() -> None:
    at = _app()
    at.segmented_control(key="view").set_value("compare").run()
    at.multiselect(key="cmp_strategies").set_value(["summarising", "sliding-window", "stack"]).run()
    assert not at.exception
    shown = next(d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame)
                 and "cost with caching $" in map(str, d.value.index))
    assert list(shown.columns) == ["summarising", "sliding-window", "stack"]
    for row in ("cost with caching $", "cost without caching $", "cache-hit share", "cache breaks"):
        assert all(str(v) not in ("", "—") for v in shown.loc[row]), row
    assert all(str(v).endswith("%") for v in shown.loc["cache-hit share"])
    assert int(shown.loc["cache breaks", "stack"]) <= int(shown.loc["cache breaks", "sliding-window"])


def test_the_stepper_jumps_to_the_next_cache_break() -> None:
    at = _app()
    breaks = cache_view.break_calls(at.session_state["_stepped_replay"])
    assert breaks[:2] == [7, 9]
    at.selectbox(key="jump_kind").select("cache_break").run()
    assert any(o.startswith(f"cache break ({len(breaks)})") for o in at.selectbox(key="jump_kind").options)
    at.button(key="jump_next").click().run()
    assert at.session_state["call"] == 7
    at.button(key="jump_next").click().run()
    assert at.session_state["call"] == 9


def test_the_fleet_sums_the_cost_with_caching_and_its_share_over_conversations(tmp_path: Path) -> None:
    from inspector.app.side_by_side import FleetInput, fleet_runs, fleet_summary
    from inspector.app.words import worded

    one = _small(tmp_path, "stack", TWO_TURNS)
    (tmp_path / "b").mkdir()
    three = _small(tmp_path / "b", "stack", [*TWO_TURNS, ("Thanks.", "Bye.")])
    runs = fleet_runs([(FleetInput("a.json", 0, one.transcript), {"stack": one}),
                       (FleetInput("b.json", 0, three.transcript), {"stack": three})])
    assert list(runs["cached_tokens"]) == [1280, 1280 + cache_view.cache_account(three).calls[2].cache.cached]
    summary = fleet_summary(runs).set_index("strategy").loc["stack"]
    costs = [cache_view.cache_totals(rp) for rp in (one, three)]
    assert summary["cost_with_caching_usd"] == pytest.approx(costs[0]["cost_with_caching_usd"]
                                                             + costs[1]["cost_with_caching_usd"])
    assert summary["cost_without_caching_usd"] == pytest.approx(costs[0]["cost_without_caching_usd"]
                                                                + costs[1]["cost_without_caching_usd"])
    cached, seen = costs[0]["cached"] + costs[1]["cached"], costs[0]["input"] + costs[1]["input"]
    assert summary["cache_hit_share"] == round(cached / seen, 4) and summary["cache_breaks"] == 0
    assert "cost with caching $" in worded(fleet_summary(runs)).columns


def test_no_cache_rule_app_header_and_call_state_no_hits_or_breaks_and_the_cost_once() -> None:
    """The manifest says ``prompt_cache: none``: the header says the cost once and that no prompt
    caching applies, and the band bar's line and the call's cost figure say the same, with no share
    read from cache, no cache break and no "with caching / without caching" pair."""
    at = _app()
    at.segmented_control(key="view").set_value("manifest").run()
    good = str(at.text_area(key="manifest_yaml").value)
    edited = good.replace("      model: gpt-4o\n", "      model: gpt-4o\n      prompt_cache: none\n")
    assert edited != good
    at.text_area(key="manifest_yaml").input(edited).run()
    at.segmented_control(key="view").set_value("call").run()
    assert not at.exception, [e.value for e in at.exception]
    rp = _support()
    cost = cache_view.cache_totals(rp)["cost_without_caching_usd"]  # the same replay's cost, nothing cached
    header = next(c.value for c in at.caption if "no prompt caching" in c.value)
    assert header == plain_md(f"Cost ${cost:,.5f} · no prompt caching (chosen by name in the settings)")
    assert not any("read from cache" in c.value or "cache break" in c.value for c in at.caption)
    assert any("hysteresis ceiling; markers: " in c.value for c in at.caption)  # the timeline's key: no cache line
    bar = html.unescape(next(h.proto.body for h in at.html if "ci-band-bar" in h.proto.body))
    assert "No prompt caching (chosen by name in the settings): " in bar
    assert "read from cache" not in bar and "with caching" not in bar and "cache break" not in bar
    figure = next(m for m in at.metric if m.label.startswith("Input cost"))
    assert figure.label == "Input cost (USD)"


def _no_cache_rule_app(at: AppTest | None = None) -> AppTest:
    """The app (``at``, else a new one) with ``prompt_cache: none`` added to the manifest editor's model row."""
    at = at or _app()
    at.segmented_control(key="view").set_value("manifest").run()
    good = str(at.text_area(key="manifest_yaml").value)
    edited = good.replace("      model: gpt-4o\n", "      model: gpt-4o\n      prompt_cache: none\n")
    assert edited != good
    at.text_area(key="manifest_yaml").input(edited).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _jump_options(at: AppTest) -> list[str]:
    return [str(o) for o in at.selectbox(key="jump_kind").options]


def test_no_cache_rule_stepper_offers_no_cache_break_jump() -> None:
    """Under a caching rule (the demo's gpt-4o: OpenAI's) the stepper offers to jump to a cache break;
    under ``prompt_cache: none`` no call can break a cache, so it does not."""
    at = _app()
    assert any(o.startswith("cache break (") for o in _jump_options(at))
    at.selectbox(key="jump_kind").select("cache_break").run()  # chosen, then the rule goes away
    _no_cache_rule_app(at).segmented_control(key="view").set_value("call").run()
    assert not at.exception, [e.value for e in at.exception]
    options = _jump_options(at)
    assert options and not any("cache break" in o for o in options), options
    assert at.session_state["jump_kind"] != "cache_break"


def test_no_cache_rule_side_by_side_and_fleet_claim_no_hits_or_breaks() -> None:
    """``prompt_cache: none``: Side by side's totals have one "prompt caching: none" row instead of the
    cost with caching, cache-hit share and breaks, and the caption says no prompt caching applies and
    why; the fleet leaves the cache's columns out and says the same."""
    at = _no_cache_rule_app()
    at.segmented_control(key="view").set_value("compare").run()
    at.multiselect(key="cmp_strategies").set_value(["stack", "sliding-window"]).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = next(d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame)
                 and "prompt caching" in map(str, d.value.index))
    assert list(shown.loc["prompt caching"]) == ["none", "none"]
    assert not {"cost with caching $", "cache-hit share", "cache breaks", "cost of the cache breaks $"} & set(shown.index)
    captions = [c.value for c in at.caption]
    assert plain_md("Totals per strategy. No prompt caching applies (chosen by name in the settings): every input "
                    "token is paid at the input price, so nothing is read from a cache and no call breaks one.") \
        in captions
    assert not any("Cost with caching counts" in c for c in captions)
    # the fleet: the loaded conversation and one more, under the two strategies
    at.segmented_control(key="view").set_value("fleet").run()
    extra = json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]})
    at.file_uploader(key="fleet_uploads").set_value([("one.json", extra.encode(), "application/json")]).run()
    at.button(key="fleet_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    summary = next(d.value for d in at.dataframe if isinstance(d.value, pd.DataFrame)
                   and "strategy" in d.value.columns and "cache rule" in d.value.columns)
    assert list(summary["strategy"]) == ["stack", "sliding-window"] and set(summary["cache rule"]) == {"none"}
    assert not {"cost with caching $", "cache-hit share", "cache breaks", "read from cache (tokens)"} & \
        set(summary.columns)
    assert any(c.value.startswith(plain_md("No prompt caching applies (chosen by name in the settings)"))
               for c in at.caption)
