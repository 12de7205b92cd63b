"""The MarineLife-16K evaluation runner against a real local chat server: one prediction per question,
scored from the file alone, resumable without repeating a call, the same from a work folder and from
its exported Hub folder; the judge step and the CLI feed ``vqabench report marinelife``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from builders.cli import main as cli_main
from builders.evaluation.marinelife import evaluate, judge, judge_inputs
from builders.files.jsonio import read_jsonl
from builders.llm import LLMClient, LLMSettings
from builders.scoring.answer_parsing import parsed_choice
from builders.scripted.baseline_responder import BaselineModel, ScriptedJudge
from builders.scripted.chat_requests import frames_digest, image_urls, last_user_text
from builders.testing.chat_faults import Fault
from builders.testing.samples.record_marinelife_baseline import oracle
from builders.video.frame_spec import FrameSpec
from marinelife16k.data import open_split
from marinelife16k.export import export_release
from marinelife16k.rubrics import JUDGE_TASKS
from marinelife16k.sample import write_sample_work_folder
from marinelife16k.vocabulary import MULTIPLE_CHOICE, OPTION_LABELS

FRAMES = FrameSpec(fps=None, num_frames=8)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """The bundled sample's ground-truth release as a work folder (videos read from the sample)."""
    return write_sample_work_folder(tmp_path_factory.mktemp("marine") / "work")


@pytest.fixture(scope="module")
def model(work, tmp_path_factory) -> BaselineModel:
    return BaselineModel(marine_videos=oracle(work, FRAMES))


@pytest.fixture
def server(chat_server, model):
    chat_server.handler = model
    return chat_server


def _client(server, cache: Path, **settings) -> LLMClient:
    values = {"model": "scripted-baseline", "base_url": server.url, "api_key_env": None, "progress": False}
    return LLMClient(LLMSettings(**{**values, **settings}), cache_path=cache)


def test_one_prediction_per_question_scored_from_the_file(work, server, tmp_path):
    data = open_split(work, "test")
    with _client(server, tmp_path / "cache.sqlite") as client:
        summary = evaluate(data, client, tmp_path / "eval", tmp_path / "preds.jsonl", frames=FRAMES)
    assert summary.ok and summary.out == tmp_path / "preds.jsonl"
    rows = read_jsonl(summary.out)
    assert [r["question_id"] for r in rows] == [r["question_id"] for r in data.rows]
    assert len(server.chat_requests) == len(data.rows)  # one request per question
    for request in server.chat_requests:  # the frames, then the record's own prompt, unchanged
        assert len(image_urls(request.body)) == 8
        assert any(last_user_text(request.body).endswith(r["prompt"]) for r in data.rows)
    sent = {r["question_id"]: r for r in data.rows}
    for row in rows:
        record = sent[row["question_id"]]
        assert row["video"] == record["id"] and row["camera_kind"] == data.videos[record["id"]]["camera_kind"]
        assert row["model"] == server.model and row["prompt"] == "marinelife_answer"
        if record["question_format"] == MULTIPLE_CHOICE:
            read = parsed_choice(row["raw_output"], [o["text"] for o in record["options"]], OPTION_LABELS)
            assert row["parsed_answer"] == read.answer(OPTION_LABELS)
            assert (row["parse_reason"], row["answer_parser"]) == (
                read.reason,
                "vqabench-choice@4|aliases:none",
            )
            assert row["reference"] == record["answer"] and row["correct"] == (
                row["parsed_answer"] == record["answer"]
            )
        else:
            assert row["parsed_answer"] is None and row["correct"] is None and row["parse_reason"] is None
            assert (
                row["reference"] == record["answer_text"] and row["evidence"] == record["evidence_attributes"]
            )
    mcq = [r for r in rows if r["question_format"] == MULTIPLE_CHOICE]
    assert summary.scores["n"] == len(mcq)
    assert summary.scores["accuracy"] == pytest.approx(100 * sum(r["correct"] for r in mcq) / len(mcq))
    # An imperfect baseline: some right, some wrong.
    assert 0 < sum(r["correct"] for r in mcq) < len(mcq)


def test_a_failed_call_stays_pending_and_a_rerun_asks_only_for_it(work, server, model, tmp_path):
    data = open_split(work, "test")
    counts = Counter(r["prompt"] for r in data.rows)
    unique = [r["prompt"] for r in data.rows if counts[r["prompt"]] == 1]  # a prompt asked once: one question
    failing = unique[3:7]

    def flaky(body):
        text = last_user_text(body)
        return Fault.server_error() if any(p in text for p in failing) else model(body)

    server.handler = flaky
    out = tmp_path / "preds.jsonl"
    with _client(server, tmp_path / "cache.sqlite", max_retries=0) as client:
        first = evaluate(data, client, tmp_path / "eval", out, frames=FRAMES)
    assert not first.ok and first.out is None and not out.exists()
    assert len(first.failed) == 4 and first.predicted == len(data.rows) - 4
    server.handler = model
    server.reset()
    with _client(server, tmp_path / "cache.sqlite", max_retries=0) as client:
        second = evaluate(data, client, tmp_path / "eval", out, frames=FRAMES)
    assert second.ok and second.run.api_calls == 4 and len(server.chat_requests) == 4
    assert [r["question_id"] for r in read_jsonl(out)] == [r["question_id"] for r in data.rows]
    # The same folder with other frames is refused, not mixed.
    with _client(server, tmp_path / "cache.sqlite") as client, pytest.raises(ValueError, match="frames"):
        evaluate(data, client, tmp_path / "eval", out, frames=FrameSpec(fps=None, num_frames=4))


def test_hub_folder_gives_the_same_questions_and_frames(work, tmp_path):
    hub = export_release(work, tmp_path / "hub", cache_dir=tmp_path / "cache", check=False).folder
    from_work = open_split(work, "validation")
    from_hub = open_split(hub, "validation")
    assert from_hub.rows == from_work.rows
    assert from_hub.videos == {k: {c: v[c] for c in from_hub.videos[k]} for k, v in from_work.videos.items()}
    for video in from_work.videos:
        assert frames_digest(FRAMES.data_urls(from_hub.video(video))) == frames_digest(
            FRAMES.data_urls(from_work.video(video))
        )


def test_judge_scores_open_ended_answers_by_camera(work, server, tmp_path):
    data = open_split(work, "test")
    with _client(server, tmp_path / "cache.sqlite") as client:
        evaluate(data, client, tmp_path / "eval", tmp_path / "preds.jsonl", frames=FRAMES)
    rows = read_jsonl(tmp_path / "preds.jsonl")
    server.handler = ScriptedJudge()
    with _client(server, tmp_path / "judge.sqlite", model="scripted-judge") as client:
        results = judge(rows, client)
    assert set(results) == set(JUDGE_TASKS)
    for task, (qtype, _, _) in JUDGE_TASKS.items():
        cameras = Counter(r["camera_kind"] for r in rows if r["type"] == qtype)
        result = results[task]
        assert result.n == sum(cameras.values()) and result.n_failed == 0
        assert {kind: cell.n for kind, cell in result.by("camera").items()} == {
            kind: cameras.get(kind, 0) for kind in ("static", "moving")
        }
        assert result.score is not None and 0 < result.score < 5  # uneven answers: neither all 0 nor all 5
    assert "evidence" in judge_inputs(rows, "oemu") and "evidence" not in judge_inputs(rows, "caption")
    asked = len(server.chat_requests)
    with _client(server, tmp_path / "judge.sqlite", model="scripted-judge") as client:
        again = judge(rows, client)
    assert len(server.chat_requests) == asked  # judged again from the cache: nothing sent
    assert {t: r.score for t, r in again.items()} == {t: r.score for t, r in results.items()}


def test_cli_predict_judge_report(work, server, tmp_path, capsys):
    preds, judged, report = tmp_path / "m.jsonl", tmp_path / "judge.json", tmp_path / "report"
    llm = ["--llm-base-url", server.url, "--llm-api-key-env", "none"]
    assert cli_main(["marinelife", "evaluate", "--data", str(work), "--split", "test", "--out", str(preds),
                     "--llm-model", "scripted-baseline", *llm]) == 0  # fmt: skip
    assert "multiple-choice accuracy" in capsys.readouterr().out
    server.handler = ScriptedJudge()
    assert cli_main(["marinelife", "judge", str(preds), "--out", str(judged), "--llm-model", "scripted-judge",
                     "--llm-cache", str(tmp_path / "judge.sqlite"), *llm]) == 0  # fmt: skip
    assert set(json.loads(judged.read_text())["m"]) == {"oemu", "caption"}
    assert cli_main(["report", "marinelife", "--data", str(work), "--split", "test", "--predictions", f"m={preds}",
                     "--judge-results", str(judged), "--out", str(report)]) == 0  # fmt: skip
    metrics = json.loads((report / "metrics.json").read_text())["models"]["m"]
    results = json.loads(judged.read_text())["m"]
    # Carried as they are; the report names the data folders relative to itself (issue 29).
    assert _folders_resolved(metrics["judge"], report) == _folders_resolved(results, Path.cwd())


def _folders_resolved(value, base: Path):
    """``value`` with every ``folder`` read from ``base`` and made absolute."""
    if isinstance(value, dict):
        return {
            k: str((base / v).resolve()) if k == "folder" else _folders_resolved(v, base)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_folders_resolved(v, base) for v in value]
    return value


def test_bad_input_is_named(work, tmp_path):
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        open_split(work, "dev")
    with pytest.raises(FileNotFoundError, match="neither a MarineLife-16K work folder"):
        open_split(tmp_path, "test")
