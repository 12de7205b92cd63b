"""Ctrl-C and SIGTERM do not make a rerun pay again for the replies in flight, and a full disk stops a
build with one line after saving what it could (issue 32, case 9).

``vqabench bqa build`` runs in a subprocess against the test chat server in this process. The
server's handler holds requests until ``IN_FLIGHT`` of them are out at once (all the build may have
out), signals the build, and answers them only once the build has said it is stopping: the signal is
handled while those requests are in flight, whatever the machine's load (a barrier and an event, not
a sleep). The build must record those replies before exiting, and send nothing more, so that the
interrupted run plus its rerun send exactly the requests of an uninterrupted build.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from bqa.sample import sample_root
from builders.demo.bqa_sample import SAMPLE_NOTE
from builders.llm import LLMClient, LLMSettings
from builders.pipelines.bqa.runner import BuildOptions, build
from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer

LIMIT, IN_FLIGHT, MODEL = 12, 4, "scripted-bqa"
STOPPING = "stopping; waiting for the"  # what the build says when it has handled the signal


class SignalWhenBusy:
    """Answers with the responder; after ``after`` answered requests, holds the next ones until
    ``IN_FLIGHT`` are out at once, sends ``signum`` to the build, then answers them."""

    def __init__(self, signum: int, after: int) -> None:
        self.responder = BQAResponder()
        self.signum, self.after = signum, after
        self.lock = threading.Lock()
        self.bodies: list[str] = []
        self.process: subprocess.Popen | None = None
        self.barrier = threading.Barrier(IN_FLIGHT, action=self._signal, timeout=120)
        self.signalled_at: float | None = None
        self.after_signal = 0  # requests that arrived once the signal was sent
        self.acknowledged = threading.Event()  # the build said it is stopping (or it ended)

    def _signal(self) -> None:
        assert self.process is not None
        self.signalled_at = time.monotonic()
        os.kill(self.process.pid, self.signum)

    def __call__(self, body):
        with self.lock:
            self.bodies.append(json.dumps(body, sort_keys=True))
            number = len(self.bodies)
            if self.signalled_at is not None:
                self.after_signal += 1
        if self.after < number <= self.after + IN_FLIGHT:
            self.barrier.wait()  # all IN_FLIGHT requests are out; the last one in sends the signal
            self.acknowledged.wait(timeout=120)  # answered once the build has handled the signal
        return self.responder(body)


def run(args: list[str], handler: SignalWhenBusy | None = None) -> tuple[int, str]:
    """Exit status and output of one build; its output is read as it comes, so that ``handler`` learns
    at once when the build says it is stopping."""
    env = {
        k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("VQABENCH_LLM")
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "builders.cli", *args], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if handler is not None and STOPPING in line:
                handler.acknowledged.set()
        if handler is not None:
            handler.acknowledged.set()  # ended without saying so (the old code): let the server go

    if handler is not None:
        handler.process = process
    reader = threading.Thread(target=read)
    reader.start()
    process.wait(timeout=300)
    reader.join()
    return process.returncode, "".join(lines)


def build_args(work, server: ChatServer) -> list[str]:
    return ["bqa", "build", "--sample", "--work", str(work), "--limit", str(LIMIT), "--llm-model", MODEL,
            "--llm-base-url", server.url, "--llm-api-key-env", "none", "--llm-concurrency", str(IN_FLIGHT)]  # fmt: skip


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The requests an uninterrupted build of the same rows sends (built in this process)."""
    work = tmp_path_factory.mktemp("clean")
    with ChatServer(model=None) as server:
        handler = SignalWhenBusy(signal.SIGINT, after=10**9)  # never signals
        server.handler = handler
        settings = LLMSettings(
            model=MODEL, base_url=server.url, api_key_env=None, progress=False, max_concurrency=IN_FLIGHT
        )
        with LLMClient(settings, cache_path=work / "llm-cache.sqlite") as client:
            assert build(work, BuildOptions(sample_root(), limit=LIMIT, source_note=SAMPLE_NOTE), client).ok
    return sorted(handler.bodies)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_build_pays_for_nothing_twice(tmp_path, uninterrupted, signum):
    work = tmp_path / "work"
    with ChatServer(model=None) as server:
        handler = SignalWhenBusy(signum, after=3)
        server.handler = handler
        code, output = run(build_args(work, server), handler)
        exited = time.monotonic()
        assert code == 128 + signum, output
        name = signal.Signals(signum).name
        assert (
            f"vqabench: interrupted ({name}): stopped sending; the replies already paid for were recorded"
            in output
        )
        assert "Traceback" not in output
        first = list(handler.bodies)
        assert f"{name}: {STOPPING} {IN_FLIGHT} request(s) already sent (paid for)" in output
        assert len(first) == 3 + IN_FLIGHT and handler.after_signal == 0, (
            output
        )  # nothing sent once signalled
        print(
            f"{name}: exit {exited - handler.signalled_at:.2f} s after the signal, {IN_FLIGHT} replies in flight"
        )

        handler.bodies.clear()
        handler.after = 10**9
        code, output = run(build_args(work, server))
        assert code == 0, output
        second = list(handler.bodies)
    # Every request of the interrupted run was paid once: the rerun asked only the others.
    assert not set(first) & set(second)
    assert sorted(first + second) == uninterrupted


def _can_mount_tmpfs(where) -> bool:
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", 'mount -t tmpfs -o size=1m tmpfs "$0"', where],
        capture_output=True,
    )  # fmt: skip
    return probe.returncode == 0


def run_on_a_tmpfs_filled_once(mnt, args: list[str], handler: FillDiskAt) -> str:
    """``vqabench ARGS`` with a 64 MB tmpfs mounted at ``mnt`` (a user and mount namespace of its own),
    which ``handler`` fills; then, the filler removed, the same command again. The output of both, with
    "first run: exit N" and "rerun: exit N" lines."""
    script = (
        'mount -t tmpfs -o size=64m tmpfs "$0" || exit 97; "$@"; echo "first run: exit $?"; '
        'rm -f "$0/filler"; "$@"; echo "rerun: exit $?"'
    )
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("VQABENCH_")}
    process = subprocess.Popen(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, str(mnt),
         sys.executable, "-m", "builders.cli", *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    handler.process = process
    return process.communicate(timeout=600)[0]


class FillDiskAt:
    """Answers with the responder; before answering request number ``at``, fills the build's tmpfs
    (seen through ``/proc/<pid>/root``) until the kernel says ENOSPC."""

    def __init__(self, at: int, folder: str) -> None:
        self.responder = BQAResponder()
        self.at, self.folder = at, folder
        self.lock = threading.Lock()
        self.bodies: list[str] = []
        self.process: subprocess.Popen | None = None

    def __call__(self, body):
        with self.lock:
            self.bodies.append(json.dumps(body, sort_keys=True))
            if len(self.bodies) == self.at:
                assert self.process is not None
                with open(f"/proc/{self.process.pid}/root{self.folder}/filler", "wb") as filler:
                    try:
                        while True:
                            filler.write(b"\0" * 65536)
                            filler.flush()
                    except OSError as err:
                        assert err.errno == errno.ENOSPC
        return self.responder(body)


def test_a_full_disk_stops_the_build_with_one_line_and_the_rerun_pays_only_what_was_lost(
    tmp_path, uninterrupted
):
    """A real 64 MB tmpfs (in a user and mount namespace of its own) holds the work folder; the disk
    fills just before the fifth reply. The build must stop sending, say so in one line, and keep every
    reply it could save; once space is freed, the rerun pays again only the replies it said were lost."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if not _can_mount_tmpfs(str(mnt)):
        pytest.skip("no user+mount namespaces here to mount a tmpfs (unshare refused)")
    with ChatServer(model=None) as server:
        handler = FillDiskAt(5, str(mnt))
        server.handler = handler
        output = run_on_a_tmpfs_filled_once(mnt, build_args(mnt / "work", server), handler)
    first, _, second = output.partition("first run: exit ")
    assert first and second.startswith("2\n"), output
    assert "rerun: exit 0" in second, output
    errors = [line for line in first.splitlines() if line.startswith("vqabench: error:")]
    assert len(errors) == 1 and "Traceback" not in first, first
    assert (
        errors[0].startswith("vqabench: error: no space left on the disk to write ")
        and "stopped sending" in errors[0]
    )
    lost = (
        int(re.search(r"; (\d+) reply\(ies\) paid for could not be saved", errors[0]).group(1))
        if "could not be saved" in errors[0]
        else 0
    )
    assert lost <= IN_FLIGHT  # at most the replies already out when the disk filled
    paid = sorted(handler.bodies)
    assert len(paid) == len(uninterrupted) + lost and set(paid) == set(uninterrupted)
    print(f"full disk: {len(first.splitlines())} lines of output, {lost} paid replies lost; {errors[0]}")
