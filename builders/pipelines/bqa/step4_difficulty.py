"""STEP4: the LLM answers each kept question from the frames; right is Easy, wrong is Hard.

It is the evaluation runner's act (:mod:`builders.evaluation.bqa_answers`, single-word style). A
reply that names no choice, or two, is not a wrong answer: the item is rejected with reason
``step4_unparsed`` and difficulty ``unparsed`` in the rejects file, with the reply as detail. It is
not re-asked: the reply is a valid (cached) answer of the model, so a rerun does not pay for it again,
and forcing a choice out of a model that declined would label the item on a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from builders.evaluation.bqa_answers import answer_request, read_answer
from builders.llm import LLMClient, LLMRequest, LLMResult
from builders.runs.frames import FrameImages, Images, frames_dir
from builders.runs.llm_step import Outcome, llm_fields, run_llm_step
from builders.runs.steps import REJECTED, StepRecords
from builders.video.frame_spec import FrameSpec

STEP = "difficulty"
STYLE = "single_word"
EASY, HARD, UNPARSED_DIFFICULTY = "Easy", "Hard", "unparsed"
STEP4_UNPARSED = "step4_unparsed"


def difficulty_of(answer: str | None, correct: str) -> str:
    """Easy when the model chose the correct label, Hard for another choice, ``unparsed`` for none."""
    if answer is None:
        return UNPARSED_DIFFICULTY
    return EASY if answer == correct else HARD


def run_difficulty(
    work_dir: Path,
    items: Sequence[Mapping[str, Any]],
    client: LLMClient,
    frames: FrameSpec,
    *,
    ahead: int | None = None,
    reject_failures: bool = False,
    images_of: Images | None = None,
) -> dict[str, str]:
    """``items``: ``id``, ``clip``, ``question``, ``choices``, ``answer``. Returns ``{id: error}``.
    ``images_of``: default, the frames STEP2 left in ``<work>/frames`` (decoded if missing)."""
    images_of = images_of or FrameImages(frames_dir(work_dir))
    records = StepRecords(work_dir, STEP)
    if records.covers(items):
        return {}

    def request_of(item: Mapping[str, Any]) -> LLMRequest:
        clip = Path(work_dir) / item["clip"]
        return answer_request(item["question"], item["choices"], clip, frames, STYLE, images_of=images_of)

    def outcome(item: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        read = read_answer(result.value, item["choices"], STYLE)
        difficulty = difficulty_of(read.answer, item["answer"])
        record = {
            "id": item["id"],
            "difficulty": difficulty,
            "reply": result.value,
            "parsed": read.parsed,
            **llm_fields(result, request, client),
        }
        if difficulty == UNPARSED_DIFFICULTY:
            return Outcome(
                record,
                REJECTED,
                STEP4_UNPARSED,
                f"the reply names none of the choices: {result.value[:200]!r}",
            )
        return Outcome(record)

    failures = run_llm_step(
        records, items, client, request_of, outcome,
        ahead=ahead, reject_failures=reject_failures, desc="STEP4 difficulty",
    )  # fmt: skip
    if not failures:
        records.finish(item["id"] for item in items)
    return failures
