"""Fleet throughput: the same sweep on the local process pool and on a Dask LocalCluster.

Generates N synthetic support conversations (default 1 000; 4-12 user turns, tool rounds, some long
tool outputs) as JSON files, sweeps them under 12 settings (keep_turns 2/3/4/6 × hysteresis_ratio
0/0.1/0.3, summarising manager, offline stand-in summarizer, estimate counter) and prints runs per
second for each, the ratio, and that both tables are identical. The cluster's start-up (and the
workers' first imports) is timed separately: it is paid once per command, not per run. Machines are shared and noisy: only the
ratio of two runs measured back to back means anything.

Run: .venv/bin/python benchmarks/fleet.py [--conversations 1000] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

from inspector.sweep import sweep

WORDS = ("order shipment refund invoice customer account delivery status warehouse carrier tracking "
         "address payment card policy return label package item quantity price discount").split()
GRID = {"keep_turns": [2, 3, 4, 6], "hysteresis_ratio": [0, 0.1, 0.3]}
MANIFEST = {
    "apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "fleet-bench"},
    "spec": {"system_prompt": "You are a support agent.",
             "models": [{"id": "main", "model": "gpt-4o", "context_window": 6000, "max_tokens": 800}],
             "context_manager": {"type": "summarising", "params": {"keep_turns": 4}}},
}


def conversation(seed: int) -> list[dict]:
    rnd = random.Random(seed)
    msgs: list[dict] = [{"role": "system", "content": "You are a support agent. " * 10}]
    for t in range(rnd.randint(4, 12)):
        msgs.append({"role": "user", "content": " ".join(rnd.choices(WORDS, k=rnd.randint(8, 40)))})
        for r in range(rnd.randint(0, 2)):
            cid = f"call_{seed}_{t}_{r}"
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"q": t})}}]})
            size = 2500 if rnd.random() < 0.2 else 150
            msgs.append({"role": "tool", "tool_call_id": cid, "content": " ".join(rnd.choices(WORDS, k=size // 6))})
        msgs.append({"role": "assistant", "content": " ".join(rnd.choices(WORDS, k=rnd.randint(10, 60)))})
    return msgs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    args = ap.parse_args()
    import distributed

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = []
        for k in range(args.conversations):
            p = folder / f"conv{k:05d}.json"
            p.write_text(json.dumps(conversation(k)))
            paths.append(p)
        manifest = folder / "agent.yaml"
        manifest.write_text(json.dumps(MANIFEST))  # JSON is YAML
        runs = len(paths) * 12
        print(f"{len(paths)} conversations × 12 settings = {runs} runs, {args.workers} worker(s)")

        # warm-up: imports (litellm, tiktoken) happen once per process, not per run; the forked pool
        # inherits them from this process, the cluster's worker processes import them below
        sweep(manifest, paths[:1], {"keep_turns": [2]}, processes=1, progress=False)
        t0 = time.perf_counter()
        local = sweep(manifest, paths, GRID, processes=args.workers, progress=False)
        t_local = time.perf_counter() - t0
        print(f"local process pool : {runs / t_local:8.1f} runs/s ({t_local:.1f} s)")

        t0 = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
        client = distributed.Client(cluster)
        sweep(manifest, paths[: args.workers], {"keep_turns": [2]}, client=client, progress=False)  # warm-up
        t_start = time.perf_counter() - t0
        try:
            t0 = time.perf_counter()
            on_dask = sweep(manifest, paths, GRID, client=client, progress=False)
            t_dask = time.perf_counter() - t0
        finally:
            client.close()
            cluster.close()
        print(f"Dask LocalCluster  : {runs / t_dask:8.1f} runs/s ({t_dask:.1f} s; cluster start and warm-up {t_start:.1f} s, "
              f"not included)")
        print(f"ratio Dask / local : {(runs / t_dask) / (runs / t_local):.2f}")
        print(f"tables identical   : {on_dask.equals(local)}; {on_dask.attrs['fleet']}")


if __name__ == "__main__":
    main()
