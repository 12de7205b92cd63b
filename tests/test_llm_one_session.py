"""One LLM session for every stage and model: a CoT stage 1 on another model (``--rationale-llm-*``)
is cached, replayed, stopped by a signal and counted like stage 2 (issue 37, items 3 and 4)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections import Counter

import pytest

from builders.cli import main as cli_main
from builders.files.jsonio import read_jsonl
from builders.llm.cache import ReplyCache
from builders.testing.chat_server import ChatServer
from tests.test_bqa_styles import MODEL, RATIONALE_MODEL, TwoStage, run_args, stage


@pytest.fixture(scope="module")
def bqa(built_samples):
    return built_samples["bqa"]


def two_models(data, out, server, *extra):
    return run_args(data, out, server, "--style", "multimodal_cot", "--rationale-llm-model", RATIONALE_MODEL,
                    "--limit", "6", *extra)  # fmt: skip


def test_a_rerun_with_a_shared_cache_pays_for_no_stage_1_reply_again(bqa, tmp_path):
    cache = tmp_path / "shared.sqlite"
    with ChatServer(model=None) as server:
        server.handler = TwoStage()
        first = two_models(bqa.hub, tmp_path / "a.jsonl", server, "--llm-cache", str(cache))
        assert cli_main(first) == 0
        paid = Counter((r.body["model"], stage(r.body)) for r in server.chat_requests)
        assert paid == {(RATIONALE_MODEL, 1): 6, (MODEL, 2): 6}
        server.reset()
        # another output and work folder, the same cache: every reply is the cache's
        again = two_models(bqa.hub, tmp_path / "b.jsonl", server, "--llm-cache", str(cache))
        assert cli_main(again) == 0
        assert server.chat_requests == []


def test_a_replay_of_a_two_model_run_answers_both_stages_from_the_cache(bqa, tmp_path):
    cache = tmp_path / "shared.sqlite"
    with ChatServer(model=None) as server:
        server.handler = TwoStage()
        assert cli_main(two_models(bqa.hub, tmp_path / "a.jsonl", server, "--llm-cache", str(cache))) == 0
        server.reset()
        replay = two_models(
            bqa.hub, tmp_path / "b.jsonl", server, "--llm-cache", str(cache), "--llm-mode", "replay"
        )
        assert cli_main(replay) == 0
        assert server.chat_requests == []
    assert read_jsonl(tmp_path / "a.jsonl") == read_jsonl(tmp_path / "b.jsonl") or [
        {k: v for k, v in p.items() if k != "provenance"} for p in read_jsonl(tmp_path / "a.jsonl")
    ] == [{k: v for k, v in p.items() if k != "provenance"} for p in read_jsonl(tmp_path / "b.jsonl")]


def test_a_replay_miss_of_stage_1_names_the_rationale_model(bqa, tmp_path, capsys):
    cache = tmp_path / "empty.sqlite"
    ReplyCache(cache).close()
    with ChatServer(model=None) as server:
        args = two_models(
            bqa.hub, tmp_path / "a.jsonl", server, "--llm-cache", str(cache), "--llm-mode", "replay"
        )
        assert cli_main(args) != 0
        assert server.chat_requests == []
    err = capsys.readouterr().err
    assert (
        "6 of 6 requests have no recorded reply (first: item " in err and f"model {RATIONALE_MODEL})" in err
    )


class SignalDuringStage2:
    """Answers every stage-1 request at once; holds the first ``IN_FLIGHT`` stage-2 requests until all
    are out, signals the evaluation, and answers them only once it has said it is stopping."""

    def __init__(self, signum: int | None) -> None:
        self.inner, self.signum = TwoStage(), signum
        self.lock = threading.Lock()
        self.bodies: list[str] = []
        self.stage2 = 0
        self.process: subprocess.Popen | None = None
        self.barrier = threading.Barrier(IN_FLIGHT, action=self._signal, timeout=120)
        self.acknowledged = threading.Event()

    def _signal(self) -> None:
        assert self.process is not None and self.signum is not None
        os.kill(self.process.pid, self.signum)

    def __call__(self, body):
        with self.lock:
            self.bodies.append(json.dumps(body, sort_keys=True))
            held = stage(body) == 2 and self.signum is not None and self.stage2 < IN_FLIGHT
            self.stage2 += stage(body) == 2
        if held:
            self.barrier.wait()
            self.acknowledged.wait(timeout=120)
        return self.inner(body)


IN_FLIGHT = 2


def evaluate_process(args: list[str], handler: SignalDuringStage2) -> tuple[int, str]:
    """Exit status and output of ``vqabench`` in a subprocess; the handler learns at once when it says
    it is stopping."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("VQABENCH_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "builders.cli", *args], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    handler.process = process
    lines: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        if "stopping; waiting for the" in line:
            handler.acknowledged.set()
    handler.acknowledged.set()
    return process.wait(timeout=300), "".join(lines)


def test_a_signal_during_stage_2_stops_a_two_model_run_and_the_rerun_pays_nothing_twice(bqa, tmp_path):
    """SIGINT (SIGTERM takes the same path: tests/test_interrupt.py) while stage-2 requests are out."""
    signum = signal.SIGINT
    concurrency = ("--llm-concurrency", str(IN_FLIGHT))
    with ChatServer(model=None) as server:
        clean = SignalDuringStage2(None)  # what an uninterrupted run sends (in this process)
        server.handler = clean
        assert cli_main(two_models(bqa.hub, tmp_path / "clean.jsonl", server, *concurrency)) == 0
        interrupted = SignalDuringStage2(signum)
        server.handler = interrupted
        args = two_models(bqa.hub, tmp_path / "p.jsonl", server, *concurrency)
        code, output = evaluate_process(args, interrupted)
        name = signal.Signals(signum).name
        assert code == 128 + signum, output
        assert re.search(rf"{name}: stopping; waiting for the [1-9]\d* request", output), output
        assert not (tmp_path / "p.jsonl").exists()
        rerun = SignalDuringStage2(None)
        server.handler = rerun
        code, output = evaluate_process(args, rerun)
        assert code == 0, output
    # every request of the interrupted run was paid once: the rerun asked only the others
    assert not set(interrupted.bodies) & set(rerun.bodies)
    assert sorted(interrupted.bodies + rerun.bodies) == sorted(clean.bodies)
