"""The notebook face: what the notebooks' cells call, so the cells stay short and the demo reads as a story.

* :func:`resolve` finds the notebooks' paths from the repository root, from ``notebooks/`` or from a
  plain ``pip install`` (the bundled copies).
* :func:`summaries` turns the ``MODEL`` / ``API_BASE`` parameters into the replay options of the one
  default policy (Q22): a live summarizer through litellm, or the labelled offline stand-in.
* :func:`progress` reports a sweep's progress as an ordinary output updated in place (not on
  stderr, which Jupyter paints as an error).
* :func:`run_sweep` runs :func:`inspector.sweep.sweep` locally or on a Dask cluster.
* :func:`show` steps through a replay in Jupyter: the band bar, the payload and what is not sent,
  with a step control (ipywidgets). It reads only the records the app reads
  (:mod:`inspector.report.per_call`, :mod:`inspector.report.tables`), so both faces show the same.

Importing this module changes nothing (no renderer, no environment; :func:`setup` sets the display
options when a notebook asks); ipywidgets is imported only by :func:`show`.
"""

from __future__ import annotations

import functools
import html
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.bundled import find_file
from inspector.replay import Replay


# --- the session --------------------------------------------------------------------------------

def setup(max_colwidth: int = 120) -> str:
    """What a notebook calls once at the top: figures that travel
    (:func:`inspector.report.figures.use_notebook_renderer`: they survive nbconvert HTML export and
    GitHub previews) and pandas tables that show a message preview whole (up to ``max_colwidth``
    characters instead of pandas' 50). Changes only those two display settings; returns the
    plotly renderer name."""
    import pandas as pd

    from inspector.report.figures import use_notebook_renderer

    pd.set_option("display.max_colwidth", max_colwidth)
    return use_notebook_renderer()


# --- paths ----------------------------------------------------------------------------------------

def checkout_root(start: Path | None = None) -> Path:
    """The nearest directory at or above ``start`` (default: the working directory) that holds
    ``sample_manifests/``; ``start`` itself when there is none (an installed package)."""
    here = Path.cwd() if start is None else Path(start)
    return next((p for p in (here, *here.parents) if (p / "sample_manifests").is_dir()), here)


def resolve(path: str | os.PathLike[str], start: Path | None = None) -> Path:
    """``path`` as given, else under the checkout root, else the bundled copy of a sample
    (:func:`inspector.bundled.find_file`); unchanged when none exists, so the reader's own error
    names it."""
    return find_file(os.fspath(path), checkout_root(start))


# --- the summarizer -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Summaries:
    """Where summaries come from, as replay/sweep/compare keyword arguments, and the words for it."""

    model: str | None
    llm: Any
    summarizer: str
    summary_cache: str | None

    def options(self, counter: str | None = None) -> dict[str, Any]:
        """``counter``, ``summarizer``, ``llm`` and ``summary_cache`` for replay, sweep and compare."""
        return {"counter": counter, "summarizer": self.summarizer, "llm": self.llm,
                "summary_cache": self.summary_cache}

    @property
    def words(self) -> str:
        """Where the summaries come from, in a sentence for the notebook (Markdown)."""
        if self.model:
            return f"Summaries come from **{self.model}** through litellm (cached in `{self.summary_cache}`)."
        return ("Summaries come from the **offline stand-in (not a model)**: a deterministic, labelled text built "
                "from the messages themselves, so this notebook runs with no network and no API key. Token counts, "
                "budgets and the agent's own call costs are real; the summarizer's cost is an estimate and the "
                "summaries' wording is not a model's. Set `MODEL` (and `API_BASE`) to use a real model.")


def summaries(model: str | None = None, api_base: str | None = None,
              summary_cache: str | os.PathLike[str] = "~/.cache/context-inspector/summaries", *,
              timeout: float = 60) -> Summaries:
    """The default policy's summarizer (``auto``: the manifest's, Q22), served by ``model`` through
    litellm when one is given (else ``$MODEL``), otherwise by the labelled offline stand-in.

    The key comes from ``$API_KEY`` or the provider's own variable (e.g. ``OPENAI_API_KEY``); a
    local OpenAI-compatible server (``api_base``, else ``$API_BASE``) needs none, but litellm wants
    a value, so ``"unused"`` is passed."""
    from inspector.policy import DEFAULT_POLICY

    model = model or os.environ.get("MODEL") or None
    api_base = api_base or os.environ.get("API_BASE") or None
    if not model:
        return Summaries(None, None, DEFAULT_POLICY.summarizer, None)
    from inspector.engine.llm import LLMEngine

    api_key = os.environ.get("API_KEY") or ("unused" if api_base else None)
    llm = LLMEngine(model=model, api_base=api_base, api_key=api_key, timeout=timeout)
    return Summaries(model, llm, DEFAULT_POLICY.summarizer, str(Path(summary_cache).expanduser()))


# --- transcripts and sweeping --------------------------------------------------------------------

def conversations(items: Iterable[Any], *, limit: int | None = None, start: Path | None = None) -> list[Any]:
    """The tuner's ``TRANSCRIPTS`` (paths, ``PATH#N``, loaded transcripts) as one transcript per
    conversation (:func:`inspector.tuning.expand_conversations`), each path found by :func:`resolve`
    first (``PATH#N`` resolves ``PATH``)."""
    from inspector.tuning import expand_conversations

    out: list[Any] = []
    for item in items:
        if isinstance(item, (str, os.PathLike)):
            text = os.fspath(item)
            path, sep, n = text.rpartition("#") if "#" in text and not resolve(text, start).exists() else (text, "", "")
            item = str(resolve(path, start)) + sep + n
        out.append(item)
    return expand_conversations(out, limit=limit)


# --- sweeping -------------------------------------------------------------------------------------

def progress(what: str = "replayed") -> Callable[[int, int], None]:
    """A sweep progress callback shown as one output line updated in place ("replayed 7 of 42
    runs"), at most every tenth of the way. Outside IPython it prints the final line only."""
    show: Any = None
    try:
        from IPython import get_ipython
        from IPython.display import Markdown
        from IPython.display import display as show
        if get_ipython() is None:  # a plain interpreter: the final line on stdout only
            show = None
    except ImportError:  # pragma: no cover - IPython comes with every notebook kernel
        pass
    handle: list[Any] = []

    def report(done: int, total: int) -> None:
        if not (done == total or (10 * done) // total > (10 * (done - 1)) // total):
            return
        text = f"{what} {done} of {total} runs" + (" — done." if done == total else " …")
        if show is None:
            if done == total:
                print(text)
            return
        if handle:
            handle[0].update(Markdown(text))
        else:
            handle.append(show(Markdown(text), display_id=True))

    return report


def run_sweep(manifest: Any, transcripts: Sequence[Any], grid: Any, *, summaries: Summaries,
              counter: str | None = None, processes: int | None = None, dask: str | None = None,
              overrides: Iterable[str] = (), progress_callback: Callable[[int, int], None] | None = None) -> Any:
    """:func:`inspector.sweep.sweep` with the notebook's options: on ``dask`` (``"local:N"`` or a
    scheduler address; needs ``context-inspector[fleet]``) when given, else on local processes.
    The table is the same either way; a Dask run reports the cluster in ``df.attrs["fleet"]``."""
    from inspector.sweep import sweep

    kw = dict(summaries.options(counter), processes=processes, overrides=list(overrides),
              progress=progress_callback if progress_callback is not None else progress())
    if not dask:
        return sweep(manifest, transcripts, grid, **kw)
    from inspector.fleet import connect

    with connect(dask) as client:
        return sweep(manifest, transcripts, grid, client=client, **kw)


def fleet_words(df: Any) -> str | None:
    """The Dask run of a sweep table in words (None for a local run)."""
    from inspector.fleet import FleetReport

    info = df.attrs.get("fleet")
    return None if not info else "**On Dask:** " + FleetReport(**info).words()


def run_notes(df: Any, grid: Any) -> list[Any]:
    """What to say under a sweep before its table: where it ran (Dask) and the runs that failed
    (with their error), as displayable objects; empty for a plain local run with no failure."""
    from IPython.display import Markdown

    out: list[Any] = []
    where = fleet_words(df)
    if where:
        out.append(Markdown(where))
    failed = df[df["error"].notna()]
    if len(failed):
        out.append(Markdown(f"**{len(failed)} run(s) failed** (invalid combination or unreadable transcript):"))
        out.append(failed[["transcript", "conversation", *grid, "error"]])
    return out


def replay_command(manifest: str, transcript: Any, overrides: Iterable[str], setting: Any) -> str | None:
    """The CLI command that replays one transcript under the recommended ``setting``, as Markdown
    (None without a setting)."""
    if not setting:
        return None
    from inspector.sweep import resolve_key

    first = transcript if isinstance(transcript, str) else "TRANSCRIPT"
    flags = " ".join([*(f"--set {s}" for s in overrides), *(f"--set {resolve_key(k)}={v}" for k, v in setting.items())])
    return f"Try it on one transcript, call by call:\n\n`context-inspector replay {manifest} {first} {flags}`"


# --- stepping through a replay --------------------------------------------------------------------

def band_bar_html(rp: Replay, call: int) -> str:
    """The call's bands against the model window as one stacked HTML bar (no script: it renders in
    a widget, a static export and a GitHub preview alike): the app's own bar,
    :func:`inspector.report.figures.band_bar_html`, so both faces draw the same thing."""
    from inspector.report.figures import band_bar_html as bar

    return bar(rp, call)


def _tool_names(rp: Replay, ref: Any) -> str:
    """The names of the tools transcript message ``ref`` calls ("" for none or a synthesised row)."""
    if ref is None or str(ref) == "<NA>":
        return ""
    calls = rp.messages[int(ref)].get("tool_calls") or []
    return ", ".join(str((c.get("function") or {}).get("name")) for c in calls if isinstance(c, dict))


def _preview_words(content: Any, tool_calls: Any) -> str:
    """A row's one-line preview; a message with no text but tool calls says which tools it calls."""
    text = "" if content is None or str(content) in ("", "null") else str(content)
    if not text and tool_calls:
        return f"(calls {tool_calls})"
    return text or "(no text)"


def _table_html(rows: list[list[str]], header: Sequence[str]) -> str:
    head = "".join(f"<th style='text-align:left;padding:2px 6px'>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left;vertical-align:top;padding:2px 6px'>{c}</td>"
                                    for c in row) + "</tr>" for row in rows)
    return f"<table style='border-collapse:collapse;font-size:12px'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def payload_html(rp: Replay, call: int) -> str:
    """The call's exact payload: one row per message (position, transcript index, band, role,
    tokens, tool calls), the text expandable to the whole message as JSON, secrets masked."""
    from inspector.report.per_call import payload_message_text, payload_view
    from inspector.report.figures import BAND_COLORS, BAND_LABELS

    df = payload_view(rp, call)
    rows = []
    for r in df.itertuples(index=False):
        band = str(r.band)
        swatch = f"<span style='background:{BAND_COLORS.get(band, '#fff')};padding:0 4px'>" \
                 f"{html.escape(BAND_LABELS.get(band, band))}</span>"
        ref = "synthesised" if r.ref is None or str(r.ref) == "<NA>" else str(r.ref)
        full = html.escape(payload_message_text(rp, call, int(r.pos)))
        preview = _preview_words(r.content, r.tool_calls)
        text = (f"<details><summary>{html.escape(preview)}</summary>"
                f"<pre style='white-space:pre-wrap;max-height:300px;overflow:auto'>{full}</pre></details>")
        rows.append([str(r.pos), ref, swatch, html.escape(str(r.role)),
                     "" if r.tokens is None else f"{int(r.tokens):,}", html.escape(str(r.tool_calls)), text])
    return _table_html(rows, ["#", "transcript #", "band", "role", "tokens", "tool calls", "message"])


def not_sent_html(rp: Replay, call: int) -> str:
    """The transcript messages that exist at this call but are not sent, each with the reason, then
    the references this call needed and could no longer see (:mod:`inspector.forgetting`)."""
    from inspector.report.per_call import forgotten_view
    from inspector.report.tables import not_sent_table

    df = not_sent_table(rp, call)
    if df.empty:
        out = "<p>Every message of the conversation so far is sent at this call.</p>"
    else:
        rows = [["(computed, not sent)" if str(r.ref) == "<NA>" else str(r.ref), html.escape(str(r.role)),
                 html.escape(str(r.reason)), html.escape(_preview_words(r.content, _tool_names(rp, r.ref)))]
                for r in df.itertuples(index=False)]
        out = _table_html(rows, ["transcript #", "role", "why not sent", "message"])
    lost = forgotten_view(rp, call)
    if len(lost):
        rows = [[f"<code>{html.escape(str(r[0]))}</code>", html.escape(str(r[2])), str(r[3]), html.escape(str(r[4]))]
                for r in lost.itertuples(index=False)]
        out += (f"<p><b>Forgotten at this call:</b> {len(lost)} identifier(s) it needed, held only by a message "
                "not sent.</p>" + _table_html(rows, ["identifier", "needed in", "transcript #", "why not sent"]))
    return out


def call_heading_html(rp: Replay, call: int) -> str:
    """Which call this is and what the engine did on it, in words."""
    from inspector.report.per_call import call_label
    from inspector.vocabulary import action_words

    f = rp.frames[call]
    parts = [f"context manager: {action_words(f.decision.action, f.summary_sent)}"]
    trimmed = sum(b - a for a, b in f.trimmed) + f.trimmed_synthetic
    if trimmed:
        parts.append(f"trimmer cut {trimmed} message(s)")
    if f.repairs:
        parts.append(f"{len(f.repairs)} pairing repair(s)")
    prefix = rp.prefix_line()  # what the log leaves out, and whether this budget counts it
    return (f"<b>{html.escape(call_label(rp, call))}</b> of {len(rp.frames)} — "
            + html.escape("; ".join(parts)) + f" · summarizer: {html.escape(rp.summarizer_label)}"
            + (f"<br>{html.escape(prefix)}" if prefix else ""))


def show(rp: Replay, call: int = 0) -> Any:
    """A stepper over ``rp`` for Jupyter: previous / next, a slider over every call, "jump to the
    next" event (:func:`inspector.report.tables.step_events`), and for the current call the band
    bar, the payload and what is not sent. Returns the widget (an ``ipywidgets.VBox``); its
    ``step`` attribute is the slider. Needs ipywidgets (``pip install 'context-inspector[notebook]'``)."""
    return Stepper(rp, call)


class _StepperMoves:
    """The stepper's moves and views, apart from its widgets (made in :func:`_stepper_class`, where
    ipywidgets is imported): ``step`` is the call slider, ``events`` the calls of each kind of event,
    and ``heading``, ``bar``, ``payload``, ``not_sent`` the HTML panes one call fills."""

    replay: Replay
    events: dict[str, list[int]]
    step: Any
    heading: Any
    bar: Any
    payload: Any
    not_sent: Any

    def go(self, call: int) -> None:
        """Move to ``call`` (clamped to the replay)."""
        self.step.value = max(self.step.min, min(int(call), self.step.max))

    def jump(self, kind: str) -> int | None:
        """Move to the next call after the current one with an event of ``kind``; None if none."""
        nxt = next((k for k in self.events.get(kind, []) if k > self.step.value), None)
        if nxt is not None:
            self.go(nxt)
        return nxt

    def render(self) -> None:
        """Fill the panes with the current call: its heading, band bar, payload and what was not sent."""
        k = self.step.value
        self.heading.value = call_heading_html(self.replay, k)
        self.bar.value = band_bar_html(self.replay, k)
        self.payload.value = payload_html(self.replay, k)
        self.not_sent.value = not_sent_html(self.replay, k)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The live widget, plus the current call as HTML for a static export (no widget state)."""
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if isinstance(bundle, dict):
            bundle["text/html"] = (self.heading.value + self.bar.value + "<h4>payload</h4>" + self.payload.value
                                   + "<h4>not sent &amp; why</h4>" + self.not_sent.value)
        return bundle


@functools.cache
def _stepper_class() -> type:
    """The stepper widget class: a :class:`_StepperMoves` laid out in an ipywidgets ``VBox``.
    Raises :class:`ImportError` (saying what to install) when ipywidgets is not installed."""
    try:
        import ipywidgets as w
    except ImportError as exc:
        raise ImportError("the notebook stepper needs ipywidgets: pip install 'context-inspector[notebook]'") from exc

    from inspector.report.tables import step_events

    class _Stepper(_StepperMoves, w.VBox):  # type: ignore[misc]
        def __init__(self, rp: Replay, call: int = 0) -> None:
            n = len(rp.frames)
            if n == 0:
                raise ValueError("this replay has no LLM call to show")
            self.replay = rp
            self.events = step_events(rp)
            self.step = w.IntSlider(value=max(0, min(int(call), n - 1)), min=0, max=n - 1, description="call",
                                    continuous_update=False, layout=w.Layout(width="420px"))
            self.prev_button = w.Button(description="◀ previous", layout=w.Layout(width="110px"))
            self.next_button = w.Button(description="next ▶", layout=w.Layout(width="90px"))
            kinds = [k for k, calls in self.events.items() if calls]
            self.event = w.Dropdown(options=kinds or ["(no event)"], description="jump to next",
                                    layout=w.Layout(width="300px"), style={"description_width": "initial"})
            self.jump_button = w.Button(description="jump", disabled=not kinds, layout=w.Layout(width="70px"))
            self.heading = w.HTML()
            self.bar = w.HTML()
            self.payload = w.HTML()
            self.not_sent = w.HTML()
            tabs = w.Tab(children=[self.payload, self.not_sent])
            tabs.set_title(0, "payload (what the model is sent)")
            tabs.set_title(1, "not sent & why")
            self.prev_button.on_click(lambda _: self.go(self.step.value - 1))
            self.next_button.on_click(lambda _: self.go(self.step.value + 1))
            self.jump_button.on_click(lambda _: self.jump(self.event.value))
            self.step.observe(lambda _change: self.render(), names="value")
            super().__init__([w.HBox([self.prev_button, self.step, self.next_button]),
                              w.HBox([self.event, self.jump_button]), self.heading, self.bar, tabs])
            self.render()

    return _Stepper


def Stepper(rp: Replay, call: int = 0) -> Any:  # noqa: N802 - constructs the widget class, made on first use
    """The widget :func:`show` returns (the class is made on first use: ipywidgets is optional)."""
    return _stepper_class()(rp, call)
