"""A hanging endpoint: the per-request timeout and retries are flags, and the worst-case wait per item
is said once, at the first timeout, never on a run that has none (issues 15 case 16, 29). Real
``vqabench`` processes, real server; the hang lasts until the client gives up (no race)."""

from __future__ import annotations

from test_unfinished_runs import llm, vqabench

from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer, Fault


def test_timeout_and_retry_flags_bound_a_hang_and_the_default_wait_is_announced(tmp_path):
    with ChatServer(model=None) as server:
        arrived = []
        server.handler = lambda body: arrived.append(1) or Fault.hang()
        hung = vqabench(
            ["bqa", "build", "--sample", "--work", str(tmp_path / "w"), "--limit", "8", *llm(server),
             "--llm-timeout", "0.3", "--llm-max-retries", "1"],
        )  # fmt: skip
        assert hung.returncode == 1, hung.stdout + hung.stderr
        assert "8 x timed out after 0.3 s (and 1 SDK retries)" in hung.stdout
        # Said once, not per item: 3 attempts x (2 x 0.3 s + 0.5 s backoff) = 0.1 min.
        assert hung.stderr.count("worst-case wait per item: 0.1 min") == 1, hung.stderr
        server.wait_idle()
        assert server.hangs_outlasted == 0  # the client's timeout ended every hang
        # Two HTTP tries per item (1 + --llm-max-retries), no more (a try that timed out before the loaded
        # server read it never arrives: fewer is possible, more is not).
        assert 0 < len(arrived) <= 8 * 2

        server.handler = BQAResponder()
        default = vqabench(
            ["bqa", "build", "--sample", "--work", str(tmp_path / "d"), "--limit", "8", *llm(server)]
        )
        assert default.returncode == 0, default.stdout + default.stderr
        estimate = vqabench(
            [
                "bqa",
                "build",
                "--sample",
                "--work",
                str(tmp_path / "e"),
                "--limit",
                "8",
                *llm(server),
                "--estimate",
            ]
        )
        assert estimate.returncode == 0, estimate.stdout + estimate.stderr
    # No timeout, no notice: a run with the default settings (30.4 min worst case) and --estimate are quiet.
    assert "worst-case" not in default.stderr + default.stdout
    assert "worst-case" not in estimate.stderr + estimate.stdout
