"""A hanging endpoint: the per-request timeout and retries are flags, and the worst-case wait per item
is printed before anything is sent (issue 15, case 16). Real ``vqabench`` processes, real server."""

from __future__ import annotations

import time

from test_unfinished_runs import llm, vqabench

from builders.testing.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer, Fault


def test_timeout_and_retry_flags_bound_a_hang_and_the_default_wait_is_announced(tmp_path):
    with ChatServer(model=None) as server:
        arrived = []
        server.handler = lambda body: arrived.append(1) or Fault.delay(5.0)
        started = time.monotonic()
        hung = vqabench(
            ["bqa", "build", "--sample", "--work", str(tmp_path / "w"), "--limit", "8", *llm(server),
             "--llm-timeout", "0.3", "--llm-max-retries", "1"],
        )  # fmt: skip
        took = time.monotonic() - started
        assert hung.returncode == 1, hung.stdout + hung.stderr
        assert "8 x timed out after 0.3 s (and 1 SDK retries)" in hung.stdout
        assert "worst-case wait" not in hung.stderr  # 3 x (2 x 0.3 s + 0.5 s) is not worth a notice
        assert took < 60, took
        # Two HTTP tries per item (1 + --llm-max-retries), no more.
        assert len(arrived) == 8 * 2

        server.handler = BQAResponder()
        default = vqabench(
            ["bqa", "build", "--sample", "--work", str(tmp_path / "d"), "--limit", "8", *llm(server)]
        )
        assert default.returncode == 0, default.stdout + default.stderr
    # Defaults: 3 attempts x 5 HTTP tries x 120 s, plus 0.5 + 1 + 2 + 4 s of backoff per attempt.
    minutes = 3 * (5 * 120 + 0.5 + 1 + 2 + 4) / 60
    assert f"worst-case wait per item: {minutes:.1f} min" in default.stderr
