"""``vqabench llm``: cache statistics, reply export/import, endpoint check."""

from __future__ import annotations

import argparse
import json

import pytest

from builders.cli import main
from builders.llm import (
    LLMClient,
    LLMRequest,
    LLMSettings,
    add_llm_arguments,
    client_from_args,
    settings_from_args,
    user_message,
)
from builders.llm.cache import ReplyCache
from builders.llm.cli import SETTING_OPTIONS, SHOWN_DEFAULTS


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
    assert main(["llm", "export-replies", str(cache), "--out", str(replies)]) == 0
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


def test_every_setting_is_a_flag_over_the_environment(monkeypatch, capsys):
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    for name, value in {"MODEL": "env-model", "TEMPERATURE": "0.9", "SEED": "7", "TIMEOUT": "9"}.items():
        monkeypatch.setenv(f"VQABENCH_LLM_{name}", value)
    args = parser.parse_args([
        "--llm-temperature", "none", "--llm-seed", "3", "--llm-max-tokens", "256", "--llm-timeout", "30",
        "--llm-max-retries", "1", "--llm-max-validation-retries", "0", "--llm-concurrency", "2",
        "--llm-extra-body", '{"reasoning_effort": "low"}',
    ])  # fmt: skip
    s = settings_from_args(args)
    assert (s.model, s.temperature, s.seed, s.max_tokens, s.timeout) == ("env-model", None, 3, 256, 30.0)
    assert (s.max_retries, s.max_validation_retries, s.max_concurrency) == (1, 0, 2)
    assert s.extra_body == {"reasoning_effort": "low"}
    assert settings_from_args(parser.parse_args([])).temperature == 0.9  # unset: the variable
    assert settings_from_args(parser.parse_args(["--llm-extra-body", "none"])).extra_body is None
    for bad, message in (
        (["--llm-extra-body", "{oops"], "not valid JSON"),
        (["--llm-extra-body", "[1]"], "expected a JSON object"),
        (["--llm-seed", "abc"], "expected an integer or 'none'"),
    ):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)
        assert message in capsys.readouterr().err
    help_text = " ".join(parser.format_help().split())
    assert "'none' for keyless local servers like vLLM or Ollama" in help_text


def test_every_llm_command_has_the_setting_flags(capsys):
    commands = [["llm", "check"], ["judge", "score"], ["marinelife", "judge"], ["marinelife", "evaluate"],
                ["bqa", "build"], ["bqa", "evaluate"], ["marinelife", "build"]]  # fmt: skip
    flags = ("--llm-max-tokens", "--llm-temperature", "--llm-seed", "--llm-timeout", "--llm-max-retries",
             "--llm-extra-body", "--llm-api-key-env")  # fmt: skip
    for command in commands:
        with pytest.raises(SystemExit) as done:
            main([*command, "--help"])
        assert done.value.code == 0
        text = capsys.readouterr().out
        assert all(flag in text for flag in flags), command


def test_missing_key_error_names_the_keyless_option():
    settings = LLMSettings(model="m", api_key_env="VQABENCH_TEST_UNSET_VARIABLE")
    with pytest.raises(
        RuntimeError, match="keyless local server like vLLM or Ollama.*--llm-api-key-env none"
    ):
        settings.read_api_key()


def test_help_shows_the_settings_defaults():
    assert {f: LLMSettings.model_fields[f].default for f in SHOWN_DEFAULTS} == SHOWN_DEFAULTS
    assert set(SHOWN_DEFAULTS) | {"model"} == set(SETTING_OPTIONS.values())
    assert set(SETTING_OPTIONS.values()) <= set(LLMSettings.model_fields)
