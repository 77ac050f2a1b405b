"""A small OpenAI-compatible chat-completions server for tests (stdlib only, 127.0.0.1).

Real litellm calls go to it over HTTP: nothing is mocked inside litellm. ``mode`` makes it misbehave
the way real providers do: ``ok``, ``500``, ``429``, ``malformed`` (invalid JSON), ``empty``
(empty content), ``stall`` (sleeps past the client's timeout). Every request body is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeLLM:
    def __init__(self, reply: str = "SUMMARY: the user asked things; ids kept.") -> None:
        self.reply = reply
        self.mode = "ok"
        self.stall_seconds = 5.0
        self.requests: list[dict[str, Any]] = []
        self.script: list[dict[str, Any]] = []  # scripted assistant messages, served first (e.g. tool calls)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def api_base(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FakeLLM:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(body)
                mode = fake.mode
                if mode == "stall":
                    time.sleep(fake.stall_seconds)
                if mode in ("500", "429"):
                    payload = json.dumps({"error": {"message": f"simulated {mode}", "type": "server_error"}}).encode()
                    self.send_response(int(mode))
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if mode == "malformed":
                    payload = b"{not json"
                else:
                    content = "" if mode == "empty" else fake.reply
                    message = fake.script.pop(0) if fake.script else {"role": "assistant", "content": content}
                    finish = "tool_calls" if message.get("tool_calls") else "stop"
                    payload = json.dumps({
                        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                        "model": body.get("model", "test"),
                        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                    }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
