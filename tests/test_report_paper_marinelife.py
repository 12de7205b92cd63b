"""``vqabench report marinelife --paper``: runs beside Table 3 and the caption table, with the inferred-n caveat.

The bundled sample's test split (6 questions per dimension, 4 for OBK). ``Qwen2.5-VL-72B`` answers
every question right (100 per dimension); ``mine`` answers every one wrong and is mapped with
``--as mine=Claude-Opus-4.8``. Judge results for ``Gemini-3.1-Pro``: OEMU and the static-camera caption
scores equal to the paper's cells, the moving-camera ones 0.10 above. The paper gives no n: every
verdict must be ``no n: rough only``; the rough p-values (inferred n) come from scipy's chi-square.
"""

from __future__ import annotations

import json

import pytest
from scipy.stats import chi2_contingency

from builders.cli import main as cli_main
from builders.report import write_marinelife_report
from builders.report.paper_comparison import PaperRequest
from marinelife16k.accuracy import ACCURACY_DIMENSIONS
from marinelife16k.sample import write_sample_work_folder
from marinelife16k.vocabulary import OPTION_LABELS

GEMINI = {"static": {"BEH": 3.9, "AH": 2.4, "ECF": 2.57}, "moving": {"BEH": 3.39, "AH": 2.67, "ECF": 3.39}}
JUDGE = {
    "Gemini-3.1-Pro": {
        "oemu": {"score": 2.1, "criteria": {"camera": 2.0, "activity": 2.2, "relation": 2.1}, "n": 7, "n_failed": 0},
        "caption": {
            "score": 3.0, "criteria": {"BEH": 3.6, "AH": 2.5, "ECF": 3.0}, "n": 14, "n_failed": 0,
            "by_camera": {cam: {"score": 3.0, "criteria": c, "n": 7} for cam, c in GEMINI.items()},
        },
    }
}  # fmt: skip


@pytest.fixture(scope="module")
def marine(tmp_path_factory) -> dict:
    from builders.report.marinelife_report import load_marinelife_split

    work = write_sample_work_folder(tmp_path_factory.mktemp("ml-work"))
    rows = load_marinelife_split(work, "test").rows
    tmp = tmp_path_factory.mktemp("ml-paper")
    right, wrong = tmp / "right.jsonl", tmp / "wrong.jsonl"
    letters = list(OPTION_LABELS)
    right.write_text(
        "".join(
            json.dumps({"question_id": r["question_id"], "raw_output": r["reference"]}) + "\n" for r in rows
        )
    )
    wrong.write_text("".join(json.dumps({"question_id": r["question_id"],
                                         "raw_output": letters[(letters.index(r["reference"]) + 1) % 4]}) + "\n"
                             for r in rows))  # fmt: skip
    judge = tmp / "judge.json"
    judge.write_text(json.dumps(JUDGE))
    return {"work": work, "rows": rows, "right": right, "wrong": wrong, "judge": judge}


@pytest.fixture(scope="module")
def report(marine, tmp_path_factory):
    predictions = {"Qwen2.5-VL-72B": marine["right"], "mine": marine["wrong"]}
    return write_marinelife_report(
        marine["work"], "test", predictions, tmp_path_factory.mktemp("ml-r") / "out",
        judge_results=[marine["judge"]], paper=PaperRequest({"mine": "Claude-Opus-4.8"}),
    )  # fmt: skip


def _scipy_p(k1: int, n1: int, k2: int, n2: int) -> float:
    return float(chi2_contingency([[k1, n1 - k1], [k2, n2 - k2]], correction=False).pvalue)


def test_table3_cells_are_rough_with_inferred_n_and_scipy_p(report, marine):
    table3, captions = report.metrics["paper"]
    assert table3["table"] == "Table 3" and captions["table"] == "Caption table"
    assert table3["matched"] == {
        "Qwen2.5-VL-72B": "Qwen2.5-VL-72B [27]", "mine": "Claude-Opus-4.8 [1]", "Gemini-3.1-Pro": "Gemini-3.1-Pro [6]"
    }  # fmt: skip
    cells = {(c["run_name"], c["column"]): c for c in table3["cells"]}
    assert {c["verdict"] for c in table3["cells"]} == {"no n: rough only"}
    n = {d: sum(r["dimension"] == d for r in marine["rows"]) for d in ACCURACY_DIMENSIONS}
    # Qwen2.5-VL-72B's printed row: 90.5 / 76.6 / 80 / 46.7 / 93.3 / 66.7 / 66.7 (MBC-so: no k/30 fits; SM-l k/30)
    paper = dict(zip(ACCURACY_DIMENSIONS, (90.5, 76.6, 80, 46.7, 93.3, 66.7, 66.7), strict=True))
    paper_n = {**dict.fromkeys(ACCURACY_DIMENSIONS, 30), "MBC-so": None}
    for dim in ACCURACY_DIMENSIONS:
        c = cells[("Qwen2.5-VL-72B", dim)]
        assert (c["paper"], c["paper_n"], c["run"], c["run_n"]) == (paper[dim], paper_n[dim], 100.0, n[dim])
        assert c["difference"] == pytest.approx(100.0 - paper[dim])
        if paper_n[dim] is None:
            assert c["p_value"] is None and c["paper_interval"] is None
        else:
            assert c["n_inferred"] is True
            k = round(paper[dim] / 100 * 30)
            assert c["p_value"] == pytest.approx(_scipy_p(n[dim], n[dim], k, 30), rel=1e-9)
    # mine -> Claude-Opus-4.8 (SM-l 70.5: k/17 -> n 17); all wrong
    c = cells[("mine", "SM-l")]
    assert (c["paper"], c["paper_n"], c["run"]) == (70.5, 17, 0.0)
    assert c["p_value"] == pytest.approx(_scipy_p(0, n["SM-l"], 12, 17), rel=1e-9)
    # OEMU: Gemini's judge score equals the paper's 2.1; a mean has no test
    oemu = next(c for c in table3["cells"] if c["run_name"] == "Gemini-3.1-Pro")
    assert (
        oemu["column"],
        oemu["paper"],
        oemu["run"],
        oemu["difference"],
        oemu["p_value"],
        oemu["verdict"],
    ) == ("OEMU", 2.1, 2.1, 0.0, None, "no n: rough only")


def test_caption_cells_equal_and_ten_points_above_are_both_rough(report):
    captions = report.metrics["paper"][1]
    cells = {c["column"]: c for c in captions["cells"] if c["run_name"] == "Gemini-3.1-Pro"}
    assert set(cells) == {f"{cam} CAMERA {c}" for cam in ("STATIC", "MOVING") for c in ("BEH", "AH", "ECF")}
    for cam, criteria in GEMINI.items():
        for criterion, run in criteria.items():
            c = cells[f"{cam.upper()} CAMERA {criterion}"]
            expected = 0.0 if cam == "static" else 0.10
            assert c["difference"] == pytest.approx(expected, abs=1e-9) and c["run"] == run
            assert c["verdict"] == "no n: rough only" and c["p_value"] is None


def test_markdown_and_terminal_say_the_n_is_inferred(report, marine, tmp_path, capsys):
    text = report.markdown.read_text(encoding="utf-8")
    assert "## Beside the paper (Table 3)" in text and "## Beside the paper (Caption table)" in text
    assert "gives no n: each n here is inferred" in text
    assert (
        "| Qwen2.5-VL-72B | Qwen2.5-VL-72B [27] | MBC-mo | 100.0 (n=6) [61.0, 100.0] | 76.6 (n=30 inferred)"
        in text
    )
    mapping = tmp_path / "as.json"  # a mapping file: run name -> paper row
    mapping.write_text(json.dumps({"mine": "Claude-Opus-4.8"}))
    assert cli_main(["report", "marinelife", "--data", str(marine["work"]), "--predictions",
                     f"Qwen2.5-VL-72B={marine['right']}", "--predictions", f"mine={marine['wrong']}",
                     "--paper", "--as", str(mapping), "--out", str(tmp_path / "r")]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "Qwen2.5-VL-72B vs Qwen2.5-VL-72B [27], PDO: run 100.0 (n=6)" in printed
    assert "mine vs Claude-Opus-4.8 [1], PDO: run 0.0 (n=6)" in printed
    assert "no n: rough only" in printed and "inferred" in printed
