"""The lmms-eval task folder, run the way lmms-eval runs it, without lmms-eval installed.

:func:`load_task` reads a task YAML as lmms-eval v0.7.2 does (``include`` merged under the task's
own keys; ``!function utils.name`` executes ``utils.py`` from the YAML's folder and takes the name),
loads the docs with ``datasets.load_dataset`` and ``process_docs``; each doc then goes through
``doc_to_visual``, ``doc_to_text``, ``process_results`` with a scripted reply, and every metric's
aggregation runs over the per-doc values. The numbers must equal ``vqabench report`` (and
``vqabench marinelife judge``) on the same replies, and the hand count of right answers.
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
import os
import re
import socket
from pathlib import Path

import av
import datasets
import numpy as np
import pytest
import yaml
from hub_helpers import record_checksums

from bqa.data import open_split as open_bqa
from builders.cli import main
from builders.report.bqa_report import load_bqa_split, score_bqa
from builders.report.marinelife_report import load_marinelife_split, score_marinelife
from marinelife16k.data import open_split as open_marinelife


class TaskLoader(yaml.SafeLoader):
    pass


def _function(loader: TaskLoader, node: yaml.Node):
    module_name, _, name = loader.construct_scalar(node).rpartition(".")
    path = Path(loader.name).parent / f"{module_name}.py"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


TaskLoader.add_constructor("!function", _function)


def load_yaml(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        config = yaml.load(f, Loader=TaskLoader)  # noqa: S506 - SafeLoader plus one tag
    include = config.pop("include", None)
    return {**(load_yaml(path.parent / include) if include else {}), **config}


def load_task(folder: Path, task: str) -> tuple[dict, list[dict]]:
    config = load_yaml(folder / f"{task}.yaml")
    docs = datasets.load_dataset(
        config["dataset_path"], config.get("dataset_name"), split=config["test_split"],
        **config.get("dataset_kwargs", {}),
    )  # fmt: skip
    if "process_docs" in config:
        docs = config["process_docs"](docs)
    return config, list(docs)


def run_task(config: dict, docs: list[dict], reply_of) -> dict[str, float]:
    """What lmms-eval's evaluator does for generate_until tasks: per doc, process_results on the
    model's reply; per metric, its aggregation over the docs' values."""
    kwargs = config["lmms_eval_specific_kwargs"]["default"]
    per_metric: dict[str, list] = {m["metric"]: [] for m in config["metric_list"]}
    for doc in docs:
        reply = reply_of(doc, config["doc_to_text"](doc, kwargs))
        for metric, value in config["process_results"](doc, [reply]).items():
            per_metric[metric].append(value)
    return {m["metric"]: m["aggregation"](per_metric[m["metric"]]) for m in config["metric_list"]}


@pytest.fixture(scope="module")
def tasks(built_samples, tmp_path_factory, monkeypatch_module):
    monkeypatch_module.setenv("VQABENCH_VIDEO_CACHE", str(tmp_path_factory.mktemp("videos")))
    out = tmp_path_factory.mktemp("lmms") / "tasks"
    hubs = {name: built_samples[name].hub for name in ("bqa", "marinelife16k")}
    args = ["integrations", "path", "lmms-eval", "--out", str(out)]
    for name, hub in hubs.items():
        args += ["--data", f"{name}={hub}"]
    assert main(args) == 0
    return out, hubs


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def decode(source) -> list[np.ndarray]:
    """A full decode of a path or a ``{"bytes": ...}`` video value."""
    opened = io.BytesIO(source["bytes"]) if isinstance(source, dict) else str(source)
    with av.open(opened) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def bqa_reply(kind: int, row: dict) -> str:
    """Right as text, right as a letter, a wrong choice, or nothing readable, in turn."""
    wrong = next(c for c in row["choices"] if c != row["answer"])
    return [f"{row['answer']}.", "ABCD"[row["choices"].index(row["answer"])], wrong, "I cannot tell."][
        kind % 4
    ]


@pytest.mark.parametrize("task", ["bqa", "bqa_cot"])
def test_bqa_tasks_equal_the_report(tasks, task, tmp_path, capsys):
    folder, hubs = tasks
    config, docs = load_task(folder, task)
    split = open_bqa(hubs["bqa"], "test")
    assert [d["id"] for d in docs] == [r["id"] for r in split.rows] and len(docs) >= 4
    for doc in docs:  # the video file is the item's own clip
        (path,) = config["doc_to_visual"](doc)
        assert path.endswith(".mp4")
        source = split.video(doc["id"])
        assert Path(path).read_bytes() == (
            source["bytes"] if isinstance(source, dict) else Path(source).read_bytes()
        )
    replies: dict[str, str] = {}

    def reply_of(doc, text):
        row = split.rows[[r["id"] for r in split.rows].index(doc["id"])]
        assert doc["question"] in text and all(c in text for c in row["choices"])
        assert ("Answer with a single word" in text) == (task == "bqa")
        replies[doc["id"]] = bqa_reply(len(replies), row)
        return replies[doc["id"]]

    numbers = run_task(config, docs, reply_of)
    right = sum(1 for k in range(len(docs)) if k % 4 in (0, 1))
    assert numbers["accuracy"] == pytest.approx(right / len(docs))
    assert numbers["n_unparsed"] == sum(1 for k in range(len(docs)) if k % 4 == 3)

    predictions = tmp_path / "replies.jsonl"
    predictions.write_text("".join(json.dumps({"id": i, "raw_output": r}) + "\n" for i, r in replies.items()))
    report = score_bqa(load_bqa_split(hubs["bqa"], "test"), {"m": predictions}, allow_missing=False)
    metrics = report["models"]["m"]["metrics"]
    for key in ("accuracy", "accuracy_easy", "accuracy_hard", "n_unparsed"):
        assert _same(numbers[key], metrics[key]), key
    for field in ("gender", "age", "ethnicity"):
        groups = metrics[f"by_{field}"]["groups"]
        for name, value in numbers.items():
            if name.startswith(f"error_rate_{field}_"):
                label = next((g for g in groups if name.endswith("_" + _slug(g))), None)
                assert _same(value, groups[label]["error_rate"] if label else None), name


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label.lower()).strip("_")


def _same(a: float, b: float | None) -> bool:
    return (b is None and math.isnan(a)) or a == pytest.approx(b)


def test_marinelife_mcq_equals_the_report(tasks, tmp_path):
    folder, hubs = tasks
    config, docs = load_task(folder, "marinelife16k_mcq")
    split = open_marinelife(hubs["marinelife16k"], "test")
    mcq = [r for r in split.rows if r["question_format"] == "multiple_choice"]
    assert sorted(d["question_id"] for d in docs) == sorted(r["question_id"] for r in mcq) and mcq
    by_id = {r["question_id"]: r for r in mcq}
    doc = docs[0]
    (path,) = config["doc_to_visual"](doc)
    source = split.video(by_id[doc["question_id"]]["id"])
    expected = decode(source)
    assert all(np.array_equal(a, b) for a, b in zip(decode(path), expected, strict=True))
    replies = {}

    def reply_of(doc, text):
        record = by_id[doc["question_id"]]
        assert record["prompt"] in text
        k = len(replies)
        wrong = next(label for label in "ABCD" if label != record["answer"])
        replies[doc["question_id"]] = [record["answer"], f"({wrong})", "no idea"][k % 3]
        return replies[doc["question_id"]]

    numbers = run_task(config, docs, reply_of)
    assert numbers["accuracy_overall"] == pytest.approx(
        100 * sum(1 for k in range(len(docs)) if k % 3 == 0) / len(docs)
    )
    predictions = tmp_path / "replies.jsonl"
    predictions.write_text(
        "".join(json.dumps({"question_id": q, "raw_output": r}) + "\n" for q, r in replies.items())
    )
    report = score_marinelife(load_marinelife_split(hubs["marinelife16k"], "test"), {"m": predictions},
                              allow_missing=False)["m"]["accuracy"]  # fmt: skip
    assert numbers["n_unparsed"] == report["n_unparsed"]["overall"]
    for name, value in numbers.items():
        if name.startswith("accuracy_"):
            key = next(k for k in report["n"] if _slug(k) == name.removeprefix("accuracy_"))
            assert _same(value, report[key]), name


def test_marinelife_open_is_judged_like_the_cli(tasks, tmp_path, chat_server, monkeypatch, capsys):
    folder, hubs = tasks
    for name, value in {"MODEL": "judge-model", "BASE_URL": chat_server.url, "API_KEY_ENV": "none",
                        "PROGRESS": "false", "CACHE": str(tmp_path / "judge.sqlite")}.items():  # fmt: skip
        monkeypatch.setenv(f"VQABENCH_JUDGE_{name}", value)
    config, docs = load_task(folder, "marinelife16k_open")
    assert docs and all(d["question_format"] != "multiple_choice" for d in docs)
    lines = []

    def reply_of(doc, text):
        return f"A fish near the reef ({len(text) % 7})."

    numbers = run_task(config, docs, reply_of)
    asked = len(chat_server.chat_requests)
    assert asked >= len(docs)
    # the same lines through `vqabench marinelife judge` (same rubric; answered from the same cache)
    for doc in docs:
        text = config["doc_to_text"](doc, {})
        lines.append(config["process_results"](doc, [reply_of(doc, text)])["oemu_score"])
    predictions = tmp_path / "open.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "judged.json"
    assert main(["marinelife", "judge", str(predictions), "--out", str(out), "--llm-cache",
                 str(tmp_path / "judge.sqlite")]) == 0  # fmt: skip
    assert len(chat_server.chat_requests) == asked  # all cache hits: the same requests
    judged = json.loads(out.read_text())["open"]
    for task in ("oemu", "caption"):
        if task in judged:
            assert _same(numbers[f"{task}_score"], judged[task]["score"])
            for camera in ("static", "moving"):
                assert _same(numbers[f"{task}_{camera}"], judged[task]["by_camera"][camera]["score"])
        else:
            assert math.isnan(numbers[f"{task}_score"])


def test_shipped_folder_says_how_to_configure(capsys):
    assert main(["integrations", "path", "lmms-eval"]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert (folder / "bqa.yaml").is_file() and (folder / "utils.py").is_file()
    config = load_yaml(folder / "bqa.yaml")
    with pytest.raises(FileNotFoundError, match="vqabench integrations path lmms-eval --data"):
        config["doc_to_visual"]({"id": "x"})
    assert main(["integrations", "path", "lmms-eval", "--data", "bqa=/nowhere", "--out", "/tmp/x"]) != 0
    assert "/nowhere: not a Hub-layout folder" in capsys.readouterr().err


# -- what the model of the run is handed and sends ----------------------------------------------------
# Stand-ins with the names and layout of lmms-eval's classes (lmms_eval.api.model.lmms, the simple and
# the chat openai model): as in lmms-eval, the model's generate_until calls the task's doc_to_visual.
class lmms:  # noqa: N801 - the name the task recognises
    pass


class SimpleOpenAI(lmms):
    def __init__(self, max_frames_num: int = 10, video_fps: float | None = None):
        self.max_frames_num, self.video_fps = max_frames_num, video_fps

    def encode_video(self, video_path, for_get_frames_num):
        raise AssertionError("not called here")

    def generate_until(self, doc_to_visual, doc):
        return doc_to_visual(doc)


class ChatOpenAI(SimpleOpenAI):
    pass_video_url = False

    def generate_until(self, doc_to_visual, doc):
        return doc_to_visual(doc)


class QwenVL(lmms):
    max_num_frames = 32

    def generate_until(self, doc_to_visual, doc):
        return doc_to_visual(doc)


for _cls, _module in ((lmms, "lmms_eval.api.model"), (SimpleOpenAI, "lmms_eval.models.simple.openai"),
                      (ChatOpenAI, "lmms_eval.models.chat.openai"), (QwenVL, "lmms_eval.models.chat.qwen2_5_vl")):  # fmt: skip
    _cls.__module__ = _module
SimpleOpenAI.__qualname__ = ChatOpenAI.__qualname__ = "OpenAICompatible"


def openai_indices(total: int, n: int) -> list[int]:
    """lmms-eval's openai encode_video without video_fps, by hand: np.linspace(0, T-1, min(n, T),
    dtype=int), plus the last frame when missing, sorted without repeats."""
    chosen = np.linspace(0, total - 1, min(n, total), dtype=int).tolist()
    return sorted(set([*chosen, total - 1]))


def test_the_frames_the_calling_model_sends_are_recorded(tasks):
    folder, hubs = tasks
    config, docs = load_task(folder, "bqa")
    doc = docs[0]
    opened = open_bqa(hubs["bqa"], "test")
    everything = decode(opened.video(opened.rows[0]["id"]))
    spec = {
        "fps": None,
        "num_frames": 16,
        "max_side": None,
        "rule": "lmms-eval-openai",
        "video_input": "images",
    }

    (path,) = SimpleOpenAI(max_frames_num=16).generate_until(config["doc_to_visual"], doc)
    assert path.endswith(".mp4")  # it decodes the clip itself, by the rule recorded
    run = config["process_results"](doc, ["Fear"])["accuracy"]["provenance"]
    assert run["frames"] == spec and run["harness"].startswith("lmms-eval") and run["split"] == "test"

    images = ChatOpenAI(max_frames_num=16).generate_until(config["doc_to_visual"], doc)
    expected = [everything[i] for i in openai_indices(len(everything), 16)]
    assert len(images) == len(expected)  # the frames themselves, full size, as images
    assert all(np.array_equal(np.asarray(im), e) for im, e in zip(images, expected, strict=True))
    assert config["process_results"](doc, ["Fear"])["accuracy"]["provenance"]["frames"] == spec

    (path,) = QwenVL().generate_until(config["doc_to_visual"], doc)
    frames = config["process_results"](doc, ["Fear"])["accuracy"]["provenance"]["frames"]
    assert (
        frames["rule"] is None
        and "qwen2_5_vl" in frames["sampled_by"]
        and "max_num_frames=32" in frames["sampled_by"]
    )


def test_open_task_checks_the_judge_when_it_is_built(tasks, monkeypatch):
    """Measured: without the judge variables marinelife16k_open failed at aggregation, after every
    generation, naming a --llm-model flag lmms-eval does not have."""
    folder, _ = tasks
    for name in [n for n in os.environ if n.startswith("VQABENCH_JUDGE_")]:
        monkeypatch.delenv(name)
    with pytest.raises(ValueError, match="VQABENCH_JUDGE_MODEL") as refused:
        load_task(folder, "marinelife16k_open")
    assert "--llm-model" not in str(refused.value)
    monkeypatch.setenv("VQABENCH_JUDGE_MODEL", "judge")
    monkeypatch.setenv("VQABENCH_JUDGE_API_KEY_ENV", "MY_JUDGE_KEY")
    monkeypatch.delenv("MY_JUDGE_KEY", raising=False)
    with pytest.raises(ValueError, match="MY_JUDGE_KEY .*is not set"):
        load_task(folder, "marinelife16k_open")


def test_a_judge_failing_at_aggregation_keeps_the_generations(tasks, monkeypatch, caplog):
    """lmms-eval writes its sample log after aggregating: a judge error there lost every reply; now
    the judge's numbers are NaN, the error is logged, and the lines are there to be judged again."""
    folder, _ = tasks
    with socket.socket() as probe:  # a port nobody listens on: every judge request fails at once
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for name, value in {"MODEL": "judge", "BASE_URL": f"http://127.0.0.1:{port}/v1", "API_KEY_ENV": "none",
                        "MAX_RETRIES": "0", "PROGRESS": "false"}.items():  # fmt: skip
        monkeypatch.setenv(f"VQABENCH_JUDGE_{name}", value)
    config, docs = load_task(folder, "marinelife16k_open")
    with caplog.at_level("ERROR"):
        numbers = run_task(config, docs, lambda doc, text: "A fish.")
    assert all(math.isnan(v) for v in numbers.values())
    assert "the judge failed" in caplog.text and "vqabench marinelife judge" in caplog.text
    counts = re.findall(r"(\d+) of (\d+) items", caplog.text)  # every item failed: "6 of 6", not "6 of 0"
    open_docs = [d for d in docs if d.get("question_format") != "multiple_choice"]
    assert counts and all(a == b != "0" for a, b in counts), caplog.text
    assert sum(int(a) for a, _ in counts) == len(open_docs)
    assert (
        " --out judge.json" in caplog.text and f"--data {config['dataset_path']}" in caplog.text
    )  # runnable as given


def test_two_folders_of_one_name_keep_their_own_docs(built_samples, tmp_path, monkeypatch):
    """datasets names a local folder's cache after the folder: two Hub folders called 'bqa' shared
    one entry, and lmms-eval iterated the other folder's docs."""
    import shutil

    import pyarrow.parquet as pq

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf"))  # never the user's
    first, second = tmp_path / "a" / "bqa", tmp_path / "b" / "bqa"
    shutil.copytree(built_samples["bqa"].hub, first)
    shutil.copytree(built_samples["bqa"].hub, second)
    (part,) = (second / "data").glob("*/test-*.parquet")
    table = pq.read_table(part)
    pq.write_table(table.take(list(range(table.num_rows))[::-1]), part)  # the same items, reversed
    record_checksums(second)
    ids = {}
    for name, folder in (("a", first), ("b", second)):
        out = tmp_path / f"tasks-{name}"
        assert main(["integrations", "path", "lmms-eval", "--data", f"bqa={folder}", "--out", str(out)]) == 0
        _, docs = load_task(out, "bqa")
        ids[name] = [d["id"] for d in docs]
    assert ids["a"] == [r["id"] for r in open_bqa(first, "test").rows]
    assert ids["b"] == [r["id"] for r in open_bqa(second, "test").rows] == ids["a"][::-1]


def test_docs_of_other_data_are_refused(tasks):
    folder, _ = tasks
    config = load_yaml(folder / "bqa.yaml")
    with pytest.raises(ValueError, match="datasets cache holds another folder's data"):
        config["process_docs"](datasets.Dataset.from_dict({"id": ["somebody-else"]}))
