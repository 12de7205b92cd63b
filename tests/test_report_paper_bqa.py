"""``vqabench report bqa --paper``: runs named after the paper's models beside Table 1.

The test split has Table 3's sizes (707 Easy, 736 Hard: 1,443 items, the sample's records under new
ids). Four runs: Phi-3.5 answers as many right as the paper's Easy and Hard cells imply, Qwen2-VL 0.10
below both, Gemini and GPT-4o as many as their Easy/Hard (so their Totals meet the two flagged cells).
Expected p-values come from scipy's chi-square on the 2x2 table (the pooled z-test's p), intervals
from the Wilson formula worked here.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from bqa_work import PROVENANCE
from markdown_tables import read_table
from processes import vqabench
from scipy.stats import chi2_contingency

from bqa.bold import read_bold
from bqa.candidates import extract_candidates
from bqa.sample import sample_root
from bqa.workfolder import ReleaseMeta, make_record, write_release
from builders.cli import main as cli_main
from builders.report import write_bqa_report
from builders.report.paper_comparison import PaperRequest
from builders.scoring.paper_comparison import two_proportion_p

N_EASY, N_HARD = 707, 736
#: run name -> (Easy right, Hard right), worked from Table 1's cells.
RUNS = {
    "Phi-3.5": (round(0.77 * N_EASY), round(0.41 * N_HARD)),  # 544, 302: the paper's cells
    "Qwen2-VL": (round(0.58 * N_EASY), round(0.17 * N_HARD)),  # 410, 125: 0.10 below 0.68 / 0.27
    "Gemini": (round(0.91 * N_EASY), round(0.08 * N_HARD)),  # 643, 59
    "GPT-4o": (round(0.78 * N_EASY), round(0.38 * N_HARD)),  # 551, 280
}


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> tuple[Path, list]:
    work = tmp_path_factory.mktemp("bqa-table3")
    base = []
    for a in read_bold(sample_root()).annotations:
        base.append(make_record(a, extract_candidates(a.emotions, key=a.id, seed=5), question="How does the person feel?",
                                difficulty="Easy", difficulty_reason="right_choice", provenance=PROVENANCE))  # fmt: skip
    test = [
        dataclasses.replace(base[i % len(base)], id=f"{base[i % len(base)].id}_c{i}",
                            difficulty="Easy" if i < N_EASY else "Hard",
                            difficulty_reason="right_choice" if i < N_EASY else "wrong_choice")
        for i in range(N_EASY + N_HARD)
    ]  # fmt: skip
    write_release(work, {"train": base[:10], "validation": base[10:], "test": test}, ReleaseMeta(seed=5))
    return work, test


def _predictions(folder: Path, test: list, name: str) -> Path:
    easy_right, hard_right = RUNS[name]
    path = folder / f"{name}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i, r in enumerate(test):
            right = i < easy_right if i < N_EASY else i - N_EASY < hard_right
            reply = r.answer if right else next(c for c in r.choices if c != r.answer)
            f.write(json.dumps({"id": r.id, "raw_output": reply}) + "\n")
    return path


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def _scipy_p(k1: int, n1: int, k2: int, n2: int) -> float:
    return float(chi2_contingency([[k1, n1 - k1], [k2, n2 - k2]], correction=False).pvalue)


@pytest.fixture(scope="module")
def report(work, tmp_path_factory):
    folder, test = work
    tmp = tmp_path_factory.mktemp("paper-runs")
    predictions = {name: _predictions(tmp, test, name) for name in RUNS}
    return write_bqa_report(folder, "test", predictions, tmp / "report", paper=PaperRequest())


def _cells(report) -> dict[tuple[str, str], dict]:
    (table,) = report.metrics["paper"]
    assert table["table"] == "Table 1"
    return {(c["run_name"], c["column"]): c for c in table["cells"]}


def test_verdicts_equal_cell_consistent_minus_ten_points_differs_flagged_totals(report):
    cells = _cells(report)
    verdicts = {key: c["verdict"] for key, c in cells.items()}
    assert verdicts == {
        ("Phi-3.5", "Easy"): "consistent", ("Phi-3.5", "Hard"): "consistent", ("Phi-3.5", "Total"): "consistent",
        ("Qwen2-VL", "Easy"): "differs", ("Qwen2-VL", "Hard"): "differs", ("Qwen2-VL", "Total"): "differs",
        ("Gemini", "Easy"): "consistent", ("Gemini", "Hard"): "consistent", ("Gemini", "Total"): "flagged",
        ("GPT-4o", "Easy"): "consistent", ("GPT-4o", "Hard"): "consistent", ("GPT-4o", "Total"): "flagged",
    }  # fmt: skip
    # The flagged Totals: the run's Total is what Easy/Hard give (0.487, 0.576), far from 0.61 and 0.60.
    assert cells[("Gemini", "Total")]["run"] == pytest.approx(702 / 1443)
    assert "0.487" in cells[("Gemini", "Total")]["flag"] and "0.576" in cells[("GPT-4o", "Total")]["flag"]
    assert cells[("Gemini", "Total")]["p_value"] < 1e-6  # the printed 0.61 cannot be reproduced from its row


def test_p_values_and_intervals_match_scipy_and_the_wilson_formula(report):
    cells = _cells(report)
    for name, (easy, hard) in RUNS.items():
        paper = {"Easy": 0, "Hard": 1, "Total": 2}
        for column, k, n in (
            ("Easy", easy, N_EASY),
            ("Hard", hard, N_HARD),
            ("Total", easy + hard, N_EASY + N_HARD),
        ):
            c = cells[(name, column)]
            printed = c["paper"]
            paper_k = round(printed * n)
            assert c["paper_n"] == n and c["run_n"] == n and paper["Easy"] == 0
            assert c["run"] == pytest.approx(k / n)
            assert c["difference"] == pytest.approx(k / n - printed)
            assert c["p_value"] == pytest.approx(_scipy_p(k, n, paper_k, n), rel=1e-9, abs=1e-12)
            assert c["run_interval"] == pytest.approx(list(_wilson(k, n)), abs=1e-9)
            assert c["paper_interval"] == pytest.approx(list(_wilson(paper_k, n)), abs=1e-9)
    # 0.10 below: Qwen2-VL's Easy 410/707 against the paper's 481/707
    assert cells[("Qwen2-VL", "Easy")]["difference"] == pytest.approx(410 / 707 - 0.68)


def test_markdown_shows_the_paper_column_intervals_and_verdicts(report):
    text = report.markdown.read_text(encoding="utf-8")
    assert "## Beside the paper (Table 1)" in text
    header, rows = read_table(text, "Run")
    assert header == [
        "Run",
        "Paper row",
        "Column",
        "Run (95% CI)",
        "Paper (n, 95% CI)",
        "Run − paper",
        "p",
        "Verdict",
    ]
    # rows are keyed by the first cell (the run): the last row of each run is its Total (CoT columns: no run)
    assert rows["Gemini"][1:] == [
        "Total", "0.486 (n=1443) [0.461, 0.512]", "0.610 ⚑ (n=1443) [0.584, 0.635]", "-0.124", rows["Gemini"][5], "flagged"
    ]  # fmt: skip
    assert "⚑ Gemini, Total: does not follow from this row's Easy 0.91 and Hard 0.08" in text
    # Table 1's layout: the runs' rows, then the paper's own rows they were matched to
    header, rows = read_table(text, "VideoLLM")
    assert header[1:5] == ["#F", "Test Easy", "Test Hard", "Test Total"]
    assert rows["Gemini"][1:4] == ["0.91", "0.08", "0.49"]
    assert rows["paper: Gemini"] == ["*", "0.91", "0.08", "0.61", "0.94", "0.90", "0.92"]
    assert rows["paper: Phi-3.5"] == ["16", "0.77", "0.41", "0.58", "1.00", "0.96", "0.98"]


def test_two_proportion_p_against_scipy_at_the_edges():
    for k1, n1, k2, n2 in (
        (0, 10, 0, 12),
        (10, 10, 12, 12),
        (0, 5, 5, 5),
        (3, 17, 9, 30),
        (700, 707, 1, 736),
    ):
        assert two_proportion_p(k1, n1, k2, n2) == pytest.approx(
            1.0 if (k1 + k2) in (0, n1 + n2) else _scipy_p(k1, n1, k2, n2), rel=1e-9, abs=1e-300
        )


def test_cli_prints_the_comparison_and_as_maps_a_run_to_the_ft_row(work, tmp_path):
    folder, test = work
    mine = _predictions(tmp_path, test, "Phi-3.5")
    result = vqabench(["report", "bqa", "--data", str(folder), "--split", "test", "--predictions", f"mine={mine}",
                       "--paper", "--as", "mine=VideoLLaMA2 (FT)", "--out", str(tmp_path / "r")])  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "beside the paper (Table 1" in result.stdout
    assert "mine vs VideoLLaMA2 (FT), Easy: run 0.769 (n=707)" in result.stdout
    assert "differs" in result.stdout  # 0.77 against the tuned model's 0.98
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["paper"][0]["matched"] == {"mine": "VideoLLaMA2 (FT)"}
    with pytest.raises(ValueError, match="--as mine=Claude: the paper's table has no such row"):
        write_bqa_report(
            folder, "test", {"mine": mine}, tmp_path / "r2", paper=PaperRequest({"mine": "Claude"})
        )


# --- Table 1's design: #F differs by model, and the fine-tuned row -----------------------------------
def _framed(folder: Path, test: list, name: str, asked: str, frames: dict) -> Path:
    path = folder / f"{name}.jsonl"
    provenance = {"model_asked": asked, "frames": {"max_side": None, "rule": "uniform", **frames}}
    path.write_text("".join(json.dumps({"id": r.id, "raw_output": r.answer, "provenance": provenance}) + "\n"
                            for r in test[:50]))  # fmt: skip
    return path


ONE_FPS, SIXTEEN = {"fps": 1.0, "num_frames": None}, {"fps": None, "num_frames": 16}


def _report(folder: Path, runs: dict[str, Path], out: Path, **as_rows: str):
    return write_bqa_report(
        folder, "test", runs, out, allow_missing=True, paper=PaperRequest(as_rows, compare=False)
    )


def test_frames_as_table_1s_f_column_print_together_other_differences_are_refused(work, tmp_path, capsys):
    folder, test = work
    runs = {
        "gpt": _framed(tmp_path, test, "gpt", "gpt-4o-2024-08-06", ONE_FPS),
        "qwen": _framed(tmp_path, test, "qwen", "Qwen/Qwen2-VL-7B-Instruct", SIXTEEN),
        "ft": _framed(tmp_path, test, "ft", "/ckpt/videollama2-bqa-lora", SIXTEEN),
    }
    # The fine-tuned run maps to no paper model by its id: its 16 frames beside 1 fps are refused ...
    with pytest.raises(ValueError, match="frames: gpt 1.0 fps; qwen 16 frames; ft 16 frames"):
        write_bqa_report(folder, "test", runs, tmp_path / "a", allow_missing=True)
    # ... until --as names its row: then the three differ only in Table 1's #F column.
    args = ["report", "bqa", "--data", str(folder), "--allow-missing", "--as", "ft=VideoLLaMA2 (FT)"]
    assert cli_main([*args, *(a for n, p in runs.items() for a in ("--predictions", f"{n}={p}")), "--out", str(tmp_path / "b")]) == 0  # fmt: skip
    text = (tmp_path / "b" / "report.md").read_text(encoding="utf-8")
    _, rows = read_table(text, "VideoLLM")
    assert (rows["gpt"][0], rows["qwen"][0], rows["ft"][0]) == ("*", "16", "16")
    assert json.loads((tmp_path / "b" / "metrics.json").read_text(encoding="utf-8"))["mixed"] == []
    # Frames other than the row's #F (8 for an open model), or another part of the spec, stay refused.
    runs["qwen"] = _framed(
        tmp_path, test, "qwen", "Qwen/Qwen2-VL-7B-Instruct", {"fps": None, "num_frames": 8}
    )
    with pytest.raises(ValueError, match="qwen 8 frames"):
        _report(folder, runs, tmp_path / "c", ft="VideoLLaMA2 (FT)")
    runs["qwen"] = _framed(tmp_path, test, "qwen", "Qwen/Qwen2-VL-7B-Instruct", {**SIXTEEN, "max_side": 336})
    with pytest.raises(ValueError, match="max side 336"):
        _report(folder, runs, tmp_path / "d", ft="VideoLLaMA2 (FT)")


def test_validation_compares_with_table_4_and_cot_runs_with_the_cot_columns():
    from builders.report.bqa_paper import compare_with_paper

    def run(style: str | None, asked: str, easy: int, hard: int, n_easy: int, n_hard: int) -> dict:
        metrics = {"accuracy_easy": easy / n_easy, "n_easy": n_easy, "accuracy_hard": hard / n_hard,
                   "n_hard": n_hard, "accuracy": (easy + hard) / (n_easy + n_hard), "n": n_easy + n_hard}  # fmt: skip
        return {"style": style, "provenance": {"model_asked": asked}, "metrics": metrics}

    (valid,) = compare_with_paper(
        {"q": run(None, "Qwen/Qwen2-VL-7B-Instruct", 515, 253, 746, 792)}, "validation", PaperRequest()
    )
    assert valid["table"] == "Table 4" and valid["matched"] == {"q": "Qwen2-VL"}
    cells = {c["column"]: c for c in valid["cells"]}
    assert (cells["Easy"]["paper"], cells["Easy"]["paper_n"], cells["Total"]["paper_n"]) == (0.69, 746, 1538)
    assert cells["Easy"]["p_value"] == pytest.approx(_scipy_p(515, 746, round(0.69 * 746), 746), rel=1e-9)
    (test,) = compare_with_paper(
        {"c": run("multimodal_cot", "gpt-4o-2024-08-06", 686, 699, 707, 736)}, "test", PaperRequest()
    )
    assert [c["column"] for c in test["cells"]] == ["Easy (CoT)", "Hard (CoT)", "Total (CoT)"]
    assert {c["verdict"] for c in test["cells"]} == {"consistent"}  # 0.97 / 0.95 / 0.96, GPT-4o's CoT row
    with pytest.raises(ValueError, match="reports no 'train' split"):
        compare_with_paper({}, "train", PaperRequest())
