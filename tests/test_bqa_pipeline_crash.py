"""A BQA build killed (SIGKILL) in the middle of LLM steps, then resumed, ends exactly like an
uninterrupted build, and no request that had succeeded is sent again.

The build runs as ``vqabench bqa build`` in a subprocess against the test server in this process.
The server's handler itself kills the subprocess when the K-th request arrives, before answering
it, so the cut is exact: requests 1..K-1 were answered (and cached), request K never was. One request
in flight at a time (``--llm-concurrency 1``) keeps that ordering strict.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

from bqa.sample import sample_root
from builders.demo.bqa_sample import SAMPLE_NOTE
from builders.files.jsonio import read_jsonl
from builders.llm import LLMClient, LLMSettings
from builders.pipelines.bqa.runner import BuildOptions, build
from builders.scripted.bqa_responder import BQAResponder, schema_name
from builders.testing.chat_server import ChatServer

LIMIT = 10
MODEL = "scripted-bqa"


class KillSwitch:
    """Answers with the responder, logging each request; kills ``process`` at request number ``at``."""

    def __init__(self) -> None:
        self.responder = BQAResponder()
        self.lock = threading.Lock()
        self.answered: list[str] = []
        self.process: subprocess.Popen | None = None
        self.at: int | None = None
        self.seen = 0

    def __call__(self, body):
        with self.lock:
            self.seen += 1
            if self.process is not None and self.seen == self.at:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
                return None  # nobody is listening any more
            self.answered.append(json.dumps(body, sort_keys=True))
        return self.responder(body)

    def run(self, args: list[str], kill_at: int | None) -> int:
        env = {
            k: v
            for k, v in os.environ.items()
            if "proxy" not in k.lower() and not k.startswith("VQABENCH_LLM")
        }
        with self.lock:
            self.seen, self.at = 0, kill_at
            self.process = subprocess.Popen(
                [sys.executable, "-m", "builders.cli", *args], env=env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
        output, _ = self.process.communicate(timeout=120)
        code = self.process.returncode
        with self.lock:
            self.process = None
        assert (code == -signal.SIGKILL) == (kill_at is not None), output
        return code


def build_args(work, server: ChatServer, *, ahead: int) -> list[str]:
    """``vqabench bqa build`` of the first LIMIT sample rows, one request in flight at a time."""
    return ["bqa", "build", "--sample", "--work", str(work), "--limit", str(LIMIT), "--ahead", str(ahead),
            "--llm-model", MODEL, "--llm-base-url", server.url, "--llm-api-key-env", "none",
            "--llm-concurrency", "1"]  # fmt: skip


def step_files(work) -> dict[str, bytes]:
    files = {f"steps/{p.name}": p.read_bytes() for p in sorted((work / "steps").iterdir())}
    files |= {f"release/{p.name}": p.read_bytes() for p in sorted((work / "release").iterdir())}
    files["clips"] = "\n".join(sorted(p.name for p in (work / "clips").iterdir())).encode()
    return files


def test_killed_build_resumes_to_the_same_records_without_repeating_a_call(tmp_path):
    switch = KillSwitch()
    with ChatServer(model=None) as server:
        server.handler = switch
        work = tmp_path / "killed"
        args = build_args(work, server, ahead=4)
        # Killed in STEP2 at its request 6, then in the next run's STEP3 (its request 9).
        switch.run(args, kill_at=6)
        first = list(switch.answered)
        assert len(first) == 5 and (work / "steps" / "questions.partial.jsonl").exists()
        assert not (work / "steps" / "questions.jsonl").exists()
        # Records are written as replies arrive and made durable in groups (at least every second):
        # the kill loses at most the last group, which the next run redoes from the reply cache.
        assert len(read_jsonl(work / "steps" / "questions.partial.jsonl", tolerate_torn_tail=True)) <= 5
        switch.run(args, kill_at=9)
        second = switch.answered[len(first) :]
        assert (work / "steps" / "questions.jsonl").exists() and (
            work / "steps" / "filter.partial.jsonl"
        ).exists()
        assert not (work / "release").exists()
        switch.run(args, kill_at=None)
        third = switch.answered[len(first) + len(second) :]

        # The same build, uninterrupted, in this process.
        switch.answered.clear()
        clean = tmp_path / "clean"
        settings = LLMSettings(model=MODEL, base_url=server.url, api_key_env=None, progress=False)
        with LLMClient(settings, cache_path=clean / "llm-cache.sqlite") as client:
            summary = build(clean, BuildOptions(sample_root(), limit=LIMIT, source_note=SAMPLE_NOTE), client)
        assert summary.ok
        uninterrupted = list(switch.answered)

    assert step_files(work) == step_files(clean)
    resumed = first + second + third
    assert len(resumed) == len(set(resumed)) == len(uninterrupted)  # no answered request was sent twice
    assert sorted(resumed) == sorted(uninterrupted)
    kinds = [schema_name(json.loads(b)) for b in second]
    assert kinds[0] == "BQAQuestion" and "BQAFilterVerdict" in kinds  # the second run resumed STEP2 mid-way
