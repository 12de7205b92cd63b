"""The one builder of a chat-completions request body: what the synchronous path sends, and what a
batch file's ``body`` holds, byte for byte.

The bytes are those the OpenAI SDK's own serializer wrote when it built the body
(``json.dumps(..., ensure_ascii=False, separators=(",", ":"), allow_nan=False)``, UTF-8, its key
order: ``model``, ``messages``, ``max_tokens``, ``response_format``, ``seed``, ``temperature``, then
the settings' ``extra_body``), so reply caches, recordings and servers see what they saw before.
What is new is how: a frame's data URL (:class:`~builders.llm.messages.ImageURL`, base64 by
construction, nothing to escape) is copied as it is instead of being scanned by the JSON encoder,
and the body stays a list of chunks (the JSON between the images, each image), streamed to the
socket with a ``Content-Length``, never joined into one string and one bytes object per request (at
16 720p frames, 0.5-0.8 MB each: measured in ``benchmarks/evaluate.py``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from builders.llm.messages import ImageURL, Message

if TYPE_CHECKING:
    from builders.llm.settings import LLMSettings

__all__ = ["RequestBody", "chat_body"]

_SMALL = 4096  # JSON pieces shorter than this are merged with the next chunk


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class RequestBody:
    """A JSON body as chunks of bytes (``chunks``): ``len()`` is its size, ``bytes()`` the whole,
    ``async for`` streams it. For the SDK it is a seekable file (``read``, ``tell``, ``seek``): a body
    it can rewind, so it retries (429, 5xx, timeouts) as it does a ``bytes`` body. Not a sync
    iterable: httpx would take it for a sync stream."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self.chunks = tuple(chunks)
        self.size = sum(len(c) for c in self.chunks)
        self._position = 0

    def __len__(self) -> int:
        return self.size

    def __bytes__(self) -> bytes:
        return b"".join(self.chunks)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        """The chunks from the current position (the start, unless read), to the end."""
        skip, self._position = self._position, self.size
        for chunk in self.chunks:
            if skip >= len(chunk):
                skip -= len(chunk)
                continue
            yield chunk[skip:] if skip else chunk
            skip = 0

    def read(self, size: int = -1) -> bytes:
        whole = bytes(self)
        end = self.size if size < 0 else min(self.size, self._position + size)
        data, self._position = whole[self._position : end], end
        return data

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, position: int, whence: int = 0) -> int:
        if whence != 0 or not 0 <= position <= self.size:
            raise ValueError(f"a request body seeks from its start to 0..{self.size}, got {position}, {whence}")
        self._position = position
        return position


def chat_body(
    settings: LLMSettings, messages: Sequence[Message], response_format: Mapping[str, Any] | None = None
) -> RequestBody:
    """The body of a chat-completions request for ``messages`` under ``settings`` (module doc).
    Later keys of ``settings.extra_body`` override the fields before them; ``messages`` is always ours."""
    fields: dict[str, Any] = {"model": settings.model, "messages": messages}
    optional = {
        "max_tokens": settings.max_tokens,
        "response_format": response_format,
        "seed": settings.seed,
        "temperature": settings.temperature,
    }
    fields.update((k, v) for k, v in optional.items() if v is not None)
    fields.update(settings.extra_body or {})
    fields["messages"] = messages
    writer = _Writer()
    writer.value(fields)
    return writer.body()


class _Writer:
    """Serializes JSON as :func:`json.dumps` would, keeping each :class:`ImageURL` a chunk of its own."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._text: list[str] = []  # JSON not yet turned into a chunk

    def value(self, value: Any) -> None:
        if isinstance(value, ImageURL):
            # base64 after an ASCII header: nothing for the encoder to escape (ImageURL's construction)
            self._text.append('"')
            self._flush(value.encode("ascii"))
            self._text.append('"')
        elif isinstance(value, dict) and _holds_image(value):
            if not all(isinstance(k, str) for k in value):
                self._text.append(_dumps(value))
                return
            self._text.append("{")
            for i, (key, item) in enumerate(value.items()):
                self._text.append(("," if i else "") + _dumps(key) + ":")
                self.value(item)
            self._text.append("}")
        elif isinstance(value, list | tuple) and _holds_image(value):
            self._text.append("[")
            for i, item in enumerate(value):
                if i:
                    self._text.append(",")
                self.value(item)
            self._text.append("]")
        else:
            self._text.append(_dumps(value))

    def _flush(self, image: bytes) -> None:
        text = "".join(self._text).encode("utf-8")
        self._text = []
        if len(text) < _SMALL:
            self._chunks.append(text + image)  # one chunk, one socket write
        else:
            self._chunks += [text, image]

    def body(self) -> RequestBody:
        tail = "".join(self._text).encode("utf-8")
        return RequestBody([*self._chunks, tail] if tail else self._chunks)


def _holds_image(value: Any) -> bool:
    """Whether a JSON container holds an :class:`ImageURL` anywhere inside."""
    if isinstance(value, ImageURL):
        return True
    if isinstance(value, dict):
        return any(_holds_image(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_image(v) for v in value)
    return False
