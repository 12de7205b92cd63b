"""Reading a chat-completions request body (the JSON dict a :class:`~builders.testing.chat_server.ChatServer`
handler gets): the schema it asked for, message texts, the frames it carries, and what identifies them.

A ``video_url`` part's video is decoded here as a video server would: every frame of a full
sequential PyAV decode, in order, as RGB (independently of the project's sampler)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import av
import numpy as np


def response_schema(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asked for (``response_format.json_schema.schema``), or None."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema") or {}
    return None


_ITEM_ID = re.compile(r"^Item id: (.+)$", re.MULTILINE)


def item_id(body: Mapping[str, Any]) -> str | None:
    """The ``Item id: ...`` line of a request's first user message (the prompts of bound requests
    show it), or None."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    match = _ITEM_ID.search(message_text(users[0])) if users else None
    return match.group(1).strip() if match else None


def with_item_id(body: Mapping[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    """``reply`` naming the request's item, as a model answering it would, when the request's schema
    asks for an ``item_id`` (a bound request); else ``reply`` as it is."""
    properties = (response_schema(body) or {}).get("properties") or {}
    found = item_id(body)
    if "item_id" not in properties or found is None:
        return reply
    return {"item_id": found, **{k: v for k, v in reply.items() if k != "item_id"}}  # the id it was shown


#: How a bound prompt asks for the id back (builders/llm/prompts: ", the item id above copied as it is").
_COPY_IT = re.compile(r",? ?\(?the item id above copied as it is\)?")


def without_item_id(text: str) -> str:
    """A bound prompt's text with its item binding taken out (the ``Item id:`` line, the request to
    copy it and the ``"item_id"`` member of the reply format): scripted models draw their replies from
    what a prompt asks, and the binding asks nothing new, so their replies stay what they were."""
    match = _ITEM_ID.search(text)
    if match is None:
        return text
    found = match.group(1).strip()
    text = text[: match.start()] + text[match.end() :].lstrip("\n")
    text = text.replace(f'"item_id": {json.dumps(found)}, ', "")
    return _COPY_IT.sub("", text)


def message_text(message: dict[str, Any]) -> str:
    """The text of one message (its text parts joined when it also carries images)."""
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return content or ""


def last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the last user message of a request: what most scripted handlers key on."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return message_text(users[-1]) if users else ""


def image_urls(body: Mapping[str, Any]) -> list[str]:
    """The image URLs (frames as data URLs) of a request's messages, in order."""
    return [
        part["image_url"]["url"]
        for m in body.get("messages", [])
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if part.get("type") == "image_url"
    ]


def video_urls(body: Mapping[str, Any]) -> list[str]:
    """The ``video_url`` URLs of a request's messages, in order."""
    return [
        part["video_url"]["url"]
        for m in body.get("messages", [])
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if part.get("type") == "video_url"
    ]


def decode_video_url(url: str) -> list[np.ndarray]:
    """Every frame (H x W x 3 RGB) of a ``data:video/...;base64`` URL's video; ValueError saying why
    when it is not one, or does not decode."""
    header, sep, payload = url.partition(",")
    if not sep or not header.startswith("data:video/") or not header.endswith(";base64"):
        raise ValueError(f"video_url must be a base64 data:video/... URL, got {url[:40]!r}")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as err:
        raise ValueError(f"video_url payload is not base64: {err}") from None
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            frames = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    except (av.FFmpegError, IndexError) as err:
        raise ValueError(f"video_url holds no decodable video: {err}") from None
    if not frames:
        raise ValueError("video_url holds a video without frames")
    return frames


def video_frames(body: Mapping[str, Any]) -> list[list[np.ndarray]]:
    """The decoded frames of each ``video_url`` part of a request (:func:`decode_video_url`)."""
    return [decode_video_url(url) for url in video_urls(body)]


def image_count(body: Mapping[str, Any]) -> int:
    """How many images the request's messages carry."""
    return len(image_urls(body))


def frames_digest(urls: Sequence[str]) -> str:
    """What identifies a set of frames as sent (sha256 over the data URLs): scripted handlers use it
    to recognise which video a request shows."""
    digest = hashlib.sha256()
    for url in urls:
        digest.update(url.encode("ascii"))
    return digest.hexdigest()


def count_prompt_tokens(body: Mapping[str, Any]) -> int:
    """A stand-in tokenizer for the reported usage: words, plus 85 per image (OpenAI's low-detail cost)."""
    return sum(len(message_text(m).split()) for m in body.get("messages", [])) + 85 * image_count(body)
