"""Reports record how every compared run was made, refuse to lay side by side runs made with other
frames, prompt versions or parser versions (unless --allow-mixed, then marked), and show paired
tests and intervals clustered by video, checked against independent computations."""

from __future__ import annotations

import json

import pytest

from bqa.accuracy import BQA_PARSER
from bqa.data import open_split as open_bqa
from builders.cli import main as cli_main
from builders.files.jsonio import write_jsonl_atomic
from builders.report import write_bqa_report, write_marinelife_report
from marinelife16k.data import open_split as open_marine
from marinelife16k.vocabulary import MULTIPLE_CHOICE


def _run(frames: int, prompt_version: str = "1", model: str = "m") -> dict:
    return {
        "model": f"{model}-2026-01",
        "prompt": "bqa_answer_single_word",
        "prompt_version": prompt_version,
        "answer_parser": BQA_PARSER.signature,
        "provenance": {
            "tool": "videoqa-bench-tools 0.1.0",
            "split": "test",
            "frames": {"fps": None, "num_frames": frames, "max_side": None},
            "model_asked": model,
        },
    }


@pytest.fixture(scope="module")
def bqa(built_samples, tmp_path_factory):
    hub = built_samples["bqa"].hub
    rows = open_bqa(hub, "test").rows
    root = tmp_path_factory.mktemp("preds")
    right_first = 2  # model "weak" is right on the first 2 items only; "strong" on all
    files = {}
    for name, frames, version, replies in (
        ("strong", 16, "1", [r["answer"] for r in rows]),
        ("weak", 16, "1", [r["answer"] if i < right_first else "no idea" for i, r in enumerate(rows)]),
        ("fewer-frames", 8, "1", [r["answer"] for r in rows]),
        ("new-prompt", 16, "2", [r["answer"] for r in rows]),
    ):
        path = root / f"{name}.jsonl"
        write_jsonl_atomic(
            path,
            [
                {"id": r["id"], "raw_output": t, **_run(frames, version, name)}
                for r, t in zip(rows, replies, strict=True)
            ],
        )
        files[name] = path
    return hub, rows, files, right_first


def test_every_run_and_the_report_record_their_provenance(bqa, tmp_path):
    hub, rows, files, right_first = bqa
    report = write_bqa_report(hub, "test", {n: files[n] for n in ("strong", "weak")}, tmp_path / "out")
    metrics = json.loads(report.metrics_file.read_text())
    top = metrics["provenance"]
    assert top["tool"].startswith("videoqa-bench-tools ") and top["split"] == "test"
    # The folder relative to the report (issue 29: no absolute local path in a report).
    assert (tmp_path / "out" / top["dataset"]["folder"]).resolve() == hub.resolve()
    assert top["dataset"]["fingerprint"].startswith("sha256:")
    assert top["answer_parser"] == BQA_PARSER.signature
    run = metrics["models"]["weak"]["provenance"]
    assert (run["model_asked"], run["model_reported"], run["prompt"]) == (
        "weak",
        "weak-2026-01",
        "bqa_answer_single_word@1",
    )
    assert run["frames"]["num_frames"] == 16 and run["answer_parser"] == BQA_PARSER.signature
    assert metrics["mixed"] == []
    markdown = report.markdown.read_text()
    assert "## How each run was made" in markdown and "weak-2026-01" in markdown and "16 frames" in markdown

    # The paired test, by hand: strong is right on every item, weak on the first 2; they differ on
    # n - 2 items, all in strong's favour: p = 2 * (1/2)^(n-2).
    (pair,) = metrics["paired"]
    discordant = len(rows) - right_first
    assert (pair["a"], pair["b"], pair["a_only"], pair["b_only"]) == ("strong", "weak", discordant, 0)
    assert pair["p_value"] == pytest.approx(min(1.0, 2 * 0.5**discordant))
    assert "## Paired comparisons between models" in markdown


@pytest.mark.parametrize(
    "other, field",
    [("fewer-frames", "frames: strong 16 frames; fewer-frames 8 frames"),
     ("new-prompt", "prompt: strong bqa_answer_single_word@1; new-prompt bqa_answer_single_word@2")],
)  # fmt: skip
def test_mixed_settings_are_refused_unless_allowed_and_then_marked(bqa, tmp_path, capsys, other, field):
    hub, _, files, _ = bqa
    argv = ["report", "bqa", "--data", str(hub), "--predictions", f"strong={files['strong']}",
            "--predictions", f"{other}={files[other]}", "--out", str(tmp_path / "out")]  # fmt: skip
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert "not made the same way" in err and field in err and "--allow-mixed" in err
    assert not (tmp_path / "out").exists()
    assert cli_main([*argv, "--allow-mixed"]) == 0
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert any(field in line for line in metrics["mixed"])
    assert "**Mixed settings (--allow-mixed):**" in (tmp_path / "out" / "report.md").read_text()


def test_marinelife_clustered_interval_matches_statsmodels(built_samples, tmp_path):
    sm = pytest.importorskip("statsmodels.api")
    hub = built_samples["marinelife16k"].hub
    opened = open_marine(hub, "test", check_videos=False)
    mcq = [r for r in opened.rows if r["question_format"] == MULTIPLE_CHOICE]
    path = tmp_path / "always-a.jsonl"
    write_jsonl_atomic(path, [{"question_id": r["question_id"], "raw_output": "A"} for r in mcq])
    report = write_marinelife_report(hub, "test", {"always-a": path}, tmp_path / "out")
    accuracy = report.metrics["models"]["always-a"]["accuracy"]
    right = [float(r["answer"] == "A") for r in mcq]
    fit = sm.OLS(right, [1.0] * len(right)).fit(
        cov_type="cluster", cov_kwds={"groups": [r["id"] for r in mcq]}
    )
    low, high = fit.conf_int(alpha=0.05)[0]
    assert accuracy["ci95_cluster"]["overall"] == pytest.approx([100 * max(0.0, low), 100 * min(1.0, high)])
    assert "Dimension (clustered by video)" in report.markdown.read_text()


def test_judge_scores_are_compared_item_by_item(built_samples, tmp_path):
    """Two models' judge results with per-item scores ('marinelife judge --items'): a sign test on
    the items both have, by hand: A higher on 4, B on 1, 1 tie -> p = 2 * P(X <= 1), X ~ Bin(5, 1/2)."""
    hub = built_samples["marinelife16k"].hub
    a_scores, b_scores = [4, 5, 3, 2, 5, 1], [3, 4, 2, 1, 5, 2]
    ids = [f"q{i}" for i in range(len(a_scores))]

    def result(scores):
        items = [
            {"index": i, "question_id": q, "score": s}
            for i, (q, s) in enumerate(zip(ids, scores, strict=True))
        ]
        return {
            "oemu": {
                "score": sum(scores) / len(scores),
                "criteria": {},
                "n": len(scores),
                "n_failed": 0,
                "items": items,
            }
        }

    path = tmp_path / "judge.json"
    path.write_text(json.dumps({"a": result(a_scores), "b": result(b_scores)}))
    report = write_marinelife_report(hub, "test", {}, tmp_path / "out", judge_results=[path])
    (pair,) = report.metrics["paired"]["oemu"]
    assert (pair["a_higher"], pair["b_higher"], pair["ties"]) == (4, 1, 1)
    assert pair["p_value"] == pytest.approx(2 * (1 + 5) / 32)
    assert pair["mean_difference"] == pytest.approx(
        sum(a - b for a, b in zip(a_scores, b_scores, strict=True)) / 6
    )
    assert (
        "Judge scores (open-ended questions on camera and object motion (OEMU))"
        in report.markdown.read_text()
    )


def _lmms_eval_log(path, rows, provenance=None):
    """An lmms-eval sample log as the shipped tasks write it (every metric holds the predictions
    line); without ``provenance``, as they wrote it before frames were recorded."""
    lines = []
    for k, r in enumerate(rows):
        line = {
            "id": r["id"],
            "raw_output": r["answer"],
            **({"provenance": provenance} if provenance else {}),
        }
        lines.append({"doc_id": k, "filtered_resps": [r["answer"]], "accuracy": line, "accuracy_easy": line})
    write_jsonl_atomic(path, lines)
    return path


@pytest.mark.parametrize(
    "frames, shown",
    [(None, "lmms not recorded"),
     ({"rule": None, "sampled_by": "lmms-eval model qwen2_5_vl"}, "lmms unknown (sampled by lmms-eval model qwen2_5_vl)"),
     ({"fps": None, "num_frames": 10, "max_side": None, "rule": "lmms-eval-openai", "video_input": "images"},
      "lmms 10 frames, lmms-eval-openai rule")],
)  # fmt: skip
def test_a_harness_run_on_unknown_or_other_frames_is_refused_beside_a_project_run(
    bqa, tmp_path, capsys, frames, shown
):
    """Measured: a 10-frame lmms-eval run (recording no frames) was laid beside a 16-frame project run
    without a word."""
    hub, rows, files, _ = bqa
    log = _lmms_eval_log(tmp_path / "20260101_samples_bqa.jsonl", rows, frames and {"frames": frames})
    argv = ["report", "bqa", "--data", str(hub), "--predictions", f"project={files['strong']}",
            "--predictions", f"lmms={log}", "--out", str(tmp_path / "out")]  # fmt: skip
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert "frames: project 16 frames" in err and shown in err and "--allow-mixed" in err
    assert cli_main([*argv, "--allow-mixed"]) == 0
    assert "**Mixed settings (--allow-mixed):**" in (tmp_path / "out" / "report.md").read_text()


def test_a_harness_run_on_the_same_frames_is_compared(bqa, tmp_path):
    """A spec recorded before rule and video_input existed is the uniform rule's, as images."""
    hub, rows, files, _ = bqa
    frames = {"fps": None, "num_frames": 16, "max_side": None, "rule": "uniform", "video_input": "images"}
    log = _lmms_eval_log(tmp_path / "20260101_samples_bqa.jsonl", rows, {"frames": frames})
    report = write_bqa_report(hub, "test", {"project": files["strong"], "lmms": log}, tmp_path / "out")
    assert json.loads(report.metrics_file.read_text())["mixed"] == []
