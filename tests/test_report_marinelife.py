"""The MarineLife-16K report on the bundled sample: per-dimension accuracy from hand-made replies,
judge results laid out as the paper's Tables 3 and 4, real PNGs, and clear errors.

Model ``steady`` answers each question type in a fixed way (right as a letter, right as the option
text, a wrong letter, no option at all...), so its accuracy per dimension is 100 or 0 by hand.
Model ``always-a`` answers "A" everywhere: its accuracy is the share of "A" answers, counted here.
Wilson intervals come from scipy.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from markdown_tables import read_table
from PIL import Image
from plot_checks import assert_figures_fit
from scipy.stats import binomtest

from builders.cli import main as cli_main
from builders.report import write_marinelife_report
from builders.scoring.judge_results import JudgeResult
from marinelife16k.accuracy import MARINELIFE_PARSER
from marinelife16k.export import export_release
from marinelife16k.sample import sample_qa_path, write_sample_work_folder
from marinelife16k.vocabulary import DIMENSION_OF_TYPE, OPTION_LABELS

# question type -> (how "steady" replies, whether that is right)
STEADY = {
    "central_object": ("letter", True),
    "central_object_appearance": ("text", True),
    "object_detect": ("wrong letter", False),
    "camera_motion": ("none", False),
    "central_object_motion": ("parenthesised", True),
    "environment": ("declared", True),
    "lighting": ("wrong letter", False),
}
JUDGE = {
    "steady": {
        "oemu": {
            "score": 2.43, "criteria": {"camera": 2.1, "activity": 2.6, "relation": 2.6}, "n": 6, "n_failed": 0,
            "by_camera": {
                "static": {"score": 2.2, "criteria": {"camera": 2.0, "activity": 2.3, "relation": 2.3}, "n": 4},
                "moving": {"score": 2.9, "criteria": {"camera": 2.3, "activity": 3.2, "relation": 3.2}, "n": 2},
            },
        },
        "caption": {
            "score": 2.7, "criteria": {"BEH": 3.13, "AH": 2.1, "ECF": 2.6}, "n": 6, "n_failed": 1,
            "by_camera": {
                "static": {"score": 2.6, "criteria": {"BEH": 3.13, "AH": 2.1, "ECF": 2.6}, "n": 3},
                "moving": {"score": 2.5, "criteria": {"BEH": 3.13, "AH": 2.1, "ECF": 2.43}, "n": 2},
            },
        },
    },
    "judged-only": {
        "caption": {
            "score": 3.3, "criteria": {"BEH": 3.6, "AH": 3.14, "ECF": 3.02}, "n": 6, "n_failed": 0,
            "by_camera": {
                "static": {"score": 3.2, "criteria": {"BEH": 3.6, "AH": 3.14, "ECF": 3.02}, "n": 4},
                "moving": {"score": 3.1, "criteria": {"BEH": 3.29, "AH": 3.29, "ECF": 2.85}, "n": 2},
            },
        }
    },
}  # fmt: skip


def _steady_reply(record: dict) -> str:
    letters = list(OPTION_LABELS)
    answer = record["answer"]
    kind = STEADY[record["type"]][0]
    if kind == "letter":
        return answer
    if kind == "text":
        return record["answer_text"]
    if kind == "wrong letter":
        return letters[(letters.index(answer) + 1) % len(letters)]
    if kind == "none":
        return "The footage is too dark to say."
    if kind == "parenthesised":
        return f"({answer})"
    if kind == "declared":
        return f"Looking at the background, the answer is {answer}."
    raise AssertionError(kind)


@pytest.fixture(scope="module")
def marine(tmp_path_factory) -> dict:
    work = write_sample_work_folder(tmp_path_factory.mktemp("ml-work"))
    hub = tmp_path_factory.mktemp("ml-hub") / "MarineLife-16K"
    export_release(work, hub, cache_dir=tmp_path_factory.mktemp("cache"))
    videos = {}
    for line in (work / "release" / "videos.jsonl").read_text().splitlines():
        row = json.loads(line)
        videos[row["id"]] = row["split"]
    records = [json.loads(line) for line in sample_qa_path().read_text().splitlines() if line.strip()]
    test = [r for r in records if videos[r["id"]] == "test"]
    tmp = tmp_path_factory.mktemp("ml-preds")
    mcq = [r for r in test if r["question_format"] == "multiple_choice"]
    steady = tmp / "steady.jsonl"
    with steady.open("w") as f:
        for r in test:  # replies to open-ended questions too: the report leaves them to the judge
            reply = _steady_reply(r) if r in mcq else "The camera stays still while the fish swims."
            f.write(json.dumps({"question_id": r["question_id"], "raw_output": reply}) + "\n")
    always_a = tmp / "always_a.jsonl"
    always_a.write_text(
        "".join(json.dumps({"question_id": r["question_id"], "raw_output": "A"}) + "\n" for r in mcq)
    )
    judge = tmp / "judge.json"
    judge.write_text(json.dumps(JUDGE))
    return {
        "work": work,
        "hub": hub,
        "mcq": mcq,
        "n_open": len(test) - len(mcq),
        "steady": steady,
        "always_a": always_a,
        "judge": judge,
    }


@pytest.fixture(scope="module")
def report(marine, tmp_path_factory):
    out = tmp_path_factory.mktemp("ml-report")
    predictions = {"steady": marine["steady"], "always-a": marine["always_a"]}
    return write_marinelife_report(
        marine["hub"],
        "test",
        predictions,
        out / "out",
        judge_results=[marine["judge"]],
    )


def _assert_percent(cell: str, k: int, n: int) -> None:
    value, low, high = map(float, re.fullmatch(r"([\d.]+) \[([\d.]+), ([\d.]+)\]", cell).groups())
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert (value, low, high) == pytest.approx((100 * k / n, 100 * ci.low, 100 * ci.high), abs=0.051)


def test_accuracy_by_dimension_matches_hand_worked_values(report, marine):
    markdown = report.markdown.read_text(encoding="utf-8")
    header, rows = read_table(markdown, "Dimension")
    assert header == ["Dimension", "n", "steady", "always-a"]
    by_type = Counter(r["type"] for r in marine["mcq"])
    a_answers = Counter(r["type"] for r in marine["mcq"] if r["answer"] == "A")
    for qtype, (_, right) in STEADY.items():
        dimension, n = DIMENSION_OF_TYPE[qtype], by_type[qtype]
        assert n > 0 and rows[dimension][0] == str(n)
        _assert_percent(rows[dimension][1], n if right else 0, n)
        _assert_percent(rows[dimension][2], a_answers[qtype], n)
    total = len(marine["mcq"])
    right = sum(by_type[t] for t, (_, ok) in STEADY.items() if ok)
    _assert_percent(rows["overall"][1], right, total)
    _assert_percent(rows["overall"][2], sum(a_answers.values()), total)
    assert rows["unparsed replies (scored wrong)"][1:] == [str(by_type["camera_motion"]), "0"]
    _, reasons = read_table(markdown, "Reason")
    unparsed = ("ambiguous", "no_option", "negated_only", "empty")
    assert sum(int(reasons[r][0]) for r in unparsed) == by_type["camera_motion"]
    assert sum(int(cells[1]) for cells in reasons.values()) == total
    assert (
        json.loads(report.metrics_file.read_text(encoding="utf-8"))["answer_parser"]
        == MARINELIFE_PARSER.signature
    )
    assert f"{total} multiple-choice and {marine['n_open']} open-ended questions" in markdown


def test_table3_and_caption_table_carry_the_judge_results(report):
    markdown = report.markdown.read_text(encoding="utf-8")
    header, rows = read_table(markdown, "Model")
    assert header == ["Model", "Predictions", "Missing", "Unparsed", "Judge results"]  # the inputs table
    header, rows = read_table(markdown[markdown.index("## Table 3 (paper layout)") :], "Model")
    assert header == ["Model", "Backbone", "MBC-so", "MBC-mo", "PMT", "PDO", "OBK", "SM-e", "SM-l", "OEMU"]
    assert rows["steady"][0] == "-" and rows["steady"][-1] == "2.43" and rows["always-a"][-1] == "–"
    assert rows["steady"][1:3] == ["100.0", "0.0"]
    assert rows["judged-only"] == ["-"] + ["–"] * 8  # judge results without multiple-choice predictions
    assert "Average" not in rows  # no --models: no groups to average
    header, rows = read_table(markdown[markdown.index("## Caption table (paper layout)") :], "Model")
    assert header[1:] == [f"{cam} CAMERA {c}" for cam in ("STATIC", "MOVING") for c in ("BEH", "AH", "ECF")]
    assert rows["steady"] == ["3.13", "2.10", "2.60", "3.13", "2.10", "2.43"]
    assert rows["judged-only"] == ["3.60", "3.14", "3.02", "3.29", "3.29", "2.85"]
    assert "always-a" in rows and rows["always-a"] == ["–"] * 6
    metrics = json.loads(report.metrics_file.read_text(encoding="utf-8"))
    kept = metrics["models"]["steady"]["judge"]  # the results read, in this version's shape (level recorded)
    assert {t: JudgeResult.from_dict(r) for t, r in kept.items()} == {
        t: JudgeResult.from_dict(r) for t, r in JUDGE["steady"].items()
    }
    assert kept["oemu"]["confidence"] == 0.95 and kept["oemu"]["score"] == 2.43
    assert metrics["models"]["steady"]["accuracy"]["MBC-so"] == 100.0


def test_models_file_groups_the_paper_tables(marine, tmp_path):
    """Two groups from --models: each Average row is the mean of its models, worked out here from the
    hand-worked accuracies (steady: 100 or 0 per dimension; always-a: its share of "A" answers)."""
    always_b = tmp_path / "always_b.jsonl"
    always_b.write_text(
        "".join(
            json.dumps({"question_id": r["question_id"], "raw_output": "B"}) + "\n" for r in marine["mcq"]
        )
    )
    models = tmp_path / "models.csv"
    models.write_text(
        "name,group,backbone\nsteady,Rule-based,rules\nalways-a,Rule-based,\nalways-b,Constant,\n"
        "judged-only,Constant,\nunused,Constant,ViT\n"
    )
    argv = [
        "report",
        "marinelife",
        "--data",
        str(marine["hub"]),
        "--out",
        str(tmp_path / "out"),
        "--models",
        str(models),
    ]
    argv += ["--predictions", f"steady={marine['steady']}", "--predictions", f"always-a={marine['always_a']}"]
    argv += ["--predictions", f"always-b={always_b}", "--judge-results", str(marine["judge"])]
    assert cli_main(argv) == 0
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    table = markdown[markdown.index("## Table 3 (paper layout)") :]
    lines = [line for line in table.splitlines()[2:] if line.startswith("|")][2:]
    cells = [[c.strip() for c in line.strip("|").split(" | ")] for line in lines]
    assert [c[0] for c in cells[:8]] == [
        "**Rule-based**", "steady", "always-a", "Average", "**Constant**", "always-b", "judged-only", "Average",
    ]  # fmt: skip
    assert cells[1][1] == "rules" and cells[2][1] == "-"
    by_type = Counter(r["type"] for r in marine["mcq"])
    share = {x: Counter(r["type"] for r in marine["mcq"] if r["answer"] == x) for x in "AB"}
    dimensions = ["MBC-so", "MBC-mo", "PMT", "PDO", "OBK", "SM-e", "SM-l"]
    type_of = {DIMENSION_OF_TYPE[t]: t for t in STEADY}
    for k, dimension in enumerate(dimensions, start=2):
        t = type_of[dimension]
        steady = 100.0 if STEADY[t][1] else 0.0
        always_a = 100 * share["A"][t] / by_type[t]
        assert cells[3][k] == f"{(steady + always_a) / 2:.2f}", dimension
        assert cells[7][k] == f"{100 * share['B'][t] / by_type[t]:.2f} (1 of 2)", (
            dimension
        )  # judged-only: none
    assert cells[3][-1] == "2.43 (1 of 2)"  # OEMU: only steady has a judge score
    assert "Listed in the models file without results here (not shown): unused." in markdown
    captions = markdown[markdown.index("## Caption table (paper layout)") :]
    _, rows = read_table(captions, "Model")
    # Constant (the last Average row): only judged-only has caption scores; moving minus static by hand:
    # BEH 3.29 - 3.60 = -0.31, AH 3.29 - 3.14 = +0.15, ECF 2.85 - 3.02 = -0.17.
    assert rows["Average"] == [
        "3.60 (1 of 2)", "3.14 (1 of 2)", "3.02 (1 of 2)",
        "3.29 (-0.31) (1 of 2)", "3.29 (+0.15) (1 of 2)", "2.85 (-0.17) (1 of 2)",
    ]  # fmt: skip
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert [g["group"] for g in metrics["groups"]["table3"]] == ["Rule-based", "Constant"]
    assert metrics["groups"]["models"][0] == {"name": "steady", "group": "Rule-based", "backbone": "rules"}
    bad = tmp_path / "bad.csv"
    bad.write_text("name,group\nsteady,A\n")
    argv[argv.index(str(models))] = str(bad)
    assert cli_main(argv) == 2  # always-a and always-b have no row: refused, naming them


def test_pngs_are_real_readable_images(report):
    names = json.loads(report.metrics_file.read_text())["figures"]
    assert names == ["accuracy_by_dimension.png", "judge_oemu_by_camera.png", "judge_captions_by_camera.png"]
    for name in names:
        data = (report.folder / name).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and 10_000 < len(data) < 2_000_000
        with Image.open(report.folder / name) as image:
            assert image.size[0] >= 600 and image.size[1] >= 400
            assert len(image.convert("RGB").getcolors(maxcolors=1 << 20)) > 50


def test_work_folder_gives_the_same_accuracy(report, marine, tmp_path):
    again = write_marinelife_report(marine["work"], "test", {"steady": marine["steady"]}, tmp_path / "out")
    assert again.metrics["models"]["steady"]["accuracy"] == report.metrics["models"]["steady"]["accuracy"]


def test_missing_multiple_choice_replies_are_named(marine, tmp_path):
    lines = marine["always_a"].read_text().splitlines()
    dropped = json.loads(lines[3])["question_id"]
    path = tmp_path / "short.jsonl"
    path.write_text("\n".join(lines[:3] + lines[4:]) + "\n")
    with pytest.raises(ValueError, match=rf"no prediction for 1 of the {len(lines)} .*{re.escape(dropped)}"):
        write_marinelife_report(marine["hub"], "test", {"short": path}, tmp_path / "out")
    result = write_marinelife_report(
        marine["hub"], "test", {"short": path}, tmp_path / "out", allow_missing=True
    )
    assert result.metrics["models"]["short"]["missing_ids"] == [dropped]
    assert result.metrics["models"]["short"]["accuracy"]["n_unparsed"]["overall"] == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda j: j["steady"]["oemu"]["by_camera"].update(handheld={"n": 1}), r"steady\.oemu\.by_camera\.handheld: unknown camera kind"),
        (lambda j: j["steady"].update(bleu={}), r"steady: unknown judge task 'bleu'"),
        (lambda j: j["steady"]["caption"]["by_camera"]["static"].update(score="high"), r"by_camera\.static\.score: expected a number"),
        (lambda j: j["steady"]["caption"].update(by_camera=[]), r"steady\.caption: 'by_camera' must be an object"),
        (lambda j: j["steady"]["oemu"].update(score=None, n="6"), r"steady\.oemu\.n: expected a whole number"),
    ],
)  # fmt: skip
def test_bad_judge_results_are_named(marine, tmp_path, change, message):
    data = json.loads(json.dumps(JUDGE))
    change(data)
    path = tmp_path / "judge.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message):
        write_marinelife_report(marine["hub"], "test", {}, tmp_path / "out", judge_results=[path])


def test_cli_marinelife_report(marine, tmp_path, capsys, plot_record):
    out = tmp_path / "cli"
    argv = ["report", "marinelife", "--data", str(marine["hub"]), "--out", str(out)]
    argv += ["--predictions", f"steady={marine['steady']}", "--judge-results", str(marine["judge"])]
    assert cli_main(argv) == 0
    assert "steady: overall multiple-choice accuracy" in capsys.readouterr().out
    assert {p.name for p in out.iterdir() if p.name != ".vqabench-report"} == {
        "report.md",
        "metrics.json",
        "accuracy_by_dimension.png",
        "judge_oemu_by_camera.png",
        "judge_captions_by_camera.png",
    }
    assert_figures_fit(plot_record, expected=3)  # each its intended size, nothing off the axes or canvas
    assert cli_main(["report", "marinelife", "--data", str(marine["hub"]), "--out", str(tmp_path / "x")]) == 2
    assert "nothing to report" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # refused as the command line is parsed, naming the path
        cli_main(["report", "marinelife", "--data", str(Path(tmp_path) / "nowhere"), "--out", str(tmp_path / "x"),
                  "--predictions", str(marine["steady"])])  # fmt: skip
    assert refused.value.code == 2 and "nowhere: no such folder" in capsys.readouterr().err


def test_judge_results_without_camera_kinds(marine, tmp_path):
    path = tmp_path / "judge.json"
    result = {
        "score": 1.5,
        "criteria": {"camera": 1.0, "activity": 2.0, "relation": 1.5},
        "n": 3,
        "n_failed": 2,
    }
    path.write_text(json.dumps({"plain": {"oemu": result}}))
    report = write_marinelife_report(marine["hub"], "test", {}, tmp_path / "out", judge_results=[path])
    markdown = report.markdown.read_text(encoding="utf-8")
    _, rows = read_table(markdown[markdown.index("Table 3 (paper layout)") :], "Model")
    assert rows["plain"][-1] == "1.50"
    _, rows = read_table(markdown[markdown.index("(OEMU)**") :], "")
    assert rows["all: n judged"] == ["3"] and rows["all: failed judge calls"] == ["2"]
    assert rows["all: activity"] == ["2.00"] and rows["static: n judged"] == rows["moving: score"] == ["–"]
    assert report.metrics["figures"] == ["judge_oemu_by_camera.png"]


def test_one_model_under_two_names_is_warned_about_naming_both(marine, tmp_path, caplog):
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"steady-v2": JUDGE["steady"]}))
    with caplog.at_level("WARNING"):
        report = write_marinelife_report(
            marine["hub"], "test", {"steady": marine["steady"]}, tmp_path / "out", judge_results=[judge]
        )
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert "predictions named ['steady'] have no judge results" in warnings[0]
    assert "judge results named ['steady-v2'] have no predictions" in warnings[0]
    assert "--predictions steady-v2=FILE" in warnings[0]
    assert "**Warning:** predictions named ['steady']" in report.markdown.read_text(encoding="utf-8")
    assert list(report.metrics["models"]) == ["steady", "steady-v2"]  # still two rows, now explained
    caplog.clear()
    with caplog.at_level("WARNING"):  # judge-only models next to matched ones are not a split
        write_marinelife_report(
            marine["hub"],
            "test",
            {"steady": marine["steady"]},
            tmp_path / "ok",
            judge_results=[marine["judge"]],
        )
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
