"""The HTTP client under the SDK: one deadline for a whole HTTP attempt, and a cap on a reply's size.

httpx's timeouts bound each *wait* (connect, each read), not the request: a server that sends one
byte every 2 s never trips a 5 s read timeout, and a body that never ends is read into memory until
there is none left. :class:`BoundedAsyncClient` wraps every transport it uses (the direct one, a
``proxy=``, the ``HTTP(S)_PROXY`` ones) so that each attempt - connecting, sending, the headers and
the whole body - ends within ``deadline`` seconds, or fails as a timeout (which the SDK retries like
any other timeout), and a body longer than ``max_bytes`` fails at once with :class:`ReplyTooLarge`
(not retried: the same server would send it again) with its connection closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
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


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, request: httpx2.Request, deadline: float, seconds: float, max_bytes: int):
        self._inner, self._request = inner, request
        self._deadline, self._seconds, self._max_bytes = deadline, seconds, max_bytes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        received = 0
        chunks = self._inner.__aiter__()
        while True:
            try:
                chunk = await _by(self._deadline, chunks.__anext__())
            except StopAsyncIteration:
                return
            except asyncio.TimeoutError:
                raise httpx2.ReadTimeout(
                    f"the reply was not complete within {self._seconds:g} s ({received} bytes so far)",
                    request=self._request,
                ) from None
            received += len(chunk)
            if received > self._max_bytes:
                raise ReplyTooLarge(
                    f"the reply body grew past {_mb(self._max_bytes)} (--llm-max-reply-mb); the rest was not read"
                )
            yield chunk

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
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await response.aclose()
            raise ReplyTooLarge(
                f"the server announced a {_mb(int(declared))} reply body, over the {_mb(self.max_bytes)} cap "
                "(--llm-max-reply-mb); it was not read"
            )
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_BoundedStream(response.stream, request, deadline, self.seconds, self.max_bytes),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class BoundedAsyncClient(openai.DefaultAsyncHttpxClient):
    """The SDK's default async HTTP client (same limits and redirects), every transport bounded:
    ``deadline`` seconds per attempt, ``max_bytes`` per reply body (module doc)."""

    def __init__(self, *, deadline: float, max_bytes: int, **kwargs: Any) -> None:
        self._bounds = (deadline, max_bytes)
        self._wrapped: dict[int, _BoundedTransport] = {}
        super().__init__(**kwargs)

    def _transport_for_url(self, url: httpx2.URL) -> httpx2.AsyncBaseTransport:
        inner = super()._transport_for_url(url)
        wrapped = self._wrapped.get(id(inner))
        if wrapped is None or wrapped.inner is not inner:
            wrapped = self._wrapped[id(inner)] = _BoundedTransport(inner, *self._bounds)
        return wrapped


def _mb(size: int) -> str:
    return f"{size / 2**20:g} MB"
