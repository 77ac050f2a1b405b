"""A deterministic offline stand-in for the ``llm`` summarizer: extractive, labelled, sized like a model's summary.

Replays and demos without an API key still need a summary that behaves like one: this one keeps
the *sentences* of the folded messages that carry an identifier (:mod:`inspector.engine.identifiers`:
ids, emails, paths, times, quantities, ...) or a decision ("confirmed", "will", "cancel", ...),
and carries the previous summary's sentences forward, so a fact folded early can survive later
folds as it would in a good model summary.

Its size is a model summary's (docs/design.md, "The stand-in summary's size"): its kept lines fit
a target of :func:`target_tokens` — a tenth of the tokens it folds, at least :data:`FLOOR_TOKENS`
and at most :data:`CAP_TOKENS`, and never more than it folds — with tokens counted as four
characters each (the label and counts lines above them are the stand-in's labelling, outside it).
When the kept sentences do not fit, the least salient go first: sentences with no identifier (a
decision only), then tool traffic, then the agent's words and earlier summaries, then the user's;
within one kind the oldest goes first. So heavy compression loses detail as a model's summary
would, and what stays is the most salient, then the most recent.

No model is called; the same input gives the same text, byte for byte; the first line says it is
a stand-in, and ``model`` is ``offline-stand-in``, so no output can pass it off as a real summary.
Each call also records an *estimated* usage (prompt = the prompt the ``llm`` summarizer would send,
completion = the text, both by the character estimate), so a replay can price the summaries a real
model would have written at ``price_model``'s rates — an estimate, and labelled so where shown.

One summarizer reads each distinct row text once and searches each distinct sentence once, however
many of its summaries fold them (docs/performance.md, "Why some code is shaped for speed"): what it
writes for a fold is what a new summarizer writes for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import orjson

from inspector.engine.identifiers import digit_shape, extract_identifiers, may_hold_identifiers, message_text
from inspector.engine.summarizers import PricedUsage
from inspector.engine.summary_block import is_summary_block, summary_body
from inspector.engine.types import Message

STANDIN_MODEL = "offline-stand-in"
STANDIN_LABEL = "[offline stand-in summary — not produced by a model]"

RATIO = 0.1
"""The target's share of the folded tokens: a model summary is about a tenth of what it folds."""
FLOOR_TOKENS = 256
"""The smallest target (LangMem's running summary budget, ``max_summary_tokens=256``): a short fold
still gets a paragraph, unless it is itself shorter."""
CAP_TOKENS = 20_000
"""The largest target (Claude Code reserves ``min(max output, 20 000)`` tokens for its compaction summary)."""
CHARS_PER_TOKEN = 4
"""How the stand-in counts tokens: four characters each, the reference runtime's estimate."""

_SENTENCE_END = re.compile(r"[.!?]\s+(?=[\"'“(\[A-Z0-9#])")
"""Where a sentence ends inside a line: after ``.``, ``!`` or ``?`` and the whitespace that follows,
when a capital, a digit, a quote, a bracket or ``#`` comes next (a line break always ends one)."""
_DECISION_WORDS = (r"decid\w*|confirm\w*|agree\w*|approv\w*|cancel\w*|refund\w*|book\w*|chose|chosen|"
                   r"will|must|should|need to|instead|resolved|escalat\w*|scheduled|deadline|prefer\w*")
_DECISION = re.compile(r"\b(" + _DECISION_WORDS + r")\b", re.IGNORECASE)
_DECISION_LOWER = re.compile(r"\b(?:" + _DECISION_WORDS + r")\b", re.ASCII)
r"""The same words, read in lowered ASCII text (where ASCII ``\b`` is Unicode ``\b``; a third faster)."""
_MAX_SENTENCE = 240
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))
"""Printable ASCII: an ASCII text with nothing left once these are deleted is printable (one byte
translation, a quarter of ``str.isprintable``'s cost)."""
_ROLE_RANK = {"user": 3, "agent": 2, "earlier": 2}
_WHO = {"user": "user", "assistant": "agent", "tool": "tool result"}


def target_tokens(folded_tokens: int, *, ratio: float = RATIO, floor: int = FLOOR_TOKENS,
                  cap: int = CAP_TOKENS) -> int:
    """The stand-in summary's size target for a fold of ``folded_tokens`` tokens: ``ratio`` of it,
    rounded up, raised to ``floor`` and lowered to ``cap``, and never above ``folded_tokens`` itself
    (``min(cap, max(floor, ⌈ratio × folded⌉), folded)``; 0 for an empty fold)."""
    return _bounded(folded_tokens, _exact_ratio(ratio), floor, cap)


def _exact_ratio(ratio: float) -> Fraction:
    """``ratio`` as the fraction it is written as (``0.1`` is 1/10, not the float's binary value)."""
    return Fraction(ratio).limit_denominator(10**6)


def _bounded(folded_tokens: int, ratio: Fraction, floor: int, cap: int) -> int:
    share = -(-ratio.numerator * folded_tokens // ratio.denominator)  # ⌈ratio × folded⌉ in integers: ⌈0.1 × 30⌉ is 3
    return max(0, min(cap, max(floor, share), folded_tokens))


def folded_tokens(messages: list[Message]) -> int:
    """The tokens a fold holds, counted as the stand-in counts them: every message's text (content
    and tool calls, :func:`~inspector.engine.identifiers.message_text`; a previous summary's body)
    at :data:`CHARS_PER_TOKEN` characters a token."""
    return sum(len(_fold_text(m)[1]) for m in messages) // CHARS_PER_TOKEN


def _fold_text(msg: Message) -> tuple[bool, str]:
    """Whether ``msg`` is a summary block, and the text of it a fold reads and counts: a block's
    body, any other message's content and tool calls (:func:`~inspector.engine.identifiers.message_text`)."""
    if is_summary_block(msg):
        return True, summary_body(msg)
    return False, message_text(msg)


def _sentences(text: str) -> list[str]:
    """The sentences of ``text``, each with its whitespace runs made one blank, cut at
    :data:`_MAX_SENTENCE` characters (ending ``…``): a line break ends a sentence, and so does
    :data:`_SENTENCE_END` inside a line."""
    out: list[str] = []
    if "\n" not in text and "." not in text and "!" not in text and "?" not in text:
        _add_sentence(out, text)  # one line, no sentence end in it (most tool results): one piece
        return out
    for line in text.split("\n"):
        if "." in line or "!" in line or "?" in line:
            start = 0
            for m in _SENTENCE_END.finditer(line):
                _add_sentence(out, line[start:m.start() + 1])
                start = m.end()
            line = line[start:]
        _add_sentence(out, line)
    return out


def _add_sentence(out: list[str], piece: str) -> None:
    """Append ``piece`` with its whitespace runs made one blank, unless that leaves it empty, cut to
    :data:`_MAX_SENTENCE` characters. A long piece is read only as far as the cut: its first
    ``2 × _MAX_SENTENCE`` characters made so are the start of the whole piece made so (a word cut
    there is the start of that word), so when they are already longer than the cut they give it."""
    if len(piece) > 2 * _MAX_SENTENCE:
        head = _single_blanks(piece[: 2 * _MAX_SENTENCE])
        if len(head) > _MAX_SENTENCE:
            out.append(head[: _MAX_SENTENCE - 1] + "…")
            return
    s = _single_blanks(piece)
    if s:
        out.append(s if len(s) <= _MAX_SENTENCE else s[: _MAX_SENTENCE - 1] + "…")


def _single_blanks(piece: str) -> str:
    """``piece`` with its whitespace runs made one blank and none at either end."""
    if piece.isascii() and not piece.encode("ascii").translate(None, _PRINTABLE_ASCII) and "  " not in piece \
            and piece[:1] != " " and piece[-1:] != " ":
        return piece  # printable ASCII holds no whitespace but blanks: single and inside, it is made already
    return " ".join(piece.split())


def _decides(sentence: str) -> bool:
    """Whether ``sentence`` holds a decision word (:data:`_DECISION`); an ASCII sentence is searched
    lowered, case-sensitively (the same answer: ASCII letters fold only to each other), and so is
    one cut to :data:`_MAX_SENTENCE` (ASCII but its closing ``…``): ``…`` is in no decision word and
    is no word character, so ``\\b`` reads it as it reads the end of the text."""
    head = sentence[:-1] if sentence[-1:] == "…" else sentence
    if head.isascii():
        return _DECISION_LOWER.search(head.lower()) is not None
    return _DECISION.search(sentence) is not None


def _carried(body: str) -> list[str]:
    """The kept sentences of a previous summary block's ``body`` (its ``- `` lines; any other
    summary's sentences)."""
    lines = body.splitlines()
    if lines and lines[0] == STANDIN_LABEL:
        return [ln[2:] for ln in lines if ln.startswith("- ")]
    return [f"earlier: {s}" for s in _sentences(body)]


def _rank(sentence: str) -> int:
    """Keep order under the size target: what the user said outlasts the agent's words, which outlast
    tool traffic; a sentence with no identifier (a decision only) goes first."""
    if not extract_identifiers(sentence.split(": ", 1)[-1]):
        return 0
    return _ROLE_RANK.get(sentence.split(":", 1)[0], 1)


def _who(msg: Message) -> str:
    role = str(msg.get("role"))
    return _WHO.get(role, role)


class _Reading:
    """What the stand-in has read, kept across its calls: each distinct row text's sentences (split
    once, however many folds hold the row: a summarising strategy may fold the same rows again),
    whether each distinct sentence holds an identifier (searched once: tool calls repeat their
    lines) and, only when a summary's size makes it matter, whether it holds a decision word, and
    each candidate line's :func:`_rank` (a carried-forward line is one of these, ranked when its
    row was read)."""

    def __init__(self) -> None:
        self.rows: dict[str, list[str]] = {}
        self.identified: dict[str, bool] = {}  # sentence: whether it holds an identifier
        self.shapes: dict[str, bool] = {}  # the same by :func:`digit_shape`, searched once a shape
        self.decisions: dict[str, bool] = {}  # sentence: whether it holds a decision word (asked when needed)
        self.ranks: dict[str, int] = {}

    def read(self, texts: Iterable[str]) -> None:
        """Split each of ``texts`` not read yet into its sentences, and search the sentences not
        searched yet for identifiers together: only those
        :func:`~inspector.engine.identifiers.may_hold_identifiers` lets through are extracted, one
        of each :func:`~inspector.engine.identifiers.digit_shape`."""
        rows, identified = self.rows, self.identified
        new = [t for t in dict.fromkeys(texts) if t not in rows]
        if not new:
            return
        split = [_sentences(t) for t in new]
        fresh = [s for s in dict.fromkeys(s for found in split for s in found) if s not in identified]
        shapes = self.shapes
        # a closing "…" (a cut sentence's) is asked without: it is no guard character (an ASCII one,
        # "“", a digit), so the same answer, and a batch of ASCII sentences stays ASCII (half the cost)
        asked = [s[:-1] if s[-1:] == "…" else s for s in fresh]
        for s, may in zip(fresh, may_hold_identifiers(asked), strict=True):
            found = False
            if may:
                shape = digit_shape(s)
                known = shapes.get(shape)
                found = shapes[shape] = bool(extract_identifiers(s)) if known is None else known
            identified[s] = found
        rows.update(zip(new, split))

    def decides(self, sentence: str) -> bool:
        """:func:`_decides` of ``sentence``, searched once."""
        found = self.decisions.get(sentence)
        if found is None:
            found = self.decisions[sentence] = _decides(sentence)
        return found

    def rank(self, sentence: str) -> int:
        """:func:`_rank` of ``sentence``, computed once."""
        r = self.ranks.get(sentence)
        if r is None:
            r = self.ranks[sentence] = _rank(sentence)
        return r

    def candidates(self, messages: list[Message]) -> tuple[list[str], dict[int, str], int, int]:
        """Every line a summary of ``messages`` may keep, oldest first (carried-forward ones where
        their block stands), each once; of those, the ones still waiting on a decision-word search
        (by index: the sentence to search; a line of a sentence with no identifier is a candidate
        only when it holds a decision word, and then of rank 0); how many user messages the fold
        holds; and its tokens (:func:`folded_tokens`, from the texts read here). A row line is
        ``"{who}: {sentence}"`` for each sentence with an identifier or a decision word."""
        rows: list[tuple[str | None, str]] = []  # (who, text); who None: a summary block's body
        texts: list[str] = []  # the row texts to read (not the blocks')
        users = chars = 0
        for m in messages:  # _fold_text and _who, inline: this loop reads every folded row
            role = m.get("role")
            if role == "system" and is_summary_block(m):
                text = summary_body(m)
                rows.append((None, text))
            else:
                text = message_text(m)
                users += role == "user"
                rows.append((_WHO.get(role, role) if type(role) is str else _who(m), text))
                texts.append(text)
            chars += len(text)
        self.read(texts)
        tokens = chars // CHARS_PER_TOKEN
        lines: list[str] = []
        pending: dict[int, str] = {}
        first: dict[str, str | None] = {}  # line: the sentence it waits on (None: a candidate)
        for who, text in rows:
            for line, waits in self._lines(who, text):
                if line not in first:
                    first[line] = waits
                    if waits is not None:
                        pending[len(lines)] = waits
                    lines.append(line)
                elif first[line] is not None and first[line] != waits:  # one line from two sentences
                    return self._settled(rows), {}, users, tokens
        return lines, pending, users, tokens

    def _lines(self, who: str | None, text: str) -> list[tuple[str, str | None]]:
        """The lines of one folded row, each with the sentence its candidacy waits on (None: a
        candidate): a summary block's carried lines (candidates), else one line a sentence, a
        candidate when it holds an identifier (ranked by ``who``) or, read apart by :func:`_rank`
        when ``who`` holds ``:``, when it holds a decision word too."""
        if who is None:
            return [(line, None) for line in _carried(text)]
        identified, ranks = self.identified, self.ranks
        out: list[tuple[str, str | None]] = []
        role_rank = _ROLE_RANK.get(who, 1) if ":" not in who else None  # else _rank reads who apart
        for sentence in self.rows[text]:
            line = f"{who}: {sentence}"
            if identified[sentence]:
                out.append((line, None))
                if role_rank is not None:
                    ranks[line] = role_rank
            elif role_rank is not None:
                out.append((line, sentence))
            elif self.decides(sentence):
                out.append((line, None))
        return out

    def _candidate(self, line: str, waits: str | None) -> bool:
        """Whether ``line`` (:meth:`_lines`) is a candidate: one waiting on ``waits`` is when that
        sentence holds a decision word (searched now), and then it is of rank 0."""
        if waits is None:
            return True
        if self.decides(waits):
            self.ranks[line] = 0
            return True
        return False

    def _settled(self, rows: list[tuple[str | None, str]]) -> list[str]:
        """The candidate lines of ``rows``, oldest first, each once, every pending line searched."""
        kept: list[str] = []
        seen: set[str] = set()
        for who, text in rows:
            for line, waits in self._lines(who, text):
                if line not in seen and self._candidate(line, waits):
                    seen.add(line)
                    kept.append(line)
        return kept

    def within(self, lines: list[str], pending: dict[int, str], budget: int) -> list[str]:
        """The candidate lines that fit ``budget`` characters (each costs its length + 3: ``"\\n- "``),
        the rest dropped lowest rank first, oldest first within a rank; the order of the kept ones
        unchanged. A pending line (:meth:`candidates`) is searched for a decision word only when the
        answer matters: when the lines of rank 1 and more fill the budget, no line of rank 0 is
        kept; else the lines of rank 0 kept are the newest that fit beside them, found from the
        newest back, and an older one is dropped unread."""
        if not pending:
            return self._fit(lines, budget)
        if sum(map(len, lines)) + 3 * len(lines) <= budget:  # all fit, whichever are candidates
            return [line for i, line in enumerate(lines) if self._candidate(line, pending.get(i))]
        rank = self.rank
        ranked = {i for i, line in enumerate(lines) if i not in pending and rank(line) > 0}
        room = budget - sum(len(lines[i]) for i in ranked) - 3 * len(ranked)
        if room < 0:  # every line of rank 0 goes, whatever they are
            return self._fit([line for i, line in enumerate(lines) if i in ranked], budget)
        kept = set(ranked)
        for i in range(len(lines) - 1, -1, -1):
            if i in ranked or not self._candidate(lines[i], pending.get(i)):
                continue
            room -= len(lines[i]) + 3
            if room < 0:
                break
            kept.add(i)
        return [line for i, line in enumerate(lines) if i in kept]

    def _fit(self, sentences: list[str], budget: int) -> list[str]:
        """Candidate ``sentences`` within ``budget``, as :meth:`within` keeps them (none pending)."""
        size = sum(map(len, sentences)) + 3 * len(sentences)
        if size <= budget:
            return sentences
        rank = self.rank
        dropped: set[int] = set()
        for i in sorted(range(len(sentences)), key=lambda i: (rank(sentences[i]), i)):
            if size <= budget:
                break
            dropped.add(i)
            size -= len(sentences[i]) + 3
        return [s for i, s in enumerate(sentences) if i not in dropped]


def _counts_line(messages: int, users: int, kept: int) -> str:
    return f"{messages} message(s), {users} user message(s); {kept} sentence(s) with identifiers or decisions kept."


class StandInSummarizer(PricedUsage):
    """The labelled offline stand-in for a summary model: an extractive summary of at most
    :func:`target_tokens` tokens (``ratio``, ``floor`` and ``cap`` as there), with usage estimated as
    a model call would report it (priced at ``price_model``'s rates)."""

    model = STANDIN_MODEL
    model_source = "stand-in"
    label = "stand-in"

    def __init__(self, price_model: str | None = None, *, ratio: float = RATIO, floor: int = FLOOR_TOKENS,
                 cap: int = CAP_TOKENS) -> None:
        """Takes the summary model whose rates price the estimated usage (None: unpriced until the
        replay sets it) and the size rule's ``ratio``, ``floor`` and ``cap`` (tokens)."""
        self.price_model = price_model
        self.ratio, self.floor, self.cap = ratio, floor, cap
        self.calls = 0
        self.usage: list[dict[str, Any]] = []  # estimated, one entry per call
        self._reading = _Reading()
        self._exact: tuple[float, Fraction] | None = None  # (ratio, the ratio as a fraction)

    def target(self, messages: list[Message]) -> int:
        """This summarizer's size target in tokens for a fold of ``messages`` (:func:`target_tokens`
        of :func:`folded_tokens`)."""
        return self._target(folded_tokens(messages))

    def _target(self, tokens: int) -> int:
        exact = self._exact
        if exact is None or exact[0] != self.ratio:  # made once: a fraction costs more than the rest of the rule
            exact = self._exact = (self.ratio, _exact_ratio(self.ratio))
        return _bounded(tokens, exact[1], self.floor, self.cap)

    def summarize(self, messages: list[Message]) -> str:
        """The summary of ``messages``: the label line, a counts line, then ``- `` lines (carried-forward
        sentences, then new ones) whose characters (each line's length + 3) fit the size target. The
        two head lines stand outside the target: they label the stand-in, they are no summary content."""
        self.calls += 1
        candidates, pending, users, tokens = self._reading.candidates(messages)
        kept = self._reading.within(candidates, pending, self._target(tokens) * CHARS_PER_TOKEN)
        lines = [STANDIN_LABEL, _counts_line(len(messages), users, len(kept)), *(f"- {s}" for s in kept)]
        text = "\n".join(lines)
        self.usage.append({"prompt_tokens": _estimate_prompt(messages), "completion_tokens": len(text) // 4 + 4,
                           "estimated": True})
        return text


def _estimate_prompt(messages: list[Message]) -> int:
    """The character estimate of the prompt the ``llm`` summarizer would send for ``messages``:
    ``EstimateCounter().count(build_prompt(messages))``, the instructions' length and
    :func:`json_size` of the messages added as the counter adds them, without writing the JSON."""
    from inspector.engine.summarizers.llm import DEFAULT_INSTRUCTIONS
    from inspector.engine.tokens import EstimateCounter

    return EstimateCounter().total(len(DEFAULT_INSTRUCTIONS) + json_size(messages), 2)


def json_size(messages: list[Message]) -> int:
    """``len(json.dumps(messages, default=str))`` (how the ``llm`` summarizer writes them, ASCII
    escapes and ``", "``/``": "`` separators), from orjson's compact UTF-8, written ten times
    faster: the same text but a blank after each separator (:func:`_separators`), ``\\u007f``
    for DEL (five more characters), and ``\\uXXXX`` for each non-ASCII character (six characters
    for its two or three bytes; twelve, a surrogate pair, for the four of one beyond U+FFFF).
    Messages holding anything but texts, integers, booleans, None, lists and dicts (a float, which
    the two spell differently, a subclass of a text or a number, any other object) are written by
    ``json.dumps`` itself."""
    try:
        raw = orjson.dumps(messages)
    except TypeError:  # orjson.JSONEncodeError: a type it has no form for, a key that is no text
        raw = None
    seps = None if raw is None else _separators(messages)
    if raw is None or seps is None:
        return len(json.dumps(list(messages), default=str))
    size = len(raw) + seps
    if b"\x7f" in raw:  # (memchr) most folds hold no DEL
        size += 5 * raw.count(b"\x7f")
    if raw.isascii():  # (a word at a time) most folds, or all but their previous summary
        return size
    # the non-ASCII bytes, read only where they are: pieces that are ASCII (isascii) are skipped
    foreign = b"".join(piece.translate(None, _ASCII_BYTES) for piece in
                       (raw[i:i + _PIECE] for i in range(0, len(raw), _PIECE)) if not piece.isascii())
    leads = len(foreign.translate(None, _NOT_LEAD))  # one a non-ASCII character
    longs = len(foreign.translate(None, _NOT_LEAD4))  # one a character beyond U+FFFF
    return size + 6 * leads + 6 * longs - len(foreign)


_TEXT_OR_NONE = frozenset((str, type(None)))
_ASCII_BYTES = bytes(range(0x80))
_PIECE = 1 << 14
_NOT_LEAD = bytes(range(0xC0))
_NOT_LEAD4 = bytes(range(0xF0))


def _separators(value: Any) -> int | None:
    """How many ``,`` and ``:`` separate the items of the lists and dicts in ``value`` (a blank
    follows each in ``json.dumps``, none in orjson); None when ``value`` holds a value the two
    write differently (:func:`json_size`)."""
    t = type(value)
    if t is dict:
        n = 2 * len(value) - 1 if value else 0
        values: Iterable[Any] = value.values()
    elif t is list or t is tuple:
        n = len(value) - 1 if value else 0
        values = value
    else:
        return 0 if t is str or value is None or t is int or t is bool else None
    if _TEXT_OR_NONE.issuperset(map(type, values)):  # most rows and calls: texts only, one look
        return n
    for v in values:
        tv = type(v)
        if tv is str or v is None or tv is int or tv is bool:
            continue
        if tv is dict and _TEXT_OR_NONE.issuperset(map(type, v.values())):  # a row of texts: no call
            n += 2 * len(v) - 1 if v else 0
            continue
        inner = _separators(v)
        if inner is None:
            return None
        n += inner
    return n
