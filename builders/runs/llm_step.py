"""The loop every LLM step shares: both pipelines' steps and both evaluation runners.

Pending items go to the LLM in batches; each finished item is recorded at once
(:class:`builders.runs.steps.StepRecords`), so a killed run loses nothing that was answered, and the
engine's reply cache means a rerun never pays twice for a reply that validated. An item whose call
failed after the engine's retries is *not* recorded: it stays pending for the next run and is
reported (or, with ``reject_failures``, rejected with reason ``llm_failure``). A clip that cannot be
decoded is rejected with reason ``video_unreadable`` instead of stopping the step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from builders.files.jsonio import write_json_atomic, write_jsonl_atomic
from builders.llm import LLMClient, LLMRequest, LLMResult, UsageSummary
from builders.runs.lock import locks_work_folder
from builders.runs.steps import KEPT, REJECTED, StepRecords, bind_work_folder, mark_paid
from builders.runs.unfinished import Unfinished
from builders.video.source import VideoError

LLM_FAILURE, VIDEO_UNREADABLE = "llm_failure", "video_unreadable"
DEFAULT_BATCH_SIZE = 32


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


@dataclass
class PredictionRun:
    """What an evaluation runner did for one predictions file (the parts both runners share)."""

    out: Path | None  # None until every item has a prediction
    rows: int
    predicted: int
    rejected: dict[str, int]
    failed: dict[str, str]  # this run's failed LLM calls: id -> error (they stay pending)
    run: UsageSummary = field(default_factory=UsageSummary)
    scores: dict[str, Any] | None = None  # the runner's quick accuracy, once every item is predicted

    @property
    def ok(self) -> bool:
        return not self.failed

    def _lines(self, header: str, score_line: str | None) -> str:
        lines = [header]
        if self.rejected:
            lines.append("  rejected: " + ", ".join(f"{k}: {v}" for k, v in sorted(self.rejected.items())))
        if score_line:
            lines.append(score_line)
        r = self.run
        lines.append(
            f"  this run: {r.items} LLM requests, {r.cache_hits} cache hits, {r.api_calls} API calls, "
            f"{r.failures} failures, tokens in {r.prompt_tokens:,} / out {r.completion_tokens:,}"
        )
        if self.out is not None:
            lines.append(f"  wrote {self.out}")
        lines += Unfinished({"predictions": self.failed}).lines(
            alternative="or pass --reject-llm-failures to give up on them"
        )
        return "\n".join(lines)


EVAL_CONFIG_FILE = "eval.json"


@locks_work_folder
def run_predictions(
    work_dir: str | Path,
    out: str | Path,
    items: Sequence[Mapping[str, Any]],
    client: LLMClient,
    request_of: Callable[[Mapping[str, Any]], LLMRequest],
    outcome_of: Callable[[Mapping[str, Any], LLMRequest, LLMResult], Outcome],
    *,
    config: Mapping[str, Any],
    step: str = "predictions",
    batch_size: int = DEFAULT_BATCH_SIZE,
    reject_failures: bool = False,
    desc: str = "predict",
) -> tuple[PredictionRun, list[dict[str, Any]]]:
    """Predict every item into ``out`` (written atomically once all have a record); resumable.

    ``config`` names what is evaluated (data, split, style, frames...): with the LLM settings it is
    bound to ``<work>/eval.json``, so one work folder never mixes two evaluations. Returns the run's
    account and the predictions (empty until complete).
    """
    work_dir, out = Path(work_dir), Path(out)
    bind_work_folder(work_dir, {"data": config, "llm": client.settings.cache_identity()}, EVAL_CONFIG_FILE)
    records = StepRecords(work_dir, step)
    before = client.usage.snapshot()
    failures = run_llm_step(
        records, items, client, request_of, outcome_of,
        batch_size=batch_size, reject_failures=reject_failures, desc=desc,
    )  # fmt: skip
    written = None
    if not failures:
        records.finish(item["id"] for item in items)
        write_jsonl_atomic(out, records.kept())
        written = out
    counts = records.counts()
    run = PredictionRun(
        out=written,
        rows=len(items),
        predicted=counts.get(KEPT, 0),
        rejected={k.split(": ", 1)[1]: v for k, v in counts.items() if k != KEPT},
        failed=failures,
        run=client.usage.since(before),
    )
    return run, records.kept() if records.complete else []


def save_run_summary(work_dir: str | Path, run: PredictionRun) -> None:
    """``<work>/summary.json``: the counts and quick scores of the last run."""
    fields_ = {"rows": run.rows, "predicted": run.predicted, "rejected": run.rejected, "failed": run.failed}
    write_json_atomic(Path(work_dir) / "summary.json", {**fields_, "scores": run.scores})
