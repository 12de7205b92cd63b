"""An evaluation whose every item a safety filter stopped is a failure, not an empty file (issue 37,
item 14: an all-blocked CoT stage 1 wrote an empty predictions file and exited 0)."""

from __future__ import annotations

from builders.testing.chat_faults import Reply
from builders.testing.chat_server import ChatServer
from tests.processes import vqabench
from tests.test_bqa_styles import TwoStage, run_args, stage


def test_an_all_blocked_stage_1_fails_naming_the_count(built_samples, tmp_path):
    answer = TwoStage()
    out = tmp_path / "cot.jsonl"
    with ChatServer(model=None) as server:
        server.handler = lambda body: Reply.blocked() if stage(body) == 1 else answer(body)
        done = vqabench(
            run_args(built_samples["bqa"].hub, out, server, "--style", "multimodal_cot", "--limit", "3")
        )
        asked = [stage(r.body) for r in server.chat_requests]
    assert asked == [1, 1, 1]  # blocked is final: no re-ask, no stage 2
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "3 of 3 rows were rejected (blocked: 3)" in done.stderr and "was not written" in done.stderr, (
        done.stderr
    )
    assert not out.exists()  # nothing silently empty
