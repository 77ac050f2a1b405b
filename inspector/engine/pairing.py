"""Pairing repair and the provider's final check (docs/design.md §3.8).

Providers reject a ``messages[]`` in which an assistant ask (a message with ``tool_calls``) is not
followed, immediately, by exactly one ``tool`` row per call id, or in which a ``tool`` row answers
nothing. History managers, the trimmer and HITL pauses can all leave such a list behind, so the
assembler runs :func:`sanitize_provider_messages` **once** on the fully assembled payload and then
:func:`check_provider_payload`.

Repair rules (the contract of :func:`sanitize_provider_messages`), applied per ask to the *run* of
contiguous ``tool`` rows right after it:

1. A result whose id is one of the ask's call ids, with that call still unanswered, is kept: it
   claims that call before any rebinding, wherever it sits in the run.
2. A further result for an id that is already answered is a duplicate and is dropped.
3. A result under an id the ask did not declare (e.g. a HITL steering result) is rebound — a copy
   with the new ``tool_call_id`` — to the first still-unanswered call id in **declaration order**;
   when no call is left unanswered it is dropped.
4. Nothing kept and the ask is not at the end of the payload (a non-tool row follows its run):
   its ``tool_calls`` are removed and the assistant message survives only if it has text
   (``ask_stripped``), else it goes (``ask_removed``).
5. Otherwise the ask is emitted, then the kept results in the order received, then a synthesised
   ``{"role": "tool", "tool_call_id": id, "content": ""}`` for every call left unanswered, in
   declaration order (a trailing unanswered ask gets an empty result for every call).
6. A ``tool`` row anywhere else (not in the run right after an ask) is dropped: ``orphan_dropped``
   when no ask in the payload declares its id, ``stray_result_dropped`` otherwise.
7. Everything else (user, system, plain assistant, unknown roles, non-dict rows) passes through.

Two deliberate departures from the reference runtime (docs/design.md Q6):

* **Duplicates are removed before rebinding.** The reference rebinds first, so in
  ``[ask(a, b), tool a, tool a (dup), tool b]`` the duplicate ``a`` is rebound to ``b`` and the
  genuine ``b`` result is then dropped as a duplicate — the model sees the wrong content for ``b``.
  Here every correctly labelled result claims its call first, extra copies are dropped, and only
  then are the remaining mis-labelled results rebound, so a genuine result is never displaced.
* **Rebinding follows declaration order.** The reference picks ``sorted(unanswered)[0]``, which
  sends a mis-labelled result to ``call_10`` before ``call_9``; its own docstring promises
  declaration order, and that is what we do.

Guarantees: deterministic; never mutates its input; rows that pass unchanged are the *same* dict
objects (only rebound results and stripped asks are copies; empty results are new); every change
is reported as a :class:`~inspector.engine.types.Repair` whose ``index`` is the input position
(of the ask, for ``ask_*`` repairs, which carry no id, and for synthesised results);
the output always passes :func:`check_provider_payload`; and it is idempotent (a second pass
returns the same objects and no repairs). Calls without a string id are ignored by pairing, as in
the reference; odd input (list or ``None`` content, unknown roles, a non-list ``tool_calls``) is
tolerated, never a crash.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from inspector.engine.history import call_ids, is_ask
from inspector.engine.types import JoinedRows, Message, ProviderPayloadError, Repair, RepairKind, SanitizeResult

__all__ = ["PROVIDER_ROLES", "check_pairing", "check_provider_payload", "check_roles", "sanitize_provider_messages"]

PROVIDER_ROLES: frozenset[str] = frozenset({"system", "user", "assistant", "tool"})
"""The roles a payload row may have (Q19); any other role fails the provider check."""


def _role(msg: Any) -> Any:
    return msg.get("role") if isinstance(msg, dict) else None


def _is_ask(msg: Any) -> bool:
    return isinstance(msg, dict) and is_ask(msg)


def _ask_ids(msg: Message) -> list[str]:
    """Call ids in declaration order; a ``tool_calls`` that is not a list declares nothing."""
    return call_ids(msg) if isinstance(msg.get("tool_calls"), list | tuple) else []


def _result_id(msg: Message) -> str | None:
    rid = msg.get("tool_call_id")
    return rid if isinstance(rid, str) and rid else None


def _has_text(content: Any) -> bool:
    """Whether a stripped ask still says something (the reference keeps it iff its text is non-blank).
    A non-empty list of content parts is kept rather than guessed at."""
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and bool(content)


def _declared_ids(messages: Iterable[Any]) -> set[str]:
    return {cid for m in messages if _is_ask(m) for cid in _ask_ids(m)}


@dataclass(slots=True)
class _Settled:
    """How one ask's run of results is settled: what is kept, what is still owed, what was done."""

    kept: list[tuple[int, Message]] = field(default_factory=list)  # (input index, row), arrival order
    unanswered: list[str] = field(default_factory=list)  # call ids with no result, declaration order
    repairs: list[Repair] = field(default_factory=list)  # one per dropped or rebound row, arrival order


def _settle_run(messages: Sequence[Message], ask_at: int, end: int, ids: list[str], declared: set[str]) -> _Settled:
    """Bind the rows ``messages[ask_at + 1:end]`` to the calls ``ids`` of the ask at ``ask_at``.

    Correctly labelled rows claim their call first and extra copies are duplicates (rules 1–2);
    only then are the remaining rows rebound, in arrival order, to the calls still unanswered in
    declaration order (rule 3). An id declared twice in one ask needs two results.
    """
    n = end - ask_at - 1
    if n == len(ids) and len(set(ids)) == n and all(
            _result_id(messages[ask_at + 1 + k]) == cid for k, cid in enumerate(ids)):
        # the common case — one result per call, in order — needs none of the bookkeeping below
        return _Settled(kept=[(p, messages[p]) for p in range(ask_at + 1, end)])
    open_slots = Counter(ids)
    claimed: Counter[str] = Counter()
    claims: dict[int, bool] = {}  # row index → True: claims its call, False: duplicate; absent: mis-labelled
    for p in range(ask_at + 1, end):
        rid = _result_id(messages[p])
        if rid is not None and open_slots[rid] > 0:
            open_slots[rid] -= 1
            claimed[rid] += 1
            claims[p] = True
        elif rid is not None and rid in claimed:
            claims[p] = False
    seen: Counter[str] = Counter()
    unanswered: deque[str] = deque()
    for cid in ids:  # the first claimed[cid] declarations of an id count as answered
        seen[cid] += 1
        if seen[cid] > claimed[cid]:
            unanswered.append(cid)

    settled = _Settled()
    where = f"ask at {ask_at}"
    for p in range(ask_at + 1, end):
        row = messages[p]
        rid = _result_id(row)
        if claims.get(p) is True:
            settled.kept.append((p, row))
        elif p in claims:
            settled.repairs.append(Repair("duplicate_dropped", rid, p, f"call already answered ({where})"))
        elif unanswered:
            new_id = unanswered.popleft()
            settled.kept.append((p, {**row, "tool_call_id": new_id}))
            settled.repairs.append(Repair("id_rebound", rid, p, where, new_id=new_id))
        else:
            kind: RepairKind = "stray_result_dropped" if rid in declared else "orphan_dropped"
            settled.repairs.append(Repair(kind, rid, p, f"no unanswered call left ({where})"))
    settled.unanswered = list(unanswered)
    return settled


class _Declared:
    """Membership in "ids some ask of the payload declares" when part of the payload is known clean:
    the asks outside the clean ranges are read, those inside are asked of ``inside``."""

    __slots__ = ("explicit", "inside")

    def __init__(self, explicit: set[str], inside: Callable[[Any], bool]) -> None:
        self.explicit, self.inside = explicit, inside

    def __contains__(self, rid: object) -> bool:
        return rid in self.explicit or (isinstance(rid, str) and self.inside(rid))


@lru_cache(maxsize=8)
def _positions_upto(size: int) -> tuple[int, ...]:
    return tuple(range(size))


def _positions(hi: int) -> tuple[int, ...]:
    """``0 .. ≥ hi − 1`` as shared int objects: a clean range's origins are a slice of it, not
    thousands of new ints per call (an uncapped stack copies ~1 500 a call). Sizes are powers of
    two, so a replay builds a handful of these tuples in all."""
    return _positions_upto(1 << max(0, hi - 1).bit_length())


def _outside(messages: Sequence[Any], skip: Sequence[tuple[int, int]], n: int | None = None) -> list[int]:
    """Positions of ``messages`` not inside a ``skip`` range (ranges sorted, disjoint), as one list
    (each check reads them several times; with ``skip`` they are a handful). ``n``: ``len(messages)``
    when the caller has it (a view's length is a Python call)."""
    out: list[int] = []
    i = 0
    for lo, hi in skip:
        out += range(i, lo)
        i = hi
    out += range(i, len(messages) if n is None else n)
    return out


def _untouched(messages: Sequence[Any], at: Iterable[int], roles: bool, n: int | None = None) -> bool:
    """Whether the rows at positions ``at`` (and the results right after each ask among them) are
    already well paired: every ask declares distinct string ids and is followed by exactly one
    result per id, in declaration order, then by a non-tool row or the end; no other ``tool`` row.
    With ``roles``, every row read also has a provider role.

    Why: that is what nearly every call's payload looks like, and such rows pass the repair
    unchanged with no repair (rules 1 and 5) and pass the final check (every rule), so one cheap
    read answers both; anything else — including a payload that is fine for a rarer reason — goes
    to the full rules, which decide (and word any error) exactly as before. False is never wrong.
    ``n``: ``len(messages)`` when the caller has it."""
    if n is None:
        n = len(messages)
    done = 0  # positions below this were read as an ask's results
    for i in at:
        if i < done:
            continue
        m = messages[i]
        if type(m) is not dict:
            if roles:
                return False
            continue
        role = m.get("role")
        if role == "tool":
            return False
        if roles and role not in PROVIDER_ROLES:
            return False
        if role != "assistant" or not m.get("tool_calls"):
            continue
        ids = _ask_ids(m)
        k = len(ids)
        if not k or i + k >= n or len(set(ids)) != k or k != len(m["tool_calls"]):  # a call without a string id
            return False
        for j in range(k):
            r = messages[i + 1 + j]
            if type(r) is not dict or r.get("role") != "tool" or r.get("tool_call_id") != ids[j]:
                return False
        done = i + 1 + k
        if done < n:
            nxt = messages[done]
            if type(nxt) is dict and nxt.get("role") == "tool":
                return False
    return True


def sanitize_provider_messages(messages: Sequence[Message], *, skip: Sequence[tuple[int, int]] = (),
                               skip_declares: Callable[[str], bool] | None = None,
                               owned: bool = False) -> SanitizeResult:
    """Repair tool-call pairing so the provider accepts the payload (rules in the module docstring).

    ``result.origin[i]`` is the input position of ``result.messages[i]`` (None for a synthesised
    empty result); origins are strictly increasing, so the output keeps the input's order. When
    nothing needed repair it is ``range(len(messages))`` (a sequence, compare it as ``list(origin)``).

    ``skip`` (incremental assembly): sorted, disjoint input ranges each made of whole *clean* units —
    a non-tool row with a valid role that is not a summary block, followed either by nothing or, for
    an ask, by exactly one result per distinct call id in declaration order — and each followed by a
    non-tool row. Such a unit passes unchanged with no repair under every rule above, so it is copied
    without being read; ``skip_declares(id)`` says whether an ask inside the ranges declares ``id``
    (rule 6's label). The result is the same as without ``skip`` (the tests hold this against the
    full pass), and ``result.clean`` gives the skipped ranges' output positions for the final check.

    ``owned``: the caller hands ``messages`` (a list) and ``skip`` over and will not change them;
    when nothing needs repair they are the result's lists themselves rather than copies (an uncapped
    stack's payload is thousands of rows, on every call). A :class:`~inspector.engine.types.JoinedRows`
    (the incremental path's payload, a view that never changes) is then the result's rows as it is.

    ``result.verified``: the output was read here as :func:`check_provider_payload` reads it first
    (the rows outside ``result.clean``: well paired, every role one a provider accepts), so that
    check would pass on ``result.messages`` as returned; a caller may skip reading them again.
    """
    n = messages.n if type(messages) is JoinedRows else len(messages)  # (read once: a view's len() is a Python call)
    at = _outside(messages, skip, n) if skip else range(n)
    if _untouched(messages, at, True, n):  # the common case: nothing to repair
        kept = _kept(messages, owned)
        # origin is the identity (a range, not a list of ints); the rows read were also checked for
        # provider roles, so the final check's rules hold (verified)
        return SanitizeResult(kept, [], range(n), skip if owned and type(skip) is list else list(skip), True)
    if _untouched(messages, at, False, n):  # well paired, a row with a role no provider accepts
        return SanitizeResult(_kept(messages, owned), [], range(n), list(skip))
    if isinstance(messages, JoinedRows):  # the repair reads every row outside the clean ranges and
        messages = messages.to_list()  # slices the others: one list
    if skip:
        declared: Any = _Declared(_declared_ids(messages[p] for p in at), skip_declares or (lambda _rid: False))
    else:
        declared = _declared_ids(messages)
    return _repair(messages, skip, declared)


def _kept(messages: Sequence[Message], owned: bool) -> list[Message] | JoinedRows:
    """The rows passed on unrepaired: a :class:`~inspector.engine.types.JoinedRows` view (it never
    changes) or an ``owned`` list as they are, anything else copied into a new list."""
    if type(messages) is JoinedRows or (owned and type(messages) is list):  # (exact types: no ABC check)
        return messages
    if isinstance(messages, JoinedRows) or (owned and isinstance(messages, list)):
        return messages
    return list(messages)


def _repair(messages: Sequence[Message], skip: Sequence[tuple[int, int]], declared: Any) -> SanitizeResult:
    """The full repair pass (rules in the module docstring): the ``skip`` ranges copied unread, every
    other row read once; ``declared`` answers "does some ask of the payload declare this id"."""
    out = _Repaired([], [], [], [])
    n = len(messages)
    i = 0
    nxt = 0  # next skip range
    while i < n:
        if nxt < len(skip) and skip[nxt][0] == i:
            lo, hi = skip[nxt]
            nxt += 1
            out.clean.append((len(out.messages), len(out.messages) + hi - lo))
            out.messages.extend(messages[lo:hi])
            out.origin.extend(_positions(hi)[lo:hi])
            i = hi
            continue
        msg = messages[i]
        if not _is_ask(msg):
            if _role(msg) == "tool":  # rule 6: not in the run right after an ask
                rid = _result_id(msg)
                kind: RepairKind = "stray_result_dropped" if rid in declared else "orphan_dropped"
                out.repairs.append(Repair(kind, rid, i, "not in the run of results right after its ask"))
            else:  # rule 7
                out.messages.append(msg)
                out.origin.append(i)
            i += 1
            continue
        i = _repair_ask(messages, i, declared, out)
    return SanitizeResult(out.messages, out.repairs, out.origin, out.clean)


class _Repaired(NamedTuple):
    """The repair pass's output as it grows: rows, their input positions (None: synthesised), the
    repairs, and the output ranges copied unread."""

    messages: list[Message]
    origin: list[int | None]
    repairs: list[Repair]
    clean: list[tuple[int, int]]


def _repair_ask(messages: Sequence[Message], i: int, declared: Any, out: _Repaired) -> int:
    """Repair the ask at ``i`` and the run of ``tool`` rows after it into ``out``: an ask none of
    whose calls is answered before more rows follow loses its calls (rule 4), else it keeps its
    results and an empty result answers each call left unanswered (rule 5). Returns the position
    after the run."""
    msg = messages[i]
    n = len(messages)
    ids = _ask_ids(msg)
    end = i + 1
    while end < n and _role(messages[end]) == "tool":
        end += 1
    settled = _settle_run(messages, i, end, ids, declared)
    if not settled.kept and end < n:  # rule 4
        detail = f"unanswered calls: {', '.join(ids)}" if ids else "no call has an id"
        if _has_text(msg.get("content")):
            out.messages.append({k: v for k, v in msg.items() if k != "tool_calls"})
            out.origin.append(i)
            out.repairs.append(Repair("ask_stripped", None, i, detail))
        else:
            out.repairs.append(Repair("ask_removed", None, i, detail))
        out.repairs.extend(settled.repairs)
        return end
    out.messages.append(msg)  # rule 5
    out.origin.append(i)
    for p, row in settled.kept:
        out.messages.append(row)
        out.origin.append(p)
    out.repairs.extend(settled.repairs)
    for cid in settled.unanswered:
        out.messages.append({"role": "tool", "tool_call_id": cid, "content": ""})
        out.origin.append(None)
        out.repairs.append(Repair("empty_result_synthesised", cid, i, f"no result for the ask at {i}"))
    return end


def _fmt_ids(ids: set[Any]) -> str:
    return "{" + ", ".join(sorted(repr(x) for x in ids)) + "}"


def check_provider_payload(messages: Sequence[Message], *, skip: Sequence[tuple[int, int]] = (),
                           skip_declares: Callable[[str], bool] | None = None) -> None:
    """Raise :class:`ProviderPayloadError` if a provider would reject the payload: a row whose role
    is not one of :data:`PROVIDER_ROLES` (:func:`check_roles`, Q19), or unpaired tool calls and
    results (:func:`check_pairing`). The pairing repair fixes pairing, never roles: a transcript row
    with an invented role is sent as recorded and this check says so.

    ``skip`` / ``skip_declares``: ranges of whole clean units (as for
    :func:`sanitize_provider_messages`, whose ``result.clean`` they usually are), which pass both
    checks by construction and are not read; the verdict is the same as the full check's."""
    at = _outside(messages, skip) if skip else None  # the rows both checks read, listed once
    if _untouched(messages, range(len(messages)) if at is None else at, roles=True):
        return  # well paired with provider roles: every rule below holds (see _untouched)
    _check_roles_at(messages, range(len(messages)) if at is None else at)
    _check_pairing_at(messages, at, skip_declares)


def _check_id_types(messages: Sequence[Message], at: Iterable[int]) -> None:
    """Refuse a call id or result id that is present but not a string (Q19): providers reject it,
    and the pairing rules, which pair string ids only, would otherwise pass an ask whose call they
    cannot see. The engine's doors convert numbers (:mod:`inspector.ids`), so one arriving here came
    round them."""
    for i in at:
        m = messages[i]
        if not isinstance(m, dict):
            continue
        calls = m.get("tool_calls")
        if isinstance(calls, list | tuple):
            for c in calls:
                cid = c.get("id") if isinstance(c, dict) else None
                if cid is not None and not isinstance(cid, str):
                    raise ProviderPayloadError(f"tool call id {cid!r} at messages[{i}] is not a string")
        rid = m.get("tool_call_id")
        if rid is not None and not isinstance(rid, str):
            raise ProviderPayloadError(f"tool result id {rid!r} at messages[{i}] is not a string")


def check_roles(messages: Sequence[Message], *, skip: Sequence[tuple[int, int]] = ()) -> None:
    """Raise :class:`ProviderPayloadError` naming the first row whose role is not system, user,
    assistant or tool (Q19). Rows inside ``skip`` ranges are known to be valid and not read."""
    _check_roles_at(messages, _outside(messages, skip) if skip else range(len(messages)))


def _check_roles_at(messages: Sequence[Message], at: Iterable[int]) -> None:
    for i in at:
        msg = messages[i]
        role = _role(msg)
        if not isinstance(role, str) or role not in PROVIDER_ROLES:
            raise ProviderPayloadError(f"messages[{i}] has role {role!r}: a provider accepts only "
                                       "system, user, assistant and tool rows")


def check_pairing(messages: Sequence[Message], *, skip: Sequence[tuple[int, int]] = (),
                  skip_declares: Callable[[str], bool] | None = None) -> None:
    """Raise :class:`ProviderPayloadError` if a provider would reject the payload's pairing.

    The rules of docs/design.md §3.8 "Final check": no result for an undeclared id (a result with no
    id counts as undeclared); each ask with k id-bearing calls is followed by exactly k consecutive
    ``tool`` rows; a ``tool`` row is never first, never follows a role other than assistant/tool,
    never follows a text-only assistant. One rule is stricter than the reference, as real
    providers are: the k rows after an ask answer exactly its call ids (as a multiset), so
    ``[ask(a, b), tool a, tool a]`` fails even though the counts match. Result text is never read.
    A real ``raise``, never ``assert``: it holds under ``python -O``. Rows inside ``skip`` ranges
    (whole clean units, see :func:`check_provider_payload`) pass every rule and are not read.
    """
    _check_pairing_at(messages, _outside(messages, skip) if skip else None, skip_declares)


def _check_pairing_at(messages: Sequence[Message], at: list[int] | None,
                      skip_declares: Callable[[str], bool] | None) -> None:
    """:func:`check_pairing` over the positions ``at`` (None: every row); rows not listed are
    whole clean units whose asks ``skip_declares`` answers for."""
    _check_id_types(messages, range(len(messages)) if at is None else at)
    if at is not None:
        declared: Any = _Declared(_declared_ids(messages[p] for p in at), skip_declares or (lambda _rid: False))
        rows: Iterable[Any] = [messages[p] for p in at]
    else:
        declared = _declared_ids(messages)
        rows = messages
    orphans = {
        _result_id(m)
        for m in rows
        if _role(m) == "tool" and _result_id(m) not in declared
    }
    if orphans:
        raise ProviderPayloadError(f"orphan tool results: {_fmt_ids(orphans)}")
    n = len(messages)
    for i in (range(n) if at is None else at):
        msg = messages[i]
        role = _role(msg)
        if _is_ask(msg):
            ids = _ask_ids(msg)
            end = i + 1
            while end < n and _role(messages[end]) == "tool":
                end += 1
            if end - i - 1 != len(ids):
                raise ProviderPayloadError(f"tool results {end - i - 1} != tool calls {len(ids)} at messages[{i}]")
            results = [_result_id(messages[p]) for p in range(i + 1, end)]
            if results == ids:  # the common case: answered in declaration order
                continue
            answered = Counter(results)
            wanted: Counter[str | None] = Counter(ids)
            if answered != wanted:
                missing = set(wanted - answered)
                raise ProviderPayloadError(
                    f"tool results at messages[{i + 1}:{end}] do not answer the tool calls at messages[{i}]: "
                    f"unanswered {_fmt_ids(missing)}"
                )
        elif role == "tool":
            if i == 0:
                raise ProviderPayloadError("tool result at start of payload")
            prev = messages[i - 1]
            prev_role = _role(prev)
            if prev_role not in ("assistant", "tool"):
                raise ProviderPayloadError(f"tool result at messages[{i}] follows role={prev_role!r}")
            if prev_role == "assistant" and not _is_ask(prev):
                raise ProviderPayloadError(f"tool result at messages[{i}] follows a text-only assistant")
