"""The scripted endpoint of ``vqabench serve``: an OpenAI-compatible chat-completions server on 127.0.0.1.

It answers ``POST /v1/chat/completions`` with what a handler (``body -> str | dict | list``) returns
and ``GET /v1/models`` with one model, each request in its own thread. It is for trying the
model-facing commands offline: no faults, no keys checked (any ``--llm-api-key-env``, or ``none``, works).
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "vqabench-scripted"
STOP_PATH = "/vqabench/stop"

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
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.server_address[0]!s}:{self.port}/v1"

    def detach(self) -> None:
        """Serve in a child process of its own session (no terminal, no inherited output) and return
        in the parent. The socket listens already, so a request sent the moment this returns waits in
        its backlog: no start-up race. ``POST /vqabench/stop`` (:func:`stop_server`) ends the child."""
        if os.fork():
            self.socket.close()
            return
        os.setsid()
        quiet = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(quiet, stream)
        try:
            self.serve_forever(poll_interval=0.2)
        finally:
            os._exit(0)

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
        if self.path == STOP_PATH:
            self._send(200, {"stopped": True})
            threading.Thread(target=self.server.shutdown, daemon=True).start()
            return
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


def stop_server(port: int) -> None:
    """Ask the endpoint on ``127.0.0.1:port`` to stop; a clear error when none answers there."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{STOP_PATH}", b"{}", method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1: never a proxy
    try:
        with opener.open(request, timeout=30) as reply:
            if json.load(reply).get("stopped") is not True:
                raise RuntimeError(f"port {port}: not a 'vqabench serve' endpoint")
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise RuntimeError(f"no 'vqabench serve' endpoint on 127.0.0.1:{port} ({err})") from None
