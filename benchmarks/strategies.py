"""Every context strategy side by side: tokens, cost with and without prompt caching, forgetting.

Runs EVERY context manager the plugin registry holds (:func:`inspector.plugins.default_registry`,
slot ``context_manager``: built-ins first, then any registered since), each with its params model's
defaults, on two generated inputs:

(a) an agent transcript of 200 user turns with tool traffic: every turn opens 1-3 tool rounds of
    1-3 calls each, whose results vary in size (70 % short, 25 % medium, 5 % long), and planted facts
    (:func:`inspector.planted.planted_conversation`: 18 identifiers of every kind stated early by the
    user and needed 66+ turns later). Each tool result also names an artifact id that a call 40
    turns later passes in its arguments, so clearing or masking old tool results has references
    to lose too;
(b) one agent turn of 500 tool rounds (one user message, 500 assistant→tool rounds; the shape of
    ``replay_scaling.one_enormous_turn``, with results of the same varied sizes so the run
    outgrows the window; each result names an artifact id a call 150 rounds later passes on).

Both inputs outgrow the window (128 000 tokens, gpt-4o's own): an uncapped stack goes over it, so every
strategy has something to compact and the 100 000-token default triggers fire. The window is the
same for both models, so each strategy makes the same decisions under both and only the cache
rule and the prices differ.

Per strategy, from :func:`inspector.replay.replay` (tiktoken counter) and the analyses the faces
read: tokens sent (the sum of every call's payload), calls over budget, forgotten references
(:func:`inspector.forgetting.forgetting_totals`), on (a) the planted facts the model could not see
when it needed them (:func:`inspector.planted.truth`) and the share of them the forgetting detector reports
(:func:`inspector.planted.score`'s recall), and per model — gpt-4o (OpenAI's automatic
prefix cache) and claude-sonnet-4-5 (Anthropic's breakpoints and priced cache writes) — the input
cost without and with caching, the cache-hit share and the cache breaks
(:func:`inspector.prompt_cache.replay_cache`). Wall time is the gpt-4o replay's. Summarising
strategies run with the offline stand-in summary (an estimate of what a model would keep).

    .venv/bin/python benchmarks/strategies.py [--quick]

``--quick``: 90 turns and 350 rounds, both still past the window (a smoke run, not the figures).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from replay_scaling import WORDS  # noqa: E402

from inspector.forgetting import forgetting_totals, replay_needs  # noqa: E402
from inspector.manifest import settings_from_dict  # noqa: E402
from inspector.planted import PlantedConversation, planted_conversation, score, truth  # noqa: E402
from inspector.plugins import default_registry  # noqa: E402
from inspector.prompt_cache import replay_cache  # noqa: E402
from inspector.replay import Replay, replay  # noqa: E402
from inspector.transcripts.model import Transcript  # noqa: E402

MODELS = ("gpt-4o", "claude-sonnet-4-5")
TOOLS = ("read_file", "grep", "run_tests")


def tool_output(rnd: random.Random, artifact: str) -> str:
    """One tool result: an artifact id, then 70 % short, 25 % medium, 5 % long text."""
    x = rnd.random()
    words = rnd.randint(30, 150) if x < 0.7 else rnd.randint(300, 800) if x < 0.95 else rnd.randint(2000, 4000)
    return f"artifact {artifact}: " + " ".join(rnd.choices(WORDS, k=words))


def tool_round(rnd: random.Random, calls: list[tuple[str, dict[str, Any]]], tag: str) -> list[dict[str, Any]]:
    """An assistant message with ``calls`` (tool name, arguments) and one result per call; the
    result of call ``k`` names artifact ``ART-<tag>-<k>``."""
    ids = [f"call_{tag}_{k}" for k in range(len(calls))]
    ask = {"role": "assistant", "content": "", "tool_calls": [
        {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in zip(ids, calls, strict=True)]}
    return [ask, *({"role": "tool", "tool_call_id": i, "content": tool_output(rnd, f"ART-{tag}-{k}")}
                   for k, i in enumerate(ids))]


def _calls(rnd: random.Random, n: int, back: str | None) -> list[tuple[str, dict[str, Any]]]:
    calls = [(rnd.choice(TOOLS), {"q": " ".join(rnd.choices(WORDS, k=3))}) for _ in range(n)]
    if back is not None:  # the first call passes on an artifact an earlier result named
        calls[0] = (calls[0][0], {**calls[0][1], "artifact": back})
    return calls


def agent_transcript(turns: int, seed: int = 11) -> PlantedConversation:
    """The planted-fact conversation of ``turns`` turns with 1-3 tool rounds added after each user
    message (the facts' message indices follow the added rows)."""
    base = planted_conversation(seed, turns=turns, facts=18, restate_every=0)
    rnd = random.Random(seed)
    msgs: list[dict[str, Any]] = []
    where: dict[int, int] = {}
    turn = -1
    for i, m in enumerate(base.transcript.messages):
        where[i] = len(msgs)
        msgs.append(m)
        if m.get("role") != "user":
            continue
        turn += 1
        for r in range(rnd.randint(1, 3)):
            back = f"ART-{turn - 40}-{r}-0" if turn >= 40 and r == 0 else None
            msgs.extend(tool_round(rnd, _calls(rnd, rnd.randint(1, 3), back), f"{turn}-{r}"))
    facts = [replace(f, planted_at=where[f.planted_at], needed_at=where[f.needed_at],
                     mentions=tuple(where[i] for i in f.mentions)) for f in base.facts]
    return PlantedConversation(_transcript(msgs, "agent transcript"), facts)


def one_turn_run(rounds: int, seed: int = 12) -> Transcript:
    """One user message, then ``rounds`` assistant→tool rounds with results of varied sizes; round
    ``i`` passes on the artifact round ``i − 150`` named."""
    rnd = random.Random(seed)
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent. Use the tools."},
                                  {"role": "user", "content": "fix the failing test in the export module"}]
    for i in range(rounds):
        msgs.extend(tool_round(rnd, _calls(rnd, 1, f"ART-{i - 150}-0" if i >= 150 else None), str(i)))
    msgs.append({"role": "assistant", "content": "The failing test passes now."})
    return _transcript(msgs, "one-turn run")


def _transcript(msgs: list[dict[str, Any]], path: str) -> Transcript:
    return Transcript(format="synthetic", path=path, messages=msgs, origins=[f"messages[{i}]" for i in range(len(msgs))],
                      tools=None, model="gpt-4o", usage={}, irregularities=[])


def strategies() -> dict[str, dict[str, Any]]:
    """Every registered context manager, by name, with its params model's defaults (no params)."""
    return {spec.name: {"type": spec.name} for spec in default_registry().specs("context_manager")}


def run(tr: Transcript, cm: dict[str, Any], model: str, window: int) -> tuple[float, Replay]:
    """One replay of ``tr`` under ``cm`` for ``model`` with a ``window``-token context; its wall time."""
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": cm,
                                                       "models": [{"model": model, "context_window": window}]}})
    gc.collect()
    t0 = time.perf_counter()
    rp = replay(s, tr, counter="tiktoken")
    return time.perf_counter() - t0, rp


def _money(v: float | None) -> str:
    return "no price" if v is None else f"${v:,.2f}"


def measure(tr: Transcript, conv: PlantedConversation | None, window: int) -> list[dict[str, Any]]:
    """One row per registered strategy: the figures of the table (see the module's docstring)."""
    rows = []
    for name, cm in strategies().items():
        row: dict[str, Any] = {"strategy": name}
        for model in MODELS:
            seconds, rp = run(tr, cm, model, window)
            c = replay_cache(rp).totals()
            row[model] = c
            if model == MODELS[0]:
                t = rp.totals()
                row.update(seconds=seconds, tokens=t["payload_tokens"], over=t["over_budget"], calls=t["frames"],
                           forgotten=forgetting_totals(replay_needs(rp))["forgotten"])
                if conv is not None:
                    row["planted"] = f"{len(truth(rp, conv))}/{len(conv.facts)}"
                    row["recall"] = f"{100 * score(rp, conv).recall:.0f} %"
            del rp
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]], planted: bool) -> str:
    """The markdown table of ``rows``."""
    head = ["strategy", "tokens sent", "calls over budget", "forgotten refs", *(["planted facts lost", "found by detector"] if planted else [])]
    for model in MODELS:
        head += [f"{model} no cache", f"{model} cached", f"{model} hit share", f"{model} breaks"]
    head.append("replay s")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        cells = [r["strategy"], f"{r['tokens']:,}", f"{r['over']}/{r['calls']}", f"{r['forgotten']:,}",
                 *([r["planted"], r["recall"]] if planted else [])]
        for model in MODELS:
            c = r[model]
            cells += [_money(c["cost_without_caching_usd"]), _money(c["cost_with_caching_usd"]),
                      f"{100 * c['cache_hit_share']:.0f} %", f"{c['cache_breaks']:,}"]
        cells.append(f"{r['seconds']:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) on {os.cpu_count()} cores"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="90 turns, 350 rounds (a smoke run)")
    args = ap.parse_args(argv)
    turns, rounds, window = (90, 350, 128_000) if args.quick else (200, 500, 128_000)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {load()} at the start")
    print(f"strategies (registry, params defaults): {', '.join(strategies())}; tiktoken counter; "
          f"{window:,}-token window for both models")
    conv = agent_transcript(turns)
    run_tr = one_turn_run(rounds)
    n_tools = sum(1 for m in conv.transcript.messages if m.get("role") == "tool")
    for title, tr, planted in ((f"agent transcript: {turns} turns, {len(conv.transcript.messages):,} messages, "
                                f"{n_tools:,} tool results, {len(conv.facts)} planted facts", conv.transcript, conv),
                               (f"one-turn run: 1 user message, {rounds} tool rounds, "
                                f"{len(run_tr.messages):,} messages", run_tr, None)):
        print(f"\n### {title}\n")
        print(table(measure(tr, planted, window), planted is not None))
    print(f"\n{load()} at the end")


if __name__ == "__main__":
    main()
