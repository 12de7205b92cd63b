"""A real chat-completions server on 127.0.0.1 for tests and benchmarks (no mocks).

It speaks enough of the OpenAI protocol for the ``openai`` SDK to talk to it over real sockets:
``POST /v1/chat/completions`` and ``GET /v1/models``. Every request runs in its own thread, so
dozens of slow requests overlap as they would on a real endpoint. In tests, use the
``chat_server`` fixture (``tests/conftest.py``) or ``with ChatServer(...) as server:``::

    settings = LLMSettings(model="m", base_url=server.url, api_key_env=None, progress=False)
    server.handler = lambda body: {"answer": "Happiness"}            # scripted reply
    server.queue_faults(Fault.rate_limit(0.05), Fault.server_error(retry_after=0.01))  # next two
    server.fault_rate, server.fault_choices = 0.1, [Fault.server_error(retry_after=0.01)]
    server.chat_requests   # what the client sent: RecordedRequest(body, headers without the key, ...)
    server.max_in_flight   # most chat requests it was serving at once
    server.videos          # per chat request, the decoded frames of each video_url part (an
                           # undecodable one is answered 400, as a video server would)
    server.reset()         # forget the log, counters and queued faults between phases

What a chat request gets, in order of precedence:

1. the next queued fault (:meth:`ChatServer.queue_faults`), else a random one
   (``fault_rate`` with a seeded RNG over ``fault_choices``);
2. the reply of ``handler(body)`` (``body``: the request JSON as a dict; readers in
   :mod:`builders.scripted.chat_requests`: ``last_user_text``, ``response_schema``, ``image_count``,
   ...): a ``str`` (the message content), a ``dict``/``list`` (sent as JSON content), a
   :class:`~builders.testing.chat_faults.Reply` (content, finish reason, model, token counts), a
   :class:`~builders.testing.chat_faults.Fault`, or ``None`` for the default;
3. the default: a JSON object valid against the request's ``response_format`` schema
   (:func:`builders.scripted.schema_examples.example_for_schema`; a bound request's ``item_id`` copied
   from its ``Item id:`` line), or :data:`DEFAULT_TEXT` when no schema was asked for.

Faults that change the content (``fenced``, ``broken_json``, ``invalid``, ``truncated``,
``delay``) apply to the reply of steps 2-3 (:func:`builders.testing.chat_faults.apply_fault`). ``latency`` seconds are slept in every chat request
before answering. Keep tests fast: give 429/500 faults a small ``retry_after`` (the SDK honours
it; without one it backs off 0.5 s, doubling).
"""

from __future__ import annotations

import itertools
import json
import random
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from builders.scripted.chat_requests import count_prompt_tokens, response_schema, video_frames, with_item_id
from builders.scripted.schema_examples import example_for_schema, schema_keywords
from builders.testing.chat_faults import Fault, Reply, apply_fault

DEFAULT_TEXT = "This is a reply from the test chat server."
# What Gemini's OpenAI-compatible endpoint refuses inside a response schema.
GEMINI_REJECTED_KEYS = frozenset(
    {"$schema", "additionalProperties", "const", "propertyNames", "$ref", "$defs"}
)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it. The Authorization value is never kept, only whether it
    was there (``authorized``) and whether it matched the server's ``api_key`` (``key_ok``)."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]
    authorized: bool
    key_ok: bool
    time: float
    status: int = 0
    fault: str | None = None


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[RecordedRequest] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    hangs_outlasted: int = 0
    errors: list[str] = field(default_factory=list)
    videos: list[list[list[Any]]] = field(default_factory=list)  # per chat request: each video's frames


class ChatServer:
    """A threaded chat-completions server on ``127.0.0.1`` (random port); see the module doc.

    ``model``: the model id reported in replies (None: echo the requested one). ``api_key``: when
    set, requests must carry ``Authorization: Bearer <api_key>`` or get a 401 (whose message
    echoes the key sent, as some providers do, to test that clients scrub it). ``gemini=True``:
    answer 400, as Gemini does, to a response schema containing any of
    :data:`GEMINI_REJECTED_KEYS`.
    """

    handler_class: type[_Handler]  # the request handler (set below the class; a subclass may extend it)

    def __init__(
        self,
        latency: float = 0.0,
        model: str | None = "test-model-2026-01",
        api_key: str | None = None,
        seed: int = 0,
        gemini: bool = False,
    ) -> None:
        self.latency = latency
        self.gemini = gemini
        self.model = model
        self.api_key = api_key
        self.handler: Callable[[dict[str, Any]], Any] | None = None
        self.fault_rate = 0.0
        self.fault_choices: list[Fault] = [Fault.rate_limit(), Fault.server_error(retry_after=0.05)]
        self._rng = random.Random(seed)
        self._queue: deque[Fault] = deque()
        self._state = _State()
        self._idle = threading.Condition(self._state.lock)
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()  # ends the never-ending bodies of stream faults

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> ChatServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        server = self

        class Handler(self.handler_class):  # type: ignore[name-defined]
            chat = server

        httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="chat-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def proxy_url(self) -> str:
        """This server as an HTTP proxy (``LLMClient(..., proxy=server.proxy_url)``): it answers a
        plain-HTTP request for any host.

        Recorded replies are keyed by the settings' base URL, and a test server's port changes every
        run: recording with a fixed, never-resolving URL (``http://<name>.invalid/v1``) reached through
        this proxy gives keys that a later offline replay with the same settings computes again.
        """
        return f"http://127.0.0.1:{self.port}"

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the chat server is not running; call start() or use it as a context manager")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The base URL to give a client (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting and inspection -----------------------------------------------------------

    def queue_faults(self, *faults: Fault | Iterable[Fault]) -> None:
        """Faults for the next chat requests, one each, in arrival order."""
        with self._state.lock:
            for item in faults:
                self._queue.extend([item] if isinstance(item, Fault) else item)

    def reset(self) -> None:
        """Forget logged requests, counters, errors and queued faults (the handler stays)."""
        with self._state.lock:
            self._state.requests.clear()
            self._state.errors.clear()
            self._state.videos.clear()
            self._state.max_in_flight = self._state.in_flight
            self._state.hangs_outlasted = 0
            self._queue.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far (a copy), in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def videos(self) -> list[list[list[Any]]]:
        """Per well-formed chat request, in arrival order: the decoded RGB frames of each of its
        ``video_url`` parts (a request whose video does not decode is answered 400 instead)."""
        with self._state.lock:
            return list(self._state.videos)

    @property
    def max_in_flight(self) -> int:
        return self._state.max_in_flight

    @property
    def hangs_outlasted(self) -> int:
        """``hang`` faults that reached their limit with the client still connected (its timeout did
        not fire); 0 when every hang ended with the client leaving."""
        return self._state.hangs_outlasted

    def wait_idle(self, timeout: float = 60.0) -> None:
        """Block until no chat request is being served (e.g. a killed client's requests in flight
        have been answered and logged): an event to wait on, not a guess at how long they take."""
        with self._idle:
            if not self._idle.wait_for(lambda: self._state.in_flight == 0, timeout):
                raise TimeoutError(
                    f"{self._state.in_flight} chat request(s) still in flight after {timeout} s"
                )

    @property
    def errors(self) -> list[str]:
        """Exceptions raised by ``handler`` (each answered with HTTP 500)."""
        with self._state.lock:
            return list(self._state.errors)

    # -- internals --------------------------------------------------------------------------

    def _next_fault(self) -> Fault | None:
        with self._state.lock:
            if self._queue:
                return self._queue.popleft()
            if self.fault_rate and self._rng.random() < self.fault_rate:
                return self._rng.choice(self.fault_choices)
        return None

    def _enter(self) -> None:
        with self._state.lock:
            self._state.in_flight += 1
            self._state.max_in_flight = max(self._state.max_in_flight, self._state.in_flight)

    def _leave(self) -> None:
        with self._state.lock:
            self._state.in_flight -= 1
            self._idle.notify_all()

    def _record(self, request: RecordedRequest) -> None:
        with self._state.lock:
            self._state.requests.append(request)

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content = reply.content
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reply.refusal is not None:
            message["refusal"] = reply.refusal
        choice = {"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}
        return {
            **(reply.extra or {}),
            "id": f"chatcmpl-test-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or self.model or body.get("model", "unknown"),
            "choices": [] if reply.no_choices else [choice],
            "usage": {
                "prompt_tokens": reply.prompt_tokens
                if reply.prompt_tokens is not None
                else count_prompt_tokens(body),
                "completion_tokens": (
                    reply.completion_tokens
                    if reply.completion_tokens is not None
                    else len((content or "").split())
                ),
                "total_tokens": 0,
            },
        }

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """What a chat request gets, as (HTTP status, JSON body), without the transport faults: the
        Batch API double's answer to one request line (:mod:`builders.testing.batch_server`)."""
        try:
            fault, reply = self._reply_for(body, self._next_fault())
        except Exception as err:
            return 500, {
                "error": {"message": f"test handler failed: {err}", "type": "server_error", "code": 500}
            }
        answer = apply_fault(fault, reply, response_schema(body))
        if answer.error is not None:
            message, kind = answer.error
            return answer.status, {"error": {"message": message, "type": kind, "code": answer.status}}
        if answer.reply is None:
            return 500, {"error": {"message": "no reply", "type": "server_error", "code": 500}}
        return answer.status, self._completion(body, answer.reply)

    def _reply_for(self, body: dict[str, Any], fault: Fault | None) -> tuple[Fault | None, Reply]:
        """The scripted/default reply, and a fault the handler itself may have asked for."""
        scripted = self.handler(body) if self.handler is not None else None
        if isinstance(scripted, Fault):
            fault, scripted = fault or scripted, None
        if scripted is None:
            schema = response_schema(body)
            scripted = with_item_id(body, example_for_schema(schema)) if schema is not None else DEFAULT_TEXT
        if isinstance(scripted, Reply):
            return fault, scripted
        if isinstance(scripted, str):
            return fault, Reply(scripted)
        return fault, Reply(json.dumps(scripted))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256  # many clients connect at once; a small backlog drops SYNs (1 s stalls)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints
    # Headers and body go out in two writes; with Nagle on, the body waits for the client's delayed
    # ACK (~40 ms per reply on Linux), which would swamp the latency the tests script.
    disable_nagle_algorithm = True
    chat: ChatServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr access logs
        pass

    def _headers_and_auth(self) -> tuple[dict[str, str], bool, bool]:
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() != "authorization"}
        auth = self.headers.get("Authorization")
        expected = self.chat.api_key
        key_ok = expected is None or auth == f"Bearer {expected}"
        return headers, auth is not None, key_ok

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout); nothing to answer

    def _stream(self, seconds: float, size: int) -> None:
        """HTTP 200 and a chunked JSON-looking body that never ends (``trickle``/``endless`` faults):
        ``size`` bytes every ``seconds``, until the client hangs up or the server stops."""
        chunk = b"%x\r\n%s\r\n" % (size, b" " * size)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"1\r\n{\r\n")
            while not self.chat._stopping.is_set():
                self.wfile.write(chunk)
                self.wfile.flush()
                if seconds:
                    self.chat._stopping.wait(seconds)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client gave up, as it should
        self.close_connection = True

    def _wait_for_client_to_leave(self, limit: float) -> bool:
        """Hold the request, sending nothing, until the client closes its end (True) or ``limit``
        seconds pass (False). A closed peer makes the socket readable with nothing left to read."""
        deadline = time.monotonic() + limit
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], min(left, 1.0))
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):  # b"": the client closed
                        return True
                except OSError:  # reset by the client
                    return True
                time.sleep(0.01)  # a pipelined request: not ours to read; keep holding
        return False

    def _error(self, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps({"error": {"message": message, "type": kind, "code": status}}).encode()
        self._send(status, payload, headers)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        headers, authorized, key_ok = self._headers_and_auth()
        status = 200 if self.path.rstrip("/") == "/v1/models" else 404
        self.chat._record(
            RecordedRequest("GET", self.path, None, headers, authorized, key_ok, time.time(), status)
        )
        if status == 404:
            self._error(404, f"no route {self.path}", "not_found")
            return
        model = self.chat.model or "test-model"
        data = {
            "object": "list",
            "data": [{"id": model, "object": "model", "created": 0, "owned_by": "test"}],
        }
        self._send(200, json.dumps(data).encode())

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        headers, authorized, key_ok = self._headers_and_auth()
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = None
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.chat._record(
                RecordedRequest("POST", self.path, body, headers, authorized, key_ok, time.time(), 404)
            )
            self._error(404, f"no route {self.path}", "not_found")
            return
        self.chat._enter()
        try:
            self._chat(body, headers, authorized, key_ok)
        finally:
            self.chat._leave()

    def _chat(self, body: Any, headers: dict[str, str], authorized: bool, key_ok: bool) -> None:
        chat = self.chat

        def record(status: int, fault: str | None = None) -> None:
            chat._record(
                RecordedRequest(
                    "POST", self.path, body, headers, authorized, key_ok, time.time(), status, fault
                )
            )

        if not key_ok:
            record(401)
            sent = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            self._error(401, f"Incorrect API key provided: {sent}", "invalid_request_error")
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or "model" not in body:
            record(400)
            self._error(
                400, "the body must be a JSON object with 'model' and 'messages'", "invalid_request_error"
            )
            return
        try:  # what a video server does first: a video_url that does not decode is a client error
            decoded = video_frames(body)
        except ValueError as err:
            record(400, "bad-video")
            self._error(400, str(err), "invalid_request_error")
            return
        with chat._state.lock:
            chat._state.videos.append(decoded)
        rejected = schema_keywords(response_schema(body)) & GEMINI_REJECTED_KEYS if chat.gemini else set()
        if rejected:
            record(400, "gemini-schema")
            self._error(400, f"Invalid JSON payload received. Unknown name {sorted(rejected)[0]!r} in "
                        "response_format.json_schema.schema", "invalid_request_error")  # fmt: skip
            return
        if chat.latency:
            time.sleep(chat.latency)
        fault = chat._next_fault()
        try:
            fault, reply = chat._reply_for(body, fault)
        except Exception as err:  # a broken scripted handler: answer 500 and keep it for the test to see
            with chat._state.lock:
                chat._state.errors.append(f"{type(err).__name__}: {err}")
            record(500, "handler-error")
            self._error(500, f"test handler failed: {type(err).__name__}: {err}", "server_error")
            return
        answer = apply_fault(fault, reply, response_schema(body))
        if answer.delay:
            time.sleep(answer.delay)
        if answer.hang is not None:
            left = self._wait_for_client_to_leave(answer.hang)
            if not left:
                with chat._state.lock:
                    chat._state.hangs_outlasted += 1
            record(0, "hang")
            self.close_connection = True
            return
        record(answer.status, fault.kind if fault else None)
        if answer.error is not None:
            self._error(answer.status, *answer.error, answer.headers)
        elif answer.disconnect:
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
        elif answer.stream is not None:
            self._stream(*answer.stream)
        elif answer.raw is not None:
            self._send(answer.status, answer.raw, answer.headers)
        elif answer.reply is not None:
            self._send(answer.status, json.dumps(chat._completion(body, answer.reply)).encode())
        else:  # apply_fault always gives one of the above
            self._error(500, "test server: the fault left no reply, error or raw body", "server_error")


ChatServer.handler_class = _Handler
