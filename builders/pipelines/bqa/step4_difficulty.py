"""STEP4: the LLM answers each kept question from the frames: Easy when it could answer, Hard if not.

It is the evaluation runner's act (:mod:`builders.evaluation.bqa_answers`, single-word style). As the
paper labels it, a question is Easy when the model chose the correct answer and Hard when it could
not answer it: it chose another choice (``wrong_choice``), named none (``no_answer``), or named two
or more (``ambiguous``), or the provider's safety filter stopped its reply (``blocked``: it did not
answer either). The reason is recorded per item (``difficulty_reason``, a column of the
release) and counted in the build summary and the card. Such a reply is not re-asked: it is a valid
(cached) answer of the model, and forcing a choice out of a model that declined would label the
item on a guess.

``unanswered="drop"`` keeps the behaviour of earlier releases (not the paper's): a reply naming no
choice, or two, rejects the item (reason ``step4_unparsed``), a blocked one is rejected (``blocked``),
and it leaves the release.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bqa.vocabulary import (
    AMBIGUOUS_ANSWER,
    BLOCKED_ANSWER,
    DIFFICULTY_REASONS,
    NO_ANSWER,
    RIGHT_CHOICE,
    WRONG_CHOICE,
)
from builders.evaluation.bqa_answers import ReadAnswer, answer_request, read_answer
from builders.llm import LLMClient, LLMRequest, LLMResult
from builders.runs.frames import FrameImages, Images, frames_dir
from builders.runs.llm_step import Outcome, llm_fields, run_llm_step
from builders.runs.steps import REJECTED, StepRecords
from builders.scoring.answer_parsing import AMBIGUOUS
from builders.video.frame_spec import FrameSpec

STEP = "difficulty"
STYLE = "single_word"
STEP4_UNPARSED = "step4_unparsed"
#: What STEP4 does with a reply that answers no choice, or two: the paper's Hard, or the old drop.
HARD, DROP = "hard", "drop"
UNANSWERED: tuple[str, ...] = (HARD, DROP)


def difficulty_of(read: ReadAnswer, correct: str) -> tuple[str, str]:
    """``(difficulty, reason)`` of one STEP4 answer (:data:`bqa.vocabulary.DIFFICULTY_REASONS`)."""
    if read.answer is None:
        reason = AMBIGUOUS_ANSWER if read.reason == AMBIGUOUS else NO_ANSWER
    else:
        reason = RIGHT_CHOICE if read.answer == correct else WRONG_CHOICE
    return DIFFICULTY_REASONS[reason], reason


def run_difficulty(
    work_dir: Path,
    items: Sequence[Mapping[str, Any]],
    client: LLMClient,
    frames: FrameSpec,
    *,
    ahead: int | None = None,
    reject_failures: bool = False,
    images_of: Images | None = None,
    unanswered: str = HARD,
) -> dict[str, str]:
    """``items``: ``id``, ``clip``, ``question``, ``choices``, ``answer``. Returns ``{id: error}``.
    ``images_of``: default, the frames STEP2 left in ``<work>/frames`` (decoded if missing).
    ``unanswered``: ``hard`` (the paper) or ``drop`` (reject, the old behaviour)."""
    if unanswered not in UNANSWERED:
        raise ValueError(f"unanswered must be one of {list(UNANSWERED)}, got {unanswered!r}")
    images_of = images_of or FrameImages(frames_dir(work_dir))
    records = StepRecords(work_dir, STEP)
    if records.covers(items):
        return {}

    def request_of(item: Mapping[str, Any]) -> LLMRequest:
        clip = Path(work_dir) / item["clip"]
        return answer_request(item["question"], item["choices"], clip, frames, STYLE, images_of=images_of)

    def outcome(item: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        read = read_answer(result.value, item["choices"], STYLE)
        difficulty, reason = difficulty_of(read, item["answer"])
        record = {
            "id": item["id"],
            "difficulty": difficulty,
            "difficulty_reason": reason,
            "reply": result.value,
            "parsed": read.parsed,
            "parse_reason": read.reason,
            **llm_fields(result, request, client),
        }
        if unanswered == DROP and reason in (NO_ANSWER, AMBIGUOUS_ANSWER):
            detail = (
                f"the reply names {'two or more' if reason == AMBIGUOUS_ANSWER else 'none'} of the choices"
            )
            return Outcome({**record, "difficulty": "unparsed"}, REJECTED, STEP4_UNPARSED,
                           f"{detail}: {result.value[:200]!r}")  # fmt: skip
        return Outcome(record)

    def blocked(item: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        """The paper's Hard: the model "could not answer" (its reply was stopped); asked once, not re-asked."""
        return Outcome({"id": item["id"], "difficulty": DIFFICULTY_REASONS[BLOCKED_ANSWER],
                        "difficulty_reason": BLOCKED_ANSWER, "reply": result.raw, "parsed": None,
                        "blocked": result.blocked,
                        **llm_fields(result, request, client)})  # fmt: skip

    failures = run_llm_step(
        records, items, client, request_of, outcome,
        ahead=ahead, reject_failures=reject_failures, desc="STEP4 difficulty",
        on_blocked=blocked if unanswered == HARD else None,
    )  # fmt: skip
    if not failures:
        records.finish(item["id"] for item in items)
    return failures
