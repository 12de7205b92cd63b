"""A build in which every item was rejected says so and exits non-zero; an export of a release with
an empty split names the cause instead of ``Instruction "train" corresponds to no data!`` (issue 15,
case 13). Real ``vqabench`` processes against the real test chat server."""

from __future__ import annotations

import json

from test_unfinished_runs import llm, vqabench

from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer


def test_every_item_rejected_is_a_failed_build_and_a_named_export_error(tmp_path):
    work = tmp_path / "work"
    with ChatServer(model=None, api_key="right") as server:
        built = vqabench(
            [
                "bqa",
                "build",
                "--sample",
                "--work",
                str(work),
                "--reject-llm-failures",
                *llm(server, "TEST_KEY"),
            ],
            TEST_KEY="wrong",
        )
    assert built.returncode == 1, built.stdout + built.stderr
    assert (
        "EMPTY RELEASE: every one of the 38 BoLD rows was rejected (questions: llm_failure 38)"
        in built.stdout
    )
    assert json.loads((work / "summary.json").read_text())["empty_release"] is True
    exported = vqabench(["bqa", "export", str(work), str(tmp_path / "hub")])
    assert exported.returncode == 2
    assert "split(s) have no rows: every item was rejected" in exported.stderr, exported.stderr
    assert "corresponds to no data" not in exported.stderr and not (tmp_path / "hub").exists()


def test_too_few_films_is_named_on_export(tmp_path):
    work = tmp_path / "work"
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        built = vqabench(["bqa", "build", "--sample", "--work", str(work), "--limit", "10", *llm(server)])
    assert built.returncode == 0, built.stdout + built.stderr
    exported = vqabench(["bqa", "export", str(work), str(tmp_path / "hub")])
    assert exported.returncode == 2
    assert (
        # 7 rows: STEP4 keeps the reply that names no choice, as Hard (the paper's rule)
        "the release's test split(s) have no rows: its 7 rows come from 2 film(s), too few for a 6:2:2 split"
        in exported.stderr
    ), exported.stderr
