"""Caption engine, stage 1: the captioner drafts one caption from 8 frames sampled in order.

The captioner sees only the frames, never the attributes: the draft is what a model makes of the
video, and the reviewer then measures how far it is from the experts' annotation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from builders.llm import LLMClient, LLMRequest, LLMResult, user_message
from builders.llm.prompts import load_prompt
from builders.pipelines.marinelife.checks import caption_problems
from builders.pipelines.marinelife.outcomes import call_cost
from builders.runs.frames import decode_images
from builders.runs.llm_step import Outcome, run_llm_step
from builders.runs.steps import StepRecords
from builders.video.frame_spec import FrameSpec

STEP = "caption_drafts"
PROMPT_NAME = "marinelife_captioner"
SCHEMA_NAME = "marinelife_caption_draft"
NUM_FRAMES = 8  # the paper's captioner input
MAX_SIDE = 512  # longer side of each frame sent; smaller videos are sent as decoded


class Caption(BaseModel):
    """The reply of the captioner and of the refiner."""

    model_config = ConfigDict(extra="ignore")
    caption: str = Field(min_length=1, description="one English sentence of fewer than 80 words")


def check_caption(value: Caption) -> None:
    """Validator: re-ask when the caption is not one line of fewer than 80 words."""
    problems = caption_problems(value.caption)
    if problems:
        raise ValueError("; ".join(problems))


def frame_spec(num_frames: int = NUM_FRAMES, max_side: int | None = MAX_SIDE) -> FrameSpec:
    """Uniform frames, both ends included (the same sampler and JPEG encoding as the BQA pipeline)."""
    return FrameSpec(fps=None, num_frames=num_frames, max_side=max_side)


def caption_frames(path: str | os.PathLike[str], frames: FrameSpec | None = None) -> list[str]:
    """The captioner's frames of one video, in order, as ``frames`` says (default :func:`frame_spec`):
    JPEG data URLs, or one video URL."""
    return decode_images(path, frames or frame_spec())


def draft_request(frames: Sequence[str], item_id: str) -> LLMRequest:
    """The captioner's request for video ``item_id``: the frames, in order, then the instruction (the
    reply names the video, checked)."""
    prompt = load_prompt(PROMPT_NAME)
    return LLMRequest(
        [user_message(prompt.render(num_frames=len(frames), item_id=item_id), frames)],
        schema=Caption,
        prompt=prompt,
        validator=check_caption,
        schema_name=SCHEMA_NAME,
        item_id=item_id,
    )


def run_drafts(
    work_dir: Path,
    rows: Sequence[Mapping[str, Any]],
    video_root: str | os.PathLike[str],
    client: LLMClient,
    *,
    frames: FrameSpec | None = None,
    ahead: int | None = None,
    reject_failures: bool = False,
) -> dict[str, str]:
    """Draft a caption for each video row; finishes the step when nothing failed. Returns ``{id: error}``.

    Record: ``{"id", "draft_caption", "llm": cost}``; an unreadable video is rejected
    (``video_unreadable``).
    """
    records = StepRecords(work_dir, STEP)

    def request_of(row: Mapping[str, Any]) -> LLMRequest:
        return draft_request(caption_frames(Path(video_root) / row["video_path"], frames), str(row["id"]))

    def outcome(row: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        return Outcome(
            {"id": row["id"], "draft_caption": result.value.caption.strip(), "llm": call_cost(client, result)}
        )

    failures = run_llm_step(
        records, rows, client, request_of, outcome,
        ahead=ahead, reject_failures=reject_failures, desc="caption drafts",
    )  # fmt: skip
    if not failures:
        records.finish(row["id"] for row in rows)
    return failures
