"""Chat messages in the chat-completions format, with images as JPEG data URLs (and a video as an
MP4 data URL: a ``video_url`` part, as vLLM and other video servers take it).

A message is a plain dict (what the OpenAI SDK sends), so requests stay JSON-serialisable and
hashable into cache keys. Frames from :mod:`builders.video.sampler` become JPEG data URLs with
:func:`builders.video.sampler.frames_to_data_urls`; pass those to :func:`user_message`.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from typing import Any

Message = dict[str, Any]


_BASE64_URL = re.compile(r"data:[a-z]+/[\w.+-]+;base64,[A-Za-z0-9+/]*={0,2}", re.ASCII)


class ImageURL(str):
    """A base64 data URL (checked: nothing in it for JSON to escape, so a request body copies it as it
    is, :mod:`builders.llm.body`) that carries the sha256 of the bytes it encodes, taken before
    base64: the reply cache's key uses ``sha256`` instead of decoding the URL again
    (:mod:`builders.llm.cache`)."""

    sha256: str
    #: A stand-in of the right size for a frame not decoded (cost estimates): never sent, never a key.
    placeholder: bool

    def __new__(cls, url: str, sha256: str, placeholder: bool = False) -> ImageURL:
        if not _BASE64_URL.fullmatch(url):
            raise ValueError(f"an ImageURL is a base64 data URL, got {url[:40]!r}")
        return _image_url(url, sha256, placeholder)

    def __reduce__(self) -> tuple[Any, ...]:
        # Unpickled as made (a decode worker's URLs were checked, or encoded, there): not scanned again
        return (_image_url, (str(self), self.sha256, self.placeholder))


def _image_url(url: str, sha256: str, placeholder: bool = False) -> ImageURL:
    """An ImageURL of a URL that is a base64 data URL by construction (no check: it costs as much as
    the JSON encoding it saves)."""
    obj = str.__new__(ImageURL, url)
    obj.sha256 = sha256
    obj.placeholder = placeholder
    return obj


def has_placeholders(messages: Iterable[Message]) -> bool:
    """Whether any image of ``messages`` is a placeholder (:class:`ImageURL`)."""
    return any(
        getattr(part.get("image_url", {}).get("url"), "placeholder", False)
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
    )


def jpeg_data_url(data: bytes) -> ImageURL:
    """The ``data:image/jpeg;base64,...`` URL of JPEG bytes, with their sha256."""
    url = "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")
    return _image_url(url, hashlib.sha256(data).hexdigest())  # base64 by construction


def system_message(text: str) -> Message:
    return {"role": "system", "content": text}


def assistant_message(text: str) -> Message:
    return {"role": "assistant", "content": text}


#: Content part types that carry media by URL (their data URLs are hashed, not kept, in cache keys).
MEDIA_PARTS: tuple[str, ...] = ("image_url", "video_url")


def media_part(url: str) -> dict[str, Any]:
    """An ``image_url`` part, or a ``video_url`` part for a ``data:video/...`` URL."""
    kind = "video_url" if url.startswith("data:video/") else "image_url"
    return {"type": kind, kind: {"url": url}}


def user_message(text: str, images: Iterable[str] = ()) -> Message:
    """A user turn: the images (data URLs or http(s) URLs; a ``data:video/...`` URL becomes a
    ``video_url`` part) first, in order, then the text.

    Frames go before the instruction, as video-LLM prompts usually do. A message without images
    keeps the plain-string form every server accepts.
    """
    urls = list(images)
    for url in urls:
        if not isinstance(url, str) or not url.startswith(
            ("data:image/", "data:video/", "http://", "https://")
        ):
            raise ValueError(
                f"image must be a data:image/..., data:video/... or http(s) URL, got {str(url)[:40]!r}"
            )
    if not urls:
        return {"role": "user", "content": text}
    parts: list[dict[str, Any]] = [media_part(url) for url in urls]
    parts.append({"type": "text", "text": text})
    return {"role": "user", "content": parts}


def data_url_bytes(url: str) -> bytes | None:
    """The decoded payload of a base64 data URL, or None for any other URL."""
    if not url.startswith("data:"):
        return None
    header, _, payload = url.partition(",")
    if not header.endswith(";base64"):
        return payload.encode()
    return base64.b64decode(payload)
