"""The pipelined LLM step loop (builders/runs/llm_step.py) against the real local chat server:
requests overlap with preparation, at most c are in flight, memory is bounded by a window, the
output order is the input order whatever order replies come back in, records are group-committed
and durable when the loop returns, and a --max-cost budget stops the step cleanly."""

from __future__ import annotations

import io
import random
import threading
import time

import pytest

from builders.files.jsonio import read_jsonl
from builders.files.progress import PlainProgress, progress_bar
from builders.llm import LLMClient, LLMRequest, LLMSettings, ReplayMissError, user_message
from builders.llm.cost import Budget, Price
from builders.runs.llm_step import Outcome, run_llm_step
from builders.runs.steps import StepRecords


def _settings(server, concurrency=4):
    return LLMSettings(model="m", base_url=server.url, api_key_env=None, progress=False,
                       max_concurrency=concurrency)  # fmt: skip


ITEMS = [{"id": f"item{i:02d}", "n": i} for i in range(24)]


def _request(item):
    return LLMRequest([user_message(f"say {item['n']}")], output_tokens=1)


def _outcome(item, request, result):
    return Outcome({"id": item["id"], "reply": result.value})


def test_requests_overlap_results_are_in_input_order_and_memory_is_bounded(chat_server, tmp_path):
    rng = random.Random(3)
    live, most, arrived = [0], [0], [0]
    lock = threading.Lock()
    # The first 4 requests are answered only once all 4 are in flight at once: the overlap is shown by
    # an event, not hoped for from timing (a loop that sent one at a time would break the barrier).
    together = threading.Barrier(4, timeout=120)

    def handler(body):
        with lock:
            arrived[0] += 1
            first = arrived[0] <= 4
            pause = rng.uniform(0.0, 0.05)
        if first:
            together.wait()
        time.sleep(pause)  # replies finish out of order
        return body["messages"][-1]["content"]

    chat_server.handler = handler

    def request_of(item):
        with lock:
            live[0] += 1
            most[0] = max(most[0], live[0])
        time.sleep(0.01)  # preparing frames takes a while
        return _request(item)

    def outcome(item, request, result):
        with lock:
            live[0] -= 1
        return _outcome(item, request, result)

    records = StepRecords(tmp_path, "s")
    with LLMClient(_settings(chat_server, 4), cache_path=tmp_path / "c.sqlite") as client:
        failures = run_llm_step(records, ITEMS, client, request_of, outcome, workers=2, ahead=3)
    assert failures == {}
    assert chat_server.max_in_flight == 4  # requests went out while others were being prepared
    assert most[0] <= 4 + 3  # never more than c + ahead items between prepared and recorded
    records.finish(item["id"] for item in ITEMS)
    kept = records.kept()
    assert [r["id"] for r in kept] == [i["id"] for i in ITEMS]
    assert [r["reply"] for r in kept] == [f"say {i}" for i in range(24)]


def test_records_are_group_committed_and_durable_when_the_loop_returns(chat_server, tmp_path):
    chat_server.handler = lambda body: "ok"
    records = StepRecords(tmp_path, "s")
    with LLMClient(_settings(chat_server, 8), cache_path=tmp_path / "c.sqlite") as client:
        run_llm_step(records, ITEMS, client, _request, _outcome)
    # Not finished: everything recorded is on disk, and it took far fewer fsyncs than records.
    assert len(read_jsonl(records.partial_path)) == len(ITEMS)
    assert 1 <= records.commits < len(ITEMS) // 2
    # The next run finds every item done and sends nothing.
    chat_server.reset()
    again = StepRecords(tmp_path, "s")
    with LLMClient(_settings(chat_server, 8), cache_path=tmp_path / "c.sqlite") as client:
        run_llm_step(again, ITEMS, client, _request, _outcome)
    assert chat_server.chat_requests == [] and again.pending(ITEMS) == []


def test_records_lost_with_the_last_group_are_redone_from_the_cache(chat_server, tmp_path):
    chat_server.handler = lambda body: "ok"
    records = StepRecords(tmp_path, "s")
    with LLMClient(_settings(chat_server, 8), cache_path=tmp_path / "c.sqlite") as client:
        run_llm_step(records, ITEMS, client, _request, _outcome)
    lines = records.partial_path.read_text().splitlines(keepends=True)
    records.partial_path.write_text("".join(lines[:10]))  # what a kill before the last commit leaves
    chat_server.reset()
    resumed = StepRecords(tmp_path, "s")
    with LLMClient(_settings(chat_server, 8), cache_path=tmp_path / "c.sqlite") as client:
        assert run_llm_step(resumed, ITEMS, client, _request, _outcome) == {}
        assert client.usage.cache_hits == len(ITEMS) - 10
    assert chat_server.chat_requests == []  # no new paid request


def test_a_budget_stops_the_step_before_crossing_it_and_the_rest_stays_pending(chat_server, tmp_path):
    chat_server.handler = lambda body: "ok"  # the server reports its own token counts
    records = StepRecords(tmp_path, "s")
    with LLMClient(_settings(chat_server, 1), cache_path=tmp_path / "c.sqlite") as client:
        # $0.001 a token: a request is estimated at 7 tokens (2 of text, 4 of message overhead, 1 out).
        client.budget = Budget(max_cost=0.05, price=Price(1000.0, 1000.0), model="m")
        failures = run_llm_step(records, ITEMS, client, _request, _outcome)
        spent = client.budget.spent
    sent = len(chat_server.chat_requests)
    assert 0 < sent < len(ITEMS)
    assert 0 < spent <= 0.05
    assert len(failures) >= 1 and all("max-cost" in e for e in failures.values())
    assert len(records.pending(ITEMS)) == len(ITEMS) - sent


def test_replay_miss_is_reported_after_the_step_with_nothing_sent(chat_server, tmp_path):
    records = StepRecords(tmp_path, "s")
    with LLMClient(_settings(chat_server), cache_path=tmp_path / "c.sqlite") as client:
        run_llm_step(records, ITEMS[:2], client, _request, _outcome)
    chat_server.reset()
    with LLMClient(_settings(chat_server), cache_path=tmp_path / "c.sqlite", mode="replay") as client:
        with pytest.raises(ReplayMissError, match="3 of 5 requests have no recorded reply"):
            run_llm_step(StepRecords(tmp_path, "t"), ITEMS[:5], client, _request, _outcome)
    assert chat_server.chat_requests == []


def test_plain_progress_lines_when_the_output_is_not_a_terminal():
    stream = io.StringIO()
    with progress_bar(10, 2, "STEP2 questions", stream=stream) as bar:
        assert isinstance(bar, PlainProgress)
        bar.every = 0.0  # a line per update (the default waits PLAIN_SECONDS between lines)
        bar.update(1)
        bar.update(2)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("STEP2 questions: 3/10 items (30%), ") and "items/s" in lines[0]
    assert lines[1].startswith("STEP2 questions: 5/10 items (50%)") and "ETA" in lines[1]
    assert lines[-1].startswith("STEP2 questions: 5/10 items")  # the closing line
