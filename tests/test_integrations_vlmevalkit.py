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
    dataset = SUPPORTED[entry](data_dir=built_samples["bqa"].hub, frame_root=frame_root)
    assert len(dataset) == len(dataset.items.data.rows) and dataset.dataset_name == "BQA"
    line = dataset[0]
    message = dataset.build_prompt(0, video_llm=False)
    assert message[-1] == {"type": "text", "value": line["question"]}
    source = dataset.items.data.video(line["video"])
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
    with pytest.raises(ValueError, match="video LLM"):  # it would sample the clip itself
        dataset.build_prompt(line, video_llm=True)


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
    dataset = SUPPORTED["BQA_16frame"](data_dir=hub, frame_root=frame_root)
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
    dataset = SUPPORTED["MarineLife16K_8frame"](data_dir=hub, frame_root=frame_root)
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


def _frames_of(paths) -> list[np.ndarray]:
    return [np.asarray(Image.open(p).convert("RGB")) for p in paths]


def test_frame_cache_is_keyed_by_the_clip_not_the_name(built_samples, tmp_path, monkeypatch):
    """Two BQA folders named alike whose first item's clip differs (the measured failure: after
    pointing VQABENCH_BQA_DATA at other data, the old clips' frames were sent): the frames of the
    second folder's item are its own clip's, with the cache shared."""
    import shutil

    from bqa.data import open_split

    monkeypatch.setenv("VQABENCH_VIDEO_CACHE", str(tmp_path / "videos"))
    first, second = tmp_path / "a" / "bqa", tmp_path / "b" / "bqa"
    shutil.copytree(built_samples["bqa"].work, first)
    shutil.copytree(built_samples["bqa"].work, second)
    rows = open_split(second, "test").rows
    clips = [open_split(second, "test").video(row["id"]) for row in rows[:2]]
    assert Path(clips[0]).read_bytes() != Path(clips[1]).read_bytes()
    shutil.copyfile(clips[1], clips[0])  # same name, same item id, other content
    shared = tmp_path / "frames"
    monkeypatch.setenv("VQABENCH_BQA_DATA", str(first))
    old = SUPPORTED["BQA_16frame"](frame_root=shared)
    old_frames = _frames_of(old.save_video_frames(rows[0]["id"]))
    monkeypatch.setenv("VQABENCH_BQA_DATA", str(second))
    new = SUPPORTED["BQA_16frame"](frame_root=shared)
    new_paths = new.save_video_frames(rows[0]["id"])
    everything = decode(clips[1])
    expected = [everything[int(i * (len(everything) / 17))] for i in range(1, 17)]
    new_frames = _frames_of(new_paths)
    assert all(np.array_equal(a, b) for a, b in zip(new_frames, expected, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(new_frames, old_frames, strict=True))
    # the same clip under another item (or dataset name) shares the cached frames
    assert new.save_video_frames(rows[1]["id"]) == new_paths


def test_parallel_writers_never_share_a_temporary_file(built_samples, frame_root, monkeypatch):
    """Two threads write the same clip's frames at once (MarineLife16K_8frame failed 3 of 3 times
    when threads shared 'frame-1-of-8.tmp.png'): both wait inside the first frame's write until the
    other is there too, so both write before either renames; each must finish with the right frames."""
    import threading

    dataset = SUPPORTED["MarineLife16K_8frame"](
        data_dir=built_samples["marinelife16k"].hub, frame_root=frame_root
    )
    video = dataset.data["video"][0]
    barrier = threading.Barrier(2, timeout=60)
    save = Image.Image.save
    waited = []

    def slow_save(self, fp, *args, **kwargs):
        save(self, fp, *args, **kwargs)
        if not waited or len(waited) < 2:
            waited.append(str(fp))
            barrier.wait()

    monkeypatch.setattr(Image.Image, "save", slow_save)
    results, errors = [], []

    def write():
        try:
            results.append(dataset.save_video_frames(video))
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=write) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == [] and len(results) == 2 and results[0] == results[1]
    assert len(set(waited)) == 2  # two temporary files, one per writer
    source = dataset.items.data.video(video)
    everything = decode(source)
    expected = [everything[int(i * (len(everything) / 9))] for i in range(1, 9)]
    monkeypatch.setattr(Image.Image, "save", save)
    assert all(np.array_equal(a, b) for a, b in zip(_frames_of(results[0]), expected, strict=True))


def test_datasets_take_vlmevalkits_arguments_and_pickle(built_samples, frame_root):
    """build_dataset passes every CLI argument (model, data as the list of names, limit...); --api-mode
    pickles the dataset into a worker; ms-vlmeval's base declares prepare_dataset abstract."""
    import pickle

    hub = built_samples["bqa"].hub
    dataset = SUPPORTED["BQA_16frame"](data_dir=hub, frame_root=frame_root, model=["GPT4o"],
                                       data=["BQA_16frame"], limit=None, work_dir="./outputs")  # fmt: skip
    assert dataset.prepare_dataset("BQA")["root"] == str(hub)
    for name in ("prepare_dataset", "build_prompt", "evaluate"):
        assert not getattr(getattr(type(dataset), name), "__isabstractmethod__", False), name
    assert type(dataset).supported_datasets() == ["BQA_16frame", "BQA_1fps"]
    copy = pickle.loads(pickle.dumps(dataset))
    assert copy.build_prompt(1) == dataset.build_prompt(1)
    with pytest.raises(ValueError, match=r"video LLM.*set the model's VIDEO_LLM to False"):
        dataset.build_prompt(0, video_llm=True)


def test_rows_record_the_frames_sent(built_samples, frame_root, tmp_path):
    """The result file carries the dataset's frame spec, so the report can compare it."""
    from builders.report.provenance import run_provenance

    dataset = SUPPORTED["BQA_1fps"](data_dir=built_samples["bqa"].hub, frame_root=frame_root)
    result = _result_file(dataset, ["x"] * len(dataset), tmp_path / "m_BQA_1fps.tsv")
    run = run_provenance(result)
    assert run["frames"] == {"fps": 1.0, "num_frames": None, "max_side": None, "rule": "vlmevalkit",
                             "video_input": "images"}  # fmt: skip
    assert run["data"]["folder"] == str(built_samples["bqa"].hub.resolve()) and run["split"] == "test"
    # What VLMEvalKit does to those frames' pixels on the way to an API model is recorded too.
    assert "JPEG" in run["images"] and "detail 'low'" in run["images"] and "upscales" in run["images"]
