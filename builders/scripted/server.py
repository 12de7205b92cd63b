"""The scripted endpoint of ``vqabench serve``: an OpenAI-compatible chat-completions server on 127.0.0.1.

It answers ``POST /v1/chat/completions`` with what a handler (``body -> str | dict | list``) returns
and ``GET /v1/models`` with one model, each request in its own thread. It is for trying the
model-facing commands offline: no faults, no keys checked (any ``--llm-api-key-env``, or ``none``, works).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "vqabench-scripted"

Handler = Callable[[Mapping[str, Any]], Any]


class ScriptedServer(ThreadingHTTPServer):
    """``with ScriptedServer(handler, port=0) as server: server.serve_forever()``; ``server.url`` is the
    ``--llm-base-url`` to give."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0) -> None:
        self.handler = handler
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        super().__init__((host, port), _Requests)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def completion(self, body: Mapping[str, Any]) -> dict[str, Any]:
        reply = self.handler(body)
        content = reply if isinstance(reply, str) else json.dumps(reply)
        with self.lock:
            number = next(self.ids)
        return {
            "id": f"chatcmpl-scripted-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": MODEL,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": len(content.split()), "total_tokens": 0},
        }


class _Requests(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: ScriptedServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - no access log on stderr
        pass

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": {"message": message, "type": "invalid_request_error", "code": status}})

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.rstrip("/") != "/v1/models":
            self._error(404, f"no route {self.path}")
            return
        self._send(
            200,
            {
                "object": "list",
                "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "vqabench"}],
            },
        )

    def do_POST(self) -> None:  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._error(400, "the body must be a JSON object with 'model' and 'messages'")
            return
        try:
            answer = self.server.completion(body)
        except Exception as err:  # a request no responder knows: say so, keep serving
            self._error(400, f"vqabench serve: {type(err).__name__}: {err}")
            return
        self._send(200, answer)
