"""The replay loop: :func:`replay` drives the engine with a transcript, one frame per LLM call."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import compress, repeat
from operator import ne
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from inspector.engine import ContextEngine
from inspector.engine.history import role_of
from inspector.engine.llm import LLMEngine
from inspector.engine.managers.base import budget_terms
from inspector.engine.summarizers import Summarizer, as_summarizer, calls_a_model
from inspector.engine.summarizers.llm import SummaryCache
from inspector.engine.summarizers.standin import StandInSummarizer
from inspector.engine.types import Message
from inspector.manifest import as_settings
from inspector.policy import DEFAULT_POLICY, NO_MANIFEST, ReplayPolicy, resolve_agent, summarizer_choice
from inspector.replay.recorder import _Recorder
from inspector.replay.result import Replay

P = ParamSpec("P")
R = TypeVar("R")


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a block (restored after it, also on an error; nested
    blocks leave it to the outermost). A replay and its analyses build long-lived objects without
    cycles, which reference counting frees by itself: nothing they make waits for the collector."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _gc_paused_while(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run inside :func:`gc_paused`."""
    @functools.wraps(fn)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        with gc_paused():
            return fn(*args, **kwargs)
    return paused


@_gc_paused_while
def replay(manifest: Any, transcript: Any, *, counter: str | None = None, summarizer: str | Any = None,
           llm: LLMEngine | None = None, summary_cache: str | Path | SummaryCache | None = None,
           allow_imports: Iterable[str] = (), policy: ReplayPolicy | None = None, system: str | None = None,
           tools: str | None = None, model: str | None = None, sample: bool | None = None,
           calibration: Mapping[str, float] | None = None, unrecorded_prefix: int | str | None = None) -> Replay:
    """Replay ``transcript`` (an imported :class:`~inspector.transcripts.Transcript`) under ``manifest``.

    ``manifest`` may be None: the transcript is replayed as its own agent (its system text, tools
    and recorded model, the default strategy). ``policy`` defaults to
    :data:`~inspector.policy.DEFAULT_POLICY`; ``counter``, ``summarizer``, ``system``, ``tools`` and
    ``model`` change single fields of it (see :mod:`inspector.policy`). ``summarizer`` may also be
    a summarizer object. ``sample`` says the manifest is a bundled sample (default: judged from its
    file). What was in force is on the result: :attr:`Replay.policy`, :attr:`Replay.agent`.

    ``calibration`` (``{model: factor}``, opt-in) makes the budget apply a token correction factor
    for the manifest's model (see :mod:`inspector.calibration`); the manifest's own
    ``spec.models[].token_calibration`` applies otherwise. Every frame's budget states the factor
    in force and its source.

    ``unrecorded_prefix`` (``"auto"`` or a number of provider tokens, opt-in) adds what the log does
    not record (Claude Code's system prompt and tool schemas) to every call's budget as a fixed part:
    ``"auto"`` is the fitted offset of :func:`inspector.calibration.calibrate`
    (:func:`inspector.calibration.resolve_prefix`). The budget records it (``Budget.prefix`` and its
    source); :attr:`Replay.unrecorded` holds the estimate whenever the log leaves something out.
    """
    custom = summarizer if summarizer is not None and not isinstance(summarizer, str) else None
    pol = (policy or DEFAULT_POLICY).with_(counter=counter, summarizer=summarizer if custom is None else None,
                                           system=system, tools=tools, model=model)
    cache = SummaryCache(summary_cache) if isinstance(summary_cache, (str, Path)) else summary_cache
    settings = as_settings(NO_MANIFEST if manifest is None else manifest, allow_imports)
    if sample is None:  # a bundled sample says so inside the file
        sample = manifest is None or settings.sample
    settings, agent = resolve_agent(settings, transcript, pol, sample=sample)
    mode = custom if custom is not None else summarizer_choice(settings, pol.summarizer, live=llm is not None)
    engine = ContextEngine(settings, counter=pol.counter, llm=llm, summarizer=mode, summary_cache=cache,
                           allow_imports=allow_imports, calibration=calibration)
    unrecorded = _add_unrecorded_prefix(engine, transcript, unrecorded_prefix)
    agent = dataclasses.replace(agent, window=engine.limits.window, window_source=engine.limits.window_source)
    summ, label = _bound_summarizer(engine, settings)
    rp = Replay(transcript, settings, engine.counter.name, pol.summarizer if custom is None else "custom",
                label, limits=engine.limits.as_dict(), policy=pol, agent=agent, unrecorded=unrecorded,
                terms=budget_terms(engine.cm))
    rp.summary_price_model = None if summ is None else summ.price_model
    _drive(rp, engine, summ, transcript, transcript_system=agent.system == "transcript")
    rp.summarizer_calls = dict(engine.summarizer_calls)
    rp.tokens_computed = engine.counter.computed
    rp.token_counter = engine.counter
    if isinstance(cache, SummaryCache):
        rp.summary_cache_hits = cache.hits
    rp.summary_cost_usd = _summary_cost(summ)
    return rp


def _add_unrecorded_prefix(engine: ContextEngine, transcript: Any, unrecorded_prefix: int | str | None) -> Any:
    """The transcript's unrecorded prefix (:class:`inspector.calibration.PrefixEstimate`), or None
    when its log leaves nothing out and none is asked for; when ``unrecorded_prefix`` resolves to
    some tokens, the engine's limits count them as a fixed part of every call (with their source).
    Raises :class:`~inspector.calibration.PrefixError` when ``unrecorded_prefix`` cannot be resolved."""
    missing = (getattr(transcript, "meta", None) or {}).get("not_recorded")
    if not missing and unrecorded_prefix in (None, 0):
        return None
    from inspector.calibration import estimate_prefix, resolve_prefix

    unrecorded = estimate_prefix(transcript, engine.counter.name)
    tokens, source = resolve_prefix(unrecorded_prefix, transcript, engine.counter.name)
    if tokens:
        engine.limits = dataclasses.replace(engine.limits, prefix=tokens, prefix_source=source)
    return unrecorded


def _bound_summarizer(engine: ContextEngine, settings: Any) -> tuple[Summarizer | None, str]:
    """The summarizer the engine's context manager holds (None for a manager that does not
    summarise) and how faces name it. An offline stand-in without a price model is priced at the
    rates of the model an ``llm`` summarizer would use under ``settings``."""
    bound = getattr(engine.cm, "summarizer", None)  # only a summarising manager holds one
    summ = None if bound is None else as_summarizer(bound)
    label = "none" if summ is None else summ.label
    if label == "llm" and not calls_a_model(summ):
        label = "llm without a live model (folds like drop: no call, no cost)"
    if isinstance(summ, StandInSummarizer):
        label = "offline stand-in (not a model)"
        if summ.price_model is None:  # priced at the summary model's rates
            summ.price_model = _summary_model(settings, engine.limits.effective_model)
    return summ, label


def _last_call(roles: Sequence[str]) -> tuple[int, bool]:
    """Where the last call stands: the index of the last row that is not a system row (-1: none),
    and whether a call is pending (the transcript does not end with a reply). The last call is
    made before the last assistant message, or after every row when one is pending; no row after
    it is ever sent."""
    last = next((i for i in range(len(roles) - 1, -1, -1) if roles[i] != "system"), -1)
    return last, last < 0 or roles[last] != "assistant"


def _prime(engine: ContextEngine, msgs: Sequence[Message], roles: Sequence[str], *, transcript_system: bool) -> bool:
    """Let a counter of ours measure, in one pass before the first call, every row a call may send
    (a transcript's system row only when it is the prompt); a counter without ``prime`` measures
    each row on first use. Returns whether a call is pending (:func:`_last_call`)."""
    last, pending = _last_call(roles)
    prime = getattr(engine.counter, "prime", None)
    if prime is not None:
        sendable = msgs if pending else msgs[:last]
        prime(sendable if transcript_system else compress(sendable, map(ne, roles, repeat("system"))))
    return pending


def _drive(rp: Replay, engine: ContextEngine, summ: Summarizer | None, transcript: Any, *,
           transcript_system: bool) -> None:
    """Drive ``engine`` with the transcript's rows in order, recording onto ``rp``: an assistant row
    is one call (a frame), a user row commits the open turn and starts the next, a system row
    replaces the system band from there on when the transcript's system text is in force (and is
    otherwise left out), any other row is recorded (rows before the first user message open the
    preamble turn). The transcript's end records the pending call or the last commit."""
    msgs: list[Message] = transcript.messages
    rec = _Recorder(rp, engine, summ, msgs, dict(getattr(transcript, "usage", {}) or {}))
    conv = engine.conversation
    record = engine.record  # through the engine (whatever it does with a recorded row)
    call, user = rec.call, rec.user
    roles = list(map(role_of, msgs))
    pending = _prime(engine, msgs, roles, transcript_system=transcript_system)
    for i, m, role in zip(range(len(msgs)), msgs, roles):
        if role == "assistant":  # a call
            call(i)
        elif role == "user":
            user(m)
            continue
        elif role == "system":
            if transcript_system:
                conv.system_message = m  # a mid-transcript system message replaces the band from here on
            continue
        elif not rec.open_turn:  # a row before the first user message
            rec.open_preamble()
        record(m)
    rec.finish(pending=pending)


def _summary_cost(summ: Summarizer | None) -> float | None:
    """USD of all the summarizer's logged calls at the summary model's price (0 without a summarizer)."""
    return 0.0 if summ is None else summ.cost(summ.usage)


def _summary_model(settings: Any, agent_model: str | None) -> str | None:
    """The model an ``llm`` summarizer would use under these settings (how the stand-in is priced)."""
    from inspector.engine.summarizers.llm import resolve_summary_model

    binding = getattr(settings, "summarizer", None)
    requested = binding.params.get("model") if binding is not None else None
    return resolve_summary_model(requested, settings.models, agent_model)[0]


