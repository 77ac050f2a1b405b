"""What users run, timed end to end against the engine's floor, in one run (issue 26).

Every figure is measured in this one run on this machine, so only ratios mean anything (the machine
is shared: the load average is printed at the start and the end). The floor and the generated
transcripts are those of ``benchmarks/replay_scaling.py``: one tiktoken pass over every text of the
2 000-turn transcript (contents, tool-call arguments, each tool name once), best of the passes made
during the run. For every context manager the plugin registry holds (``replay_scaling.STRATEGIES``:
the seeds' with issue 13's settings, the others with their defaults, which act on these transcripts;
a 120 000-token window, tiktoken, gpt-4o, so the prompt cache is accounted under OpenAI's rule, the
one users get by default for that model), after the number of calls it changed (left a row out or
replaced one):

(a) ``replay()`` in process, at 1 000 and 2 000 turns (best of ``--repeat``);
(b) the prompt-cache accounting of that replay (:func:`inspector.prompt_cache.account`, the default
    rule) and the forgetting analysis (``call_needs``), and the latter's time ÷ the replay's;
(c) ``context-inspector replay M T.json`` to JSON and ``--format table``, in a fresh process each,
    the cheapest of ``--cli-repeat`` rounds in which the commands take turns, as CPU seconds of the
    child (a loaded machine moves them far less than wall clock) after its start-up: the child
    (``benchmarks/cli_after_startup.py``) first runs the same command on a one-turn transcript
    (interpreter, imports, tiktoken's encoding) and reports its CPU so far, which is subtracted in
    the same process; ÷ the floor's CPU seconds, and the JSON's t(2 000) ÷ t(1 000) (the JSON holds
    the forgetting and the prompt cache, as users get it). The start-up itself (the one-turn command
    in a process of its own) prints beside them;
(d) one enormous turn (one user message, 2 500 / 5 000 tool rounds), every registered strategy, in a
    32 000-token window and in one that holds the turn: replay + forgetting in CPU seconds (the cheapest
    of ``--repeat`` rounds in which the sizes take turns), t(5 000) ÷ t(2 500),
    how many (call, identifier) pairs the forgetting answer holds, and how many calls the context
    manager and the trimmer changed at each size (:func:`changed_of`, counted after the timing) (a strategy more than
    ``GROWTH_LIMIT``-fold from 1 250 to 2 500 rounds is reported superlinear, not run at 5 000);
(e) ``sweep`` over a fleet (``--fleet`` generated support conversations of 6-12 turns with three planted
    facts and distractors, :mod:`inspector.planted`, so the analysis has identifiers to track; the 12
    settings and manifest of ``benchmarks/fleet.py``; one process) with the forgetting analysis and
    with it stubbed out;
(f) the app (``context-inspector app T.json``, the 2 000-turn transcript as its own agent) in Debian's
    headless Chromium: first render (from the page opened on a server that is up to call 0 and the
    timeline drawn) ÷ the trivial page's first render with one Plotly chart
    (``benchmarks/app_floor.py?plotly=1``), and the median Next-click settle ÷ the trivial page's.

(a)-(c): a strategy whose replay record more than triples from 250 to 500 turns (``replay_scaling.growth``)
is superlinear: its growth prints as a missed target and it is not run at 1 000 / 2 000 turns.

(c) and (d) also print, as context, each ratio at the same mix (:func:`half_scale`): the smaller size
replayed in half the window with every parameter counted in tokens halved, so it reaches its triggers
and its budget at the same share of its calls as the larger size at the full ones. A strategy's calls
cost differently by what it decides (a call under clear-tool-results' trigger sends the log as it is, a
clearing one replaces rows and breaks the prompt cache); where the share of each changes between the
two sizes, the ratio as specified also measures that change, the same-mix ratio only how the work grows.

(g) as context, the peer: LangChain's ``trim_messages`` (``strategy="last"``, ``include_system``,
    ``start_on="human"``) with a memoised tiktoken counter (each message counted once, by identity;
    content and tool-call arguments, as the floor), called once per LLM call of the 2 000-turn
    transcript on the messages before its reply, at the input budget our stack replay computed for
    that call: trimming alone, no record, no analysis. Run when ``langchain-core`` is installed
    (``pip install -e '.[bench]'``), else said so.

Every target prints as ``measured/target``.

    .venv/bin/python benchmarks/end_to_end.py [--quick] [--repeat 5] [--cli-repeat 7] [--fleet 200] [--no-app] [--steps 10]

``--quick``: 250 / 500 turns, 500 / 1 000 rounds, a 40-conversation fleet (a smoke run, not the figures).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import cli_startup  # noqa: E402
from replay_scaling import (  # noqa: E402
    GROWTH_LIMIT,
    STRATEGIES,
    WINDOW,
    _functions,
    acting_calls,
    growth,
    one_enormous_turn,
    plain_rows,
    synth,
)

from inspector.engine.tokens import TiktokenCounter, content_text  # noqa: E402
from inspector.forgetting import call_needs  # noqa: E402
from inspector.manifest import settings_from_dict  # noqa: E402
from inspector.prompt_cache import account  # noqa: E402
from inspector.replay import replay  # noqa: E402

EXE = [sys.executable, "-m", "inspector"]
TARGETS: list[tuple[str, float, float]] = []  # (what, measured, target): printed together at the end


def taking_turns(cases: dict[Any, Callable[[], Any]], times: int, before: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> dict[Any, tuple[float, Any]]:
    """Per case (by key), the fastest of ``times`` calls and the last result, as :func:`best`, with the
    cases taking turns (one call of each, ``times`` rounds): a stretch in which the shared machine
    runs slow then falls on every case, not on all the calls of one, as when each case's calls ran
    back to back (one such stretch once read an enormous turn's 5 000 rounds 0.62 s against
    0.49-0.51 s in every run before, all three of its calls in it)."""
    fastest: dict[Any, float] = dict.fromkeys(cases, float("inf"))
    out: dict[Any, Any] = dict.fromkeys(cases)
    for _ in range(times):
        for key, fn in cases.items():
            out[key] = None
            if before is not None:
                before()
            gc.collect()
            t0 = clock()
            out[key] = fn()
            fastest[key] = min(fastest[key], clock() - t0)
    return {key: (fastest[key], out[key]) for key in cases}


def cold_texts() -> None:
    """Forget the identifiers the analysis remembers by text, so each timed run extracts them again
    (a fresh process would; within one sweep the memory is the point)."""
    from inspector.forgetting_index import default_identifiers

    default_identifiers.cache_clear()


def target(what: str, measured: float, limit: float) -> str:
    TARGETS.append((what, measured, limit))
    return f"{measured:.2f}/{limit:g}"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def settings(cm: dict[str, Any], window: int = WINDOW) -> Any:
    return settings_from_dict({"kind": "Agent", "spec": {"context_manager": cm,
                                                          "models": [{"model": "gpt-4o", "context_window": window}]}})


def best(fn: Callable[[], Any], times: int, before: Callable[[], None] | None = None,
         clock: Callable[[], float] = time.perf_counter) -> tuple[float, Any]:
    """The fastest of ``times`` calls of ``fn`` (each from a collected heap, the last result kept),
    by ``clock`` (wall clock unless said): :func:`taking_turns` of one case."""
    return taking_turns({0: fn}, times, before, clock)[0]


def half_scale(cm: dict[str, Any]) -> dict[str, Any]:
    """``cm`` with every parameter its params model counts in tokens (:func:`inspector.params.unit_of`)
    at half its value, written or default (a zero or unset one stays): replayed in half the window, a
    transcript of half the turns meets the triggers and the budget at the same share of its calls."""
    from inspector.params import unit_of
    from inspector.plugins import default_registry

    spec = default_registry().find("context_manager", cm["type"])
    model = spec.params_model if spec is not None else None
    params = dict(cm.get("params", {}))
    for name, info in (model.model_fields.items() if model is not None else ()):
        value = params.get(name, info.default)
        if unit_of(model, name) == "tokens" and type(value) is int and value > 0:
            params[name] = value // 2
    return {**cm, "params": params} if params else cm


def cli(commands: dict[str, tuple[list[str], list[str] | None]], times: int) -> dict[str, float]:
    """CPU seconds (user + system) of the cheapest of ``times`` fresh ``context-inspector`` processes
    per command (by key: its arguments and the arguments of its warm-up, or None), in
    :func:`cli_startup.env`: bytecode cached, as after ``pip install`` (a PYTHONDONTWRITEBYTECODE in
    the calling shell would add compiling the package to every start-up, which users do not pay). A
    command with a warm-up runs in ``benchmarks/cli_after_startup.py``: the same process runs the
    warm-up first (the command on a one-turn transcript: its start-up) and the figure is the CPU it
    spends after it, so no other process's start-up, with its own noise, is subtracted. On a shared
    machine a child's CPU time moves far less with the load than its wall clock. The commands take
    turns (one run of each, ``times`` rounds), so all are sampled in the same stretches of the load."""
    env = cli_startup.env()  # the user's situation: bytecode cached, as after ``pip install``
    cheapest = dict.fromkeys(commands, float("inf"))
    for _ in range(times):
        for key, (args, warm) in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            if warm is None:
                subprocess.run([*EXE, *args], check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                spent_before = 0.0
            else:
                spent_before = after_startup(args, warm, env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            spent = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            cheapest[key] = min(cheapest[key], spent - spent_before)
    return cheapest


def after_startup(args: list[str], warm: list[str], env: dict[str, str]) -> float:
    """Run ``args`` in a ``benchmarks/cli_after_startup.py`` child warmed up by ``warm``; returns the
    CPU seconds the child reported for its warm-up (the caller has its whole CPU from the rusage)."""
    read, write = os.pipe()
    with os.fdopen(read, "rb") as pipe:
        try:
            child = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "cli_after_startup.py"), str(write),
                                      *warm, "--", *args], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, pass_fds=(write,))
        finally:
            os.close(write)  # (the child holds its own copy: the read ends when the child closes it)
        said = pipe.read()
    if child.wait() != 0 or not said.strip():
        raise subprocess.CalledProcessError(child.returncode, child.args)
    return float(said)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cli-repeat", type=int, default=7, help="rounds of the CLI commands (each the cheapest)")
    ap.add_argument("--fleet", type=int, default=None, help="conversations in the fleet sweep (default 200)")
    ap.add_argument("--no-app", action="store_true", help="skip the browser measurements")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--app-only", action="store_true", help="only the browser measurements")
    args = ap.parse_args(argv)
    if args.app_only:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"synthetic_{1000 if args.quick else 2000}.json"
            path.write_text(json.dumps({"messages": synth(1000 if args.quick else 2000).messages}))
            app(path, args)
        print("targets (measured/target): " + "; ".join(f"{w} {m:.2f}/{t:g}" for w, m, t in TARGETS))
        return 0
    small, big = (250, 500) if args.quick else (1000, 2000)
    rounds = (500, 1000) if args.quick else (2500, 5000)
    fleet_n = args.fleet or (40 if args.quick else 200)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {load()} at the start")

    trs = {n: synth(n) for n in (small, big)}
    replay(settings(STRATEGIES["stack (no cap)"]), synth(5), counter="tiktoken")  # warm-up: lazy imports
    counter = TiktokenCounter(model="gpt-4o")
    msgs = trs[big].messages
    names = {str(fn.get("name", "")) for m in msgs for fn in _functions(m)}
    passes: list[float] = []
    cpu_passes: list[float] = []

    def floor_pass() -> None:
        gc.collect()
        t0 = time.perf_counter()
        c0 = time.process_time()
        for m in msgs:
            counter.text_tokens(content_text(m.get("content")))
            for fn in _functions(m):
                counter.text_tokens(str(fn.get("arguments", "")))
        for name in names:
            counter.text_tokens(name)
        passes.append(time.perf_counter() - t0)
        cpu_passes.append(time.process_time() - c0)

    for _ in range(3):
        floor_pass()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = {}
        for n, tr in {**trs, 1: synth(1)}.items():
            files[n] = folder / f"synthetic_{n}.json"
            files[n].write_text(json.dumps({"messages": tr.messages}))
        manifests, halves = {}, {}
        for name, cm in STRATEGIES.items():
            for out, c, w, tail in ((manifests, cm, WINDOW, ""), (halves, half_scale(cm), WINDOW // 2, "-half")):
                out[name] = folder / f"{name.split()[0]}{tail}.yaml"
                out[name].write_text(json.dumps({
                    "apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "bench"},
                    "spec": {"models": [{"id": "main", "model": "gpt-4o", "context_window": w}], "context_manager": c}}))

        rows = []
        superlinear = {}
        for name, cm in STRATEGIES.items():
            g = growth(cm, (small // 4, small // 2))
            if g > GROWTH_LIMIT:
                superlinear[name] = g
                continue
            s = settings(cm)
            t_rp, t_fg, t_cache, acted, calls = {}, {}, {}, {}, {}
            for n in (small, big):
                t_rp[n], rp = best(lambda: replay(s, trs[n], counter="tiktoken"), args.repeat,
                                   before=floor_pass if n == big else None)
                t_fg[n], _ = best(lambda: call_needs(rp), args.repeat, before=cold_texts)
                t_cache[n], _ = best(lambda: account(rp), args.repeat)
                acted[n], calls[n] = acting_calls(rp), len(rp.frames)
                del rp
            acted["half"] = acting_calls(replay(settings(half_scale(cm), WINDOW // 2), trs[small], counter="tiktoken"))
            m = str(manifests[name])
            warm_json, warm_table = ["replay", m, str(files[1])], ["replay", m, str(files[1]), "--format", "table"]
            cpu = cli({"start-up json": (warm_json, None), "start-up table": (warm_table, None),
                       **{f"json {n}": (["replay", m, str(files[n])], warm_json) for n in (small, big)},
                       "json half": (["replay", str(halves[name]), str(files[small])],
                                     ["replay", str(halves[name]), str(files[1])]),
                       "table": (["replay", m, str(files[big]), "--format", "table"], warm_table)}, args.cli_repeat)
            startup = {"json": cpu["start-up json"], "table": cpu["start-up table"]}
            t_json = {n: cpu[f"json {n}"] for n in (small, big, "half")}
            t_table = cpu["table"]
            rows.append((name, t_rp, t_fg, t_cache, (acted, calls), t_json, t_table, startup))
        floor, cpu_floor = min(passes), min(cpu_passes)
        print(f"(a)-(c) transcripts {small:,} / {big:,} turns ({len(trs[small].messages):,} / {len(msgs):,} messages), "
              f"tiktoken, {WINDOW:,}-token window; floor = one tiktoken pass over the {big:,}-turn texts = "
              f"{floor:.3f} s (best of {len(passes)}, median {statistics.median(passes):.3f} s; CPU {cpu_floor:.3f} s); "
              "the CLI columns are CPU seconds of the child process after its start-up (subtracted in the child), "
              "÷ the CPU floor")
        print(f"{'strategy':>30} | calls changed | replay ×floor | cache ×floor | forgetting ×floor | "
              f"forgetting÷replay | CLI JSON ×floor | CLI JSON t({big})/t({small}) | same mix | CLI table ×floor | "
              "start-up JSON/table")
        for name, t_rp, t_fg, t_cache, (acted, calls), t_json, t_table, startup in rows:
            print(f"{name:>30} | {acted[big]:13,} | {t_rp[big] / floor:13.2f} | {t_cache[big] / floor:12.2f} | "
                  f"{t_fg[big] / floor:17.2f} | "
                  f"{target(f'{name}: forgetting ÷ replay at {big}', t_fg[big] / t_rp[big], 1.0):>17} | "
                  f"{target(f'{name}: CLI JSON ×floor at {big}', t_json[big] / cpu_floor, 8.0):>15} | "
                  f"{target(f'{name}: CLI JSON t({big})/t({small})', t_json[big] / t_json[small], 2.2):>24} | "
                  f"{t_json[big] / t_json['half']:8.2f} | "
                  f"{t_table / cpu_floor:16.2f} | {startup['json']:.2f} s / {startup['table']:.2f} s"
                  f"   [replay {t_rp[small]:.2f}/{t_rp[big]:.2f} s, cache {t_cache[small]:.2f}/{t_cache[big]:.2f} s, "
                  f"forgetting {t_fg[small]:.2f}/{t_fg[big]:.2f} s, CLI JSON {t_json[small]:.2f}/{t_json[big]:.2f} s; "
                  f"calls changed {acted[small]:,} of {calls[small]:,} / {acted[big]:,} of {calls[big]:,}, "
                  f"{acted['half']:,} at {small:,} turns at half scale]")
        for name, g in superlinear.items():
            target(f"{name}: replay record growth {small // 4}→{small // 2} turns", g, 2.2)
            print(f"{name:>30} | superlinear: its replay record grows ×{g:.2f} from {small // 4} to {small // 2} "
                  f"turns (> {GROWTH_LIMIT:g}); not run at {small:,} / {big:,} turns")

        # (d) one enormous turn, every strategy: the 32k window (the turn overflows it: every later
        # call lacks the trimmed rounds), then a window that holds the whole turn (the analysis alone)
        for window in (32_000, 400_000):
            enormous(rounds, window, args.repeat)

        # (e) a fleet sweep with and without the forgetting analysis
        import inspector.forgetting as forgetting
        from fleet import GRID, MANIFEST

        from inspector.planted import planted_conversation
        from inspector.sweep import sweep

        paths = []
        for k in range(fleet_n):  # support conversations with identifiers to track (planted facts, distractors)
            paths.append(folder / f"conv{k:05d}.json")
            paths[-1].write_text(json.dumps({"messages": planted_conversation(k, turns=6 + k % 7, facts=3).transcript.messages}))
        fleet_manifest = folder / "fleet.yaml"
        fleet_manifest.write_text(json.dumps(MANIFEST))
        sweep(fleet_manifest, paths[:2], {"keep_turns": [2]}, processes=1, progress=False)  # warm-up
        t_with, table = best(lambda: sweep(fleet_manifest, paths, GRID, processes=1, progress=False), 1,
                             before=cold_texts)
        real = forgetting.call_needs
        forgetting.call_needs = lambda rp, extractor=None: []  # type: ignore[assignment,misc]
        try:
            t_without, _ = best(lambda: sweep(fleet_manifest, paths, GRID, processes=1, progress=False), 1)
        finally:
            forgetting.call_needs = real
        runs = len(paths) * 12
        print(f"(e) sweep, {fleet_n} conversations × 12 settings = {runs} runs, one process: with forgetting "
              f"{t_with:.1f} s, without {t_without:.1f} s: "
              f"{target('fleet sweep with ÷ without forgetting', t_with / t_without, 1.5)}"
              f"   [{int(table['forgotten'].sum()):,} forgotten references, "
              f"{int(table['needing_calls'].sum()) if 'needing_calls' in table else 0:,} calls needing an earlier identifier]")

        peer(trs[big], floor)
        if not args.no_app:
            app(files[big], args)
    print(f"{load()} at the end")
    print("targets (measured/target): " + "; ".join(f"{w} {m:.2f}/{t:g}{'' if m <= t else ' MISSED'}"
                                                    for w, m, t in TARGETS))
    return 0


def peer(tr: Any, floor: float) -> None:
    """(g): LangChain's ``trim_messages`` with a memoised counter on every call of ``tr`` (see the
    module's doc), its time ÷ ``floor``; a line saying it was not run when langchain-core is missing."""
    try:
        from langchain_core.messages import BaseMessage, convert_to_messages, trim_messages
    except ImportError:
        print("(g) peer: langchain-core is not installed (pip install -e '.[bench]'); not run")
        return
    counter = TiktokenCounter(model="gpt-4o")
    memo: dict[int, int] = {}

    def one(m: BaseMessage) -> int:  # memoised by identity: each message is tokenised once
        n = memo.get(id(m))
        if n is None:
            args = "".join(str(c.get("args", "")) for c in getattr(m, "tool_calls", None) or ())
            n = memo[id(m)] = counter.text_tokens(content_text(m.content)) + counter.text_tokens(args) + 3
        return n

    def tokens(messages: list[BaseMessage]) -> int:  # the list counter trim_messages calls
        return sum(map(one, messages))

    lc = convert_to_messages(tr.messages)
    rp = replay(settings(STRATEGIES["stack (no cap)"]), tr, counter="tiktoken")
    calls = [(f.at, f.input_budget) for f in rp.frames]
    del rp
    gc.collect()
    t0 = time.perf_counter()
    kept = sum(len(trim_messages(lc[:at], max_tokens=budget, token_counter=tokens, strategy="last",
                                 include_system=True, start_on="human")) for at, budget in calls)
    took = time.perf_counter() - t0
    print(f"(g) peer, as context: LangChain trim_messages (memoised tiktoken counter) over the {len(calls):,} calls: "
          f"{took:.2f} s = {took / floor:.1f}× the floor (trimming only; {kept:,} messages kept in all)")


def changed_of(rp: Any) -> str:
    """"m/t of n": how many of the replay's n calls the context manager changed (replaced a row, or left
    out more rows than the trimmer cut) and how many the trimmer cut."""
    managed = trimmed = 0
    for f in rp.frames:
        cut = sum(b - a for a, b in f.trimmed)
        trimmed += cut > 0
        managed += bool(f.replaced) or plain_rows(f) + cut < f.at
    return f"{managed:,}/{trimmed:,} of {len(rp.frames):,}"


def enormous(rounds: tuple[int, int], window: int, repeat: int) -> None:
    """(d) for every registered strategy at ``window``: replay + forgetting at ``rounds`` tool rounds
    of one user turn, t(2n) ÷ t(n), the sizes and the same-mix run taking turns (:func:`taking_turns`).
    A strategy whose time grows more than ``GROWTH_LIMIT``-fold from
    half ``rounds[0]`` to ``rounds[0]`` (one run each) is superlinear: its growth prints as a missed target and it
    is not run at the full sizes (a quadratic path would take minutes there). CPU seconds (this
    process's), which a shared machine's load moves far less than the wall clock."""
    def both(tr: Any, s: Any) -> int:
        rp = replay(s, tr, counter="tiktoken")
        return sum(len(c.forgotten) for c in call_needs(rp))

    for name, cm in STRATEGIES.items():
        s = settings(cm, window=window)
        what = f"{name}: one enormous turn t(2n)/t(n) at {window // 1000}k, forgetting included"
        probe = (rounds[0] // 2, rounds[0])
        small = {n: best(lambda n=n: both(one_enormous_turn(n), s), 1, before=cold_texts, clock=time.process_time)[0]
                 for n in probe}
        if small[probe[1]] / small[probe[0]] > GROWTH_LIMIT:
            target(f"{what} (probe {probe[0]}→{probe[1]} rounds)", small[probe[1]] / small[probe[0]], 2.2)
            print(f"(d) {name:>30}, {window // 1000}k window: superlinear: t({probe[1]})/t({probe[0]}) = "
                  f"{small[probe[1]] / small[probe[0]]:.2f} (> {GROWTH_LIMIT:g}); not run at {rounds[0]:,} / {rounds[1]:,} rounds")
            continue
        half = settings(half_scale(cm), window=window // 2)
        cases = {n: (lambda tr=one_enormous_turn(rounds[0] if n == "half" else n), on=on: both(tr, on))
                 for n, on in ((rounds[0], s), (rounds[1], s), ("half", half))}
        timed = taking_turns(cases, repeat, before=cold_texts, clock=time.process_time)
        times = {n: t for n, (t, _pairs) in timed.items()}
        pairs = {n: p for n, (_t, p) in timed.items()}
        changed = {n: changed_of(replay(on, one_enormous_turn(rounds[0] if n == "half" else n), counter="tiktoken"))
                   for n, on in ((rounds[0], s), (rounds[1], s), ("half", half))}  # (after the timing: not timed)
        print(f"(d) {name:>30}, {window // 1000}k window, replay + forgetting: t({rounds[1]})/t({rounds[0]}) = "
              f"{target(what, times[rounds[1]] / times[rounds[0]], 2.2)}, same mix "
              f"{times[rounds[1]] / times['half']:.2f}   [{times[rounds[0]]:.2f} s, "
              f"{times[rounds[1]]:.2f} s, {times['half']:.2f} s at half scale; forgotten (call, identifier) pairs "
              f"{pairs[rounds[0]]:,} / {pairs[rounds[1]]:,}; calls changed by the manager/trimmer {changed[rounds[0]]} / "
              f"{changed[rounds[1]]}, "
              f"{changed['half']} at half scale]")


QUIET_LOAD, QUIET_WAIT = 1.0, 90.0


def quiet_machine() -> float:
    """Wait until the one-minute load average is under ``QUIET_LOAD`` (at most ``QUIET_WAIT``
    seconds) and return the seconds waited. Run right after a CPU-heavy stretch (the sweep before
    it), the browser's first render was measured up to 0.4 s slower than a minute later, though the
    two pages alternate: Chromium and both servers share the two cores with what is still running."""
    t0 = time.perf_counter()
    while os.getloadavg()[0] >= QUIET_LOAD and time.perf_counter() - t0 < QUIET_WAIT:
        time.sleep(2)
    return time.perf_counter() - t0


def app(transcript: Path, args: argparse.Namespace) -> None:
    """(f): the app's first render and step on the 2 000-turn transcript vs the trivial page's.

    Both servers stay up and the two pages are opened alternately, ``APP_ROUNDS`` times each (a
    fresh browser context every time: nothing cached), each followed by its Next clicks, so a change
    in the machine's load falls on both; the ratios are of the medians over the rounds."""
    from app_browser import CHROMIUM, CURSOR, serve, steps, wait_call
    from playwright.sync_api import sync_playwright
    from streamlit_server import free_port, served

    from inspector.bundled import app_command

    settled = quiet_machine()
    load_before = os.getloadavg()[0]

    def measure(browser: Any, url: str, drawn: str, cursor: str | None) -> tuple[float, list[float]]:
        """Seconds from opening ``url`` to call 0 and the chart ``drawn`` on screen; then the Next
        clicks' settle times (ms), after two clicks that warm the first steps' caches."""
        pg = browser.new_page(viewport={"width": 1440, "height": 900})
        pg.set_default_timeout(300_000)
        t0 = time.perf_counter()
        pg.goto(url)
        wait_call(pg, 0)
        pg.wait_for_selector(drawn)
        first = time.perf_counter() - t0
        steps(pg, 2, cursor=cursor)
        out = steps(pg, args.steps, cursor=cursor)
        pg.context.close()
        return first, out

    firsts: dict[str, list[float]] = {"floor": [], "app": []}
    stepped: dict[str, list[float]] = {"floor": [], "app": []}
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with sync_playwright() as pw, serve(ROOT / "benchmarks" / "app_floor.py") as (floor_port, _), \
            served(app_command(transcript=str(transcript), port=port), port, cwd=ROOT, env=env,
                   out=subprocess.DEVNULL, timeout=600.0) as t_up:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        pages = {"floor": (f"http://127.0.0.1:{floor_port}/?plotly=1", ".st-key-floor_chart .js-plotly-plot .barlayer",
                           None),
                 # a long conversation's timeline is stacked areas (scatter), a short one's bars
                 "app": (f"http://127.0.0.1:{port}/", ".st-key-timeline .js-plotly-plot .scatterlayer .trace, "
                         ".st-key-timeline .js-plotly-plot .barlayer .trace", CURSOR)}
        for _ in range(APP_ROUNDS):
            for name, (url, drawn, cursor) in pages.items():
                first, out = measure(browser, url, drawn, cursor)
                firsts[name].append(first)
                stepped[name] += out
        browser.close()
    med = {name: (statistics.median(firsts[name]), statistics.median(stepped[name])) for name in firsts}
    rounds = [a / f for a, f in zip(firsts["app"], firsts["floor"], strict=True)]
    print(f"(f) app on the {transcript.stem.split('_')[-1]}-turn transcript (its own agent), {APP_ROUNDS} rounds "
          f"alternating with the trivial page, medians: server up after {t_up:.1f} s; first render "
          f"{med['app'][0]:.2f} s vs the trivial page with one Plotly chart {med['floor'][0]:.2f} s: "
          f"{target('app first render ÷ trivial page', med['app'][0] / med['floor'][0], 2.0)} "
          f"(rounds {', '.join(f'{r:.2f}' for r in rounds)}); Next-click settle median {med['app'][1]:.0f} ms vs "
          f"trivial {med['floor'][1]:.0f} ms ({len(stepped['app'])} clicks each): "
          f"{target('app step ÷ trivial step', med['app'][1] / med['floor'][1], 2.5)}   "
          f"[load average {load_before:.2f} → {os.getloadavg()[0]:.2f} during (f), after waiting {settled:.0f} s for it "
          f"to fall under {QUIET_LOAD:g}]")


APP_ROUNDS = 7
"""How many times (f) opens each page, alternately (:func:`app`)."""


if __name__ == "__main__":
    raise SystemExit(main())
