"""A failed first run locks no options: the LLM settings lock only once a paid reply exists
(issue 15, case 11). Real ``vqabench`` processes against the real test chat server."""

from __future__ import annotations

from test_unfinished_runs import vqabench

from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer


def llm(server: ChatServer, model: str, key_env: str = "none") -> list[str]:
    return ["--llm-model", model, "--llm-base-url", server.url, "--llm-api-key-env", key_env]


def test_an_eval_without_its_api_key_then_corrected_is_not_refused(tmp_path):
    built = vqabench(["bqa", "build", "--sample", "--replay", "--work", str(tmp_path / "bqa")])
    assert built.returncode == 0, built.stderr
    args = [
        "bqa",
        "evaluate",
        "--data",
        str(tmp_path / "bqa"),
        "--out",
        str(tmp_path / "p.jsonl"),
        "--limit",
        "3",
    ]
    with ChatServer(model=None) as server:
        missing = vqabench([*args, *llm(server, "some-videollm", "NOT_SET_ANYWHERE")])
        assert missing.returncode == 2 and "NOT_SET_ANYWHERE" in missing.stderr, missing.stderr
        assert server.chat_requests == []
        fixed = vqabench([*args, *llm(server, "some-videollm-2")])  # another model, and no key needed
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        assert "other options" not in fixed.stderr and len(server.chat_requests) == 3
        # A paid reply exists now: another model would mix two evaluations, and is refused.
        again = vqabench([*args, "--limit", "4", *llm(server, "some-videollm-3")])
        assert again.returncode == 2 and "this work folder was built with other options" in again.stderr
        assert "llm.model: was 'some-videollm-2', now 'some-videollm-3'" in again.stderr


def test_a_build_with_a_mistyped_model_and_a_wrong_key_then_corrected_resumes(tmp_path):
    work = tmp_path / "work"
    args = ["bqa", "build", "--sample", "--work", str(work), "--limit", "10"]
    with ChatServer(model=None, api_key="right") as server:
        failed = vqabench([*args, *llm(server, "scripted-bqq", "TEST_KEY")], TEST_KEY="wrong")
        assert failed.returncode == 1 and "UNFINISHED" in failed.stdout
        server.api_key, server.handler = None, BQAResponder()
        fixed = vqabench([*args, *llm(server, "scripted-bqa")])
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        assert (work / "release").is_dir()
        models = {r.body["model"] for r in server.chat_requests if r.status == 200}
        assert models == {"scripted-bqa"}
        refused = vqabench([*args, *llm(server, "scripted-bqq")])
        assert (
            refused.returncode == 2 and "llm.model: was 'scripted-bqa', now 'scripted-bqq'" in refused.stderr
        )
