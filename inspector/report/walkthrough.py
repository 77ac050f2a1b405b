"""The words of the compaction walkthrough (``notebooks/compaction_demo.ipynb``), computed from a replay.

Each function reads one :class:`~inspector.replay.Replay` (or the report tables built from it) and
returns Markdown that states what *this* replay did, with every number taken from its frames and
commits: the notebook's cells only call these and display the result, so the demo reads as a story
when exported with ``--no-input`` and a change of parameters changes the sentences with the data.
Nothing here recounts a token or decides anything the engine did not decide.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from inspector.plugins import DEFAULTS
from inspector.replay import Replay
from inspector.report.figures import timeline
from inspector.report.tables import compare_table, forgotten_table, frames_table, preview_text, repairs_table
from inspector.vocabulary import action_words, registered_actions, summary_actions

REPAIR_WORDS: dict[str, str] = {
    "ask_stripped": "the assistant's unanswered tool call was removed and its text kept",
    "ask_removed": "an assistant message with only unanswered tool calls was removed",
    "empty_result_synthesised": "an empty result was added for a call left unanswered at the end",
    "id_rebound": "a result under the wrong id was re-attached to the unanswered call",
    "duplicate_dropped": "a second result for the same call was dropped",
    "orphan_dropped": "a result answering no call was dropped",
    "stray_result_dropped": "a result away from its call was dropped",
}
"""The pairing repair's kinds (``Frame.repairs[].kind``) in words."""

_NEEDED_WORDS = {"user": "the user's message", "working_memory": "the turn's working memory",
                 "next_reply": "the agent's next reply",
                 "next_tool_call": "the arguments of the agent's next tool call"}
"""Where a forgotten identifier was needed (:data:`inspector.forgetting.NEEDED_IN`), in words."""



def _summary_actions() -> tuple[str, ...]:
    """The registered summary actions (:func:`inspector.vocabulary.summary_actions`) in registration
    order, so the summarising manager's summary computed comes before its summary reused."""
    summary = summary_actions()
    return tuple(a.code for a in registered_actions() if a.code in summary)


def _keep_turns(rp: Replay) -> Any:
    """The ``keep_turns`` the replay's context manager ran with (its params model's default when the
    manifest does not write one); None for a manager without one."""
    return getattr(rp.settings.context_manager.typed_params, "keep_turns", None)


def _ranges(ranges: Any) -> str:
    return ", ".join(f"{a}–{b - 1}" for a, b in ranges)


def conversation_table(rp: Replay, width: int = 110) -> pd.DataFrame:
    """The transcript as read: one row per message, its role and a masked one-line preview."""
    msgs = rp.messages
    return pd.DataFrame({"role": [m.get("role") for m in msgs],
                         "message": [preview_text(m.get("content") or "(tool call)", width) for m in msgs]})


def introduction(rp: Replay) -> str:
    """The conversation, the agent's context manager and the budget of its calls, in one paragraph."""
    calls = frames_table(rp)
    msgs = rp.messages
    cm = getattr(rp.settings, "context_manager", None)
    first = calls.iloc[0]
    return (f"**The conversation:** {len(msgs)} messages, {sum(m.get('role') == 'user' for m in msgs)} user turns, "
            f"**{len(calls)} LLM calls**. **The agent:** `{getattr(cm, 'type', '?')}` context manager with "
            f"{getattr(cm, 'params', {})}. **The budget:** a {first.window:,}-token window ({first.window_source}) "
            f"− {first.reserve:,} reserved for the answer − {first.margin:,} safety margin = "
            f"**{first.input_budget:,} tokens of input** per call.")


def growth(rp: Replay) -> str:
    """How the payload grows before the first summary, and where the manager waits for old turns."""
    calls = frames_table(rp)
    first = calls.iloc[0]
    before = calls[calls.cm_action.isin(_summary_actions()).cumsum() == 0]
    grow = before.loc[before.payload_tokens.idxmax()] if len(before) else first
    heavy = calls.loc[calls.working_memory.idxmax()]
    text = (f"The first call sends **{first.payload_tokens:,}** tokens. Every turn adds its messages to the kept "
            f"history, and every tool result adds to working memory until the turn ends: by call {grow.call} "
            f"(turn {grow.turn}) the payload is **{grow.payload_tokens:,}** tokens, "
            f"{100 * grow.payload_tokens / grow.input_budget:.0f} % of the budget. The biggest working memory is at "
            f"call {heavy.call}: {heavy.working_memory:,} tokens of tool results in a single turn.")
    waiting = calls[calls.cm_action == "unchanged-too-few-turns"]
    if len(waiting):
        trimmed = int(waiting.trimmed.sum())
        text += (f"\n\nFrom call {waiting.call.iloc[0]} the history is over the summary trigger, yet nothing is "
                 f"folded ({len(waiting)} call(s)): the manager keeps the last "
                 f"{_keep_turns(rp)} turns word for word no matter what, and there is nothing older yet. If such a "
                 "payload crossed the input budget, the token trimmer would cut the oldest messages instead"
                 + (f" — here it did, {trimmed} message(s) in all." if trimmed else " — here it never had to."))
    return text


def commits_table(rp: Replay) -> pd.DataFrame:
    """One row per committed turn: what the write-back did and which transcript messages it folded."""
    return pd.DataFrame([{"after turn": c.turn, "action": action_words(c.action) if c.action != "unchanged" else
                          "nothing to fold", "summarizer called": c.summarizer_called,
                          "turns folded": c.folded_turns, "messages folded": _ranges(c.folded)}
                         for c in rp.commits],
                        columns=["after turn", "action", "summarizer called", "turns folded", "messages folded"])


def commit_folds(rp: Replay) -> list[Any]:
    """The commits that folded turns into a summary (computed or reused)."""
    return [c for c in rp.commits if c.action in _summary_actions()]


def commit_fold(rp: Replay) -> str:
    """The first commit-time fold and what the next call sends instead."""
    folds = commit_folds(rp)
    if not folds:
        return ("No commit folded anything with these settings: the conversation never had more than "
                f"{_keep_turns(rp)} stored turns.")
    c0 = folds[0]
    calls = frames_table(rp)
    later = calls[calls.turn > c0.turn]
    text = (f"The first fold happens at the commit of turn {c0.turn}: {c0.folded_turns} turn(s) "
            f"(transcript messages {_ranges(c0.folded)}) become a summary. ")
    if len(later):
        after = later.iloc[0]
        text += (f"The next call (call {after.call}) carries a summary band of {after.summary:,} tokens instead. "
                 f"From then on the engine folds at every commit: {len(folds)} commit-time summaries in all.")
    return text


def trigger_call(rp: Replay) -> int | None:
    """The first call whose history crossed the summary trigger during a turn (a summary computed,
    else one reused), or None."""
    calls = frames_table(rp)
    for action in _summary_actions():
        hits = calls[calls.cm_action == action]
        if len(hits):
            return int(hits.call.iloc[0])
    return None


def crossing_call(rp: Replay) -> int | None:
    """The first call at which the history in view crossed the summary trigger *during a turn*: the
    call before it, in the same turn, was under the trigger, and this one's working memory is larger
    (the tool loop grew it, which lowers the trigger). None when no turn shows that."""
    frames, summary = rp.frames, _summary_actions()
    for k in range(1, len(frames)):
        a, b = frames[k - 1], frames[k]
        under = a.decision.action not in summary and (a.decision.raw_tokens or 0) <= a.budget.hint
        if a.turn == b.turn and under and b.decision.action in summary \
                and b.bands.get("working_memory", 0) > a.bands.get("working_memory", 0):
            return k
    return None


def _sent(f: Any) -> str:
    tokens = f.bands.get("summary", 0)
    return (f"sent ({tokens:,} tokens)" if tokens else
            "computed earlier but trimmed for budget at this call, so not sent")


def trigger(rp: Replay) -> str:
    """The summary trigger crossed during a turn (:func:`crossing_call`), in words: the working memory
    that grew, the trigger that fell, what the manager did and whether the summary was sent on this
    and the next calls of the turn."""
    k = crossing_call(rp)
    if k is None:
        first = trigger_call(rp)
        if first is None:
            return "With these settings the history in view never crossed the trigger during a turn."
        f = rp.frames[first]
        return (f"**Call {first}** (turn {f.turn}, step {f.step}) is the first over the trigger "
                f"({f.decision.raw_tokens:,} tokens of history against {f.budget.hint:,}); the summary is "
                f"{_sent(f)}.")
    a, b = rp.frames[k - 1], rp.frames[k]
    fold = next((c for c in reversed(rp.commits) if c.turn < b.turn and c.action in _summary_actions()), None)
    origin = f"the commit of turn {fold.turn}" if fold is not None else "an earlier commit"
    text = (f"**Turn {b.turn}** is a tool loop. At call {k - 1} (step {a.step}) the history in view, "
            f"{a.decision.raw_tokens:,} tokens, is under the trigger of {a.budget.hint:,}. Each tool result joins "
            f"the working memory, which the budget counts as fixed, so what is left for history shrinks: at call {k} "
            f"(step {b.step}) the working memory is {b.bands.get('working_memory', 0):,} tokens, the trigger falls "
            f"to {b.budget.hint:,} and the same history is over it. Everything older than the last "
            f"{_keep_turns(rp)} turn(s) is already the summary written at {origin}, so the manager reuses that "
            "summary instead of computing one (no summarizer call) while the view stays under the hysteresis "
            f"ceiling of {b.budget.ceiling:,}.")
    later = [j for j in range(k, len(rp.frames)) if rp.frames[j].turn == b.turn]
    text += " In this turn the summary is " + "; ".join(f"at call {j}, {_sent(rp.frames[j])}" for j in later) + "."
    text += (f" Over the whole conversation the summarizer ran {rp.summarizer_calls['in_turn']} time(s) during "
             f"turns and {rp.summarizer_calls['commit']} time(s) at commits.")
    return text


def ratio_on_turn(loaded: Any, transcript: Any, turn: int, ratios: list[float], **replay_kw: Any) -> pd.DataFrame:
    """The hysteresis ratio's effect on one turn: the same conversation replayed at each ratio
    (everything else equal), one row per ratio: the step at which the history first crossed the
    trigger in that turn, the calls over the trigger, those that sent the summary, the messages
    trimmed and the tokens sent in the turn."""
    from inspector.compare import compare

    base = loaded.raw["spec"].get("context_manager") or {"type": DEFAULTS["context_manager"]}
    specs = {r: {**base, "params": {**(base.get("params") or {}), "hysteresis_ratio": r}} for r in ratios}
    replays = compare(loaded, transcript, {str(r): spec for r, spec in specs.items()}, **replay_kw)
    rows = []
    for r in ratios:
        frames = [f for f in replays[str(r)].frames if f.turn == turn]
        over = [f for f in frames if f.decision.action in _summary_actions()]
        rows.append({"hysteresis_ratio": r, "trigger at step 0": frames[0].budget.hint if frames else None,
                     "first step over the trigger": over[0].step if over else None,
                     "calls over the trigger": len(over),
                     "of them sending the summary": sum(1 for f in over if f.bands.get("summary", 0)),
                     "messages trimmed": sum(len(range(a, b)) for f in frames for a, b in f.trimmed),
                     "tokens sent in the turn": sum(f.payload_tokens for f in frames)})
    return pd.DataFrame(rows)


def ratio_effect(table: pd.DataFrame, turn: int) -> str:
    """:func:`ratio_on_turn`'s table in words."""
    if table.empty:
        return "No ratio was compared."
    lo, hi = table.iloc[0], table.iloc[-1]

    def step(row: Any) -> str:
        s = row["first step over the trigger"]
        return "never" if pd.isna(s) else f"at step {int(s)}"

    same = table["tokens sent in the turn"].nunique() == 1
    text = (f"In turn {turn}, from a ratio of {lo.hysteresis_ratio:g} to {hi.hysteresis_ratio:g} the trigger at the "
            f"turn's first call falls from {int(lo['trigger at step 0']):,} to {int(hi['trigger at step 0']):,} "
            f"tokens (the budget ÷ (1 + ratio)), so the history crosses it {step(lo)} at the lowest ratio and "
            f"{step(hi)} at the highest ({int(lo['calls over the trigger'])} → {int(hi['calls over the trigger'])} "
            "call(s) of the turn over the trigger). ")
    if same:
        text += ("What is sent is the same at every ratio: the summary reused is the one the last commit wrote, and "
                 "every commit folds the stored history back to that summary and the last turns, so there is no "
                 "older turn left for a summary computed inside the turn (the trimmer, not the ratio, decides what "
                 "goes when a call would pass the budget).")
    else:
        text += "The tokens sent in the turn differ between ratios: see the table."
    return text


def repair_call(rp: Replay) -> int | None:
    """The first call whose payload needed a pairing repair, or None."""
    return next((k for k, f in enumerate(rp.frames) if f.repairs), None)


def repair(rp: Replay) -> str:
    """The first pairing repair: what it did, the transcript gap behind it and how long it lasts."""
    repairs = repairs_table(rp)
    if not len(repairs):
        return "No payload needed a pairing repair with these settings."
    r = repairs.iloc[0]
    gaps = list(getattr(rp.transcript, "irregularities", []))
    cause = f" The transcript itself has the gap: {gaps[0].detail} (message {gaps[0].index})." if gaps else ""
    gone = next((c for c in rp.commits if gaps and any(a <= gaps[0].index < b for a, b in c.folded)), None)
    later = (f"; at the commit of turn {gone.turn} that turn was folded into the summary, so the broken round is "
             "no longer sent" if gone else "")
    all_ok = all(f.check == "ok" for f in rp.frames)
    return (f"**Call {int(r.call)}** (turn {r.turn}) is the first payload that needed a repair: "
            f"{REPAIR_WORDS.get(r.kind, r.kind)} ({r.detail}).{cause} The same repair is applied on "
            f"every call while that round is in view: {len(repairs)} time(s), up to call {int(repairs.call.max())}"
            f"{later}. Every payload passed the provider check after repair: "
            f"{'yes' if all_ok else 'no, see the check column'}.")


def forgetting(rp: Replay) -> str:
    """How many references the conversation forgot, and the first one with its cause."""
    lost = forgotten_table(rp)
    if not len(lost):
        return ("No call needed an identifier it could no longer see: every id, email, time or path the agent used "
                "was still in its payload or in the summary.")
    x = lost.iloc[0]
    where = " and ".join(_NEEDED_WORDS.get(w.strip(), w.strip()) for w in str(x["needed in"]).split(","))
    return (f"**{len(lost)} forgotten reference(s)** over the conversation. The first: `{x.identifier}` at call "
            f"{x.call}, needed in {where}, held only by message {x.message} ({x['why not sent']}).")


def strategy_columns(replays: Mapping[str, Replay], *, title: str = "Payload per LLM call, strategy by strategy"
                     ) -> Any:
    """The strategies' timelines side by side, one column each, on one y axis from zero.

    Each column is :func:`~inspector.report.figures.timeline` of that strategy, unchanged; each has
    its own legend under it, so a strategy lists only what applies to it (no summary trigger or
    summary band where it never summarises)."""
    from plotly.subplots import make_subplots

    names = list(replays)
    fig = make_subplots(rows=1, cols=max(1, len(names)), subplot_titles=names, shared_yaxes=True,
                        horizontal_spacing=0.03)
    top = max((f.payload_tokens for rp in replays.values() for f in rp.frames), default=0)
    entries = 0
    for col, name in enumerate(names, start=1):
        legend = "legend" if col == 1 else f"legend{col}"
        traces = timeline(replays[name]).data
        entries = max(entries, sum(1 for t in traces if t.showlegend is not False))
        for trace in traces:
            trace.update(legend=legend, legendgroup=f"{col}-{trace.name}")
            fig.add_trace(trace, row=1, col=col)
        domain = fig.layout[f"xaxis{'' if col == 1 else col}"].domain
        fig.update_layout({legend: dict(x=domain[0], xanchor="left", y=-0.14, yanchor="top", orientation="v",
                                        font=dict(size=10), tracegroupgap=0, bgcolor="rgba(0,0,0,0)")})
    below = 40 + 21 * entries  # room for the tallest legend under its column
    fig.update_layout(barmode="stack", height=400 + below, title=title, margin=dict(l=10, r=10, t=70, b=below))
    fig.update_xaxes(title_text="LLM call", dtick=5)
    fig.update_yaxes(range=[0, top * 1.18 or 1], row=1, col=1, title_text="tokens")
    return fig


def strategies(replays: Mapping[str, Replay]) -> str:
    """What the strategies cost, trim, pay the summarizer and forget, compared in words."""
    table = compare_table(replays)
    cheapest = table.loc[table.tokens_sent.idxmin()]
    dearest = table.loc[table.tokens_sent.idxmax()]
    most_trimmed = table.loc[table.trimmed.idxmax()]
    lines = [f"**{cheapest.strategy}** sends the fewest input tokens ({cheapest.tokens_sent:,}), "
             f"{100 * (1 - cheapest.tokens_sent / dearest.tokens_sent):.0f} % less than **{dearest.strategy}** "
             f"({dearest.tokens_sent:,})."]
    if most_trimmed.trimmed:
        lines.append(f"**{most_trimmed.strategy}** leans on the token trimmer the most: {most_trimmed.trimmed:,} "
                     "message removal(s) over the conversation, cutting whatever is oldest regardless of what it was.")
    for _, row in table[(table.summarizer_in_turn + table.summarizer_commit) > 0].iterrows():
        lines.append(f"**{row.strategy}** pays for {row.summarizer_in_turn + row.summarizer_commit} summarizer "
                     "call(s) and in exchange keeps a summary of what it folds away.")
    forgot = {name: len(forgotten_table(r)) for name, r in replays.items()}
    lines.append("Forgotten references (identifiers a call needed but could no longer see): "
                 + ", ".join(f"**{name}** {n}" for name, n in forgot.items()) + ".")
    over = table[table.over_budget > 0]
    lines.append("No strategy ever went over the input budget." if over.empty else
                 "Over budget: " + ", ".join(f"{r.strategy} ({r.over_budget} call(s))" for r in over.itertuples())
                 + ".")
    return " ".join(lines)


def calibration(cal: Any, *, name: str = "") -> str:
    """One transcript's calibration (:func:`inspector.calibration.calibrate`) in words: per model,
    the provider's input count against ours, then what to apply — the fitted line first, and the
    factor only when :func:`inspector.calibration.factor_offered` allows it, else the slope and the
    offset as the unrecorded prefix (:func:`inspector.calibration.advice`, the one wording)."""
    from inspector.calibration import advice

    if not len(cal.factors):
        return " ".join(cal.notes) or "No provider usage recorded: nothing to calibrate against."
    parts = []
    for (_, f), said in zip(cal.factors.iterrows(), advice(cal), strict=True):
        parts.append(f"Over {int(f.calls)} logged call(s) of `{f.model}`{' in ' + name if name else ''}, the "
                     f"provider counted {int(f.provider_tokens):,} input tokens; `tiktoken` counted "
                     f"{int(f.tiktoken):,} and `estimate` {int(f.estimate):,}. {said}")
    return " ".join([*parts, *cal.notes])


def calibration_table(cal: Any) -> pd.DataFrame:
    """Per logged call: the provider's input tokens beside ours, with the error (a few columns)."""
    cols = ["call", "turn", "provider_tokens", "tiktoken", "tiktoken_error", "estimate", "estimate_error"]
    return cal.calls[cols].rename(columns={"provider_tokens": "provider", "tiktoken_error": "tiktoken error",
                                           "estimate_error": "estimate error"})


def ratios(rp: Replay) -> list[float]:
    """The hysteresis ratios the walkthrough compares: none, 0.1, 0.3 and the replay's own."""
    return sorted({0.0, 0.1, 0.3, float(rp.terms.hysteresis_ratio)})


@dataclass(frozen=True, slots=True)
class Fit:
    """One preset setting the demo changed for ``strategy``: ``field``, its ``default``, the ``value``
    used instead and ``why``, in words."""

    strategy: str
    field: str
    default: Any
    value: Any
    why: str


def _fit(field: str, default: Any, unit: str | None, own: Any, budget: int, rows: int) -> tuple[Any, str]:
    """The value a preset's ``field`` takes in the demo, and why ("" when its default stays)."""
    if field in type(own).model_fields and getattr(own, field) != default:
        return getattr(own, field), (f"the manifest's own {field}, so the two compare at one setting; "
                                     f"the default is {default:,}")
    if isinstance(default, bool) or not isinstance(default, int):
        return default, ""
    if unit == "tokens" and default > budget:
        return budget // 2, (f"its default, {default:,} tokens, is above this demo's {budget:,}-token input budget "
                             "and would never be reached; half the budget instead")
    if unit == "events" and default > rows:
        return rows // 2, (f"its default, {default:,} events, is more than the conversation's {rows} messages and "
                           "would never be reached; half of them instead")
    return default, ""


def every_strategy(loaded: Any, rp: Replay) -> tuple[dict[str, Any], list[Fit]]:
    """Every registered context manager (the registry's order) as :func:`inspector.compare.compare`
    strategies named by their type, and the settings fitted to the demo. The manifest's own manager
    runs as written; every other runs its preset (:func:`inspector.compare.presets`), where a preset
    field the own manager also has takes the manifest's value (same ``keep_turns``), and a token
    threshold above ``rp``'s input budget or an event count above its messages (a default sized for
    long agent runs, which would never act here) takes half of that instead."""
    from inspector.compare import presets
    from inspector.params import unit_of
    from inspector.plugins import default_registry

    own = loaded.settings.context_manager
    budget, rows = int(frames_table(rp).input_budget.min()), len(rp.messages)
    shipped = presets()
    specs: dict[str, Any] = {}
    fits: list[Fit] = []
    for spec in default_registry().specs("context_manager"):
        if spec.name == str(own.type):
            specs[spec.name] = loaded.raw["spec"].get("context_manager") or {"type": DEFAULTS["context_manager"]}
            continue
        params = dict(shipped[spec.name].get("params") or {})
        for field, default in list(params.items()):
            unit = unit_of(spec.params_model, field) if spec.params_model else None
            params[field], why = _fit(field, default, unit, own.typed_params, budget, rows)
            if why:
                fits.append(Fit(spec.name, field, default, params[field], why))
        specs[spec.name] = {"type": spec.name, **({"params": params} if params else {})}
    return specs, fits


def _described(spec: Any) -> str:
    """A strategy's params model's first paragraph, its leading name dropped, in Markdown."""
    doc = (getattr(spec.params_model, "__doc__", None) or "").strip().split("\n\n")[0]
    return re.sub(r"^``[^`]+``\s*", "", " ".join(doc.split())).replace("``", "`")


def strategies_intro(loaded: Any, specs: Mapping[str, Any], fits: Sequence[Fit]) -> str:
    """The strategies of :func:`every_strategy` in a Markdown list: what each does (its params
    model's doc), the settings it runs with, and each setting fitted to the demo with why."""
    from inspector.plugins import default_registry

    def number(v: Any) -> str:
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)

    own = str(loaded.settings.context_manager.type)
    lines = []
    for name, value in specs.items():
        spec = default_registry().find("context_manager", name)
        said = _described(spec) if spec is not None else ""
        why = {f.field: f.why for f in fits if f.strategy == name}
        params = (value.get("params") or {}) if isinstance(value, Mapping) else {}
        settings = ", ".join(f"`{k}` {number(v)}" + (f" (fitted to this demo: {why[k]})" if k in why else "")
                             for k, v in params.items()) or "its defaults"
        head = f"* **{name}**" + ("" if said.startswith(":") or not said else " ") + said
        lines.append(head + (" The manifest's own manager, as configured above." if name == own
                             else f" Settings: {settings}."))
    return "\n".join(lines)


def strategy_table(replays: Mapping[str, Replay]) -> pd.DataFrame:
    """One row per strategy, the columns a comparison needs, with readable headings."""
    t = compare_table(replays)
    out = pd.DataFrame({"strategy": t["strategy"], "calls": t["frames"], "tokens sent": t["tokens_sent"],
                        "peak payload": t["peak_payload"], "over budget": t["over_budget"],
                        "summarizer calls": t["summarizer_in_turn"] + t["summarizer_commit"],
                        "trimmed": t["trimmed"],
                        "forgotten": [len(forgotten_table(rp)) for rp in replays.values()]})
    return out


def fleet(fleet_df: pd.DataFrame, recommended: Mapping[str, Any] | None = None) -> str:
    """A fleet summary (:func:`inspector.report.fleet.fleet_table`, one row per setting) in words:
    how many conversations, and for the recommended setting and the worst one, how many went over
    budget, the largest payload, the summarizer calls and the trimmer's cuts."""
    from inspector.report.fleet import FLEET_COLUMNS

    if fleet_df.empty:
        return "No run to summarise."
    params = [c for c in fleet_df.columns if c not in (*FLEET_COLUMNS, "errors")]

    def value(v: Any) -> Any:
        return int(v) if isinstance(v, float) and v.is_integer() else v

    def name(row: Any) -> str:
        return ", ".join(f"{p} = {value(row[p])}" for p in params) or "the manifest as written"

    def words(row: Any) -> str:
        return (f"{int(row.conversations_over_budget)} of {int(row.conversations)} conversation(s) over budget at "
                f"least once ({int(row.over_budget)} call(s)), largest payload {int(row.peak_payload):,} tokens, "
                f"{int(row.summaries)} summarizer call(s), {int(row.trimmed)} message(s) trimmed")

    n = int(fleet_df["conversations"].max())
    text = f"**Fleet summary** over {n} conversation(s), one row per setting below."
    pick = None
    if recommended:
        mask = pd.Series(True, index=fleet_df.index)
        for k, v in recommended.items():
            mask &= fleet_df[k] == v
        pick = fleet_df[mask].iloc[0] if mask.any() else None
    if pick is not None:
        text += f" The recommendation ({name(pick)}): {words(pick)}."
    worst = fleet_df.sort_values(["conversations_over_budget", "peak_payload"], ascending=False,
                                 kind="mergesort").iloc[0]
    if int(worst.conversations_over_budget) == 0:
        text += " No setting sent any conversation over the input budget."
    elif pick is None or worst.name != pick.name:
        text += f" The setting with the most conversations over budget ({name(worst)}): {words(worst)}."
    return text
