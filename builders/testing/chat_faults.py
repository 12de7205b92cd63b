"""What a scripted chat reply is, the faults the test chat server can inject, and how a fault turns a
reply into the answer sent (:func:`apply_fault`); the HTTP side is :mod:`builders.testing.chat_server`."""

from __future__ import annotations

import functools
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from builders.scripted.schema_examples import invalid_for_schema

FAULT_KINDS = (
    "rate_limit",
    "server_error",
    "delay",
    "hang",
    "malformed",
    "disconnect",
    "fenced",
    "broken_json",
    "invalid",
    "truncated",
    "trickle",
    "endless",
    "bomb",
)


@dataclass(frozen=True)
class Fault:
    """One injected fault. Build them with the class methods.

    ``rate_limit``: HTTP 429 with ``Retry-After`` (seconds, may be fractional: the SDK honours it).
    ``server_error``: HTTP ``status`` (500) with an optional ``Retry-After``.
    ``delay``: answer normally after ``seconds``.
    ``hang``: never answer; hold the request until the client closes the connection (its timeout),
    at most ``seconds``. A timeout without a race: however loaded the machine, the client times out
    first, since nothing is sent before it gives up (:attr:`ChatServer.hangs_outlasted` counts the
    hangs that reached ``seconds`` instead).
    ``malformed``: HTTP 200 whose body is not valid JSON.
    ``disconnect``: close the connection without answering.
    ``fenced``: the normal content wrapped in a ```json code fence.
    ``broken_json``: the first half of the normal content, ``finish_reason="stop"`` (bad JSON).
    ``invalid``: JSON that violates the request's schema (required fields missing / wrong type).
    ``truncated``: the first half of the normal content with ``finish_reason="length"``.
    ``trickle``: HTTP 200 headers, then a chunked body of one byte every ``seconds``, never ending
    (a server that keeps a connection alive without ever answering).
    ``endless``: HTTP 200 headers, then a chunked body of ``chunk`` bytes after ``chunk`` bytes as fast
    as the client reads them, never ending (a reply that would fill any memory).

    The last two go on until the client closes the connection or the server stops.
    ``bomb``: HTTP 200, a valid chat completion whose reply text is ``chunk`` bytes, sent compressed
    with ``Content-Encoding: <encoding>`` (gzip or deflate): a small body that decodes to a huge one.
    """

    kind: str
    retry_after: float | None = None
    seconds: float = 0.0
    status: int = 500
    chunk: int = 1
    encoding: str = "gzip"

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; one of {FAULT_KINDS}")

    @classmethod
    def rate_limit(cls, retry_after: float = 0.05) -> Fault:
        return cls("rate_limit", retry_after=retry_after, status=429)

    @classmethod
    def server_error(cls, retry_after: float | None = None, status: int = 500) -> Fault:
        return cls("server_error", retry_after=retry_after, status=status)

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        return cls("delay", seconds=seconds)

    @classmethod
    def hang(cls, seconds: float = 120.0) -> Fault:
        return cls("hang", seconds=seconds)

    @classmethod
    def malformed(cls) -> Fault:
        return cls("malformed")

    @classmethod
    def disconnect(cls) -> Fault:
        return cls("disconnect")

    @classmethod
    def fenced(cls) -> Fault:
        return cls("fenced")

    @classmethod
    def broken_json(cls) -> Fault:
        return cls("broken_json")

    @classmethod
    def trickle(cls, seconds: float) -> Fault:
        return cls("trickle", seconds=seconds)

    @classmethod
    def endless(cls, chunk: int = 1 << 16) -> Fault:
        return cls("endless", chunk=chunk)

    @classmethod
    def bomb(cls, decoded: int, encoding: str = "gzip") -> Fault:
        return cls("bomb", chunk=decoded, encoding=encoding)

    @classmethod
    def invalid(cls) -> Fault:
        return cls("invalid")

    @classmethod
    def truncated(cls) -> Fault:
        return cls("truncated")


@dataclass(frozen=True)
class Reply:
    """A fully specified reply (content, finish reason, reported model, token usage). ``refusal``:
    the message's refusal text (OpenAI's safety refusal); ``no_choices``: an empty ``choices`` list;
    ``extra``: more top-level fields of the completion (a provider's own, e.g. ``prompt_feedback``)."""

    content: str | None
    finish_reason: str = "stop"
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    refusal: str | None = None
    no_choices: bool = False
    extra: dict[str, Any] | None = None

    @classmethod
    def blocked(cls, finish_reason: str = "content_filter") -> Reply:
        """A reply a safety filter stopped: no content, ``finish_reason`` ``content_filter`` (OpenAI)
        or Gemini's own (``SAFETY``, ``PROHIBITED_CONTENT``, ..., which its OpenAI-compatible endpoint
        passes through)."""
        return cls(None, finish_reason=finish_reason, completion_tokens=0)

    @classmethod
    def prompt_blocked(cls, reason: str = "SAFETY") -> Reply:
        """A request whose prompt was blocked: no choices, and the block reason as Gemini's native API
        reports it (``prompt_feedback.block_reason``)."""
        return cls(
            None, no_choices=True, completion_tokens=0, extra={"prompt_feedback": {"block_reason": reason}}
        )


# The body of a ``malformed`` fault: HTTP 200, cut off mid-JSON.
MALFORMED_BODY = b'{"id": "chatcmpl-broken", "choices": [{"index": 0, "message": '


@dataclass(frozen=True)
class Answer:
    """What the server sends for one chat request once its fault (if any) is applied.

    ``status``: the HTTP status logged (0: no answer). Exactly one way of answering: ``reply`` (a
    chat completion), ``error`` (``(message, type)`` of an OpenAI-style error body, with
    ``headers``), ``raw`` (bytes sent as they are), ``disconnect``, ``hang`` (seconds to hold the
    request without answering, until the client leaves), or ``stream`` (a never-ending chunked body:
    ``(seconds between chunks, bytes per chunk)``). ``delay``: seconds to wait first.
    """

    status: int
    reply: Reply | None = None
    error: tuple[str, str] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    disconnect: bool = False
    delay: float = 0.0
    stream: tuple[float, int] | None = None
    hang: float | None = None


def apply_fault(fault: Fault | None, reply: Reply, schema: dict[str, Any] | None) -> Answer:
    """The answer to a request whose normal reply is ``reply`` (``schema``: what the request asked
    for, used by ``invalid``), under ``fault`` (None: the reply itself)."""
    if fault is None:
        return Answer(200, reply)
    kind = fault.kind
    if kind == "rate_limit":
        return Answer(
            429,
            error=("Rate limit reached (test fault)", "rate_limit_exceeded"),
            headers={"Retry-After": f"{fault.retry_after:g}"},
        )
    if kind == "server_error":
        extra = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
        return Answer(fault.status, error=("Internal error (test fault)", "server_error"), headers=extra)
    if kind == "disconnect":
        return Answer(0, disconnect=True)
    if kind == "malformed":
        return Answer(200, raw=MALFORMED_BODY)
    if kind == "delay":
        return Answer(200, reply, delay=fault.seconds)
    if kind == "hang":
        return Answer(0, hang=fault.seconds)
    if kind == "trickle":
        return Answer(200, stream=(fault.seconds, 1))
    if kind == "endless":
        return Answer(200, stream=(0.0, fault.chunk))
    if kind == "bomb":
        return Answer(
            200, raw=bomb_body(fault.chunk, fault.encoding), headers={"Content-Encoding": fault.encoding}
        )
    if kind == "fenced":
        return Answer(200, Reply(f"```json\n{reply.content}\n```", reply.finish_reason, reply.model))
    if kind == "invalid":
        return Answer(200, Reply(json.dumps(invalid_for_schema(schema)), "stop", reply.model))
    text = reply.content or ""  # truncated, broken_json: the first half of the content
    finish = "length" if kind == "truncated" else "stop"
    return Answer(200, Reply(text[: max(1, len(text) // 2)], finish, reply.model))


@functools.lru_cache(maxsize=4)
def bomb_body(decoded: int, encoding: str) -> bytes:
    """A chat completion whose reply is ``decoded`` bytes of ``a``, compressed (gzip or zlib deflate)
    a megabyte at a time: about a thousandth of its decoded size, never held decoded."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)
    head = (
        b'{"id": "chatcmpl-bomb", "object": "chat.completion", "created": 0, "model": "bomb", "choices": '
        b'[{"index": 0, "message": {"role": "assistant", "content": "'
    )
    parts = [z.compress(head)]
    block = b"a" * (1 << 20)
    for start in range(0, decoded, len(block)):
        parts.append(z.compress(block[: decoded - start]))
    parts.append(z.compress(b'"}, "finish_reason": "stop"}]}') + z.flush())
    return b"".join(parts)
