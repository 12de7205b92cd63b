"""STEP2: an LLM writes one question from the clip's frames and the four candidate emotions.

The model is not told which candidate is the answer (so it cannot give it away); whether the
question still leaks, names a candidate or breaks the format is STEP3's job, which rejects it with
a reason instead of having the model re-asked here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from builders.llm import LLMClient, LLMRequest, LLMResult
from builders.llm.prompts import load_prompt
from builders.runs.frames import FrameImages, Images, decode_images, frames_dir
from builders.runs.llm_step import Outcome, llm_fields, run_llm_step
from builders.runs.steps import StepRecords
from builders.video.frame_spec import FrameSpec

STEP = "questions"
PROMPT = "bqa_question"
OUTPUT_TOKENS = 30  # {"question": "..."}: one short question, for cost estimates


class BQAQuestion(BaseModel):
    """STEP2's structured reply (its class name is the response schema's name)."""

    question: str = Field(min_length=1, description="one question about the person's emotion")


def question_request(
    item: Mapping[str, Any], work_dir: Path, frames: FrameSpec, images_of: Images = decode_images
) -> LLMRequest:
    """``item``: ``id``, ``clip`` (relative to ``work_dir``) and ``choices`` (the four candidates, as shown)."""
    images = images_of(Path(work_dir) / item["clip"], frames)
    variables = {
        "frame_description": frames.describe(frames.frame_count(images)),
        "candidates": ", ".join(item["choices"]),
    }
    request = LLMRequest.from_prompt(
        load_prompt(PROMPT), variables, images=images, schema=BQAQuestion, item_id=str(item["id"])
    )
    return replace(request, output_tokens=OUTPUT_TOKENS)


def run_questions(
    work_dir: Path,
    items: Sequence[Mapping[str, Any]],
    client: LLMClient,
    frames: FrameSpec,
    *,
    ahead: int | None = None,
    reject_failures: bool = False,
    images_of: Images | None = None,
) -> dict[str, str]:
    """Run STEP2 over ``items``; finishes the step when nothing failed. Returns ``{id: error}``.
    ``images_of``: default, frames decoded once into ``<work>/frames`` (STEP4 reuses them)."""
    images_of = images_of or FrameImages(frames_dir(work_dir))
    records = StepRecords(work_dir, STEP)
    if records.covers(items):
        return {}

    def outcome(item: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        question = result.value.question.strip()
        return Outcome({"id": item["id"], "question": question, **llm_fields(result, request, client)})

    failures = run_llm_step(
        records, items, client, lambda item: question_request(item, work_dir, frames, images_of), outcome,
        ahead=ahead, reject_failures=reject_failures, desc="STEP2 questions",
    )  # fmt: skip
    if not failures:
        records.finish(item["id"] for item in items)
    return failures
