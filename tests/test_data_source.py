"""``--data`` by Hub repo id at a revision, against the real local Hub server
(builders.testing.hub_server): evaluate at a tag, report and judge by repo id, offline from the
cache, the recorded repo id and resolved commit, and clear errors. Nothing reaches the real Hub."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hub_helpers import use_endpoint

from builders.cli import main as cli_main
from builders.files.jsonio import read_jsonl, write_jsonl_atomic
from builders.hub.source import DataSourceError, folder_fingerprint, resolve_data
from builders.scripted.baseline_responder import BaselineModel, ScriptedJudge
from builders.testing.hub_server import HubServer
from builders.testing.samples.record_marinelife_baseline import oracle
from builders.video.frame_spec import FrameSpec
from marinelife16k.export import export_release
from marinelife16k.sample import write_sample_work_folder
from marinelife16k.vocabulary import MULTIPLE_CHOICE

REPO = "org/marine"
SECRET = "hf_SECRETwrite0123456789abcdef"
# What every source of the bundled sample's release records besides where it is: that it is a sample
# (the card says so), so that nothing built on it is published by accident (issue 29).
SAMPLE = {
    "sample": "built from the bundled MarineLife-16K sample (synthetic clips), not from the real footage"
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, Path]:
    work = write_sample_work_folder(tmp_path_factory.mktemp("work"))
    out = tmp_path_factory.mktemp("hub") / "MarineLife-16K"
    export_release(work, out, cache_dir=tmp_path_factory.mktemp("cache"))
    return work, out


@pytest.fixture
def hub(monkeypatch, tmp_path, outside_attempts, exported, capsys):
    """The exported folder pushed as v1.1, then main moved on by a commit that changes the card."""
    with HubServer(tokens={SECRET: "write"}, repos=[REPO]) as server:
        use_endpoint(monkeypatch, server.url, tmp_path / "hf-home")
        monkeypatch.setenv("HF_TOKEN", SECRET)
        assert cli_main(["push", str(exported[1]), REPO, "--tag", "v1.1", "--allow-sample"]) == 0
        changed = tmp_path / "changed"
        shutil.copytree(exported[1], changed)
        (changed / "README.md").write_text((changed / "README.md").read_text() + "\nA later note.\n")
        assert cli_main(["push", str(changed), REPO, "--allow-sample"]) == 0
        capsys.readouterr()
        yield server
    assert outside_attempts == []


def _tag_commit(hub: HubServer) -> str:
    return hub.repos[REPO].tags["v1.1"]


def test_repo_id_at_a_tag_resolves_to_the_tagged_commit(hub, tmp_path):
    tagged = resolve_data(REPO, "v1.1")
    assert tagged.commit == _tag_commit(hub) != hub.repos[REPO].branches["main"]
    assert tagged.provenance() == {"repo_id": REPO, "revision": "v1.1", "commit": _tag_commit(hub), **SAMPLE}
    assert resolve_data(f"{REPO}@v1.1") == tagged  # REPO@REV says the same
    # The files are those of the tag (the later card note is not there), in huggingface_hub's cache.
    assert "A later note." not in (tagged.folder / "README.md").read_text()
    assert str(tagged.folder).startswith(str(tmp_path / "hf-home" / "hub"))
    assert "A later note." in (resolve_data(REPO).folder / "README.md").read_text()


def test_evaluate_by_repo_id_at_a_tag_records_repo_and_commit(hub, exported, chat_server, tmp_path, capsys):
    work, _ = exported
    chat_server.handler = BaselineModel(marine_videos=oracle(work, FrameSpec(fps=None, num_frames=8)))
    out = tmp_path / "m.jsonl"
    llm = ["--llm-model", "scripted-baseline", "--llm-base-url", chat_server.url, "--llm-api-key-env", "none"]
    argv = [
        "marinelife",
        "evaluate",
        "--data",
        REPO,
        "--revision",
        "v1.1",
        "--split",
        "test",
        "--out",
        str(out),
    ]
    assert cli_main([*argv, *llm]) == 0, capsys.readouterr()
    lines = read_jsonl(out)
    data = {"repo_id": REPO, "revision": "v1.1", "commit": _tag_commit(hub), **SAMPLE}
    assert lines and all(line["provenance"]["data"] == data for line in lines)
    eval_json = json.loads((tmp_path / "m.work" / "eval.json").read_text())
    assert eval_json["data"]["data"] == data  # the recorded run options keep the repo id and commit
    # The same answers as from the local folder the tag was pushed from.
    local = tmp_path / "local.jsonl"
    assert (
        cli_main([*argv[:2], "--data", str(exported[1]), "--split", "test", "--out", str(local), *llm]) == 0
    )
    assert [(p["question_id"], p["raw_output"]) for p in read_jsonl(local)] == [
        (p["question_id"], p["raw_output"]) for p in lines
    ]

    # Report by repo id: metrics.json names the repo, the tag and its commit.
    report = tmp_path / "report"
    assert cli_main(["report", "marinelife", "--data", f"{REPO}@v1.1", "--predictions", f"m={out}",
                     "--out", str(report)]) == 0  # fmt: skip
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["provenance"]["dataset"] == data
    assert metrics["models"]["m"]["provenance"]["data"] == data
    assert f"{REPO}@v1.1 (commit {_tag_commit(hub)[:12]})" in (report / "report.md").read_text()


def test_judge_a_hand_written_file_joined_by_repo_id(hub, chat_server, tmp_path, capsys):
    """A researcher's own file ({question_id, raw_output}) is judged with --data, no KeyError."""
    from marinelife16k.data import open_split

    opened = open_split(resolve_data(REPO, "v1.1").folder, "test", check_videos=False)
    open_ended = [r for r in opened.rows if r["question_format"] != MULTIPLE_CHOICE]
    mine = tmp_path / "mine.jsonl"
    write_jsonl_atomic(
        mine,
        [{"question_id": r["question_id"], "raw_output": f"A guess about {r['id']}."} for r in open_ended],
    )
    chat_server.handler = ScriptedJudge()
    judged = tmp_path / "judge.json"
    llm = ["--llm-model", "scripted-judge", "--llm-base-url", chat_server.url, "--llm-api-key-env", "none",
           "--llm-cache", str(tmp_path / "judge.sqlite")]  # fmt: skip
    assert cli_main(["marinelife", "judge", str(mine), "--data", REPO, "--revision", "v1.1", "--out", str(judged),
                     "--items", *llm]) == 0, capsys.readouterr()  # fmt: skip
    results = json.loads(judged.read_text())["mine"]
    for task, qtype in (("oemu", "camera_object_open_ended"), ("caption", "caption")):
        expected = [r["question_id"] for r in open_ended if r["type"] == qtype]
        assert results[task]["n"] + results[task]["n_failed"] == len(expected) > 0
        assert [i["question_id"] for i in results[task]["items"]] == expected
        provenance = results[task]["provenance"]
        assert provenance["dataset"] == {
            "repo_id": REPO,
            "revision": "v1.1",
            "commit": _tag_commit(hub),
            **SAMPLE,
        }
        assert provenance["rubric_signature"] == results[task]["judge"]["signature"]
        assert provenance["tool"].startswith("videoqa-bench-tools ")
    # Without --data the same file is refused with a message that says what to add.
    assert cli_main(["marinelife", "judge", str(mine), "--out", str(judged), *llm]) == 2
    assert "pass --data FOLDER_OR_REPO" in capsys.readouterr().err


def test_offline_mode_reads_the_cache_and_says_what_is_missing(hub, monkeypatch):
    online = resolve_data(REPO, "v1.1")
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    asked = len(hub.requests)
    offline = resolve_data(REPO, "v1.1")
    assert offline.folder == online.folder and offline.commit == online.commit
    assert len(hub.requests) == asked  # nothing asked of the Hub
    with pytest.raises(
        DataSourceError, match=r"org/marine@v2\.0: not in the Hugging Face cache.*HF_HUB_OFFLINE"
    ):
        resolve_data(REPO, "v2.0")


def test_bad_repo_or_revision_is_a_clear_error(hub, tmp_path):
    with pytest.raises(DataSourceError, match="dataset repo org/marine has no revision 'v9'"):
        resolve_data(REPO, "v9")
    with pytest.raises(
        DataSourceError,
        match="org/nothing@main: no local folder 'org/nothing', and no such dataset repo on the Hub",
    ):
        resolve_data("org/nothing")
    with pytest.raises(DataSourceError, match="is a local folder; --revision is for Hub repo ids"):
        resolve_data(tmp_path, "v1.1")
    with pytest.raises(DataSourceError, match="names revision 'v1' but --revision says 'v2'"):
        resolve_data(f"{REPO}@v1", "v2")


def test_local_folder_provenance_is_its_path_and_fingerprint(exported, tmp_path):
    _, folder = exported
    source = resolve_data(folder)
    assert source.provenance() == {
        "folder": str(folder.resolve()), "fingerprint": folder_fingerprint(folder), **SAMPLE
    }  # fmt: skip
    work = resolve_data(exported[0])  # the work folder it was exported from says so too
    assert work.provenance() == {"folder": str(exported[0].resolve()), "fingerprint": folder_fingerprint(exported[0]),
                                 **SAMPLE}  # fmt: skip
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    assert folder_fingerprint(copy) == folder_fingerprint(folder)  # same card, same data files
    (copy / "README.md").write_text((copy / "README.md").read_text() + "\nedited\n")
    assert folder_fingerprint(copy) != folder_fingerprint(folder)


def test_a_fresh_process_honours_hf_home_and_hf_endpoint(hub, exported, tmp_path):
    """As a user runs it: HF_ENDPOINT and HF_HOME read by huggingface_hub at import."""
    home = tmp_path / "fresh-home"
    # TQDM_POSITION=-1: huggingface_hub's bars as on a terminal (a pipe hides them), to see none is drawn
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.url,
        "HF_HOME": str(home),
        "HF_HUB_OFFLINE": "0",
        "TQDM_POSITION": "-1",
    }
    env.pop("HF_TOKEN", None)  # a public repo needs no token
    preds = tmp_path / "p.jsonl"
    write_jsonl_atomic(preds, [{"question_id": "x", "raw_output": "A"}])
    done = subprocess.run(
        [sys.executable, "-m", "builders.cli", "report", "marinelife", "--data", f"{REPO}@v1.1", "--predictions",
         f"m={preds}", "--allow-missing", "--out", str(tmp_path / "r")],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    # 'x' is no question of the split: the error names it, after the data came from HF_HOME's cache.
    assert (
        done.returncode == 2 and "prediction(s) for items that are not in the test split: [x]" in done.stderr
    )
    assert list((home / "hub").glob("datasets--org--marine/snapshots/*/README.md"))
    assert "Fetching" not in done.stderr and "INFO" not in done.stderr  # no download bar, no log noise
