"""The replay document every face writes: a replay's JSON with what each call forgot and what the
provider's prompt cache served, as one object (:func:`replay_document`) and as text with secrets
masked (:func:`replay_dumps`, what the app exports; :func:`replay_bytes`, the same in UTF-8, what
``context-inspector replay`` writes)."""

from __future__ import annotations

from typing import Any

from inspector.engine.identifiers import Extractor, extract_identifiers
from inspector.forgetting import forgetting_totals, replay_needs
from inspector.json_text import masked_document_bytes, masked_document_text
from inspector.replay import Replay
from inspector.vocabulary import standin_estimate_words

__all__ = ["replay_bytes", "replay_document", "replay_dumps"]


def replay_document(rp: Replay, *, payloads: bool = False, extractor: Extractor = extract_identifiers,
                    cache_rule: str | None = None) -> dict[str, Any]:
    """The replay JSON (:meth:`Replay.to_json`) with ``forgotten`` on every frame and the forgetting
    totals under ``totals.forgetting``; when the offline stand-in wrote the replay's summaries, the
    totals also carry ``estimate_note`` (:data:`~inspector.vocabulary.STANDIN_ESTIMATE_WORDS`: the
    forgetting is an estimate a configured model replaces); then the prompt cache
    (:func:`inspector.prompt_cache.add_cache_to_document` under ``cache_rule``: a rule name, ``auto``,
    or None for the manifest's choice). Not masked: use :func:`replay_dumps` for what leaves the
    process. Raises :class:`~inspector.engine.cache.CacheRuleError` for an unknown rule name."""
    from inspector.prompt_cache import add_cache_to_document

    doc = rp.to_json(payloads=payloads)
    needs = replay_needs(rp, extractor)
    for frame, c in zip(doc["frames"], needs, strict=True):
        frame["forgotten"] = [x.to_json() for x in c.forgotten] if c.forgotten else []
    doc["totals"]["forgetting"] = forgetting_totals(needs)
    if sum(rp.summarizer_calls.values()):  # summaries the stand-in wrote make the forgetting an estimate
        for words in standin_estimate_words(rp.summarizer_label):
            doc["totals"]["forgetting"]["estimate_note"] = words
    return add_cache_to_document(doc, rp, cache_rule)


def replay_dumps(rp: Replay, *, payloads: bool = False, extractor: Extractor = extract_identifiers,
                 cache_rule: str | None = None) -> str:
    """:func:`replay_document` as JSON text, secrets masked: one line per top-level field and one
    line per summary, frame or commit (:func:`inspector.json_text.masked_document_text`, the one
    writer), so a diff of two replays shows the frames that differ."""
    return masked_document_text(replay_document(rp, payloads=payloads, extractor=extractor, cache_rule=cache_rule))


def replay_bytes(rp: Replay, *, payloads: bool = False, extractor: Extractor = extract_identifiers,
                 cache_rule: str | None = None, keep: list[Any] | None = None) -> bytes:
    """:func:`replay_dumps` as UTF-8 bytes, written without a text copy
    (:func:`inspector.json_text.masked_document_bytes`): what ``context-inspector replay`` writes.
    ``keep`` (a list) receives the document written, for a caller that ends the process soon after
    (:func:`inspector.cli.output.end_process`): a document is thousands of objects, and freeing them
    costs CPU and changes nothing the user sees. Raises :class:`UnicodeEncodeError` for a text UTF-8
    cannot hold (a lone surrogate)."""
    doc = replay_document(rp, payloads=payloads, extractor=extractor, cache_rule=cache_rule)
    if keep is not None:
        keep.append(doc)
    return masked_document_bytes(doc)
