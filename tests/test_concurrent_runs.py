"""Concurrent runs never pay twice (issue 15, case 9).

* Two builds on one work folder: the second is refused with the first's PID while the first runs;
  a SIGKILLed holder leaves no lock behind.
* Two work folders sharing one reply cache: a request one build is asking for is claimed, and the
  other build waits for its reply instead of paying for it again.

Real ``vqabench bqa build`` processes against the real test chat server; the server counts what it
answered.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from builders.runs.lock import LOCK_FILE
from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer


def start(work: Path, server: ChatServer, *extra: str) -> subprocess.Popen:
    env = {
        k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("VQABENCH_LLM")
    }
    return subprocess.Popen(
        [sys.executable, "-m", "builders.cli", "bqa", "build", "--sample", "--work", str(work),
         "--llm-model", "scripted-bqa", "--llm-base-url", server.url, "--llm-api-key-env", "none", *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def release_bytes(work: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((work / "release").iterdir()) if p.suffix == ".jsonl"}


def one_build(tmp_path: Path) -> tuple[int, dict[str, bytes]]:
    """Requests one uninterrupted build of the sample has answered, and its release."""
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        solo = start(tmp_path / "solo", server)
        out, err = solo.communicate(timeout=300)
        assert solo.returncode == 0, out + err
        return len(server.chat_requests), release_bytes(tmp_path / "solo")


class Gate:
    """The responder, holding every request until ``open`` is set (so the first build is mid-run)."""

    def __init__(self) -> None:
        self.responder, self.open, self.arrived = BQAResponder(), threading.Event(), threading.Event()

    def __call__(self, body):
        self.arrived.set()
        assert self.open.wait(120)
        return self.responder(body)


def test_a_second_build_on_the_same_folder_is_refused_and_nothing_is_paid_twice(tmp_path):
    solo, expected = one_build(tmp_path)
    with ChatServer(model=None) as server:
        gate = Gate()
        server.handler = gate
        work = tmp_path / "work"
        first = start(work, server)
        assert gate.arrived.wait(120)  # the first build holds the folder and is waiting for a reply
        second = start(work, server)
        out, err = second.communicate(timeout=120)
        assert second.returncode == 2, out + err
        assert f"work folder {work.resolve()} is in use by another run (PID {first.pid})" in err
        gate.open.set()
        out, err = first.communicate(timeout=300)
        assert first.returncode == 0, out + err
        answered = len(server.chat_requests)
    assert answered == solo == 93
    assert release_bytes(work) == expected


def test_a_killed_holder_leaves_no_lock(tmp_path):
    with ChatServer(model=None) as server:
        gate = Gate()
        server.handler = gate
        work = tmp_path / "work"
        first = start(work, server)
        assert gate.arrived.wait(120)
        assert (work / LOCK_FILE).read_text().strip() == str(first.pid)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        gate.open.set()
        second = start(work, server)  # at once: no stale lock to wait out or remove
        out, err = second.communicate(timeout=300)
        assert second.returncode == 0, out + err


def test_two_work_folders_sharing_a_cache_pay_once(tmp_path):
    solo, expected = one_build(tmp_path)
    cache = tmp_path / "shared.sqlite"
    with ChatServer(model=None, latency=0.01) as server:
        server.handler = BQAResponder()
        builds = [start(tmp_path / name, server, "--llm-cache", str(cache)) for name in ("a", "b")]
        started = time.monotonic()
        for build in builds:
            out, err = build.communicate(timeout=300)
            assert build.returncode == 0, out + err
        answered = len(server.chat_requests)
    assert answered == solo, (
        f"{answered} requests answered for two builds sharing a cache ({time.monotonic() - started:.1f} s)"
    )
    assert release_bytes(tmp_path / "a") == release_bytes(tmp_path / "b") == expected
