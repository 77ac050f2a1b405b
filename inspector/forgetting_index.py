"""The forgetting detector's reading of a replay's transcript, done once per replay
(:class:`TranscriptIndex`): which rows each call reads whole (its user message, its working memory)
or as its next reply, the identifiers of each (the extractor called once per distinct text), and
for every identifier any call needs, the messages whose text holds it (one Aho–Corasick pass over
the case-folded texts: substring semantics). :mod:`inspector.forgetting` walks the calls over it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

import ahocorasick

from inspector.engine.identifiers import (
    Extractor,
    Identifier,
    argument_identifiers,
    extract_identifiers,
    message_parts,
    message_text,
)
from inspector.replay import Replay

NEEDED_IN = ("user", "working_memory", "next_reply", "next_tool_call")
"""Where an identifier can be needed: the current user message, the working memory, the text of the
reply the agent produced after this call, the arguments of the tool calls in that reply."""

WHERE_BITS = {w: 1 << k for k, w in enumerate(NEEDED_IN)}
"""Each place of :data:`NEEDED_IN` as one bit (a need's places are their union)."""


@functools.lru_cache(maxsize=1 << 15)
def default_identifiers(text: str) -> tuple[Identifier, ...]:
    """:func:`extract_identifiers`, remembered by text: a sweep replays one transcript under many
    settings, and every replay's analysis reads the same texts."""
    return tuple(extract_identifiers(text))


_ZEROED = bytes.maketrans(b"123456789", b"000000000")


def _by_shape() -> Callable[[str], Sequence[Identifier]]:
    """:func:`default_identifiers` for one replay's texts, never called for a text whose digit shape
    (:func:`~inspector.engine.identifiers.digit_shape`: the extractor finds identifiers in a text
    exactly when it finds them in its shape) an earlier text showed to hold none: a transcript's tool
    calls and results differ mostly in their numbers (``lookup {"q": 17}``). The shape is kept as
    the UTF-8 of the text with each ASCII digit made ``0`` (one byte translation: the same texts
    share one as share a :func:`digit_shape`, at a quarter of its cost)."""
    empty: set[bytes] = set()

    def identifiers(text: str) -> Sequence[Identifier]:
        shape = text.encode("utf-8", "surrogatepass").translate(_ZEROED)
        if shape in empty:
            return ()
        found = default_identifiers(text)
        if not found:
            empty.add(shape)
        return found
    return identifiers


def tools_sent(rp: Replay) -> list[Any]:
    """The tool schemas the replay's calls were sent: the transcript's or the manifest's, as the agent
    in force says (:class:`~inspector.policy.AgentInForce`), none when it sends none; both when the
    replay names no agent. A schema that was not sent shows the model nothing."""
    source = rp.agent.tools if rp.agent is not None else None
    transcript_tools, manifest_tools = rp.transcript.tools, getattr(rp.settings, "tools", None)
    if source == "transcript":
        return [transcript_tools]
    if source == "manifest":
        return [manifest_tools]
    if source == "none":
        return []
    return [transcript_tools, manifest_tools]


class TranscriptIndex:
    """What the detector reads from a replay's transcript, once: case-folded texts, identifiers per
    use, and for each identifier any call needs, the messages whose text holds it (ascending).

    ``user_at``: per frame, the transcript index of its turn's user message (None in the preamble);
    ``full``: the identifiers of each row some call reads as its user message or working memory;
    ``reply``: per next reply with an identifier, its identifiers by key with where they were needed
    (bits of :data:`NEEDED_IN`); ``holders`` and ``keys_of``: the messages holding each key, and the keys each
    message holding one holds; ``in_tools``: the keys the tool schemas ``tools_sent`` show."""

    def __init__(self, rp: Replay, extractor: Extractor, tools_sent: list[Any]) -> None:
        full_rows, reply_rows = self._rows_read(rp)
        texts = self._extract(rp.messages, extractor, full_rows, reply_rows)
        keys = {x.key for v in self.full.values() for x in v} | {k for v in self.reply.values() for k in v}
        ac = self.ac = self._find_holders(keys, texts)
        self.newline_keys = any("\n" in k for k in keys)  # a key that could span two rows' joined texts
        self._tables: dict[int, tuple[Any, dict[str, list[int]], list[int]]] = {}
        tools_text = json.dumps(tools_sent, ensure_ascii=False, default=str).casefold()
        self.in_tools: set[str] = {k for _end, k in ac.iter(tools_text)} if len(ac) else set()
        if "" in keys:
            self.in_tools.add("")

    def _rows_read(self, rp: Replay) -> tuple[set[int], set[int]]:
        """Sets ``user_at`` and ``system`` (the transcript's system rows); returns the rows some call
        reads as its user message or working memory (whole text), and the rows some call reads as
        its next reply."""
        msgs = rp.messages
        n = len(msgs)
        roles = [m.get("role") for m in msgs]
        users = [i for i, r in enumerate(roles) if r == "user"]
        self.system = {i for i, r in enumerate(roles) if r == "system"}
        self.user_at: list[int | None] = []
        full_rows: set[int] = set()
        reply_rows: set[int] = set()
        reach: dict[int | None, int] = {}
        u = 0
        for f in rp.frames:
            at = f.at
            while u < len(users) and users[u] < at:
                u += 1
            ua = users[u - 1] if u and f.turn > 0 else None
            self.user_at.append(ua)
            hi = at if at < n else n
            if reach.get(ua, -1) < hi:
                reach[ua] = hi
            if at < n:
                reply_rows.add(at)
        for ua, hi in reach.items():
            if ua is not None:
                full_rows.add(ua)
            full_rows.update(range(0 if ua is None else ua + 1, hi))
        full_rows -= self.system
        return full_rows, reply_rows

    def _extract(self, msgs: Sequence[Any], extractor: Extractor, full_rows: set[int],
                 reply_rows: set[int]) -> list[str]:
        """Sets ``full`` (the rows with an identifier only) and ``reply``, reading each message once
        and calling the extractor at most once per distinct text; returns every message's text (its
        content, and its tool calls' names and arguments)."""
        texts: list[str] = []
        self.full: dict[int, Sequence[Identifier]] = {}
        self.reply: dict[int, dict[str, tuple[Identifier, int]]] = {}
        identifiers: Callable[[str], Sequence[Identifier]] = _by_shape()  # remembered by text and by shape
        if extractor is not extract_identifiers:
            known: dict[str, list[Identifier]] = {}

            def identifiers(text: str) -> Sequence[Identifier]:
                found = known.get(text)
                if found is None:
                    found = known[text] = list(extractor(text))
                return found

        argued: dict[str, list[Identifier]] = {}  # tool-call arguments → their identifiers
        full, reply, add = self.full, self.reply, self._add
        for i, m in enumerate(msgs):
            parts, calls = message_parts(m)
            content = parts[0] if len(parts) == 1 else "\n".join(parts)
            text = "\n".join(parts + [f"{name} {args}" for name, args in calls]) if calls else content
            texts.append(text)
            if i in full_rows:
                found = identifiers(text)
                if found:
                    full[i] = found
            if i in reply_rows:
                r: dict[str, tuple[Identifier, int]] = {}
                add(r, identifiers(content), WHERE_BITS["next_reply"])
                for _, args in calls:
                    in_args = argued.get(args)
                    if in_args is None:
                        in_args = argued[args] = argument_identifiers(args, identifiers)
                    add(r, in_args, WHERE_BITS["next_tool_call"])
                if r:
                    reply[i] = r
        return texts

    def _find_holders(self, keys: set[str], texts: Sequence[str]) -> Any:
        """Sets ``holders`` and ``keys_of`` from one Aho–Corasick pass over the case-folded texts
        (substring semantics: a text holds a key when it contains it); returns the automaton of the
        keys."""
        self.holders: dict[str, list[int]] = {k: [] for k in keys}
        self.keys_of: dict[int, list[str]] = {}  # the rows holding a key only
        ac = ahocorasick.Automaton()
        for k in keys:
            if k:
                ac.add_word(k, k)
        if not len(ac) and "" not in keys:
            return ac
        if len(ac):
            ac.make_automaton()
        for i, t in enumerate(texts):
            mine = [""] if "" in keys else []
            if len(ac):
                for _end, k in ac.iter(t.casefold()):
                    mine.append(k)
            if not mine:
                continue
            if len(mine) > 1:
                mine[:] = dict.fromkeys(mine)
            self.keys_of[i] = mine
            for k in mine:
                self.holders[k].append(i)
        return ac

    def table_holders(self, fr: Any, upto: int) -> dict[str, list[int]]:
        """For a frontier table (:class:`~inspector.replay.FrontierTable`), the entries among its first
        ``upto`` whose row sent instead holds each key (ascending): each entry read once, when a call first
        reaches it, so a frame asks O(its runs) however many rows were replaced so far."""
        memo = self._tables.get(id(fr))
        if memo is None or memo[0] is not fr:
            memo = self._tables[id(fr)] = (fr, {}, [0])
        _fr, by_key, done = memo
        ac, rows = self.ac, fr.rows
        if not len(ac):
            done[0] = max(done[0], upto)
            return by_key
        last: str | None = None  # entries in a row often send one text (a placeholder): looked up once
        keys: tuple[str, ...] = ()
        for k in range(done[0], upto):
            text = message_text(rows[k])
            if text != last:
                last, keys = text, tuple(dict.fromkeys(key for _end, key in ac.iter(text.casefold())))
            for key in keys:
                by_key.setdefault(key, []).append(k)
        done[0] = max(done[0], upto)
        return by_key

    @staticmethod
    def _add(into: dict[str, tuple[Identifier, int]], idents: Any, bit: int) -> None:
        for ident in idents:
            old = into.get(ident.key)
            into[ident.key] = (ident, bit) if old is None else (old[0], old[1] | bit)
