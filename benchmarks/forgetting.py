"""Forgetting: how well the detector finds forgotten references, and what it finds in real transcripts.

(a) Precision and recall of :mod:`inspector.forgetting` against the ground truth of generated
    conversations with planted facts (:mod:`inspector.planted`: 40 turns, 9 facts of every
    identifier kind, distractors), under summarising (offline extractive stand-in), sliding-window
    and stack, keep_turns 4, a 4 000-token window, estimate counter.
(b) The shared third-party transcripts (if present): per file and strategy, the calls that needed
    an identifier an earlier message held, the forgotten references and the calls that forgot one,
    and the identifiers forgotten most often.
(c) Precision on real transcripts (if present): the references reported on the first 3
    conversations of each shared file, replayed with no manifest and under small-window.yaml, are
    matched with the hand labels of ``benchmarks/data/forgetting_labels.json`` (rule:
    docs/forgetting-precision.md); precision per half (tune: what the extractor was tightened on;
    test: held out), and the labelled facts the current extractor no longer reports.

Run: .venv/bin/python benchmarks/forgetting.py [--seeds N] [--shared DIR] [--keep-turns K] [--window W]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspector.compare import compare
from inspector.forgetting import call_needs, forgetting_totals
from inspector.manifest import load_manifest
from inspector.planted import evaluate, strategies
from inspector.replay import replay
from inspector.tuning import expand_conversations

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "transcripts"
FILES = ("tau-bench/gpt-4o-airline.json", "tau2-bench/toolorchestra_airline_gpt-5_1trial.json",
         "swe-agent/marshmallow-code__marshmallow-1867.traj", "letta-agent-file/memgpt_agent_with_convo.af",
         "bashkit-eval/eval-anthropic-claude-opus-4-6-2026-02-28-205358.json", "mas-lab/events.r1.jsonl")
LABELS = ROOT / "benchmarks" / "data" / "forgetting_labels.json"
LABEL_CONVERSATIONS = 3  # the first conversations of each shared file the labelled sample was drawn from


def reference_key(file: str, conversation: int, manifest: str, identifier: str) -> tuple[str, int, str, str]:
    """One reported reference: the same identifier forgotten at several calls of a replay counts once."""
    return (file, conversation, manifest, identifier.casefold())


def reported_references(shared: Path, files: Iterable[str] = FILES,
                        conversations: int = LABEL_CONVERSATIONS) -> set[tuple[str, int, str, str]]:
    """Every forgotten reference the detector reports on the first ``conversations`` of each file,
    replayed with no manifest and under small-window.yaml (the default policy)."""
    small = load_manifest(ROOT / "sample_manifests" / "small-window.yaml")
    out: set[tuple[str, int, str, str]] = set()
    for rel in files:
        if not (shared / rel).exists():
            continue
        for ci, tr in enumerate(expand_conversations([str(shared / rel)], limit=conversations)):
            for name, manifest in (("none", None), ("small-window", small)):
                for c in call_needs(replay(manifest, tr)):
                    out.update(reference_key(rel, ci, name, x.identifier) for x in c.forgotten)
    return out


def label_precision(labels: list[dict[str, Any]], reported: set[tuple[str, int, str, str]]) -> dict[str, dict[str, Any]]:
    """Per half: labelled references still reported, the facts among them, precision, and the
    labelled facts no longer reported (a tightening that loses them is a recall loss)."""
    out: dict[str, dict[str, Any]] = {}
    for half in ("tune", "test"):
        rows = [r for r in labels if r["half"] == half]
        still = [r for r in rows if reference_key(r["file"], r["conversation"], r["manifest"], r["identifier"])
                 in reported]
        facts = sum(r["label"] for r in still)
        out[half] = {"labelled": len(rows), "reported": len(still), "facts": facts,
                     "precision": facts / len(still) if still else 0.0,
                     "precision_before": sum(r["label"] for r in rows) / len(rows) if rows else 0.0,
                     "facts_lost": [r["identifier"] for r in rows if r["label"] and r not in still]}
    return out


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
        print(f"(b), (c) skipped: no shared transcripts at {shared}")
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

    labels = json.loads(LABELS.read_text(encoding="utf-8"))["references"]
    reported = reported_references(shared)
    outside = reported - {reference_key(r["file"], r["conversation"], r["manifest"], r["identifier"]) for r in labels}
    print(f"\n(c) precision on real transcripts: {len(labels)} hand-labelled references "
          f"(docs/forgetting-precision.md), first {LABEL_CONVERSATIONS} conversations per shared file, "
          "no manifest and small-window.yaml")
    print(f"    {'half':<16}{'labelled':>9}{'reported':>9}{'facts':>7}{'precision':>11}{'before':>8}  facts no longer reported")
    for half, r in label_precision(labels, reported).items():
        print(f"    {half + (' (held out)' if half == 'test' else ''):<16}{r['labelled']:>9}{r['reported']:>9}"
              f"{r['facts']:>7}{r['precision']:>11.3f}{r['precision_before']:>8.3f}  "
              f"{', '.join(r['facts_lost']) or 'none'}")
    print(f"    {len(reported)} references reported in all; {len(outside)} outside the labelled sample")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
