"""Judge throughput: N judgements (rubric marinelife_open_ended) at concurrency c against the local
test server with latency L per request.

The floor is N*L/c; the target is a wall time within 1.15x of it. Measured in the same run: the
bare LLM client on the same rendered requests (so the judge's own cost, rendering prompts and
aggregating, shows apart from the client's), a rerun with the same cache (it must send nothing),
and a run with a share of requests answered by 429/500 (every judgement must still come back).
The server runs in its own process (``ServerProcess`` of ``benchmarks/llm.py``) and answers with
schema-valid scores.

    python benchmarks/judge.py [--n 1000] [--latency 0.1] [--concurrency 32] [--fault-rate 0.1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from llm import ServerProcess  # benchmarks/llm.py: a ChatServer in a child process

from builders.evaluation.rubrics import get_rubric
from builders.scoring.judge import judge_client, judge_predictions
from builders.testing.chat_faults import Fault
from marinelife16k.rubrics import camera_groups


def inputs(n: int) -> tuple[list[str], list[str], list[str], list[str]]:
    predictions = [f"The camera pans left while reef fish {i} swims past." for i in range(n)]
    references = [f"The camera pans left, following fish {i} as it swims over the reef." for i in range(n)]
    questions = [f"How does the camera movement relate to fish {i}?" for i in range(n)]
    camera = ["moving" if i % 3 else "static" for i in range(n)]
    return predictions, references, questions, camera


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=1000, help="judgements per run")
    parser.add_argument("--latency", type=float, default=0.1, help="server seconds per request")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--fault-rate", type=float, default=0.1, help="share of requests answered 429/500")
    parser.add_argument("--repeats", type=int, default=2, help="timed cold runs of each (best is shown)")
    args = parser.parse_args()
    n, latency, c = args.n, args.latency, args.concurrency
    floor = n * latency / c
    rubric = get_rubric("marinelife_open_ended")
    predictions, references, questions, camera = inputs(n)

    with ServerProcess(latency) as server, tempfile.TemporaryDirectory() as tmp:

        def client(name: str) -> Any:
            return judge_client(
                model="bench-judge", base_url=server.url, api_key_env="none", max_concurrency=c,
                cache_path=Path(tmp) / f"{name}.sqlite", environ={}, progress=False, max_retries=5,
            )  # fmt: skip

        render, requests = timed(
            lambda: [
                rubric.request(p, r, q) for p, r, q in zip(predictions, references, questions, strict=True)
            ]
        )
        bare = judge = float("inf")
        for repeat in range(args.repeats):
            server.reset()
            with client(f"bare{repeat}") as plain:
                elapsed, results = timed(plain.run, requests)
            assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
            bare = min(bare, elapsed)
            server.reset()
            with client(f"judge{repeat}") as judged:
                elapsed, result = timed(
                    judge_predictions,
                    predictions,
                    references,
                    rubric,
                    judged,
                    questions=questions,
                    groups=camera_groups(camera),
                )
            assert result.n == n and result.n_failed == 0, result.failed[:3]
            judge = min(judge, elapsed)
            sent_cold, _, in_flight = server.stats()

        server.reset()
        with client("judge0") as again:
            warm, rerun = timed(
                judge_predictions,
                predictions,
                references,
                rubric,
                again,
                questions=questions,
                groups=camera_groups(camera),
            )
        sent_warm, _, _ = server.stats()

        server.reset(
            args.fault_rate, [Fault.rate_limit(retry_after=0.05), Fault.server_error(retry_after=0.05)]
        )
        with client("faults") as faulty:
            faulted, with_faults = timed(
                judge_predictions,
                predictions,
                references,
                rubric,
                faulty,
                questions=questions,
                groups=camera_groups(camera),
            )
        sent_faulty, injected, _ = server.stats()

    print(
        f"N={n} judgements, latency L={latency * 1000:.0f} ms, concurrency c={c}: floor N*L/c = {floor:.3f} s"
    )
    print(f"rendering {n} judge requests:          {render:.3f} s")
    print(f"LLMClient alone on those requests:    {bare:.3f} s = {bare / floor:.3f}x floor")
    print(
        f"judge_predictions, cold cache:        {judge:.3f} s = {judge / floor:.3f}x floor (target <= 1.15x), "
        f"{judge / bare:.3f}x the client alone; {sent_cold} requests sent, max {in_flight} in flight"
    )
    print(
        f"judge_predictions, rerun same cache:  {warm:.3f} s, {sent_warm} requests sent, "
        f"{rerun.judge.cache_hits if rerun.judge else 0}/{n} cache hits, same score: {rerun.score == result.score}"
    )
    print(
        f"judge_predictions, {args.fault_rate:.0%} faults (429/500): {faulted:.3f} s = {faulted / floor:.3f}x floor; "
        f"{injected} faults injected in {sent_faulty} requests; {with_faults.n}/{n} judged, "
        f"{with_faults.n_failed} failed"
    )
    print(f"(best of {args.repeats} cold runs for the client alone and the judge)")


if __name__ == "__main__":
    main()
