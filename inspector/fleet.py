"""Fleets on Dask: the same sweep and compare, run on a ``distributed`` cluster (optional extra ``fleet``).

``inspector.sweep.sweep(..., client=client)`` and ``inspector.compare.compare(..., client=client)``
hand their independent runs to :func:`run_sweep_tasks` / :func:`replay_on` here; on the command
line ``--dask local[:N]`` starts a :class:`distributed.LocalCluster` of N single-threaded worker
processes for the duration of the command and ``--dask tcp://HOST:PORT`` uses a running scheduler.

Guarantees:
  * the rows are the ones a local run gives, in the same order: each task is the same pure
    function (:func:`inspector.sweep.sweep_one` / :func:`inspector.replay.replay`) of the same
    arguments, and results are put back by task position, never by completion order;
  * transcripts travel either as **bytes** (read here once, scattered to the cluster once, written
    to a worker-local file under the same base name, so even error messages match) or as **paths**
    the workers read from shared storage;
  * a worker that dies loses no row: the scheduler re-runs its tasks elsewhere, a task that kills
    workers repeatedly is submitted again (up to ``retries`` times), and the :class:`FleetReport`
    says how many tasks were re-run. A run that still cannot finish raises; nothing is dropped
    silently.

Importing this module never imports ``distributed``; the first use does, and says how to install
it when it is missing.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from inspector.errors import InspectorError

INSTALL_HINT = "pip install 'context-inspector[fleet]'"
Ship = Literal["bytes", "path"]
SHIP_MODES: tuple[str, ...] = ("bytes", "path")
DEFAULT_RETRIES = 3


class FleetError(InspectorError, RuntimeError):
    """Dask is missing, the cluster cannot be reached, or a task could not finish after its retries."""


@dataclass(frozen=True)
class DaskTarget:
    """Where to run: ``local`` (a LocalCluster of ``workers`` processes, None = one per core) or
    ``scheduler`` (an existing scheduler at ``address``)."""

    kind: Literal["local", "scheduler"]
    workers: int | None = None
    address: str | None = None

    def describe(self) -> str:
        """The cluster in words (a local cluster and its workers, or the scheduler's address)."""
        if self.kind == "local":
            return f"a local Dask cluster of {self.workers or 'one per core'} worker process(es)"
        return f"the Dask scheduler at {self.address}"


def parse_dask(text: str) -> DaskTarget:
    """``local`` | ``local:N`` | ``tcp://HOST:PORT`` (also ``tls://``, ``ucx://``) → a DaskTarget;
    anything else is a ValueError that says what is accepted."""
    value = text.strip()
    if value == "local":
        return DaskTarget("local")
    if value.startswith("local:"):
        n = value.partition(":")[2]
        if not n.isdigit() or int(n) < 1:
            raise ValueError(f"--dask {text!r}: local:N needs a worker count N >= 1")
        return DaskTarget("local", workers=int(n))
    scheme, sep, rest = value.partition("://")
    host, colon, port = rest.rpartition(":")
    if sep and scheme in ("tcp", "tls", "ucx", "inproc") and host and colon and port.isdigit():
        return DaskTarget("scheduler", address=value)
    raise ValueError(f"--dask {text!r}: expected local, local:N or a scheduler address such as tcp://HOST:8786")


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise FleetError(f"Dask is not installed: {INSTALL_HINT}") from None
    return distributed


@contextmanager
def connect(target: DaskTarget | str) -> Iterator[Any]:
    """A ``distributed.Client`` for ``target``; a LocalCluster started here is closed on exit (a
    remote scheduler is only disconnected from). Raises :class:`FleetError` when Dask is not
    installed or the scheduler cannot be reached, and :class:`ValueError` for a target string
    :func:`parse_dask` cannot read."""
    distributed = _distributed()
    t = parse_dask(target) if isinstance(target, str) else target
    if t.kind == "local":
        cluster = distributed.LocalCluster(n_workers=t.workers, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
        try:
            with distributed.Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    try:
        client = distributed.Client(t.address, timeout="20s")
    except OSError as exc:
        raise FleetError(f"cannot reach the Dask scheduler at {t.address}: {exc}") from None
    try:
        yield client
    finally:
        client.close()


@dataclass(frozen=True)
class FleetReport:
    """What happened on the cluster. ``rescheduled`` = tasks the scheduler re-ran because the worker
    running them died; ``resubmitted`` = tasks submitted again after killing workers repeatedly;
    every task still produced its row (otherwise the run raises)."""

    scheduler: str
    workers: int
    tasks: int
    rescheduled: int
    resubmitted: int
    shipped: str
    runs: int | None = None  # sweep rows computed (a task computes several); None = one per task

    def as_dict(self) -> dict[str, Any]:
        """The report as a plain dict (what a sweep table's ``attrs["fleet"]`` holds)."""
        return asdict(self)

    def words(self) -> str:
        """The cluster run in a sentence: runs, tasks, workers, scheduler, how
        transcripts were shipped and whether any task re-ran after a worker died."""
        lost = (f"{self.rescheduled + self.resubmitted} task(s) re-ran after a worker died; no row was lost"
                if self.rescheduled or self.resubmitted else "no worker died")
        runs = f"{self.runs} run(s) in " if self.runs is not None else ""
        return (f"{runs}{self.tasks} task(s) on {self.workers} Dask worker(s) (scheduler {self.scheduler}, transcripts "
                f"shipped as {self.shipped}); {lost}.")


# --- running tasks -----------------------------------------------------------------------------------

def _suspicious(dask_scheduler: Any, keys: Sequence[str]) -> int:
    """Runs on the scheduler: how many of ``keys`` were running on a worker that died."""
    return sum(1 for k in keys if k in dask_scheduler.tasks and dask_scheduler.tasks[k].suspicious > 0)


def run_tasks(client: Any, fn: Callable[..., Any], calls: Sequence[tuple[tuple[Any, ...], dict[str, Any]]], *,
              progress: Callable[[int], None] | None = None, retries: int = DEFAULT_RETRIES,
              shipped: str = "objects", weights: Sequence[int] | None = None) -> tuple[list[Any], FleetReport]:
    """``[fn(*args, **kw) for args, kw in calls]`` on the cluster, results in call order.

    Futures in ``args`` (scattered data) are resolved by Dask. ``progress(done)`` is called as
    results arrive, with the number of calls done (or the sum of their ``weights``). A task whose workers keep dying (``KilledWorker``) is submitted again, up to
    ``retries`` times; an exception raised by ``fn`` itself is retried by Dask ``retries`` times
    and then re-raised (sweep rows record their own errors, so this means a bug)."""
    distributed = _distributed()
    killed = getattr(distributed, "KilledWorker", None) or _killed_worker_type()
    workers = len(client.scheduler_info().get("workers", {}))
    results: list[Any] = [None] * len(calls)
    pending: dict[Any, int] = {}
    for i, (args, kw) in enumerate(calls):
        pending[client.submit(fn, *args, pure=False, retries=retries, **kw)] = i
    keys = [f.key for f in pending]
    resubmitted = 0
    attempts = [0] * len(calls)
    done = 0
    finished: list[Any] = []  # hold futures until the scheduler has been asked about them
    ac = distributed.as_completed(list(pending))
    for fut in ac:
        i = pending[fut]
        try:
            results[i] = fut.result()
        except killed:
            attempts[i] += 1
            if attempts[i] > retries:
                raise FleetError(f"task {i} killed {attempts[i]} worker(s) in a row; giving up") from None
            resubmitted += 1
            args, kw = calls[i]
            again = client.submit(fn, *args, pure=False, retries=retries, **kw)
            pending[again] = i
            ac.add(again)
            continue
        finished.append(fut)
        done += 1 if weights is None else weights[i]
        if progress is not None:
            progress(done)
    try:
        rescheduled = int(client.run_on_scheduler(_suspicious, keys=keys))
    except Exception:  # noqa: BLE001 - a scheduler that forbids run_on_scheduler: count what we saw
        rescheduled = 0
    del finished
    report = FleetReport(scheduler=str(client.scheduler.address), workers=workers, tasks=len(calls),
                         rescheduled=rescheduled, resubmitted=resubmitted, shipped=shipped)
    return results, report


def _killed_worker_type() -> type[BaseException]:
    from distributed.scheduler import KilledWorker

    return KilledWorker


# --- shipping transcripts ------------------------------------------------------------------------------

class _WorkerFiles:
    """The files a worker process writes for shipped transcripts, once per key, in one temporary
    folder made on first use (one instance per process: a worker keeps them for its lifetime)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.paths: dict[str, str] = {}
        self.folder: tempfile.TemporaryDirectory[str] | None = None

    def path(self, key: str, name: str, data: bytes) -> str:
        """A worker-local file holding ``data`` under the base name ``name`` (written once per key)."""
        with self.lock:
            path = self.paths.get(key)
            if path is None:
                if self.folder is None:
                    self.folder = tempfile.TemporaryDirectory(prefix="context-inspector-fleet-")
                folder = Path(self.folder.name) / str(len(self.paths))
                folder.mkdir()
                target = folder / name
                target.write_bytes(data)
                path = self.paths[key] = str(target)
            return path


_WORKER_FILES = _WorkerFiles()


SweepRow = Callable[..., dict[str, Any]]
"""The sweep's row function (:func:`inspector.sweep.sweep_one`), handed in by the sweep so this
module, the floor the sweep runs on, never imports it back."""


def _sweep_task(sweep_one: SweepRow, doc: Any, transcript: Any, data: bytes | None, data_key: str | None,
                combos: Sequence[Mapping[str, Any]], kw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """On a worker: the rows of ``transcript`` under each combination (``data``: the file's shipped
    bytes, written once per worker under ``data_key``; None when the worker opens the path itself)."""
    if data is not None and data_key is not None:
        transcript = _WORKER_FILES.path(data_key, Path(os.fspath(transcript)).name or "transcript", data)
    return [sweep_one(doc, transcript, combo, **kw) for combo in combos]


def run_sweep_tasks(client: Any, sweep_one: SweepRow, doc: Mapping[str, Any],
                    tasks: Sequence[tuple[Any, Mapping[str, Any]]], kw: Mapping[str, Any], *, ship: Ship = "bytes",
                    progress: Callable[[int], None] | None = None, retries: int = DEFAULT_RETRIES,
                    chunk: int = 16) -> tuple[list[dict[str, Any]], FleetReport]:
    """The sweep's ``(transcript, combo)`` tasks as ``sweep_one`` rows (:func:`inspector.sweep.sweep_one`,
    called with the keywords ``kw``), in task order. ``ship="bytes"``: each transcript path is read here once and scattered once;
    ``"path"``: workers open the paths themselves (shared storage). Imported transcripts travel
    as objects either way. An unreadable path under ``"bytes"`` is left to the worker, which
    records the same error row a local run would. Consecutive rows of one transcript go to one
    Dask task, ``chunk`` at most."""
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    if ship not in SHIP_MODES:
        raise ValueError(f"ship must be one of {', '.join(SHIP_MODES)}, got {ship!r}")
    scattered: dict[str, tuple[Any, str]] = {}
    if ship == "bytes":
        for t, _ in tasks:
            if isinstance(t, (str, os.PathLike)) and os.fspath(t) not in scattered:
                try:
                    blob = Path(t).read_bytes()
                except OSError:
                    continue  # the worker reports it, exactly as a local run does
                future = client.scatter(blob, broadcast=False, hash=False)
                scattered[os.fspath(t)] = (future, str(future.key))
    # One Dask task per run of consecutive rows of the same transcript (at most ``chunk`` rows): a
    # row takes milliseconds, so per-task scheduling would otherwise dominate.
    groups: list[list[int]] = []
    for i, (t, _) in enumerate(tasks):
        if groups and tasks[groups[-1][0]][0] is t and len(groups[-1]) < chunk:
            groups[-1].append(i)
        else:
            groups.append([i])
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    for group in groups:
        t = tasks[group[0]][0]
        data, key = scattered.get(os.fspath(t), (None, None)) if isinstance(t, (str, os.PathLike)) else (None, None)
        combos = [dict(tasks[i][1]) for i in group]
        calls.append(((sweep_one, dict(doc), t, data, key, combos, dict(kw)), {}))
    shipped = ship if any(isinstance(t, (str, os.PathLike)) for t, _ in tasks) else "objects"
    chunks, report = run_tasks(client, _sweep_task, calls, progress=progress, retries=retries, shipped=shipped,
                               weights=[len(g) for g in groups])
    rows = [row for chunk_rows in chunks for row in chunk_rows]
    return rows, replace(report, tasks=len(calls), runs=len(rows))


def _replay_task(manifest: Any, transcript: Any, kw: Mapping[str, Any]) -> Any:
    from inspector.replay import replay

    rp = replay(manifest, transcript, **kw)
    rp.token_counter = None  # a counter's cache is local to its process; reports rebuild one on demand
    return rp


def replay_on(client: Any, manifests: Mapping[str, Any], transcript: Any, *,
              progress: Callable[[int], None] | None = None, retries: int = DEFAULT_RETRIES,
              **replay_kw: Any) -> dict[str, Any]:
    """``{name: replay(manifest, transcript, **replay_kw)}`` with one task per manifest; the
    transcript is scattered once and the returned replays point at the caller's transcript object.
    The :class:`FleetReport` is on every replay as ``fleet``."""
    shared = client.scatter(transcript, broadcast=False, hash=False)
    names = list(manifests)
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [((manifests[n], shared, dict(replay_kw)), {})
                                                           for n in names]
    replays, report = run_tasks(client, _replay_task, calls, progress=progress, retries=retries, shipped="objects")
    out: dict[str, Any] = {}
    for name, rp in zip(names, replays, strict=True):
        rp.transcript = transcript
        rp.fleet = report
        out[name] = rp
    return out
