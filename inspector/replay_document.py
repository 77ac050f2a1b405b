"""The replay document every face writes: a replay's JSON with what each call forgot and what the
provider's prompt cache served, as one object (:func:`replay_document`) and as text with secrets
masked (:func:`replay_dumps`, what ``context-inspector replay`` writes and the app exports)."""

from __future__ import annotations

import json
from typing import Any

from inspector.engine.identifiers import Extractor, extract_identifiers
from inspector.forgetting import forgetting_totals, replay_needs
from inspector.replay import Replay
from inspector.vocabulary import standin_estimate_words

__all__ = ["document_text", "masked_document_text", "replay_document", "replay_dumps"]


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
        frame["forgotten"] = [x.to_json() for x in c.forgotten]
    doc["totals"]["forgetting"] = forgetting_totals(needs)
    if sum(rp.summarizer_calls.values()):  # summaries the stand-in wrote make the forgetting an estimate
        for words in standin_estimate_words(rp.summarizer_label):
            doc["totals"]["forgetting"]["estimate_note"] = words
    return add_cache_to_document(doc, rp, cache_rule)


def replay_dumps(rp: Replay, *, payloads: bool = False, extractor: Extractor = extract_identifiers,
                 cache_rule: str | None = None) -> str:
    """:func:`replay_document` as JSON text, secrets masked: one line per top-level field and one
    line per frame or commit (:func:`document_text`), so a diff of two replays shows the frames
    that differ."""
    return masked_document_text(replay_document(rp, payloads=payloads, extractor=extractor, cache_rule=cache_rule))


def _one(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def document_text(doc: dict[str, Any]) -> str:
    """A JSON object as text, each top-level field on its own line and each element of a top-level
    list of objects on its own line (valid JSON that ``json.loads`` reads back as ``doc``)."""
    return "{\n" + ",\n".join(f" {_one(key)}: {_body(value)}" for key, value in doc.items()) + "\n}"


def _body(value: Any) -> str:
    """One top-level field's value as :func:`document_text` writes it."""
    if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        return _rows([_one(x) for x in value])
    return _one(value)


def _rows(texts: list[str]) -> str:
    return "[\n" + ",\n".join("  " + t for t in texts) + "\n ]"


def masked_document_text(doc: dict[str, Any]) -> str:
    """``document_text(mask_secrets(doc))``, the same text, made by writing each element of a
    top-level list of objects (a frame, a commit) first and masking only what
    :func:`~inspector.redact.json_may_hold_secret` says may hold a secret: the whole list's text is
    tested once, and only when it may, each element's (the other top-level fields are masked as
    they are: they are few). Each element is walked by the masker at most once, and most not at all."""
    from inspector.redact import json_may_hold_secret, mask_secrets

    lines = []
    for key, value in doc.items():
        if type(value) is list and value and all(type(x) is dict for x in value):
            body = _rows([_one(x) for x in value])
            if json_may_hold_secret(body):  # rarely: then each element on its own
                body = _rows([_one(mask_secrets(x)) if json_may_hold_secret(t) else t
                              for x, t in zip(value, (_one(x) for x in value), strict=True)])
        else:
            body = _body(mask_secrets({key: value})[key])
        lines.append(f" {_one(key)}: {body}")
    return "{\n" + ",\n".join(lines) + "\n}"
