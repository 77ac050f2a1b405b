"""With no prompt-cache rule in force (rule ``none``: the model's provider caches nothing, or the
settings say so), every face says plainly that no prompt caching applies and why, and the input
cost once: the app's totals line and call line (inspector.report.cache_view), the notebook's
paragraph (cache_view.break_story) and the command line's table line (inspector.prompt_cache
.cache_totals_words, through the real CLI in a subprocess). No share read from cache, no cache
breaks, no "with caching / without caching" pair. Under a caching rule (gpt-4o: OpenAI's) the old
fields stay.

The transcript is tests/builders.two_calls (call 0: 1 300 tokens, call 1: 1 319, no tools); the
costs are worked out from the payload tokens × the model's input price in litellm's map."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import yaml

from inspector.engine.limits import litellm_model_entry
from inspector.prompt_cache import cache_totals_words
from inspector.replay import Replay, replay
from inspector.report import cache_view
from inspector.transcripts import load_transcript
from tests.builders import two_calls

ROOT = Path(__file__).resolve().parents[2]
MISTRAL = "mistral/mistral-large-latest"  # provider mistral: no prompt-cache rule
GPT4O_INPUT = 2.5e-06
CACHE_FIELDS = ("read from cache", "cache break", "with caching", "without caching", "written to cache")


def _manifest(model: str, prompt_cache: str | None = None) -> dict:
    row = {"id": "main", "model": model, **({"prompt_cache": prompt_cache} if prompt_cache else {})}
    return {"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "no-cache"}, "spec": {"models": [row]}}


def _replay(tmp_path: Path, model: str, prompt_cache: str | None = None) -> Replay:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return replay(_manifest(model, prompt_cache), load_transcript(two_calls(tmp_path / "two.json")))


def _input_price(model: str) -> float:
    found = litellm_model_entry(model)
    assert found is not None, model
    return float(found[1]["input_cost_per_token"])


def _no_cache_fields(text: str) -> None:
    for words in CACHE_FIELDS:
        assert words not in text, (words, text)


def test_no_cache_rule_totals_line_states_no_hits_or_breaks_and_the_cost_once(tmp_path: Path) -> None:
    rp = _replay(tmp_path, MISTRAL)
    acct = cache_view.cache_account(rp)
    assert acct.rule.name == "none"  # the provider's rule: mistral caches nothing
    t = cache_view.cache_totals(rp)
    assert t["cost_with_caching_usd"] == t["cost_without_caching_usd"]
    cost = sum(f.payload_tokens for f in rp.frames) * _input_price(MISTRAL)
    assert t["cost_without_caching_usd"] == pytest.approx(cost)
    words = cache_view.totals_words(rp)
    assert words == (f"Cost ${cost:,.5f} · no prompt caching (the model's provider: litellm entry {MISTRAL}: "
                     "provider mistral)")
    _no_cache_fields(words)


def test_no_cache_rule_call_line_states_the_input_tokens_and_cost_once(tmp_path: Path) -> None:
    rp = _replay(tmp_path, "gpt-4o", "none")
    tokens = rp.frames[1].payload_tokens
    assert tokens == 1319
    words = cache_view.call_cache_words(rp, 1)
    assert words == (f"No prompt caching (chosen by name in the settings): 1,319 input tokens sent uncached · "
                     f"input cost ${tokens * GPT4O_INPUT:,.5f}.")
    _no_cache_fields(words)
    label, value, help_words = cache_view.call_cost_figure(rp, 1, 99.0)  # the This call view's figure
    assert (label, value) == ("Input cost (USD)", f"{tokens * GPT4O_INPUT:.5f}")
    assert help_words.startswith("No prompt caching (chosen by name in the settings)")
    _no_cache_fields(label + help_words)


def test_no_cache_rule_call_line_keeps_the_missing_price_remark(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "Where is order A-1?"},
                                             {"role": "assistant", "content": "It shipped."}]}), encoding="utf-8")
    rp = replay(None, load_transcript(path))  # no model: no provider, no rule, no price
    words = cache_view.call_cache_words(rp, 0)
    assert words.startswith("No prompt caching (no model named, so no provider: no cache rule): ")
    assert "input cost no price (litellm has no input_cost_per_token for this model)." in words
    _no_cache_fields(words)
    assert cache_totals_words(rp) == ("without prompt caching (rule none: auto: by the model's provider; no model "
                                      "named, so no provider: no cache rule): the one call's input has no price "
                                      "(the model map lacks input_cost_per_token)")


def test_no_cache_rule_notebook_paragraph_says_none_applies_and_the_cost(tmp_path: Path) -> None:
    rp = _replay(tmp_path, "gpt-4o", "none")
    cost = (1300 + 1319) * GPT4O_INPUT
    story = cache_view.break_story(rp)
    assert story == f"**Prompt caching**: none applies (chosen by name in the settings). Cost ${cost:,.5f}."
    _no_cache_fields(story)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_no_cache_rule_cli_table_line_states_the_cost_without_caching_once(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump(_manifest("gpt-4o")), encoding="utf-8")
    two = str(two_calls(tmp_path / "two.json"))
    proc = _cli("replay", str(manifest), two, "--format", "table", "--cache-rule", "none")
    assert proc.returncode == 0, proc.stderr
    words = " ".join(proc.stdout.split())
    line = words[words.index("total cost "):]
    assert line.startswith("total cost without prompt caching (rule none: set by --cache-rule none): the 2 calls' "
                           f"input costs ${(1300 + 1319) * GPT4O_INPUT:,.4f}")
    assert "read from the cache" not in line and "cache break" not in line and "without caching" not in line
    # the machine output keeps its codes and numbers: both costs there, equal under rule none
    doc = json.loads(_cli("replay", str(manifest), two, "--format", "json", "--cache-rule", "none").stdout)
    cache = doc["totals"]["cache"]
    assert cache["rule"] == "none" and cache["cache_hit_share"] == 0.0 and cache["cache_breaks"] == 0
    assert cache["cost_with_caching_usd"] == cache["cost_without_caching_usd"] == pytest.approx(2619 * GPT4O_INPUT)


def test_a_caching_rule_keeps_the_hits_breaks_and_both_costs_on_every_face(tmp_path: Path) -> None:
    rp = _replay(tmp_path, "gpt-4o")  # auto: OpenAI's automatic prefix caching
    totals = cache_view.totals_words(rp)
    assert totals.startswith("Cost with caching $") and "(without caching $" in totals
    assert "49% of input tokens read from cache · 0 cache break(s) cost $0.00000 · OpenAI automatic" in totals
    assert "1,280 read from cache · 0 written to cache · 39 sent uncached · input cost" in \
        cache_view.call_cache_words(rp, 1)
    assert cache_view.break_story(rp).startswith("**Prompt caching** under OpenAI automatic prefix caching (the "
                                                 "model's provider: litellm entry gpt-4o: provider openai). "
                                                 "Cost with caching $")
    assert cache_view.call_cost_figure(rp, 1, None)[0] == "Input cost with caching (USD)"
    assert cache_totals_words(rp).startswith("with prompt caching (rule openai): the 2 calls' input costs $0.0049, "
                                             "$0.0065 without caching; 1,280 of 2,619 input tokens (49 %) read from "
                                             "the cache")


def test_no_cache_rule_and_no_price_the_totals_line_says_the_cost_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "Where is order A-1?"},
                                             {"role": "assistant", "content": "It shipped."}]}), encoding="utf-8")
    rp = replay(None, load_transcript(path))  # no model: no provider, no rule, no price
    words = cache_view.totals_words(rp)
    assert words == ("Cost unknown (no price for this model) · no prompt caching (no model named, so no provider: "
                     "no cache rule)")
    assert cache_view.break_story(rp) == ("**Prompt caching**: none applies (no model named, so no provider: no cache "
                                          "rule). Cost unknown (no price for this model).")
