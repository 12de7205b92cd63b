"""A leaderboard ranks only results within their task's scale; a bad entry is reported by name and
skipped, never failing the board (issue 32, case 11).

The leaderboard accepted a BQA accuracy of 1.5 (ranked first) and -3, and one NaN entry failed the
whole board.
"""

from __future__ import annotations

import json

import yaml

from builders.cli import main as cli_main

BQA = "naist-nlp/BQA"


def entry(task: str, value: object, dataset: str = BQA) -> dict:
    return {"dataset": {"id": dataset, "task_id": task}, "value": value}


def write_model(root, name: str, entries: list[dict] | str) -> None:
    folder = root / name / ".eval_results"
    folder.mkdir(parents=True)
    text = entries if isinstance(entries, str) else yaml.safe_dump(entries)
    (folder / "bqa.yaml").write_text(text)


def test_values_out_of_scale_or_not_numbers_are_skipped_by_name(tmp_path, capsys):
    root = tmp_path / "repos"
    write_model(root, "lab/good", [entry("bqa_total", 0.61), entry("bqa_easy", 0.7)])
    write_model(root, "lab/fine", [entry("bqa_total", 0.55)])
    write_model(root, "lab/too-high", [entry("bqa_total", 1.5), entry("bqa_easy", 0.5)])
    write_model(root, "lab/negative", [entry("bqa_total", -3)])
    write_model(root, "lab/percent", [entry("bqa_total", 61.0)])  # a 0-100 number on a 0-1 task
    write_model(root, "lab/nan", "- dataset: {id: naist-nlp/BQA, task_id: bqa_total}\n  value: .nan\n")
    write_model(root, "lab/broken", "- dataset: [unclosed\n")
    board = tmp_path / "board"
    assert cli_main(["leaderboard", "bqa", "--from", str(root), "--out", str(board)]) == 0
    err = capsys.readouterr().err
    metrics = json.loads((board / "metrics.json").read_text())
    assert [r["model_id"] for r in metrics["tasks"]["bqa_total"]] == ["lab/good", "lab/fine"]
    assert [r["model_id"] for r in metrics["tasks"]["bqa_easy"]] == ["lab/good", "lab/too-high"]
    skipped = metrics["skipped"]
    assert len(skipped) == 5
    for model, why in [("lab/too-high", "bqa_total = 1.5 is outside the task's scale 0-1"),
                       ("lab/negative", "bqa_total = -3 is outside"), ("lab/percent", "bqa_total = 61 is outside"),
                       ("lab/nan", "'value' must be a number"), ("lab/broken", "not valid YAML")]:  # fmt: skip
        assert any(s.startswith(model) and why in s for s in skipped), (model, skipped)
        assert f"skipped {model}" in err
    assert "lab/too-high (bqa.yaml): bqa_total = 1.5" in (board / "report.md").read_text()


def test_marinelife_scales_are_per_task(tmp_path):
    root = tmp_path / "repos"
    marine = "org/MarineLife-16K"
    write_model(root, "lab/a", [entry("mbc_so", 72.5, marine), entry("oemu", 3.4, marine)])
    write_model(root, "lab/b", [entry("mbc_so", 0.7, marine), entry("oemu", 7.0, marine)])
    write_model(root, "lab/c", [entry("oemu", 0, marine)])
    board = tmp_path / "board"
    args = ["leaderboard", "marinelife", "--from", str(root), "--dataset-id", marine, "--out", str(board)]
    assert cli_main(args) == 0
    metrics = json.loads((board / "metrics.json").read_text())
    assert [r["value"] for r in metrics["tasks"]["mbc_so"]] == [
        72.5,
        0.7,
    ]  # 0.7 is a (bad) but valid 0-100 value
    assert [r["value"] for r in metrics["tasks"]["oemu"]] == [3.4, 0.0]
    assert metrics["skipped"] == ["lab/b (bqa.yaml): oemu = 7 is outside the task's scale 0-5"]
