"""An item without a record in a finished step is pending, never dropped (issue 32, case 7).

A record removed from a finished step's file used to make its item vanish on resume: the BQA build
went on with 37 questions for 38 clips, ``bqa evaluate`` wrote 4 predictions for 5 rows, exit 0,
no reason given. Now the step is reopened and the item redone from the reply cache (no new request).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from processes import vqabench

from builders.cli import main as cli_main
from builders.files.jsonio import read_jsonl, write_jsonl_atomic
from builders.runs.steps import StepRecords
from builders.testing.chat_server import ChatServer


def drop_record(path: Path, item: str) -> None:
    records = read_jsonl(path)
    write_jsonl_atomic(path, [r for r in records if r["id"] != item])
    assert len(read_jsonl(path)) == len(records) - 1


def release(work: Path) -> dict[str, list[dict]]:
    return {
        split: read_jsonl(work / "release" / f"{split}.jsonl") for split in ("train", "validation", "test")
    }


def test_a_build_resumed_after_a_record_vanished_asks_for_it_again(built_samples, tmp_path):
    built = built_samples["bqa"].work
    work = Path(shutil.copytree(built, tmp_path / "work"))
    # As a build interrupted after STEP2 would leave it, with one STEP2 record gone from its file.
    for step in ("filter", "difficulty"):
        for suffix in (".jsonl", ".rejects.jsonl"):
            (work / "steps" / f"{step}{suffix}").unlink()
    shutil.rmtree(work / "release")
    item = release(built)["test"][0]["id"]
    drop_record(work / "steps" / "questions.jsonl", item)
    done = vqabench(["bqa", "build", "--sample", "--replay", "--work", str(work)])
    assert done.returncode == 0, done.stderr
    assert "1 item(s) have no record in this finished step" in done.stderr and item in done.stderr
    assert len(read_jsonl(work / "steps" / "questions.jsonl")) == 38
    assert release(work) == release(built)  # as the uninterrupted build made it


def test_evaluate_redoes_a_prediction_whose_record_vanished(built_samples, tmp_path):
    out = tmp_path / "preds.jsonl"
    with ChatServer(model=None) as server:
        server.handler = lambda body: "A"
        args = ["bqa", "evaluate", "--data", str(built_samples["bqa"].hub), "--split", "test", "--out", str(out),
                "--num-frames", "2", "--llm-model", "m", "--llm-base-url", server.url, "--llm-api-key-env", "none"]  # fmt: skip
        assert cli_main(args) == 0
        first = read_jsonl(out)
        drop_record(tmp_path / "preds.work" / "steps" / "predictions.jsonl", first[2]["id"])
        assert cli_main(args) == 0
        assert len(server.chat_requests) == 6  # the redone item came from the reply cache
    assert [line["id"] for line in read_jsonl(out)] == [line["id"] for line in first]


def test_a_finished_step_never_hands_on_fewer_items(tmp_path):
    records = StepRecords(tmp_path, "s")
    items = [{"id": f"i{k}"} for k in range(4)]
    for item in items:
        records.add(dict(item))
    records.finish(item["id"] for item in items)
    drop_record(records.path, "i1")
    again = StepRecords(tmp_path, "s")
    assert not again.covers(items) and not again.complete
    assert again.pending(items) == [{"id": "i1"}]
    again.add({"id": "i1"})
    again.finish(item["id"] for item in items)
    assert [r["id"] for r in again.kept()] == ["i0", "i1", "i2", "i3"]
