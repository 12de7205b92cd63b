"""The HTTP client under the SDK: one deadline for a whole HTTP attempt, and a cap on a reply's size.

httpx's timeouts bound each *wait* (connect, each read), not the request: a server that sends one
byte every 2 s never trips a 5 s read timeout, and a body that never ends is read into memory until
there is none left. :class:`BoundedAsyncClient` wraps every transport it uses (the direct one, a
``proxy=``, the ``HTTP(S)_PROXY`` ones) so that each attempt - connecting, sending, the headers and
the whole body - ends within ``deadline`` seconds, or fails as a timeout (which the SDK retries like
any other timeout), and a body longer than ``max_bytes`` fails at once with :class:`ReplyTooLarge`
(not retried: the same server would send it again) with its connection closed.

The cap counts what arrives *decoded*: a 1 MB gzip body can inflate to 1 GB. So the body's
``Content-Encoding`` (gzip or deflate, the two the client accepts) is undone here, a bounded slice at a
time (:class:`_Inflater`), and the SDK gets the decoded bytes with no encoding left to undo; any other
encoding is refused.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any, TypeVar

import httpx2
import openai


class ReplyTooLarge(Exception):
    """A reply body grew past the cap (``--llm-max-reply-mb``); nothing more of it was read."""


T = TypeVar("T")


async def _by(deadline: float, awaitable: Awaitable[T]) -> T:
    """``awaitable``, cancelled at the loop time ``deadline`` (asyncio.TimeoutError). Not
    ``asyncio.timeout_at``: that is Python 3.11+, and the package supports 3.10."""
    return await asyncio.wait_for(awaitable, max(deadline - asyncio.get_running_loop().time(), 0.0))


SLICE = 1 << 16  # the most bytes one step of inflating produces, whatever one compressed chunk holds


class _Inflater:
    """Undoes a gzip or deflate ``Content-Encoding`` (deflate: zlib-wrapped or raw, as servers differ),
    never more than :data:`SLICE` bytes per step, so a bomb is refused at the cap, not decoded first."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)
        self._started = False

    def slices(self, data: bytes) -> Iterator[bytes]:
        zlib_header = len(data) > 1 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
        if not self._started and self.encoding == "deflate" and not zlib_header:
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate: no zlib header
        self._started = True
        while True:  # a full slice may leave output pending: ask again until a short one
            try:
                piece = self._z.decompress(data, SLICE)
            except zlib.error as err:
                raise httpx2.DecodingError(f"the {self.encoding} reply body does not decode: {err}") from None
            data = self._z.unconsumed_tail
            if piece:
                yield piece
            if not data and len(piece) < SLICE:
                return


def _encoding(headers: httpx2.Headers) -> str | None:
    """The body's one content encoding (None: identity); anything else this client does not accept."""
    values = [v.strip().lower() for v in headers.get_list("content-encoding", split_commas=True)]
    values = [v for v in values if v and v != "identity"]
    if not values:
        return None
    if len(values) > 1 or values[0] not in ("gzip", "x-gzip", "deflate"):
        raise httpx2.DecodingError(
            f"the reply body is encoded {', '.join(values)}; only gzip or deflate (once) is accepted"
        )
    return "gzip" if values[0] == "x-gzip" else values[0]


class _Cap:
    """Counts a body's decoded bytes (inflating it first, a slice at a time, when it is encoded) and
    refuses it with :class:`ReplyTooLarge` once they pass ``max_bytes``: the one cap both clients use."""

    def __init__(self, max_bytes: int, encoding: str | None) -> None:
        self.max_bytes, self.received = max_bytes, 0
        self._inflater = _Inflater(encoding) if encoding else None

    def pieces(self, chunk: bytes) -> Iterator[bytes]:
        for piece in self._inflater.slices(chunk) if self._inflater else (chunk,):
            self.received += len(piece)
            if self.received > self.max_bytes:
                decoded = f" decoded ({self._inflater.encoding})" if self._inflater else ""
                raise ReplyTooLarge(
                    f"the reply body{decoded} grew past {_mb(self.max_bytes)} (--llm-max-reply-mb); "
                    "the rest was not read"
                )
            yield piece


def _checked_headers(response: httpx2.Response, max_bytes: int) -> tuple[httpx2.Headers, str | None]:
    """The headers the SDK gets (no encoding left to undo) and the body's encoding; a ReplyTooLarge for a
    declared length over the cap, a DecodingError for an encoding this client does not accept."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise ReplyTooLarge(
            f"the server announced a {_mb(int(declared))} reply body, over the {_mb(max_bytes)} cap "
            "(--llm-max-reply-mb); it was not read"
        )
    encoding = _encoding(response.headers)
    headers = response.headers.copy()
    if encoding is not None:  # decoded here, under the cap: nothing left for the SDK to undo
        del headers["content-encoding"]
        headers.pop("content-length", None)
    return headers, encoding


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(
        self, inner: Any, request: httpx2.Request, deadline: float, seconds: float, max_bytes: int,
        encoding: str | None,
    ) -> None:  # fmt: skip
        self._inner, self._request = inner, request
        self._deadline, self._seconds = deadline, seconds
        self._cap = _Cap(max_bytes, encoding)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._inner.__aiter__()
        while True:
            try:
                chunk = await _by(self._deadline, chunks.__anext__())
            except StopAsyncIteration:
                return
            except asyncio.TimeoutError:
                raise httpx2.ReadTimeout(
                    f"the reply was not complete within {self._seconds:g} s ({self._cap.received} bytes so far)",
                    request=self._request,
                ) from None
            for piece in self._cap.pieces(chunk):
                yield piece

    async def aclose(self) -> None:
        await self._inner.aclose()


class _BoundedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, seconds: float, max_bytes: int) -> None:
        self.inner, self.seconds, self.max_bytes = inner, seconds, max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = asyncio.get_running_loop().time() + self.seconds
        try:
            response = await _by(deadline, self.inner.handle_async_request(request))
        except asyncio.TimeoutError:
            raise httpx2.ReadTimeout(f"no reply headers within {self.seconds:g} s", request=request) from None
        try:
            headers, encoding = _checked_headers(response, self.max_bytes)
        except (ReplyTooLarge, httpx2.DecodingError):
            await response.aclose()
            raise
        return httpx2.Response(
            status_code=response.status_code,
            headers=headers,
            stream=_BoundedStream(response.stream, request, deadline, self.seconds, self.max_bytes, encoding),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _BoundedSyncStream(httpx2.SyncByteStream):
    """The synchronous body (the Batch API's file downloads): the same cap; the deadline is checked as
    each chunk arrives (a blocking read cannot be cancelled; httpx's read timeout bounds each wait)."""

    def __init__(self, inner: Any, request: httpx2.Request, deadline: float, seconds: float, max_bytes: int,
                 encoding: str | None) -> None:  # fmt: skip
        self._inner, self._request = inner, request
        self._deadline, self._seconds = deadline, seconds
        self._cap = _Cap(max_bytes, encoding)

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if time.monotonic() > self._deadline:
                raise httpx2.ReadTimeout(
                    f"the reply was not complete within {self._seconds:g} s ({self._cap.received} bytes so far)",
                    request=self._request,
                )
            yield from self._cap.pieces(chunk)

    def close(self) -> None:
        self._inner.close()


class _BoundedSyncTransport(httpx2.BaseTransport):
    def __init__(self, inner: httpx2.BaseTransport, seconds: float, max_bytes: int) -> None:
        self.inner, self.seconds, self.max_bytes = inner, seconds, max_bytes

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = time.monotonic() + self.seconds
        response = self.inner.handle_request(request)
        try:
            headers, encoding = _checked_headers(response, self.max_bytes)
        except (ReplyTooLarge, httpx2.DecodingError):
            response.close()
            raise
        return httpx2.Response(
            status_code=response.status_code,
            headers=headers,
            stream=_BoundedSyncStream(
                response.stream, request, deadline, self.seconds, self.max_bytes, encoding
            ),
            extensions=response.extensions,
            request=request,
        )

    def close(self) -> None:
        self.inner.close()


class _Bounded:
    """Wraps each transport of an SDK HTTP client (the direct one, a ``proxy=``, the ``HTTP(S)_PROXY``
    ones) in :attr:`_bounded`: ``deadline`` seconds per attempt, ``max_bytes`` per reply body."""

    _bounded: Any

    def __init__(self, *, deadline: float, max_bytes: int, **kwargs: Any) -> None:
        self._bounds = (deadline, max_bytes)
        self._wrapped: dict[int, Any] = {}
        super().__init__(**kwargs)

    def _transport_for_url(self, url: httpx2.URL) -> Any:
        inner = super()._transport_for_url(url)  # type: ignore[misc]
        wrapped = self._wrapped.get(id(inner))
        if wrapped is None or wrapped.inner is not inner:
            wrapped = self._wrapped[id(inner)] = self._bounded(inner, *self._bounds)
        return wrapped


class BoundedAsyncClient(_Bounded, openai.DefaultAsyncHttpxClient):
    """The SDK's default async HTTP client (same limits and redirects), every transport bounded (module doc)."""

    _bounded = _BoundedTransport


class BoundedSyncClient(_Bounded, openai.DefaultHttpxClient):
    """The same for the synchronous SDK client (the Batch API's uploads, polls and file downloads)."""

    _bounded = _BoundedSyncTransport


def _mb(size: int) -> str:
    return f"{size / 2**20:g} MB"
