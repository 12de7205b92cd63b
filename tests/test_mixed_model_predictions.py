"""A predictions file holding two models' replies is refused, naming both, unless ``--model`` picks
one (issue 32, case 11). Two runner outputs concatenated used to be scored as one model, only marked
"mixed within the file" in the runs table.
"""

from __future__ import annotations

import json

from builders.cli import main as cli_main
from builders.files.jsonio import write_jsonl_atomic


def run_lines(rows, model: str, answer_of) -> list[dict]:
    return [
        {
            "id": r["id"],
            "raw_output": answer_of(r),
            "model": f"{model}-2026",
            "provenance": {"model_asked": model},
        }
        for r in rows
    ]


def test_two_models_in_one_file_are_refused_then_picked(built_samples, tmp_path, capsys):
    rows = built_samples["bqa"].loaded["default"]["test"].to_list()
    right = run_lines(rows[:3], "model-a", lambda r: r["answer"])
    wrong = run_lines(rows[3:], "model-b", lambda r: next(c for c in r["choices"] if c != r["answer"]))
    mixed = write_jsonl_atomic(tmp_path / "both.jsonl", right + wrong)  # one item each: looks like one run
    args = ["report", "bqa", "--data", str(built_samples["bqa"].hub), "--split", "test", "--predictions",
            f"run={mixed}", "--allow-missing", "--out"]  # fmt: skip
    assert cli_main([*args, str(tmp_path / "r0")]) == 2
    err = capsys.readouterr().err
    assert "replies of 2 models in one predictions file: model-a (3 lines), model-b (3 lines)" in err, err
    assert not (tmp_path / "r0").exists()
    for model, correct in (("model-a", 3), ("model-b", 0)):
        out = tmp_path / model
        assert cli_main([*args, str(out), "--model", f"run={model}"]) == 0
        result = json.loads((out / "metrics.json").read_text())["models"]["run"]
        assert result["metrics"]["accuracy"] * 6 == correct and len(result["missing_ids"]) == 6 - len(
            right if model == "model-a" else wrong
        )
    assert cli_main([*args, str(tmp_path / "r3"), "--model", "run=model-c"]) == 2
    assert "no line answers for model 'model-c'" in capsys.readouterr().err
