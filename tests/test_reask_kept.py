"""A re-ask cut by a signal or a full disk keeps the first reply and its reason, so the rerun pays
nothing again (issue 37, items 11 and 12): SIGINT while unusable first replies were in flight made the
rerun buy those first replies again (MarineLife QA generation re-bought 1 to 3), and a full disk during
``marinelife judge`` re-bought 2 replies the error did not count, after an 18-line asyncio traceback.

Real ``vqabench`` processes against the local chat server; the signal is sent once the requests are
out (a barrier), and the unusable replies are sent once the run has said it is stopping (an event).
"""

from __future__ import annotations

import json
import re
import signal
import threading

import pytest
from test_interrupt import (
    IN_FLIGHT,
    STOPPING,
    FillDiskAt,
    _can_mount_tmpfs,
    build_args,
    run,
    run_on_a_tmpfs_filled_once,
)
from test_judge_item_binding import SCORES, own_reply, write_predictions

from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer, Fault

REASK = "Your previous reply could not be used"


def is_reask(body) -> bool:
    return any(m["role"] == "assistant" for m in body["messages"])


class UnusableWhileStopping:
    """The first ``IN_FLIGHT`` requests wait until all are out, the build is signalled, and, once it
    says it is stopping, each gets a reply that fails its schema (so each needs a re-ask). Every other
    request gets the responder's reply."""

    def __init__(self, signum: int | None) -> None:
        self.responder, self.signum = BQAResponder(), signum
        self.lock = threading.Lock()
        self.bodies: list[str] = []
        self.process = None
        self.barrier = threading.Barrier(IN_FLIGHT, action=self._signal, timeout=120)
        self.acknowledged = threading.Event()

    def _signal(self) -> None:
        assert self.process is not None and self.signum is not None
        self.process.send_signal(self.signum)

    def __call__(self, body):
        with self.lock:
            self.bodies.append(json.dumps(body, sort_keys=True))
            held = self.signum is not None and len(self.bodies) <= IN_FLIGHT
        if held:
            self.barrier.wait()
            self.acknowledged.wait(timeout=120)
            return Fault.invalid()
        return self.responder(body)


def test_a_reask_cut_by_a_signal_keeps_the_first_reply_so_the_rerun_pays_it_once(tmp_path):
    work = tmp_path / "work"
    with ChatServer(model=None) as server:
        interrupted = UnusableWhileStopping(signal.SIGINT)
        server.handler = interrupted
        code, output = run(build_args(work, server), interrupted)
        assert code == 130, output
        assert f"SIGINT: {STOPPING} {IN_FLIGHT} request(s)" in output
        first = list(interrupted.bodies)
        assert len(first) == IN_FLIGHT  # the re-asks were not sent: the run was stopping
        rerun = UnusableWhileStopping(None)
        server.handler = rerun
        code, output = run(build_args(work, server))
        assert code == 0, output
        second = [json.loads(b) for b in rerun.bodies]
    # Nothing paid twice: the rerun sent the re-asks of the kept replies, not the first requests again.
    assert not set(first) & set(rerun.bodies)
    reasks = [b for b in second if is_reask(b)]
    assert len(reasks) == IN_FLIGHT
    for body in reasks:
        assert REASK in body["messages"][-1]["content"]
        assert json.dumps(body["messages"][:-2], sort_keys=True) in "".join(first)  # the request it re-asks


def test_a_full_disk_during_judge_is_one_line_counting_what_was_paid_and_the_rerun_pays_only_that(tmp_path):
    """A real 64 MB tmpfs (a user and mount namespace of its own) holds the judge's cache; the disk
    fills before the fifth reply. The judge stops sending, says so in one line counting the replies it
    paid for and could not save, and the rerun, once space is freed, pays for those alone."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if not _can_mount_tmpfs(str(mnt)):
        pytest.skip("no user+mount namespaces here to mount a tmpfs (unshare refused)")
    rows = write_predictions(tmp_path / "predictions.jsonl")
    with ChatServer(model=None) as server:
        handler = FillDiskAt(5, str(mnt))
        handler.responder = own_reply
        server.handler = handler
        args = ["judge", "score", str(rows), "--llm-model", "judge", "--llm-base-url", server.url,
                "--llm-api-key-env", "none", "--llm-concurrency", str(IN_FLIGHT), "--llm-cache",
                str(mnt / "judge.sqlite")]  # fmt: skip
        output = run_on_a_tmpfs_filled_once(mnt, args, handler)
    first, _, second = output.partition("first run: exit ")
    assert second.startswith("2\n") and "rerun: exit 0" in second, output
    assert "Traceback" not in first and "Task exception" not in first, first
    errors = [line for line in first.splitlines() if line.startswith("vqabench: error:")]
    assert len(errors) == 1 and len(first.strip().splitlines()) <= 3, first
    assert errors[0].startswith("vqabench: error: no space left on the disk to write the reply cache")
    found = re.search(r"; (\d+) reply\(ies\) paid for could not be saved", errors[0])
    lost = int(found.group(1)) if found else 0
    assert 1 <= lost <= IN_FLIGHT  # the reply being saved when the disk filled, at most those out
    # Every reply paid once, but the ones the error counted as lost, paid once more by the rerun.
    assert len(handler.bodies) == len(SCORES) + lost and len(set(handler.bodies)) == len(SCORES)
