"""Live: the session that is running now, written call by call and followed by the app.

One line enables it in the agent's process (litellm's custom-callback API, a ``CustomLogger``)::

    import litellm, inspector.live
    litellm.callbacks = [inspector.live.JsonlLogger("calls.jsonl")]

Every real model call litellm makes from then on (``completion`` and ``acompletion``, success or
failure) is appended to ``calls.jsonl`` as litellm's standard logging payload
(``StandardLoggingPayload``: ``messages``, ``model_parameters`` with the tools, ``response`` with
its ``usage``, ``model``, ``response_cost``, ``status`` …), one JSON object per line: the format
the ``litellm`` importer reads (:mod:`inspector.transcripts.litellm_log`). Each line is written
in one ``write`` and flushed, so a reader sees whole lines; a line still being written (no newline
yet) is left for the next read (:func:`read_complete`).

``context-inspector app --follow calls.jsonl`` opens that file and shows new calls as they arrive,
replayed under the manifest's strategy beside what was really sent.

litellm is imported only when :class:`JsonlLogger` is first used (``import inspector`` and
``import inspector.live`` never import it).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import threading
from pathlib import Path
from typing import Any

FOLLOW_SECONDS = 2.0
"""How often the app looks at a followed file for new calls."""


def _jsonable(value: Any) -> Any:
    """What ``json.dumps`` cannot write itself: pydantic objects (litellm's responses) as their
    dump, dates as ISO text, sets as lists, anything else as its text."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return dump()
        except Exception:  # noqa: BLE001 - a model that cannot dump itself is written as text
            return str(value)
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def payload_line(kwargs: dict[str, Any], response_obj: Any, status: str = "success", start_time: Any = None,
                 end_time: Any = None) -> str:
    """One call as a JSON line: litellm's ``standard_logging_object`` when litellm built one (it
    does for every completion), else the same fields read from the call's arguments and response
    (``messages``, ``model``, ``model_parameters``, ``response``, ``call_type``, ``status``, and
    ``startTime``/``endTime`` when given)."""
    payload = kwargs.get("standard_logging_object")
    if not isinstance(payload, dict):
        response = _jsonable(response_obj) if response_obj is not None else None
        params = kwargs.get("optional_params")
        payload = {"call_type": str(kwargs.get("call_type") or "completion"), "status": status,
                   "model": kwargs.get("model"), "messages": kwargs.get("messages"),
                   "model_parameters": params if isinstance(params, dict) else {}, "response": response}
        payload.update({k: v for k, v in (("startTime", start_time), ("endTime", end_time)) if v is not None})
    return json.dumps(payload, default=_jsonable, ensure_ascii=False) + "\n"


class _Writer:
    """Appends whole lines to one file from any thread (litellm logs from worker threads)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, line: str) -> None:
        with self.lock, open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()


def _logger_class() -> type:
    from litellm.integrations.custom_logger import CustomLogger

    class JsonlLogger(CustomLogger):  # type: ignore[misc] # litellm is untyped here
        """A litellm callback that appends every model call to ``path`` (JSON Lines, the standard
        logging payload). ``failures``: also write failed calls (``status: failure``; the importer
        counts and skips them)."""

        def __init__(self, path: str | os.PathLike[str], *, failures: bool = True) -> None:
            super().__init__()
            self.writer = _Writer(path)
            # public text: litellm keys a CustomLogger by its public str/bool/int attributes and adds
            # one logger per key, so two loggers writing different files must differ here
            self.path = str(self.writer.path)
            self.failures = failures

        def log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
            self.writer.write(payload_line(kwargs, response_obj, "success", start_time, end_time))

        async def async_log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any,
                                          end_time: Any) -> None:
            self.writer.write(payload_line(kwargs, response_obj, "success", start_time, end_time))

        def log_failure_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
            if self.failures:
                self.writer.write(payload_line(kwargs, response_obj, "failure", start_time, end_time))

        async def async_log_failure_event(self, kwargs: Any, response_obj: Any, start_time: Any,
                                          end_time: Any) -> None:
            if self.failures:
                self.writer.write(payload_line(kwargs, response_obj, "failure", start_time, end_time))

    return JsonlLogger


_CLASSES: dict[str, type] = {}
"""The callback class once built (one class, so ``isinstance`` holds across uses)."""


def __getattr__(name: str) -> Any:
    """``inspector.live.JsonlLogger``: the callback class, built on first use (it subclasses
    litellm's ``CustomLogger``, so this is where litellm is imported)."""
    if name == "JsonlLogger":
        if name not in _CLASSES:
            _CLASSES[name] = _logger_class()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_complete(path: str | os.PathLike[str]) -> bytes:
    """The followed file's whole lines (a last line still being written is left out); empty when
    the file does not exist yet (the agent has made no call)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return b""
    return data[:data.rfind(b"\n") + 1]


def follow_state(path: str | os.PathLike[str]) -> tuple[int, int]:
    """``(size, mtime_ns)`` of the followed file, ``(0, 0)`` while it does not exist: the app
    re-reads the file when this changes."""
    try:
        st = Path(path).stat()
    except FileNotFoundError:
        return 0, 0
    return st.st_size, st.st_mtime_ns
