"""Every command that writes a folder as a whole replaces only one it wrote itself (issue 32, case 1),
and a replacement killed at any moment leaves the old folder or the new one (case 11, "export
interrupted between its two renames").

``human-study make --out X`` used the atomic-folder helper without the ownership check that
``export`` and ``demo`` had, and deleted X with exit 0: a folder of notes, the ``--data`` dataset
folder itself, a build work folder with its paid reply cache. The check now lives in the helper
(``marker`` is a required argument), so every writer has it. The commands run as real ``vqabench``
processes on the bundled samples rebuilt offline.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from processes import vqabench

from builders.cli import main as cli_main
from builders.files.folders import atomic_directory, check_replaceable
from builders.hub.layout import EXPORT_MARKER
from builders.llm.cache import CachedReply, ReplyCache


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def study_args(data: Path, out: Path) -> list[str]:
    return ["human-study", "make", "bqa", "--data", str(data), "--split", "train", "--size", "4",
            "--raters", "r1", "--out", str(out)]  # fmt: skip


@pytest.fixture
def folders(built_samples, tmp_path) -> dict[str, Path]:
    """A folder of notes, a copy of the BQA Hub folder and of its work folder with a paid reply cache."""
    notes = tmp_path / "notes"
    (notes / "2026").mkdir(parents=True)
    (notes / "2026" / "ideas.md").write_text("two years of work")
    hub = Path(shutil.copytree(built_samples["bqa"].hub, tmp_path / "hub"))
    work = Path(shutil.copytree(built_samples["bqa"].work, tmp_path / "work"))
    with ReplyCache(work / "llm-cache.sqlite") as cache:
        cache.put_many([CachedReply("k" * 64, "m", "m", None, None, "paid", "paid", 1, 1, 1, "", 0.0)])
    return {"notes": notes, "hub": hub, "work": work}


def test_human_study_make_never_deletes_a_folder_it_did_not_make(folders, tmp_path, capsys):
    before = {name: snapshot(folder) for name, folder in folders.items()}
    # As the issue measured it: a real process, exit 0 and the notes gone. Now: one line, exit 2.
    done = vqabench(study_args(folders["hub"], folders["notes"]))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("vqabench: error: refusing to replace") and done.stderr.count("\n") == 1
    for name, out in folders.items():  # the dataset folder itself, the work folder: refused too
        assert cli_main(study_args(folders["hub"], out)) == 2, name
        assert (
            f"vqabench: error: refusing to {'write' if name == 'hub' else 'replace'} {out}"
            in capsys.readouterr().err
        )
    assert {name: snapshot(folder) for name, folder in folders.items()} == before
    # A new folder is written, and the study's own folder may be made again (replaced whole).
    study = tmp_path / "study"
    assert cli_main(study_args(folders["hub"], study)) == 0
    (study / "raters" / "r1" / "stale.txt").write_text("from an older study")
    assert cli_main(study_args(folders["hub"], study)) == 0
    # replaced whole, and a file it did not write (a rater's answers) is kept (issue 37)
    assert (study / "study.json").is_file() and (study / "raters" / "r1" / "stale.txt").is_file()
    # A folder holding the data the study is made from is refused, even a study's own.
    inside = Path(shutil.copytree(folders["hub"], study / "data"))
    assert cli_main(study_args(inside, study)) == 2
    assert "it would replace the dataset" in capsys.readouterr().err and (inside / "README.md").is_file()


def test_the_check_lives_in_the_helper(tmp_path):
    """No writer can forget it: the marker is required, and another writer's folder is not its own."""
    with pytest.raises(TypeError, match="marker"):
        atomic_directory(tmp_path / "x").__enter__()  # type: ignore[call-arg]
    export = tmp_path / "export"
    (export / "data").mkdir(parents=True)
    (export / EXPORT_MARKER).write_text("")
    with pytest.raises(ValueError, match="was not written by this command"):
        check_replaceable(export, marker=".vqabench-human-study")
    assert check_replaceable(export, marker=EXPORT_MARKER) == export.resolve()


def test_integrations_path_out_keeps_a_foreign_folder(built_samples, folders, capsys):
    before = snapshot(folders["notes"])
    args = ["integrations", "path", "lmms-eval", "--data", f"bqa={built_samples['bqa'].hub}", "--out"]
    assert cli_main([*args, str(folders["notes"])]) == 2
    assert "was not written by this command" in capsys.readouterr().err
    assert snapshot(folders["notes"]) == before
    tasks = folders["notes"].parent / "tasks"
    assert cli_main([*args, str(tasks)]) == 0 and cli_main([*args, str(tasks)]) == 0  # its own: replaced


# A process killed after the old folder is moved aside and before the new one is in place (the
# audit hook sends SIGKILL at the first rename *onto* the target, or at the removal of the folder
# swapped out of it, whichever comes first).
KILL_AT_SWAP = """
import os, signal, sys
target = os.path.realpath(sys.argv[1])
hidden = "." + os.path.basename(target) + "."
def hook(event, args):
    if event == "os.rename" and os.path.realpath(os.fspath(args[1])) == target:
        os.kill(os.getpid(), signal.SIGKILL)
    if event == "shutil.rmtree" and os.path.basename(os.fspath(args[0])).startswith(hidden):
        os.kill(os.getpid(), signal.SIGKILL)
sys.addaudithook(hook)
from builders.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_export_killed_between_its_renames_leaves_a_folder_and_recovers(built_samples, tmp_path):
    work, out = built_samples["bqa"].work, tmp_path / "out"
    assert cli_main(["bqa", "export", str(work), str(out), "--cache-dir", str(tmp_path / "cache")]) == 0
    killed = subprocess.run(
        [sys.executable, "-c", KILL_AT_SWAP, str(out), "bqa", "export", str(work), str(out), "--cache-dir",
         str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (out / "README.md").is_file() and (out / EXPORT_MARKER).is_file()  # never only a hidden copy
    assert cli_main(["bqa", "export", str(work), str(out), "--cache-dir", str(tmp_path / "cache")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "out"]  # nothing left beside it


def test_a_parked_folder_of_a_dead_writer_is_put_back(tmp_path):
    """Where the swap is two renames (no renameat2), a folder parked by a killed writer comes back."""
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    target = tmp_path / "release"
    parked = tmp_path / f".release.old-{int(dead.stdout)}"
    parked.mkdir()
    (parked / ".m").write_text("")
    (parked / "qa.jsonl").write_text("old\n")
    with pytest.raises(RuntimeError), atomic_directory(target, marker=".m"):
        raise RuntimeError("this write fails too")
    assert (target / "qa.jsonl").read_text() == "old\n" and not parked.exists()
