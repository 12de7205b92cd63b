"""A release built from a bundled sample says so on its card, and ``push`` refuses it unless
``--allow-sample`` (issue 15, case 8). Exports are real; the push targets the real local Hub."""

from __future__ import annotations

import shutil

from test_push_safety import hub  # noqa: F401 - the fixture
from test_unfinished_runs import llm, vqabench

from bqa.sample import sample_root
from builders.cli import main as cli_main
from builders.hub.layout import SAMPLE_KEY, read_card
from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer

REPO = "naist-nlp/BQA"


def test_the_bundled_samples_are_marked_and_refused(hub, tmp_path, capsys):  # noqa: F811 - the fixture
    bqa = vqabench(
        [
            "bqa",
            "build",
            "--sample",
            "--replay",
            "--work",
            str(tmp_path / "bqa"),
            "--export",
            str(tmp_path / "hub-bqa"),
        ]
    )
    marine = vqabench(
        [
            "marinelife",
            "build",
            "--sample",
            "--replay",
            "--work",
            str(tmp_path / "ml"),
            "--export",
            str(tmp_path / "hub-ml"),
        ]
    )
    assert bqa.returncode == marine.returncode == 0, bqa.stderr + marine.stderr
    for run in (bqa, marine):  # the export and its check print their summary, not a bar per split
        assert "Generating train split" not in run.stderr and "Creating parquet" not in run.stderr, run.stderr
    for folder, words in (
        (tmp_path / "hub-bqa", "bundled synthetic BoLD-format sample"),
        (tmp_path / "hub-ml", "bundled MarineLife-16K sample"),
    ):
        assert words in read_card(folder)[0][SAMPLE_KEY]
        assert cli_main(["push", str(folder), REPO, "--tag", "v1.1"]) == 2
        err = capsys.readouterr().err
        assert (
            f"not publishing it to {REPO}: its card (vqabench_sample) says it was built from the" in err
            and "--allow-sample" in err
        )
        assert hub.requests == []
    assert cli_main(["push", str(tmp_path / "hub-bqa"), REPO, "--tag", "v1.1", "--allow-sample"]) == 0


def test_a_release_from_a_real_root_is_not_marked(tmp_path):
    root = tmp_path / "BOLD_public"
    shutil.copytree(sample_root(), root)  # the same rows, but a BoLD root of the user's own
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        built = vqabench(["bqa", "build", "--bold-root", str(root), "--work", str(tmp_path / "w"),
                          "--export", str(tmp_path / "hub"), *llm(server)])  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    assert SAMPLE_KEY not in read_card(tmp_path / "hub")[0]
