"""Generate the notebooks in this folder from the source below (committed without outputs).

    python notebooks/_build.py           # (re)write tune_keep_turns.ipynb and compaction_demo.ipynb
    python notebooks/_build.py --check   # exit 1 if a committed notebook differs from this source

Edit the cells here, not in Jupyter, so a review reads plain Python and Markdown. Cell ids are
stable (``<notebook>-<n>``) so a rebuild with no change is byte-identical. Every number the
notebooks show comes from the package (``inspector.sweep``, ``inspector.replay``,
``inspector.report``); the cells only choose what to show and put it into words.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

# --- shared cells ---------------------------------------------------------------------------------

SETUP_PATHS = '''\
import os
from pathlib import Path

from IPython.display import Markdown, display

from inspector.bundled import find_file

# Relative paths are tried against the working directory, then against the repository root, then
# as the samples shipped inside the package: the notebook runs from the repo root (as the tests do),
# from notebooks/ (as Jupyter does), or outside any checkout after `pip install context-inspector`.
ROOT = next((p for p in (Path.cwd(), *Path.cwd().parents) if (p / "sample_manifests").is_dir()), Path.cwd())


def resolve(path):
    return find_file(path, ROOT)
'''

SETUP_MODEL = '''\
from inspector.engine.llm import LLMEngine
from inspector.policy import DEFAULT_POLICY  # the one default policy of every face (Q22)

MODEL = MODEL or os.environ.get("MODEL") or None
API_BASE = API_BASE or os.environ.get("API_BASE") or None
if MODEL:
    # A real summarizer through litellm. The key comes from $API_KEY or the provider's own variable
    # (e.g. OPENAI_API_KEY); a local OpenAI-compatible server needs none, but litellm wants a value.
    api_key = os.environ.get("API_KEY") or ("unused" if API_BASE else None)
    llm = LLMEngine(model=MODEL, api_base=API_BASE, api_key=api_key, timeout=60)
    summarizer = DEFAULT_POLICY.summarizer  # "auto": the manifest's summarizer, served by this model
    summary_cache = str(Path(SUMMARY_CACHE).expanduser())
    display(Markdown(f"Summaries come from **{MODEL}** through litellm (cached in `{summary_cache}`)."))
else:
    llm, summarizer, summary_cache = None, DEFAULT_POLICY.summarizer, None  # "auto": the stand-in for an llm summarizer
    display(Markdown(
        "Summaries come from the **offline stand-in (not a model)**: a deterministic, labelled text built from "
        "the messages themselves, so this notebook runs with no network and no API key. Token counts, budgets "
        "and the agent's own call costs are real; the summarizer's cost and the summaries' wording are not. "
        "Set `MODEL` (and `API_BASE`) to use a real model."))
'''


def _notebook(slug: str, cells: list[tuple[str, str, list[str]]]) -> Any:
    nb = new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
        "language_info": {"name": "python"},
    }
    for i, (kind, source, tags) in enumerate(cells):
        cell = new_markdown_cell(source.strip("\n")) if kind == "md" else new_code_cell(source.strip("\n"))
        cell.id = f"{slug}-{i:02d}"
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    return nb


def md(text: str) -> tuple[str, str, list[str]]:
    return ("md", text, [])


def code(text: str, *tags: str) -> tuple[str, str, list[str]]:
    return ("code", text, list(tags))


# --- tune_keep_turns.ipynb ------------------------------------------------------------------------

TUNE = [
    code('''
# Parameters (this cell is tagged "parameters": papermill and similar tools override it).
MANIFEST = "sample_manifests/small-window.yaml"   # the agent manifest to tune
TRANSCRIPTS = [                                    # paths, PATH#N (one conversation of a file), or loaded transcripts;
    "inspector/samples/demo_support.json",         # a multi-conversation file contributes every conversation
    "inspector/samples/planted_facts.json",        # a generated conversation: facts stated early, used much later
]
# PATH=VALUE overrides applied to the manifest before the sweep ([] = the manifest as written).
# The bundled demo conversation is short, so the window is tightened to make trade-offs visible (the demo's
# own system text and 15 tool schemas, which the replay sends as the transcript's own agent, take ~1 600 of it).
SET = ["spec.models[0].context_window=6000"]
GRID = {                                           # short names or dotted manifest paths -> values to try
    "keep_turns": [1, 2, 3, 4, 6, 8, 10],
    "hysteresis_ratio": [0, 0.1, 0.3],
}
TOLERANCE = 0                                      # forgotten references allowed beyond the setting that forgets least
MAX_CONVERSATIONS = None                           # per multi-conversation file; None = all
COUNTER = "tiktoken"                               # the default policy's counter; "estimate" = the reference's formulas
PROCESSES = None                                   # worker processes: None = every core, 1 = inline
DASK = None                                        # a fleet on Dask: "local:4" (a LocalCluster) or "tcp://HOST:8786"
ALLOW_TRIMS = True                                 # False: only settings where the trimmer never cut qualify
MODEL = None                                       # e.g. "openai/gpt-4o-mini"; None = $MODEL, else the offline stand-in
API_BASE = None                                    # e.g. "http://127.0.0.1:8000/v1"; None = $API_BASE
SUMMARY_CACHE = "~/.cache/context-inspector/summaries"  # real summaries are cached here (model runs only)
''', "parameters"),
    md('''
# Tune `keep_turns` against your own transcripts

An agent's context manager decides, on every LLM call, how much of the conversation the model sees.
`keep_turns` is the main dial of the default `summarising` manager: the last *N* user turns stay
word for word, older ones are folded into a summary. Fewer turns means fewer input tokens, but the
model sees more of the conversation only through a summary — or not at all, and then it can
**forget** an order number, an email or a time it needs later.

This notebook replays your transcripts under every combination of a grid of settings
(`inspector.sweep.sweep`), measures cost *and* what each setting forgets, and recommends the
cheapest setting that stays within the model's input budget and forgets nothing the
best-remembering setting keeps.

**How to use it:** edit the parameter cell above (manifest, transcripts, grid) and run all cells.
The defaults use the bundled samples and need no network and no API key.
'''),
    code(SETUP_PATHS + '''
import pandas as pd

from inspector.report.figures import use_notebook_renderer
from inspector.report.recommend import hysteresis_effect, recommend, settings_table
from inspector.report.sweep_figures import forgetting, peak_vs_budget, summarizer_calls, tokens_and_cost
from inspector.sweep import by_setting, combinations, resolve_key, sweep
from inspector.tuning import expand_conversations, text_progress

use_notebook_renderer()  # figures embed their HTML too: they survive export to HTML and GitHub previews
manifest_path = resolve(MANIFEST)
transcripts = expand_conversations([str(resolve(t)) if isinstance(t, str) else t for t in TRANSCRIPTS],
                                   limit=MAX_CONVERSATIONS)
display(Markdown(f"{len(transcripts)} conversation(s), each replayed under {len(combinations(GRID))} setting(s)."))
'''),
    code(SETUP_MODEL),
    md('''
## 1. The sweep: one replay per conversation and setting

Each row below is one full replay of one conversation under one combination of the grid: the
engine assembles the payload of every LLM call exactly as the agent would have. The table shows
the columns that matter most; `df` holds them all (`inspector.sweep.METRIC_COLUMNS` documents
each). **forgotten** counts identifiers (ids, emails, paths, times, ...) that a call needed — in
the user's message, its working memory or what the agent did next — but that were only in
messages this setting no longer sent.
'''),
    code('''
options = dict(counter=COUNTER, summarizer=summarizer, processes=PROCESSES, overrides=SET, llm=llm,
               summary_cache=summary_cache, progress=text_progress())
if DASK:  # thousands of conversations: the same rows, computed on a Dask cluster (context-inspector[fleet])
    from inspector.fleet import FleetReport, connect

    with connect(DASK) as client:
        df = sweep(manifest_path, transcripts, GRID, client=client, **options)
    display(Markdown("**On Dask:** " + FleetReport(**df.attrs["fleet"]).words()))
else:
    df = sweep(manifest_path, transcripts, GRID, **options)
failed = df[df["error"].notna()]
if len(failed):
    display(Markdown(f"**{len(failed)} run(s) failed** (invalid combination or unreadable transcript):"))
    display(failed[["transcript", *GRID, "error"]])
df[["transcript", *GRID, "user_turns", "tokens_sent", "over_budget", "summarizer_calls", "forgotten"]]
'''),
    md('''
## 2. Per setting, over all conversations

The same numbers summed over conversations (peak: the worst case), one row per setting. This is
what the charts and the recommendation read.
'''),
    code('''
per_setting = by_setting(df)
rec = recommend(per_setting, allow_trims=ALLOW_TRIMS, tolerance=TOLERANCE)
X = "keep_turns" if "keep_turns" in GRID else next(iter(GRID))
H = "hysteresis_ratio" if "hysteresis_ratio" in GRID else X
settings_table(per_setting)
'''),
    md('''
## 3. Cost and forgetting against `keep_turns`

Left pair: input tokens and cost. Right pair: forgotten references and the calls that forgot one.
One line per value of the other grid parameters (each its own dash and marker, so overlapping
lines stay visible); the star marks the recommendation. Axes start at zero.
'''),
    code('''
display(tokens_and_cost(per_setting, X, recommended=rec))
display(forgetting(per_setting, X, recommended=rec))
'''),
    md('''
## 4. Summarizer calls against `hysteresis_ratio`

Left: summaries computed *during* a turn; right: summaries written when a turn is committed.
The text under the chart is computed from this sweep.
'''),
    code('''
display(summarizer_calls(per_setting, H))
display(Markdown(hysteresis_effect(per_setting, H) if H in per_setting.columns else "`hysteresis_ratio` is not swept."))
'''),
    md('''
## 5. Peak payload against the budget line

The largest payload each setting sent, against the input budget (dashed). A red cross marks a
setting where at least one call went over it.
'''),
    code('''
peak_vs_budget(per_setting, X)
'''),
    md('''
## 6. Recommendation

Every number in the text below is read from the tables above.
'''),
    code('''
display(Markdown(rec.text))
if rec.setting:
    first = TRANSCRIPTS[0] if isinstance(TRANSCRIPTS[0], str) else "TRANSCRIPT"
    flags = " ".join([*(f"--set {s}" for s in SET), *(f"--set {resolve_key(k)}={v}" for k, v in rec.setting.items())])
    display(Markdown(f"Try it on one transcript, call by call:\\n\\n"
                     f"`context-inspector replay {MANIFEST} {first} {flags}`"))
'''),
    md('''
## Scaling up

Each row is a pure function of (manifest, transcript, parameters): `inspector.sweep.sweep_one`.
With thousands of sessions, map that function over (transcript, combination) pairs on any cluster
and build the same table from the returned rows; its docstring shows how.
`context-inspector sweep MANIFEST TRANSCRIPT... --grid keep_turns=2,4,6` does the same from a
shell.
'''),
]

# --- compaction_demo.ipynb ------------------------------------------------------------------------

DEMO = [
    code('''
# Parameters (tagged "parameters").
MANIFEST = "sample_manifests/small-window.yaml"
TRANSCRIPT = "inspector/samples/demo_support.json"
# A 7,000-token window and keep_turns 4 make every mechanism appear in this short conversation (the demo's
# own system text and 15 tool schemas, sent as the transcript's own agent, take ~1 600 tokens of it).
SET = [
    "spec.models[0].context_window=7000",
    "spec.context_manager.params.keep_turns=4",
    "spec.context_manager.params.hysteresis_ratio=0.3",
]
COUNTER = "tiktoken"                               # the default policy's counter; "estimate" = the reference's formulas
MODEL = None                                       # e.g. "openai/gpt-4o-mini"; None = $MODEL, else the offline stand-in
API_BASE = None                                    # None = $API_BASE
SUMMARY_CACHE = "~/.cache/context-inspector/summaries"
''', "parameters"),
    md('''
# How an agent's context is compacted, one call at a time

An AI agent talks to its model many times per conversation: once per reply, and once more after
every tool it runs. Each time, it sends a **payload**: the list of messages the model will read. The
model can only read so much (its *context window*), and every token sent is paid for. So before
each call the agent's **context engine** decides what goes in.

This notebook replays one real-looking support conversation through that engine and stops at each
moment worth seeing. No prior knowledge needed. The payload is built from **bands**, always in this
order:

| band | what it is |
|---|---|
| system band | the agent's instructions and injected context (fixed) |
| summary | a summary of older turns, once there is one |
| kept history | earlier turns, word for word |
| current user turn | what the user just said |
| working memory | the tool calls and results of the turn in progress |
| tool schemas | descriptions of the tools the model may call |

The **input budget** is what the payload may use: the window, minus a **completion reserve** for the
model's answer, minus a **safety margin** for token-count error.
'''),
    code(SETUP_PATHS + '''
import pandas as pd

from inspector.compare import compare
from inspector.manifest import load_manifest
from inspector.replay import replay
from inspector.report.figures import band_bar, compare_timelines, timeline, use_notebook_renderer
from inspector.report.recommend import hysteresis_effect
from inspector.report.tables import (compare_table, forgotten_table, frames_table, not_sent_table, payload_table,
                                     repairs_table)
from inspector.sweep import sweep
from inspector.transcripts import load_transcript

use_notebook_renderer()  # figures embed their HTML too: they survive export to HTML and GitHub previews

pd.set_option("display.max_colwidth", 90)
loaded = load_manifest(resolve(MANIFEST), overrides=SET)
transcript = load_transcript(resolve(TRANSCRIPT))
cm = loaded.settings.context_manager
'''),
    code(SETUP_MODEL),
    code('''
rp = replay(loaded, transcript, counter=COUNTER, summarizer=summarizer, llm=llm, summary_cache=summary_cache)
calls = frames_table(rp)
first = calls.iloc[0]
msgs = transcript.messages
display(Markdown(
    f"**The conversation:** {len(msgs)} messages, {sum(m.get('role') == 'user' for m in msgs)} user turns, "
    f"**{len(calls)} LLM calls**. **The agent:** `{cm.type}` context manager with {cm.params}. "
    f"**The budget:** a {first.window:,}-token window ({first.window_source}) − {first.reserve:,} reserved for the "
    f"answer − {first.margin:,} safety margin = **{first.input_budget:,} tokens of input** per call."))
pd.DataFrame({"role": [m.get("role") for m in msgs],
              "message": [" ".join(str(m.get("content") or "(tool call)").split())[:110] for m in msgs]})
'''),
    md('''
## 1. The payload grows, turn by turn

Each bar is one LLM call, stacked by band. Three lines cross the chart: the **input budget** (solid;
the trimmer never lets a payload above it), the **summary trigger** (dashed; when the history goes
over it, the context manager may fold older turns into a summary) and the **hysteresis ceiling**
(dotted; a summary already computed is reused until the view grows past it). Markers above the bars
show what the engine did on that call.
'''),
    code('''
timeline(rp, title="Payload per LLM call")
'''),
    code('''
before = calls[calls.cm_action.isin(["summarized", "reused"]).cumsum() == 0]
grow = before.loc[before.payload_tokens.idxmax()] if len(before) else first
tool_heavy = calls.loc[calls.working_memory.idxmax()]
display(Markdown(
    f"The first call sends **{first.payload_tokens:,}** tokens. Every turn adds its messages to the kept history, "
    f"and every tool result adds to working memory until the turn ends: by call {grow.call} (turn {grow.turn}) the "
    f"payload is **{grow.payload_tokens:,}** tokens, "
    f"{100 * grow.payload_tokens / grow.input_budget:.0f} % of the budget. "
    f"The biggest working memory is at call {tool_heavy.call}: {tool_heavy.working_memory:,} tokens of tool results "
    f"in a single turn."))
waiting = calls[calls.cm_action == "unchanged-too-few-turns"]
if len(waiting):
    display(Markdown(
        f"From call {waiting.call.iloc[0]} the history is over the summary trigger, yet nothing is folded "
        f"(`unchanged-too-few-turns`, {len(waiting)} call(s)): the manager keeps the last "
        f"{cm.params.get('keep_turns')} "
        f"turns word for word no matter what, and there is nothing older yet. If such a payload crossed the input "
        f"budget, the token trimmer would cut the oldest messages instead"
        + (f" — here it did, {int(waiting.trimmed.sum())} message(s) in all." if waiting.trimmed.sum() else
           " — here it never had to.")))
'''),
    md('''
## 2. The commit-time fold

When a turn ends (the agent has answered and the next user message arrives), the engine *commits*
the turn to the stored conversation. If more than `keep_turns` turns are stored, the oldest ones are
folded into the summary right there: the stored history is written back as *summary + the last
`keep_turns` turns*. The original messages are kept in an archive, but later calls no longer send
them.
'''),
    code('''
commits = pd.DataFrame([{"after turn": c.turn, "action": c.action, "summarizer called": c.summarizer_called,
                         "turns folded": c.folded_turns,
                         "messages folded": ", ".join(f"{a}–{b - 1}" for a, b in c.folded)} for c in rp.commits])
folds = [c for c in rp.commits if c.action in ("summarized", "reused")]
if folds:
    c0 = folds[0]
    after = calls[calls.turn > c0.turn].iloc[0] if (calls.turn > c0.turn).any() else None
    text = (f"The first fold happens at the commit of turn {c0.turn}: {c0.folded_turns} turn(s) "
            f"(transcript messages {', '.join(f'{a}–{b - 1}' for a, b in c0.folded)}) become a summary. ")
    if after is not None:
        text += (f"The next call (call {after.call}) carries a summary band of {after.summary:,} tokens instead. "
                 f"From then on the engine folds at every commit: {len(folds)} commit-time summaries in all.")
    display(Markdown(text))
else:
    display(Markdown("No commit folded anything with these settings: the conversation never had more than "
                     f"{cm.params.get('keep_turns')} stored turns."))
commits
'''),
    md('''
## 3. When the history crosses the summary trigger during a turn

Inside a turn, before every call, the context manager compares the history in view with the
**summary trigger**: the budget left after the fixed bands, divided by `1 + hysteresis_ratio`. Over
it, everything older than the last `keep_turns` turns would be summarised *now*, by a summarizer
call of its own. But the commit-time folds already keep the stored history at *summary + the last
`keep_turns` turns*, so usually the only thing older is that summary: there is nothing new to fold,
and the summary is **reused as is**, with no summarizer call (decision Q23).
'''),
    code('''
hits = calls[calls.cm_action == "summarized"]
reuse = calls[calls.cm_action == "reused"]
if len(hits):
    k = int(hits.call.iloc[0])
    f = rp.frames[k]
    display(Markdown(
        f"**Call {k}** (turn {f.turn}, step {f.step}): the history in view had {f.cm['raw_tokens']:,} tokens against a "
        f"trigger of {f.budget['hint']:,}, with turns older than `keep_turns` not yet summarised: the manager folded "
        f"{f.cm['compressed_turns']} older group(s) into a summary of {f.bands.get('summary', 0):,} tokens."))
    display(band_bar(rp, k))
    print(f.summary_text)
elif len(reuse):
    k = int(reuse.call.iloc[0])
    f = rp.frames[k]
    display(Markdown(
        f"**Call {k}** (turn {f.turn}, step {f.step}): the history in view had {f.cm['raw_tokens']:,} tokens against a "
        f"trigger of {f.budget['hint']:,}. Everything older than the last {f.cm['kept_turns']} turn(s) is the summary "
        f"written at a commit, so the manager reuses it (`reused`, no summarizer call); {len(reuse)} call(s) did so. "
        f"Over the whole conversation the summarizer ran {rp.summarizer_calls['in_turn']} time(s) during turns and "
        f"{rp.summarizer_calls['commit']} time(s) at commits."))
    display(band_bar(rp, k))
    print(f.summary_text)
else:
    display(Markdown("With these settings the history in view never crossed the trigger during a turn."))
'''),
    md('''
## 4. Hysteresis: what the ratio does here

`hysteresis_ratio` does two things at once. It **lowers the trigger** (budget ÷ (1 + ratio)), so the
history crosses it earlier; and a summary computed during a turn is **reused** while the view stays
under trigger × (1 + ratio), so a growing tool loop does not pay for a fresh summary on every step.
Which effect wins depends on the conversation. Below, this conversation is replayed at several
ratios, everything else equal; the sentence is computed from that table.
'''),
    code('''
ratios = sorted({0.0, 0.1, 0.3, float(cm.params.get("hysteresis_ratio", 0.1))})
by_ratio = sweep(resolve(MANIFEST), [transcript], {"hysteresis_ratio": ratios}, counter=COUNTER, summarizer=summarizer,
                 processes=1, overrides=SET, llm=llm, summary_cache=summary_cache, progress=False)
display(Markdown(hysteresis_effect(by_ratio)))
by_ratio[["hysteresis_ratio", "summarizer_in_turn", "summarizer_commit", "tokens_sent", "peak_payload", "trimmed",
          "forgotten"]]
'''),
    md('''
## 5. A tool round cut short, and the pairing repair

Providers reject a payload in which an assistant's tool call is not immediately followed by its
result (or a result answers no call). Conversations break that rule in practice: a user interrupts
a tool round, a window or the trimmer cuts between a call and its result. So after every other
decision, the engine runs one **pairing repair** over the whole payload and then a final check.
'''),
    code('''
KIND_WORDS = {
    "ask_stripped": "the assistant's unanswered tool call was removed and its text kept",
    "ask_removed": "an assistant message with only unanswered tool calls was removed",
    "empty_result_synthesised": "an empty result was added for a call left unanswered at the end",
    "id_rebound": "a result under the wrong id was re-attached to the unanswered call",
    "duplicate_dropped": "a second result for the same call was dropped",
    "orphan_dropped": "a result answering no call was dropped",
    "stray_result_dropped": "a result away from its call was dropped",
}
repairs = repairs_table(rp)
if len(repairs):
    r = repairs.iloc[0]
    k = int(r.call)
    gaps = list(transcript.irregularities)
    cause = f"The transcript itself has the gap: {gaps[0].detail} (message {gaps[0].index})." if gaps else ""
    last = int(repairs.call.max())
    gone = next((c for c in rp.commits if gaps and any(a <= gaps[0].index < b for a, b in c.folded)), None)
    later = (f"; at the commit of turn {gone.turn} that turn was folded into the summary, so the broken round is no "
             f"longer sent" if gone else "")
    display(Markdown(
        f"**Call {k}** (turn {r.turn}) is the first payload that needed a repair: {KIND_WORDS.get(r.kind, r.kind)} "
        f"(`{r.kind}`: {r.detail}). {cause} The same repair is applied on every call while that round is in view: "
        f"{len(repairs)} time(s), up to call {last}{later}. Every payload passed the provider check after repair: "
        f"{'yes' if (calls.check == 'ok').all() else 'no, see the check column'}."))
    display(repairs)
    display(payload_table(rp, k)[["pos", "ref", "band", "role", "tool_calls", "tool_call_id", "content"]])
else:
    display(Markdown("No payload needed a pairing repair with these settings."))
'''),
    md('''
## 6. What was not sent, and what the model forgot

For any call, the inspector lists every transcript message that exists by then but is not in the
payload, with the reason (here: the last call). A message left out only matters if a later call
needs what it said: a call **forgets a reference** when it needs an identifier (an id, an email, a
time, a path — in the user's message, its working memory or what the agent did next) that only a
message no longer sent holds.
'''),
    code('''
display(not_sent_table(rp, len(rp.frames) - 1))
lost = forgotten_table(rp)
if len(lost):
    first_lost = lost.iloc[0]
    display(Markdown(
        f"**{len(lost)} forgotten reference(s)** over the conversation. The first: `{first_lost.identifier}` at call "
        f"{first_lost.call}, needed in {first_lost['needed in']}, held only by message {first_lost.message} "
        f"({first_lost['why not sent']})."))
    display(lost)
else:
    display(Markdown("No call needed an identifier it could no longer see: every id, email, time or path the agent "
                     "used was still in its payload or in the summary."))
'''),
    md('''
## 7. The same conversation under three strategies

* **summarising** — the manifest's manager as configured above: older turns become a summary.
* **sliding window** — keep the last `keep_turns` turns, drop older ones entirely (no summary).
* **stack** — keep the full history; only the token trimmer protects the window.

Same transcript, same budget, same y axis.
'''),
    code('''
keep = cm.params.get("keep_turns", 10)
strategies = {
    "summarising": loaded.raw["spec"].get("context_manager") or {"type": "summarising"},
    f"sliding window (keep {keep})": {"type": "sliding-window", "params": {"keep_turns": keep}},
    "stack (full history)": {"type": "stack"},
}
replays = compare(loaded, transcript, strategies, counter=COUNTER, summarizer=summarizer, llm=llm,
                  summary_cache=summary_cache)
table = compare_table(replays)
for fig in compare_timelines(replays):
    display(fig)
table
'''),
    code('''
cheapest = table.loc[table.tokens_sent.idxmin()]
dearest = table.loc[table.tokens_sent.idxmax()]
most_trimmed = table.loc[table.trimmed.idxmax()]
lines = [f"**{cheapest.strategy}** sends the fewest input tokens ({cheapest.tokens_sent:,}), "
         f"{100 * (1 - cheapest.tokens_sent / dearest.tokens_sent):.0f} % less than **{dearest.strategy}** "
         f"({dearest.tokens_sent:,})."]
if most_trimmed.trimmed:
    lines.append(f"**{most_trimmed.strategy}** leans on the token trimmer the most: {most_trimmed.trimmed:,} message "
                 f"removal(s) over the conversation, cutting whatever is oldest regardless of what it was.")
summ = table[(table.summarizer_in_turn + table.summarizer_commit) > 0]
for _, row in summ.iterrows():
    lines.append(f"**{row.strategy}** pays for {row.summarizer_in_turn + row.summarizer_commit} summarizer call(s) "
                 f"and in exchange keeps a summary of what it folds away.")
forgot = {name: len(forgotten_table(r)) for name, r in replays.items()}
lines.append("Forgotten references (identifiers a call needed but could no longer see): "
             + ", ".join(f"**{name}** {n}" for name, n in forgot.items()) + ".")
over = table[table.over_budget > 0]
lines.append("No strategy ever went over the input budget." if over.empty else
             "Over budget: " + ", ".join(f"{r.strategy} ({r.over_budget} call(s))" for r in over.itertuples()) + ".")
display(Markdown(" ".join(lines)))
'''),
    md('''
## 8. How far off is our token count? Calibrating against the provider

Every number above is *our* count. Logs that record what the provider itself counted per call (an
OpenAI request/response log's `usage.prompt_tokens`, a Claude Code session's `input_tokens` plus
cache tokens) let us check it: for each call, the same payload counted with `tiktoken` and with
`estimate`, beside the provider's number, and a correction factor per model (provider tokens per
one of ours). The budget applies a factor only when asked: `spec.models[].token_calibration` in the
manifest, or `--token-calibration MODEL=FACTOR` on the command line.
'''),
    code('''
from inspector.calibration import calibrate
from inspector.transcripts import sample_path

cal = calibrate(load_transcript(sample_path("demo_calls.openai-log.jsonl")))
f = cal.factors.iloc[0]
display(Markdown(
    f"Over {int(f.calls)} logged call(s) of `{f.model}`, the provider counted {int(f.provider_tokens):,} input tokens; "
    f"`tiktoken` counted {int(f.tiktoken):,} (factor **×{f.factor_tiktoken}**, mean error "
    f"{f.mean_abs_error_pct_tiktoken} %) and `estimate` {int(f.estimate):,} (factor **×{f.factor_estimate}**)."
    + "".join(f" {n}" for n in cal.notes)))
cc = calibrate(load_transcript(sample_path("demo_session.claude-code.jsonl")))
g = cc.factors.iloc[0]
display(Markdown(
    f"A Claude Code session log leaves out Claude Code's own system prompt and tools, so the plain ratio there is "
    f"×{g.factor_tiktoken}; the fitted line provider ≈ {int(g.offset_tiktoken):,} + {g.slope_tiktoken} × ours "
    f"separates the unlogged part ({int(g.offset_tiktoken):,} tokens) from the per-token factor (×{g.slope_tiktoken}). "
    f"{len(cc.calls)} calls; {len(load_transcript(sample_path('demo_session.claude-code.jsonl')).compactions)} "
    "compaction by Claude Code itself was observed in that log."))
cal.calls[["call", "turn", "provider_tokens", "tiktoken", "tiktoken_error", "estimate", "estimate_error", "payload"]]
'''),
    md('''
## Where next

* `tune_keep_turns.ipynb` sweeps `keep_turns` and `hysteresis_ratio` over many transcripts and
  recommends a setting from the numbers.
* `context-inspector replay MANIFEST TRANSCRIPT --set ...` prints the same frames as JSON or a table;
  the Streamlit app (`make run`) lets you click through every call.
'''),
]

NOTEBOOKS = {"tune_keep_turns.ipynb": ("tune", TUNE), "compaction_demo.ipynb": ("demo", DEMO)}


def build() -> dict[str, str]:
    """Notebook file name → its JSON text."""
    out = {}
    for name, (slug, cells) in NOTEBOOKS.items():
        nb = _notebook(slug, cells)
        nbformat.validate(nb)
        out[name] = nbformat.writes(nb) + "\n"
    return out


def main(argv: list[str]) -> int:
    stale = []
    for name, text in build().items():
        path = HERE / name
        if "--check" in argv:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date (run python notebooks/_build.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
