"""``vqabench report ... --parser NAME@VERSION`` (issue 26): re-score a predictions file with another
answer-parser version, and see per model which items moved between the version the run recorded and
the one scoring the report.

The predictions are written to move in known ways between versions 2 and 3, worked out from the
rules, not from the code: an exclusion list version 2 reads as a declaration of its first option
(wrong -> right), an answer after a colon and a line break beside a hypothetical mention version 2
finds ambiguous (unparsed -> right), an option the reply names and then rules out (version 2 keeps
it, version 3 does not: right -> unparsed), and replies both versions read alike. Version 4, the
default since issue 38, reads them as version 3 does: none of its rules (17-23) meets these replies
(labels A-D, no requested final format, no echoed instruction, and the mentions decide each one).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from bqa_work import write_work_folder
from markdown_tables import read_table

from builders.cli import main as cli_main
from marinelife16k.sample import sample_qa_path, write_sample_work_folder
from marinelife16k.vocabulary import OPTION_LABELS

V2_BQA = "vqabench-choice@2|aliases:bqa-labels-v1"
V4_BQA = "vqabench-choice@4|aliases:bqa-labels-v1"
# What each item's reply does: (kind, reading by version 2, reading by versions 3 and 4).
PLAN = [
    ("exclusion", "wrong", "right"),
    ("colon", "unparsed", "right"),
    ("ruled_out", "right", "unparsed"),
    ("text", "right", "right"),
    ("text", "right", "right"),
    ("distractor", "wrong", "wrong"),
    ("exclusion", "wrong", "right"),
    ("text", "right", "right"),
]


def _bqa_reply(kind: str, choices: list[str], answer: str) -> str:
    others = [c for c in choices if c != answer]
    letter = "ABCD"[choices.index(answer)]
    return {
        "exclusion": f"{answer} fits his posture best, so {others[0]} and {others[1]} can be excluded.",
        "colon": f"{others[0]} would show in his face, which stays still. Therefore, the best option is:\n\n"
        f"{letter}. {answer}",
        "ruled_out": f"His first gesture suggests {answer}. Looking again, {answer} is wrong here.",
        "text": f"{answer}.",
        "distractor": f"{others[0]}.",
    }[kind]


@pytest.fixture(scope="module")
def bqa_work(tmp_path_factory) -> tuple[Path, list[dict]]:
    work = tmp_path_factory.mktemp("bqa-work")
    test = write_work_folder(
        work,
        len(PLAN),
        lambda i, r: dataclasses.replace(
            r, difficulty=("Easy", "Hard")[i % 2], difficulty_reason=("right_choice", "wrong_choice")[i % 2]
        ),
    )
    return work, [{"id": r.id, "choices": list(r.choices), "answer": r.answer} for r in test]


def _write(path: Path, rows: list[dict], recorded: str | None) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for row, (kind, _, _) in zip(rows, PLAN, strict=True):
            line = {"id": row["id"], "raw_output": _bqa_reply(kind, row["choices"], row["answer"])}
            if recorded:
                line["answer_parser"] = recorded
            f.write(json.dumps(line) + "\n")
    return path


def _report(work: Path, predictions: Path, out: Path, *more: str) -> int:
    argv = ["report", "bqa", "--data", str(work), "--split", "test", "--out", str(out)]
    return cli_main([*argv, "--predictions", f"model={predictions}", *more])


def _expected(rows: list[dict], reverse: bool = False) -> dict:
    moves: dict[str, int] = {}
    changed = []
    for row, (_, v2, v3) in zip(rows, PLAN, strict=True):
        was, now = (v3, v2) if reverse else (v2, v3)
        if was != now:
            moves[f"{was}->{now}"] = moves.get(f"{was}->{now}", 0) + 1
            changed.append(row["id"])
    return {"moves": moves, "changed_ids": changed}


def test_a_file_scored_with_version_2_shows_what_the_default_changes(bqa_work, tmp_path, capsys):
    work, rows = bqa_work
    predictions = _write(tmp_path / "model.jsonl", rows, V2_BQA)
    right_v2 = sum(v2 == "right" for _, v2, _ in PLAN)
    right_v3 = sum(v3 == "right" for _, _, v3 in PLAN)
    assert right_v2 != right_v3  # the file's score changes between the versions

    # As recorded: --parser vqabench-choice@2 re-scores as the run was scored; nothing moves.
    assert _report(work, predictions, tmp_path / "v2", "--parser", "vqabench-choice@2") == 0
    printed = capsys.readouterr().out
    metrics = json.loads((tmp_path / "v2" / "metrics.json").read_text(encoding="utf-8"))
    model = metrics["models"]["model"]
    assert metrics["answer_parser"] == V2_BQA
    assert model["metrics"]["accuracy"] == pytest.approx(right_v2 / len(PLAN))
    assert model["parser_change"]["changed"] == 0 and model["parser_change"]["from"] == V2_BQA
    assert f"model: 0 of {len(PLAN)} items read differently" in printed

    # The default (version 4): the report names every item that moved, and which way.
    assert _report(work, predictions, tmp_path / "v3") == 0
    printed = capsys.readouterr().out
    metrics = json.loads((tmp_path / "v3" / "metrics.json").read_text(encoding="utf-8"))
    change = metrics["models"]["model"]["parser_change"]
    expected = _expected(rows)
    assert metrics["answer_parser"] == V4_BQA
    assert metrics["models"]["model"]["metrics"]["accuracy"] == pytest.approx(right_v3 / len(PLAN))
    assert (change["from"], change["to"], change["from_source"]) == (V2_BQA, V4_BQA, "recorded")
    assert {k: v for k, v in change["transitions"].items() if v} == expected["moves"]
    assert change["changed_ids"] == expected["changed_ids"]
    assert (change["correct_before"], change["correct_after"]) == (right_v2, right_v3)
    assert "2 wrong->right, 1 unparsed->right, 1 right->unparsed" in printed
    assert f"right {right_v2} -> {right_v3}" in printed
    markdown = (tmp_path / "v3" / "report.md").read_text(encoding="utf-8")
    header, table = read_table(markdown[markdown.index("Answer parser change") :], "Model")
    row = dict(zip(header[1:], table["model"], strict=True))
    assert (row["changed"], row["wrong->right"], row["unparsed->right"], row["right->unparsed"]) == (
        "4",
        "2",
        "1",
        "1",
    )
    assert row["accuracy before → after"] == f"{right_v2 / len(PLAN):.3f} → {right_v3 / len(PLAN):.3f}"

    # Asking for the version the report would use anyway gives the same table.
    assert _report(work, predictions, tmp_path / "v3b", "--parser", "vqabench-choice@4") == 0
    again = json.loads((tmp_path / "v3b" / "metrics.json").read_text(encoding="utf-8"))["models"]["model"]
    assert again["parser_change"]["transitions"] == change["transitions"]


def test_a_file_that_records_no_parser_is_compared_with_the_default(bqa_work, tmp_path, capsys):
    work, rows = bqa_work
    predictions = _write(tmp_path / "bare.jsonl", rows, None)
    assert _report(work, predictions, tmp_path / "out") == 0  # nothing to compare: no section
    assert "Answer parser change" not in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    twin = _write(tmp_path / "twin.jsonl", rows, None)
    assert (
        _report(
            work,
            predictions,
            tmp_path / "old",
            "--parser",
            "vqabench-choice@2",
            "--predictions",
            f"twin={twin}",
        )
        == 0
    )
    models = json.loads((tmp_path / "old" / "metrics.json").read_text(encoding="utf-8"))["models"]
    expected = _expected(rows, reverse=True)
    for name in ("model", "twin"):  # every model is compared, each on its own replies
        change = models[name]["parser_change"]
        assert change["from"] == V4_BQA and change["from_source"] == "default (the file records no parser)"
        assert {k: v for k, v in change["transitions"].items() if v} == expected["moves"]
    assert "Answer parser change" in (tmp_path / "old" / "report.md").read_text(encoding="utf-8")


def test_an_unknown_parser_version_is_refused_before_reading(bqa_work, tmp_path, capsys):
    work, _ = bqa_work
    unread = tmp_path / "unread.jsonl"  # not a predictions file: reading it would be an error of its own
    unread.write_text("not JSON\n")
    assert _report(work, unread, tmp_path / "out", "--parser", "vqabench-choice@9") == 2
    err = capsys.readouterr().err
    assert "no version '9'" in err and "vqabench-choice@2, vqabench-choice@3" in err
    assert not (tmp_path / "out").exists()


def test_marinelife_report_reads_with_the_version_asked_for(tmp_path, capsys):
    work = write_sample_work_folder(tmp_path / "work")
    splits = {}
    for line in (work / "release" / "videos.jsonl").read_text().splitlines():
        row = json.loads(line)
        splits[row["id"]] = row["split"]
    records = [json.loads(line) for line in sample_qa_path().read_text().splitlines() if line.strip()]
    mcq = [r for r in records if splits[r["id"]] == "test" and r["question_format"] == "multiple_choice"]
    predictions = tmp_path / "model.jsonl"
    with predictions.open("w", encoding="utf-8") as f:
        for k, r in enumerate(mcq):
            texts = [o["text"] for o in r["options"]]
            answer = texts[OPTION_LABELS.index(r["answer"])]
            other = next(t for t in texts if t != answer)
            if k == 0:  # version 2: "10°C" is option C and the answer after the colon is not seen
                reply = f"The water is 10°C, {other.lower()} is not it. Therefore, the best option is:\n\n{r['answer']}. {answer}"
            else:
                reply = r["answer"]
            line = {
                "question_id": r["question_id"],
                "raw_output": reply,
                "answer_parser": "vqabench-choice@2|aliases:none",
            }
            f.write(json.dumps(line) + "\n")
    argv = ["report", "marinelife", "--data", str(work), "--split", "test", "--out", str(tmp_path / "out")]
    argv += ["--predictions", f"model={predictions}", "--allow-missing"]
    assert cli_main(argv) == 0
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))["models"]["model"]
    change = metrics["parser_change"]
    assert change["changed_ids"] == [mcq[0]["question_id"]]
    assert change["correct_after"] == len(mcq) and change["correct_before"] == len(mcq) - (
        change["transitions"]["wrong->right"] + change["transitions"]["unparsed->right"]
    )
    assert metrics["accuracy"]["overall"] == pytest.approx(100.0)
    assert (
        cli_main([*argv[:6], "--out", str(tmp_path / "v2"), *argv[8:], "--parser", "vqabench-choice@2"]) == 0
    )
    v2 = json.loads((tmp_path / "v2" / "metrics.json").read_text(encoding="utf-8"))["models"]["model"]
    assert v2["accuracy"]["overall"] == pytest.approx(100.0 * (len(mcq) - 1) / len(mcq))
    assert "model: 1 of" in capsys.readouterr().out
