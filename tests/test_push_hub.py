"""``vqabench push`` against a real HTTP Hub on 127.0.0.1 (builders.testing.hub_server): dry run,
one-commit upload, pull request, tag, and every error path, with the token never shown.

Nothing reaches the real Hub: ``HF_ENDPOINT`` (and huggingface_hub's import-time copy of it) point
at the test server, and a guard refuses any connection or name lookup outside the loopback.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hub_helpers import use_hub_endpoint

from builders.cli import main as cli_main
from builders.hub.layout import check_hub_folder
from builders.hub.publish import PushError
from builders.testing.hub_server import HubServer
from marinelife16k.export import export_release
from marinelife16k.sample import write_sample_work_folder

REPO = "org/bench"
SECRET = "hf_SECRETwrite0123456789abcdef"
READ_ONLY = "hf_SECRETread0123456789abcdef"
WRONG = "hf_SECRETwrong0123456789abcdef"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    work = write_sample_work_folder(tmp_path_factory.mktemp("work"))
    out = tmp_path_factory.mktemp("hub") / "MarineLife-16K"
    export_release(work, out, cache_dir=tmp_path_factory.mktemp("cache"))
    return out


def _local_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def hub(monkeypatch, tmp_path, outside_attempts):
    with HubServer(tokens={SECRET: "write", READ_ONLY: "read"}, repos=[REPO]) as server:
        use_hub_endpoint(monkeypatch, server.url, tmp_path / "hf-home")
        monkeypatch.setenv("HF_TOKEN", SECRET)
        yield server
    assert outside_attempts == []


def _push(capsys, caplog, *argv: str) -> tuple[int, str]:
    code = cli_main(["push", *argv])
    captured = capsys.readouterr()
    output = captured.out + captured.err + caplog.text
    for token in (SECRET, READ_ONLY, WRONG):
        assert token not in output
    return code, output


def _commits(hub: HubServer) -> list:
    return [r for r in hub.requests if "/commit/" in r.path]


def test_dry_run_lists_the_operations_and_sends_nothing(hub, folder, capsys, caplog, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")  # a dry run needs no token
    code, out = _push(capsys, caplog, str(folder), REPO, "--dry-run", "--create-pr", "--tag", "v1.1")
    assert code == 0
    for path, data in _local_files(folder).items():
        line = next(line for line in out.splitlines() if line.strip().startswith(f"add {path} ("))
        assert ("KB" in line) if len(data) >= 1024 else f"({len(data)} B)" in line
    assert "config qa: train 134, validation 17, test 52" in out
    assert "one commit onto a pull request against main: 'Release v1.1'" in out
    assert "then tag that commit 'v1.1'" in out and "dry run: nothing was sent" in out
    assert hub.requests == []


def test_push_uploads_exactly_the_folder_in_one_commit_and_tags_it(hub, folder, capsys, caplog, tmp_path):
    code, out = _push(capsys, caplog, str(folder), REPO, "--tag", "v1.1")
    assert code == 0, out
    repo = hub.repos[REPO]
    head = repo.branches["main"]
    stored = hub.files(REPO)
    assert stored.pop(".gitattributes")  # the repo's initial file stays
    assert stored == _local_files(folder)  # every file, byte for byte, nothing else
    assert len(_commits(hub)) == 1 and repo.tags == {"v1.1": head}
    assert f"commit {head}:" in out and "tag v1.1 -> " + head in out
    assert 'datasets.load_dataset("org/bench", revision="v1.1")' in out
    assert 'datasets.load_dataset("org/bench", "videos", revision="v1.1")' in out
    # What the Hub now holds at the tag is a valid release again.
    copy = tmp_path / "from-hub"
    for path, data in hub.files(REPO, "v1.1").items():
        (copy / path).parent.mkdir(parents=True, exist_ok=True)
        (copy / path).write_bytes(data)
    loaded = check_hub_folder(copy, cache_dir=tmp_path / "cache")
    assert {s: len(d) for s, d in loaded["qa"].items()} == {"train": 134, "validation": 17, "test": 52}


def test_create_pr_leaves_main_alone(hub, folder, capsys, caplog):
    before = hub.repos[REPO].branches["main"]
    code, out = _push(capsys, caplog, str(folder), REPO, "--create-pr", "--tag", "v1.2-rc")
    assert code == 0, out
    repo = hub.repos[REPO]
    assert repo.branches["main"] == before and set(hub.files(REPO)) == {".gitattributes"}
    assert [r.query for r in _commits(hub)] == [{"create_pr": ["1"]}]
    pr_commit = repo.pull_requests[1]
    assert set(hub.files(REPO, "refs/pr/1")) - {".gitattributes"} == set(_local_files(folder))
    assert repo.tags == {"v1.2-rc": pr_commit}
    assert "pull request: " in out and "/discussions/1 (revision refs/pr/1" in out


@pytest.mark.parametrize(
    ("token", "failed_at"), [(WRONG, "/api/datasets/org/bench"), (READ_ONLY, "/preupload/")]
)
def test_unauthorised_token_is_a_clear_error_and_never_shown(
    hub, folder, capsys, caplog, monkeypatch, token, failed_at
):
    monkeypatch.setenv("HF_TOKEN", token)
    code, out = _push(capsys, caplog, str(folder), REPO, "--tag", "v1.1")
    assert code == 2
    assert "not authorised to write to org/bench (check HF_TOKEN / hf auth login)" in out
    refused = [r for r in hub.requests if r.status in (401, 403)]
    assert len(refused) == 1 and failed_at in refused[0].path
    assert _commits(hub) == [] and hub.repos[REPO].tags == {}
    assert set(hub.files(REPO)) == {".gitattributes"} and "(nothing was pushed)" in out


def test_verbose_logs_and_traceback_do_not_show_the_token(hub, folder, caplog, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", WRONG)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(PushError) as raised:
        cli_main(["-v", "push", str(folder), REPO])  # -v: debug logs, and the error is raised, not printed
    shown = str(raised.value) + repr(raised.value) + caplog.text
    assert "not authorised to write to org/bench" in shown and "127.0.0.1" in caplog.text
    for token in (SECRET, READ_ONLY, WRONG):
        assert token not in shown
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_missing_repo_is_a_clear_error_unless_created(hub, folder, capsys, caplog):
    code, out = _push(capsys, caplog, str(folder), "org/nope")
    assert code == 2
    assert "dataset repo org/nope does not exist (create it with --create-repo or on the Hub)" in out
    assert hub.writes() == [] and "org/nope" not in hub.repos
    code, out = _push(capsys, caplog, str(folder), "org/nope", "--create-repo")
    assert code == 0, out
    assert hub.repos["org/nope"].private  # private unless --public
    assert "created dataset repo org/nope" in out
    assert set(hub.files("org/nope")) - {".gitattributes"} == set(_local_files(folder))


def test_unreachable_hub_is_a_clear_error(monkeypatch, tmp_path, folder, capsys, caplog, outside_attempts):
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    use_hub_endpoint(monkeypatch, url, tmp_path / "hf-home")
    monkeypatch.setenv("HF_TOKEN", SECRET)
    code, out = _push(capsys, caplog, str(folder), REPO, "--tag", "v1.1")
    assert code == 2
    assert f"cannot reach the Hub at {url}" in out
    assert outside_attempts == []


def test_tag_failure_after_the_commit_names_the_commit(hub, folder, capsys, caplog):
    hub.fail["tag"] = 500
    code, out = _push(capsys, caplog, str(folder), REPO, "--tag", "v2")
    assert code == 2
    head = hub.repos[REPO].branches["main"]
    assert len(_commits(hub)) == 1 and hub.repos[REPO].tags == {}
    assert f"commit {head} landed" in out and "tag 'v2' failed" in out
    assert f"revision='{head}'" in out  # how to load (and tag) what landed


def test_reply_lost_during_the_commit_is_not_called_a_clean_failure(hub, folder, capsys, caplog):
    hub.lose_reply.add("commit")
    code, out = _push(capsys, caplog, str(folder), REPO, "--tag", "v2")
    assert code == 2
    assert "failed during the commit" in out and "may or may not have landed" in out
    assert "nothing was pushed" not in out
    assert set(hub.files(REPO)) - {".gitattributes"} == set(_local_files(folder))  # it did land
    assert hub.repos[REPO].tags == {}  # and the tag was not attempted


def test_taken_tag_stops_before_anything_is_pushed(hub, folder, capsys, caplog):
    assert _push(capsys, caplog, str(folder), REPO, "--tag", "v1")[0] == 0
    head = hub.repos[REPO].branches["main"]
    code, out = _push(capsys, caplog, str(folder), REPO, "--tag", "v1", "--create-pr")
    assert code == 2
    assert f"tag 'v1' already exists in org/bench (at {head})" in out and "nothing was pushed" in out
    assert len(_commits(hub)) == 1 and hub.repos[REPO].pull_requests == {}


def test_invalid_folder_or_no_token_is_refused_before_any_request(
    hub, folder, capsys, caplog, tmp_path, monkeypatch
):
    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    (broken / "MarineLife-16K.py").write_text("# a loading script\n")
    code, out = _push(capsys, caplog, str(broken), REPO)
    assert code == 2 and "loading scripts at the root" in out
    monkeypatch.delenv("HF_TOKEN")
    code, out = _push(capsys, caplog, str(folder), REPO)
    assert code == 2 and "no Hugging Face token: set HF_TOKEN or run `hf auth login`" in out
    assert hub.requests == []


def test_push_in_a_fresh_process_reads_the_environment(folder, tmp_path):
    """The CLI as a user runs it: HF_ENDPOINT and HF_TOKEN read by huggingface_hub at import."""
    with HubServer(tokens={SECRET: "write"}, repos=[REPO]) as server:
        env = {
            **os.environ,
            "HF_ENDPOINT": server.url,
            "HF_TOKEN": SECRET,
            "HF_HUB_OFFLINE": "0",
            "HF_HOME": str(tmp_path / "hf-home"),
        }
        done = subprocess.run(
            [sys.executable, "-m", "builders.cli", "push", str(folder), REPO, "--tag", "v3"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert SECRET not in done.stdout + done.stderr
        assert 'revision="v3"' in done.stdout
        assert set(server.files(REPO, "v3")) - {".gitattributes"} == set(_local_files(folder))
