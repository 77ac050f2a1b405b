"""Message builders shared by the tests, following docs/design.md §1 (messages, turns, tool-call groups).

Every call returns fresh dicts, so tests can rely on object identity (the engine keeps the same
dict objects for rows it passes through unchanged).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

Message = dict[str, Any]


def system(content: Any = "sys") -> Message:
    return {"role": "system", "content": content}


def user(content: Any = "hi") -> Message:
    return {"role": "user", "content": content}


def asst(content: Any = "ok") -> Message:
    """A plain (text-only) assistant message."""
    return {"role": "assistant", "content": content}


def call(cid: str | None, name: str = "f", args: str = "{}") -> dict[str, Any]:
    """One entry of ``tool_calls``; ``cid=None`` builds a call without an id."""
    c: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": args}}
    if cid is not None:
        c["id"] = cid
    return c


def ask(*ids: str, content: Any = "", name: str = "f", args: str = "{}") -> Message:
    """An assistant tool ask with one call per id (a parallel ask when several)."""
    return {"role": "assistant", "content": content, "tool_calls": [call(i, name, args) for i in ids]}


def tool(cid: str, content: Any = "result") -> Message:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def toolturn(cid: str, content: str = "result") -> list[Message]:
    """``[user "ask", assistant ask(id), tool(id, content), assistant "done"]``."""
    return [user("ask"), ask(cid), tool(cid, content), asst("done")]


def tool_group(cid: str, arg_len: int = 20) -> list[Message]:
    """An ask + its result with payloads of ``arg_len`` characters (the reference's budget tests)."""
    return [ask(cid, name="get_metrics", args="x" * arg_len), tool(cid, "y" * arg_len)]


def T(i: int, width: int = 0) -> list[Message]:  # noqa: N802 - the spec's name
    """A user turn ``[user "u<i>…", assistant "a<i>…"]``; ``width`` pads each content to that length."""
    return [user(f"u{i}".ljust(width, "x")), asst(f"a{i}".ljust(width, "x"))]


def roles(messages: list[Message]) -> list[Any]:
    return [m.get("role") for m in messages]


def result_ids(messages: list[Message]) -> list[Any]:
    """``tool_call_id`` of every tool row, in order."""
    return [m.get("tool_call_id") for m in messages if m.get("role") == "tool"]


# --- every registered strategy, as hypothesis draws its manifest spec -----------------------------

def _tuned_params() -> dict[str, Any]:
    """Parameter draws that make each shipped strategy act on the small conversations the properties
    generate (its defaults mostly would not: a 100 000-token trigger, 240 events). Keyed by the
    strategy's registered name; a strategy not here is drawn with its defaults."""
    from hypothesis import strategies as st

    masks = st.sampled_from([{}, {"placeholder": "[{tool}: {size} characters masked]"}])
    return {
        "stack": st.one_of(st.none(), st.none(), st.integers(1, 12)).map(
            lambda cap: {"max_messages": cap} if cap else {}),
        "sliding-window": st.integers(1, 4).map(lambda k: {"keep_turns": k}),
        "summarising": st.builds(lambda k, t, r: {"keep_turns": k, "summary_threshold": t, "hysteresis_ratio": r},
                                 st.integers(1, 4), st.integers(0, 400), st.sampled_from([0.0, 0.1, 0.3])),
        "observation-masking": st.builds(lambda w, p: {"attention_window": w, **p}, st.integers(1, 12), masks),
        "auto-compact": st.builds(lambda t, k: {"threshold_tokens": t, "keep_user_tokens": k},
                                  st.integers(20, 1500), st.one_of(st.just(0), st.integers(0, 300))),
        "condenser": st.builds(lambda m, k: {"max_size": m, "keep_first": k}, st.integers(1, 14), st.integers(0, 3)),
        "clear-tool-results": st.builds(lambda t, k, c, i: {"trigger": t, "keep": k, "clear_at_least": c,
                                                            "clear_tool_inputs": i},
                                        st.integers(1, 600), st.integers(0, 3), st.sampled_from([0, 0, 40]),
                                        st.booleans()),
    }


def registered_managers() -> Any:
    """A hypothesis strategy of ``context_manager`` specs (``{"type": name, "params": {...}}``), one
    kind per context manager the plugin registry holds, so a strategy registered later joins every
    property that draws from it (with :func:`_tuned_params`' draws when it has some, else its
    defaults). Raises ``AssertionError`` when a tuned name is no registered strategy (a rename)."""
    from hypothesis import strategies as st

    from inspector.plugins import default_registry

    names = [spec.name for spec in default_registry().specs("context_manager")]
    tuned = _tuned_params()
    stale = sorted(set(tuned) - set(names))
    assert not stale, f"tuned params for strategies the registry does not hold: {stale}"
    return st.one_of(*(tuned.get(name, st.just({})).map(lambda p, name=name: {"type": name, "params": p})
                       for name in names))


def two_calls(path: Path) -> Path:
    """Write a two-call transcript of a priced model (gpt-4o: OpenAI's automatic prefix caching) to
    ``path`` and return it: a 1 286-word system text, then two user/assistant turns, so the second call
    re-sends a prefix long enough to cache."""
    doc = {"model": "gpt-4o", "messages": [
        {"role": "system", "content": "word " * 1286},
        {"role": "user", "content": "Where is order A-1?"},
        {"role": "assistant", "content": "It shipped on Monday."},
        {"role": "user", "content": "Thanks, and order B-2?"},
        {"role": "assistant", "content": "B-2 is packed."}]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def count_unit_reads(monkeypatch: Any) -> list[int]:
    """Count every per-message unit read of the token counters (``_CachedCounter.unit``) from now on,
    in the returned one-element list: an operation count for the analyses' linearity tests."""
    from inspector.engine.tokens import _CachedCounter

    reads = [0]
    original = _CachedCounter.unit

    def counting(self: _CachedCounter, msg: dict[str, Any]) -> int:
        reads[0] += 1
        return original(self, msg)

    monkeypatch.setattr(_CachedCounter, "unit", counting)
    return reads


def exchange_rows(n: int) -> list[Message]:
    """``n`` events, a user message and an assistant answer in turn, each naming its index (``r0``, …)."""
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"r{i}"} for i in range(n)]


def counting_summarizer() -> tuple[list[int], Any]:
    """A summarizer that writes ``S1``, ``S2``, … and the list of how many rows each call was given."""
    summarised: list[int] = []

    def summarizer(msgs: list[Message]) -> str:
        summarised.append(len(msgs))
        return f"S{len(summarised)}"

    return summarised, summarizer


def spy(monkeypatch: Any, owner: Any, name: str, arg: int = 0) -> list[Any]:
    """Replace ``owner.name`` (a module's function, or a class's method) by one that appends its
    positional argument ``arg`` to the returned list (``arg=1`` for a method's first argument after
    ``self``), then calls the original: an operation count that also says what was read."""
    seen: list[Any] = []
    original = getattr(owner, name)

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(args[arg])
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    return seen


def one_turn_asks(rounds: int, output: str = "out {k}") -> list[Message]:
    """One user turn ("fix it") of ``rounds`` ``bash`` asks, each answered (``output`` with ``{k}`` the
    ask's number, call id ``c{k}``), then "done"."""
    msgs: list[Message] = [{"role": "user", "content": "fix it"}]
    for k in range(rounds):
        msgs += [{"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": output.format(k=k)}]
    msgs.append({"role": "assistant", "content": "done"})
    return msgs


def drawn_ask(draw: Any, first: int, ids_apart: int = 0) -> tuple[Message, list[str]]:
    """For a hypothesis ``@st.composite`` strategy (``draw``): an ask of one or two calls, each of tool
    ``a`` or ``b`` (drawn per call), with call ids ``c{first}``, ``c{first + 1}`` (modulo ``ids_apart``
    when given: an id asked again), and its ids. The tool-using agents of the frontier tests are made
    of these rounds, each answered by ``tool(id, ...)`` rows of the sizes a test draws."""
    from hypothesis import strategies as st

    ids = [f"c{(first + j) % ids_apart if ids_apart else first + j}" for j in range(draw(st.integers(1, 2)))]
    row: Message = {"role": "assistant", "content": "", "tool_calls": [
        {"id": i, "type": "function", "function": {"name": draw(st.sampled_from("ab")), "arguments": "{}"}}
        for i in ids]}
    return row, ids


class UnitsOf:
    """A counter whose unit of a row is its ``u`` field, additive like tiktoken's (total = units):
    running unit sums are token counts worked out by hand."""

    additive = True

    def unit(self, msg: Message) -> int:
        return int(msg["u"])

    def total(self, units: int, n: int) -> int:
        return units


def sent_sums(rows: Sequence[Message], view: Iterable[Any], n: int | None = None) -> list[int]:
    """Running sums of the first ``n`` (default all) ``rows``' ``u`` units, each row a replacement of
    ``view`` (``.index``, ``.row``) stands for counted as that replacement: the sums a frontier index
    must give, walked row by row."""
    instead = {r.index: r.row for r in view}
    sums = [0]
    for i in range(len(rows) if n is None else n):
        sums.append(sums[-1] + instead.get(i, rows[i])["u"])
    return sums
