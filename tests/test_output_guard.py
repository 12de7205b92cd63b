"""Issue 37, items 1, 2 and 13: a command writes only inside its output folder, only into a folder it
owns, and replacing its own folder never loses a file it did not write.

Measured before the fix: a BQA row id ``../../../../victim/wedding`` made ``bqa finetune-data`` write
``victim/wedding.mp4`` beside the work folder (exit 0); an absolute id wrote outside before failing;
``--out`` pointed at a notes folder overwrote its same-named file, at the dataset folder it added the
export's files to the release; re-running ``human-study make`` deleted the raters' answers files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from processes import vqabench

from builders.files.folders import entry_path


def _hostile_work(built_samples, root: Path, row_id: str) -> Path:
    """A copy of the BQA sample's work folder, at ``root/a/b/c/work``, whose first train row has ``row_id``."""
    work = root / "a" / "b" / "c" / "work"
    shutil.copytree(built_samples["bqa"].work, work)
    path = work / "release" / "train.jsonl"
    lines = path.read_text(encoding="utf-8").split("\n")
    first = json.loads(lines[0])
    first["id"] = row_id
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines), encoding="utf-8")
    return work


def _all_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("row_id", ["../../../../victim/wedding", "/ABSOLUTE/victim/wedding"])
def test_finetune_data_never_writes_outside_its_folder(built_samples, tmp_path, row_id):
    row_id = row_id.replace("/ABSOLUTE", str(tmp_path))
    work = _hostile_work(built_samples, tmp_path, row_id)
    before = _all_files(tmp_path)
    done = vqabench(["bqa", "finetune-data", "--data", str(work), "--out", "ft"], cwd=work.parent)
    assert done.returncode == 2, done.stderr
    assert f"row id {row_id!r}" in done.stderr and "cannot name a file" in done.stderr
    assert _all_files(tmp_path) == before  # nothing written anywhere: no victim/, no half output
    assert not (tmp_path / "victim").exists() and not (work.parent / "ft").exists()


def test_finetune_data_writes_only_a_folder_it_owns(built_samples, tmp_path):
    hub = built_samples["bqa"].hub
    notes = tmp_path / "notes"
    (notes / "configs").mkdir(parents=True)
    (notes / "configs" / "table5.json").write_text("my notes\n")
    done = vqabench(["bqa", "finetune-data", "--data", str(hub), "--out", str(notes), "--limit", "2"])
    assert done.returncode == 2 and "not written by this command" in done.stderr, done.stderr
    assert (notes / "configs" / "table5.json").read_text() == "my notes\n" and _all_files(notes) == {
        "configs/table5.json"
    }
    copy = tmp_path / "hub"
    shutil.copytree(hub, copy)
    before = _all_files(copy)
    done = vqabench(["bqa", "finetune-data", "--data", str(copy), "--out", str(copy), "--limit", "2"])
    assert done.returncode == 2 and "the dataset" in done.stderr, done.stderr
    assert _all_files(copy) == before
    # its own folder is replaced as a whole; a file the user put there is kept
    out = tmp_path / "ft"
    assert (
        vqabench(["bqa", "finetune-data", "--data", str(hub), "--out", str(out), "--limit", "2"]).returncode
        == 0
    )
    (out / "saves").mkdir()
    (out / "saves" / "adapter.bin").write_bytes(b"trained weights")
    done = vqabench(["bqa", "finetune-data", "--data", str(hub), "--out", str(out), "--limit", "1",
                     "--format", "ms-swift"])  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (out / "saves" / "adapter.bin").read_bytes() == b"trained weights"
    assert (
        not (out / "llava").exists() and len(list((out / "videos").iterdir())) == 1
    )  # the old export's gone


@pytest.mark.parametrize(
    "name", ["", ".", "..", "../x", "a/b", "a\\b", "/etc/passwd", "C:x", "c:\\x", "x\0y"]
)
def test_entry_path_refuses_every_name_that_leaves_its_folder(tmp_path, name):
    with pytest.raises(ValueError, match="row 7"):
        entry_path(tmp_path, name, "row 7")


def test_entry_path_keeps_plain_names(tmp_path):
    assert (
        entry_path(tmp_path, "001_C__y90O1X-y_0002_p1.mp4", "row 1")
        == tmp_path / "001_C__y90O1X-y_0002_p1.mp4"
    )
    assert entry_path(tmp_path, "..x", "row 1") == tmp_path / "..x"  # dots inside a name are a name


def test_human_study_make_again_keeps_the_raters_answers(built_samples, tmp_path):
    study = tmp_path / "study"
    base = ["human-study", "make", "bqa", "--data", str(built_samples["bqa"].hub), "--split", "train",
            "--size", "4", "--out", str(study)]  # fmt: skip
    assert vqabench([*base, "--raters", "r1,r2"]).returncode == 0
    answers = {
        study / "answers" / "r1.json": b'{"rater": "r1"}',
        study / "raters" / "r2" / "answers.json": b"r2",
    }
    for path, data in answers.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    done = vqabench([*base, "--raters", "r1,r2,r3"])  # a rater added
    assert done.returncode == 0, done.stderr
    assert (study / "raters" / "r3").is_dir()
    assert {p: p.read_bytes() for p in answers} == answers
