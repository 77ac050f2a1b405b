"""How long one step of the app takes on a long conversation (Streamlit AppTest, no browser).

Builds a synthetic 2 000-turn support transcript (a tool round every third turn), uploads it to
the app through the transcript uploader, waits for the first (replaying) run, then times the
script run of each step: "Next" clicks, slider jumps across the conversation, and the same with
with the side-by-side view switched on (``--compare``; it replays each strategy once first, which on
2 000 turns takes a while). Prints the figures; nothing is asserted about them.

    .venv/bin/python benchmarks/app_step.py [--turns 2000] [--steps 15] [--manifest small-window.yaml] [--compare]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def synthetic_transcript(turns: int) -> bytes:
    """An OpenAI-format conversation: ``turns`` user turns, a tool round every third turn."""
    msgs: list[dict[str, object]] = [{"role": "system", "content": "You are Acme's support assistant."}]
    for i in range(turns):
        order = f"A-{10000 + i}"
        msgs.append({"role": "user", "content": f"Turn {i}: where is my order {order}? It was due last week."})
        if i % 3 == 0:
            cid = f"call_{i:05d}"
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function",
                 "function": {"name": "lookup_order", "arguments": json.dumps({"order_id": order})}}]})
            msgs.append({"role": "tool", "tool_call_id": cid, "content": json.dumps(
                {"order": order, "status": "in transit", "events": ["packed", "shipped", "at hub"] * 4})})
        msgs.append({"role": "assistant", "content": f"Order {order} is in transit and should arrive in two days."})
    return json.dumps({"messages": msgs}).encode()


def timed(fn) -> float:  # noqa: ANN001
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def summary(label: str, xs: list[float]) -> str:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
    return (f"{label:<44} n={len(xs):>3}  median {statistics.median(xs) * 1000:7.0f} ms  "
            f"p95 {p95 * 1000:7.0f} ms  max {xs[-1] * 1000:7.0f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--manifest", default="small-window.yaml", help="a sample manifest name")
    ap.add_argument("--compare", action="store_true", help="also time steps with 2 strategies side by side")
    args = ap.parse_args(argv)

    from streamlit.testing.v1 import AppTest

    data = synthetic_transcript(args.turns)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    cold = timed(at.run)
    at.selectbox(key="manifest_sample").select(args.manifest)
    at.file_uploader(key="transcript_upload").set_value(("synthetic.json", data, "application/json"))
    load = timed(at.run)
    if at.exception or at.error:
        print("app failed:", [e.value for e in at.exception] + [e.value for e in at.error], file=sys.stderr)
        return 1
    n = at.session_state["n_calls"]
    print(f"transcript: {args.turns} user turns, {len(data):,} bytes, {n} LLM calls; manifest {args.manifest}")
    print(f"first run (imports, demo replays):      {cold:6.2f} s")
    print(f"upload run (import + replay):            {load:6.2f} s")

    at.slider(key="call").set_value(n // 2).run()  # step where the conversation is long already
    nexts = [timed(lambda: at.button(key="next").click().run()) for _ in range(args.steps)]
    jumps = []
    for k in range(args.steps):
        target = (k * 7919) % n
        jumps.append(timed(lambda t=target: at.slider(key="call").set_value(t).run()))
        assert at.session_state["call"] == target, "the slider did not move the call"
    assert not at.exception, [e.value for e in at.exception]
    print(summary("step: Next (from the middle)", nexts))
    print(summary("step: slider jump", jumps))
    if args.compare:
        at.multiselect(key="cmp_strategies").set_value(["summarising", "sliding-window"])
        at.toggle(key="cmp_run").set_value(True)
        print(f"side-by-side run (2 more replays):       {timed(at.run):6.2f} s")
        side = [timed(lambda: at.button(key="next").click().run()) for _ in range(args.steps)]
        assert not at.exception, [e.value for e in at.exception]
        print(summary("step: Next, 2 strategies side by side", side))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
