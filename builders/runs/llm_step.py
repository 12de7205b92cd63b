"""The loop every LLM step shares: both pipelines' steps and both evaluation runners
(:mod:`builders.evaluation.run`).

Pending items go to the LLM in batches; each finished item is recorded at once
(:class:`builders.runs.steps.StepRecords`), so a killed run loses nothing that was answered, and the
engine's reply cache means a rerun never pays twice for a reply that validated. An item whose call
failed after the engine's retries is *not* recorded: it stays pending for the next run and is
reported (or, with ``reject_failures``, rejected with reason ``llm_failure``). A clip that cannot be
decoded is rejected with reason ``video_unreadable`` instead of stopping the step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tqdm.auto import tqdm

from builders.llm import LLMClient, LLMRequest, LLMResult
from builders.runs.steps import DEFAULT_BATCH_SIZE, KEPT, REJECTED, StepRecords, mark_paid
from builders.video.source import VideoError

LLM_FAILURE, VIDEO_UNREADABLE = "llm_failure", "video_unreadable"


@dataclass(frozen=True)
class Outcome:
    """What an item's reply became: a record, kept or rejected with a short reason code."""

    record: dict[str, Any]
    status: str = KEPT
    reason: str | None = None
    detail: str | None = None


def llm_fields(result: LLMResult, request: LLMRequest, client: LLMClient) -> dict[str, Any]:
    """Provenance and cost of one reply, stored with the item's record."""
    name, version = request.prompt_ref or ("", "")
    return {
        "model": result.model_reported or client.settings.model,
        "prompt": name,
        "prompt_version": version,
        "usage": [result.usage.prompt_tokens, result.usage.completion_tokens],
    }


def batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def run_llm_step(
    records: StepRecords,
    items: Sequence[Mapping[str, Any]],
    client: LLMClient,
    request_of: Callable[[Mapping[str, Any]], LLMRequest],
    outcome_of: Callable[[Mapping[str, Any], LLMRequest, LLMResult], Outcome],
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    reject_failures: bool = False,
    desc: str | None = None,
) -> dict[str, str]:
    """Run the pending ``items`` (dicts with an ``id``); returns ``{id: error}`` of the calls that failed.

    ``request_of(item)`` builds the request (VideoError/FileNotFoundError: the item is rejected as
    ``video_unreadable``); ``outcome_of(item, request, result)`` turns a validated reply into a record.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    pending = records.pending(items)
    failures: dict[str, str] = {}
    desc = desc or records.name
    with tqdm(
        total=len(items), initial=len(items) - len(pending), desc=desc, unit="item", disable=None
    ) as bar:
        for batch in batches(pending, batch_size):
            ready: list[tuple[Mapping[str, Any], LLMRequest]] = []
            for item in batch:
                try:
                    ready.append((item, request_of(item)))
                except (VideoError, FileNotFoundError) as err:
                    records.add({"id": item["id"]}, status=REJECTED, reason=VIDEO_UNREADABLE, detail=str(err))
                    bar.update(1)
            results = client.run([request for _, request in ready], desc=desc) if ready else []
            if any(result.ok for result in results):
                mark_paid(records.work_dir)  # before the first reply is recorded: options lock now
            for (item, request), result in zip(ready, results, strict=True):
                if result.ok:
                    outcome = outcome_of(item, request, result)
                    records.add(
                        outcome.record, status=outcome.status, reason=outcome.reason, detail=outcome.detail
                    )
                elif reject_failures:
                    failed = {"id": item["id"], "reply": result.raw}
                    records.add(failed, status=REJECTED, reason=LLM_FAILURE, detail=result.error)
                else:
                    failures[str(item["id"])] = result.error or "unknown error"
                bar.update(1)
    return failures
