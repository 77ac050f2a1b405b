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

import math
import re
from fractions import Fraction
from typing import Any

from inspector.engine.identifiers import extract_identifiers, message_text
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
    share = math.ceil(ratio * folded_tokens)  # exact: ⌈0.1 × 30⌉ is 3, not 4
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
    for line in (text or "").split("\n"):
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
    """What the stand-in has read, kept across its calls: each distinct row text's sentences worth
    keeping (split once, however many folds hold the row: a summarising strategy may fold the same
    rows again), each distinct sentence's verdict (searched for identifiers and decision words
    once: tool calls repeat their lines) and each candidate line's :func:`_rank` (a carried-forward
    line is one of these, ranked when its row was read)."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[tuple[str, int], ...]] = {}
        self.verdicts: dict[str, int] = {}  # 2: an identifier; 1: a decision word only; 0: neither
        self.ranks: dict[str, int] = {}

    def row(self, text: str) -> tuple[tuple[str, int], ...]:
        """The sentences of ``text`` worth keeping (an identifier or a decision word), each with
        its verdict (2: an identifier; 1: a decision word only)."""
        found = self.rows.get(text)
        if found is None:
            verdicts = self.verdicts
            out = []
            for sentence in _sentences(text):
                verdict = verdicts.get(sentence)
                if verdict is None:
                    verdict = verdicts[sentence] = 2 if extract_identifiers(sentence) else int(_decides(sentence))
                if verdict:
                    out.append((sentence, verdict))
            found = self.rows[text] = tuple(out)
        return found

    def lines(self, who: str, text: str) -> list[str]:
        """The candidate lines of a ``who`` row of ``text``: ``"{who}: {sentence}"`` for each sentence
        worth keeping, each line's rank noted from its sentence's verdict."""
        found = self.row(text)
        if not found:
            return []
        ranks = self.ranks
        role_rank = _ROLE_RANK.get(who, 1) if ":" not in who else None  # else _rank reads who apart
        out = []
        for sentence, verdict in found:
            line = f"{who}: {sentence}"
            out.append(line)
            if role_rank is not None:  # _rank(line): 0 for a decision only, else by who
                ranks[line] = role_rank if verdict == 2 else 0
        return out

    def rank(self, sentence: str) -> int:
        """:func:`_rank` of ``sentence``, computed once."""
        r = self.ranks.get(sentence)
        if r is None:
            r = self.ranks[sentence] = _rank(sentence)
        return r

    def candidates(self, messages: list[Message]) -> tuple[list[str], int, int]:
        """The sentences worth keeping, oldest first (carried-forward ones where their block
        stands), each once; how many user messages the fold holds; and its tokens
        (:func:`folded_tokens`, from the texts read here)."""
        kept: list[str] = []
        seen: set[str] = set()
        users = chars = 0
        for m in messages:  # _fold_text and _who, inline: this loop reads every folded row
            role = m.get("role")
            if role == "system" and is_summary_block(m):
                text = summary_body(m)
                found = _carried(text)
            else:
                text = message_text(m)
                users += role == "user"
                found = self.lines(_WHO.get(role, role) if type(role) is str else _who(m), text)
            chars += len(text)
            for s in found:
                if s not in seen:
                    seen.add(s)
                    kept.append(s)
        return kept, users, chars // CHARS_PER_TOKEN

    def within(self, sentences: list[str], budget: int) -> list[str]:
        """The sentences that fit ``budget`` characters (each costs its length + 3: ``"\\n- "``),
        the rest dropped lowest rank first, oldest first within a rank; the order of the kept ones
        unchanged."""
        size = sum(len(s) + 3 for s in sentences)
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
        candidates, users, tokens = self._reading.candidates(messages)
        kept = self._reading.within(candidates, self._target(tokens) * CHARS_PER_TOKEN)
        lines = [STANDIN_LABEL, _counts_line(len(messages), users, len(kept)), *(f"- {s}" for s in kept)]
        text = "\n".join(lines)
        self.usage.append({"prompt_tokens": _estimate_prompt(messages), "completion_tokens": len(text) // 4 + 4,
                           "estimated": True})
        return text


def _estimate_prompt(messages: list[Message]) -> int:
    from inspector.engine.summarizers.llm import build_prompt
    from inspector.engine.tokens import EstimateCounter

    return EstimateCounter().count(build_prompt(messages))
