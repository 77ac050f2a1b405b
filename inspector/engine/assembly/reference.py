"""The reference assembly: every row of the payload read, in the fixed order (docs/design.md §3.9).

system band → [summary] → kept history → current user turn → working memory; then the token
trimmer (working memory pinned as the tail), then one pairing pass, then the bands counted row by
row. It is the oracle the incremental path (:mod:`inspector.engine.assembly.incremental`) is held
equal to, call by call, and the path for whatever that one does not cover (a custom manager, a
turn resumed after a human's answer, a disabled pre-cut).
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.engine.assembly.call import HELLO, BandRule, Call, band_rule, takes_group
from inspector.engine.assembly.records import Assembly, PayloadRow, assembly_record
from inspector.engine.history import group_start, leading_group_size
from inspector.engine.pairing import sanitize_provider_messages
from inspector.engine.tokens import TokenCounter
from inspector.engine.trim import trim_budget, trim_messages_to_budget
from inspector.engine.types import Message, SanitizeResult, Span, TrimResult
from inspector.vocabulary import BANDS

__all__ = ["assemble_reference", "inserted_block", "precut"]


def precut(history: Sequence[Message], others: Sequence[Message], counter: TokenCounter, budget: int) -> int:
    """Index of the first row of ``history`` the trimmer could possibly keep, when ``others`` are sent too.

    Walking back from the newest row, once ``others + history[i:]`` exceeds ``budget`` the trimmer
    (which drops from the front) must drop everything before ``i``'s group, and that group too
    unless it is the last one (it holds ``i``); cutting there first gives the identical result while
    keeping each call O(kept rows) instead of O(whole history), and leaves the trimmer nothing to
    drop from history in the usual overflow. The last history group is never cut here (see
    :func:`~inspector.engine.assembly.call.takes_group` for when ``i``'s group is). Callers pass only
    the part of the history the trimmer may cut (a protected head row, e.g. a summary block standing
    first with no system band, goes into ``others``). Returns 0 when everything fits.
    """
    units = sum(counter.unit(m) for m in others)
    n = len(others)
    for i in range(len(history) - 1, -1, -1):
        units += counter.unit(history[i])
        n += 1
        if counter.total(units, n) > budget:
            cut = group_start(history, i)  # the trimmer's groups, chained from the history's start
            last_group = group_start(history, len(history) - 1)
            if cut < last_group and takes_group(history[cut]):
                # the trimmer drops that whole group too (its suffix holds row i, which overflows, and
                # it is not the last group, which the trimmer keeps): cut through it
                cut += leading_group_size(history, cut)
            return min(cut, last_group)
    return 0


def inserted_block(c: Call, row: Message) -> bool:
    """Whether ``row`` is a system-role block the call's edit record inserts away from the front of
    a record not of the suffix shape (the only records whose blocks can stand after other rows)."""
    edits = c.decision.edits
    if row.get("role") != "system" or edits is None or edits.suffix_start() is not None:
        return False
    return any(ins.row is row for ins in edits.inserted)


def assemble_reference(c: Call, use_precut: bool) -> Assembly:
    """The full-payload assembly of call ``c``: every row of the payload is read (the tests' oracle).
    ``use_precut``: cut history that can never fit before the trimmer runs (the identical result)."""
    engine, system, managed, wm, user = c.engine, c.system, c.managed, list(c.wm), c.user
    counter = engine.counter
    messages: list[Message] = [system] if system else []
    # The trimmer never removes a leading system-role row (with no system band, a summary block
    # stands there): the pre-cut protects the same row, so pre-cut + trimmer == trimmer.
    head = 1 if system is None and managed and managed[0].get("role") == "system" else 0
    cut = 0
    if use_precut and c.budget.max_tokens > 0 and not c.hitl:
        others = ([system] if system else []) + ([user] if c.has_user else []) + wm
        budget_tokens = trim_budget(c.budget.max_tokens, c.budget.trimmer_reserve, c.tool_tokens)
        cut = precut(managed[head:], [*others, *managed[:head]], counter, budget_tokens)
        if cut and not system and inserted_block(c, managed[head + cut]):
            # a block the record inserts after other rows (a summary after a strategy's head rows),
            # left first by the cut, would gain the trimmer's leading-row protection it does not
            # have in the whole history: cut only to the group before it, as the trimmer alone would
            cut = group_start(managed[head:], cut - 1)
        if cut and not head and system is None and managed[cut].get("role") == "system":
            cut = 0  # the cut would stand a system row first, where the trimmer (not the trimmer alone) keeps it
    cut_rows = managed[head:head + cut]
    messages.extend([*managed[:head], *managed[head + cut:]] if cut else managed)
    if c.has_user:
        messages.append(user)
    placeholder = not messages and not wm
    if placeholder:
        messages.append(HELLO)
    trimmed = trim_messages_to_budget(messages, max_tokens=c.budget.max_tokens, reserve=c.budget.trimmer_reserve,
                                      fixed=c.tool_tokens, pin_tail=wm, counter=counter)
    band_of = band_rule(system, user, c.has_user, placeholder, engine.conversation.system_message is system)
    sanitized = sanitize_provider_messages(trimmed.messages)
    rows = _layout(sanitized, trimmed, band_of, {id(m) for m in wm})
    bands = _bands(rows, counter, c.tool_tokens)
    payload_tokens = counter.count(sanitized.messages) + c.tool_tokens
    return assembly_record(c, sanitized, rows, bands, payload_tokens, trimmed, cut_rows, None)


def _layout(sanitized: SanitizeResult, trimmed: TrimResult, band_of: BandRule,
            wm_ids: set[int]) -> list[PayloadRow | Span]:
    """One :class:`PayloadRow` per row sent, its band from the row it came from; an empty result the
    pairing pass added takes the band of the row before it."""
    rows: list[PayloadRow | Span] = []
    prev_band = "working_memory"
    for out, origin in zip(sanitized.messages, sanitized.origin):
        if origin is None:
            rows.append(PayloadRow(out, prev_band, "empty_result", None))
            continue
        src = trimmed.messages[origin]
        b, syn = band_of(src, id(src) in wm_ids)
        rows.append(PayloadRow(out, b, syn, src))
        prev_band = b
    return rows


def _bands(rows: Sequence[PayloadRow | Span], counter: TokenCounter, tool_tokens: int) -> dict[str, int]:
    """Tokens per band (each band's rows counted as one list), every band present, and the tool schemas'."""
    bands = {k: 0 for k in BANDS}
    per_band: dict[str, list[Message]] = {}
    for r in rows:
        per_band.setdefault(r.band, []).append(r.message)  # type: ignore[union-attr]
    for k, msgs in per_band.items():
        bands[k] = counter.count(msgs)
    bands["tool_schemas"] = tool_tokens
    return bands
