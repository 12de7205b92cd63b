"""The caption engine: captioner -> reviewer (S_c) -> refiner when S_c < tau (the paper's data engine).

Three resumable steps (``caption_drafts``, ``caption_reviews``, ``caption_refinements``), each run
over all pending videos before the next starts, then one merged record per video in
``<work>/steps/captions.jsonl`` that keeps every stage::

    {"id", "video_id", "draft_caption", "s_c", "review_justification", "tau",
     "path": "kept" | "refined", "refined_caption" (None when kept), "final_caption",
     "llm": {"draft": cost, "review": cost, "refine": cost | None}}

(cost: :func:`~builders.pipelines.marinelife.outcomes.call_cost`). A draft with S_c >= tau is kept
as the final caption; below tau the refiner's rewrite is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.files.jsonio import read_jsonl, write_jsonl_atomic
from builders.llm import LLMClient
from builders.pipelines.marinelife import captioner, refiner, reviewer
from builders.pipelines.marinelife.outcomes import Failure
from builders.runs.steps import StepRecords
from builders.video.frame_spec import FrameSpec

TAU = 3.5  # the paper's threshold
KEPT, REFINED = "kept", "refined"
CAPTIONS_FILE = "captions.jsonl"
CAPTION_STEPS: tuple[str, ...] = (captioner.STEP, reviewer.STEP, refiner.STEP)


@dataclass(frozen=True)
class CaptionSettings:
    """``tau``: refine below this S_c; ``frames``: what the captioner sees of each video."""

    tau: float = TAU
    frames: FrameSpec = field(default_factory=captioner.frame_spec)

    def __post_init__(self) -> None:
        if not 0 <= self.tau <= 5:
            raise ValueError(f"tau must lie on the reviewer's scale 0-5, got {self.tau}")


def captions_path(work_dir: str | os.PathLike[str]) -> Path:
    return Path(work_dir) / "steps" / CAPTIONS_FILE


def _failures(step: str, failed: Mapping[str, str]) -> list[Failure]:
    return [Failure(item_id, step, error) for item_id, error in failed.items()]


def _kept(work_dir: Path, step: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in StepRecords(work_dir, step).kept()}


def run_caption_engine(
    work_dir: str | os.PathLike[str],
    rows: Sequence[Mapping[str, Any]],
    video_root: str | os.PathLike[str],
    client: LLMClient,
    settings: CaptionSettings = CaptionSettings(),
    *,
    ahead: int | None = None,
    reject_failures: bool = False,
) -> list[Failure]:
    """Run (or resume) the three caption steps over ``rows``; on success write the merged records.

    Stops at the first step with failed calls (they stay pending) and returns them; an empty list
    means ``captions.jsonl`` is written. Videos rejected by a step (unreadable, or ``llm_failure``
    with ``reject_failures``) have no caption and drop out.
    """
    work = Path(work_dir)
    failed = captioner.run_drafts(
        work, rows, video_root, client, frames=settings.frames,
        ahead=ahead, reject_failures=reject_failures,
    )  # fmt: skip
    if failed:
        return _failures(captioner.STEP, failed)
    drafts = _kept(work, captioner.STEP)
    drafted = [
        {**row, "draft_caption": drafts[row["id"]]["draft_caption"]} for row in rows if row["id"] in drafts
    ]

    failed = reviewer.run_reviews(work, drafted, client, ahead=ahead, reject_failures=reject_failures)
    if failed:
        return _failures(reviewer.STEP, failed)
    reviews = _kept(work, reviewer.STEP)
    reviewed = [{**item, "s_c": reviews[item["id"]]["s_c"]} for item in drafted if item["id"] in reviews]

    low = [item for item in reviewed if item["s_c"] < settings.tau]
    failed = refiner.run_refinements(
        work, low, client, tau=settings.tau, ahead=ahead, reject_failures=reject_failures
    )
    if failed:
        return _failures(refiner.STEP, failed)
    refinements = _kept(work, refiner.STEP)

    merged = []
    for item in reviewed:
        key = item["id"]
        refined = refinements.get(key)
        if item["s_c"] < settings.tau and refined is None:
            continue  # its refinement was rejected: no final caption
        draft = drafts[key]["draft_caption"]
        merged.append(
            {
                "id": key,
                "video_id": item["video_id"],
                "draft_caption": draft,
                "s_c": item["s_c"],
                "review_justification": reviews[key]["review_justification"],
                "tau": settings.tau,
                "path": REFINED if refined is not None else KEPT,
                "refined_caption": refined["refined_caption"] if refined is not None else None,
                "final_caption": refined["refined_caption"] if refined is not None else draft,
                "llm": {
                    "draft": drafts[key]["llm"],
                    "review": reviews[key]["llm"],
                    "refine": refined["llm"] if refined is not None else None,
                },
            }
        )
    write_jsonl_atomic(captions_path(work), merged)
    return []


def read_captions(work_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The merged caption records of a finished caption engine run."""
    path = captions_path(work_dir)
    if not path.is_file():
        raise FileNotFoundError(f"the caption engine has not finished in {work_dir}: {path} is missing")
    return read_jsonl(path)
