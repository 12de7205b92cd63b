"""A third benchmark is one package and one entry point: the toy under tests/toy_benchmark/, registered
only through a real ``.dist-info`` (``entry_points.txt``, group ``vqabench.benchmarks``) on the
subprocess's path, goes through every shared command with no file outside its package naming it.

Expected values are hand-worked from the toy's six-row sample (tests/toy_benchmark/vqabench_toy/sample).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from builders.testing.hub_server import HubServer
from tests.processes import vqabench

ROOT = Path(__file__).resolve().parent.parent
TOY = ROOT / "tests" / "toy_benchmark"
SAMPLE = TOY / "vqabench_toy" / "sample" / "items.csv"


def dist_info(site: Path, name: str, entry_points: str | None) -> Path:
    """A real installed-distribution record (what pip writes) that importlib.metadata reads."""
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)
    return site


@pytest.fixture(scope="module")
def toy_path(tmp_path_factory) -> str:
    """A PYTHONPATH on which importlib.metadata finds the toy's distribution and its entry point."""
    site = dist_info(
        tmp_path_factory.mktemp("toy-site"),
        "vqabench-toy",
        "[vqabench.benchmarks]\ntoy = vqabench_toy.entry:ENTRY\n",
    )
    return os.pathsep.join([os.environ.get("PYTHONPATH", str(ROOT)), str(TOY), str(site)])


def run(args: list[str], toy_path: str, **env: str):
    return vqabench(args, PYTHONPATH=toy_path, **env)


def ok(args: list[str], toy_path: str, **env: str) -> str:
    done = run(args, toy_path, **env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_command_on_a_benchmark_registered_by_its_entry_point(toy_path, tmp_path, chat_server):
    with SAMPLE.open(newline="") as f:
        sample = list(csv.DictReader(f))
    # the toy's split rule, worked by hand: every third sentence (t03, t06) is a test question
    expected = {"train": ["t01", "t02", "t04", "t05"], "test": ["t03", "t06"]}
    assert "toy" in ok(["--help"], toy_path)

    work, hub = tmp_path / "work", tmp_path / "hub"
    assert "status: complete" in ok(["toy", "build", "--sample", "--work", str(work)], toy_path)
    assert "(train 4, test 2)" in ok(["toy", "export", str(work), str(hub)], toy_path)
    for split, ids in expected.items():
        (shard,) = (hub / "data" / "default").glob(f"{split}-*.parquet")
        rows = pq.read_table(shard).to_pylist()
        assert [r["id"] for r in rows] == ids
        assert [r["answer"] for r in rows] == [s["colour"] for s in sample if s["id"] in ids]
    stats = ok(["toy", "stats", "--data", str(hub)], toy_path)
    assert "test: 2 questions; answers {'blue': 1, 'green': 1}" in stats

    # a model that names blue whatever it is asked: right on t03 (blue), wrong on t06 (green)
    chat_server.handler = lambda body: "Blue, I think."
    predictions = tmp_path / "blue.jsonl"
    llm = ["--llm-model", "always-blue", "--llm-base-url", chat_server.url, "--llm-api-key-env", "none"]
    ok(["toy", "evaluate", "--data", str(hub), "--split", "test", "--out", str(predictions), *llm], toy_path)
    answers = [json.loads(line)["parsed_answer"] for line in predictions.read_text().splitlines()]
    assert answers == ["blue", "blue"]
    assert len(chat_server.chat_requests) == 2

    report = tmp_path / "report"
    ok(["report", "toy", "--data", str(hub), "--split", "test", "--predictions", f"blue={predictions}",
        "--out", str(report)], toy_path)  # fmt: skip
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["models"]["blue"] == {"accuracy": 0.5, "n": 2}

    models = tmp_path / "models"
    ok(["results", "write", str(report / "metrics.json"), "--out", str(models / "org" / "blue")], toy_path)
    entries = yaml.safe_load((models / "org" / "blue" / ".eval_results" / "toy.yaml").read_text())
    assert [(e["dataset"]["id"], e["dataset"]["task_id"], e["value"]) for e in entries] == [
        ("toy-org/Toy", "toy_accuracy", 0.5)
    ]
    board = tmp_path / "board"
    ok(["leaderboard", "toy", "--from", str(models), "--out", str(board)], toy_path)
    assert "org/blue" in (board / "report.md").read_text()

    with HubServer(tokens={"hf_toy_write_token": "write"}, repos=["toy-org/Toy"]) as server:
        pushed = ok(["push", str(hub), "toy-org/Toy"], toy_path, HF_ENDPOINT=server.url,
                    HF_TOKEN="hf_toy_write_token", HF_HUB_OFFLINE="0", HF_HOME=str(tmp_path / "hf-home"))  # fmt: skip
        assert "hf_toy_write_token" not in pushed
        files = server.files("toy-org/Toy")
        local = {p.relative_to(hub).as_posix(): p.read_bytes() for p in hub.rglob("*.parquet")}
        assert "README.md" in files and len(local) == 2 and {k: files.get(k) for k in local} == local

    # the toy ships no harness tasks: a clear error naming the datasets that have them, no traceback
    done = run(
        ["integrations", "path", "lmms-eval", "--data", f"toy={hub}", "--out", str(tmp_path / "t")], toy_path
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "expected NAME=DIR with NAME one of ['bqa', 'marinelife16k']" in done.stderr

    # the toy declares no human study: a usage error naming the benchmarks that have one, no traceback
    done = run(["human-study", "make", "toy", "--data", str(hub), "--out", str(tmp_path / "study")], toy_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "unknown benchmark 'toy'; expected one of bqa, marinelife" in done.stderr


def test_nothing_outside_the_toy_names_it():
    shipped = [
        p for top in ("builders", "bqa", "marinelife16k", "metrics") for p in (ROOT / top).rglob("*.py")
    ]
    assert not [p for p in shipped if "vqabench_toy" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize(
    ("name", "entry_points", "message"),
    [
        # this project's own record without its entry points (an install from before them): shadows the real one
        ("videoqa-bench-tools", None, "no benchmark is registered in vqabench.benchmarks: reinstall the package"),
        ("vqabench-bad", "[vqabench.benchmarks]\nbad = builders:__doc__\n", "entry point bad = builders:__doc__ "
         "(group vqabench.benchmarks): expected a builders.cli._entry Benchmark, got str"),
        ("vqabench-misnamed", "[vqabench.benchmarks]\nother = vqabench_toy.entry:ENTRY\n",
         "entry point other = vqabench_toy.entry:ENTRY (group vqabench.benchmarks): the entry's key is 'toy'"),
    ],
)  # fmt: skip
def test_a_broken_registration_is_one_line_naming_it(tmp_path, name, entry_points, message):
    site = dist_info(tmp_path, name, entry_points)
    done = vqabench(
        ["--help"],
        cwd=tmp_path,
        PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", str(ROOT)), str(TOY)]),
    )
    assert (
        done.returncode == 1
        and done.stderr.startswith(f"vqabench: {message}")
        and "Traceback" not in done.stderr
    )
