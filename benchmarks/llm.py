"""LLM client throughput, cache reruns and fault tolerance against the local test server.

N requests (structured replies, a pydantic schema) go to ``ChatServer`` with a fixed latency L per
request at concurrency c. The floor is N*L/c; the target is a wall time within 1.15x of it. The
same batch through the bare ``openai`` SDK (an asyncio.Semaphore, no cache, no validation) is the
baseline measured in the same run, so the cost of this layer shows on its own. Then: a rerun with
the same cache (it must send 0 requests), and a run with a fraction of requests answered by 429/500
faults (every item must still complete, through the SDK's retries).

The server runs in its own process, as a real endpoint would: in-process, its threads would take
the client's GIL and the figures would measure the server's Python as much as the client's.

    python benchmarks/llm.py [--n 500] [--latency 0.1] [--concurrency 32] [--fault-rate 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import tempfile
import time
from pathlib import Path
from typing import Any

import openai
from pydantic import BaseModel, Field

from builders.llm import LLMClient, LLMRequest, LLMSettings, user_message
from builders.testing.chat_faults import Fault
from builders.testing.chat_server import ChatServer


class Answer(BaseModel):
    answer: str = Field(min_length=1)
    confidence: int = Field(ge=1, le=5)


def _serve(latency: float, conn: Any) -> None:
    """Child process: run a ChatServer and obey simple commands from the parent."""
    with ChatServer(latency=latency, model="bench-model") as server:
        conn.send(server.url)
        while True:
            command, *params = conn.recv()
            if command == "stop":
                return
            if command == "reset":
                server.reset()
                server.fault_rate, server.fault_choices = params
            elif command == "cpu":  # CPU seconds this server process has used (it shares the cores)
                conn.send(time.process_time())
            elif command == "stats":
                log = server.chat_requests
                faults = sum(r.fault in ("rate_limit", "server_error") for r in log)
                conn.send((len(log), faults, server.max_in_flight))


class ServerProcess:
    """A ChatServer in a child process: ``url``, ``reset(fault_rate, fault_choices)``, ``stats()``."""

    def __init__(self, latency: float) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(latency, child), daemon=True)
        self._process.start()
        self.url: str = self._conn.recv()

    def reset(self, fault_rate: float = 0.0, fault_choices: list[Fault] | None = None) -> None:
        self._conn.send(("reset", fault_rate, fault_choices or []))

    def stats(self) -> tuple[int, int, int]:
        """(chat requests seen, faults injected, most in flight at once) since the last reset."""
        self._conn.send(("stats",))
        return self._conn.recv()

    def cpu(self) -> float:
        """CPU seconds the server process has used so far."""
        self._conn.send(("cpu",))
        return self._conn.recv()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self._conn.send(("stop",))
        self._process.join(timeout=10)


def requests(n: int) -> list[LLMRequest]:
    return [LLMRequest([user_message(f"Question {i}: what is shown?")], schema=Answer) for i in range(n)]


async def bare_sdk(url: str, n: int, concurrency: int) -> float:
    sdk = openai.AsyncOpenAI(api_key="unused", base_url=url, max_retries=5)
    limit = asyncio.Semaphore(concurrency)
    fmt = {"type": "json_schema", "json_schema": {"name": "Answer", "schema": Answer.model_json_schema()}}

    async def one(i: int) -> None:
        async with limit:
            await sdk.chat.completions.create(
                model="bench", messages=[user_message(f"Question {i}: what is shown?")], response_format=fmt
            )

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - started
    await sdk.close()
    return elapsed


def timed(fn: Any, *args: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=500, help="requests per run")
    parser.add_argument("--latency", type=float, default=0.1, help="server seconds per request")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--fault-rate", type=float, default=0.1, help="share of requests answered 429/500")
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed runs of the baseline and cold cache (best)"
    )
    args = parser.parse_args()
    n, latency, c = args.n, args.latency, args.concurrency
    floor = n * latency / c

    with ServerProcess(latency) as server, tempfile.TemporaryDirectory() as tmp:
        settings = LLMSettings(
            model="bench",
            base_url=server.url,
            api_key_env=None,
            max_concurrency=c,
            max_retries=5,
            progress=False,
        )
        # Best of a few runs: this machine is shared, and the floor is what a quiet one would show.
        baseline = min(asyncio.run(bare_sdk(server.url, n, c)) for _ in range(args.repeats))
        cold = float("inf")
        for repeat in range(args.repeats):
            server.reset()
            client = LLMClient(settings, cache_path=Path(tmp) / f"cache{repeat}.sqlite")
            elapsed, results = timed(client.run, requests(n))
            assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
            cold = min(cold, elapsed)
            sent_cold, _, in_flight = server.stats()

        server.reset()
        warm, rerun = timed(LLMClient(settings, cache_path=Path(tmp) / "cache0.sqlite").run, requests(n))
        sent_warm, _, _ = server.stats()

        server.reset(
            args.fault_rate, [Fault.rate_limit(retry_after=0.05), Fault.server_error(retry_after=0.05)]
        )
        faulty_client = LLMClient(settings, cache_path=Path(tmp) / "faults.sqlite")
        faulted, faulty = timed(faulty_client.run, requests(n))
        sent_faulty, injected, _ = server.stats()

    print(
        f"N={n} requests, latency L={latency * 1000:.0f} ms, concurrency c={c}: floor N*L/c = {floor:.3f} s"
    )
    print(f"bare openai SDK (baseline):   {baseline:.3f} s = {baseline / floor:.3f}x floor")
    print(
        f"LLMClient, cold cache:        {cold:.3f} s = {cold / floor:.3f}x floor (target <= 1.15x), "
        f"{cold / baseline:.3f}x the bare SDK; {sent_cold} requests sent, max {in_flight} in flight"
    )
    print(
        f"LLMClient, rerun same cache:  {warm:.3f} s, {sent_warm} requests sent, "
        f"{sum(r.cached for r in rerun)}/{n} cache hits"
    )
    print(
        f"LLMClient, {args.fault_rate:.0%} faults (429/500): {faulted:.3f} s = {faulted / floor:.3f}x floor; "
        f"{injected} faults injected in {sent_faulty} requests; "
        f"{sum(r.ok for r in faulty)}/{n} items completed, {sum(not r.ok for r in faulty)} failed"
    )
    print(f"(best of {args.repeats} runs for the baseline and the cold cache)")
    print(f"last cold run: {client.usage}")
    print(f"faulty run: {faulty_client.usage}")


if __name__ == "__main__":
    main()
