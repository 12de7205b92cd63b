"""``vqabench push`` makes the repo's data files exactly the export's and verifies what it pushed;
it never uploads a link, a non-regular file or code (issue 15, cases 2 and 5).

Against the real local Hub (builders.testing.hub_server) over real sockets, with the same
environment guards as tests/test_push_hub.py; the pushes run in-process through the CLI entry point.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
from pathlib import Path

import datasets
import pytest
from hub_helpers import use_endpoint
from test_push_hub import SECRET, _local_files

from builders.cli import main as cli_main
from builders.hub.layout import check_hub_folder
from builders.testing.hub_server import HubServer
from marinelife16k.export import export_release
from marinelife16k.sample import write_sample_work_folder

REPO = "org/bench"
EXTRA_REPOS = ("naist-nlp/BQA",)  # for tests/test_push_sample_guard.py, which shares the fixture
V1_SHARD_BYTES = 70_000  # qa/train and videos/train, videos/test in several shards; the rest in one


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, Path]:
    work = write_sample_work_folder(tmp_path_factory.mktemp("work"))
    root = tmp_path_factory.mktemp("exports")
    cache = tmp_path_factory.mktemp("cache")
    export_release(work, root / "v1", cache_dir=cache, max_shard_bytes=V1_SHARD_BYTES)
    export_release(work, root / "v2", cache_dir=cache)
    return {"v1": root / "v1", "v2": root / "v2"}


@pytest.fixture
def hub(monkeypatch, tmp_path, outside_attempts):  # noqa: F811 - the imported fixture
    with HubServer(tokens={SECRET: "write"}, repos=[REPO, *EXTRA_REPOS]) as server:
        use_endpoint(monkeypatch, server.url, tmp_path / "hf-home")
        monkeypatch.setenv("HF_TOKEN", SECRET)
        yield server
    assert outside_attempts == []


def push(capsys, *argv: str) -> tuple[int, str]:
    code = cli_main(["push", *argv, "--allow-sample"])  # the folders are the bundled sample's release
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err
    return code, captured.out + captured.err


def rows_at(hub: HubServer, revision: str, into: Path) -> dict[str, dict[str, int]]:
    """Rows per config and split of what the Hub holds at ``revision``, loaded with load_dataset."""
    for path, data in hub.files(REPO, revision).items():
        (into / path).parent.mkdir(parents=True, exist_ok=True)
        (into / path).write_bytes(data)
    out = {}
    for config in ("qa", "videos"):
        loaded = datasets.load_dataset(str(into), config, cache_dir=str(into.parent / f"cache-{into.name}"))
        out[config] = {split: len(ds) for split, ds in loaded.items()}
    return out


def data_files(files) -> set[str]:
    return {p for p in files if p.startswith("data/")}


def test_a_shard_count_change_leaves_exactly_the_new_shards(hub, exports, capsys, tmp_path):
    v1, v2 = exports["v1"], exports["v2"]
    assert len(data_files(_local_files(v1))) > len(data_files(_local_files(v2))) == 6
    code, out = push(capsys, str(v1), REPO, "--tag", "v1")
    assert code == 0, out
    assert data_files(hub.files(REPO, "v1")) == data_files(_local_files(v1))

    stale = sorted(data_files(_local_files(v1)) - data_files(_local_files(v2)))
    writes = len(hub.writes())
    code, dry = push(capsys, str(v2), REPO, "--tag", "v2", "--dry-run")
    assert code == 0, dry
    assert [line.split()[1] for line in dry.splitlines() if line.strip().startswith("delete ")] == stale
    assert f"{len(stale)} deletion(s)" in dry and len(hub.writes()) == writes

    code, out = push(capsys, str(v2), REPO, "--tag", "v2")
    assert code == 0, out
    at_v2 = hub.files(REPO, "v2")
    assert {p: b for p, b in at_v2.items() if p != ".gitattributes"} == _local_files(v2)  # exactly the export
    assert f"deleted {len(stale)} file(s)" in out
    commits = [r for r in hub.writes() if "/commit/" in r.path]
    assert len(commits) == 2  # the deletions went in the same commit as the upload
    expected = {c: {s: len(d) for s, d in dd.items()} for c, dd in check_hub_folder(v2).items()}
    assert (
        rows_at(hub, "v2", tmp_path / "at-v2")
        == expected
        == {
            "qa": {"train": 134, "validation": 17, "test": 52},
            "videos": {"train": 16, "validation": 2, "test": 6},
        }
    )
    verified = re.search(
        r"verified: revision (\w+) downloaded, every file's sha256 equal to the folder's, loaded with "
        r"load_dataset \((.*)\)",
        out,
    )
    assert verified and hub.repos[REPO].tags["v2"].startswith(verified.group(1))
    assert "qa: train 134, validation 17, test 52" in verified.group(2)
    # the revision was really fetched back: a HEAD/GET of every file at the new commit
    fetched = {r.path for r in hub.requests if "/resolve/" in r.path}
    assert {f"/datasets/{REPO}/resolve/{hub.repos[REPO].tags['v2']}/{p}" for p in at_v2} <= fetched


def test_files_outside_the_release_are_kept(hub, exports, capsys):
    from huggingface_hub import CommitOperationAdd, HfApi

    HfApi(endpoint=hub.url, token=SECRET).create_commit(
        REPO, [CommitOperationAdd("LICENSE", b"CC-BY-4.0"), CommitOperationAdd("old/extra.parquet", b"x")],
        commit_message="by hand", repo_type="dataset",
    )  # fmt: skip
    code, out = push(capsys, str(exports["v2"]), REPO)
    assert code == 0, out
    stored = hub.files(REPO)
    assert stored["LICENSE"] == b"CC-BY-4.0"  # not release data: left alone
    assert "old/extra.parquet" not in stored  # a data file the release does not have: deleted


def test_a_revision_that_does_not_load_back_is_reported(hub, exports, capsys, monkeypatch):
    """The verification really reads the Hub: a server that corrupts a shard on the way is caught."""
    real_send = HubServer._send_file

    def send_corrupt(self, handler, method, path, role):
        with self._lock:
            for commit in self.repos[REPO].commits.values():
                for name in list(commit.files):
                    if name.endswith("train-00000-of-00001.parquet") and "/qa/" in name:
                        commit.files[name] = commit.files[name][: len(commit.files[name]) // 2]
        return real_send(self, handler, method, path, role)

    monkeypatch.setattr(HubServer, "_send_file", send_corrupt)
    code, out = push(capsys, str(exports["v2"]), REPO, "--tag", "v9")
    assert code == 2, out
    assert "landed" in out and "that revision is not this folder, so it was not tagged" in out
    assert hub.repos[REPO].tags == {}


@pytest.mark.parametrize(
    "make, problem",
    [
        (
            lambda f: os.symlink("/etc/passwd", f / "data" / "qa" / "passwd"),
            "a symbolic link (to /etc/passwd)",
        ),
        (lambda f: os.symlink(f.parent / "key", f / "data" / "id_ed25519"), "a symbolic link"),
        (lambda f: os.mkfifo(f / "data" / "pipe"), "not a regular file"),
        (lambda f: (f / "data" / "qa" / "helper.py").write_text("print(1)"), "a Python file"),
        (lambda f: (f / "data" / "__pycache__").mkdir(), "a Python cache folder"),
        (lambda f: os.symlink(f / "data" / "qa", f / "data" / "linked-dir"), "a symbolic link"),
    ],
)
def test_links_special_files_and_code_anywhere_are_refused(hub, exports, capsys, tmp_path, make, problem):
    folder = tmp_path / "release"
    shutil.copytree(exports["v2"], folder)
    (tmp_path / "key").write_text("-----BEGIN OPENSSH PRIVATE KEY-----")
    make(folder)
    code, out = push(capsys, str(folder), REPO, "--dry-run")
    assert code == 2 and "refusing to push it" in out and problem in out, out
    code, out = push(capsys, str(folder), REPO)
    assert code == 2 and hub.writes() == [] and set(hub.files(REPO)) == {".gitattributes"}


def test_a_dry_run_that_cannot_read_the_repo_says_so(hub, exports, capsys):
    code, out = push(capsys, str(exports["v2"]), "org/missing", "--dry-run")
    assert code == 1, out
    assert "delete: the repo's data files this release lacks" in out
    assert "the deletions are unknown: dataset repo org/missing does not exist" in out
    assert hub.writes() == []


@pytest.mark.parametrize("offline", ["no connection", "HF_HUB_OFFLINE=1"])
def test_an_offline_dry_run_checks_the_folder_and_says_what_it_could_not_check(
    monkeypatch, tmp_path, exports, capsys, offline, outside_attempts
):
    """Issue 29: an offline dry run exited 1 whatever the folder; now the local checks decide."""
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    use_endpoint(monkeypatch, url, tmp_path / "hf-home")
    if offline == "HF_HUB_OFFLINE=1":
        from huggingface_hub import constants

        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    code, out = push(capsys, str(exports["v2"]), REPO, "--dry-run")
    assert code == 0, out
    assert "the folder passed every local check. Not checked against the Hub" in out
    assert (
        "HF_HUB_OFFLINE is set" if offline == "HF_HUB_OFFLINE=1" else f"cannot reach the Hub at {url}"
    ) in out
    # A folder that fails a local check still fails offline.
    broken = tmp_path / "broken"
    shutil.copytree(exports["v2"], broken)
    (broken / "data" / "qa" / "helper.py").write_text("print(1)")
    code, out = push(capsys, str(broken), REPO, "--dry-run")
    assert code == 2 and "a Python file" in out
    assert outside_attempts == []
