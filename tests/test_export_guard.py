"""Export replaces only a folder it made itself (or an empty one), never the work folder, a folder
containing it, or the current directory (issue 15, case 3).

The work folders are the bundled samples rebuilt offline by ``vqabench ... build --sample --replay``;
the exports run as real ``vqabench`` subprocesses and as library calls on real folders.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bqa.export import export_release as export_bqa
from builders.hub.checksums import CHECKSUMS_KEY
from builders.hub.layout import EXPORT_MARKER, read_card
from marinelife16k.export import export_release as export_marinelife


def vqabench(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VQABENCH_LLM")}
    return subprocess.run(
        [sys.executable, "-m", "builders.cli", *args], env=env, cwd=cwd, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def works(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("works")
    for name in ("bqa", "marinelife"):
        built = vqabench([name, "build", "--sample", "--replay", "--work", str(root / name)])
        assert built.returncode == 0, built.stdout + built.stderr
    return {"bqa": root / "bqa", "marinelife": root / "marinelife"}


EXPORTERS = {"bqa": export_bqa, "marinelife": export_marinelife}


@pytest.mark.parametrize("dataset", list(EXPORTERS))
def test_an_unrelated_folder_is_refused_and_left_whole(works, tmp_path, dataset):
    thesis = tmp_path / "thesis"
    (thesis / "chapters").mkdir(parents=True)
    (thesis / "chapters" / "one.tex").write_text("two years of work")
    before = snapshot(thesis)
    with pytest.raises(ValueError, match="not empty and was not written by this command"):
        EXPORTERS[dataset](works[dataset], thesis, check=False)
    assert snapshot(thesis) == before


@pytest.mark.parametrize("dataset", list(EXPORTERS))
def test_the_work_folder_and_its_parents_are_refused(works, dataset):
    work = works[dataset]
    before = snapshot(work)
    for out in (work, work.parent, work / ".."):
        with pytest.raises(ValueError, match="would replace the work folder"):
            EXPORTERS[dataset](work, out, check=False)
    assert snapshot(work) == before


def test_cli_export_refuses_dot_and_the_work_folder_then_replaces_its_own_folder(works, tmp_path):
    work = works["bqa"]
    before = snapshot(work)
    here = tmp_path / "here"
    here.mkdir()
    (here / "notes.txt").write_text("keep me")
    dot = vqabench(["bqa", "export", str(work), "."], cwd=here)
    assert dot.returncode == 2 and "would replace the current directory" in dot.stderr, dot.stderr
    assert (here / "notes.txt").read_text() == "keep me"
    # --export pointed at the work folder itself: refused before anything is written.
    again = vqabench(["bqa", "build", "--sample", "--replay", "--work", str(work), "--export", str(work)])
    assert again.returncode == 2 and "would replace the work folder" in again.stderr, again.stderr
    assert snapshot(work) == before

    out = tmp_path / "empty"
    out.mkdir()  # an empty folder is fine
    first = vqabench(["bqa", "export", str(work), str(out)])
    assert first.returncode == 0, first.stderr
    assert (out / EXPORT_MARKER).is_file() and (out / "README.md").is_file()
    (out / "data" / "stale.parquet").write_bytes(b"from an older export")
    second = vqabench(["bqa", "export", str(work), str(out)])  # its own folder: replaced whole
    assert second.returncode == 0, second.stderr
    # a file the export did not write is kept (issue 37: nothing lost), outside the release's checksums
    assert (out / "data" / "stale.parquet").read_bytes() == b"from an older export"
    assert "data/stale.parquet" not in read_card(out)[0][CHECKSUMS_KEY] and (out / "README.md").is_file()


def test_marinelife_cli_export_refuses_a_file_and_a_foreign_folder(works, tmp_path):
    (tmp_path / "a-file").write_text("x")
    refused = vqabench(["marinelife", "export", str(works["marinelife"]), str(tmp_path / "a-file")])
    assert refused.returncode == 2 and "it is a file" in refused.stderr
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "reef.jpg").write_bytes(b"\xff\xd8")
    refused = vqabench(["marinelife", "export", str(works["marinelife"]), str(foreign)])
    assert refused.returncode == 2 and "was not written by this command" in refused.stderr
    assert (foreign / "reef.jpg").read_bytes() == b"\xff\xd8"
