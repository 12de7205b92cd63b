"""The BQA report on hand-made predictions: table numbers against hand-worked values, real PNGs, errors.

The test split is 10 rows of the bundled BoLD sample with hand-set difficulty and demographics
(``DESIGN``); two models answer them in hand-picked ways (``ALPHA``, ``BETA``). Expected rates are
worked out by hand below; their Wilson intervals and chi-square p-values come from scipy.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from bqa_work import write_work_folder
from markdown_tables import read_table
from PIL import Image
from plot_checks import assert_figures_fit
from scipy.stats import binomtest, chi2_contingency

from bqa.accuracy import BQA_PARSER
from bqa.export import export_release
from bqa.vocabulary import DEFAULT_GROUP_MAPPING, EMOTIONS, OTHERS
from bqa.workfolder import read_release
from builders.cli import main as cli_main
from builders.report import write_bqa_report

# Test split: (difficulty, gender, age, ethnicity) per item.
DESIGN = [
    ("Easy", "Male", "Adult", "White"),
    ("Easy", "Male", "Adult", "White"),
    ("Easy", "Male", "Adult", "Asian"),
    ("Easy", "Female", "Kid", "Asian"),
    ("Easy", "Female", "Kid", "White"),
    ("Hard", "Male", "Adult", "White"),
    ("Hard", "Male", "Teenager", "Asian"),
    ("Hard", "Female", "Adult", "White"),
    ("Hard", "Female", "Adult", "Asian"),
    ("Hard", "Female", "Teenager", "White"),
]
# How each model replies per item: right as text / letter / declaration, a distractor, no emotion,
# or an emotion that is not among the choices.
ALPHA = [
    "text",
    "letter",
    "declared",
    "distractor",
    "text",
    "none",
    "distractor",
    "text",
    "outside",
    "distractor",
]
BETA = ["text"] * 5 + ["distractor", "distractor", "letter", "text", "declared"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _reply(kind: str, row: dict) -> str:
    choices, answer = row["choices"], row["answer"]
    if kind == "text":
        return f"{answer}."
    if kind == "letter":
        return "ABCD"[choices.index(answer)]
    if kind == "declared":
        return f"The person leans back and smiles a little, so the answer is {answer}."
    if kind == "distractor":
        return _distractor(row)
    if kind == "none":
        return "I cannot tell from this clip."
    if kind == "outside":
        return f"{_outside(row)}."
    raise AssertionError(kind)


def _distractor(row: dict) -> str:
    return next(c for c in row["choices"] if c != row["answer"])


def _outside(row: dict) -> str:
    return next(e for e in EMOTIONS if e not in row["choices"] and "/" not in e)


@pytest.fixture(scope="module")
def bqa_data(tmp_path_factory) -> dict:
    """A work folder (clips copied from the sample) and its export in Hub layout."""
    work = tmp_path_factory.mktemp("bqa-work")
    test = write_work_folder(
        work,
        len(DESIGN),
        lambda i, r: dataclasses.replace(
            r,
            difficulty=DESIGN[i][0],
            gender=DESIGN[i][1],
            age=DESIGN[i][2],
            ethnicity=DESIGN[i][3],
            difficulty_reason="right_choice" if DESIGN[i][0] == "Easy" else "wrong_choice",
        ),
    )
    hub = tmp_path_factory.mktemp("bqa-hub") / "BQA"
    export_release(work, hub, self_bleu=False, cache_dir=tmp_path_factory.mktemp("cache"))
    rows = [
        {"id": r.id, "choices": list(r.choices), "answer": r.answer, "answer_group": r.answer_group}
        for r in test
    ]
    return {"work": work, "hub": hub, "rows": rows}


def _write_predictions(path: Path, rows: list[dict], kinds: list[str], skip: int | None = None) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, (row, kind) in enumerate(zip(rows, kinds, strict=True)):
            if i != skip:
                f.write(
                    json.dumps({"id": row["id"], "raw_output": _reply(kind, row), "parsed_answer": "x"})
                    + "\n"
                )
    return path


@pytest.fixture(scope="module")
def report(bqa_data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bqa-report")
    predictions = {
        "alpha": _write_predictions(tmp / "alpha.jsonl", bqa_data["rows"], ALPHA),
        "beta": _write_predictions(tmp / "beta.jsonl", bqa_data["rows"], BETA),
    }
    return write_bqa_report(bqa_data["hub"], "test", predictions, tmp / "out"), predictions


def _rate(cell: str) -> tuple[float, float, float]:
    value, low, high = re.fullmatch(r"([\d.]+) \[([\d.]+), ([\d.]+)\]", cell).groups()
    return float(value), float(low), float(high)


def _assert_rate(cell: str, k: int, n: int) -> None:
    """``cell`` shows k/n with its 95% Wilson interval, to the 3 decimals printed."""
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert _rate(cell) == pytest.approx((k / n, ci.low, ci.high), abs=5.1e-4)


def test_accuracy_by_difficulty_matches_hand_worked_counts(report, bqa_data):
    result, _ = report
    header, rows = read_table(result.markdown.read_text(encoding="utf-8"), "Difficulty")
    assert header == ["Difficulty", "n", "alpha", "beta"]
    # alpha: Easy right on items 0,1,2,4; Hard right on item 7. beta: Easy all; Hard 7,8,9.
    expected = {"Easy": (5, 4, 5), "Hard": (5, 1, 3), "Total": (10, 5, 8)}
    for label, (n, alpha, beta) in expected.items():
        assert rows[label][0] == str(n)
        _assert_rate(rows[label][1], alpha, n)
        _assert_rate(rows[label][2], beta, n)
    models = json.loads(result.metrics_file.read_text(encoding="utf-8"))["models"]
    assert models["alpha"]["metrics"]["accuracy_easy"] == pytest.approx(0.8)
    # Item 5 names no emotion; item 8 names an emotion outside its choices: both unparsed.
    assert models["alpha"]["metrics"]["n_unparsed"] == 2
    assert models["alpha"]["unparsed_ids"] == [bqa_data["rows"][i]["id"] for i in (5, 8)]
    assert models["beta"]["unparsed_ids"] == []


def test_answer_parsing_section_counts_reasons_and_names_the_parser(report):
    result, _ = report
    markdown = result.markdown.read_text(encoding="utf-8")
    header, rows = read_table(markdown, "Reason")
    assert header == ["Reason", "alpha", "beta"]
    assert rows["no_option"] == ["2", "0"]  # alpha's items 5 and 8
    assert [sum(int(cells[i]) for cells in rows.values()) for i in (0, 1)] == [10, 10]
    assert f"`{BQA_PARSER.signature}`" in markdown
    assert (
        json.loads(result.metrics_file.read_text(encoding="utf-8"))["answer_parser"] == BQA_PARSER.signature
    )


def test_error_rates_by_demographics_match_hand_worked_counts(report):
    result, _ = report
    markdown = result.markdown.read_text(encoding="utf-8")
    # alpha is wrong on items 3, 5, 6, 8, 9; beta on items 5, 6.
    expected = {
        "Gender": {"Male": (5, 2, 2), "Female": (5, 3, 0)},
        "Age": {"Kid": (2, 1, 0), "Teenager": (2, 2, 1), "Adult": (6, 2, 1)},
        "Ethnicity": {"White": (6, 2, 1), "Asian": (4, 3, 1)},
    }
    for field, groups in expected.items():
        header, rows = read_table(markdown, field)
        assert header == [field, "n", "alpha", "beta"]
        assert [label for label in rows if label in groups] == list(groups)  # vocabulary order
        for group, (n, alpha, beta) in groups.items():
            assert rows[group][0] == str(n)
            _assert_rate(rows[group][1], alpha, n)
            _assert_rate(rows[group][2], beta, n)
        table = [[groups[g][1], groups[g][0] - groups[g][1]] for g in groups]
        p_value = chi2_contingency(table, correction=False).pvalue
        shown = rows["chi-square p-value (dof)"][1]
        assert float(shown.split(" ")[0]) == pytest.approx(p_value, rel=1e-2)
        assert shown.endswith(f"({len(groups) - 1})")
        gap = max(a / n for n, a, _ in groups.values()) - min(a / n for n, a, _ in groups.values())
        assert float(rows["largest gap"][1]) == pytest.approx(gap, abs=5e-4)
    assert "groups too small to judge" in markdown  # 10 items: the chi-square caveat is stated


def test_confusion_of_emotion_groups(report, bqa_data):
    result, _ = report
    markdown = result.markdown.read_text(encoding="utf-8")
    group_of = DEFAULT_GROUP_MAPPING.group_of
    rows = bqa_data["rows"]
    for name, kinds in (("alpha", ALPHA), ("beta", BETA)):
        expected = {
            g: dict.fromkeys([*DEFAULT_GROUP_MAPPING.group_names, OTHERS], 0)
            for g in DEFAULT_GROUP_MAPPING.group_names
        }
        for row, kind in zip(rows, kinds, strict=True):
            answered = {"distractor": lambda r: group_of[_distractor(r)], "none": lambda r: OTHERS,
                        "outside": lambda r: group_of[_outside(r)]}.get(kind)  # fmt: skip
            if answered:
                expected[row["answer_group"]][answered(row)] += 1
        section = markdown[markdown.index(f"**{name}**") :]
        header, table = read_table(section, "Correct \\ answered")
        assert header[1:] == [*DEFAULT_GROUP_MAPPING.group_names, OTHERS, "wrong"]
        for group, counts in expected.items():
            assert [int(c) for c in table[group]] == [*counts.values(), sum(counts.values())]
    assert (
        sum(
            sum(c.values())
            for c in json.loads(result.metrics_file.read_text())["models"]["alpha"]["metrics"][
                "confusion"
            ].values()
        )
        == 5
    )


def test_pngs_are_real_readable_images(report):
    result, _ = report
    markdown = result.markdown.read_text(encoding="utf-8")
    names = json.loads(result.metrics_file.read_text(encoding="utf-8"))["figures"]
    assert names == [
        "accuracy_by_difficulty.png",
        "error_rate_by_gender.png",
        "error_rate_by_age.png",
        "error_rate_by_ethnicity.png",
        "confusion_emotion_groups.png",
    ]
    for name in names:
        path = result.folder / name
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE)
        assert 10_000 < len(data) < 2_000_000
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            width, height = image.size
            assert width >= 600 and height >= 400
            assert len(image.convert("RGB").getcolors(maxcolors=1 << 20)) > 50  # drawn, not blank
        assert f"]({name})" in markdown
    assert [p.name for p in result.folder.glob(".*")] == [".vqabench-report"]  # no temporary files left


def test_work_folder_gives_the_same_numbers(report, bqa_data, tmp_path):
    result, predictions = report
    again = write_bqa_report(bqa_data["work"], "test", predictions, tmp_path / "out")
    for name in predictions:
        assert again.metrics["models"][name]["metrics"] == result.metrics["models"][name]["metrics"]
    assert again.metrics["data"].startswith("work folder")


def test_missing_predictions_are_an_error_unless_allowed(bqa_data, tmp_path):
    rows = bqa_data["rows"]
    path = _write_predictions(tmp_path / "gamma.jsonl", rows, BETA, skip=7)
    with pytest.raises(
        ValueError, match=rf"no prediction for 1 of the 10 .*{rows[7]['id']}.*--allow-missing"
    ):
        write_bqa_report(bqa_data["hub"], "test", {"gamma": path}, tmp_path / "out")
    result = write_bqa_report(bqa_data["hub"], "test", {"gamma": path}, tmp_path / "out", allow_missing=True)
    model = result.metrics["models"]["gamma"]
    assert model["missing_ids"] == [rows[7]["id"]]
    assert model["unparsed_ids"] == [rows[7]["id"]]
    assert model["metrics"]["accuracy_hard"] == pytest.approx(2 / 5)  # beta's 3/5 minus the missing item 7


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "ID0", "raw_output": "A"}', '{"id": "ID0", "raw_output": "B"}'], r"line 2: id ID0 already has a prediction at line 1"),
        (['{"id": "ID0", "raw_output": "A"}', "{not json"], r"line 2: not valid JSON"),
        (['{"id": "ID0", "answer": "A"}'], r"line 1 \(id ID0\): no model reply; the line has 'id', 'answer', expected the reply as 'raw_output' or 'prediction'"),
        (['{"question_id": "ID0", "raw_output": "A"}'], r"line 1: missing or non-text 'id' \(the item's id\); the line has 'question_id', 'raw_output'"),
        (["id,answer", "ID0,A"], r"line 1: not valid JSON .*: bad.csv is not JSONL \(a CSV file\); expected a predictions JSONL .*'raw_output' or 'prediction'"),
        (['{"id": "ID0", "raw_output": 3}'], r"'raw_output' must be text or null"),
        (['{"id": "ID0", "raw_output": "Anger", "prediction": "Fear"}'], r"line 1 \(id ID0\): both 'raw_output' and 'prediction' are given and they differ"),
        (['{"id": "ID0", "raw_output": null, "prediction": "Fear"}'], r"both 'raw_output' and 'prediction' are given and they differ"),
        (['{"id": "somewhere-else", "raw_output": "A"}'], r"1 prediction\(s\) for items that are not in the test split: \[somewhere-else\]"),
    ],
)  # fmt: skip
def test_bad_prediction_files_name_file_and_line(bqa_data, tmp_path, lines, message):
    path = tmp_path / ("bad.csv" if lines[0].startswith("id,") else "bad.jsonl")
    path.write_text("\n".join(line.replace("ID0", bqa_data["rows"][0]["id"]) for line in lines) + "\n")
    with pytest.raises(ValueError, match=message.replace("ID0", re.escape(bqa_data["rows"][0]["id"]))):
        write_bqa_report(bqa_data["hub"], "test", {"bad": path}, tmp_path / "out", allow_missing=True)
    assert not (tmp_path / "out").exists()


def test_cli_report_side_by_side(report, bqa_data, tmp_path, capsys, plot_record):
    _, predictions = report
    out = tmp_path / "cli"
    argv = ["report", "bqa", "--data", str(bqa_data["hub"]), "--split", "test", "--out", str(out)]
    argv += [arg for name, path in predictions.items() for arg in ("--predictions", f"{name}={path}")]
    assert cli_main(argv) == 0
    printed = capsys.readouterr().out
    assert "alpha: accuracy 0.500 (Easy 0.800, Hard 0.200) on 10 items; 2 unparsed" in printed
    assert "beta: accuracy 0.800" in printed
    assert (out / "report.md").is_file() and len(list(out.glob("*.png"))) == 5
    assert_figures_fit(plot_record, expected=5)  # each its intended size, nothing off the axes or canvas
    assert cli_main([*argv[:-4], "--split", "validation", "--predictions", str(predictions["alpha"])]) == 2
    assert "not in the validation split" in capsys.readouterr().err


def test_a_line_with_the_same_reply_in_both_fields_is_read(bqa_data, tmp_path):
    row = bqa_data["rows"][0]
    path = tmp_path / "both.jsonl"
    path.write_text(
        json.dumps({"id": row["id"], "raw_output": row["answer"], "prediction": row["answer"]}) + "\n"
    )
    report = write_bqa_report(bqa_data["hub"], "test", {"both": path}, tmp_path / "out", allow_missing=True)
    assert report.metrics["models"]["both"]["metrics"]["n"] == len(bqa_data["rows"])
    assert report.metrics["models"]["both"]["missing_ids"] == [r["id"] for r in bqa_data["rows"][1:]]


def _run_lines(rows, kinds, *, model, style, frames, rationale=None, preset=None):
    prompt = {"single_word": "bqa_answer_single_word", "multimodal_cot": "bqa_cot_answer"}[style]
    run = {"model_asked": model, "split": "test", "style": style, "answer_leaking": style == "multimodal_cot",
           "frames": {"fps": None, "num_frames": frames} if isinstance(frames, int) else {"fps": frames, "num_frames": None},
           **({"preset": preset} if preset else {})}  # fmt: skip
    return [
        {
            "id": row["id"],
            "raw_output": _reply(kind, row),
            "style": style,
            "prompt": prompt,
            "prompt_version": "1",
            "model": model,
            "answer_leaking": style == "multimodal_cot",
            **({"rationale": rationale(row)} if rationale else {}),
            "provenance": run,
        }  # fmt: skip
        for row, kind in zip(rows, kinds, strict=True)
    ]


HUMAN_RESULT = {  # what 'human-study score' writes (builders/human_study/score.py), hand-set numbers
    "benchmark": "BQA", "study_id": "abc", "split": "test", "n_items": 10, "raters": ["r1", "r2", "r3"],
    "draw": "random",
    "human": {"Easy": {"accuracy": 0.9667, "n": 15}, "Hard": {"accuracy": 0.7333, "n": 15}, "Total": {"accuracy": 0.85, "n": 30}},
}  # fmt: skip


def test_the_paper_table_has_models_as_rows_frames_and_cot_beside_plain(bqa_data, tmp_path, capsys):
    rows = bqa_data["rows"]
    files = {}
    for name, kinds, model, style, frames, rationale in (
        ("alpha", ALPHA, "model-a", "single_word", 16, None),
        ("beta (1 fps)", BETA, "model-b", "single_word", 1.0, None),
        ("alpha CoT", ["text"] * 9 + ["distractor"], "model-a", "multimodal_cot", 16,
         lambda row: f"The stance fits {row['answer']}."),
    ):  # fmt: skip
        path = tmp_path / f"{len(files)}.jsonl"
        lines = _run_lines(rows, kinds, model=model, style=style, frames=frames, rationale=rationale,
                           preset={"name": "bqa-paper", "overridden": []})  # fmt: skip
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        files[name] = path
    human = tmp_path / "human.json"
    human.write_text(json.dumps(HUMAN_RESULT), encoding="utf-8")
    assert cli_main(["report", "bqa", "--data", str(bqa_data["hub"]), "--out", str(tmp_path / "out"),
                     "--human", str(human), *(a for n, p in files.items() for a in ("--predictions", f"{n}={p}"))]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "alpha CoT: accuracy 0.900" in printed and "[ANSWER-LEAKING: multimodal_cot]" in printed
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert (
        "## Table 1 layout (test split)" in text and "Mixed settings" not in text
    )  # frames per model by the preset
    header, table = read_table(text, "VideoLLM")
    assert header == ["VideoLLM", "#F", "Test Easy", "Test Hard", "Test Total",
                      "Test (CoT)† Easy", "Test (CoT)† Hard", "Test (CoT)† Total"]  # fmt: skip
    # hand-worked: alpha 4/5 Easy, 1/5 Hard, 5/10; beta 5/5, 3/5, 8/10; alpha CoT 5/5, 4/5, 9/10
    assert table == {
        "Human (Rand10)": ["-", "0.97", "0.73", "0.85", "–", "–", "–"],
        "alpha": ["16", "0.80", "0.20", "0.50", "1.00", "0.80", "0.90"],
        "beta (1 fps)": ["*", "1.00", "0.60", "0.80", "–", "–", "–"],
    }
    assert list(table) == ["Human (Rand10)", "alpha", "beta (1 fps)"]  # the CoT run sits beside its plain run
    assert "#F: frames per clip; * = 1 frame per second." in text and "answer-leaking" in text
    assert "**Answer-leaking runs:** alpha CoT." in text
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert (
        metrics["models"]["alpha CoT"]["answer_leaking"] is True
        and metrics["models"]["alpha"]["style"] == "single_word"
    )
    assert (
        metrics["human"]["n_items"] == 10
        and metrics["models"]["alpha CoT"]["metrics"]["leakage"]["n_leaking"] == 10
    )
    # Without the preset the frames differ between runs: refused unless marked mixed.
    for path in files.values():
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        path.write_text("".join(json.dumps({**line, "provenance": {k: v for k, v in line["provenance"].items()
                                                                   if k != "preset"}}) + "\n" for line in lines))  # fmt: skip
    with pytest.raises(ValueError, match="frames"):
        write_bqa_report(bqa_data["hub"], "test", files, tmp_path / "mixed")


def test_the_validation_split_is_table_4_and_a_human_study_of_another_split_is_refused(bqa_data, tmp_path):
    valid = read_release(bqa_data["work"]).splits["validation"]
    valid_rows = [{"id": r.id, "choices": list(r.choices), "answer": r.answer} for r in valid]
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in _run_lines(
        valid_rows, ["text"] * len(valid_rows), model="m", style="single_word", frames=16)), encoding="utf-8")  # fmt: skip
    report = write_bqa_report(bqa_data["hub"], "validation", {"m": path}, tmp_path / "out")
    text = report.markdown.read_text(encoding="utf-8")
    assert "## Table 4 layout (validation split)" in text
    header, table = read_table(text, "VideoLLM")
    assert (
        header[:5] == ["VideoLLM", "#F", "Valid Easy", "Valid Hard", "Valid Total"]
        and table["m"][-1] == "1.00"
    )
    with pytest.raises(ValueError, match="human study is on the 'test' split"):
        write_bqa_report(bqa_data["hub"], "validation", {"m": path}, tmp_path / "o2", human=HUMAN_RESULT)
