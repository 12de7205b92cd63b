"""What became of an LLM request is a :class:`Status`, never a prefix of the error text.

Each outcome the step loop branches on (validated, failed, replay miss, over budget, estimated) comes
from the real client against the real chat server on 127.0.0.1, and no module of the package decides
anything by ``startswith`` on an error string (a reworded message must not change control flow).
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from builders.llm import LLMClient, LLMRequest, LLMSettings, Status, user_message
from builders.llm.cost import Budget, Estimate, Price
from builders.testing.chat_faults import Fault

ROOT = Path(__file__).resolve().parent.parent


def settings(server, **changes) -> LLMSettings:
    base = dict(model="test-model", base_url=server.url, api_key_env=None, timeout=5.0, max_retries=0)
    return LLMSettings(**(base | changes), progress=False)


def one(client: LLMClient, text: str):
    async def go():
        async with client.session() as session:
            return await session.complete(LLMRequest([user_message(text)]))

    return asyncio.run(go())


def test_each_outcome_has_its_own_status(chat_server, tmp_path):
    client = LLMClient(settings(chat_server), cache_path=tmp_path / "cache.sqlite")
    assert one(client, "hello").status is Status.OK
    chat_server.queue_faults(Fault.server_error(retry_after=0.01))
    failed = one(client, "fails")
    assert failed.status is Status.FAILED and not failed.ok and "HTTP 500" in (failed.error or "")
    sent = len(chat_server.chat_requests)

    client.budget = Budget(0.0, Price(1.0, 1.0), "test-model")
    refused = one(client, "too dear")
    assert refused.status is Status.OVER_BUDGET and client.budget.refused == 1
    client.budget = None
    client.estimate = Estimate()
    assert one(client, "how much").status is Status.ESTIMATED and client.estimate.requests == 1
    assert len(chat_server.chat_requests) == sent  # neither was sent

    (tmp_path / "none.jsonl").write_text("")
    replay = LLMClient(settings(chat_server), replies_path=tmp_path / "none.jsonl")
    assert one(replay, "hello").status is Status.REPLAY_MISS
    assert len(chat_server.chat_requests) == sent


def _error_like(node: ast.AST) -> bool:
    """Whether an expression reads an error text: a name or attribute called error/err/exc/message."""
    words = {"error", "err", "exc", "message", "detail", "reason"}
    for sub in ast.walk(node):
        name = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else None
        if name is not None and any(w == name or name.endswith("_" + w) for w in words):
            return True
    return False


def test_no_control_flow_decided_by_the_start_of_an_error_string():
    found = []
    for top in ("builders", "bqa", "marinelife16k", "metrics"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if ".venv" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("startswith", "endswith")
                    and _error_like(node.func.value)
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
