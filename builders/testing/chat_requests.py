"""Reading a chat-completions request body (the JSON dict a :class:`~builders.testing.chat_server.ChatServer`
handler gets): the schema it asked for, message texts, the frames it carries, and what identifies them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any


def response_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asked for (``response_format.json_schema.schema``), or None."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema") or {}
    return None


def message_text(message: dict[str, Any]) -> str:
    """The text of one message (its text parts joined when it also carries images)."""
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return content or ""


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a request: what most scripted handlers key on."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return message_text(users[-1]) if users else ""


def image_urls(body: dict[str, Any]) -> list[str]:
    """The image URLs (frames as data URLs) of a request's messages, in order."""
    return [
        part["image_url"]["url"]
        for m in body.get("messages", [])
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if part.get("type") == "image_url"
    ]


def image_count(body: dict[str, Any]) -> int:
    """How many images the request's messages carry."""
    return len(image_urls(body))


def frames_digest(urls: Sequence[str]) -> str:
    """What identifies a set of frames as sent (sha256 over the data URLs): scripted handlers use it
    to recognise which video a request shows."""
    digest = hashlib.sha256()
    for url in urls:
        digest.update(url.encode("ascii"))
    return digest.hexdigest()


def count_prompt_tokens(body: dict[str, Any]) -> int:
    """A stand-in tokenizer for the reported usage: words, plus 85 per image (OpenAI's low-detail cost)."""
    return sum(len(message_text(m).split()) for m in body.get("messages", [])) + 85 * image_count(body)
