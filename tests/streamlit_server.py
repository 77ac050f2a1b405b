"""A Streamlit server on a free 127.0.0.1 port, for the tests and benchmarks that drive the app
over HTTP or in a real browser (tests/app/test_app_browser.py, tests/package/test_packaging.py,
benchmarks/app_browser.py). One place for the port, the health wait and the shutdown."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
    """Return when ``/_stcore/health`` answers ``ok``; raise if the server exits or the time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early with status {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"streamlit did not answer /_stcore/health on port {port} within {timeout:.0f} s")


@contextlib.contextmanager
def served(cmd: Sequence[str], port: int, *, cwd: Path, env: dict[str, str], out: IO[bytes] | int | None = None,
           timeout: float = 90.0) -> Iterator[float]:
    """Run ``cmd`` (a server listening on ``port``) until the block ends; yields the seconds it took
    to answer its health check. Stopped with SIGINT, as Ctrl+C would, then killed if it lingers."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_healthy(port, proc, timeout)
        yield time.perf_counter() - start
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
