"""Presentation helpers for the Streamlit app: pure functions over a replay, no Streamlit import.

Everything here reads what :mod:`inspector.replay` already decided (frames, refs, bands, repairs);
nothing recomputes a budget. The one extra count is :func:`estimate_check`, which tokenises the
current call's payload with the real tokenizer to say how far the ``estimate`` counter is off.
Every text that shows or exports transcript content goes through :mod:`inspector.redact`.
Keeping these here (not in ``app.py``) lets the tests and notebooks reuse them without a server.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from inspector.manifest import MAX_BYTES as _MANIFEST_MAX
from inspector.policy import is_sample_manifest
from inspector.redact import mask_secrets, mask_text
from inspector.replay import PENDING_WORDS, Replay
from inspector.vocabulary import action_words, irregularity_words, reason_words, repair_words
from inspector.report.figures import BAND_COLORS, BAND_LABELS, band_segments
from inspector.report.tables import _counter, _preview, frames_table, not_sent_table, payload_table, repairs_table

from inspector.bundled import DEMO_MANIFEST, MAX_UPLOAD_MB, AppLaunch, app_launch, sample_manifest_dir  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_MANIFEST_DIR = sample_manifest_dir()
SHARED_TRANSCRIPT_DIR = ROOT.parent / "shared" / "data" / "transcripts"
DEFAULT_MANIFEST = DEMO_MANIFEST
DEFAULT_TRANSCRIPT = "demo_support.json"
MAX_TRANSCRIPT_BYTES = MAX_UPLOAD_MB * 1_000_000
"""Uploads and samples above this size are refused with a message (the server also caps uploads)."""
MANIFEST_MAX_BYTES = _MANIFEST_MAX
"""Manifest uploads above the reader's own limit are refused before they reach the editor."""
COMPARE_AUTO_MAX_CALLS = 400
"""Side by side runs by itself up to this many calls; longer transcripts wait for the user to switch it on."""
STYLE_MAX_ROWS = 300
"""Payload tables longer than this are shown without per-row band colours (styling costs per cell)."""

AGENT_SOURCES = {
    "auto": "The transcript's own, unless the manifest declares its own and is not marked as a sample",
    "transcript": "The transcript's own",
    "manifest": "The manifest's",
}
"""The Q21 switch for the system text and tools (values are :class:`~inspector.policy.ReplayPolicy` sources)."""
MODEL_SOURCES = {
    "auto": "The manifest's if it names one, else the transcript's",
    "transcript": "The transcript's recorded model",
    "manifest": "The manifest's",
}

SUMMARIZER_CHOICES = {
    "stand-in": "Offline stand-in (labelled, not a model)",
    "live": "Live model through litellm",
    "drop": "Drop (no summary at all)",
}


INTRO = ("What the model is sent on every LLM call of this conversation, and why. Each bar of the timeline is one "
         "call (tokens by band, against the budget lines); step with ◀ ▶ or the ← → keys, or jump to the next "
         "summary, trim, repair or forgotten reference; the views below explain the current call.")
"""The one-line statement of what the app shows and how to read it (shown under the title)."""


# --- inputs ---------------------------------------------------------------------------------------

def launch_label(path: Path) -> str:
    """How a file named on the ``context-inspector app`` command line appears in the pickers."""
    return f"opened: {path.name}"


def follow_label(path: Path) -> str:
    """How the file followed with ``context-inspector app --follow FILE`` appears in the picker."""
    return f"live: {path.name}"


def followed(label: Any, launch: AppLaunch | None = None) -> Path | None:
    """The followed file when ``label`` is its picker entry, else None."""
    launch = app_launch() if launch is None else launch
    return launch.follow if launch.follow is not None and label == follow_label(launch.follow) else None


OWN_AGENT = "none: the transcript's own agent"
"""The manifest picker's entry for no manifest at all: the transcript replayed as its own agent
(its system text, tools and recorded model, the default strategy), as ``context-inspector replay
TRANSCRIPT`` does without a manifest. Its editor text is :func:`own_agent_yaml`."""


def own_agent_yaml() -> str:
    """The editor text of :data:`OWN_AGENT`: the policy's no-manifest document
    (:data:`inspector.policy.NO_MANIFEST`) as YAML, so what runs is what the editor shows and an
    edit (a strategy, a window) turns it into the user's own manifest."""
    import yaml

    from inspector.policy import NO_MANIFEST

    return ("# No manifest: the transcript's own system text, tools and recorded model, the default strategy.\n"
            "# Add spec.context_manager, spec.models, ... here to try other settings on this agent.\n"
            + yaml.safe_dump(dict(NO_MANIFEST), sort_keys=False))


def sample_manifests(folder: Path = SAMPLE_MANIFEST_DIR, launch: AppLaunch | None = None) -> dict[str, Path]:
    """The manifest named at launch (if any), then the bundled ones by file name, sorted."""
    launch = app_launch() if launch is None else launch
    out = {launch_label(launch.manifest): launch.manifest} if launch.manifest is not None else {}
    if folder.is_dir():
        out.update({p.name: p for p in sorted(folder.glob("*.yaml"))})
    return out


def manifest_choices(launch: AppLaunch | None = None) -> list[str]:
    """The manifest picker's entries: :func:`sample_manifests`' names, with :data:`OWN_AGENT` after
    a manifest named at launch (first when the app was launched on a transcript alone)."""
    names = list(sample_manifests(launch=launch))
    launched = app_launch() if launch is None else launch
    at = 1 if launched.manifest is not None else 0
    return [*names[:at], OWN_AGENT, *names[at:]]


def default_choices(launch: AppLaunch | None = None) -> tuple[str, str]:
    """The manifest and transcript the app opens on: those named at launch; a transcript named
    without a manifest opens as its own agent (:data:`OWN_AGENT`, like ``context-inspector replay
    TRANSCRIPT``); with neither, the bundled demo under its own sample manifest (:data:`DEMO_MANIFEST`)."""
    launch = app_launch() if launch is None else launch
    if launch.manifest is not None:
        manifest = launch_label(launch.manifest)
    else:
        manifest = OWN_AGENT if launch.transcript is not None or launch.follow is not None else DEFAULT_MANIFEST
    if launch.follow is not None:
        return manifest, follow_label(launch.follow)
    return (manifest, launch_label(launch.transcript) if launch.transcript is not None else DEFAULT_TRANSCRIPT)


def sample_transcripts(shared: Path = SHARED_TRANSCRIPT_DIR, launch: AppLaunch | None = None) -> dict[str, Path]:
    """The transcript named at launch (if any), the project's own demo transcripts, then the shared
    real ones when that folder exists (read in place, never copied)."""
    from importlib import resources

    launch = app_launch() if launch is None else launch
    out: dict[str, Path] = {}
    if launch.follow is not None:  # the live file: first, and listed even before the agent's first call
        out[follow_label(launch.follow)] = launch.follow
    if launch.transcript is not None:
        out[launch_label(launch.transcript)] = launch.transcript
    bundled = Path(str(resources.files("inspector") / "samples"))
    files = [*bundled.glob("*.json"), *bundled.glob("*.jsonl")]  # .jsonl: the provider-usage sample logs
    for p in sorted(files, key=lambda p: (p.name != DEFAULT_TRANSCRIPT, p.name)):
        out[p.name] = p
    if shared.is_dir():
        for p in sorted(shared.glob("*/*")):
            if p.is_file() and p.suffix.lower() not in (".md", ".txt"):
                out[f"shared: {p.parent.name}/{p.name}"] = p
    return out


@dataclass(frozen=True)
class TranscriptSource:
    """Where the transcript bytes come from; ``key`` identifies the bytes without hashing them."""

    name: str
    key: str
    data: bytes


@dataclass(frozen=True)
class ManifestInput:
    """The editor's manifest and how to read it (a cache key: compared by value)."""

    text: str
    name: str
    base_dir: str | None
    lenient: bool


@dataclass(frozen=True)
class LiveSettings:
    """The live summarizer connection typed in the sidebar; only its fingerprint enters cache keys."""

    model: str
    api_base: str
    api_key: str = field(repr=False)
    timeout: float = 30.0

    @property
    def fingerprint(self) -> str:  # the key itself never enters a cache key or the page
        raw = "\0".join((self.model, self.api_base, self.api_key, str(self.timeout)))
        return hashlib.sha256(raw.encode()).hexdigest()[:16]


def is_sample_input(m: ManifestInput) -> bool:
    """Whether the editor's manifest is a bundled sample: what its text declares (the marker
    ``metadata.context-inspector/sample: true``, Q25), whether it was picked, uploaded or edited; a
    text that does not load is not a sample (the page reports why)."""
    return _text_is_sample(m.text)


@functools.lru_cache(maxsize=32)
def _text_is_sample(text: str) -> bool:
    """The marker of a manifest text, read once per text (the page asks on every rerun)."""
    from inspector.errors import InspectorError
    from inspector.manifest import load_manifest_text

    try:
        return is_sample_manifest(load_manifest_text(text))
    except (InspectorError, ValueError, TypeError):
        return False


def too_large(size: int, limit: int | None = None) -> str | None:
    limit = MAX_TRANSCRIPT_BYTES if limit is None else limit
    if size > limit:
        return f"file is too large ({size:,} bytes; the limit is {limit:,})"
    return None


def effective_summarizer(settings: Any, choice: str) -> str:
    """The ``replay(summarizer=...)`` value for a UI choice, through the one policy (Q22).

    ``stand-in`` and ``live`` are the policy's ``auto`` without / with the live model (the stand-in
    replaces only an ``llm`` summarizer: a manifest that says ``drop`` or names a custom summarizer
    keeps it); ``drop`` is drop."""
    from inspector.policy import summarizer_choice

    return summarizer_choice(settings, "drop" if choice == "drop" else "auto", live=choice == "live")


# --- text safety ----------------------------------------------------------------------------------

def code_span(text: Any) -> str:
    """``text`` as a Markdown inline code span, so no Markdown or HTML in it is ever interpreted
    (alert bodies are Markdown). Newlines become spaces: one message per span."""
    s = " ".join(str(text).split())
    if not s:
        return "``"
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def issue_list(lines: Iterable[Any]) -> str:
    """A Markdown bullet list of plain-text lines (each in a code span, secrets masked): error
    messages can quote the input they complain about."""
    return "\n".join(f"- {code_span(mask_text(str(x)))}" for x in lines)


# --- stepping ---------------------------------------------------------------------------------------

def call_label(rp: Replay, call: int) -> str:
    """"call k · turn T · step S"; the pending next call (:attr:`~inspector.replay.Replay.pending_call`,
    which the agent never made) says so in words."""
    f = rp.frames[call]
    pending = f" ({PENDING_WORDS})" if call == rp.pending_call else ""
    return f"call {call} · turn {f.turn} · step {f.step}{pending}"


def clamp_call(call: Any, n: int) -> int:
    try:
        k = int(call)
    except (TypeError, ValueError):
        k = 0
    return max(0, min(k, n - 1)) if n > 0 else 0


def call_from_selection(selection: Any, n: int) -> int | None:
    """The call a timeline selection points at: the last selected point's x (a commit marker sits
    at k + 0.5 and jumps to the call after the fold). None when nothing usable is selected."""
    points = []
    if selection is not None:
        sel = selection.get("selection", selection) if isinstance(selection, Mapping) else None
        if isinstance(sel, Mapping):
            points = list(sel.get("points") or [])
    for point in reversed(points):
        x = point.get("x") if isinstance(point, Mapping) else None
        if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
            return clamp_call(math.floor(x + 0.5), n)
    return None


def event_calls(rp: Replay) -> dict[str, list[int]]:
    """For every kind of :data:`inspector.vocabulary.EVENT_WORDS`, the calls where it happens, in
    order (a fold at a commit counts for the first call after it). Computed once per replay."""
    return rp.view("app_events", lambda: _event_calls(rp))


def _event_calls(rp: Replay) -> dict[str, list[int]]:
    from inspector.report.figures import commit_positions, forgotten_per_call

    from inspector.vocabulary import registered_actions, summary_event

    df = frames_table(rp)
    n = len(rp.frames)
    summary = [summary_event(f.decision.action, f.summary_sent) for f in rp.frames]
    events = [e or f.decision.action for e, f in zip(summary, rp.frames, strict=True)]
    marked = [a.code for a in registered_actions() if a.marker is not None]  # summarized, reused, ...
    out: dict[str, list[int]] = {
        **{code: [k for k, e in enumerate(events) if e == code] for code in marked},
        "summary_not_sent": [k for k, e in enumerate(summary) if e == "summary_not_sent"],
        "fold": sorted({min(math.ceil(x), n - 1) for x, _ in commit_positions(rp)}),
        "trimmed": [int(k) for k in df["call"][df["trimmed"] > 0]],
        "repair": [int(k) for k in df["call"][df["repairs"] > 0]],
        "over_budget": [k for k, f in enumerate(rp.frames) if f.headroom < 0],
        "forgotten": [k for k, lost in enumerate(forgotten_per_call(rp)) if lost],
    }
    return out


def next_event(rp: Replay, call: int, kind: str, direction: int = 1) -> int | None:
    """The nearest call after (``direction`` = 1) or before (-1) ``call`` where ``kind`` happens."""
    import bisect

    calls = event_calls(rp).get(kind, [])
    if direction > 0:
        i = bisect.bisect_right(calls, call)
        return calls[i] if i < len(calls) else None
    i = bisect.bisect_left(calls, call)
    return calls[i - 1] if i > 0 else None


# --- budget of one call ------------------------------------------------------------------------------

def band_table(rp: Replay, call: int) -> pd.DataFrame:
    """Every band of the call with tokens and share of the window (the bar's numbers, as a table).
    Over budget there is no headroom row and no "over budget" band: the shares then add up to more
    than 100 %, by exactly the overflow (:func:`~inspector.report.figures.band_segments`)."""
    f = rp.frames[call]
    window = f.budget.window or 0
    rows = []
    for name, tokens in band_segments(f):
        rows.append({"band": BAND_LABELS.get(name, name), "tokens": tokens,
                     "% of window": round(100.0 * tokens / window, 1) if window else None})
    return pd.DataFrame(rows, columns=["band", "tokens", "% of window"])


def budget_facts(rp: Replay, call: int) -> dict[str, Any]:
    """The figures shown next to the band bar, straight from the frame."""
    f = rp.frames[call]
    b = f.budget
    return {
        "window": b.window, "window_source": b.window_source, "reserve": b.reserve,
        "reserve_source": b.reserve_source, "margin": b.margin, "max_tokens": b.max_tokens,
        "input_budget": f.input_budget, "payload_tokens": f.payload_tokens,
        "headroom": f.headroom, "over_budget": f.headroom < 0, "cm_action": f.decision.action, "check": f.check,
        "cm_words": action_words(f.decision.action, f.summary_sent),
        "cost_usd": f.cost_usd, "model": rp.limits.get("effective_model") or rp.limits.get("model"),
        "calibration": b.calibration, "calibration_source": b.calibration_source,
        "prefix": b.prefix, "prefix_source": b.prefix_source, "prefix_line": rp.prefix_line(),
    }


PREFIX_CHOICES: dict[str, str] = {"none": "not added", "auto": "estimated (fitted offset)"}
"""The app's switch for the unrecorded prefix (``--unrecorded-prefix``): not added, or the estimate."""


def prefix_choice_default(launch: AppLaunch | None = None) -> str:
    """``auto`` when the app was started with ``--unrecorded-prefix auto`` (or a number), else ``none``."""
    launch = app_launch() if launch is None else launch
    return "auto" if launch.unrecorded_prefix not in (None, "", "0") else "none"


def prefix_value(choice: Any, launch: AppLaunch | None = None) -> str | int | None:
    """The replay's ``unrecorded_prefix`` for the switch: None, ``"auto"``, or the number given at launch."""
    if choice != "auto":
        return None
    launch = app_launch() if launch is None else launch
    given = launch.unrecorded_prefix
    return int(given) if given is not None and given.isdigit() and given != "0" else "auto"


# --- calibration against provider-reported usage -----------------------------------------------------

def _calibration(rp: Replay) -> Any:
    from inspector.calibration import calibrate

    return rp.view("app_calibration", lambda: calibrate(rp.transcript))


def call_calibration(rp: Replay, call: int) -> pd.DataFrame | None:
    """This call's token counts beside the provider's reported input tokens, or None when the
    transcript records no usage for the reply this call produced.

    Rows: the provider's count, ours (``tiktoken``, ``estimate``) of the payload the provider
    counted (see :mod:`inspector.calibration`), and this replay's own payload under the manifest;
    each with its error against the provider's count."""
    cal = _calibration(rp)
    f = rp.frames[call]
    hit = cal.calls[cal.calls["index"] == f.at]
    if hit.empty:
        return None
    row = hit.iloc[0]
    provider = int(row["provider_tokens"])

    def line(what: str, tokens: int | None) -> dict[str, Any]:
        err = None if tokens is None else tokens - provider
        return {"count": what, "tokens": tokens, "error vs provider": err,
                "error %": None if err is None or not provider else round(100.0 * err / provider, 1)}

    payload = _rows_words(str(row["payload"]))
    rows = [line("provider (reported usage)", provider),
            line(f"tiktoken, {payload}", int(row["tiktoken"])),
            line(f"estimate, {payload}", int(row["estimate"])),
            line(f"this replay's payload ({rp.counter}, under the manifest)", f.payload_tokens)]
    return pd.DataFrame(rows, columns=["count", "tokens", "error vs provider", "error %"])


def _rows_words(text: str) -> str:
    """``rows A-B`` (the calibration's span of transcript rows) in words: "transcript messages A–B",
    "transcript message A" when the span is one row."""
    def span(m: re.Match[str]) -> str:
        a, b = int(m.group(1)), int(m.group(2))
        return f"transcript message {a}" if a == b else f"transcript messages {a}–{b}"

    return re.sub(r"rows (\d+)-(\d+)", span, text)


def calibration_caption(rp: Replay) -> str:
    """The fitted line first, then what to apply (:func:`inspector.calibration.advice`: the factor, or
    the slope and the offset as the unrecorded prefix), and what the counts cannot include."""
    from inspector.calibration import advice

    cal = _calibration(rp)
    return " ".join([*(plain_md(a) for a in advice(cal)), *cal.notes]).strip()


def compaction_note(rp: Replay, call: int) -> str | None:
    """Where the source framework itself compacted the conversation before this call, if it did."""
    f = rp.frames[call]
    before = [c for c in getattr(rp.transcript, "compactions", None) or [] if c.index < f.at]
    if not before:
        return None
    c = before[-1]
    return (f"Observed compaction: the recording framework compacted the conversation at transcript row {c.index} "
            f"({c.origin}); the real model saw that summary, not the rows before it. This replay applies the "
            "manifest's own policy instead.")


def trim_note(rp: Replay, call: int) -> str | None:
    """Tool results the trimmer cut at this call and the calls the repair then answered with empty
    results, in words (Q24: e.g. "2 results cut for budget; the repair answered their 2 calls with
    empty results"); None when the trimmer cut no result."""
    from inspector.vocabulary import cut_results_words

    f = rp.frames[call]
    cut_ids = [rp.messages[i].get("tool_call_id") for a, b in f.trimmed for i in range(a, b)
               if i < len(rp.messages) and rp.messages[i].get("role") == "tool"]
    if not cut_ids:
        return None
    ids = set(cut_ids)
    answered = sum(1 for r in f.repairs if r.repair.kind == "empty_result_synthesised" and r.repair.tool_call_id in ids)
    return cut_results_words(len(cut_ids), answered) + "."


def _observed_at(rp: Replay, call: int) -> Any:
    f = rp.frames[call]
    return next((op for op in getattr(rp.transcript, "observed_payloads", None) or []
                 if getattr(op, "reply", None) == f.at), None)


def observed_beside(rp: Replay, call: int) -> pd.DataFrame | None:
    """The request the agent really sent for this call's reply (the log's observed payload: a
    litellm or openai-log line, a live file) beside this replay's payload under the manifest:
    messages and tokens (this replay's counter), and the provider's count when the log has it.
    None when the log keeps no request for this call."""
    op = _observed_at(rp, call)
    if op is None:
        return None
    f = rp.frames[call]
    tk = _counter(rp)
    provider = None
    if (usage := (getattr(rp.transcript, "usage", None) or {}).get(f.at)) is not None:
        from inspector.calibration import provider_input_tokens

        provider = provider_input_tokens(usage)
    rows = [{"payload": "really sent (the request as logged)", "messages": len(op.messages),
             "tokens": tk.count(op.messages) + tk.count_tools(op.tools), "provider's count": provider},
            {"payload": f"this replay (under the manifest, {rp.counter})", "messages": f.message_count,
             "tokens": f.payload_tokens, "provider's count": None}]
    return pd.DataFrame(rows, columns=["payload", "messages", "tokens", "provider's count"])


def observed_words(rp: Replay, call: int) -> str:
    """What differs between the request really sent and this replay's payload, in words."""
    from inspector.observed import payload_differences

    op = _observed_at(rp, call)
    if op is None:
        return ""
    f = rp.frames[call]
    diff = payload_differences(op.messages, op.tools, f.payload(rp.messages), _engine_tools(rp) if
                               f.bands.get("tool_schemas") else None)
    said = "; ".join(f"{k}: {v}" for k, v in diff.items() if v)
    return ("The replay sends exactly what the agent sent." if not said else
            f"Where the replay differs from what the agent sent — {said}.")


def _engine_tools(rp: Replay) -> Any:
    tools = getattr(rp.settings, "tools", None)
    return [dict(t) for t in tools] if tools else rp.transcript.tools


def estimate_check(rp: Replay, call: int) -> tuple[str, str] | None:
    """With the ``estimate`` counter: how the real tokenizer counts this call's payload.

    Returns ``(level, text)`` — ``error`` when the real count plus the completion reserve does not
    fit the window, ``warning`` when it eats into the safety margin, ``info`` for a smaller
    under-count — or None when the counter is ``tiktoken`` or the estimate is not lower."""
    if rp.counter != "estimate":
        return None
    from inspector.engine.tokens import make_counter

    f = rp.frames[call]
    tk = rp.view("app_tiktoken", lambda: make_counter("tiktoken", rp.limits.get("effective_model")))
    real = tk.count(f.payload(rp.messages)) + (tk.count_tools(_engine_tools(rp)) if f.bands.get("tool_schemas") else 0)
    est = f.payload_tokens
    if real <= est:
        return None
    b = f.budget
    pct = 100.0 * (real - est) / est if est else 100.0
    text = (f"The estimate counter under-counts this call: {est:,} estimated vs {real:,} by the model's "
            f"tokenizer (+{real - est:,}, +{pct:.0f}%).")
    if real + b.reserve > b.window:
        return "error", text + f" The real payload plus the completion reserve ({b.reserve:,}) exceeds the " \
                               f"{b.window:,}-token window: the provider would reject or truncate it."
    if real > f.input_budget:
        return "warning", text + " It would eat into the safety margin."
    return "info", text


# --- payload and what is not sent -----------------------------------------------------------------

def payload_view(rp: Replay, call: int) -> pd.DataFrame:
    """:func:`payload_table` with a nullable integer ``ref`` (transcript index; empty = synthesised)."""
    df = payload_table(rp, call)
    if not df.empty:
        df["ref"] = df["ref"].astype("Int64")
        df["synthetic"] = df["synthetic"].astype(str)
    return df


CHAT_TEXT_MAX = 20_000
"""Characters of one message shown in a chat row; longer texts say how much is left out (the
Export view has every message whole)."""
CHAT_ROWS_MAX = 400
"""Chat rows drawn per view; beyond it the view says how many rows are left out."""


@dataclass(frozen=True)
class ChatRow:
    """One message as a chat row: the line always shown, and what expanding it reveals."""

    anchor: str  # HTML id, so other rows and tables can link to it ("msg-12", "row-3")
    role: str
    band: str  # a BAND_COLORS key, or "" for a message that is not sent
    heading: str  # role · band · tokens · transcript # (plain text)
    why: str  # why the message is where it is (plain text)
    text: str  # the full text, masked
    tool_calls: tuple[tuple[str, str, str], ...] = ()  # (id, name, arguments as pretty JSON), masked
    links: tuple[str, ...] = ()  # anchors of related rows (a tool call's result, a result's ask)
    note: str = ""  # said right after the heading, in plain weight (why a row is not sent)


def _message_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: the text parts as text, anything else as JSON
        parts = [p.get("text") if isinstance(p, dict) and isinstance(p.get("text"), str)
                 else json.dumps(p, ensure_ascii=False, default=str) for p in content]
        return "\n".join(str(p) for p in parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def _tool_calls(msg: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    out = []
    for c in msg.get("tool_calls") or []:
        if not isinstance(c, Mapping):
            continue
        fn = c.get("function") or {}
        args = fn.get("arguments")
        try:
            parsed = json.loads(args) if isinstance(args, str) else args
            pretty = json.dumps(mask_secrets(parsed), ensure_ascii=False, indent=2, default=str)
        except ValueError:
            pretty = mask_text(str(args))
        out.append((str(c.get("id") or ""), str(fn.get("name") or "?"), pretty))
    return tuple(out)


def payload_rows(rp: Replay, call: int) -> list[ChatRow]:
    """The exact payload of one call as chat rows, in the order sent (masked text, tool calls with
    their arguments, why each row is there). Built from the same payload as :func:`payload_table`."""
    f = rp.frames[call]
    payload = f.payload(rp.messages)
    table = payload_table(rp, call)
    index = _tool_call_index(rp)
    repairs = {r.ref: r.repair for r in f.repairs if r.ref is not None}
    rows = []
    refs, bands, synthetic = f.refs, f.row_bands, f.synthetic  # each rebuilds a list: once, not per row
    replaced = set(f.replaced)
    for k, msg in enumerate(payload):
        ref = refs[k]
        band = bands[k]
        tokens = table["tokens"].iloc[k]
        where = f"transcript #{ref}" if ref is not None else "synthesised"
        heading = (f"{msg.get('role')} · {BAND_LABELS.get(band, band)} · "
                   f"{'' if tokens is None else f'{int(tokens):,} tokens · '}{where}")
        why = f"Sent as part of the {BAND_LABELS.get(band, band)}"
        in_place = ref is not None and synthetic[k] is not None and (ref, synthetic[k]) in replaced
        if in_place:  # the manager's edit record sent this row instead of the transcript message
            why += f"; sent in place of transcript #{ref}: {reason_words(synthetic[k])}"
        elif synthetic[k]:
            why += f"; written by the engine ({synthetic[k]})"
        if k in f.own and not in_place:
            rep = repairs.get(ref) if ref is not None else None
            why += "; rewritten by the pairing repair" + (f" ({repair_words(rep.kind)})" if rep is not None else "")
        calls = _tool_calls(msg)
        ids = [c[0] for c in calls] + ([str(msg["tool_call_id"])] if msg.get("tool_call_id") else [])
        links = tuple(f"msg-{i}" for cid in ids for i in index.get(cid, ()) if i != ref)
        rows.append(ChatRow(f"msg-{ref}" if ref is not None else f"row-{k}", str(msg.get("role")), band, heading,
                            why + ".", mask_text(_message_text(msg.get("content"))), calls, links))
    return rows


def not_sent_rows(rp: Replay, call: int, not_sent: pd.DataFrame | None = None,
                  limit: int | None = None) -> list[ChatRow]:
    """Every earlier transcript message missing from this call as a chat row, with the reason
    (the first ``limit`` of them when given: late in a long conversation that is most of it)."""
    df = not_sent_table(rp, call) if not_sent is None else not_sent
    if limit is not None:
        df = df.head(limit)
    index = _tool_call_index(rp)
    rows = [ChatRow(f"not-sent-{k}", "system", "", "system · summary block computed for this call",
                    f"Not sent: {reason}.", text, note=f"not sent: {reason}")
            for k, (reason, text) in enumerate(summary_not_sent(rp, call))]
    for ref, reason in zip(df["ref"], df["reason"], strict=True):
        if pd.isna(ref):
            continue  # the synthesised rows above
        i = int(ref)
        msg = rp.messages[i]
        calls = _tool_calls(msg)
        ids = [c[0] for c in calls] + ([str(msg["tool_call_id"])] if msg.get("tool_call_id") else [])
        rows.append(ChatRow(f"msg-{i}", str(msg.get("role")), "", f"{msg.get('role')} · transcript #{i}",
                            f"Not sent: {reason}.", mask_text(_message_text(msg.get("content"))), calls,
                            tuple(f"msg-{j}" for cid in ids for j in index.get(cid, ()) if j != i),
                            note=f"not sent: {reason}"))
    return rows


CHAT_CSS = (".ci-chat details{border-left:4px solid #ccc;margin:3px 0;padding:3px 8px;background:rgba(0,0,0,.025);"
            "scroll-margin-top:var(--ci-sticky-top, 15rem)}"
            ".ci-chat summary{cursor:pointer;font-size:.9rem;line-height:1.5}"
            ".ci-chat .why{color:#555;font-size:.82rem;margin:2px 0}"
            ".ci-chat pre{white-space:pre-wrap;word-break:break-word;max-height:26rem;overflow:auto;"
            "font-size:.8rem;margin:4px 0;padding:6px;background:rgba(0,0,0,.04)}"
            ".ci-chat .prev{color:#666}.ci-chat .note{color:#8a1c1c}")


def chat_html(rows: list[ChatRow], *, limit: int = CHAT_ROWS_MAX, total: int | None = None) -> str:
    """Chat rows as one HTML block of ``<details>`` elements: the heading line always visible
    (role, band, tokens, transcript #, a preview), the full text, the tool calls with their
    arguments, why the message is there and links to related messages on expanding. Every text
    is HTML-escaped: transcript content is shown as text, never interpreted."""
    import html

    out = [f"<style>{CHAT_CSS}</style><div class='ci-chat'>"]
    for r in rows[:limit]:
        color = BAND_COLORS.get(r.band, "#BBBBBB")
        preview = " ".join(r.text.split())[:110]
        if not preview and r.tool_calls:
            preview = ", ".join(f"{name}(…)" for _, name, _ in r.tool_calls)
        text = r.text if len(r.text) <= CHAT_TEXT_MAX else \
            r.text[:CHAT_TEXT_MAX] + f"\n… {len(r.text) - CHAT_TEXT_MAX:,} more characters (see Export)"
        body = [f"<div class='why'>{html.escape(r.why)}</div>"]
        if text:
            body.append(f"<pre>{html.escape(text)}</pre>")
        for cid, name, args in r.tool_calls:
            body.append(f"<div class='why'>tool call <b>{html.escape(name)}</b> · id {html.escape(cid)}</div>"
                        f"<pre>{html.escape(args)}</pre>")
        if r.links:
            body.append("<div class='why'>related: " + ", ".join(
                f"<a href='#{html.escape(a)}'>{html.escape(_anchor_words(a))}</a>"
                for a in dict.fromkeys(r.links)) + "</div>")
        out.append(f"<details id='{html.escape(r.anchor)}' style='border-left-color:{color}'>"
                   f"<summary><b>{html.escape(r.heading)}</b>"
                   + (f" · <span class='note'>{html.escape(r.note)}</span>" if r.note else "")
                   + f" <span class='prev'>{html.escape(preview)}</span>"
                   f"</summary>{''.join(body)}</details>")
    total = len(rows) if total is None else total
    if total > limit:
        out.append(f"<p>… {total - limit:,} more rows are not drawn here (the table view and the Export view "
                   "have all of them).</p>")
    out.append("</div>")
    return "".join(out)


def _anchor_words(anchor: str) -> str:
    """A chat row's anchor as link text: ``msg-12`` (or ``rep-msg-12``) is "transcript #12"."""
    m = re.search(r"msg-(\d+)$", anchor)
    return f"transcript #{m.group(1)}" if m else anchor


def band_style(band: Any) -> str:
    color = BAND_COLORS.get(str(band))
    return f"background-color: {color}; color: #111" if color else ""


def payload_message_text(rp: Replay, call: int, pos: int) -> str:
    """One payload row as pretty JSON, secrets masked (shown with ``st.code``, never rendered)."""
    msg = rp.frames[call].payload(rp.messages)[pos]
    return json.dumps(mask_secrets(msg), ensure_ascii=False, indent=2, default=str)


def transcript_message_text(rp: Replay, index: int) -> str:
    """Transcript message ``index`` as pretty JSON, secrets masked (shown with ``st.code``)."""
    return json.dumps(mask_secrets(rp.messages[index]), ensure_ascii=False, indent=2, default=str)


def explain_message(rp: Replay, call: int, index: int, not_sent: pd.DataFrame | None = None) -> str:
    """Why transcript message ``index`` is or is not in this call's payload — one sentence.
    ``not_sent`` is this call's :func:`not_sent_table` when the caller already has it."""
    f = rp.frames[call]
    msgs = rp.messages
    if not 0 <= index < len(msgs):
        return f"There is no message {index}: the transcript has {len(msgs)} messages (0–{len(msgs) - 1})."
    if index >= f.at:
        return (f"Message {index} comes after this call (the call replies at message {f.at}), "
                "so it does not exist yet at this point of the conversation.")
    for pos, ref in enumerate(f.refs):
        if ref == index:
            band = BAND_LABELS.get(f.row_bands[pos], f.row_bands[pos])
            changed = " (rewritten by the pairing repair)" if pos in f.own else ""
            return f"Message {index} is sent: payload row {pos}, band '{band}'{changed}."
    df = not_sent_table(rp, call) if not_sent is None else not_sent
    row = df[df["ref"] == index]
    reason = row["reason"].iloc[0] if not row.empty else "not part of the payload"
    return f"Message {index} is not sent: {reason}."


def summary_block_text(rp: Replay, call: int) -> str | None:
    """The summary block this call *sends* (the summary row of its payload), or None. A summary
    computed but trimmed is not sent and is never returned here (Q18): see
    :func:`summary_not_sent`."""
    f = rp.frames[call]
    for pos, band in enumerate(f.row_bands):
        if band == "summary":
            content = f.payload(rp.messages)[pos].get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
            return mask_text(text)
    return None


def summary_not_sent(rp: Replay, call: int) -> list[tuple[str, str]]:
    """Summary blocks computed for this call but not sent: ``(reason, masked text)`` each (Q18)."""
    out = []
    for n in rp.frames[call].not_sent:
        content = n.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
        out.append((str(n["reason"]), mask_text(text)))
    return out


def agent_words(rp: Replay) -> str:
    """The system text, tools, model and window in force and where each came from (Q21): the
    CLI's agent line (:meth:`~inspector.policy.AgentInForce.describe`), with a source that carries
    its own note in parentheses written "manifest; the transcript records no model" (not nested)."""
    a = rp.agent
    if a is None:
        return ""
    src = re.sub(r"^(\w+) \((.*)\)$", r"\1; \2", a.model_source)
    model = f"{a.model} ({src})" if a.model else src
    window = f"{a.window:,} tokens ({a.window_source})" if a.window is not None else "unknown"
    return f"agent: system text {a.system_detail} · tools {a.tools_detail} · model {model} · window {window}"


def plain_md(text: Any) -> str:
    """Plain text for a Markdown element (a caption, an alert): every Markdown, HTML or Streamlit
    directive character is escaped, so the text shows as typed in the page's own font (not as a
    monospace code span)."""
    s = " ".join(str(text).split())
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:=])", r"\\\1", s)


INDEX_COLUMNS = frozenset(("ref", "transcript #", "message", "#", "pos", "call", "turn", "step"))
"""Columns that hold a position (a transcript index, a call): written without thousands separators."""


def shown(df: pd.DataFrame) -> pd.DataFrame:
    """A table for the screen with no "None" / "null" cell: a missing value is "—" (numbers in a
    column that has one are written out: counts with thousands separators, as the other columns
    show them, positions such as a transcript index without)."""
    out = df.copy()
    for col in out.columns:
        if not out[col].isna().any():
            continue
        if pd.api.types.is_numeric_dtype(out[col]) and not pd.api.types.is_bool_dtype(out[col]):
            sep = "" if str(col) in INDEX_COLUMNS else ","
            out[col] = [("—" if pd.isna(v) else (f"{int(v):{sep}}" if float(v).is_integer() else f"{float(v):,.1f}"))
                        for v in out[col]]
        else:
            out[col] = out[col].astype(object).where(out[col].notna(), "—")
    return out


def summary_caption(rp: Replay, call: int) -> str:
    f = rp.frames[call]
    tokens = f.bands.get("summary", 0)
    return f"summary block: {tokens:,} tokens · summarizer: {rp.summarizer_label}"


# --- repairs ------------------------------------------------------------------------------------------

def _tool_call_index(rp: Replay) -> dict[str, list[int]]:
    """Tool call id → transcript indices of the ask(s) and result(s) that carry it (cached on the replay)."""
    return rp.view("app_call_index", lambda: _call_index(rp))


def _call_index(rp: Replay) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, m in enumerate(rp.messages):
        ids = [c.get("id") for c in (m.get("tool_calls") or []) if isinstance(c, dict)]
        if m.get("tool_call_id") is not None:
            ids.append(m.get("tool_call_id"))
        for cid in ids:
            if isinstance(cid, str) and cid:
                out.setdefault(cid, []).append(i)
    return out


def repairs_view(rp: Replay, call: int | None = None) -> pd.DataFrame:
    """:func:`repairs_table` plus ``messages``: the transcript message the repair concerned (its
    ``ref``) and every ask and result that carries an id the repair names (read from the record's
    fields, never from its prose)."""
    df = repairs_table(rp, call)
    index = _tool_call_index(rp)
    links = []
    for row in df.itertuples(index=False):
        ids = {x for x in (row.tool_call_id, row.new_id) if isinstance(x, str)}
        refs = sorted({i for cid in ids for i in index.get(cid, ())} | ({int(row.ref)} if pd.notna(row.ref) else set()))
        links.append(", ".join(str(i) for i in refs))
    df.insert(len(df.columns) - 1, "messages", links)
    df.insert(df.columns.get_loc("kind") + 1, "what", [repair_words(k) for k in df["kind"]])
    return df


@dataclass(frozen=True)
class Finding:
    """One repair or importer finding as a sentence: where (``place``), what (``words``), the tool
    call ids it names, a note (the record's own detail) and the transcript messages it concerns."""

    place: str
    words: str
    note: str
    messages: tuple[int, ...]


def repair_findings(rp: Replay, call: int | None = None) -> list[Finding]:
    """Every pairing repair of one call (or of the replay) in words, with the transcript messages
    it concerns (:func:`repairs_view`'s links)."""
    df = repairs_view(rp, call)
    out = []
    for row in df.itertuples(index=False):
        ids = ""
        if isinstance(row.tool_call_id, str) and row.tool_call_id:
            ids = f" (tool call {row.tool_call_id}" + (f", re-bound to {row.new_id}" if isinstance(row.new_id, str)
                                                       else "") + ")"
        note = "" if row.kind == "empty_result_synthesised" else str(row.detail or "")
        msgs = tuple(int(x) for x in str(row.messages).split(", ") if x.strip().isdigit())
        out.append(Finding(f"call {row.call} · turn {row.turn} · step {row.step}", repair_words(row.kind) + ids,
                           note, msgs))
    return out


def irregularity_findings(rp: Replay) -> list[Finding]:
    """What the transcript itself contains that a strict provider would object to (the importer's
    findings, kept as found), in words, each with the message it is about."""
    return [Finding("the file as a whole" if r.index is None else f"transcript #{r.index}", irregularity_words(r.kind),
                    str(r.detail or ""), () if r.index is None else (int(r.index),))
            for r in getattr(rp.transcript, "irregularities", [])]


FINDINGS_MAX = 200
"""Findings drawn per list; beyond it the list says how many are left out (the Export view's
frames hold every repair)."""


def findings_html(rp: Replay, findings: list[Finding], prefix: str) -> str:
    """Findings as a list of sentences, each linking to its messages; the messages follow as chat
    rows (anchors ``{prefix}msg-N``), so a link opens the message it names on the same page. At
    most :data:`FINDINGS_MAX` of them."""
    import html

    items: list[str] = []
    wanted: list[int] = []
    for f in findings[:FINDINGS_MAX]:
        links = ", ".join(f"<a href='#{prefix}msg-{i}'>transcript #{i}</a>" for i in f.messages)
        wanted += f.messages
        note = f"<div class='why'>{html.escape(mask_text(f.note))}</div>" if f.note else ""
        items.append(f"<li><b>{html.escape(f.place)}</b>: {html.escape(f.words)}"
                     + (f" — {links}" if links else "") + f"{note}</li>")
    rows = []
    for i in sorted(set(wanted)):
        if not 0 <= i < len(rp.messages):
            continue
        msg = rp.messages[i]
        rows.append(ChatRow(f"{prefix}msg-{i}", str(msg.get("role")), "", f"{msg.get('role')} · transcript #{i}",
                            "A message named above.", mask_text(_message_text(msg.get("content"))),
                            _tool_calls(msg)))
    if len(findings) > FINDINGS_MAX:
        items.append(f"<li>… {len(findings) - FINDINGS_MAX:,} more are not listed here (the Export view's frames "
                     "hold every repair).</li>")
    return ("<style>.ci-findings li{margin:2px 0}.ci-findings .why{color:#555;font-size:.82rem}</style>"
            f"<ul class='ci-findings'>{''.join(items)}</ul>"
            + (chat_html(rows) if rows else ""))


# --- manifest editor -----------------------------------------------------------------------------------------

def error_excerpt(text: str, lines: Iterable[int], context: int = 2) -> str:
    """The manifest's lines around each error line, numbered, the error lines marked ``▶``."""
    src = text.splitlines()
    marked = {n for n in lines if 1 <= n <= max(len(src), 1)}
    keep = sorted({k for n in marked for k in range(max(1, n - context), min(len(src), n + context) + 1)})
    width = len(str(max(keep, default=1)))
    out, last = [], 0
    for k in keep:
        if last and k > last + 1:
            out.append("   " + "·" * width)
        out.append(f"{'▶' if k in marked else ' '} {k:>{width}} │ {src[k - 1]}")
        last = k
    return "\n".join(out)


EDITOR_LINE_PX = 20
"""Line height of the manifest editor; the gutter's numbers are drawn on the same grid."""
EDITOR_PAD_PX = 8
EDITOR_GUTTER_PX = 46


def editor_gutter_svg(text: str, error_lines: Iterable[int] = ()) -> str:
    """Line numbers for the manifest editor, drawn as an SVG the editor shows as its background.

    One number per line of ``text`` (``text.split("\n")``: a trailing newline is a line, as the
    editor shows it), on a :data:`EDITOR_LINE_PX` grid; each error line gets ``▶`` before its number
    and a red band across the editor. The SVG scrolls with the text (``background-attachment:
    local``) and the editor does not wrap lines, so number k always sits beside line k. No script:
    the text is not in the SVG, only numbers."""
    count = len(text.split("\n"))
    marked = {n for n in error_lines if 1 <= n <= count}
    height = 2 * EDITOR_PAD_PX + count * EDITOR_LINE_PX
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="{height}">',
             f'<rect x="0" y="0" width="{EDITOR_GUTTER_PX - 6}" height="{height}" fill="#f0f2f6"/>']
    for n in sorted(marked):
        top = EDITOR_PAD_PX + (n - 1) * EDITOR_LINE_PX
        parts.append(f'<rect class="error" x="0" y="{top}" width="4000" height="{EDITOR_LINE_PX}" '
                     'fill="#ff2b2b" fill-opacity="0.16"/>')
    for n in range(1, count + 1):
        base = EDITOR_PAD_PX + (n - 1) * EDITOR_LINE_PX + 14
        mark, color = ("▶ ", "#d00000") if n in marked else ("", "#8a8d96")
        parts.append(f'<text x="{EDITOR_GUTTER_PX - 12}" y="{base}" text-anchor="end" font-family="monospace" '
                     f'font-size="12" fill="{color}">{mark}{n}</text>')
    parts.append("</svg>")
    return "".join(parts)


def editor_css(key: str, text: str, error_lines: Iterable[int] = ()) -> str:
    """The ``<style>`` that turns the text area with widget key ``key`` into a numbered,
    monospace, non-wrapping editor (see :func:`editor_gutter_svg`)."""
    from urllib.parse import quote

    svg = quote(editor_gutter_svg(text, error_lines), safe="")
    return (f"<style>.st-key-{key} textarea {{font-family: 'Source Code Pro', ui-monospace, monospace !important; "
            f"font-size: 13px !important; line-height: {EDITOR_LINE_PX}px !important; "
            f"padding: {EDITOR_PAD_PX}px 8px {EDITOR_PAD_PX}px {EDITOR_GUTTER_PX}px !important; "
            "white-space: pre !important; overflow-wrap: normal !important; overflow-x: auto !important; "
            f"background-image: url(\"data:image/svg+xml,{svg}\") !important; background-repeat: no-repeat !important; "
            "background-attachment: local !important; background-position: 0 0 !important;}</style>")


# --- side by side ---------------------------------------------------------------------------------------

def _message_previews(rp: Replay) -> list[str]:
    """A (masked) one-line preview of every transcript message, made once per replay."""
    return rp.view("app_previews", lambda: [_preview(m.get("content"), 100) for m in rp.messages])


def keep_table(replays: Mapping[str, Replay], call: int) -> pd.DataFrame:
    """For one call: every transcript message that exists at that point, and the band each strategy
    sends it in ("—" = not sent). The first row is the summary block (tokens per strategy)."""
    if not replays:
        return pd.DataFrame()
    first = next(iter(replays.values()))
    msgs = first.messages
    at = min(first.frames[call].at, len(msgs))
    sent = {name: {r: b for r, b in zip(rp.frames[call].refs, rp.frames[call].row_bands, strict=True) if r is not None}
            for name, rp in replays.items()}
    rows: list[dict[str, Any]] = [{"ref": None, "role": "(summary block)", "content": "",
                                   **{name: (f"{rp.frames[call].bands.get('summary', 0):,} tokens"
                                             if rp.frames[call].bands.get("summary") else "—")
                                      for name, rp in replays.items()}}]
    previews = _message_previews(first)
    for i in range(at):
        rows.append({"ref": i, "role": msgs[i].get("role"), "content": previews[i],
                     **{name: sent[name].get(i, "—") for name in replays}})
    df = pd.DataFrame(rows, columns=["ref", "role", *replays, "content"])
    df["ref"] = df["ref"].astype("Int64")
    df.insert(2 + len(replays), "differs", [len({r[name] for name in replays}) > 1 for r in rows])
    return df


KEEP_BAND_WORDS = {"system": "system", "summary": "summary", "history": "kept history", "user": "user turn",
                   "working_memory": "working memory", "tool_schemas": "tool schemas"}
"""The bands in :func:`keep_view`'s strategy columns: short words that fit a narrow column."""


def keep_view(table: pd.DataFrame, strategies: Iterable[str]) -> pd.DataFrame:
    """:func:`keep_table` for the screen: ``#`` (the transcript message; "—" for the summary
    block), what each strategy sends it as (in words, "—" = not sent), whether they differ, and
    the message as ``role · preview``, so the strategies' columns come first and fit at 1024 px."""
    names = list(strategies)
    out = pd.DataFrame({"#": ["—" if pd.isna(r) else f"{int(r)}" for r in table["ref"]]})
    for name in names:
        out[name] = [KEEP_BAND_WORDS.get(str(v), str(v)) for v in table[name]]
    out["differs"] = table["differs"].to_numpy()
    out["message"] = [f"{role} · {text}" if text else str(role) for role, text in zip(table["role"], table["content"],
                                                                                       strict=True)]
    return out


def number_words(value: Any, dollars: bool = False) -> str:
    """A number as a table cell: thousands separators, dollars with four decimals, "—" for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and dollars:
        return f"${value:,.4f}"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


def totals_by_strategy(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`~inspector.report.tables.compare_table` turned on its side: one row per measure (in
    words), one column per strategy, every number written out, so two to four strategies fit at
    1024 px without a column cut off at the right."""
    from inspector.vocabulary import column_words

    rows = {}
    for col in table.columns:
        if col == "strategy":
            continue
        rows[column_words(col)] = [number_words(v.item() if hasattr(v, "item") else v, col.endswith("usd"))
                                   for v in table[col]]
    return pd.DataFrame.from_dict(rows, orient="index", columns=[str(s) for s in table["strategy"]])


def drop_reasons(rp: Replay, call: int) -> dict[str, int]:
    """How many earlier messages this call leaves out, by reason (most frequent first)."""
    counts = not_sent_table(rp, call)["reason"].value_counts()
    return {str(k): int(v) for k, v in counts.items()}


def kept_counts(replays: Mapping[str, Replay], call: int) -> dict[str, str]:
    out = {}
    for name, rp in replays.items():
        f = rp.frames[call]
        kept = sum(1 for r in f.refs if r is not None)
        out[name] = f"{kept} of {min(f.at, len(rp.messages))} messages · {f.payload_tokens:,} tokens"
    return out


# --- forgotten references -----------------------------------------------------------------------------

def forgotten_view(rp: Replay, call: int) -> pd.DataFrame:
    """The identifiers this call needed and could no longer see, with the not-sent message holding
    each (``transcript #``) and why it was not sent. Computed once per replay."""
    from inspector.report.figures import forgotten_per_call

    cache = forgotten_per_call(rp)
    rows = [{"identifier": mask_text(x.identifier), "kind": x.kind, "needed in": ", ".join(x.needed_in),
             "transcript #": x.message, "why not sent": x.reason} for x in cache[call]]
    return pd.DataFrame(rows, columns=["identifier", "kind", "needed in", "transcript #", "why not sent"])


# --- fleet: many conversations under each strategy -----------------------------------------------------

@dataclass(frozen=True)
class FleetInput:
    """One conversation of the fleet view: where it comes from (``label`` = file name, ``#N`` for
    the N-th conversation of a multi-conversation file) and the transcript itself."""

    label: str
    conversation: int
    transcript: Any


def fleet_runs(runs: Iterable[tuple[FleetInput, Mapping[str, Replay]]]) -> pd.DataFrame:
    """One row per (conversation, strategy): the totals the CLI's ``compare`` prints for a run
    (:func:`~inspector.report.tables.totals_row`) plus the forgotten references, so the app's
    fleet view and ``context-inspector compare A B C`` agree row for row."""
    from inspector.forgetting import forgetting_totals, replay_needs
    from inspector.report.tables import totals_row

    rows = []
    for item, replays in runs:
        for name, rp in replays.items():
            row: dict[str, Any] = {"transcript": item.label, "conversation": item.conversation}
            row.update(totals_row(rp, name))
            row["forgotten"] = forgetting_totals(replay_needs(rp))["forgotten"]
            rows.append(row)
    return pd.DataFrame(rows)


def fleet_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per strategy over every conversation: :func:`inspector.report.fleet.fleet_table` (the CLI's
    fleet summary) plus the forgotten references summed."""
    from inspector.report.fleet import fleet_table

    table = fleet_table(runs, ["strategy"])
    if "forgotten" in runs.columns and not table.empty:
        table["forgotten"] = [int(runs.loc[runs["strategy"] == s, "forgotten"].sum()) for s in table["strategy"]]
    return table


def worded(df: pd.DataFrame) -> pd.DataFrame:
    """The same table with headings in words (:func:`inspector.vocabulary.column_words`)."""
    from inspector.vocabulary import column_words

    return df.rename(columns={c: column_words(c) for c in df.columns})


# --- export ---------------------------------------------------------------------------------------------

def frames_json(rp: Replay) -> str:
    from inspector.forgetting import replay_dumps

    return replay_dumps(rp, payloads=False)


def frames_csv(rp: Replay) -> str:
    return frames_table(rp).to_csv(index=False)


def payload_json(rp: Replay, call: int) -> str:
    f = rp.frames[call]
    doc = {"call": call, **f.to_json(rp.messages)}
    return json.dumps(mask_secrets(doc), ensure_ascii=False, indent=1, default=str)
