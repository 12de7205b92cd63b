"""A real Batch API on 127.0.0.1: the chat test server plus OpenAI's Files and Batches endpoints.

``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files/{id}/content``;
``POST /v1/batches``, ``GET /v1/batches`` (list, newest first), ``GET /v1/batches/{id}``,
``POST /v1/batches/{id}/cancel``. Each request line is answered through the chat server's scripted
responders (``handler``, queued faults; :meth:`ChatServer.answer`), so a batch answers what a
synchronous call would. The real ``openai`` SDK drives it.

A batch moves ``validating -> in_progress -> finalizing -> completed`` one state per retrieve (the
client's polls drive it; no clock). ``outcome`` ends the next batches otherwise: ``expired``,
``failed`` or ``cancelled`` after answering only ``partial`` lines. Output lines come in reverse
order (providers promise no order); a line whose answer is not 200 goes to the error file.

Kill points for tests: name a stage in ``hold`` (``upload``, ``create``, ``poll``, ``content``) and
the server, on reaching it, sets ``reached[stage]`` and holds the request until the client goes
away (a SIGKILL) or :meth:`stop`. ``create`` holds *after* the batch exists, as a lost reply would.
"""

from __future__ import annotations

import email.parser
import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from builders.testing.chat_server import ChatServer, _Handler

STAGES = ("upload", "create", "poll", "content")


@dataclass
class BatchRecord:
    id: str
    input_file_id: str
    metadata: dict[str, Any]
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(default_factory=lambda: {"total": 0, "completed": 0, "failed": 0})
    outcome: str = "completed"
    partial: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
            "input_file_id": self.input_file_id, "completion_window": "24h", "status": self.status,
            "output_file_id": self.output_file_id, "error_file_id": self.error_file_id, "created_at": 0,
            "request_counts": self.counts, "metadata": self.metadata,
        }  # fmt: skip


class BatchServer(ChatServer):
    """:class:`ChatServer` with the Files and Batches endpoints (module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, BatchRecord] = {}
        self.outcome = "completed"
        self.partial: int | None = None
        self.extra_lines: list[dict[str, Any]] = []  # appended to the next batch's output (unknown ids...)
        self.hold: set[str] = set()
        self.reached = {stage: threading.Event() for stage in STAGES}
        #: ``content -> (body, headers)`` for file downloads (a gzip bomb as an output file); None: as kept
        self.encode_content: Callable[[bytes], tuple[bytes, dict[str, str]]] | None = None
        self.no_batches = False  # answer 404 on /v1/batches and /v1/files, as a provider without them
        self._file_ids = itertools.count(1)
        self._batch_ids = itertools.count(1)
        self._lock = threading.RLock()

    def stop(self) -> None:
        super().stop()

    def add_file(self, content: bytes) -> str:
        with self._lock:
            file_id = f"file-{next(self._file_ids)}"
            self.files[file_id] = content
        return file_id

    def create(self, input_file_id: str, metadata: dict[str, Any]) -> BatchRecord:
        with self._lock:
            record = BatchRecord(f"batch_{next(self._batch_ids)}", input_file_id, metadata or {},
                                 outcome=self.outcome, partial=self.partial)  # fmt: skip
            record.counts["total"] = len(self.files[input_file_id].splitlines())
            self.batches[record.id] = record
        return record

    def advance(self, record: BatchRecord) -> None:
        """One state further (a retrieve); answering the lines on the way to finalizing."""
        if record.status == "validating":
            record.status = "in_progress"
        elif record.status == "in_progress":
            record.status = "finalizing"
            self._run(record)
        elif record.status == "finalizing":
            record.status = record.outcome

    def _run(self, record: BatchRecord) -> None:
        lines = [json.loads(x) for x in self.files[record.input_file_id].splitlines() if x.strip()]
        if record.partial is not None:
            lines = lines[: record.partial]
        out: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for n, line in enumerate(lines):
            status, body = self.answer(line["body"])
            entry = {"id": f"batch_req_{n}", "custom_id": line["custom_id"],
                     "response": {"status_code": status, "request_id": f"req_{n}", "body": body}, "error": None}  # fmt: skip
            (out if status == 200 else errors).append(entry)
        out.extend(self.extra_lines)
        self.extra_lines = []
        record.counts["completed"], record.counts["failed"] = len(out), len(errors)
        for entries, attr in ((out, "output_file_id"), (errors, "error_file_id")):
            if entries:
                text = "".join(json.dumps(e) + "\n" for e in reversed(entries))  # out of order
                setattr(record, attr, self.add_file(text.encode()))


class _BatchHandler(_Handler):
    chat: BatchServer

    def _held(self, stage: str) -> None:
        if stage in self.chat.hold:
            self.chat.reached[stage].set()
            self._wait_for_client_to_leave(600.0)
            self.close_connection = True
            raise _Gone

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode())

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?")[0].rstrip("/")
        server = self.chat
        if not path.startswith(("/v1/batches", "/v1/files")):
            return super().do_GET()
        self._record_api("GET", path)
        if server.no_batches:
            return self._error(404, f"no route {path}", "not_found")
        try:
            if path == "/v1/batches":
                data = [b.to_json() for b in reversed(list(server.batches.values()))]
                return self._json(200, {"object": "list", "data": data, "has_more": False,
                                        "first_id": None, "last_id": None})  # fmt: skip
            if path.startswith("/v1/batches/"):
                record = server.batches.get(path.rsplit("/", 1)[1])
                if record is None:
                    return self._error(404, "no such batch", "not_found")
                self._held("poll")
                with server._lock:
                    server.advance(record)
                return self._json(200, record.to_json())
            if path.startswith("/v1/files/") and path.endswith("/content"):
                content = server.files.get(path.split("/")[3])
                if content is None:
                    return self._error(404, "no such file", "not_found")
                self._held("content")
                headers = {"Content-Type": "application/jsonl"}
                if server.encode_content is not None:
                    content, more = server.encode_content(content)
                    headers.update(more)
                return self._send(200, content, headers)
        except _Gone:
            return
        self._error(404, f"no route {path}", "not_found")

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?")[0].rstrip("/")
        server = self.chat
        if not path.startswith(("/v1/batches", "/v1/files")):
            return super().do_POST()
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._record_api("POST", path)
        if server.no_batches:
            return self._error(404, f"no route {path}", "not_found")
        try:
            if path == "/v1/files":
                message = email.parser.BytesParser().parsebytes(
                    b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + raw
                )
                payload: list[Any] = message.get_payload()  # type: ignore[assignment]  # multipart: its parts
                parts = {part.get_param("name", header="content-disposition"): part for part in payload}
                if parts["purpose"].get_payload(decode=True) != b"batch":
                    return self._error(400, "purpose must be batch", "invalid_request_error")
                self._held("upload")
                content = parts["file"].get_payload(decode=True)
                file_id = server.add_file(content)
                return self._json(200, {"id": file_id, "object": "file", "bytes": len(content), "created_at": 0,
                                        "filename": parts["file"].get_filename(), "purpose": "batch",
                                        "status": "processed"})  # fmt: skip
            body = json.loads(raw or b"{}")
            if path == "/v1/batches":
                if (
                    body.get("input_file_id") not in server.files
                    or body.get("endpoint") != "/v1/chat/completions"
                ):
                    return self._error(400, "unknown input_file_id or endpoint", "invalid_request_error")
                record = server.create(body["input_file_id"], body.get("metadata") or {})
                self._held("create")
                return self._json(200, record.to_json())
            if path.startswith("/v1/batches/") and path.endswith("/cancel"):
                cancelled = server.batches.get(path.split("/")[3])
                if cancelled is None:
                    return self._error(404, "no such batch", "not_found")
                cancelled.status = "cancelled"
                return self._json(200, cancelled.to_json())
        except _Gone:
            return
        self._error(404, f"no route {path}", "not_found")

    def _record_api(self, method: str, path: str) -> None:
        from builders.testing.chat_server import RecordedRequest

        headers, authorized, key_ok = self._headers_and_auth()
        self.chat._record(RecordedRequest(method, path, None, headers, authorized, key_ok, time.time(), 200))


class _Gone(Exception):
    """The client went away while a stage was held."""


BatchServer.handler_class = _BatchHandler
