"""``vqabench llm``: cache statistics, reply export/import, endpoint check."""

from __future__ import annotations

import argparse
import json

from builders.cli import main
from builders.llm import LLMClient, LLMRequest, LLMSettings, add_llm_arguments, client_from_args, user_message
from builders.llm.cache import ReplyCache


def _fill(server, cache, n=3):
    settings = LLMSettings(model="test-model", base_url=server.url, api_key_env=None, progress=False)
    requests = [LLMRequest([user_message(f"q{i}")], prompt=("cli_prompt", "2")) for i in range(n)]
    with LLMClient(settings, cache_path=cache) as client:
        assert all(r.ok for r in client.run(requests))


def test_stats_export_import(chat_server, tmp_path, capsys):
    cache = tmp_path / "cache.sqlite"
    _fill(chat_server, cache)
    assert main(["llm", "cache-stats", str(cache), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["replies"] == 3 and stats["prompts"] == {"cli_prompt@2": 3}
    assert stats["models"] == {"test-model-2026-01": 3}

    replies = tmp_path / "out" / "replies.jsonl"
    assert main(["llm", "export-replies", str(cache), str(replies)]) == 0
    assert "wrote 3 replies" in capsys.readouterr().out
    assert len(replies.read_text().splitlines()) == 3

    copy = tmp_path / "copy.sqlite"
    assert main(["llm", "import-replies", str(replies), str(copy)]) == 0
    with ReplyCache(cache) as a, ReplyCache(copy) as b:
        assert list(a) == list(b)
    assert main(["llm", "cache-stats", str(copy)]) == 0
    assert "3 replies" in capsys.readouterr().out


def test_check_and_errors(chat_server, tmp_path, capsys):
    args = [
        "llm",
        "check",
        "--llm-model",
        "m",
        "--llm-base-url",
        chat_server.url,
        "--llm-api-key-env",
        "none",
    ]
    assert main(args) == 0
    assert "model test-model-2026-01 answered" in capsys.readouterr().out
    assert main(["llm", "cache-stats", str(tmp_path / "missing.sqlite")]) == 2
    assert "no reply cache at" in capsys.readouterr().err
    chat_server.api_key = "expected"
    assert main([*args[:-1], "VQABENCH_TEST_UNSET_VARIABLE"]) == 2
    assert "VQABENCH_TEST_UNSET_VARIABLE" in capsys.readouterr().err


def test_pipeline_options(tmp_path, monkeypatch):
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    monkeypatch.setenv("VQABENCH_LLM_MODEL", "env-model")
    monkeypatch.setenv("VQABENCH_LLM_MAX_CONCURRENCY", "3")
    args = parser.parse_args(["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-api-key-env", "none"])
    with client_from_args(args, default_cache=tmp_path / "default.sqlite") as client:
        assert (client.settings.model, client.settings.max_concurrency, client.settings.api_key_env) == (
            "env-model",
            3,
            None,
        )
        assert client.mode == "normal" and client.cache.path == str(tmp_path / "default.sqlite")
    args = parser.parse_args(
        ["--llm-model", "cli-model", "--llm-mode", "refresh", "--llm-cache", str(tmp_path / "c")]
    )
    with client_from_args(args) as client:
        assert client.settings.model == "cli-model" and client.mode == "refresh"
        assert client.cache.path == str(tmp_path / "c")
