"""``vqabench push`` against a real HTTP Hub on 127.0.0.1 (builders.testing.hub_server): dry run,
one-commit upload, pull request, tag, and every error path, with the token never shown; and content,
not presence, verified (issue 32, case 6 and case 11's interrupted push): a Hub that stores a shard with
one byte changed, two push processes at once, a push killed right after its tag landed, a damaged
shard in a local folder read by ``report``.

Nothing reaches the real Hub: ``HF_ENDPOINT`` (and huggingface_hub's import-time copy of it) point
at the test server, and a guard refuses any connection or name lookup outside the loopback.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hub_helpers import use_endpoint

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
    """The release's files (the exporter's hidden marker is not part of it and is never pushed)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


@pytest.fixture
def hub(monkeypatch, tmp_path, outside_attempts):
    with HubServer(tokens={SECRET: "write", READ_ONLY: "read"}, repos=[REPO]) as server:
        use_endpoint(monkeypatch, server.url, tmp_path / "hf-home")
        monkeypatch.setenv("HF_TOKEN", SECRET)
        yield server
    assert outside_attempts == []


def _push(capsys, caplog, *argv: str) -> tuple[int, str]:
    code = cli_main(["push", *argv, "--allow-sample"])  # the folder is the bundled sample's release
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
    # Issue 15 case 2: the dry run reads (GET only) the repo's file list to show the deletions; it
    # still sends nothing that changes the repo.
    assert hub.writes() == [] and {r.method for r in hub.requests} == {"GET"}
    assert "0 deletion(s)" in out


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
        cli_main(
            ["-v", "push", str(folder), REPO, "--allow-sample"]
        )  # -v: debug logs, and the error is raised, not printed
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
    use_endpoint(monkeypatch, url, tmp_path / "hf-home")
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


def test_taken_tag_stops_before_anything_is_pushed(hub, folder, capsys, caplog, tmp_path):
    assert _push(capsys, caplog, str(folder), REPO, "--tag", "v1")[0] == 0
    head = hub.repos[REPO].branches["main"]
    other = tmp_path / "other"  # another release: one line more in its card
    shutil.copytree(folder, other)
    (other / "README.md").write_text((folder / "README.md").read_text() + "\nA later revision.\n")
    code, out = _push(capsys, caplog, str(other), REPO, "--tag", "v1", "--create-pr")
    assert code == 2
    assert f"tag 'v1' already exists in org/bench (at {head}) and does not hold this folder" in out
    assert "README.md: sha256" in out and "nothing was pushed" in out
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
            [
                sys.executable,
                "-m",
                "builders.cli",
                "push",
                str(folder),
                REPO,
                "--tag",
                "v3",
                "--allow-sample",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert SECRET not in done.stdout + done.stderr
        assert 'revision="v3"' in done.stdout
        assert set(server.files(REPO, "v3")) - {".gitattributes"} == set(_local_files(folder))


# --- content, not presence (issue 32) ---------------------------------------------------------------


def _flip_in_choices(path) -> None:
    """Flip the high bit of the first byte of a label stored in the ``choices`` column chunk."""
    meta = pq.ParquetFile(path).metadata
    index = [meta.schema.column(i).path for i in range(meta.num_columns)].index("choices.list.element")
    column = meta.row_group(0).column(index)
    start = column.dictionary_page_offset or column.data_page_offset
    data = bytearray(path.read_bytes())
    chunk = bytes(data[start : start + column.total_compressed_size])
    at = start + min(
        chunk.find(label) for label in (b"Happiness", b"Sadness", b"Anger", b"Pleasure") if label in chunk
    )
    data[at] ^= 0x80
    path.write_bytes(bytes(data))


def test_a_byte_changed_on_the_hub_fails_the_push_before_its_tag(hub, folder, capsys, caplog):
    """The Hub stores a shard and the card with one byte changed each: the push must name both files
    and leave the commit untagged (before, it tagged first, and a change that still loads was "verified")."""
    damaged = "data/qa/train-00000-of-00001.parquet"

    def damage(path: str, data: bytes) -> bytes:
        changed = bytearray(data)
        if path == damaged:
            changed[len(changed) // 2] ^= 0x01
        elif path == "README.md":  # a letter of the card's prose: it still loads, the old check passed it
            changed[-2] ^= 0x01
        return bytes(changed)

    hub.damage = damage
    code, out = _push(capsys, caplog, str(folder), REPO, "--tag", "v1")
    assert code == 2, out
    head = hub.repos[REPO].branches["main"]
    assert f"commit {head} landed" in out and "that revision is not this folder, so it was not tagged" in out
    assert f"{damaged}: sha256" in out and "README.md: sha256" in out and "on the Hub" in out
    assert "verified:" not in out and hub.repos[REPO].tags == {}

    hub.damage = None  # the damage was on the way: pushing again replaces it, then tags
    code, out = _push(capsys, caplog, str(folder), REPO, "--tag", "v1")
    assert code == 0, out
    assert hub.files(REPO, "v1")[damaged] == (folder / damaged).read_bytes()


def _push_process(folder, hf_home, url: str, *args: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "HF_ENDPOINT": url,
        "HF_TOKEN": SECRET,
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(hf_home),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "builders.cli", "push", str(folder), REPO, "--allow-sample", *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def test_two_pushes_at_once_cannot_both_land(folder, built_samples, tmp_path):
    """Two ``vqabench push`` processes, two releases, one repo: the Hub holds both commit requests
    until both have arrived (so both started from the same main). One lands; the other is refused
    by its parent_commit and says nothing of it landed (before, both landed and main mixed the two
    releases' shards)."""
    other = built_samples["bqa"].hub
    with HubServer(tokens={SECRET: "write"}, repos=[REPO]) as server:
        server.commit_barrier = threading.Barrier(2, timeout=120)
        pushes = [
            _push_process(folder, tmp_path / "a", server.url, "--tag", "ml"),
            _push_process(other, tmp_path / "b", server.url, "--tag", "bqa"),
        ]
        outputs = [p.communicate(timeout=300)[0] for p in pushes]
        codes = [p.returncode for p in pushes]
        assert sorted(codes) == [0, 2], outputs
        lost = outputs[codes.index(2)]
        assert "another commit landed on main of org/bench after" in lost and "nothing of it landed" in lost
        assert "(nothing was pushed)" in lost
        won = [folder, other][codes.index(0)]
        repo = server.repos[REPO]
        assert len(repo.commits) == 2  # the initial commit and one push
        assert set(server.files(REPO)) - {".gitattributes"} == set(_local_files(won))
        assert list(repo.tags) == [["ml", "bqa"][codes.index(0)]]


def test_a_push_killed_after_its_tag_is_verified_by_the_rerun(folder, tmp_path):
    """The push process is killed the moment its tag is stored (before it could say anything). The
    same command again finds the tag, downloads that revision, compares every file and reports the push
    done; a rerun with another folder under that tag is refused, naming what differs."""
    with HubServer(tokens={SECRET: "write"}, repos=[REPO]) as server:
        process: list[subprocess.Popen] = []

        def kill_after_tag(kind: str) -> None:
            if kind == "tag":
                os.kill(process[0].pid, signal.SIGKILL)
                process[0].wait()

        server.after_write = kill_after_tag
        process.append(_push_process(folder, tmp_path / "hf", server.url, "--tag", "v1"))
        killed = process[0].communicate(timeout=300)[0]
        assert process[0].returncode == -signal.SIGKILL, killed
        tagged = server.repos[REPO].tags["v1"]
        server.after_write = None

        rerun = _push_process(folder, tmp_path / "hf", server.url, "--tag", "v1")
        output = rerun.communicate(timeout=300)[0]
        assert rerun.returncode == 0, output
        assert f"already pushed: tag v1 -> commit {tagged} holds exactly this folder" in output
        assert (
            f"verified: revision {tagged[:12]} downloaded, every file's sha256 equal to the folder's"
            in output
        )
        assert len([r for r in server.requests if "/commit/" in r.path]) == 1  # nothing pushed again

        other = tmp_path / "other"
        shutil.copytree(folder, other)
        (other / "README.md").write_text((folder / "README.md").read_text() + "\nA later revision.\n")
        refused = _push_process(other, tmp_path / "hf", server.url, "--tag", "v1")
        output = refused.communicate(timeout=300)[0]
        assert refused.returncode == 2, output
        assert "tag 'v1' already exists" in output and "README.md: sha256" in output


def test_a_damaged_shard_is_named_by_report_and_refused_by_push(built_samples, tmp_path, capsys, caplog, hub):
    """One bit flipped in a label of a shard's ``choices``: ``load_dataset`` does not notice, so the
    old check let push through and ``report`` later failed on a bare UTF-8 error naming no file; the
    card's checksums name the shard for both."""
    folder = tmp_path / "BQA"
    shutil.copytree(built_samples["bqa"].hub, folder)
    shard = folder / "data" / "default" / "test-00000-of-00001.parquet"
    _flip_in_choices(shard)
    ids = [
        i
        for f in sorted(shard.parent.glob("*.parquet"))
        for i in pq.read_table(f, columns=["id"])["id"].to_pylist()
    ]
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(f'{{"id": "{i}", "raw_output": "Anger"}}\n' for i in ids))
    code = cli_main(
        [
            "report",
            "bqa",
            "--data",
            str(folder),
            "--predictions",
            f"m={predictions}",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"{shard}: its content changed since the export" in err  # the card's sha256 (issue 37)

    code, out = _push(capsys, caplog, str(folder), REPO, "--tag", "v1")
    assert code == 2 and f"{shard}: its content changed since the export" in out
    assert _commits(hub) == []
