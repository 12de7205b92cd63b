"""The request body (builders.llm.body): the bytes the OpenAI SDK's own serializer wrote before, sent
and retried whole, written to a file chunk by chunk, and refused for an ImageURL JSON would escape."""

from __future__ import annotations

import asyncio
import io
import json

import numpy as np
import openai
import pytest
from pydantic import BaseModel

from builders.llm import LLMClient, LLMRequest, LLMSettings, assistant_message, system_message, user_message
from builders.llm.body import chat_body
from builders.llm.messages import ImageURL, jpeg_data_url
from builders.llm.schema import ReplySchema
from builders.testing.chat_faults import Fault
from builders.testing.chat_server import ChatServer
from builders.video.jpeg import jpeg_bytes
from builders.video.sampler import frames_to_data_urls


class Label(BaseModel):
    label: str
    score: int


def _frames(n: int) -> list[ImageURL]:
    """Frames as the step loop's frame cache holds them (ImageURL: their bytes go as one chunk each)."""
    rng = np.random.default_rng(7)
    return [jpeg_data_url(jpeg_bytes(rng.integers(0, 256, (48, 64, 3), dtype=np.uint8))) for _ in range(n)]


def _messages() -> list[dict]:
    images = _frames(3)
    plain = frames_to_data_urls([np.zeros((8, 8, 3), np.uint8)])  # a researcher's plain str URL
    return [
        system_message('Réponds en un mot 🙂 "quoted" \\ back\nslash'),
        user_message("Which emotion? ☃", [*images, *plain]),
        assistant_message("maybe"),
        user_message("Again, with a control char \x01 and a tab\t.", images[:1]),
    ]


SETTINGS = [
    {},  # the defaults: temperature 0.0, seed 0
    {"temperature": None, "seed": None, "max_tokens": None},
    {"temperature": 0.7, "seed": 3, "max_tokens": 64, "extra_body": {"top_p": 0.9, "temperature": 0.2,
                                                                   "messages": "ignored", "stop": ["\n"]}},
]  # fmt: skip


def _sdk_body(server: ChatServer, settings: LLMSettings, messages: list[dict], response_format) -> bytes:
    """The body as the SDK serializes it when given the call the client made before (the messages as
    ``extra_body``, the settings as arguments): what the server parsed, written back the way the SDK's
    serializer writes (json.dumps, ensure_ascii=False, compact; parsing keeps key order)."""
    kwargs = {"model": settings.model, "messages": [], "extra_body": {**(settings.extra_body or {}),
                                                                     "messages": messages}}  # fmt: skip
    for name in ("temperature", "seed", "max_tokens"):
        if getattr(settings, name) is not None:
            kwargs[name] = getattr(settings, name)
    if response_format is not None:
        kwargs["response_format"] = response_format

    async def send() -> None:
        async with openai.AsyncOpenAI(base_url=server.url, api_key="unused", max_retries=0) as sdk:
            await sdk.chat.completions.create(**kwargs)

    asyncio.run(send())
    parsed = server.chat_requests[-1].body
    return json.dumps(parsed, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@pytest.mark.parametrize("changes", SETTINGS)
@pytest.mark.parametrize("schema", [None, Label])
def test_body_bytes_equal_the_sdk_serialization(chat_server, changes, schema):
    settings = LLMSettings(model="m-1", base_url=chat_server.url, api_key_env=None, progress=False, **changes)
    messages = _messages()
    response_format = ReplySchema.of(schema).response_format() if schema else None
    expected = _sdk_body(chat_server, settings, messages, response_format)
    body = chat_body(settings, messages, response_format)
    assert bytes(body) == expected
    assert len(body) == len(expected)
    file = io.BytesIO()
    assert body.write_to(file) == len(expected) and file.getvalue() == expected
    # Each frame's URL is a chunk of its own (copied, not re-encoded), whole.
    urls = {p["image_url"]["url"].encode() for m in messages if isinstance(m["content"], list)
            for p in m["content"] if isinstance(p.get("image_url", {}).get("url"), ImageURL)}  # fmt: skip
    assert len(urls) == 3 and all(any(c.endswith(u) for c in body.chunks) for u in urls)


def test_client_sends_that_body(chat_server):
    settings = LLMSettings(model="m-1", base_url=chat_server.url, api_key_env=None, progress=False)
    messages = _messages()
    request = LLMRequest(messages, schema=Label, prompt=("p", "1"))
    chat_server.handler = lambda body: '{"label": "x", "score": 1}'
    expected = _sdk_body(chat_server, settings, messages, ReplySchema.of(Label).response_format())
    result = LLMClient(settings).run_one(request)
    assert result.ok
    seen = chat_server.chat_requests[-1]
    sent = json.dumps(seen.body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    assert sent == expected
    assert seen.headers["content-length"] == str(len(expected))
    assert "transfer-encoding" not in seen.headers
    assert seen.headers["content-type"] == "application/json"


def test_a_retried_request_sends_the_whole_body_again(chat_server):
    settings = LLMSettings(model="m-1", base_url=chat_server.url, api_key_env=None, progress=False,
                           max_retries=2)  # fmt: skip
    chat_server.handler = lambda body: '{"label": "x", "score": 1}'
    chat_server.queue_faults(Fault.server_error(retry_after=0.01), Fault.rate_limit(retry_after=0.01))
    result = LLMClient(settings).run_one(LLMRequest(_messages(), schema=Label, prompt=("p", "1")))
    assert result.ok
    bodies = [r.body for r in chat_server.chat_requests]
    assert [r.status for r in chat_server.chat_requests] == [500, 429, 200]
    assert (
        bodies[0] == bodies[1] == bodies[2] and bodies[0]["messages"][1]["content"][0]["type"] == "image_url"
    )


@pytest.mark.parametrize(
    "url", ["data:image/jpeg;base64,ab\"cd", "data:image/jpeg;base64,abc\n", "https://example.org/a.jpg",
            "data:image/jpé;base64,abcd"],
)  # fmt: skip
def test_an_image_url_json_would_escape_is_refused(url):
    with pytest.raises(ValueError, match="base64 data URL"):
        ImageURL(url, "0" * 64)
