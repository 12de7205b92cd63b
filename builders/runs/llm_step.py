"""The loop every LLM step shares: both pipelines' steps and both evaluation runners
(:mod:`builders.evaluation.run`).

Pending items flow through a pipeline (:func:`run_llm_step`): requests are built ahead by a pool
of threads (a long step's frames decoded in worker processes), requests go out as soon as they are
ready, and each finished item is recorded at once (:class:`builders.runs.steps.StepRecords`), so a killed run loses nothing that was answered, and the
engine's reply cache means a rerun never pays twice for a reply that validated. An item whose call
failed after the engine's retries is *not* recorded: it stays pending for the next run and is
reported (or, with ``reject_failures``, rejected with reason ``llm_failure``). A reply a safety
filter stopped is rejected with reason ``blocked`` (counted apart, never a generic failure), unless the
step gives it an outcome (``on_blocked``: BQA's STEP4 keeps it as Hard, as the paper does). A clip
that cannot be decoded is rejected with reason ``video_unreadable`` instead of stopping the step.

An item may need more than one request (the two stages of a chain-of-thought evaluation): its
``outcome_of`` returns a :class:`FollowUp` (the next request, the client to send it with, and what
turns its reply into the outcome) instead of an :class:`Outcome`. Each stage's reply is cached like
any other, so a rerun of an item killed between its stages pays for neither again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from builders.files.progress import progress_bar
from builders.files.space import DiskFull
from builders.llm import LLMClient, LLMRequest, LLMResult, ReplayMissError
from builders.llm.client import Status
from builders.runs.frames import decoding_processes
from builders.runs.steps import (
    COMMIT_SECONDS,
    KEPT,
    REJECTED,
    StepRecords,
    mark_paid,
)
from builders.video.sampler import available_cpus
from builders.video.source import VideoError

__all__ = [
    "BLOCKED", "LLM_FAILURE", "VIDEO_UNREADABLE", "FollowUp", "Outcome", "llm_fields", "run_llm_step",
]  # fmt: skip

LLM_FAILURE, VIDEO_UNREADABLE, BLOCKED = "llm_failure", "video_unreadable", "blocked"


@dataclass(frozen=True)
class Outcome:
    """What an item's reply became: a record, kept or rejected with a short reason code."""

    record: dict[str, Any]
    status: str = KEPT
    reason: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class FollowUp:
    """An item's next request (a later stage): sent with ``client`` (None: the step's), its reply
    turned by ``outcome_of(request, result)`` into the item's :class:`Outcome` or another FollowUp."""

    request: LLMRequest
    outcome_of: Callable[[LLMRequest, LLMResult], Outcome | FollowUp]
    client: LLMClient | None = None


def llm_fields(result: LLMResult, request: LLMRequest, client: LLMClient) -> dict[str, Any]:
    """Provenance and cost of one reply, stored with the item's record."""
    name, version = request.prompt_ref or ("", "")
    return {
        "model": result.model_reported or client.settings.model,
        "prompt": name,
        "prompt_version": version,
        "usage": [result.usage.prompt_tokens, result.usage.completion_tokens],
    }


#: Clips a step decodes in its own threads before it decodes in worker processes
#: (:func:`decoding_processes`, started meanwhile): starting them costs 0.13-0.2 s idle, 2-4 s on a
#: loaded machine, what 4-6 clips or more cost to decode, so a step with fewer distinct clips (a
#: short one, or one whose rows share a few clips) never starts them.
PROCESS_MIN_CLIPS = 16


def prepare_workers() -> int:
    """Clips a step decodes at once: one per CPU, in its own threads or, past its first clips, in as
    many worker processes (:class:`builders.runs.frames.DecodeProcesses` says why processes)."""
    return available_cpus()


def run_llm_step(
    records: StepRecords,
    items: Sequence[Mapping[str, Any]],
    client: LLMClient,
    request_of: Callable[[Mapping[str, Any]], LLMRequest | FollowUp],
    outcome_of: Callable[[Mapping[str, Any], LLMRequest, LLMResult], Outcome | FollowUp],
    *,
    reject_failures: bool = False,
    desc: str | None = None,
    workers: int | None = None,
    ahead: int | None = None,
    on_blocked: Callable[[Mapping[str, Any], LLMRequest, LLMResult], Outcome] | None = None,
) -> dict[str, str]:
    """Run the pending ``items`` (dicts with an ``id``); returns ``{id: error}`` of the calls that failed.

    ``request_of(item)`` builds the request (VideoError/FileNotFoundError: the item is rejected as
    ``video_unreadable``), or a :class:`FollowUp` when the item's first request goes to another client
    and has its own outcome; ``outcome_of(item, request, result)`` turns a validated reply into a
    record (an :class:`Outcome`), or into the item's next request (a :class:`FollowUp`).
    ``on_blocked(item, request, result)``: what a reply a safety filter stopped becomes (default: rejected, ``blocked``).

    A pipeline: items start in input order and each has a thread that builds its request (frames
    sampled and encoded ``workers`` clips at a time, in as many worker processes past the first
    :data:`PROCESS_MIN_CLIPS` clips; an item waiting for a clip that another is decoding, rows that
    share a clip, holds back no other item), each request is sent as soon as it is built, at most
    ``settings.max_concurrency`` in flight, and
    each result is recorded as it arrives (group commits: :class:`StepRecords`). At most
    ``max_concurrency + ahead`` items are between "started" and "recorded" (``ahead``, the ``--ahead``
    option, defaults to ``2 * workers``), so memory does not grow with the split. The
    output files are written in input order when the step finishes. Replay mode: a request with no
    recorded reply raises :class:`ReplayMissError` once the step has gone through every item
    (nothing is ever sent). A ``--max-cost`` budget (:attr:`LLMClient.budget`) that would be crossed
    stops the step cleanly: the items not sent stay pending.
    """
    if ahead is not None and ahead < 1:
        raise ValueError(f"ahead must be at least 1, got {ahead}")
    workers = workers or prepare_workers()
    ahead = ahead or 2 * workers
    desc = desc or records.name

    def one_pass() -> tuple[dict[str, str], list[tuple[str, str, str]], DiskFull | None, int]:
        pending = records.pending(items)
        # No more clips than items; one worker: every clip in this process (still one at a time).
        local_clips = PROCESS_MIN_CLIPS if workers > 1 and len(pending) > PROCESS_MIN_CLIPS else None
        with (
            records.group_commits(),
            decoding_processes(workers, local_clips=local_clips),
            progress_bar(len(items), len(items) - len(pending), desc) as bar,
        ):
            try:
                return (
                    *asyncio.run(
                        _pipeline(
                            records,
                            pending,
                            client,
                            request_of,
                            outcome_of,
                            reject_failures,
                            bar,
                            workers,
                            ahead,
                            on_blocked,
                        )
                    ),
                    len(pending),
                )
            except asyncio.CancelledError:  # a second Ctrl-C: stopped at once
                client.raise_if_interrupted()
                raise

    # --llm-mode batch: a pass per round, each round's queue answered by batches in between
    failures, missed, full, pending_count = (
        one_pass() if client.batch is None else client.batch.rounds(client, one_pass)
    )
    if full is not None:
        raise full
    client.raise_if_interrupted()
    if missed:
        first = missed[0]
        raise ReplayMissError(
            f"replay: {len(missed)} of {pending_count} requests have no recorded reply (first: item "
            f"{first[0]}, key {first[1][:16]}…, model {first[2]}); "
            + client.miss_reason(key for _, key, _ in missed),
            [key for _, key, _ in missed],
        )
    return failures


async def _pipeline(
    records: StepRecords,
    pending: Sequence[Mapping[str, Any]],
    client: LLMClient,
    request_of: Callable[[Mapping[str, Any]], LLMRequest | FollowUp],
    outcome_of: Callable[[Mapping[str, Any], LLMRequest, LLMResult], Outcome | FollowUp],
    reject_failures: bool,
    bar: Any,
    workers: int,
    ahead: int,
    on_blocked: Callable[[Mapping[str, Any], LLMRequest, LLMResult], Outcome] | None = None,
) -> tuple[dict[str, str], list[tuple[str, str, str]], DiskFull | None]:
    loop = asyncio.get_running_loop()
    failures: dict[str, str] = {}
    missed: list[tuple[str, str, str]] = []  # item, key, model asked
    window = asyncio.Semaphore(client.settings.max_concurrency + ahead)
    stop = asyncio.Event()  # set when the budget refuses a request: start nothing more
    paid = False  # mark_paid done (once, before the first validated reply is recorded)
    recorded = 0

    def add(*args: Any, **kwargs: Any) -> None:
        nonlocal recorded
        records.add(*args, **kwargs)
        recorded += 1

    def follow_estimate(
        decide: Callable[..., Outcome | FollowUp], request: LLMRequest, result: LLMResult
    ) -> FollowUp | None:
        """Under ``--estimate``: the item's next stage, from a stand-in reply of the expected length
        (plain-text requests only), so that the later stages are priced too."""
        if request.schema is not None:
            return None
        words = " ".join(["estimate"] * max(1, (request.output_tokens or 50) * 3 // 4))
        try:
            following = decide(request, replace(result, status=Status.OK, value=words, raw=words, error=None))
        except Exception:  # an outcome that cannot read a stand-in: no later stage to price
            return None
        return following if isinstance(following, FollowUp) else None

    def not_answered(
        item: Mapping[str, Any], request: LLMRequest, result: LLMResult, asked: LLMClient
    ) -> None:
        item_id = str(item["id"])
        match result.status:
            case Status.STOPPED:
                pass  # left pending: the run is stopping (a signal, a full disk)
            case Status.BLOCKED if on_blocked is not None:
                kept = on_blocked(item, request, result)
                add(kept.record, status=kept.status, reason=kept.reason, detail=kept.detail)
            case Status.BLOCKED:
                blocked = {"id": item["id"], "reply": result.raw, "blocked": result.blocked}
                add(blocked, status=REJECTED, reason=BLOCKED, detail=result.error)
            case Status.REPLAY_MISS:
                missed.append((item_id, result.key, asked.settings.model))
            case Status.ESTIMATED | Status.QUEUED:
                failures[item_id] = str(result.error)  # counted or queued, not sent: stays pending
            case Status.OVER_BUDGET:
                stop.set()
                failures[item_id] = str(result.error)
            case Status.FAILED if reject_failures:
                failed = {"id": item["id"], "reply": result.raw}
                add(failed, status=REJECTED, reason=LLM_FAILURE, detail=result.error)
            case Status.FAILED:
                failures[item_id] = result.error or "unknown error"
            case unexpected:  # a new Status must be given its meaning here
                raise AssertionError(f"unhandled LLM result status {unexpected}")

    async def one(item: Mapping[str, Any], pool: ThreadPoolExecutor) -> None:
        try:
            await answer(item, pool)
        except DiskFull as err:  # no room to save: send nothing more; what was saved stays saved
            session.disk_full(err)
        finally:
            window.release()

    async def answer(item: Mapping[str, Any], pool: ThreadPoolExecutor) -> None:
        nonlocal paid
        try:
            built = await loop.run_in_executor(pool, request_of, item)
        except (VideoError, FileNotFoundError) as err:
            add({"id": item["id"]}, status=REJECTED, reason=VIDEO_UNREADABLE, detail=str(err))
            bar.update(1)
            return
        decide: Callable[[LLMRequest, LLMResult], Outcome | FollowUp]
        if isinstance(built, FollowUp):  # a first stage with its own client and outcome
            asked, request, decide = built.client or client, built.request, built.outcome_of
        else:
            asked, request, decide = client, built, partial(outcome_of, item)
        while True:  # one pass per stage of the item, all in the run's one session
            result = await session.complete(request, asked)
            if result.status is Status.STOPPED:
                return  # left pending: the run is stopping (a signal, a full disk)
            if result.status is not Status.OK:
                following = (
                    follow_estimate(decide, request, result) if result.status is Status.ESTIMATED else None
                )
                if following is None:
                    not_answered(item, request, result, asked)
                    break
            else:
                if not paid:
                    mark_paid(records.work_dir)  # before the first reply is recorded: options lock now
                    paid = True
                decided = decide(request, result)
                if isinstance(decided, Outcome):
                    add(decided.record, status=decided.status, reason=decided.reason,
                        detail=decided.detail)  # fmt: skip
                    break
                following = decided
            asked, request, decide = following.client or client, following.request, following.outcome_of
        bar.update(1)

    async def commit_every_second() -> None:
        while True:
            await asyncio.sleep(COMMIT_SECONDS / 2)
            try:
                records.commit_due()
            except DiskFull as err:
                session.disk_full(err)
                return

    ticker = asyncio.create_task(commit_every_second())
    try:
        # A thread for every item between started and sent: most of them wait (for a decode slot,
        # for a clip another item is decoding, for a worker process), none holds back another.
        threads = client.settings.max_concurrency + ahead
        with ThreadPoolExecutor(threads, thread_name_prefix="prepare") as pool:
            async with client.session() as session:  # the run's one session, for every stage and model
                tasks = []
                for item in pending:  # started in input order, so requests are built in that order
                    await window.acquire()
                    if stop.is_set() or session.stopping.is_set():
                        window.release()
                        break
                    tasks.append(asyncio.create_task(one(item, pool)))
                await asyncio.gather(*tasks)
    finally:
        ticker.cancel()
    if session.full is None:
        return failures, missed, None
    return failures, missed, session.full_error(f". This run recorded {recorded} item(s) before that")
