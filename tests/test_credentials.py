"""Credentials inside settings never reach a file, a log or an error (issue 32, case 10).

A password inside ``--llm-base-url`` and a token inside ``--llm-extra-body`` were written in plain
text to ``eval.json``, ``build.json`` and ``release/meta.json``, and the password to the ``-v`` log.
Here real ``vqabench`` processes run against the local chat server with both, and every byte they
wrote or printed is searched for the secrets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from processes import vqabench

from builders.files.redact import REDACTED, is_secret_key, redact, redact_text, remember_secrets
from builders.llm.settings import LLMSettings
from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer

PASSWORD, TOKEN, HEADER, QUERY = "pa55-word-91f3", "tok-secret-7c2e", "hdr-secret-0b8d", "qkey-secret-55aa"
SECRETS = (PASSWORD, TOKEN, HEADER, QUERY)
EXTRA = {"api_key": TOKEN, "headers": {"Authorization": f"Bearer {HEADER}"}, "reasoning_effort": "low"}


def llm_args(server: ChatServer) -> list[str]:
    url = server.url.replace("http://", f"http://alice:{PASSWORD}@")
    return ["--llm-model", "m", "--llm-base-url", url, "--llm-api-key-env", "none",
            "--llm-extra-body", json.dumps(EXTRA)]  # fmt: skip


def leaks(folder: Path, *texts: str) -> list[str]:
    found = [
        f"{p}: {s}" for p in folder.rglob("*") if p.is_file() for s in SECRETS if s.encode() in p.read_bytes()
    ]
    return found + [f"output: {s}" for text in texts for s in SECRETS if s in text]


def test_evaluate_and_build_record_no_credential(built_samples, tmp_path):
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        evaluated = vqabench(["-v", "bqa", "evaluate", "--data", str(built_samples["bqa"].hub), "--split",
                              "test", "--out", str(tmp_path / "eval" / "p.jsonl"), "--num-frames", "2",
                              *llm_args(server)])  # fmt: skip
        built = vqabench(["-v", "bqa", "build", "--sample", "--limit", "5", "--work", str(tmp_path / "work"),
                          *llm_args(server)])  # fmt: skip
        sent = [r.body for r in server.chat_requests]
    assert evaluated.returncode == 0, evaluated.stderr
    assert built.returncode == 0, built.stderr
    assert sent and all(b["api_key"] == TOKEN for b in sent)  # the request itself is sent as asked
    assert "HTTP Request: POST" in evaluated.stderr  # the -v log ran, with the URL in it
    assert leaks(tmp_path, evaluated.stdout, evaluated.stderr, built.stdout, built.stderr) == []
    recorded = json.loads((tmp_path / "eval" / "p.work" / "eval.json").read_text())["llm"]
    assert recorded["extra_body"] == {**EXTRA, "api_key": REDACTED, "headers": {"Authorization": REDACTED}}
    assert recorded["base_url"].startswith(f"http://{REDACTED}@127.0.0.1:")
    meta = json.loads((tmp_path / "work" / "release" / "meta.json").read_text())
    assert REDACTED in json.dumps(meta)  # the release records the settings, redacted


def test_an_error_naming_the_endpoint_names_no_password(tmp_path):
    done = vqabench(["llm", "check", "--llm-model", "m", "--llm-base-url", f"http://bob:{PASSWORD}@127.0.0.1:9/v1",
                     "--llm-api-key-env", "none", "--llm-max-retries", "0", "--llm-timeout", "5"])  # fmt: skip
    assert done.returncode == 2 and "cannot reach http://***@127.0.0.1:9/v1" in done.stderr, done.stderr
    assert PASSWORD not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("key", "secret"),
    [("api_key", True), ("X-Goog-Api-Key", True), ("apiKey", True), ("Authorization", True), ("access_token", True),
     ("client_secret", True), ("password", True), ("key", True), ("max_tokens", False), ("reasoning_effort", False),
     ("safety_settings", False), ("top_k", False), ("monkey", False)],
)  # fmt: skip
def test_which_keys_hold_credentials(key, secret):
    assert is_secret_key(key) is secret


def test_settings_record_redacted_and_logs_are_scrubbed():
    settings = LLMSettings(
        model="m", base_url=f"https://u:{PASSWORD}@h/v1", extra_body={"token": TOKEN, "n": 2}
    )
    assert settings.cache_identity()["base_url"] == f"https://{REDACTED}@h/v1"
    assert settings.cache_identity()["extra_body"] == {"token": REDACTED, "n": 2}
    assert settings.base_url == f"https://u:{PASSWORD}@h/v1"  # what is sent is unchanged
    remember_secrets({"headers": {"Authorization": f"Bearer {HEADER}"}})
    assert redact_text(f"echo: {TOKEN} {PASSWORD} {HEADER}") == f"echo: {REDACTED} {REDACTED} {REDACTED}"
    assert redact({"a": [{"password": ""}, "http://x:y@h"]}) == {
        "a": [{"password": ""}, f"http://{REDACTED}@h"]
    }
    url = f"https://h/v1beta?key={QUERY}&alt=sse"  # Gemini's native key parameter
    remember_secrets(url)
    assert redact(url) == f"https://h/v1beta?key={REDACTED}&alt=sse" and QUERY not in redact_text(
        f"GET {url}"
    )
