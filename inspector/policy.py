"""The one default replay policy (Q22) and which agent a replay describes (Q21).

Every face — CLI (``replay``, ``compare``, ``sweep``, ``observed``), the app, the notebooks — starts
from :data:`DEFAULT_POLICY` and prints or shows :meth:`ReplayPolicy.describe`, so the same
transcript and manifest give the same numbers wherever they are replayed.

- **Counter** ``tiktoken`` (the model's real tokenizer).
- **Summarizer** ``auto``: the manifest's own summarizer; an ``llm`` summarizer is served by the
  live model when one is configured, otherwise by the labelled offline stand-in. ``drop`` is always
  drop: no mode turns a manifest's ``drop`` into summaries. ``stand-in`` forces the stand-in for an
  ``llm`` summarizer even when a live model is configured (still never for ``drop``), ``drop``
  forces drop, and ``manifest`` runs exactly what the manifest says (an ``llm`` summarizer without a
  live model folds without a call, as the reference runtime does).
- **System text and tools** ``auto``: the transcript's own, unless the manifest declares its own
  (system-band parts / ``spec.tools``) and is not a bundled sample; ``manifest`` / ``transcript``
  choose explicitly. A bundled sample is recognised by the marker inside it
  (``metadata.context-inspector/sample: true``, decision Q25), never by the folder it lies in.
- **Model** ``auto``: the manifest's when it names one, else the model the transcript recorded
  (whose window comes from litellm's model map); ``manifest`` / ``transcript`` choose explicitly.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.engine.history import role_of
from inspector.plugins import default_registry


def counters() -> tuple[str, ...]:
    """The token counters a replay may use, in the order ``--counter`` lists them: the registry's
    ``counter`` slot (the built-in ``tiktoken`` and ``estimate``, then any an installed package adds)."""
    return tuple(spec.name for spec in default_registry().specs("counter"))


def __getattr__(name: str) -> tuple[str, ...]:
    """``COUNTERS``: :func:`counters` read when it is asked for (an entry point may add one after import)."""
    if name == "COUNTERS":
        return counters()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SUMMARIZER_MODES: tuple[str, ...] = ("auto", "stand-in", "drop", "manifest")
SOURCES: tuple[str, ...] = ("auto", "manifest", "transcript")

NO_MANIFEST: dict[str, Any] = {"apiVersion": "mas/v1", "kind": "Agent", "metadata": {"name": "transcript's own agent"},
                               "spec": {}}
"""The document used when no manifest is given: the default strategy, everything else from the transcript."""


@dataclass(frozen=True)
class ReplayPolicy:
    """How a replay is run when the user says nothing more; one record for every face (Q22)."""

    counter: str = "tiktoken"
    """Token counter for every decision: ``tiktoken`` or ``estimate`` (the reference's formulas)."""
    summarizer: str = "auto"
    """``auto`` | ``stand-in`` | ``drop`` | ``manifest`` (see the module docstring)."""
    system: str = "auto"
    """Whose system text is the system band: ``auto`` | ``manifest`` | ``transcript`` (Q21)."""
    tools: str = "auto"
    """Whose tool schemas are sent: ``auto`` | ``manifest`` | ``transcript`` (Q21)."""
    model: str = "auto"
    """Whose model (and so window and price): ``auto`` | ``manifest`` | ``transcript`` (Q21)."""

    def __post_init__(self) -> None:
        for name, allowed in (("counter", counters()), ("summarizer", SUMMARIZER_MODES), ("system", SOURCES),
                              ("tools", SOURCES), ("model", SOURCES)):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)} (got {value!r})")

    def with_(self, **changes: Any) -> ReplayPolicy:
        """A copy with the given fields changed; ``None`` values keep the current field."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def describe(self) -> str:
        """The policy as the one line every face prints (``policy: counter … · summarizer …``)."""
        return (f"policy: counter {self.counter} · summarizer {self.summarizer} · system text {self.system} · "
                f"tools {self.tools} · model {self.model}")

    def as_dict(self) -> dict[str, str]:
        """The policy's fields by name (for JSON)."""
        return dataclasses.asdict(self)


DEFAULT_POLICY = ReplayPolicy()
"""The policy every face uses unless the user chooses otherwise."""


def summarizer_choice(settings: Any, mode: str, *, live: bool) -> str:
    """The engine's summarizer argument (``manifest`` | ``stand-in`` | ``drop``) for a policy mode.

    Only an ``llm`` summarizer (the manifest's, or the default when none is written) is ever
    replaced by the stand-in; ``drop`` and third-party summarizers are kept as configured."""
    if mode not in SUMMARIZER_MODES:
        raise ValueError(f"summarizer must be one of {', '.join(SUMMARIZER_MODES)} (got {mode!r})")
    if mode in ("drop", "manifest"):
        return mode
    binding = getattr(settings, "summarizer", None)
    is_llm = (binding.type if binding is not None else "llm") == "llm"
    if not is_llm:
        return "manifest"
    if mode == "stand-in":
        return "stand-in"
    return "manifest" if live else "stand-in"


def is_sample_manifest(manifest: Any) -> bool:
    """Whether ``manifest`` is a bundled sample: it carries the marker
    ``metadata.context-inspector/sample: true`` (Q25), wherever the file lies. ``manifest`` is a
    path, a parsed document, a :class:`~inspector.manifest.LoadedManifest` or its settings; a file
    that cannot be read is not a sample (reading it reports why)."""
    from inspector.manifest import ContextSettings, LoadedManifest, ManifestError, settings_from_dict

    if not manifest:
        return False
    if isinstance(manifest, LoadedManifest):
        manifest = manifest.settings
    if isinstance(manifest, ContextSettings):
        return manifest.sample
    try:
        if isinstance(manifest, dict):
            return settings_from_dict(dict(manifest)).settings.sample
        from inspector.bundled import resolve_sample

        p = resolve_sample(manifest)  # a path, or sample:NAME
        st = p.stat()
        return _file_is_sample((str(p.resolve()), st.st_mtime_ns, st.st_size))
    except (ManifestError, OSError, ValueError, TypeError):
        return False


@functools.lru_cache(maxsize=64)
def _file_is_sample(version: tuple[str, int, int]) -> bool:
    """A file's marker, read once per ``(path, mtime_ns, size)`` version of it (a face asks on every rerun)."""
    from inspector.manifest import load_manifest

    return load_manifest(version[0]).settings.sample


# --- which agent a replay describes (Q21) ---------------------------------------------------------

@dataclass(frozen=True)
class AgentInForce:
    """The system text, tools and model a replay uses, and where each came from (shown on every face)."""

    system: str
    """``transcript`` | ``manifest`` | ``none``."""
    system_detail: str
    tools: str
    """``transcript`` | ``manifest`` | ``none``."""
    tools_detail: str
    model: str | None
    model_source: str
    """``manifest`` | ``transcript`` | ``none``."""
    window: int | None = None
    window_source: str | None = None

    def describe(self) -> str:
        """The agent in force as one line: whose system text, tools, model and window, and why."""
        window = f"{self.window:,} tokens ({self.window_source})" if self.window is not None else "?"
        return (f"agent: system text {self.system_detail} · tools {self.tools_detail} · "
                f"model {f'{self.model} ({self.model_source})' if self.model else self.model_source} · "
                f"window {window}")

    def as_dict(self) -> dict[str, Any]:
        """The agent in force by field (for JSON)."""
        return dataclasses.asdict(self)


def _declares_system(settings: Any) -> bool:
    return bool(settings.injected_context or settings.memory_seeds or settings.parts)


def _transcript_system(transcript: Any) -> list[tuple[int, str]]:
    """``(index, text)`` of every system message of the transcript, in order."""
    msgs = transcript.messages
    out = []
    for i, role in enumerate(map(role_of, msgs)):
        if role == "system":
            c = msgs[i].get("content")
            out.append((i, c if isinstance(c, str) else str(c or "")))
    return out


def resolve_agent(settings: Any, transcript: Any, policy: ReplayPolicy = DEFAULT_POLICY, *,
                  sample: bool = False) -> tuple[Any, AgentInForce]:
    """The settings to replay ``transcript`` with under ``policy``, and the record of what is in force.

    ``sample``: the manifest is a bundled sample (it describes another agent, so ``auto`` takes the
    transcript's own system text and tools). The returned settings differ from ``settings`` only
    in what the policy takes from the transcript: no manifest system band when the system text is
    the transcript's, the transcript's tools, the transcript's model in the primary row."""
    from inspector.manifest import ModelRow

    declares_system = _declares_system(settings)
    declares_tools = settings.tools is not None
    system = policy.system if policy.system != "auto" else (
        "manifest" if declares_system and not sample else "transcript")
    tools = policy.tools if policy.tools != "auto" else ("manifest" if declares_tools and not sample else "transcript")
    changes: dict[str, Any] = {}
    rows = _transcript_system(transcript)
    if system == "transcript":
        changes.update(injected_context=(), memory_seeds=(), parts=())
        if rows:
            first, text = rows[0]
            more = f", replaced by {len(rows) - 1} later system message(s)" if len(rows) > 1 else ""
            system_detail = f"from the transcript (message {first}, {len(text):,} chars{more})"
        else:
            system_detail = "none (the transcript has no system text)"
    else:
        parts = len(settings.injected_context) + len(settings.memory_seeds) + len(settings.parts)
        system_detail = f"from the manifest ({parts} part(s))" if declares_system else \
            "none (the manifest declares no system text)"
    t_tools = list(transcript.tools or [])
    if tools == "transcript":
        changes["tools"] = tuple(dict(t) for t in t_tools) if t_tools else None
        tools_detail = f"{len(t_tools)} schema(s) from the transcript" if t_tools else "none (the transcript has none)"
    else:
        n = len(settings.tools or ())
        tools_detail = f"{n} schema(s) from the manifest" if declares_tools else "none (the manifest declares none)"
        changes["tools"] = settings.tools if declares_tools else None
    primary = settings.primary_model()
    manifest_model = primary.model if primary is not None and primary.model not in (None, "") else None
    recorded = transcript.model if isinstance(getattr(transcript, "model", None), str) and transcript.model else None
    model_from = policy.model if policy.model != "auto" else ("manifest" if manifest_model else "transcript")
    if model_from == "transcript" and recorded:
        row = ModelRow(id="main", model=recorded, max_tokens=None, context_window=None)
        others = tuple(r for r in settings.models if r is not primary)
        changes["models"] = (row, *others)
        model, model_source = recorded, "transcript"
    elif manifest_model:
        model, model_source = manifest_model, "manifest" if model_from == "manifest" else \
            "manifest (the transcript records no model)"
    else:
        model, model_source = None, "none (neither the manifest nor the transcript names one)"
    agent = AgentInForce(
        system="none" if (system == "transcript" and not rows) or (system == "manifest" and not declares_system)
        else system,
        system_detail=system_detail,
        tools="none" if changes.get("tools") is None else tools,
        tools_detail=tools_detail, model=model, model_source=model_source)
    return dataclasses.replace(settings, **changes), agent


def stated(agent: AgentInForce, policy: ReplayPolicy) -> Sequence[str]:
    """The two lines every face prints: the policy in force, and the agent it describes."""
    return (policy.describe(), agent.describe())


MANIFEST_SUFFIXES = (".yaml", ".yml")


def split_manifest_argument(paths: Sequence[str]) -> tuple[str | None, list[str]]:
    """``[MANIFEST] TRANSCRIPT...`` → (manifest or None, transcripts): the first path is the manifest
    when it is a YAML file (transcripts are JSON, JSONL, ``.traj`` or ``.af``)."""
    items = list(paths)
    if items and str(items[0]).lower().endswith(MANIFEST_SUFFIXES):
        return items[0], items[1:]
    return None, items
