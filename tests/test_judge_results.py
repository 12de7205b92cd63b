"""The judge's results as types (:mod:`builders.scoring.judge_results`): a result round-trips through
``to_dict``/``from_dict``; its interval keys name their level (``score_ci95`` at 0.95, ``score_ci90``
at 0.9), with Student-t intervals checked against scipy; a file written before results recorded their
level (``tests/data/judge_results_before_confidence.json``, from ``marinelife judge --items`` before
this change) is read; a malformed result is refused naming the field; and ``report marinelife``
writes the same report.md on that file as it did before the change (``judge_report_before_confidence.md``,
captured with the old code)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from test_report_marinelife import JUDGE

from builders.evaluation.rubrics import get_rubric
from builders.hub.eval_results import entries_from_metrics, parse_notes
from builders.human_study.score import read_judge_items
from builders.llm import LLMClient, LLMSettings
from builders.report import write_marinelife_report
from builders.report.marinelife_report import read_judge_results
from builders.scoring.judge import judge_predictions
from builders.scoring.judge_results import FailedJudgement, JudgedItem, JudgeResult
from builders.scripted.chat_requests import last_user_text, with_item_id
from marinelife16k.benchmark import BENCHMARK as MARINE
from marinelife16k.rubrics import CAMERA_GROUP, camera_groups
from marinelife16k.sample import write_sample_work_folder

DATA = Path(__file__).parent / "data"
BEFORE = DATA / "judge_results_before_confidence.json"
REPORT_BEFORE = DATA / "judge_report_before_confidence.md"
# Per item (camera, activity, relation) integers the scripted judge gives, and each item's camera kind.
SCORES = [(5, 0, 5), (3, 4, 2), (1, 1, 1), (4, 5, 3), (2, 2, 4), (0, 3, 5)]
CAMERA = ["static", "moving", "static", "moving", "moving", "static"]
WEIGHTS = np.array([0.35, 0.30, 0.35])  # the paper's OEMU weights


def _t_interval(values: np.ndarray, confidence: float) -> list[float]:
    """scipy's Student-t interval for the mean (an independent source for the judge's intervals)."""
    low, high = stats.t.interval(confidence, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
    return [float(low), float(high)]


@pytest.fixture
def judged(chat_server, tmp_path):
    """Judge SCORES with the OEMU rubric against a real local server; ``judged(confidence)``."""
    answers = {f"answer {i}": s for i, s in enumerate(SCORES)}

    def reply(body):
        text = last_user_text(body)
        (camera, activity, relation), *_ = [s for a, s in answers.items() if f"<<{a}>>" in text]
        return with_item_id(body, {"camera": camera, "activity": activity, "relation": relation})

    chat_server.handler = reply
    settings = LLMSettings(model="judge-model", base_url=chat_server.url, api_key_env=None, progress=False)

    def run(confidence: float = 0.95) -> JudgeResult:
        with LLMClient(settings, cache_path=tmp_path / "judge.sqlite") as client:
            return judge_predictions(
                [f"<<{a}>>" for a in answers], ["the reference"] * len(SCORES),
                get_rubric("marinelife_open_ended"), client,
                questions=["How does the camera move?"] * len(SCORES), groups=camera_groups(CAMERA),
                return_items=True, confidence=confidence,
            )  # fmt: skip

    return run


def test_a_result_round_trips_and_its_numbers_are_scipys(judged):
    result = judged()
    weighted = np.array(SCORES, dtype=float) @ WEIGHTS
    assert result.score == pytest.approx(weighted.mean()) and result.n == 6 and result.n_failed == 0
    assert result.overall.score_interval == pytest.approx(_t_interval(weighted, 0.95))
    activity = np.array([s[1] for s in SCORES], dtype=float)
    assert result.overall.criteria_intervals["activity"] == pytest.approx(_t_interval(activity, 0.95))
    static = np.array([c == "static" for c in CAMERA])
    cell = result.by(CAMERA_GROUP)["static"]
    assert (cell.n, cell.score) == (3, pytest.approx(weighted[static].mean()))
    assert cell.score_interval == pytest.approx(_t_interval(weighted[static], 0.95))
    assert [i.index for i in result.judged_items()] == list(range(6))
    data = result.to_dict()
    assert data["confidence"] == 0.95 and data["score_ci95"] == result.overall.score_interval
    assert data["by_camera"]["moving"]["criteria_ci95"]["camera"] is not None
    assert JudgeResult.from_dict(json.loads(json.dumps(data))) == result  # through JSON and back
    assert JudgeResult.from_dict(data).to_dict() == data


def test_confidence_0_9_writes_ci90_keys_and_intervals(judged):
    result = judged(0.9)
    data = result.to_dict()
    weighted = np.array(SCORES, dtype=float) @ WEIGHTS
    assert data["confidence"] == 0.9 and data["score_ci90"] == pytest.approx(_t_interval(weighted, 0.9))
    assert set(data["criteria_ci90"]) == {"camera", "activity", "relation"}
    assert not [k for k in json.dumps(data).split('"') if "ci95" in k]  # no 95% key anywhere
    assert set(data["by_camera"]["static"]) == {"score", "score_ci90", "criteria", "criteria_ci90", "n"}
    assert JudgeResult.from_dict(data) == result
    # narrower than the 95% interval of the same scores
    low95, high95 = _t_interval(weighted, 0.95)
    assert low95 < data["score_ci90"][0] < data["score_ci90"][1] < high95


def test_a_file_written_before_results_recorded_their_level_is_read():
    old = json.loads(BEFORE.read_text())["m"]
    assert "confidence" not in old["caption"] and "score_ci95" in old["caption"]  # the old shape
    caption = JudgeResult.from_dict(old["caption"], "m.caption")
    assert caption.confidence == 0.95 and caption.overall.score_interval == old["caption"]["score_ci95"]
    assert (
        caption.by(CAMERA_GROUP)["moving"].criteria_intervals["BEH"]
        == (old["caption"]["by_camera"]["moving"]["criteria_ci95"]["BEH"])
    )
    (failed,) = caption.failed
    assert caption.n_failed == 1 and failed.question_id == "MVK--mvk-0103--q6" and "BEH" in failed.error
    assert isinstance(caption.items[failed.index], FailedJudgement)
    assert [i.question_id for i in caption.judged_items()] == [
        i["question_id"] for i in old["caption"]["items"] if "error" not in i
    ]
    assert caption.judge.signature.startswith("rubric:marinelife_caption|v:1")
    assert caption.provenance["predictions"] == "m.jsonl"
    # Written again, it is the old file plus the level it was at.
    assert caption.to_dict() == {**old["caption"], "confidence": 0.95}
    assert isinstance(JudgeResult.from_dict(old["oemu"]).items[0], JudgedItem)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(score="high"), r"m\.oemu\.score: expected a number or null"),
        (lambda r: r.pop("n"), r"m\.oemu\.n: expected a whole number, got None"),
        (lambda r: r["by_camera"]["static"].update(n=2.5), r"m\.oemu\.by_camera\.static\.n: expected a whole"),
        (lambda r: r["by_camera"]["moving"]["criteria"].update(camera=[1]), r"by_camera\.moving\.criteria\.camera:"),
        (lambda r: r.update(score_ci95=[1.0]), r"m\.oemu\.score_ci95: expected an interval"),
        (lambda r: r.update(confidence=0.9), r"m\.oemu\.(score|criteria)_ci95: an interval at another level"),
        (lambda r: r.update(confidence=1.5), r"m\.oemu\.confidence: expected a level in \(0, 1\)"),
        (lambda r: r.update(n_failed=3), r"m\.oemu\.n_failed: 3, but 'failed' lists 1"),
        (lambda r: r["items"][2].pop("score"), r"m\.oemu\.items\[2\]\.score: a judged item needs its score"),
        (lambda r: r["items"][0].update(index="0"), r"m\.oemu\.items\[0\]\.index: expected a whole number"),
        (lambda r: r.update(judge="gpt"), r"m\.oemu\.judge: expected an object naming the rubric"),
        (lambda r: r.update(by_camera=[]), r"m\.oemu: 'by_camera' must be an object"),
    ],
)  # fmt: skip
def test_a_malformed_result_is_refused_naming_the_field(change, message):
    result = json.loads(BEFORE.read_text())["m"]["oemu"]
    result["failed"] = [{"index": 5, "error": "no usable reply", "raw": None}]
    result["n_failed"] = 1
    change(result)
    with pytest.raises(ValueError, match=message):
        JudgeResult.from_dict(result, "m.oemu")


def test_report_markdown_is_unchanged_on_the_same_judge_results(tmp_path):
    """report.md on the old-format file and the report tests' judge results, against the report.md the
    code before typed judge results wrote on the same inputs (the data folder's path replaced)."""
    work = write_sample_work_folder(tmp_path / "work")
    fixture = tmp_path / "judge_fixture.json"
    fixture.write_text(json.dumps(JUDGE))
    report = write_marinelife_report(work, "test", {}, tmp_path / "report", judge_results=[BEFORE, fixture])
    markdown = report.markdown.read_text(encoding="utf-8").replace(str(work), "<data>")
    assert markdown == REPORT_BEFORE.read_text(encoding="utf-8")
    kept = report.metrics["models"]["m"]["judge"]["caption"]  # metrics.json keeps the whole result, typed
    assert JudgeResult.from_dict(kept) == read_judge_results([BEFORE])["m"]["caption"]


def test_human_study_reads_the_items_of_a_typed_result(tmp_path):
    model, items = read_judge_items(BEFORE, None)
    old = json.loads(BEFORE.read_text())["m"]
    assert model == "m" and len(items) == sum(len(r["items"]) for r in old.values())
    assert items["MVK--mvk-0103--q6"] == {"error": old["caption"]["failed"][0]["error"]}
    first = old["oemu"]["items"][0]
    assert items[first["question_id"]] == {
        "rubric": "marinelife_open_ended", "rubric_version": "1", "criteria": first["criteria"], "score": first["score"],
    }  # fmt: skip
    broken = json.loads(BEFORE.read_text())
    broken["m"]["oemu"]["items"][1]["criteria"]["camera"] = "five"
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(
        ValueError, match=r"broken\.json: m\.oemu\.items\[1\]\.criteria\.camera: expected a number"
    ):
        read_judge_items(tmp_path / "broken.json", None)


def test_eval_results_read_the_judge_tasks_through_the_typed_result():
    """``results write`` (:func:`entries_from_metrics`) takes each judged task's number, item count,
    rubric and judge from the report's judge result read as a :class:`JudgeResult`."""
    old = json.loads(BEFORE.read_text())["m"]
    metrics = {"benchmark": "MarineLife-16K", "split": "test", "models": {"m": {"judge": old}}}
    run = entries_from_metrics(metrics, MARINE, model="m", dataset_id="lab/MarineLife-16K")
    entries = {e.task_id: e for e in run.entries}
    assert entries["oemu"].value == round(old["oemu"]["score"], 6)
    notes = parse_notes(entries["oemu"].notes)
    assert notes["rubric"] == old["oemu"]["judge"]["signature"] and notes["judge"] == "test-model-2026-01"
    assert notes["n"] == "6" and "ci95" not in notes  # no interval claimed for a judge score
    static = old["caption"]["by_camera"]["static"]
    assert entries["caption_beh_static"].value == static["criteria"]["BEH"]
    assert parse_notes(entries["caption_beh_static"].notes)["n"] == str(static["n"])
    assert not [t for t, _ in run.skipped if t.startswith(("oemu", "caption"))]
    old["oemu"]["n"] = "6"
    with pytest.raises(ValueError, match=r"judge\.oemu\.n: expected a whole number, got '6'"):
        entries_from_metrics(metrics, MARINE, model="m", dataset_id="lab/MarineLife-16K")
