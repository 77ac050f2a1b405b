"""The app's first page, prepared by the server before it listens.

:func:`prepare_first_page` (called by :func:`inspector.cli.app_server.warm_up`) reads the same
inputs the first page reads — the manifest and transcript chosen at launch, the default counter,
summarizer and agent switches — and computes what the page's cached functions would: the
conversation list, the parsed transcript and the replay (with its event index, forgetting
analysis and timeline figure). Each is stored under the exact cache key the app's function is called with, and
:func:`take_prepared` hands it out once, on the first call with that key; any other key (the user
changed a setting, edited the manifest, uploaded a file) finds nothing and computes as before.
:func:`app_replay` is the one replay call both paths make, so a prepared replay is the one the
page would have made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspector.app import inputs
from inspector.app.stepper import app_timeline
from inspector.app.stepping import event_calls
from inspector.bundled import AppLaunch, app_launch
from inspector.replay import Replay

FIRST_COUNTER = "tiktoken"
"""The token counter the app's sidebar starts on (its first option, the policy's default)."""

FIRST_AGENT_SWITCHES = ("auto", "auto")
"""The sidebar's "System text & tools" and "Model & window" switches as a fresh session starts."""

_PREPARED: dict[tuple[str, Any], Any] = {}


def take_prepared(kind: str, key: Any) -> Any | None:
    """What :func:`prepare_first_page` made for ``kind`` (``"conversations"``, ``"transcript"`` or
    ``"replay"``) under this cache key, handed out once (the app's cache keeps it from then on);
    None when nothing was prepared for that key."""
    return _PREPARED.pop((kind, key), None) if _PREPARED else None


def app_replay(loaded: Any, transcript: Any, counter: str, choice: str, strategy: str | None,
               agent: tuple[Any, ...], live: inputs.LiveSettings | None) -> Replay:
    """The app's replay of one transcript: ``loaded`` (the editor's manifest) or ``strategy`` swapped
    into it, the summarizer ``choice`` of the sidebar (Q22: ``drop`` drops, anything else is the
    manifest's policy, served by ``live`` when applied), ``agent`` = (system text & tools source,
    model source, manifest is a sample, unrecorded prefix: None, "auto" or N tokens) (Q21)."""
    from inspector.compare import infra_docs, strategy_manifest
    from inspector.replay import replay

    source: Any = loaded if strategy is None else strategy_manifest(loaded.raw, strategy, file=loaded.file,
                                                                    infra_documents=infra_docs(loaded))
    mode = "drop" if choice == "drop" else "auto"  # the one policy (Q22); live = auto with the live model
    llm = None
    if live is not None:
        from inspector.engine.llm import LLMEngine

        llm = LLMEngine(live.model, live.api_base or None, live.api_key or None, live.timeout)
    system, model, sample, prefix = (*agent, None)[:4]
    return replay(source, transcript, counter=counter, summarizer=mode, llm=llm, system=system, tools=system,
                  model=model, sample=sample, unrecorded_prefix=prefix)


def first_page_inputs(launch: AppLaunch) -> tuple[inputs.ManifestInput, inputs.TranscriptSource]:
    """The manifest editor's input and the transcript source a fresh session opens on (as the app's
    ``init_state``, ``on_manifest_sample`` and ``transcript_source`` build them)."""
    manifest_choice, transcript_choice = inputs.default_choices(launch)
    if manifest_choice == inputs.OWN_AGENT:
        m = inputs.ManifestInput(inputs.own_agent_yaml(), inputs.OWN_AGENT, None, False)
    else:
        path = inputs.sample_manifests(launch=launch)[manifest_choice]
        m = inputs.ManifestInput(path.read_text(encoding="utf-8"), path.name, str(path.parent), False)
    tpath = inputs.sample_transcripts(launch=launch)[transcript_choice]
    stat = tpath.stat()
    src = inputs.TranscriptSource(tpath.name, f"sample:{tpath}:{stat.st_mtime_ns}:{stat.st_size}",
                                  tpath.read_bytes() if inputs.too_large(stat.st_size) is None else b"")
    return m, src


def replay_key(m: inputs.ManifestInput, src: inputs.TranscriptSource, counter: str = FIRST_COUNTER,
               choice: str | None = None, agent: tuple[Any, ...] | None = None) -> tuple[Any, ...]:
    """The app's ``replay_cached`` key for the first conversation of ``src``, no live model, no
    strategy swapped in: (manifest, (source key, format, conversation), counter, summarizer choice,
    live id, strategy, agent)."""
    choice = next(iter(inputs.SUMMARIZER_CHOICES)) if choice is None else choice
    if agent is None:
        agent = (*FIRST_AGENT_SWITCHES, inputs.is_sample_input(m), inputs.prefix_value(inputs.prefix_choice_default()))
    return (m, (src.key, None, 0), counter, choice, None, None, agent)


def prepare_first_page(launch: AppLaunch | None = None) -> Replay | None:
    """Compute and keep what the first page of a fresh session reads (module docstring); returns the
    replay, or None when the launch inputs cannot be read (the page then reports the problem)."""
    from inspector.manifest import load_manifest_text
    from inspector.report.figures import forgotten_per_call
    from inspector.transcripts import list_conversations, parse_transcript

    from streamlit import env_util

    # Streamlit asks once per process, at the first element a page draws, whether it runs in a REPL:
    # inspect.stack() then maps every loaded module's file (0.2-0.6 s with the app's 1 500 modules).
    # Asked here first, inspect keeps that map, and the first page's question costs milliseconds.
    env_util.is_repl()
    launch = app_launch([]) if launch is None else launch
    m, src = first_page_inputs(launch)
    if not src.data:
        return None
    convs = list_conversations(src.data, name=src.name, format=None)
    transcript = parse_transcript(src.data, name=src.name, format=None, conversation=0)
    loaded = load_manifest_text(m.text, file=m.name, base_dir=Path(m.base_dir) if m.base_dir else None,
                                mode="validate")
    key = replay_key(m, src)
    _, _, counter, choice, _, strategy, agent = key
    rp = app_replay(loaded, transcript, counter, choice, strategy, agent, None)
    event_calls(rp)  # the jump index and the forgetting analysis, kept on the replay
    forgotten_per_call(rp)
    app_timeline(rp)  # the timeline figure, kept on the replay too
    _PREPARED.clear()
    _PREPARED[("conversations", (src.key, src.name, None))] = convs
    _PREPARED[("transcript", (src.key, src.name, None, 0))] = transcript
    _PREPARED[("replay", key)] = rp
    freeze_heap()
    return rp


def freeze_heap() -> None:
    """Keep everything alive now (the modules, the replays, their figures) out of the cyclic garbage
    collector's scans until the next call (:func:`gc.freeze`). Streamlit collects after every script
    run (``runner.postScriptGC``): with a 2 000-turn replay in memory, each collection re-read every
    live object, about a hundred milliseconds of CPU at every step. Called once a replay is made
    (here and by :func:`inspector.app.cached.replay_cached`): what was frozen before is unfrozen and
    collected first, so a replay dropped from the cache since is freed, cycles included. Returns None."""
    import gc

    gc.unfreeze()
    gc.collect()
    gc.freeze()


def launch_from_serve_args(args: Sequence[str]) -> AppLaunch:
    """The launch options among ``serve``'s arguments: those after ``--`` (``app_command``'s)."""
    rest = list(args)
    return app_launch(rest[rest.index("--") + 1:] if "--" in rest else [])
