"""Sweep: replay transcripts under every combination of a parameter grid, one row per run.

``sweep(manifest, transcripts, {"keep_turns": [2, 4, 6], "hysteresis_ratio": [0, 0.1]})`` replays
every transcript under every combination and returns a pandas DataFrame with one row per
(transcript, combination), in input order: transcripts outermost, then the grid's combinations in
``itertools.product`` order of the keys as given. Every number in a row comes from
:func:`inspector.replay.replay` and the report tables; nothing is recounted here.

Guarantees: a row is a pure function of (manifest document, transcript, parameters, counter,
summarizer) — :func:`sweep_one` — so the result is identical whatever the parallelism (one
process per run through :class:`concurrent.futures.ProcessPoolExecutor`, or inline with
``processes=1``), and the same function can be mapped over a cluster. To sweep thousands of
sessions, map it over (transcript, params) pairs with any executor whose workers can import
``inspector`` and read the transcript paths (all arguments are plain picklable values), then build
the table yourself::

    from inspector.manifest import load_manifest
    from inspector.sweep import grid_runs, sweep_one

    doc = load_manifest("agent.yaml").raw            # a plain dict: ship it to every worker
    grid = {"keep_turns": [2, 4, 6], "hysteresis_ratio": [0, 0.1]}
    jobs = [(doc, path, run.params) for path in session_paths for run in grid_runs(doc, grid)]
    rows = client.map(lambda j: sweep_one(*j, manifest_file="agent.yaml"), jobs)  # dask, ray, Spark, ...
    df = pandas.DataFrame(rows)                      # same columns as sweep()

The grid (:mod:`inspector.grid`) spans strategy types: a strategy parameter (``keep_turns``) applies
only to the runs whose strategy defines it (docs/design.md Q9 stays), each row says which strategy
it ran and which settings applied or were not applicable (:data:`SETTING_COLUMNS`), and a strategy
parameter no strategy of the grid defines is an error naming it.
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TextIO, TypedDict, Unpack

from inspector.errors import InspectorError
from inspector.grid import (
    SHORT_NAMES,
    GridRun,
    apply_params,
    combinations,
    expand_grid,
    param_value,
    parse_grid,
    resolve_key,
    settings_words,
    split_settings,
)
from inspector.manifest import load_manifest
from inspector.manifest.overrides import resolve_override_path
from inspector.prompt_cache import CACHE_COLUMNS, NO_CACHE_RULE, cache_metrics
from inspector.vocabulary import drop_actions, summary_actions

__all__ = ["INFO_COLUMNS", "METRIC_COLUMNS", "NON_PARAM_COLUMNS", "SETTING_COLUMNS", "SHORT_NAMES", "GridRun", "RunOptions",
           "apply_params", "by_setting", "combinations", "cost_column", "expand_grid", "grid_runs", "param_columns",
           "param_value", "parse_grid", "resolve_key", "run_metrics", "settings_words", "split_settings",
           "summary_cost_basis", "sweep", "sweep_one", "transcript_label"]
"""The sweep's names, the grid's (:mod:`inspector.grid`) among them: one import for a sweep's caller."""

METRIC_COLUMNS: tuple[str, ...] = (
    "user_turns", "frames", "tokens_sent", "peak_payload", "input_budget", "min_headroom", "over_budget",
    "summarizer_calls", "summarizer_in_turn", "summarizer_commit", "summarizer_failures",
    "messages_summarised", "messages_dropped", "folded", "trimmed", "repairs", "checks_failed",
    "forgotten", "forgotten_calls", "needing_calls", "forgotten_per_call", "forgotten_ids",
    "payload_cost_usd", "summary_cost_usd", "cost_usd",
)
"""Per-run numbers, in column order. ``tokens_sent`` = total input tokens over every call;
``peak_payload`` = the largest single payload; ``input_budget`` = the smallest trimmer ceiling
(max_tokens − reserve − margin) of the run; ``over_budget`` = calls whose payload exceeded it;
``messages_summarised`` / ``messages_dropped`` = distinct transcript messages folded into a summary /
left out without one by the context manager (in a call or at a commit); ``folded``, ``trimmed`` and
``repairs`` are summed over calls as in :func:`inspector.report.tables.totals_row`. ``user_turns`` =
user messages in the transcript. Forgetting (:mod:`inspector.forgetting`): ``forgotten`` = (call,
identifier) pairs a call needed and could no longer see, ``forgotten_calls`` = calls that forgot at
least one, ``needing_calls`` = calls that needed an identifier an earlier message held,
``forgotten_per_call`` = forgotten ÷ needing_calls, ``forgotten_ids`` = the distinct identifiers as
JSON text (a list, in order of first loss). Costs are USD; ``summary_cost_usd`` for the offline
stand-in is an *estimate* (its estimated tokens at the summary model's rates; ``summary_cost_basis``
says which); ``cost_usd`` is ``None`` when part of it has no price."""

INFO_COLUMNS: tuple[str, ...] = ("summary_cost_basis", "summarizer", "counter", "pending_call", "error")
"""Beside the metrics: how summaries were priced, the summarizer and counter, ``pending_call`` (True
when the transcript ends without a reply: the replay's pending next call, never made by the agent,
is left out of every metric) and the error of a run that failed."""
SETTING_COLUMNS: tuple[str, ...] = ("strategy", "settings_applied", "settings_not_applicable")
"""Beside the grid's own columns: the context manager the row ran (its canonical name), and the
grid settings that applied to it and those that did not (its strategy does not define them), each as
``name=value`` text joined by ``"; "`` (empty: none)."""
NON_PARAM_COLUMNS = frozenset(("transcript", "conversation", *METRIC_COLUMNS, *CACHE_COLUMNS, *INFO_COLUMNS,
                               *SETTING_COLUMNS))


Progress = Callable[[int, int], None]
OnError = Literal["record", "raise"]


# --- one run --------------------------------------------------------------------------------------

def sweep_one(manifest_doc: Mapping[str, Any] | str | os.PathLike[str] | Any, transcript: Any,
              params: Mapping[str, Any], counter: str | None = None, summarizer: str | None = None, *,
              manifest_file: str | None = None, allow_imports: Iterable[str] = (), llm: Any = None,
              summary_cache: str | os.PathLike[str] | None = None, on_error: OnError = "record",
              policy: Any = None, unrecorded_prefix: int | str | None = None,
              cache_rule: str | None = None) -> dict[str, Any]:
    """One sweep row: replay ``transcript`` under ``manifest_doc`` with ``params`` applied.

    A pure function of its arguments — no clocks, no global state, nothing shared between calls —
    so it gives the same row in any process, in any order (the module docstring shows it mapped
    over a cluster).

    ``manifest_doc``: the raw manifest mapping (``LoadedManifest.raw``); a path or a
    ``LoadedManifest`` is accepted too. ``manifest_file`` names the file the document came from:
    relative context files resolve against its folder. ``transcript``: a path (imported here, format
    auto-detected) or an imported :class:`~inspector.transcripts.Transcript`. ``counter`` and
    ``summarizer`` are as for :func:`~inspector.replay.replay`; ``llm`` (an
    :class:`~inspector.engine.llm.LLMEngine`) lets ``summarizer="manifest"`` call a real model and
    ``summary_cache`` (a folder) reuses its summaries across runs. ``unrecorded_prefix`` (``"auto"`` or
    N tokens) adds what the log does not record to every call's budget, as for
    :func:`~inspector.replay.replay`. ``cache_rule`` names the prompt-cache rule of the cache
    columns (:func:`inspector.prompt_cache.rule_choice`; None: the manifest's, else auto).

    Only the settings that apply to the row's strategy reach the manifest (:func:`split_settings`:
    ``keep_turns`` never reaches a ``stack`` manager); the row lists both kinds.

    Returns ``{"transcript", "conversation", <each param>, <SETTING_COLUMNS>, <METRIC_COLUMNS>,
    <CACHE_COLUMNS>, <INFO_COLUMNS>}``. With ``on_error="record"`` an invalid combination (a value out of range)
    or an unreadable transcript gives a row whose metrics are ``None`` and whose ``error`` says why;
    ``"raise"`` re-raises instead (an :class:`~inspector.errors.InspectorError`, a
    :class:`ValueError` or an :class:`OSError`). Raises :class:`TypeError` when ``manifest_doc`` is
    none of the accepted kinds.
    """
    from inspector.policy import DEFAULT_POLICY

    pol = (policy or DEFAULT_POLICY).with_(counter=counter, summarizer=summarizer)  # one default policy
    doc, file = _manifest_source(manifest_doc, manifest_file)
    row: dict[str, Any] = {"transcript": transcript_label(transcript),
                           "conversation": getattr(transcript, "conversation", 0)}
    row.update({k: param_value(v) for k, v in params.items()})
    row.update(strategy=None, settings_applied=settings_words(params), settings_not_applicable="")
    try:
        strategy, applied, skipped = split_settings(doc, params)
        row.update(strategy=strategy, settings_applied=settings_words(applied),
                   settings_not_applicable=settings_words(skipped))
        rp = _replay_run(doc, file, transcript, applied, sample=manifest_doc is None, replay_kw=dict(
            policy=pol, llm=llm, summary_cache=None if summary_cache is None else os.fspath(summary_cache),
            allow_imports=allow_imports, unrecorded_prefix=unrecorded_prefix))
    except (InspectorError, ValueError, OSError) as exc:
        if on_error == "raise":
            raise
        row.update(dict.fromkeys((*METRIC_COLUMNS, *CACHE_COLUMNS)))
        row.update(summarizer=pol.summarizer, counter=pol.counter, error=f"{type(exc).__name__}: {exc}")
        return row
    row.update(run_metrics(rp))
    row.update(cache_metrics(rp, cache_rule))
    row.update(summary_cost_basis=summary_cost_basis(rp), summarizer=rp.summarizer_label, counter=rp.counter,
               pending_call=rp.pending_call is not None, error=None)
    return row


def _replay_run(doc: Mapping[str, Any], file: str | None, transcript: Any, params: Mapping[str, Any], *,
                sample: bool, replay_kw: dict[str, Any]) -> Any:
    """The replay of one run: the manifest document with ``params`` applied, read as settings (its
    relative files against ``file``'s folder), replayed with ``replay_kw`` (:func:`~inspector.replay.replay`'s
    keywords); ``sample`` is forced when the sweep has no manifest (else the manifest says). Raises
    what reading or replaying raises."""
    from inspector.manifest import settings_from_dict
    from inspector.replay import replay

    loaded = settings_from_dict(apply_params(doc, params), file=file, allow_imports=replay_kw["allow_imports"],
                                base_dir=Path(file).parent if file else None)
    return replay(loaded, _load(transcript), sample=sample or loaded.settings.sample, **replay_kw)


def summary_cost_basis(rp: Any) -> str:
    """How ``summary_cost_usd`` was obtained: ``estimate (stand-in at <model> rates)``, ``reported``
    (a live model's usage at its rates), ``none (no summary calls)`` or ``unpriced``."""
    calls = sum(rp.summarizer_calls.values())
    summ_label = str(rp.summarizer_label)
    if "stand-in" in summ_label:
        model = rp.summary_price_model
        basis = f"estimate (stand-in at {model} rates)" if rp.summary_cost_usd is not None else "unpriced (stand-in)"
        return basis if calls else "none (no summary calls)"
    if not calls:
        return "none (no summary calls)"
    return "reported" if rp.summary_cost_usd is not None else "unpriced"


def run_metrics(rp: Any) -> dict[str, Any]:
    """The :data:`METRIC_COLUMNS` of one replay, from its totals and frames."""
    from inspector.forgetting import call_needs, forgetting_totals

    counted = rp.counted_frames()  # the pending next call (never made) is left out of every metric
    lost = forgetting_totals(call_needs(rp)[:len(counted)])
    t = rp.totals()
    calls = t["summarizer_calls"]
    summarised, dropped = _folded_messages(rp)
    out = {
        "user_turns": sum(1 for m in rp.messages if m.get("role") == "user"), "frames": t["frames"],
        "tokens_sent": t["payload_tokens"], "peak_payload": t["max_payload_tokens"],
        "input_budget": min((f.input_budget for f in counted), default=None),
        "min_headroom": min((f.headroom for f in counted), default=None),
        "over_budget": t["over_budget"],
        "summarizer_calls": calls["in_turn"] + calls["commit"],
        "summarizer_in_turn": calls["in_turn"], "summarizer_commit": calls["commit"],
        "summarizer_failures": t["summarizer_failures"],
        "messages_summarised": len(summarised), "messages_dropped": len(dropped),
        "folded": t["folded"], "trimmed": t["trimmed"], "repairs": t["repairs"],
        "checks_failed": t["checks_failed"],
        "forgotten": lost["forgotten"], "forgotten_calls": lost["forgotten_calls"],
        "needing_calls": lost["needing_calls"], "forgotten_per_call": lost["forgotten_per_call"],
        "forgotten_ids": json.dumps(lost["forgotten_ids"], ensure_ascii=False),
        "payload_cost_usd": t["payload_cost_usd"], "summary_cost_usd": t["summary_cost_usd"], "cost_usd": t["cost_usd"],
    }
    return {k: out[k] for k in METRIC_COLUMNS}


def _folded_messages(rp: Any) -> tuple[set[int], set[int]]:
    """Distinct transcript indices the manager summarised / dropped, in a call or at a commit."""
    from inspector.replay.ranges import expand_ranges

    summarised: set[int] = set()
    dropped: set[int] = set()
    summary_codes, drop_codes = summary_actions(), drop_actions()
    for action, ranges in [(f.decision.action, f.folded) for f in rp.counted_frames()] + \
            [(c.action, c.folded) for c in rp.commits]:
        if action in summary_codes:
            summarised.update(expand_ranges(ranges))
        elif action in drop_codes:
            dropped.update(expand_ranges(ranges))
    return summarised, dropped


def _manifest_source(manifest: Any, file: str | None) -> tuple[dict[str, Any], str | None]:
    if manifest is None:  # no manifest: each transcript replayed as its own agent (Q21)
        from inspector.policy import NO_MANIFEST

        return copy.deepcopy(NO_MANIFEST), None
    if isinstance(manifest, (str, os.PathLike)):
        loaded = load_manifest(os.fspath(manifest))
        return dict(loaded.raw), file or loaded.file
    if hasattr(manifest, "raw"):  # LoadedManifest
        return dict(manifest.raw), file or getattr(manifest, "file", None)
    if isinstance(manifest, Mapping):
        return dict(manifest), file
    raise TypeError(f"expected a manifest document, path or LoadedManifest, got {type(manifest).__name__}")


def _load(transcript: Any) -> Any:
    if isinstance(transcript, (str, os.PathLike)):
        from inspector.transcripts import load_transcript

        return load_transcript(transcript)
    return transcript


def transcript_label(transcript: Any) -> str:
    """How a transcript is named in the table: its path as given, or an imported one's path."""
    if isinstance(transcript, (str, os.PathLike)):
        return os.fspath(transcript)
    path = getattr(transcript, "path", None)
    conv = getattr(transcript, "conversation", 0)
    label = str(path) if path else "<transcript>"
    return f"{label}#{conv}" if conv else label


# --- the grid -------------------------------------------------------------------------------------

def grid_runs(manifest: Any, grid: Mapping[str, Sequence[Any]], overrides: Iterable[str] = ()) -> list[GridRun]:
    """The runs of ``grid`` (:func:`expand_grid`) on ``manifest`` (a path, a ``LoadedManifest``, a
    raw document, or None: a transcript's own agent) with ``overrides`` (``PATH=VALUE``) applied.

    Raises :class:`~inspector.manifest.OverrideError` when an override or a grid key names no field
    of the manifest, or a strategy parameter no strategy of the grid defines, and
    :class:`ValueError` for an empty value list."""
    doc = _grid_document(manifest, overrides)
    return expand_grid(grid, doc)


def _grid_document(manifest: Any, overrides: Iterable[str]) -> dict[str, Any]:
    """The manifest document every run starts from, overrides applied, with every grid key checked
    later against it. Raises :class:`~inspector.manifest.OverrideError` for an override naming no field."""
    from inspector.manifest import apply_overrides

    doc, _ = _manifest_source(manifest, None)
    overrides = list(overrides)
    return apply_overrides(doc, overrides) if overrides else doc


# --- the sweep ------------------------------------------------------------------------------------

class RunOptions(TypedDict, total=False):
    """How every run of a sweep replays, as :func:`sweep` takes them by keyword (each is
    :func:`sweep_one`'s keyword of the same name): ``counter``, ``summarizer`` and ``policy`` as
    for :func:`~inspector.replay.replay`; ``llm`` and ``summary_cache`` for a live summarizer;
    ``allow_imports`` for plugins named by import path; ``on_error`` (``"record"`` or ``"raise"``);
    ``unrecorded_prefix`` (``"auto"`` or N tokens); ``cache_rule`` (the prompt-cache rule)."""

    counter: str | None
    summarizer: str | None
    policy: Any
    llm: Any
    summary_cache: str | os.PathLike[str] | None
    allow_imports: Iterable[str]
    on_error: OnError
    unrecorded_prefix: int | str | None
    cache_rule: str | None


def sweep(manifest: Any, transcripts: Any, grid: Mapping[str, Sequence[Any]], *, processes: int | None = None,
          progress: Progress | bool | None = None, overrides: Iterable[str] = (), client: Any = None,
          ship: str = "bytes", **run: Unpack[RunOptions]) -> Any:
    """Replay every transcript under every grid combination; one DataFrame row per run.

    ``manifest``: a path, a ``LoadedManifest`` or a raw document; ``overrides`` (``PATH=VALUE``, as
    ``--set``) are applied to it first. ``transcripts``: one or a list of paths or imported
    transcripts. ``processes``: worker processes (``None`` = every core available, ``1`` = inline,
    no pool). ``progress``: a callable ``(done, total)``; ``None``/``True`` = a counter on stderr;
    ``False`` = silent. ``run``: how each run replays (:class:`RunOptions`). Rows come back in input
    order whatever finished first, so the table is identical for any ``processes``. See
    :func:`sweep_one` for the columns and for mapping the same function over a cluster.

    ``client``: a ``distributed.Client`` runs the same tasks on that Dask cluster instead (see
    :mod:`inspector.fleet`; ``ship`` = ``"bytes"`` or ``"path"`` says how transcripts reach the
    workers); the table is identical and ``df.attrs["fleet"]`` reports the cluster run.

    The grid spans strategy types: the runs are :func:`expand_grid`'s (a strategy parameter only
    where its strategy defines it, each distinct run once), and each row says which settings applied
    (:data:`SETTING_COLUMNS`).

    Raises :class:`~inspector.manifest.OverrideError` when an override or a grid key names no
    field of the manifest or a strategy parameter no strategy of the grid defines,
    :class:`ValueError` for an empty grid value list or ``processes`` < 1, and what
    :func:`sweep_one` raises with ``on_error="raise"``.
    """
    import pandas as pd

    doc, file = _grid_document(manifest, overrides), _manifest_source(manifest, None)[1]
    for key in grid:  # a grid key that names no field is a usage error, not a column of identical runs
        resolve_override_path(resolve_key(key), doc)
    single = isinstance(transcripts, (str, os.PathLike)) or hasattr(transcripts, "messages")
    items = [transcripts] if single else list(transcripts)
    combos = expand_grid(grid, doc)
    tasks = [(t, run.params) for t in items for run in combos]
    report = _progress_reporter(progress, len(tasks))
    runner = _Runner(doc, _row_keywords(run, file), report)
    if client is not None:  # the Dask hook: same tasks, same rows, run on a cluster
        rows, fleet = runner.on_dask(client, tasks, ship)
    else:
        rows, fleet = runner.here(tasks, _worker_count(processes, len(tasks))), None
    labels = _unique_labels(items)
    for i, row in enumerate(rows):
        row["transcript"] = labels[i // len(combos)]
        row["conversation"] = getattr(items[i // len(combos)], "conversation", 0)
        row["settings_not_applicable"] = settings_words(combos[i % len(combos)].not_applicable)
    df = pd.DataFrame(rows, columns=["transcript", "conversation", *grid.keys(), *SETTING_COLUMNS, *METRIC_COLUMNS,
                                     *CACHE_COLUMNS, *INFO_COLUMNS])
    for key in grid:  # a setting a row's strategy does not define is None there: the others keep their type
        values = [row.get(key) for row in rows]
        if any(v is None for v in values):
            df[key] = pd.Series(values, index=df.index, dtype=object)
    if fleet is not None:
        df.attrs["fleet"] = fleet.as_dict()
    return df


def _row_keywords(run: RunOptions, file: str | None) -> dict[str, Any]:
    """:func:`sweep_one`'s keywords for every run: the options as plain picklable values, and the
    manifest's file (its relative context files resolve against its folder)."""
    cache = run.get("summary_cache")
    return dict(counter=run.get("counter"), summarizer=run.get("summarizer"), manifest_file=file,
                allow_imports=tuple(run.get("allow_imports", ())), llm=run.get("llm"), policy=run.get("policy"),
                summary_cache=os.fspath(cache) if cache is not None else None,
                on_error=run.get("on_error", "record"), unrecorded_prefix=run.get("unrecorded_prefix"),
                cache_rule=run.get("cache_rule"))


class _Runner:
    """Runs a sweep's ``(transcript, combination)`` tasks as :func:`sweep_one` rows, in task order,
    reporting each finished run to ``report``: inline, on a process pool, or on a Dask cluster."""

    def __init__(self, doc: dict[str, Any], kw: dict[str, Any], report: Callable[[int], None]) -> None:
        self.doc, self.kw, self.report = doc, kw, report

    def here(self, tasks: Sequence[tuple[Any, dict[str, Any]]], workers: int) -> list[dict[str, Any]]:
        """The rows on this machine: inline with one worker, else on a process pool."""
        doc, kw = self.doc, self.kw
        if workers <= 1:
            rows = []
            for i, (t, combo) in enumerate(tasks):
                rows.append(sweep_one(doc, t, combo, **kw))
                self.report(i + 1)
            return rows
        out: list[dict[str, Any] | None] = [None] * len(tasks)
        pool = cf.ProcessPoolExecutor(max_workers=workers)
        try:
            futures = {pool.submit(sweep_one, doc, t, combo, **kw): i for i, (t, combo) in enumerate(tasks)}
            for done, fut in enumerate(cf.as_completed(futures), start=1):
                out[futures[fut]] = fut.result()
                self.report(done)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return [row for row in out if row is not None]

    def on_dask(self, client: Any, tasks: Sequence[tuple[Any, dict[str, Any]]], ship: str) -> tuple[list[dict[str, Any]], Any]:
        """The rows run on the Dask cluster of ``client``, and the cluster run's :class:`~inspector.fleet.FleetReport`."""
        from inspector.fleet import run_sweep_tasks

        rows, fleet = run_sweep_tasks(client, sweep_one, self.doc, tasks, self.kw, ship=ship,  # type: ignore[arg-type]
                                      progress=self.report)
        return list(rows), fleet


def _worker_count(processes: int | None, tasks: int) -> int:
    if processes is not None and processes < 1:
        raise ValueError(f"processes must be >= 1 (got {processes})")
    if processes is None:
        try:
            processes = len(os.sched_getaffinity(0))
        except AttributeError:  # not Linux
            processes = os.cpu_count() or 1
    return max(1, min(processes, tasks))


def _unique_labels(items: Sequence[Any]) -> list[str]:
    """The file of each item (the ``conversation`` column says which conversation): base names
    when (base name, conversation) pairs are unique (short legends), the full paths otherwise."""
    full = [transcript_label(t).split("#")[0] for t in items]
    convs = [getattr(t, "conversation", 0) for t in items]
    short = [Path(s).name for s in full]
    return short if len(set(zip(short, convs))) == len(set(zip(full, convs))) else full


def _progress_reporter(progress: Progress | bool | None, total: int) -> Callable[[int], None]:
    if progress is False or total == 0:
        return lambda done: None
    if callable(progress):
        return lambda done: progress(done, total)
    return _StderrCounter(total)


class _StderrCounter:
    """``sweep: 7/42 runs`` rewritten in place on a terminal or in Jupyter, at most every tenth of
    the way; a single final line when stderr is a file or a pipe (logs stay short)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)()) or "ipykernel" in sys.modules

    def __call__(self, done: int) -> None:
        last = done == self.total
        if self.live and (last or (10 * done) // self.total > (10 * (done - 1)) // self.total):
            self.stream.write(f"\rsweep: {done}/{self.total} runs" + ("\n" if last else ""))
        elif last:
            self.stream.write(f"sweep: {done}/{self.total} runs\n")
        else:
            return
        self.stream.flush()


# --- reading a sweep ------------------------------------------------------------------------------

def param_columns(df: Any) -> list[str]:
    """The grid columns of a sweep table (every column that is not a transcript, metric or info)."""
    return [c for c in df.columns if c not in NON_PARAM_COLUMNS]


def cost_column(df: Any) -> str | None:
    """The cost to rank on: ``cost_with_caching_usd`` (the total with prompt caching) when every run has
    one, else ``cost_usd`` (the total without caching), else ``payload_cost_usd`` (the agent's own
    calls, e.g. with the unpriced offline stand-in summarizer), else ``None``."""
    ok = df[df["error"].isna()] if "error" in df.columns else df
    for col in ("cost_with_caching_usd", "cost_usd", "payload_cost_usd"):
        if col in ok.columns and len(ok) and ok[col].notna().all():
            return col
    return None


def no_prompt_caching(df: Any) -> bool:
    """Whether no prompt caching applies to the runs of ``df`` (a sweep table or its
    :func:`by_setting` aggregate): every finished run's ``cache_rule`` is ``none``, so its
    ``cost_with_caching_usd`` is the cost without caching and the faces say so instead of "with caching"."""
    ok = df[df["error"].isna()] if "error" in df.columns else df
    return "cache_rule" in ok.columns and len(ok) > 0 and bool((ok["cache_rule"] == NO_CACHE_RULE).all())


def by_setting(df: Any) -> Any:
    """One row per grid combination, summed over transcripts (peak and budget: worst case;
    ``user_turns``: the longest transcript; ``forgotten_ids``: the union; ``forgotten_per_call``
    recomputed from the sums).

    Costs are summed only when every transcript has one (otherwise ``None``); ``runs`` counts the
    transcripts and ``errors`` the runs that failed. Rows keep the grid order."""
    import pandas as pd

    params = param_columns(df)
    work = df.assign(_all=0) if not params else df
    keys = params or ["_all"]

    def total_or_none(s: pd.Series) -> float | None:
        return round(float(s.sum()), 8) if s.notna().all() else None

    def union_ids(s: pd.Series) -> str:
        ids: list[str] = []
        for text in s.dropna():
            ids.extend(x for x in json.loads(text) if x not in ids)
        return json.dumps(ids, ensure_ascii=False)

    agg: dict[str, Any] = {c: "sum" for c in METRIC_COLUMNS}
    agg.update(user_turns="max", peak_payload="max", input_budget="min", min_headroom="min",
               payload_cost_usd=total_or_none, summary_cost_usd=total_or_none, cost_usd=total_or_none,
               forgotten_ids=union_ids)
    grouped = work.groupby(keys, sort=False, dropna=False)
    out = grouped.agg(agg)
    need = out["needing_calls"].astype(float)
    out["forgotten_per_call"] = (out["forgotten"].astype(float) / need.where(need > 0)).fillna(0.0).round(4)
    out.insert(0, "runs", grouped.size())
    out.insert(1, "errors", grouped["error"].agg(lambda s: int(s.notna().sum())))
    _cache_by_setting(out, grouped)
    out["summary_cost_basis"] = grouped["summary_cost_basis"].first()
    out["summarizer"] = grouped["summarizer"].first()
    out = out.reset_index()
    if not params:
        out = out.drop(columns="_all")
    return out


# --- prompt caching -------------------------------------------------------------------------------

def _cache_by_setting(out: Any, grouped: Any) -> None:
    """Put the prompt-cache columns of :func:`by_setting` into ``out`` when the runs have them: the
    costs summed only when every transcript has one, breaks and tokens summed, the hit share
    recomputed from the summed tokens, the rules of its runs ("none, openai" when its transcripts'
    models differ: "none" only when no run of the setting caches; every column of
    :data:`~inspector.prompt_cache.CACHE_COLUMNS`)."""
    if "cost_with_caching_usd" not in grouped.obj.columns:
        return
    import pandas as pd

    for col in (c for c in CACHE_COLUMNS if c.endswith("_usd")):
        sums = [round(float(s.sum()), 8) if s.notna().all() else None for _key, s in grouped[col]]
        out[col] = pd.Series(sums, index=out.index, dtype=object)
    for col in ("cache_breaks", "cached_tokens", "cache_input_tokens"):
        out[col] = grouped[col].sum()
    inputs = out["cache_input_tokens"].astype(float)
    share = out["cached_tokens"].astype(float) / inputs.where(inputs > 0)
    out["cache_hit_share"] = share.fillna(0.0).round(4)
    out["cache_rule"] = grouped["cache_rule"].agg(lambda s: ", ".join(dict.fromkeys(str(r) for r in s.dropna())))
