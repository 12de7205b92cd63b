"""The VLMEvalKit datasets without VLMEvalKit, and reading both harnesses' outputs back.

The datasets are built as VLMEvalKit's config entries build them; their frames are checked against
VLMEvalKit's formula (``int(i * T / (n+1))``) and a full decode; a result file is written the way
VLMEvalKit writes one (the dataset's table plus a ``prediction`` column, as xlsx and tsv), and
``evaluate`` and ``vqabench report`` on it must equal the report on the same replies as JSONL.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from builders.cli import main
from builders.integrations.vlmevalkit import SUPPORTED
from builders.report.bqa_report import load_bqa_split, score_bqa
from builders.report.harness_outputs import VLMEVALKIT_FAILED, read_prediction_lines
from builders.report.inputs import read_predictions
from builders.report.marinelife_report import load_marinelife_split, score_marinelife


def decode(source) -> list[np.ndarray]:
    opened = io.BytesIO(source["bytes"]) if isinstance(source, dict) else str(source)
    with av.open(opened) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def rate_of(source) -> float:
    opened = io.BytesIO(source["bytes"]) if isinstance(source, dict) else str(source)
    with av.open(opened) as container:
        return float(container.streams.video[0].average_rate)


@pytest.fixture
def frame_root(tmp_path, monkeypatch):
    monkeypatch.setenv("VQABENCH_VIDEO_CACHE", str(tmp_path / "videos"))
    return tmp_path / "frames"


def test_config_entries():
    assert set(SUPPORTED) == {"BQA_16frame", "BQA_1fps", "MarineLife16K_8frame"}
    assert SUPPORTED["BQA_16frame"].keywords == {"dataset": "BQA", "nframe": 16}
    assert SUPPORTED["BQA_1fps"].keywords == {"dataset": "BQA", "fps": 1.0}


@pytest.mark.parametrize("entry", ["BQA_16frame", "BQA_1fps"])
def test_bqa_frames_are_vlmevalkits(built_samples, frame_root, entry):
    dataset = SUPPORTED[entry](data=built_samples["bqa"].hub, frame_root=frame_root)
    assert len(dataset) == len(dataset.items.data.rows) and dataset.dataset_name == "BQA"
    line = dataset[0]
    message = dataset.build_prompt(0, video_llm=False)
    assert message[-1] == {"type": "text", "value": line["question"]}
    source = dataset.items.data.video(0)
    everything = decode(source)
    total = len(everything)
    if entry == "BQA_16frame":
        indices = [int(i * (total / 17)) for i in range(1, 17)]
    else:
        rate = rate_of(source)
        indices = [int(i * (rate / 1.0)) for i in range(int(total / rate * 1.0))]
    images = [m["value"] for m in message[:-1]]
    assert [m["type"] for m in message[:-1]] == ["image"] * len(indices)
    for path, index in zip(images, indices, strict=True):
        assert np.array_equal(np.asarray(Image.open(path).convert("RGB")), everything[index])
    (video,) = dataset.build_prompt(line, video_llm=True)[:-1]
    assert video["type"] == "video" and Path(video["value"]).suffix == ".mp4"


def _result_file(dataset, replies: list[str], path: Path) -> Path:
    """What VLMEvalKit's inference writes: the dataset's table plus ``prediction``."""
    table = dataset.data.copy()
    table["prediction"] = replies
    if path.suffix == ".xlsx":
        table.to_excel(path, index=False)
    else:
        table.to_csv(path, sep="\t", index=False)
    return path


@pytest.mark.parametrize("suffix", [".xlsx", ".tsv"])
def test_bqa_result_file_scores_like_the_report(built_samples, frame_root, tmp_path, suffix, capsys):
    hub = built_samples["bqa"].hub
    dataset = SUPPORTED["BQA_16frame"](data=hub, frame_root=frame_root)
    rows = dataset.items.data.rows
    kinds = ["text", "letter", "wrong", "failed", "nothing"]
    replies = []
    for k, row in enumerate(rows):
        kind = kinds[k % len(kinds)]
        wrong = next(c for c in row["choices"] if c != row["answer"])
        replies.append({"text": row["answer"], "letter": "ABCD"[row["choices"].index(row["answer"])], "wrong": wrong,
                        "failed": f"{VLMEVALKIT_FAILED}. Error: timeout", "nothing": "hmm"}[kind])  # fmt: skip
    result = _result_file(dataset, replies, tmp_path / f"model_BQA_16frame{suffix}")
    numbers = dataset.evaluate(str(result))
    jsonl = tmp_path / "replies.jsonl"
    jsonl.write_text("".join(
        json.dumps({"id": r["id"], "raw_output": None if rep.startswith(VLMEVALKIT_FAILED) else rep}) + "\n"
        for r, rep in zip(rows, replies, strict=True)
    ))  # fmt: skip
    expected = score_bqa(load_bqa_split(hub, "test"), {"m": jsonl}, allow_missing=False)["models"]["m"][
        "metrics"
    ]
    assert numbers["accuracy"] == pytest.approx(expected["accuracy"])
    assert numbers["accuracy"] == pytest.approx(sum(k % 5 in (0, 1) for k in range(len(rows))) / len(rows))
    assert numbers["n_unparsed"] == expected["n_unparsed"]
    assert read_predictions(result, "id")[rows[0]["id"]].text == replies[0]
    out = tmp_path / "report"
    assert main(["report", "bqa", "--data", str(hub), "--predictions", f"m={result}", "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["models"]["m"]["metrics"]["accuracy"] == pytest.approx(expected["accuracy"])


def test_marinelife_result_file_scores_like_the_report(built_samples, frame_root, tmp_path):
    hub = built_samples["marinelife16k"].hub
    dataset = SUPPORTED["MarineLife16K_8frame"](data=hub, frame_root=frame_root)
    assert set(dataset.data["question_id"]) == {
        r["question_id"] for r in dataset.items.data.rows if r["question_format"] == "multiple_choice"
    }
    message = dataset.build_prompt(0, video_llm=False)
    assert len(message) == 9  # 8 frames, then the question
    replies = [row["answer"] if k % 2 else "(Z)" for k, row in enumerate(dataset.data.to_dict("records"))]
    result = _result_file(dataset, replies, tmp_path / "model_MarineLife16K_8frame.tsv")
    numbers = dataset.evaluate(str(result))
    jsonl = tmp_path / "replies.jsonl"
    jsonl.write_text("".join(json.dumps({"question_id": q, "raw_output": r}) + "\n"
                             for q, r in zip(dataset.data["question_id"], replies, strict=True)))  # fmt: skip
    expected = score_marinelife(load_marinelife_split(hub, "test"), {"m": jsonl}, allow_missing=True)["m"][
        "accuracy"
    ]
    for key, value in numbers.items():
        assert value == (expected["n_unparsed"]["overall"] if key == "n_unparsed" else expected[key]), key
    assert numbers["overall"] == pytest.approx(100 * sum(k % 2 for k in range(len(replies))) / len(replies))


def test_lmms_eval_sample_log_reads_back(tmp_path):
    line = {"id": "q1", "reference": "Fear", "raw_output": "Fear.", "rationale": None}
    log = tmp_path / "20260101_samples_bqa.jsonl"
    log.write_text(json.dumps({"doc_id": 0, "target": "Fear", "filtered_resps": "Fear.", "accuracy": line,
                               "accuracy_easy": line, "doc_hash": "x"}) + "\n")  # fmt: skip
    assert read_prediction_lines(log) == [line]
    assert read_predictions(log, "id")["q1"].text == "Fear."
    other = tmp_path / "other_samples.jsonl"
    other.write_text(json.dumps({"doc_id": 3, "filtered_resps": "x", "exact_match": 1.0}) + "\n")
    with pytest.raises(ValueError, match=r"line 1 \(doc_id 3\): no metric holds a predictions line"):
        read_prediction_lines(other)
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps(line) + "\n")
    assert read_prediction_lines(plain) == [line]


def test_result_file_without_the_item_column_is_refused(tmp_path):
    path = tmp_path / "other.tsv"
    path.write_text("index\tquestion\tprediction\n0\tq\tA\n")
    with pytest.raises(ValueError, match="row 2: no 'vqabench_item' column"):
        read_prediction_lines(path)
