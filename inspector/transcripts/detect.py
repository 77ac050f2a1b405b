"""Format detection over the registered importers.

An importer is any object (normally a module) with ``NAME``, ``sniff(obj_or_text, name) -> bool``,
``parse(obj_or_text, *, name, path, conversation) -> Transcript`` and
``conversations(obj_or_text, *, name) -> list[ConversationInfo]``. ``obj_or_text`` is the parsed
JSON document, or a :class:`~inspector.transcripts._common.JsonlText` when the input is not one
JSON document (JSON Lines). A zip (an Inspect AI ``.eval`` log) is read into the document it holds
before detection (:func:`read_input`), so importers never see bytes.

Importers are plugins of the registry's ``importer`` slot (:mod:`inspector.plugins`): the built-ins
there, an installed package's through the ``context_inspector.plugins`` entry points, a caller's
through :func:`register`. Detection asks importers in registration order and takes the first that claims the input, so the
order goes from the most specific shape to the most general: the third-party layouts (and logs) have
distinctive top-level keys (``litellm`` payload lines come before ``openai-log`` and ``openai``,
which would also claim a ``messages`` list), Anthropic requests are recognised by what chat-completions lacks, and
``openai`` comes last as the catch-all for role lists. A format name given by the caller skips
detection entirely (names match case-insensitively, ``_`` and ``-`` alike).
"""

from __future__ import annotations

import warnings
from typing import Any, Protocol, runtime_checkable

from inspector.plugins import default_registry
from inspector.transcripts._common import JsonlText, decode, first_jsonl_value, parse_input
from inspector.transcripts.inspect_ai import ZIP_MAGIC, eval_zip_document
from inspector.transcripts.model import ConversationInfo, Transcript, TranscriptError


@runtime_checkable
class Importer(Protocol):
    """What a format module provides (see the module docstring)."""

    NAME: str

    def sniff(self, obj_or_text: Any, name: str) -> bool:
        """Whether the parsed document (or :class:`JsonlText`) is this format; never raises."""

    def parse(self, obj_or_text: Any, *, name: str, path: str | None = None,
              conversation: int = 0) -> Transcript:
        """Conversation ``conversation`` as a :class:`Transcript`. Raises :class:`TranscriptError`
        (naming the field or line) when the file is malformed or holds no such conversation."""

    def conversations(self, obj_or_text: Any, *, name: str) -> list[ConversationInfo]:
        """The conversations the file holds, for a chooser. Raises :class:`TranscriptError` when it is malformed."""


_registry: dict[str, Importer] = {}
"""The importers in detection order, filled from the plugin registry's ``importer`` slot on first use."""


def _ensure_builtins() -> None:
    """Fill :data:`_registry` from :func:`inspector.plugins.default_registry`: the built-ins in their
    order, then each installed package's importer (entry point ``context_inspector.plugins``) at the
    end, or ahead of the format its spec's ``meta["before"]`` names."""
    if _registry:
        return
    for spec in default_registry().specs("importer"):
        importer: Any = spec.load()
        if not isinstance(importer, Importer):
            warnings.warn(f"importer plugin {spec.name!r} lacks NAME, sniff, parse or conversations; ignored",
                          stacklevel=2)
            continue
        _place(importer, spec.meta.get("before"))


def _place(importer: Importer, before: str | None) -> None:
    items = [(k, v) for k, v in _registry.items() if k != importer.NAME]
    position = next((n for n, (k, _) in enumerate(items) if k == before), len(items))
    items.insert(position, (importer.NAME, importer))
    _registry.clear()
    _registry.update(items)


def register(importer: Importer, *, before: str | None = None) -> None:
    """Add (or replace) an importer. ``before`` puts it ahead of a named format in detection
    order, which a third-party format needs when ``openai`` would also claim its files. Raises
    :class:`TypeError` when ``importer`` lacks ``NAME``, ``sniff``, ``parse`` or ``conversations``."""
    _ensure_builtins()
    if not isinstance(importer, Importer):
        raise TypeError("an importer needs NAME, sniff, parse and conversations")
    _place(importer, before)


def list_formats() -> list[str]:
    """Registered format names, in detection order."""
    _ensure_builtins()
    return list(_registry)


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def get_importer(format: str, *, file: str | None = None) -> Importer:
    """The importer for a format name. Raises :class:`TranscriptError` (naming ``file``) when
    ``format`` is not a name or names no registered format, listing the supported ones."""
    _ensure_builtins()
    if not isinstance(format, str):
        raise TranscriptError(file, f"format must be a name, got {format!r}; supported formats: {', '.join(_registry)}")
    wanted = _key(format)
    for name, importer in _registry.items():
        if _key(name) == wanted:
            return importer
    raise TranscriptError(file, f"unknown format {format!r}; supported formats: {', '.join(_registry)}")


def detect_in(obj_or_text: Any, name: str) -> Importer:
    """The first importer whose sniff claims an already-parsed input (a sniffer that raises claims
    nothing). Raises :class:`TranscriptError` when none does: not JSON at all (where it fails), or
    a format no importer reads (listing the supported ones)."""
    _ensure_builtins()
    for importer in _registry.values():
        try:
            claimed = importer.sniff(obj_or_text, name)
        except Exception:  # a third-party sniffer must not break detection
            claimed = False
        if claimed:
            return importer
    supported = ", ".join(_registry)
    if isinstance(obj_or_text, JsonlText) and first_jsonl_value(obj_or_text) is None:
        err = obj_or_text.json_error
        where = f" at line {err.lineno} column {err.colno}" if err is not None else ""
        raise TranscriptError(name, f"not JSON or JSON Lines ({err.msg if err else 'nested too deeply'}{where}); "
                                    f"supported formats: {supported}")
    raise TranscriptError(name, f"unrecognised transcript format; supported formats: {supported}")


def read_input(data: bytes | str, name: str) -> Any:
    """What importers receive: the parsed JSON document, a :class:`JsonlText`, or, for a zip
    (an Inspect AI ``.eval`` log), the document the zip holds."""
    if isinstance(data, (bytes, bytearray, memoryview)) and bytes(data[:4]) == ZIP_MAGIC:
        return eval_zip_document(bytes(data), name)
    return parse_input(decode(data, name))


def detect_format(data: bytes | str, name: str = "<input>") -> str:
    """The name of the format of ``data`` (bytes or text); raises TranscriptError listing the
    supported formats when no importer recognises it."""
    return detect_in(read_input(data, name), name).NAME
