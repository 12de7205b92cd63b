"""Caption engine, stage 3: the refiner rewrites a draft whose S_c is under tau, with the attributes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from builders.llm import LLMClient, LLMRequest, LLMResult, user_message
from builders.llm.prompts import load_prompt
from builders.pipelines.marinelife.captioner import Caption
from builders.pipelines.marinelife.checks import caption_problems
from builders.pipelines.marinelife.outcomes import call_cost
from builders.runs.llm_step import Outcome, run_llm_step
from builders.runs.steps import StepRecords
from builders.scoring.phrases import mentions
from marinelife16k.rubrics import format_attributes

STEP = "caption_refinements"
PROMPT_NAME = "marinelife_refiner"
SCHEMA_NAME = "marinelife_caption_refined"


def refined_validator(central_object: str) -> Callable[[Caption], None]:
    """Re-ask when the rewrite is not one line under 80 words or does not name the central object
    (the least a caption rewritten *with the attributes* must do)."""

    def check(value: Caption) -> None:
        problems = caption_problems(value.caption)
        if not mentions(value.caption, central_object):
            problems.append(f"the caption must name the central object, the {central_object}")
        if problems:
            raise ValueError("; ".join(problems))

    return check


def refine_request(draft: str, score: int, tau: float, attributes: Mapping[str, Any]) -> LLMRequest:
    """The refiner's request: the expert attributes, the draft, its score and the threshold; the reply
    names the video (``attributes["id"]``), checked."""
    prompt = load_prompt(PROMPT_NAME)
    item_id = str(attributes["id"])
    text = prompt.render(
        draft=draft.strip(),
        score=score,
        tau=f"{tau:g}",
        attributes=format_attributes(attributes),
        item_id=item_id,
    )
    return LLMRequest(
        [user_message(text)],
        schema=Caption,
        prompt=prompt,
        validator=refined_validator(str(attributes.get("central_object", "")).strip()),
        schema_name=SCHEMA_NAME,
        item_id=item_id,
    )


def run_refinements(
    work_dir: Path,
    items: Sequence[Mapping[str, Any]],
    client: LLMClient,
    *,
    tau: float,
    ahead: int | None = None,
    reject_failures: bool = False,
) -> dict[str, str]:
    """``items``: video rows with ``draft_caption`` and ``s_c``, all under ``tau``. Record:
    ``{"id", "refined_caption", "llm": cost}``. Finishes the step when nothing failed; returns ``{id: error}``."""
    records = StepRecords(work_dir, STEP)

    def request_of(item: Mapping[str, Any]) -> LLMRequest:
        return refine_request(item["draft_caption"], item["s_c"], tau, item)

    def outcome(item: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        return Outcome(
            {
                "id": item["id"],
                "refined_caption": result.value.caption.strip(),
                "llm": call_cost(client, result),
            }
        )

    failures = run_llm_step(
        records, items, client, request_of, outcome,
        ahead=ahead, reject_failures=reject_failures, desc="caption refinements",
    )  # fmt: skip
    if not failures:
        records.finish(item["id"] for item in items)
    return failures
