"""A rerun over edited BoLD CSVs is refused, saying which file changed and how to start over or
accept it (issue 15, case 7). Real ``vqabench bqa build`` processes on a copy of the bundled sample."""

from __future__ import annotations

import shutil

from test_unfinished_runs import vqabench

from bqa.sample import sample_root
from builders.files.jsonio import read_jsonl


def test_edited_scores_are_noticed_on_rerun(tmp_path):
    root = tmp_path / "bold"
    shutil.copytree(sample_root(), root)
    work = tmp_path / "work"
    args = ["bqa", "build", "--bold-root", str(root), "--work", str(work), "--steps", "candidates"]
    first = vqabench(args)
    assert first.returncode == 0, first.stderr
    before = read_jsonl(work / "steps" / "candidates.jsonl")

    train = root / "annotations" / "train.csv"
    lines = train.read_text().splitlines()
    cells = lines[0].split(",")
    cells[4] = "0.9999"  # the first emotion score of the first row, edited
    train.write_text("\n".join([",".join(cells), *lines[1:]]) + "\n")
    again = vqabench(args)
    assert again.returncode == 2, again.stdout + again.stderr
    assert "this work folder was built with other options" in again.stderr
    assert "inputs.train.csv: was '" in again.stderr and "inputs.val.csv" not in again.stderr
    assert "the BoLD annotation files changed since this folder was built" in again.stderr
    assert "--accept-changed-source" in again.stderr and "--llm-cache" in again.stderr
    assert read_jsonl(work / "steps" / "candidates.jsonl") == before  # nothing was touched

    accepted = vqabench([*args, "--accept-changed-source"])
    assert accepted.returncode == 0, accepted.stderr
    assert vqabench(args).returncode == 0  # the new fingerprint is the one recorded now
