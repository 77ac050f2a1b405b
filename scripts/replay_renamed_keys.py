"""Check that a change which renames replay-JSON keys renames only those keys.

Writes every replay JSON of :mod:`replay_digests` (the 90 runs) to a folder, then compares two such
folders after renaming, in place and keeping each key's position, the keys of ``FRAME`` in every
``frames[].cache`` object and of ``TOTALS`` in ``totals.cache`` (also inside a multi-conversation
document's ``replays``). Every run must be identical after the renaming, key order included::

    git stash; .venv/bin/python scripts/replay_renamed_keys.py dump /tmp/before; git stash pop
    .venv/bin/python scripts/replay_renamed_keys.py dump /tmp/after
    .venv/bin/python scripts/replay_renamed_keys.py check /tmp/before /tmp/after

The renaming below is the one prompt-cache vocabulary's (CHANGELOG, issue 30).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import replay_digests as rd  # noqa: E402 - the runs, as the digests list them

FRAME = {"cost_usd": "cost_with_caching_usd", "uncached_cost_usd": "cost_without_caching_usd",
         "break_cost_usd": "cache_break_cost_usd"}
TOTALS = {**FRAME, "breaks": "cache_breaks"}


def dump(out_dir: Path) -> int:
    """Write one JSON file per (manifest, transcript) run to ``out_dir`` (a failed run: its exit)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / "_run.json"
    for t in rd.transcripts():
        for m in rd.manifests():
            name = f"{(m or 'own').replace(':', '_')}__{t.name}.json"
            status = rd.digest(m, t, tmp)
            if status.startswith("exit"):
                (out_dir / (name + ".exit")).write_text(status)
            else:
                shutil.move(tmp, out_dir / name)
    return 0


def _renamed(doc: dict[str, Any]) -> dict[str, Any]:
    for inner in doc.get("replays", []):
        _renamed(inner)
    for frame in doc.get("frames", []):
        if "cache" in frame:
            frame["cache"] = {FRAME.get(k, k): v for k, v in frame["cache"].items()}
    if "cache" in doc.get("totals", {}):
        doc["totals"]["cache"] = {TOTALS.get(k, k): v for k, v in doc["totals"]["cache"].items()}
    return doc


def check(before: Path, after: Path) -> int:
    """Compare two dumps; print one line per run that differs and a summary; 1 when any differs."""
    names = sorted(p.name for p in before.iterdir() if not p.name.startswith("_"))
    if names != sorted(p.name for p in after.iterdir() if not p.name.startswith("_")):
        print("the two dumps hold different runs")
        return 1
    same = renamed = differ = 0
    for name in names:
        a, b = (before / name).read_text(), (after / name).read_text()
        if a == b:
            same += 1
        elif json.dumps(_renamed(json.loads(a))) == json.dumps(json.loads(b)):  # dumps keeps key order
            renamed += 1
        else:
            differ += 1
            print("differs:", name)
    print(f"{len(names)} runs: {same} byte-identical, {renamed} identical after renaming the cache keys, "
          f"{differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["dump"] and len(sys.argv) == 3:
        sys.exit(dump(Path(sys.argv[2])))
    if sys.argv[1:2] == ["check"] and len(sys.argv) == 4:
        sys.exit(check(Path(sys.argv[2]), Path(sys.argv[3])))
    sys.exit("usage: replay_renamed_keys.py dump DIR | check BEFORE AFTER")
