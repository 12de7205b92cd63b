"""``vqabench serve`` as a user starts it: a real process on 127.0.0.1, real HTTP, the real commands
pointed at it (issue 42: no offline way to try evaluate, build or judge; the chat double's
default reply failed every bound request of a build)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from processes import vqabench

ROOT = Path(__file__).resolve().parent.parent
BOLD = ROOT / "bqa" / "sample" / "bold"


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """The base URL a real ``vqabench serve`` process prints (a free port: ``--port 0``)."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    process = subprocess.Popen([sys.executable, "-m", "builders.cli", "serve"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    try:
        first = process.stdout.readline()  # blocks until the server is listening (printed after bind)
        second = process.stdout.readline()
        assert first.startswith("vqabench serve: scripted endpoint at http://127.0.0.1:"), first
        url = first.split(" at ", 1)[1].split()[0]
        assert second.split() == ["--llm-base-url", url, "--llm-api-key-env", "none"]
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1: never through a proxy


def llm(url: str) -> list[str]:
    return ["--llm-model", "scripted", "--llm-base-url", url, "--llm-api-key-env", "none"]


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(f"{url}/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})  # fmt: skip
    with DIRECT.open(request, timeout=60) as reply:
        return json.load(reply)


def test_a_bound_structured_request_gets_its_own_item_id_back(served):
    schema = {"type": "object", "properties": {"item_id": {"type": "string"}, "score": {"type": "integer"}},
              "required": ["item_id", "score"]}  # fmt: skip
    body = {"model": "m", "messages": [{"role": "user", "content": "Item id: clip-7/q2\nRate it."}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "custom", "schema": schema}}}  # fmt: skip
    content = json.loads(post(served, body)["choices"][0]["message"]["content"])
    assert content["item_id"] == "clip-7/q2" and isinstance(content["score"], int)
    with DIRECT.open(f"{served}/models", timeout=60) as reply:
        assert [m["id"] for m in json.load(reply)["data"]] == ["vqabench-scripted"]


def test_bqa_build_from_the_bundled_bold_sample_then_evaluate_against_it(served, tmp_path):
    """Every one of the build's requests is answered and accepted (before: all 38 STEP2 requests failed
    on the item binding), the release exports, and an evaluation of it runs to the end."""
    built = vqabench(["bqa", "build", "--bold-root", str(BOLD), "--work", "work", *llm(served)], cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "38 BoLD rows; status: complete" in built.stdout and " 0 failures" in built.stdout
    assert "questions               38" in built.stdout  # every STEP2 reply bound to its row
    exported = vqabench(["bqa", "export", "work", "hub"], cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    run = vqabench(["bqa", "evaluate", "--data", "hub", "--split", "validation", "--out", "bqa.jsonl",
                    "--num-frames", "4", *llm(served)], cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    rows = [json.loads(line) for line in (tmp_path / "bqa.jsonl").read_text().splitlines()]
    (shard,) = (tmp_path / "hub").rglob("validation-*.parquet")
    assert len(rows) == pq.read_metadata(shard).num_rows > 0
    assert {r["model"] for r in rows} == {"vqabench-scripted"}  # what the endpoint says it is


def test_marinelife_build_evaluate_and_judge_against_it(served, tmp_path):
    built = vqabench(["marinelife", "build", "--sample", "--work", "work", *llm(served)], cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "videos: 24 captioned, 24 with QA" in built.stdout and " 0 failures" in built.stdout
    run = vqabench(["marinelife", "evaluate", "--data", "work", "--split", "test", "--out", "marine.jsonl",
                    "--num-frames", "4", *llm(served)], cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    judged = vqabench(["marinelife", "judge", "marine.jsonl", "--data", "work", "--out", "judge.json",
                       *llm(served)], cwd=tmp_path)  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    results = json.loads((tmp_path / "judge.json").read_text())
    assert "0 failed" in judged.stdout and results


def test_detach_returns_once_listening_and_stop_ends_it(tmp_path):
    """``--detach`` returns (its output closed: the child holds no pipe of ours) with the socket
    already listening, so the very next request is answered; ``--stop`` ends it by port."""
    started = vqabench(["serve", "--detach"], cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    url = started.stdout.split(" at ", 1)[1].split()[0]
    port = url.rsplit(":", 1)[1].split("/")[0]
    try:
        with DIRECT.open(f"{url}/models", timeout=60) as reply:
            assert json.load(reply)["data"][0]["id"] == "vqabench-scripted"
        assert f"vqabench serve --port {port} --stop" in started.stdout
    finally:
        stopped = vqabench(["serve", "--port", port, "--stop"], cwd=tmp_path)
    assert stopped.returncode == 0 and f"stopped the endpoint on port {port}" in stopped.stdout
    assert vqabench(["serve", "--stop"]).returncode == 2  # no port: nothing to stop, said
