"""Resumable step records: crash mid-step (a real killed process), torn lines, ordering, rejects."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from builders.runs.steps import StepRecords, Tally

ITEMS = [{"id": f"item{i}", "x": i} for i in range(20)]


def test_finish_writes_input_order_and_rejects(tmp_path: Path) -> None:
    step = StepRecords(tmp_path, "square")
    for item in reversed(ITEMS):  # completion order differs from input order
        if item["x"] % 5 == 0:
            step.add(item, status="rejected", reason="multiple_of_5", detail=f"x={item['x']}")
        else:
            step.add({**item, "y": item["x"] ** 2})
    assert not step.complete
    step.finish([i["id"] for i in ITEMS])
    kept = step.kept()
    assert [r["id"] for r in kept] == [i["id"] for i in ITEMS if i["x"] % 5]
    assert all(r["y"] == r["x"] ** 2 and "_status" not in r for r in kept)
    assert [(r["id"], r["_reason"], r["_detail"]) for r in step.rejects()] == [
        ("item0", "multiple_of_5", "x=0"), ("item5", "multiple_of_5", "x=5"),
        ("item10", "multiple_of_5", "x=10"), ("item15", "multiple_of_5", "x=15"),
    ]  # fmt: skip
    assert step.tally() == Tally(16, Counter({"multiple_of_5": 4}))
    assert not step.partial_path.exists()
    again = StepRecords(tmp_path, "square")
    assert again.pending(ITEMS) == []
    before = again.path.read_bytes()
    again.finish([i["id"] for i in ITEMS])  # a resumed run finishing a finished step changes nothing
    assert again.path.read_bytes() == before and again.tally() == Tally(16, Counter({"multiple_of_5": 4}))


def test_resume_ignores_torn_tail(tmp_path: Path) -> None:
    step = StepRecords(tmp_path, "s")
    for item in ITEMS[:3]:
        step.add(item)
    with step.partial_path.open("a") as handle:
        handle.write('{"id": "item3", "x"')  # what a kill during write leaves
    resumed = StepRecords(tmp_path, "s")
    assert [i["id"] for i in resumed.pending(ITEMS)] == [i["id"] for i in ITEMS[3:]]


def test_reject_needs_reason_and_finish_needs_all(tmp_path: Path) -> None:
    step = StepRecords(tmp_path, "s")
    with pytest.raises(ValueError, match="needs a reason"):
        step.add(ITEMS[0], status="rejected")
    step.add(ITEMS[0])
    with pytest.raises(RuntimeError, match="1 items have no record"):
        step.finish(["item0", "item1"])


def test_killed_process_resumes_without_redoing_work(tmp_path: Path) -> None:
    """A real process is killed mid-step; the rerun does only the rest and ends with the same records.

    The first run stops at item 6 and waits to be killed (it says so with a file): killed mid-step
    however slow or loaded the machine, not after a guessed delay."""
    script = textwrap.dedent(
        """
        import json, pathlib, sys, time
        from builders.runs.steps import StepRecords
        work, calls, stop = sys.argv[1], sys.argv[2], sys.argv[3:]
        items = [{"id": f"item{i}", "x": i} for i in range(20)]
        step = StepRecords(work, "slow")
        for item in step.pending(items):
            with open(calls, "a") as log:
                log.write(item["id"] + "\\n")
            if stop and item["id"] == "item6":  # in flight: wait for the kill
                pathlib.Path(stop[0]).touch()
                time.sleep(3600)
            step.add({**item, "y": item["x"] * 3})
        step.finish([i["id"] for i in items])
        """
    )
    calls, waiting = tmp_path / "calls.txt", tmp_path / "waiting"
    cmd = [sys.executable, "-c", script, str(tmp_path / "work"), str(calls)]
    proc = subprocess.Popen([*cmd, str(waiting)])
    deadline = time.monotonic() + 120
    while proc.poll() is None and not waiting.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert waiting.exists(), "the first run never reached item6"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first = calls.read_text().split()
    assert first == [f"item{i}" for i in range(7)]
    subprocess.run(cmd, check=True)
    done = calls.read_text().split()
    # At most the one item in flight at the kill is redone; every item is processed.
    assert set(done) == {i["id"] for i in ITEMS} and len(done) <= 21
    step = StepRecords(tmp_path / "work", "slow")
    assert [(r["id"], r["y"]) for r in step.kept()] == [(i["id"], i["x"] * 3) for i in ITEMS]
