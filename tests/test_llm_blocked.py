"""A reply a safety filter stopped is ``blocked``: final (not re-asked), not cached, counted apart from
failures, whichever way the provider says it (OpenAI's content_filter and refusal, Gemini's own
finish reasons and prompt block), against the local chat server."""

from __future__ import annotations

import pytest

from builders.llm import LLMClient, LLMRequest, LLMSettings, user_message
from builders.llm.client import Status
from builders.testing.chat_faults import Reply


@pytest.mark.parametrize(
    ("reply", "signal"),
    [
        (Reply.blocked(), "finish_reason=content_filter"),
        (Reply.blocked("SAFETY"), "finish_reason=SAFETY"),
        (Reply.blocked("PROHIBITED_CONTENT"), "finish_reason=PROHIBITED_CONTENT"),
        (Reply(None, refusal="I can't help with that."), "refusal: I can't help with that."),
        (Reply.prompt_blocked("SAFETY"), "prompt blocked: SAFETY"),
        (
            Reply(None, no_choices=True, extra={"promptFeedback": {"blockReason": "OTHER"}}),
            "prompt blocked: OTHER",
        ),
    ],
)
def test_blocked_replies(chat_server, tmp_path, reply, signal):
    chat_server.handler = lambda body: reply
    settings = LLMSettings(model="m", base_url=chat_server.url, api_key_env=None, progress=False)
    with LLMClient(settings, cache_path=tmp_path / "cache.sqlite") as client:
        result = client.run_one(LLMRequest([user_message("Which emotion?")]))
        assert (result.status, result.blocked, result.attempts) == (Status.BLOCKED, signal, 1)
        assert result.error.startswith("blocked by the provider's safety filter")
        assert (client.usage.blocked, client.usage.failures, client.usage.api_calls) == (1, 0, 1)
        again = client.run_one(LLMRequest([user_message("Which emotion?")]))  # never cached
    assert not again.cached and len(chat_server.chat_requests) == 2


def test_recitation_is_not_a_safety_block(chat_server):
    replies = iter([Reply("half a sent", finish_reason="RECITATION"), Reply("Anger")])
    chat_server.handler = lambda body: next(replies)
    settings = LLMSettings(model="m", base_url=chat_server.url, api_key_env=None, progress=False)
    with LLMClient(settings) as client:
        result = client.run_one(LLMRequest([user_message("Which emotion?")]))
    assert result.ok and result.blocked is None and result.value == "half a sent"
