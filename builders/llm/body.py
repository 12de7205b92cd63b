"""The one builder of a chat-completions request body: what the synchronous path sends, and what a
batch file's ``body`` holds, byte for byte.

The bytes are those the OpenAI SDK's own serializer wrote when it built the body
(``json.dumps(..., ensure_ascii=False, separators=(",", ":"), allow_nan=False)``, UTF-8, its key
order: ``model``, ``messages``, ``max_tokens``, ``response_format``, ``seed``, ``temperature``, then
the settings' ``extra_body``), so reply caches, recordings and servers see what they saw before.
What is new is how: a frame's data URL (:class:`~builders.llm.messages.ImageURL`, base64 by
construction, nothing to escape) is copied as it is instead of being scanned by the JSON encoder
(16 720p frames are 0.5-0.8 MB of base64 a request), and the SDK's walk of every content part
against its typed dicts is skipped. The body is a list of chunks (:class:`RequestBody`): the HTTP
request joins them once (streamed in chunks, each would be a socket write and an event-loop turn:
``benchmarks/evaluate.py`` measured that slower), a batch file writes them one by one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from builders.llm.messages import ImageURL, Message

if TYPE_CHECKING:
    from builders.llm.settings import LLMSettings

__all__ = ["RequestBody", "chat_body"]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class RequestBody:
    """A JSON body as chunks of bytes (``chunks``: the JSON between the images, each image): ``len()`` is
    its size, ``bytes()`` the whole (what an HTTP request sends: one buffer, one socket write), and a
    file writes it chunk by chunk (``write_to``: a batch file line, never joined)."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self.chunks = tuple(chunks)
        self.size = sum(len(c) for c in self.chunks)

    def __len__(self) -> int:
        return self.size

    def __bytes__(self) -> bytes:
        return b"".join(self.chunks)

    def write_to(self, file: BinaryIO) -> int:
        """Write the body to ``file``; returns its size."""
        for chunk in self.chunks:
            file.write(chunk)
        return self.size


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
    chunks: list[bytes] = []
    text: list[str] = ["{"]  # JSON not yet in a chunk
    for i, (key, value) in enumerate(fields.items()):
        text.append(("," if i else "") + _dumps(key) + ":")
        if key != "messages" or not isinstance(value, list | tuple):
            text.append(_dumps(value))
            continue
        text.append("[")
        for j, message in enumerate(value):
            text.append("," if j else "")
            content = message.get("content") if type(message) is dict else None
            if not isinstance(content, list) or not all(isinstance(k, str) for k in message):
                text.append(_dumps(message))
                continue
            text.append("{")
            for k, (name, item) in enumerate(message.items()):
                text.append(("," if k else "") + _dumps(name) + ":")
                if item is not content:
                    text.append(_dumps(item))
                    continue
                text.append("[")
                for n, part in enumerate(content):
                    text.append("," if n else "")
                    url = _image_url(part)
                    if url is None:
                        text.append(_dumps(part))
                        continue
                    # base64 after an ASCII header (checked when the ImageURL was made): nothing to escape
                    text.append(_IMAGE_PART)
                    chunks.append("".join(text).encode("utf-8") + url.encode("ascii"))
                    text = ['"}}']
                text.append("]")
            text.append("}")
        text.append("]")
    text.append("}")
    chunks.append("".join(text).encode("utf-8"))
    return RequestBody(chunks)


_IMAGE_PART = '{"type":"image_url","image_url":{"url":"'


def _image_url(part: Any) -> ImageURL | None:
    """The URL of a content part shaped as :func:`~builders.llm.messages.media_part` makes an image's
    (``{"type": "image_url", "image_url": {"url": ImageURL}}``, nothing else), or None."""
    if type(part) is not dict or len(part) != 2 or part.get("type") != "image_url":
        return None
    inner = part.get("image_url")
    if type(inner) is not dict or len(inner) != 1 or list(part) != ["type", "image_url"]:
        return None
    url = inner.get("url")
    return url if isinstance(url, ImageURL) else None
