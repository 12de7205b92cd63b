"""Credentials are never sent by surprise nor recorded, whatever their spelling (issue 37, items 6, 7).

A password in ``--llm-base-url`` was sent as HTTP Basic auth (replacing the API key), and a server
echoing it in a 401 put its base64 into ``summary.json``, stdout and stderr. Credential spellings
outside a short list (``apitoken``, ``accesstoken``, ``pass``, ``pw``, ``jwt``, an ``sk-`` value under
a plain key, ``sig=`` in a URL, ``#access_token=`` in the base URL) reached ``eval.json`` and the
``-v`` log. Real ``vqabench`` processes against the local chat server; every byte they wrote or
printed is searched.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from processes import vqabench

from builders.files.redact import REDACTED, is_secret_key, redact, redact_text
from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer

USER, PASSWORD, KEY = "alice", "pa55-word-e61d", "right-key-77c1"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


def found_in(folder: Path, texts: tuple[str, ...], secrets: tuple[str, ...]) -> list[str]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return [f"{p}: {s}" for p in files for s in secrets if s.encode() in p.read_bytes()] + [
        f"output: {s}" for text in texts for s in secrets if s in text
    ]


def evaluate(data: Path, out: Path, url: str, *extra: str, **env: str):
    return vqabench(["-v", "bqa", "evaluate", "--data", str(data), "--split", "test", "--out", str(out),
                     "--limit", "3", "--num-frames", "2", "--llm-model", "m", "--llm-base-url", url,
                     "--llm-max-retries", "0", *extra], **env)  # fmt: skip


def test_a_password_in_the_base_url_is_never_sent_as_basic_auth(built_samples, tmp_path):
    with ChatServer(model=None, api_key=KEY) as server:
        server.handler = BQAResponder()
        url = server.url.replace("http://", f"http://{USER}:{PASSWORD}@")
        done = evaluate(
            built_samples["bqa"].hub, tmp_path / "ok" / "p.jsonl", url, "--llm-api-key-env", "K", K=KEY
        )
        sent = server.chat_requests
        assert done.returncode == 0, done.stderr
        # The key went out as asked; the URL's user:password did not replace it with a Basic header.
        assert sent and all(r.key_ok for r in sent)
        assert "is not sent (no HTTP Basic auth from a URL)" in done.stderr
        # A wrong key, echoed back in the 401: nothing of the URL's credentials anywhere.
        server.reset()
        refused = evaluate(built_samples["bqa"].hub, tmp_path / "no" / "p.jsonl", url, "--llm-api-key-env", "K",
                           K="wrong-key-5d2a")  # fmt: skip
    assert refused.returncode == 1 and "HTTP 401" in refused.stdout + refused.stderr
    outputs = (done.stdout, done.stderr, refused.stdout, refused.stderr)
    assert found_in(tmp_path, outputs, (PASSWORD, BASIC, "wrong-key-5d2a", KEY)) == []


SECRETS = {
    "apitoken": "s1-apitoken-4471",
    "accesstoken": "s2-accesstok-9e02",
    "pass": "s3-pass-0c3b",
    "pw": "s4-pw-71ae",
    "jwt": "s5-jwt-e5d9",
    "note": "sk-proj-Ab3dEf6hIj9kLm2nOp5q",  # a key under a plain name: its shape gives it away
    "callback": "https://hooks.example/cb?sig=s7-sig-aa91&v=2",
    "headers": {"X-Custom-Auth-Thing": "s8-header-32bf", "Content-Type": "application/json"},
    "reasoning_effort": "low",
}
FRAGMENT = "s9-fragment-6c04"


def test_credentials_in_any_spelling_reach_no_file_and_no_log(built_samples, tmp_path):
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        url = f"{server.url}#access_token={FRAGMENT}"
        done = evaluate(built_samples["bqa"].hub, tmp_path / "e" / "p.jsonl", url, "--llm-api-key-env", "none",
                        "--llm-extra-body", json.dumps(SECRETS))  # fmt: skip
        sent = [r.body for r in server.chat_requests]
    assert done.returncode == 0, done.stderr
    assert sent and all(b["apitoken"] == SECRETS["apitoken"] for b in sent)  # sent as asked
    assert "HTTP Request: POST" in done.stderr  # the -v log ran, with the URL in it
    values = ("s1-apitoken-4471", "s2-accesstok-9e02", "s3-pass-0c3b", "s4-pw-71ae", "s5-jwt-e5d9",
              "sk-proj-Ab3dEf6hIj9kLm2nOp5q", "s7-sig-aa91", "s8-header-32bf", FRAGMENT)  # fmt: skip
    assert found_in(tmp_path, (done.stdout, done.stderr), values) == []
    recorded = json.loads((tmp_path / "e" / "p.work" / "eval.json").read_text())["llm"]
    assert recorded["extra_body"]["reasoning_effort"] == "low"  # what is not a credential stays readable
    assert recorded["extra_body"]["headers"]["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    "key",
    ["apitoken", "accesstoken", "accessToken", "pass", "pw", "jwt", "sig", "x_refresh_token", "clientSecret"],
)
def test_credential_key_spellings(key):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key", ["max_tokens", "monkey", "passes", "top_k", "prompt_tokens", "signal", "keyframes"]
)
def test_ordinary_keys_stay_readable(key):
    assert not is_secret_key(key)


@pytest.mark.parametrize(
    "text",
    ["sk-ant-api03-abcdefghijklmnop", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "hf_AbCdEfGhIjKlMnOpQrStUvWx",
     "ghp_0123456789abcdefghijABCDEFGHIJ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
     "Authorization: Bearer opaque-thing-123"],
)  # fmt: skip
def test_values_shaped_like_a_known_key_format_are_redacted_wherever_they_are(text):
    assert redact({"plain": f"said {text}"}) == {"plain": f"said {text}".replace(text.split()[-1], REDACTED)}
    assert text.split()[-1] not in redact_text(f"log line: {text}")


def test_urls_keep_only_known_ordinary_query_values():
    url = "https://h/v1/x?alt=sse&sig=abc123&token=t0k&revision=main#access_token=frag"
    assert redact(url) == f"https://h/v1/x?alt=sse&sig={REDACTED}&token={REDACTED}&revision=main#{REDACTED}"
