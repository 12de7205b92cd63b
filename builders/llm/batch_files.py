"""The OpenAI batch file format: request lines written, sharded to the provider's limits, and
output lines read back.

A request line is ``{"custom_id": <reply-cache key>, "method": "POST", "url": "/v1/chat/completions",
"body": <the body>}`` where the body is, byte for byte, what the synchronous path sends: both are built
by :func:`~builders.llm.body.chat_body`. An output line is ``{"id", "custom_id", "response": {"status_code", "request_id", "body"} | null,
"error": {"code", "message"} | null}``, in any order; OpenAI, Gemini's OpenAI-compatible batch mode and
vLLM's ``run_batch`` read and write the same.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.files.jsonio import iter_jsonl, write_chunks_atomic, write_text_atomic

URL = "/v1/chat/completions"
#: OpenAI's limits for one batch input file (the defaults of ``--llm-batch-max-requests/-mb``).
MAX_REQUESTS = 50_000
MAX_MB = 200.0


@dataclass(frozen=True)
class Queued:
    """One request of a round: its custom id (the reply-cache key), where its line waits in the round's
    spool file (so a round of any size is held on disk, not in memory), and what it costs."""

    group: str
    key: str
    size: int  # bytes of its line, newline included
    cost: float | None  # estimated, at the batch price


def request_line(key: str, body: bytes) -> bytes:
    """One request line, the body embedded as the bytes the synchronous path sends."""
    return b'{"custom_id":%s,"method":"POST","url":"%s","body":%s}\n' % (
        json.dumps(key).encode(), URL.encode(), body,
    )  # fmt: skip


@dataclass(frozen=True)
class ShardFile:
    path: Path
    requests: int
    bytes: int
    sha256: str
    cost: float | None


def write_shards(
    folder: Path,
    queued: Sequence[Queued],
    lines: Iterator[bytes],
    max_requests: int = MAX_REQUESTS,
    max_bytes: int = int(MAX_MB * 2**20),
) -> list[ShardFile]:
    """Write ``queued`` (their ``lines``, in order, from the spool) as ``shard-KKK.jsonl`` files in
    ``folder`` (with ``.ids`` beside), each within ``max_requests`` lines and ``max_bytes``, each
    streamed atomically (memory: one line at a time; a kill leaves no torn shard)."""
    shards: list[ShardFile] = []
    for number, part in enumerate(_plan(queued, max_requests, max_bytes), 1):
        path = folder / f"shard-{number:03d}.jsonl"
        digest = hashlib.sha256()

        def sealed(part: Sequence[Queued] = part, digest: Any = digest) -> Iterator[bytes]:
            for _ in part:
                line = next(lines)
                digest.update(line)
                yield line

        write_chunks_atomic(path, sealed())
        write_text_atomic(path.with_suffix(".ids"), "".join(q.key + "\n" for q in part))
        costs = [q.cost for q in part]
        cost = None if None in costs else float(sum(c for c in costs if c is not None))
        shards.append(ShardFile(path, len(part), sum(q.size for q in part), digest.hexdigest(), cost))
    return shards


def _plan(queued: Sequence[Queued], max_requests: int, max_bytes: int) -> Iterator[list[Queued]]:
    """``queued`` cut into shards within ``max_requests`` and ``max_bytes`` (each line's size is known)."""
    part: list[Queued] = []
    size = 0
    for q in queued:
        if q.size > max_bytes:
            raise ValueError(f"request {q.key[:16]}… is {q.size:,} bytes, more than a batch file may hold "
                             f"({max_bytes:,}); raise --llm-batch-max-mb")  # fmt: skip
        if part and (len(part) >= max_requests or size + q.size > max_bytes):
            yield part
            part, size = [], 0
        part.append(q)
        size += q.size
    if part:
        yield part


def read_output_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, line)`` of an output file, each checked for the documented shape; anything
    else is a ValueError naming the file and line."""
    for number, line in iter_jsonl(path):
        problem = output_line_problem(line)
        if problem:
            raise ValueError(f"{path}, line {number}: not a batch output line: {problem}")
        yield number, line


def output_line_problem(line: Any) -> str | None:
    """What keeps ``line`` from being a batch output line, or None."""
    if not isinstance(line, dict):
        return f"expected a JSON object, got {type(line).__name__}"
    if not isinstance(line.get("custom_id"), str):
        return "no custom_id string"
    response, error = line.get("response"), line.get("error")
    if response is None and error is None:
        return "neither a response nor an error"
    if response is not None and (
        not isinstance(response, dict) or not isinstance(response.get("status_code"), int)
    ):
        return "response is not an object with an integer status_code"
    return None
