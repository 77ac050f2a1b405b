"""Forgetting: how well the detector finds forgotten references, and what it finds in real transcripts.

(a) Precision and recall of :mod:`inspector.forgetting` against the ground truth of generated
    conversations with planted facts (:mod:`inspector.planted`: 40 turns, 9 facts of every
    identifier kind, distractors), under summarising (offline extractive stand-in), sliding-window
    and stack, keep_turns 4, a 4 000-token window, estimate counter.
(b) The shared third-party transcripts (if present): per file and strategy, the calls that needed
    an identifier an earlier message held, the forgotten references and the calls that forgot one,
    and the identifiers forgotten most often.

Run: .venv/bin/python benchmarks/forgetting.py [--seeds N] [--shared DIR] [--keep-turns K] [--window W]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

from inspector.compare import compare
from inspector.forgetting import call_needs, forgetting_totals
from inspector.manifest import load_manifest
from inspector.planted import evaluate, strategies
from inspector.tuning import expand_conversations

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "transcripts"
FILES = ("tau-bench/gpt-4o-airline.json", "tau2-bench/toolorchestra_airline_gpt-5_1trial.json",
         "swe-agent/marshmallow-code__marshmallow-1867.traj", "letta-agent-file/memgpt_agent_with_convo.af",
         "bashkit-eval/eval-anthropic-claude-opus-4-6-2026-02-28-205358.json", "mas-lab/events.r1.jsonl")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--shared", default=str(SHARED))
    ap.add_argument("--keep-turns", type=int, default=4)
    ap.add_argument("--window", type=int, default=16000, help="context window for the shared transcripts")
    ap.add_argument("--limit", type=int, default=None, help="conversations per shared file (default all)")
    args = ap.parse_args(argv)

    small = load_manifest(ROOT / "sample_manifests" / "small-window.yaml",
                          overrides=["spec.models[0].context_window=4000"])
    print(f"(a) planted facts: {args.seeds} conversations x 40 turns x 9 facts, keep_turns {args.keep_turns}, "
          "4,000-token window")
    print(f"    {'strategy':<16}{'truth':>7}{'found':>7}{'false+':>8}{'precision':>11}{'recall':>8}")
    for name, s in evaluate(small, range(args.seeds), keep_turns=args.keep_turns).items():
        truth = s.true_positives + s.false_negatives
        print(f"    {name:<16}{truth:>7}{s.true_positives:>7}{s.false_positives:>8}{s.precision:>11.3f}"
              f"{s.recall:>8.3f}")

    shared = Path(args.shared)
    if not shared.is_dir():
        print(f"(b) skipped: no shared transcripts at {shared}")
        return 0
    big = load_manifest(ROOT / "sample_manifests" / "small-window.yaml",
                        overrides=[f"spec.models[0].context_window={args.window}"])
    print(f"\n(b) shared transcripts, {args.window:,}-token window, keep_turns {args.keep_turns} "
          "(the manifest's system band; offline stand-in summaries)")
    print(f"    {'file':<28}{'convs':>6}{'strategy':>16}{'needing':>9}{'forgotten':>11}{'calls':>7}  most often")
    for rel in FILES:
        path = shared / rel
        if not path.exists():
            continue
        convs = expand_conversations([str(path)], limit=args.limit)
        totals: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
        often: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for tr in convs:
            replays = compare(big, tr, strategies(args.keep_turns), counter="estimate", summarizer="stand-in")
            for name, rp in replays.items():
                needs = call_needs(rp)
                t = forgetting_totals(needs)
                acc = totals[name]
                acc[0] += t["needing_calls"]
                acc[1] += t["forgotten"]
                acc[2] += t["forgotten_calls"]
                often[name].update(x.identifier for c in needs for x in c.forgotten)
        for name, (needing, forgotten, calls) in totals.items():
            top = ", ".join(f"{i} ({n})" for i, n in often[name].most_common(3))
            print(f"    {Path(rel).name[:27]:<28}{len(convs):>6}{name:>16}{needing:>9}{forgotten:>11}{calls:>7}  {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
