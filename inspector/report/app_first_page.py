"""The app's first page, prepared by the server before it listens (issue 26).

A fresh server used to replay only the bundled demo while it warmed up; the first page then
imported and replayed the transcript it was started on (seconds, for a long one). Now
:func:`prepare_first_page` (called by :func:`inspector.cli.app_server.warm_up`) reads the same
inputs the first page reads — the manifest and transcript chosen at launch, the default counter,
summarizer and agent switches — and computes what the page's cached functions would: the
conversation list, the parsed transcript and the replay (with its event index and forgetting
analysis). Each is stored under the exact cache key the app's function is called with, and
:func:`take_prepared` hands it out once, on the first call with that key; any other key (the user
changed a setting, edited the manifest, uploaded a file) finds nothing and computes as before.
:func:`app_replay` is the one replay call both paths make, so a prepared replay is the one the
page would have made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspector.bundled import AppLaunch, app_launch
from inspector.replay import Replay
from inspector.report import app_views as av

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
               agent: tuple[Any, ...], live: av.LiveSettings | None) -> Replay:
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


def first_page_inputs(launch: AppLaunch) -> tuple[av.ManifestInput, av.TranscriptSource]:
    """The manifest editor's input and the transcript source a fresh session opens on (as the app's
    ``init_state``, ``on_manifest_sample`` and ``transcript_source`` build them)."""
    manifest_choice, transcript_choice = av.default_choices(launch)
    if manifest_choice == av.OWN_AGENT:
        m = av.ManifestInput(av.own_agent_yaml(), av.OWN_AGENT, None, False)
    else:
        path = av.sample_manifests(launch=launch)[manifest_choice]
        m = av.ManifestInput(path.read_text(encoding="utf-8"), path.name, str(path.parent), False)
    tpath = av.sample_transcripts(launch=launch)[transcript_choice]
    stat = tpath.stat()
    src = av.TranscriptSource(tpath.name, f"sample:{tpath}:{stat.st_mtime_ns}:{stat.st_size}",
                              tpath.read_bytes() if av.too_large(stat.st_size) is None else b"")
    return m, src


def replay_key(m: av.ManifestInput, src: av.TranscriptSource, counter: str = FIRST_COUNTER,
               choice: str | None = None, agent: tuple[Any, ...] | None = None) -> tuple[Any, ...]:
    """The app's ``replay_cached`` key for the first conversation of ``src``, no live model, no
    strategy swapped in: (manifest, (source key, format, conversation), counter, summarizer choice,
    live id, strategy, agent)."""
    choice = next(iter(av.SUMMARIZER_CHOICES)) if choice is None else choice
    agent = (*FIRST_AGENT_SWITCHES, av.is_sample_input(m), av.prefix_value(av.prefix_choice_default())) \
        if agent is None else agent
    return (m, (src.key, None, 0), counter, choice, None, None, agent)


def prepare_first_page(launch: AppLaunch | None = None) -> Replay | None:
    """Compute and keep what the first page of a fresh session reads (module docstring); returns the
    replay, or None when the launch inputs cannot be read (the page then reports the problem)."""
    from inspector.manifest import load_manifest_text
    from inspector.report.figures import forgotten_per_call
    from inspector.transcripts import list_conversations, parse_transcript

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
    av.event_calls(rp)  # the jump index and the forgetting analysis, kept on the replay
    forgotten_per_call(rp)
    _PREPARED.clear()
    _PREPARED[("conversations", (src.key, src.name, None))] = convs
    _PREPARED[("transcript", (src.key, src.name, None, 0))] = transcript
    _PREPARED[("replay", key)] = rp
    return rp


def launch_from_serve_args(args: Sequence[str]) -> AppLaunch:
    """The launch options among ``serve``'s arguments: those after ``--`` (``app_command``'s)."""
    rest = list(args)
    return app_launch(rest[rest.index("--") + 1:] if "--" in rest else [])
