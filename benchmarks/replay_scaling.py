"""Replay scaling: ratios measured in one run (machines are shared and noisy, so only ratios count).

Generates synthetic transcripts of 500, 1 000 and 2 000 user turns with tool rounds and long tool
outputs, replays each under stack (no cap), sliding-window and summarising (drop) with the
tiktoken counter, and prints:
  (a) the floor: one tiktoken pass over all message texts of the 2 000-turn transcript;
  (b) replay time / floor per strategy (target ≤ 3);
  (c) time(2 000 turns) / time(1 000 turns) per strategy (target ≤ 2.4: linear, not quadratic);
  (d) peak memory of the 2 000-turn replay (target < 500 MB).
Run: .venv/bin/python benchmarks/replay_scaling.py
"""

from __future__ import annotations

import json
import random
import time
import tracemalloc

from inspector.engine.tokens import TiktokenCounter, content_text
from inspector.manifest import settings_from_dict
from inspector.replay import replay
from inspector.transcripts.model import Transcript

WORDS = ("order shipment refund invoice customer account delivery status warehouse carrier tracking "
         "address payment card policy return label package item quantity price discount").split()


def synth(turns: int, seed: int = 7) -> Transcript:
    rnd = random.Random(seed)
    msgs: list[dict] = [{"role": "system", "content": "You are a support agent. " * 20}]
    for t in range(turns):
        msgs.append({"role": "user", "content": " ".join(rnd.choices(WORDS, k=rnd.randint(8, 40)))})
        for r in range(rnd.randint(0, 2)):
            ids = [f"call_{t}_{r}_{k}" for k in range(rnd.randint(1, 2))]
            msgs.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"q": t})}}
                for i in ids]})
            for i in ids:
                size = 3000 if rnd.random() < 0.2 else 200
                msgs.append({"role": "tool", "tool_call_id": i, "content": " ".join(rnd.choices(WORDS, k=size // 6))})
        msgs.append({"role": "assistant", "content": " ".join(rnd.choices(WORDS, k=rnd.randint(10, 60)))})
    return Transcript(format="synthetic", path=None, messages=msgs, origins=[str(i) for i in range(len(msgs))],
                      tools=None, model="gpt-4o", usage={}, irregularities=[])


STRATEGIES = {
    "stack": {"type": "stack"},
    "sliding-window": {"type": "sliding-window", "params": {"keep_turns": 10}},
    "summarising(drop)": {"type": "summarising", "params": {"keep_turns": 10, "summarizer": "drop"}},
}


def run(tr: Transcript, cm: dict) -> float:
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": cm,
                                                       "models": [{"model": "gpt-4o", "context_window": 32000}]}})
    t0 = time.perf_counter()
    replay(s, tr, counter="tiktoken")
    return time.perf_counter() - t0


def main() -> None:
    trs = {n: synth(n) for n in (500, 1000, 2000)}
    run(synth(5), STRATEGIES["stack"])  # warm-up: lazy imports (litellm's price map) are not replay time
    big = trs[2000]
    counter = TiktokenCounter(model="gpt-4o")
    counter.text_tokens("warm up")
    t0 = time.perf_counter()
    for m in big.messages:
        counter.text_tokens(content_text(m.get("content")))
    floor = time.perf_counter() - t0
    print(f"transcript sizes: " + ", ".join(f"{n} turns = {len(t.messages)} messages" for n, t in trs.items()))
    print(f"(a) floor: one tiktoken pass over the 2000-turn transcript = {floor:.3f} s")
    for name, cm in STRATEGIES.items():
        times = {n: run(tr, cm) for n, tr in trs.items()}
        print(f"{name:>18}: (b) replay/floor = {times[2000] / floor:5.2f}   "
              f"(c) t(2000)/t(1000) = {times[2000] / times[1000]:4.2f}   "
              f"[500: {times[500]:.2f}s, 1000: {times[1000]:.2f}s, 2000: {times[2000]:.2f}s]")
    tracemalloc.start()
    s = settings_from_dict({"kind": "Agent", "spec": {"context_manager": {"type": "stack"}}})
    rp = replay(s, big, counter="tiktoken")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"(d) peak memory of the 2000-turn stack replay (tracemalloc): {peak / 1e6:.0f} MB; frames = {len(rp.frames)}")


if __name__ == "__main__":
    main()
