"""Every command that calls an LLM ends non-zero when items are left failed or pending, says how many
and why (grouped by error) and that a rerun resumes; the rerun then finishes them (issue 15, case 1).

The commands run as real ``vqabench`` subprocesses against the real test chat server: a wrong API key
(401), a steady stream of 500s, a hang past the timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from builders.files.jsonio import read_jsonl
from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer, Fault

RESUME = "rerun the same command to resume"


def vqabench(args: list[str], **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("VQABENCH_LLM")
    }
    return subprocess.run(
        [sys.executable, "-m", "builders.cli", *args], env={**clean, **env},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def llm(server: ChatServer, key_env: str = "none") -> list[str]:
    return ["--llm-model", "scripted-bqa", "--llm-base-url", server.url, "--llm-api-key-env", key_env]


FAULTS = {
    # name: (server options, environment, the error every item must be grouped under)
    "wrong_key": ({"api_key": "the-right-key"}, {"TEST_KEY": "a-wrong-key"}, "HTTP 401"),
    "server_errors": ({}, {"VQABENCH_LLM_MAX_RETRIES": "1"}, "HTTP 500"),
    "hang": ({}, {"VQABENCH_LLM_TIMEOUT": "0.3", "VQABENCH_LLM_MAX_RETRIES": "0"}, "timed out after 0.3 s"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_bqa_build_with_every_call_failing_exits_non_zero_and_resumes(tmp_path, fault):
    server_options, env, error = FAULTS[fault]
    work, out = tmp_path / "work", tmp_path / "hub"
    with ChatServer(model=None, **server_options) as server:
        if fault == "server_errors":
            server.fault_rate, server.fault_choices = 1.0, [Fault.server_error(retry_after=0.01)]
        if fault == "hang":
            server.handler = lambda body: Fault.hang()
        key_env = "TEST_KEY" if fault == "wrong_key" else "none"
        args = ["bqa", "build", "--sample", "--work", str(work), "--export", str(out)]
        failed = vqabench([*args, *llm(server, key_env)], **env)
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert "UNFINISHED: 38 item(s) did not finish (questions 38): 38 LLM call(s) failed" in failed.stdout
        grouped = [line for line in failed.stdout.splitlines() if line.startswith("  38 x ")]
        assert len(grouped) == 1 and error in grouped[0] and "[step questions" in grouped[0], failed.stdout
        assert "not run yet: filter, difficulty, split" in failed.stdout and RESUME in failed.stdout
        assert "a-wrong-key" not in failed.stdout + failed.stderr
        # 38 identical failures are said once as they happen (issue 29: one line per item before).
        assert [line for line in failed.stderr.splitlines() if "LLM request" in line] == [
            next(line for line in failed.stderr.splitlines() if "LLM request" in line)
        ], failed.stderr
        assert not out.exists()  # nothing exported from a build that did not finish
        summary = json.loads((work / "summary.json").read_text())
        assert summary["steps"]["questions"]["complete"] is False
        assert len(summary["steps"]["questions"]["failed"]) == 38
        assert summary["unfinished"]["items"] == 38 and summary["unfinished"]["by_error"][0]["items"] == 38

        # The endpoint fixed, the same command resumes and finishes.
        server.fault_rate, server.api_key, server.handler = 0.0, None, BQAResponder()
        fixed = vqabench([*args, *llm(server)])
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        assert "UNFINISHED" not in fixed.stdout and out.is_dir()


def test_bqa_evaluate_and_marinelife_build_say_the_same(tmp_path):
    with ChatServer(model=None, api_key="the-right-key") as server:
        built = vqabench(["bqa", "build", "--sample", "--replay", "--work", str(tmp_path / "bqa")])
        assert built.returncode == 0, built.stdout + built.stderr
        evaluated = vqabench(
            ["bqa", "evaluate", "--data", str(tmp_path / "bqa"), "--out", str(tmp_path / "p.jsonl"),
             "--limit", "3", *llm(server, "TEST_KEY")], TEST_KEY="wrong",
        )  # fmt: skip
        assert evaluated.returncode == 1
        assert "UNFINISHED: 3 item(s) did not finish (predictions 3)" in evaluated.stdout
        assert "  3 x HTTP 401" in evaluated.stdout and RESUME in evaluated.stdout

        marine = vqabench(
            ["marinelife", "build", "--sample", "--work", str(tmp_path / "ml"), *llm(server, "TEST_KEY")],
            TEST_KEY="wrong",
        )
        assert marine.returncode == 1, marine.stdout + marine.stderr
        assert "UNFINISHED:" in marine.stdout and " x HTTP 401" in marine.stdout and RESUME in marine.stdout
        assert "not run yet:" in marine.stdout and "release" in marine.stdout


def test_judge_groups_its_failures(tmp_path):
    rows = tmp_path / "preds.jsonl"
    rows.write_text(
        "".join(json.dumps({"prediction": f"p{i}", "reference": f"r{i}"}) + "\n" for i in range(3))
    )
    with ChatServer(model=None, api_key="the-right-key") as server:
        judged = vqabench(
            ["judge", "score", str(rows), "--llm-model", "j", "--llm-base-url", server.url,
             "--llm-api-key-env", "TEST_KEY", "--llm-cache", str(tmp_path / "c.sqlite")], TEST_KEY="wrong",
        )  # fmt: skip
    assert judged.returncode == 1, judged.stdout + judged.stderr
    assert "UNFINISHED: 3 item(s)" in judged.stdout and "  3 x HTTP 401" in judged.stdout
    assert read_jsonl(rows)  # the input is left as it was
