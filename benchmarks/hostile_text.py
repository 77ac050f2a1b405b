"""How secret masking scales on hostile text: t(2n) / t(n) per input shape, measured in one run.

A ratio near 2 is linear; near 4 quadratic. The inputs are the near-matches of tests/engine/test_secret_masking.py
(repeated ``a-``, ``api_key-``, ``token=`` …), which once made an unanchored pattern quadratic."""
from __future__ import annotations

import time

from inspector.redact import mask_text

SHAPES = {
    "hyphen-runs": "a-", "underscore-runs": "a_", "colon-runs": "a:", "key-like-runs": "api_key-",
    "repeated-assignments": "token=", "quoted-keys": "'api_key':'", "scheme-no-at": "http://a:",
    "bearer-words": "bearer ", "basic-auth-words": "authorization: basic ", "one-long-word": "x",
}


def seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        mask_text(text)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    print(f"{'shape':<22} {'t(100 KB) s':>12} {'t(200 KB) s':>12} {'ratio':>6}")
    for name, unit in SHAPES.items():
        n = 100_000 // len(unit)
        small, large = seconds(unit * n), seconds(unit * 2 * n)
        print(f"{name:<22} {small:>12.4f} {large:>12.4f} {large / small:>6.2f}")


if __name__ == "__main__":
    main()
