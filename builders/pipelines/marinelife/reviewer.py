"""Caption engine, stage 2: the reviewer scores each draft against the 13 attributes (S_c, 0-5).

The reviewer *is* the judge rubric ``marinelife_caption_review`` (:mod:`marinelife16k.rubrics`):
one prompt, one reply schema and one scale for it wherever it is used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from builders.llm import LLMClient, LLMRequest, LLMResult
from builders.pipelines.marinelife.outcomes import call_cost
from builders.runs.llm_step import Outcome, run_llm_step
from builders.runs.steps import StepRecords
from marinelife16k.rubrics import MarineLifeCaptionReview
from marinelife16k.vocabulary import ATTRIBUTES

STEP = "caption_reviews"
CRITERION = "alignment"


@cache
def review_rubric() -> MarineLifeCaptionReview:
    return MarineLifeCaptionReview()


def review_request(draft: str, attributes: Mapping[str, Any], item_id: str) -> LLMRequest:
    """The reviewer's request for one draft (text only: the reviewer sees no frames), bound to the
    video's ``item_id``."""
    reference = {name: attributes.get(name, "") for name in ATTRIBUTES}
    return review_rubric().request(prediction=draft, reference=reference, item_id=item_id)


def review_score(value: Any) -> tuple[int, str]:
    """S_c (an integer 0-5) and the reviewer's justification, from a validated reply."""
    rubric = review_rubric()
    return int(rubric.score(value)["criteria"][CRITERION]), rubric.explanations(value).get(
        "justification", ""
    )


def run_reviews(
    work_dir: Path,
    items: Sequence[Mapping[str, Any]],
    client: LLMClient,
    *,
    ahead: int | None = None,
    reject_failures: bool = False,
) -> dict[str, str]:
    """``items``: video rows with their ``draft_caption``. Record: ``{"id", "s_c", "review_justification",
    "llm": cost}``. Finishes the step when nothing failed; returns ``{id: error}``."""
    records = StepRecords(work_dir, STEP)

    def outcome(item: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        score, justification = review_score(result.value)
        return Outcome(
            {
                "id": item["id"],
                "s_c": score,
                "review_justification": justification,
                "llm": call_cost(client, result),
            }
        )

    failures = run_llm_step(
        records, items, client, lambda item: review_request(item["draft_caption"], item, str(item["id"])), outcome,
        ahead=ahead, reject_failures=reject_failures, desc="caption reviews",
    )  # fmt: skip
    if not failures:
        records.finish(item["id"] for item in items)
    return failures
