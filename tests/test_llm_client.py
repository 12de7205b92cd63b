"""LLMClient end to end: the openai SDK over real sockets to the local ChatServer."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel, Field

from builders.llm import (
    LLMClient,
    LLMRequest,
    LLMSettings,
    ReplayMissError,
    export_replies,
    system_message,
    user_message,
)
from builders.llm.cache import ReplyCache
from builders.scripted.chat_requests import image_count, last_user_text
from builders.testing.chat_faults import Fault, Reply
from builders.testing.chat_server import DEFAULT_TEXT, ChatServer
from builders.video.sampler import frames_to_data_urls


class Label(BaseModel):
    label: str = Field(min_length=1)
    score: int = Field(ge=1, le=5)


def make_settings(server: ChatServer, **changes) -> LLMSettings:
    fields = dict(
        model="test-model", base_url=server.url, api_key_env=None, max_concurrency=4, timeout=5.0,
        max_retries=2, progress=False,
    )  # fmt: skip
    return LLMSettings(**{**fields, **changes})


def ask(i: int, schema=Label, **kw) -> LLMRequest:
    return LLMRequest(
        [user_message(f"item {i}")], schema=schema, prompt=("test_prompt", "1"), metadata={"i": i}, **kw
    )


def test_structured_batch_in_input_order(chat_server):
    # Replies finish in reverse order (later items are faster); results must still follow the input.
    def handler(body):
        i = int(last_user_text(body).split()[-1])
        time.sleep((8 - i) * 0.01)
        return {"label": f"L{i}", "score": 1 + i % 5}

    chat_server.handler = handler
    client = LLMClient(make_settings(chat_server, max_concurrency=8))
    results = client.run([ask(i) for i in range(8)])
    assert [r.value for r in results] == [Label(label=f"L{i}", score=1 + i % 5) for i in range(8)]
    assert [r.metadata["i"] for r in results] == list(range(8))
    assert all(
        r.ok and not r.cached and r.attempts == 1 and r.model_reported == "test-model-2026-01"
        for r in results
    )
    first = chat_server.chat_requests[0].body
    fmt = first["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Label"
    assert fmt["json_schema"]["strict"] is False and "additionalProperties" not in json.dumps(fmt)
    assert (first["model"], first["temperature"], first["seed"]) == ("test-model", 0.0, 0)


def test_text_reply_images_and_dict_schema(chat_server):
    frames = frames_to_data_urls([np.full((16, 16, 3), v, np.uint8) for v in (0, 128)])
    client = LLMClient(make_settings(chat_server))
    dict_schema = {
        "type": "object",
        "properties": {"answer": {"const": "yes"}, "why": {"type": "string"}},
        "required": ["answer", "why"],
        "additionalProperties": False,
    }
    text, structured = client.run(
        [
            LLMRequest([system_message("Be brief."), user_message("Describe.", frames)]),
            LLMRequest([user_message("Agree?")], schema=dict_schema),
        ]
    )
    assert text.ok and text.value == DEFAULT_TEXT
    assert structured.ok and structured.value == {"answer": "yes", "why": "example why"}
    # The two requests run concurrently: tell them apart by content, not arrival order.
    bodies = [r.body for r in chat_server.chat_requests]
    (text_body,) = [b for b in bodies if b["messages"][-1]["content"] != "Agree?"]
    (dict_body,) = [b for b in bodies if b["messages"][-1]["content"] == "Agree?"]
    assert "response_format" not in text_body and image_count(text_body) == 2
    assert text_body["messages"][1]["content"][0]["image_url"]["url"] == frames[0]
    sent = dict_body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["answer"] == {"enum": ["yes"]} and "additionalProperties" not in sent


def test_schema_passes_a_gemini_like_server():
    import openai

    class Inner(BaseModel, extra="forbid"):
        kind: str = "a"

    class Outer(BaseModel, extra="forbid"):
        inner: Inner
        counts: dict[str, int] = {}

    raw_schema = Outer.model_json_schema()  # has $defs, $ref, additionalProperties

    async def send_raw(url):
        sdk = openai.AsyncOpenAI(api_key="x", base_url=url, max_retries=0)
        fmt = {"type": "json_schema", "json_schema": {"name": "Outer", "schema": raw_schema}}
        try:
            await sdk.chat.completions.create(model="m", messages=[user_message("x")], response_format=fmt)
        finally:
            await sdk.close()

    with ChatServer(gemini=True) as server:
        # The server refuses what Gemini refuses, so the passing calls below mean something.
        with pytest.raises(openai.BadRequestError, match="Unknown name"):
            asyncio.run(send_raw(server.url))
        client = LLMClient(make_settings(server))
        from_model, from_dict = client.run(
            [
                LLMRequest([user_message("x")], schema=Outer),
                LLMRequest([user_message("y")], schema=raw_schema),
            ]
        )
    assert from_model.ok and from_model.value == Outer(inner=Inner(kind="example kind"))
    assert from_dict.ok and from_dict.value == {"inner": {"kind": "example kind"}, "counts": {}}


def test_concurrency_is_bounded(chat_server):
    # Replies go out in groups of 3 (a barrier, not a sleep): a client that never had 3 in flight
    # would time the barrier out, and one that had 4 would show it in max_in_flight.
    barrier = threading.Barrier(3, timeout=30)

    def three_at_a_time(body):
        barrier.wait()
        return None  # then the default reply

    chat_server.handler = three_at_a_time
    client = LLMClient(make_settings(chat_server, max_concurrency=3))
    results = client.run([ask(i) for i in range(12)])
    assert all(r.ok for r in results)
    assert chat_server.max_in_flight == 3  # never more, and the bound was reached


def test_identical_requests_share_one_call(chat_server):
    client = LLMClient(make_settings(chat_server))
    results = client.run([ask(1), ask(2), ask(1)])
    assert len(chat_server.chat_requests) == 2
    assert results[0].value == results[2].value and results[2].metadata == {"i": 1}


def test_cache_hit_across_processes_then_refresh(chat_server, tmp_path):
    cache = tmp_path / "cache.sqlite"
    chat_server.handler = lambda body: {"label": "first", "score": 2}
    script = textwrap.dedent(
        f"""
        from builders.llm import LLMClient, LLMRequest, LLMSettings, user_message
        from pydantic import BaseModel, Field
        class Label(BaseModel):
            label: str = Field(min_length=1)
            score: int = Field(ge=1, le=5)
        settings = LLMSettings(model="test-model", base_url={chat_server.url!r}, api_key_env=None,
                               max_concurrency=4, timeout=5.0, max_retries=2, progress=False)
        requests = [LLMRequest([user_message(f"item {{i}}")], schema=Label, prompt=("test_prompt", "1"),
                               metadata={{"i": i}}) for i in range(5)]
        results = LLMClient(settings, cache_path={str(cache)!r}).run(requests)
        assert all(r.ok for r in results), [r.error for r in results]
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert len(chat_server.chat_requests) == 5

    chat_server.handler = lambda body: {"label": "second", "score": 3}
    client = LLMClient(make_settings(chat_server), cache_path=cache)
    results = client.run([ask(i) for i in range(5)])
    assert len(chat_server.chat_requests) == 5  # nothing new was sent
    assert all(r.cached and r.attempts == 0 and r.value.label == "first" for r in results)
    assert results[0].model_reported == "test-model-2026-01" and results[0].usage.completion_tokens > 0
    assert client.usage.cache_hits == 5 and client.usage.api_calls == 0

    refreshed = LLMClient(make_settings(chat_server), cache_path=cache, mode="refresh").run(
        [ask(i) for i in range(5)]
    )
    assert len(chat_server.chat_requests) == 10
    assert all(not r.cached and r.value.label == "second" for r in refreshed)
    again = LLMClient(make_settings(chat_server), cache_path=cache).run([ask(0)])
    assert again[0].cached and again[0].value.label == "second"


def test_replay_from_cache_and_from_recorded_replies(chat_server, tmp_path):
    cache = tmp_path / "cache.sqlite"
    LLMClient(make_settings(chat_server), cache_path=cache).run([ask(i) for i in range(3)])
    sent = len(chat_server.chat_requests)
    replies = tmp_path / "replies.jsonl"
    export_replies(cache, replies)

    for client in (
        LLMClient(make_settings(chat_server), cache_path=cache, mode="replay"),
        LLMClient(make_settings(chat_server), replies_path=replies),
    ):
        assert client.mode == "replay"
        results = client.run([ask(i) for i in range(3)])
        assert all(r.cached and r.ok for r in results)
        with pytest.raises(ReplayMissError, match=r"1 of 4 requests have no recorded reply") as err:
            client.run([ask(i) for i in range(4)])
        assert err.value.keys == [client.key_of(ask(3))]
    assert len(chat_server.chat_requests) == sent  # replay never talks to the server
    with pytest.raises(FileNotFoundError, match="no reply cache"):
        LLMClient(make_settings(chat_server), cache_path=tmp_path / "missing.sqlite", mode="replay")
    with pytest.raises(ValueError, match="needs a cache_path or a replies_path"):
        LLMClient(make_settings(chat_server), mode="replay")


def test_replay_needs_no_api_key(tmp_path, monkeypatch, chat_server):
    monkeypatch.delenv("VQABENCH_TEST_NOKEY", raising=False)
    settings = make_settings(chat_server, api_key_env="VQABENCH_TEST_NOKEY")
    monkeypatch.setenv("VQABENCH_TEST_NOKEY", "k")
    LLMClient(settings, cache_path=tmp_path / "c.sqlite").run([ask(0)])
    monkeypatch.delenv("VQABENCH_TEST_NOKEY")
    assert LLMClient(settings, cache_path=tmp_path / "c.sqlite", mode="replay").run([ask(0)])[0].ok
    with pytest.raises(RuntimeError, match="VQABENCH_TEST_NOKEY .* is not set"):
        LLMClient(settings).run([ask(0)])


def test_rate_limit_honours_retry_after(chat_server):
    # 0.7 s is longer than any default SDK backoff of a first retry (<= 0.5 s): waiting at least
    # that long shows the Retry-After header was used.
    chat_server.queue_faults(Fault.rate_limit(retry_after=0.7))
    started = time.perf_counter()
    result = LLMClient(make_settings(chat_server)).run_one(ask(0))
    assert result.ok and time.perf_counter() - started >= 0.7
    statuses = [r.status for r in chat_server.chat_requests]
    assert statuses == [429, 200]
    assert chat_server.chat_requests[1].headers["x-stainless-retry-count"] == "1"


def test_server_errors_and_disconnects_are_retried_by_the_sdk(chat_server):
    chat_server.queue_faults(
        Fault.server_error(retry_after=0.01), Fault.server_error(status=503, retry_after=0.01)
    )
    client = LLMClient(make_settings(chat_server, max_retries=2))
    assert client.run_one(ask(0)).ok
    assert [r.status for r in chat_server.chat_requests] == [500, 503, 200]

    chat_server.reset()
    chat_server.queue_faults(Fault.disconnect())
    assert client.run_one(ask(1)).ok
    assert [r.fault for r in chat_server.chat_requests] == ["disconnect", None]

    chat_server.reset()
    chat_server.queue_faults([Fault.server_error(retry_after=0.01)] * 3)
    failed = client.run_one(ask(2))
    assert not failed.ok and "HTTP 500" in failed.error and failed.attempts == 1
    assert len(chat_server.chat_requests) == 3  # 1 + max_retries, and no second loop on top


def test_timeouts(chat_server):
    # The server holds a hung request until the client closes it: the client's timeout fires first
    # however loaded the machine is (no race of a timeout against a delay). The timeout only has to
    # be long enough for an ordinary reply, which the retry gets.
    chat_server.queue_faults(Fault.hang())
    client = LLMClient(make_settings(chat_server, timeout=2.0, max_retries=1))
    assert client.run_one(ask(0)).ok
    assert [r.fault for r in chat_server.chat_requests] == ["hang", None]

    chat_server.queue_faults(Fault.hang())
    failed = LLMClient(make_settings(chat_server, timeout=2.0, max_retries=0)).run_one(ask(1))
    assert not failed.ok and failed.error.startswith("timed out after 2 s")
    chat_server.wait_idle()
    assert chat_server.hangs_outlasted == 0  # every hang ended by the client leaving


def test_fenced_reply_is_accepted(chat_server):
    chat_server.queue_faults(Fault.fenced())
    result = LLMClient(make_settings(chat_server)).run_one(ask(0))
    assert result.ok and result.attempts == 1 and result.raw.startswith("```json")


@pytest.mark.parametrize("fault", [Fault.invalid(), Fault.truncated(), Fault.broken_json()])
def test_bad_reply_is_re_asked_then_cached_under_the_original_key(chat_server, tmp_path, fault):
    chat_server.queue_faults(fault)
    client = LLMClient(make_settings(chat_server), cache_path=tmp_path / "c.sqlite")
    result = client.run_one(ask(0))
    assert result.ok and result.attempts == 2 and client.usage.reasks == 1
    first, second = (r.body for r in chat_server.chat_requests)
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    bad_reply = second["messages"][1]["content"]
    problem = second["messages"][2]["content"]
    assert "could not be used" in problem
    if fault.kind == "truncated":
        assert "finish_reason=length" in problem and len(bad_reply) < len(result.raw)
    elif fault.kind == "broken_json":
        assert "not valid JSON" in problem and result.raw.startswith(bad_reply)
    else:
        assert "unexpected_field" in bad_reply and "label" in problem
    with ReplyCache(tmp_path / "c.sqlite") as cache:
        row = cache.get(client.key_of(ask(0)))
    assert row.attempts == 2 and row.raw == result.raw and row.value == {"label": "example label", "score": 1}
    assert (row.prompt_name, row.prompt_version) == ("test_prompt", "1")


def test_persistent_bad_replies_fail_with_the_raw_reply_and_are_not_cached(chat_server, tmp_path):
    chat_server.handler = lambda body: {"label": "", "score": 9}
    client = LLMClient(make_settings(chat_server, max_validation_retries=2), cache_path=tmp_path / "c.sqlite")
    result = client.run_one(ask(0))
    assert not result.ok and result.value is None and result.attempts == 3
    assert result.raw == '{"label": "", "score": 9}'
    assert result.error.startswith("no usable reply after 3 attempts") and "score" in result.error
    assert len(chat_server.chat_requests) == 3
    assert len(ReplyCache(tmp_path / "c.sqlite")) == 0
    # Not cached, so the next run asks again (and may succeed).
    chat_server.handler = None
    assert client.run_one(ask(0)).ok and len(chat_server.chat_requests) == 4


def test_domain_validator_re_asks(chat_server):
    replies = iter([{"label": "same", "score": 1}, {"label": "different", "score": 2}])
    chat_server.handler = lambda body: next(replies)

    def not_same(value: Label) -> None:
        if value.label == "same":
            raise ValueError("the label must not be 'same'")

    result = LLMClient(make_settings(chat_server)).run_one(ask(0, validator=not_same))
    assert result.ok and result.value.label == "different" and result.attempts == 2
    assert "the label must not be 'same'" in chat_server.chat_requests[1].body["messages"][2]["content"]


def test_malformed_body_is_a_reported_failure(chat_server):
    chat_server.queue_faults(Fault.malformed())
    results = LLMClient(make_settings(chat_server)).run([ask(0), ask(1)])
    failed = [r for r in results if not r.ok]
    assert len(failed) == 1 and "malformed response" in failed[0].error
    assert sum(r.ok for r in results) == 1  # one failure does not sink the batch


def test_usage_summary(chat_server, tmp_path):
    chat_server.handler = lambda body: Reply(
        '{"label": "x", "score": 1}', prompt_tokens=11, completion_tokens=4
    )
    client = LLMClient(make_settings(chat_server), cache_path=tmp_path / "c.sqlite")
    client.run([ask(i) for i in range(3)])
    chat_server.queue_faults([Fault.server_error(retry_after=0.01)] * 3)
    client.run([ask(i) for i in range(4)])
    u = client.usage
    assert (u.items, u.cache_hits, u.api_calls, u.failures) == (7, 3, 4, 1)
    assert (u.prompt_tokens, u.completion_tokens) == (33, 12)
    assert str(u).startswith(
        "LLM usage: 7 requests, 3 cache hits, 4 API calls (0 re-asks), 1 failures, 0 blocked, tokens in 33"
    )
    assert client.last_usage.items == 4


def test_secret_never_reaches_files_errors_or_logs(chat_server, tmp_path, monkeypatch, caplog):
    secret = "sk-test-SECRET-9f8e7d6c5b4a"
    chat_server.api_key = secret
    settings = make_settings(chat_server, api_key_env="VQABENCH_TEST_KEY")
    client = LLMClient(settings, cache_path=tmp_path / "cache" / "llm.sqlite")
    # Read at call time: the variable is set after the client was made.
    monkeypatch.setenv("VQABENCH_TEST_KEY", secret)
    caplog.set_level(logging.DEBUG)
    chat_server.queue_faults(Fault.invalid())
    results = client.run([ask(i) for i in range(3)])
    assert all(r.ok for r in results)
    assert all(r.authorized and r.key_ok for r in chat_server.chat_requests)
    # A wrong key: the server echoes it in its 401 message; the client must scrub it.
    monkeypatch.setenv("VQABENCH_TEST_KEY", "sk-wrong-SECRET-0011223344")
    denied = client.run_one(ask(9))
    assert not denied.ok and "HTTP 401" in denied.error and "[redacted]" in denied.error
    export_replies(tmp_path / "cache" / "llm.sqlite", tmp_path / "cache" / "replies.jsonl")
    client.close()
    texts = [
        repr(client),
        repr(settings),
        str(client.usage),
        caplog.text,
        *(str(r) for r in results),
        str(denied),
    ]
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in files) and any(p.suffix == ".jsonl" for p in files)
    for needle in (secret, "sk-wrong-SECRET-0011223344"):
        assert not any(needle in text for text in texts)
        assert not any(needle.encode() in p.read_bytes() for p in files)
    assert not any("SECRET" in json.dumps(r.headers) for r in chat_server.requests)


def test_settings_from_env_and_key_hygiene(monkeypatch):
    env = {
        "VQABENCH_LLM_MODEL": "gemini-2.5-flash",
        "VQABENCH_LLM_BASE_URL": "https://generativelanguage.googleapis.com/v1beta/openai/",
        "VQABENCH_LLM_API_KEY_ENV": "GEMINI_API_KEY",
        "VQABENCH_LLM_MAX_CONCURRENCY": "16",
        "VQABENCH_LLM_SEED": "none",
        "VQABENCH_LLM_EXTRA_BODY": '{"reasoning_effort": "low"}',
    }
    s = LLMSettings.from_env(environ=env, timeout=30)
    assert (s.model, s.api_key_env, s.max_concurrency, s.seed, s.timeout) == (
        "gemini-2.5-flash", "GEMINI_API_KEY", 16, None, 30.0,
    )  # fmt: skip
    assert s.base_url == "https://generativelanguage.googleapis.com/v1beta/openai"
    assert s.extra_body == {"reasoning_effort": "low"}
    with pytest.raises(ValueError, match="no model configured"):
        LLMSettings.from_env(environ={})
    # Worded for whoever called: a flag on the command line, an argument in Python.
    with pytest.raises(ValueError, match="pass --llm-model MODEL or set VQABENCH_LLM_MODEL"):
        LLMSettings.from_env(environ={})
    with pytest.raises(ValueError, match=r"pass model=\.\.\. or set VQABENCH_JUDGE_MODEL") as err:
        LLMSettings.from_env(prefix="VQABENCH_JUDGE_", environ={}, caller="python")
    assert "--llm" not in str(err.value)
    with pytest.raises(ValueError) as err:
        LLMSettings(model="m", api_key_env="sk-live-abcdef123")  # a key pasted where its NAME belongs
    assert "sk-live-abcdef123" not in str(err.value) and "NAME" in str(err.value)


def test_extra_body_and_max_tokens_are_sent(chat_server):
    settings = make_settings(chat_server, max_tokens=64, extra_body={"reasoning_effort": "low"}, seed=None)
    LLMClient(settings).run_one(ask(0))
    body = chat_server.chat_requests[0].body
    assert body["max_tokens"] == 64 and body["reasoning_effort"] == "low" and "seed" not in body


def test_async_api_and_sync_guard(chat_server):
    client = LLMClient(make_settings(chat_server))

    async def main():
        with pytest.raises(RuntimeError, match="running event loop"):
            client.run([ask(0)])
        return await client.arun_one(ask(0))

    assert asyncio.run(main()).ok


def test_server_serves_models_and_logs_without_the_key(chat_server):
    import openai

    async def models():
        sdk = openai.AsyncOpenAI(api_key="sk-log-check", base_url=chat_server.url)
        try:
            return [m.id async for m in sdk.models.list()]
        finally:
            await sdk.close()

    assert asyncio.run(models()) == ["test-model-2026-01"]
    logged = chat_server.requests[-1]
    assert logged.method == "GET" and logged.authorized and "authorization" not in logged.headers


def test_server_sustains_many_slow_requests_at_once():
    # Every handler waits until all 40 requests are inside the server at the same moment: a server
    # that serialised slow replies would never get there (the barrier times out and replies fail).
    barrier = threading.Barrier(40, timeout=30)

    def all_at_once(body):
        barrier.wait()
        return None  # then the default reply

    with ChatServer() as server:
        server.handler = all_at_once
        results = LLMClient(make_settings(server, max_concurrency=40)).run([ask(i) for i in range(40)])
    assert all(r.ok for r in results) and server.max_in_flight == 40 and not server.errors


def test_handler_errors_are_visible(chat_server):
    def broken(body):
        raise KeyError("oops")

    chat_server.handler = broken
    result = LLMClient(make_settings(chat_server, max_retries=0)).run_one(ask(0))
    assert not result.ok and "test handler failed" in result.error
    assert chat_server.errors == ["KeyError: 'oops'"]


def test_thread_safety_of_server_log(chat_server):
    # Requests from several threads (separate clients and event loops) are all logged.
    def worker(n):
        LLMClient(make_settings(chat_server)).run([ask(100 * n + i) for i in range(5)])

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(chat_server.chat_requests) == 15
    assert len({last_user_text(r.body) for r in chat_server.chat_requests}) == 15


def test_cached_reply_that_no_longer_validates(chat_server, tmp_path):
    cache = tmp_path / "c.sqlite"
    LLMClient(make_settings(chat_server), cache_path=cache).run_one(ask(0))

    def strict(value):
        raise ValueError("new rule")

    replay = LLMClient(make_settings(chat_server), cache_path=cache, mode="replay").run_one(
        ask(0, validator=strict)
    )
    assert not replay.ok and "no longer validates" in replay.error
    assert Path(cache).exists()


def test_random_fault_schedule_is_seeded_and_survived(chat_server):
    choices = [Fault.rate_limit(retry_after=0.01), Fault.server_error(retry_after=0.01)]
    chat_server.fault_rate, chat_server.fault_choices = 0.3, choices
    client = LLMClient(make_settings(chat_server, max_concurrency=1, max_retries=8))
    results = client.run([ask(i) for i in range(10)])
    assert all(r.ok for r in results)
    # The same seeded draws, replayed independently: one draw per request until 10 succeed.
    rng, ok, expected = random.Random(0), 0, []
    while ok < 10:
        if rng.random() < 0.3:
            expected.append(rng.choice(choices).kind)
        else:
            ok += 1
    assert [r.fault for r in chat_server.chat_requests if r.fault] == expected and expected


def test_proxy_routes_this_client_alone_and_leaves_the_environment(chat_server):
    # A never-resolving base URL reaches the server only through the client's own proxy; the key of
    # the reply carries that URL, not the server's port, and no proxy variable is written.
    before = dict(os.environ)
    settings = make_settings(chat_server, base_url="http://fixed-name.invalid/v1")
    result = LLMClient(settings, proxy=chat_server.proxy_url).run_one(ask(0))
    assert result.ok and os.environ == before
    (sent,) = chat_server.chat_requests
    assert sent.path == "http://fixed-name.invalid/v1/chat/completions"
    same_key = LLMClient(make_settings(chat_server, base_url="http://fixed-name.invalid/v1/")).key_of(ask(0))
    assert result.key == same_key
