"""LLM faults against every command that talks to an LLM (issue 37): the rows the fault matrix gets
for a compressed bomb and a server echoing credentials. The commands are read from the CLI (every one
with ``--llm-base-url``), so a new LLM command must join :data:`ARGS` or this file fails.

Each row runs the command in this process against the local chat server:

* ``bomb``: every reply is a 130 KB gzip body decoding to 128 MB, under ``--llm-max-reply-mb 1``: the
  command refuses it at the decoded cap ("reply too large ... decoded (gzip)") and exits non-zero
  (its memory, measured in a process of its own: tests/test_llm_reply_bombs.py);
* ``echo``: the server refuses every request with a 401 that echoes the credentials it got, the base
  URL carries a ``user:password`` and the key variable a secret: neither the key, nor the password,
  nor its base64 reaches stdout, stderr or any file the command wrote.
"""

from __future__ import annotations

import argparse
import base64
from pathlib import Path

import pytest
from test_judge_item_binding import write_predictions

from builders.cli import build_parser
from builders.cli import main as cli_main
from builders.testing.chat_server import ChatServer, Fault


def llm_commands() -> list[tuple[str, ...]]:
    """Every command of the CLI that has ``--llm-base-url``."""

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, (*path, name))
        if any("--llm-base-url" in a.option_strings for a in parser._actions):
            yield path

    return sorted(walk(build_parser(), ()))


def marine_predictions(hub: Path, folder: Path) -> Path:
    """A ``marinelife evaluate`` output to judge (answers from the server's default replies)."""
    out = folder / "marine.jsonl"
    with ChatServer(model=None) as server:
        assert cli_main(["marinelife", "evaluate", "--data", str(hub), "--split", "test", "--out", str(out),
                         "--num-frames", "2", "--llm-model", "m", "--llm-base-url", server.url,
                         "--llm-api-key-env", "none"]) == 0  # fmt: skip
    return out


def marine_judge(hub: Path, folder: Path) -> list[str]:
    return ["marinelife", "judge", str(marine_predictions(hub, folder)), "--out", str(folder / "judged.json")]


def evaluate(benchmark: str, hub: Path, folder: Path, *extra: str) -> list[str]:
    return [benchmark, "evaluate", "--data", str(hub), "--split", "test", "--num-frames", "2", "--out",
            str(folder / "p.jsonl"), *extra]  # fmt: skip


#: Per command, its arguments but the LLM ones: ``(samples, folder) -> args``.
ARGS = {
    ("bqa", "build"): lambda s, f: ["bqa", "build", "--sample", "--limit", "2", "--work", str(f / "work")],
    ("bqa", "evaluate"): lambda s, f: evaluate("bqa", s["bqa"].hub, f, "--limit", "2"),
    ("judge", "score"): lambda s, f: ["judge", "score", str(write_predictions(f / "j.jsonl"))],
    ("llm", "check"): lambda s, f: ["llm", "check"],
    ("marinelife", "build"): lambda s, f: ["marinelife", "build", "--sample", "--work", str(f / "work")],
    ("marinelife", "evaluate"): lambda s, f: evaluate("marinelife", s["marinelife16k"].hub, f),
    ("marinelife", "judge"): lambda s, f: marine_judge(s["marinelife16k"].hub, f),
}


def run_row(command: tuple[str, ...], samples, folder: Path, url: str, *llm: str) -> int:
    """The command's exit status, run with the LLM options ``llm`` against ``url``."""
    cache = () if command == ("llm", "check") else ("--llm-cache", str(folder / "cache.sqlite"))
    return cli_main([*ARGS[command](samples, folder), "--llm-model", "m", "--llm-base-url", url,
                     "--llm-max-retries", "0", *cache, *llm])  # fmt: skip


#: LLM commands without these rows, and why (a new command joins ARGS, or says here why not).
NOT_ROWED = {
    (
        "llm",
        "batch",
        "cancel",
    ): "sends only Batch API cancel calls (no chat reply to bomb); builders.llm.batch.api uses the chat "
    "path's bounded transport: its bomb row is tests/test_batch_download_cap.py",
}


def test_every_llm_command_of_the_cli_has_its_rows():
    assert llm_commands() == sorted([*ARGS, *NOT_ROWED])


@pytest.mark.parametrize("command", sorted(ARGS), ids="-".join)
def test_a_compressed_bomb_is_refused_at_the_decoded_cap(command, built_samples, tmp_path, capsys):
    with ChatServer(model=None) as server:
        server.handler = lambda body: Fault.bomb(128 << 20)
        code = run_row(command, built_samples, tmp_path, server.url, "--llm-api-key-env", "none",
                       "--llm-max-reply-mb", "1")  # fmt: skip
        asked = len(server.chat_requests)
    output = "".join(capsys.readouterr())
    assert code != 0 and asked, output
    assert "reply too large: the reply body decoded (gzip) grew past 1 MB" in output, output


USER, PASSWORD, KEY = "ops", "pw-3c9e-row", "sk-row-secret-0123456789abcdef"


@pytest.mark.parametrize("command", sorted(ARGS), ids="-".join)
def test_a_server_echoing_credentials_leaks_none(command, built_samples, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROW_KEY", KEY)
    with ChatServer(model=None, api_key="another-key") as server:  # 401s echo the key they got
        url = server.url.replace("http://", f"http://{USER}:{PASSWORD}@")
        code = run_row(command, built_samples, tmp_path, url, "--llm-api-key-env", "ROW_KEY")
        refused = [r for r in server.chat_requests if r.status == 401]
    output = "".join(capsys.readouterr())
    assert code != 0 and refused, output
    secrets = (KEY, PASSWORD, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode())
    leaks = [
        f"{p}: {s}"
        for p in tmp_path.rglob("*")
        if p.is_file()
        for s in secrets
        if s.encode() in p.read_bytes()
    ]
    assert leaks + [f"output: {s}" for s in secrets if s in output] == []
