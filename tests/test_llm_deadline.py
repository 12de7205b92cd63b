"""``--llm-timeout`` bounds a whole HTTP attempt, body included, and a reply body has a size cap
(issue 32, case 3). Real ``vqabench`` processes against the real test chat server: one that trickles a
byte every half second for ever, one whose chunked body never ends."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from test_unfinished_runs import llm

from builders.testing.chat_server import ChatServer, Fault

GUARD = 90  # seconds: a run still going by then hangs (the old code went on for ever)


def run_measured(args: list[str], log: Path) -> tuple[int, str, float, int]:
    """Exit status, output, seconds and peak resident memory (MB) of one ``vqabench`` process, reaped
    with ``os.wait4`` for its own peak (``RUSAGE_CHILDREN`` would give the largest of all children)."""
    env = {
        k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("VQABENCH_LLM")
    }
    started = time.monotonic()
    with log.open("w+") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "builders.cli", *args], env=env, stdout=out, stderr=subprocess.STDOUT
        )
        deadline = started + GUARD
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                _, status, usage = os.wait4(process.pid, 0)
                out.seek(0)
                raise AssertionError(f"still running after {GUARD} s:\n{out.read()[-3000:]}")
            time.sleep(0.05)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output = out.read()
    return process.returncode, output, time.monotonic() - started, usage.ru_maxrss // 1024


def build(work, server: ChatServer, *extra: str) -> list[str]:
    return ["bqa", "build", "--sample", "--work", str(work), "--limit", "2", *llm(server),
            "--llm-max-retries", "0", "--llm-concurrency", "1", *extra]  # fmt: skip


def test_a_trickling_reply_is_cut_at_the_timeout_and_an_endless_one_at_the_size_cap(tmp_path):
    with ChatServer(model=None) as server:
        # A byte every 0.5 s: each read waits far less than the 2 s timeout, so only a deadline for the
        # whole attempt ends it.
        server.handler = lambda body: Fault.trickle(0.5)
        code, output, took, trickle_peak = run_measured(
            build(tmp_path / "t", server, "--llm-timeout", "2"), tmp_path / "t.log"
        )
        assert code == 1, output
        assert "2 x timed out after 2 s (and 0 SDK retries)" in output, output
        # Two items, one attempt each, one at a time: about 4 s of waiting, whatever the load.
        assert len(server.chat_requests) == 2

        # An endless body at full speed: cut at the default 16 MB cap, well before the 60 s timeout.
        server.reset()
        server.handler = lambda body: Fault.endless()
        code, output, endless_took, endless_peak = run_measured(
            build(tmp_path / "e", server, "--llm-timeout", "60"), tmp_path / "e.log"
        )
        assert code == 1, output
        assert "2 x reply too large: the reply body grew past 16 MB (--llm-max-reply-mb)" in output, output
        assert len(server.chat_requests) == 2  # not retried: the same server would send it again
        # Memory: at most the cap (and its copy in the HTTP client) above the trickle run's peak.
        assert endless_peak < trickle_peak + 64, (trickle_peak, endless_peak)
        print(
            f"trickle: {took:.1f} s, peak {trickle_peak} MB; endless: {endless_took:.1f} s, peak {endless_peak} MB"
        )
