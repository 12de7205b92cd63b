"""STEP3: drop questions that break the rules, then those an LLM judges unfit.

Rule filter (no LLM, in this order; the first broken rule is the reject reason):

* ``rule_multiline``: the question spans more than one line;
* ``rule_no_question_mark``: it does not end with ``?``;
* ``rule_names_candidate``: it names one of the four candidates, or a form of one
  (:func:`bqa.vocabulary.label_words`: "angry" for Anger, "confused" for Doubt/Confusion), as a
  whole word.

LLM filter (questions that passed the rules): a structured verdict (:class:`BQAFilterVerdict`)
on whether the question is objective, leaks the answer, or is harmful, with a one-sentence reason.
Reject reasons, first that applies: ``llm_harmful``, ``llm_leaks_answer``, ``llm_not_objective``;
the model's reason is kept as the reject's detail. The filter reads the question, the choices and
the answer (it must know the answer to judge a leak), not the frames.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from bqa.vocabulary import label_words
from builders.llm import LLMClient, LLMRequest, LLMResult
from builders.llm.prompts import load_prompt
from builders.runs.llm_step import Outcome, llm_fields, run_llm_step
from builders.runs.steps import REJECTED, StepRecords

STEP = "filter"
PROMPT = "bqa_filter"


RULE_MULTILINE, RULE_NO_QUESTION_MARK, RULE_NAMES_CANDIDATE = (
    "rule_multiline",
    "rule_no_question_mark",
    "rule_names_candidate",
)
LLM_HARMFUL, LLM_LEAKS_ANSWER, LLM_NOT_OBJECTIVE = "llm_harmful", "llm_leaks_answer", "llm_not_objective"


@cache
def _label_pattern(label: str) -> re.Pattern[str]:
    forms = sorted(label_words(label), key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(f) for f in forms) + r")(?!\w)", re.IGNORECASE)


def named_labels(text: str, labels: Sequence[str]) -> list[tuple[str, str]]:
    """``(label, word as written)`` for each of ``labels`` that ``text`` names (:func:`bqa.vocabulary.label_words`)."""
    found = []
    for label in labels:
        match = _label_pattern(label).search(text)
        if match:
            found.append((label, match.group()))
    return found


def rule_violation(question: str, choices: Sequence[str]) -> tuple[str, str] | None:
    """``(reason, detail)`` of the first rule ``question`` breaks, or None when it passes."""
    text = question.strip()
    if "\n" in text or "\r" in text:
        return RULE_MULTILINE, f"the question has {len(text.splitlines())} lines"
    if not text.endswith("?"):
        return RULE_NO_QUESTION_MARK, f"the question ends with {text[-1:]!r}, not '?'"
    named = named_labels(text, choices)
    if named:
        return RULE_NAMES_CANDIDATE, "names " + ", ".join(f"{label} ({word!r})" for label, word in named)
    return None


class BQAFilterVerdict(BaseModel):
    """STEP3's structured verdict (its class name is the response schema's name)."""

    objective: bool = Field(description="answerable from what the clip shows, without opinion")
    leaks_answer: bool = Field(description="the wording gives the correct choice away")
    harmful: bool = Field(description="offensive, demeaning, sexual, violent or stereotyping")
    reason: str = Field(min_length=1, description="one sentence explaining the verdict")

    def reject_reason(self) -> str | None:
        if self.harmful:
            return LLM_HARMFUL
        if self.leaks_answer:
            return LLM_LEAKS_ANSWER
        if not self.objective:
            return LLM_NOT_OBJECTIVE
        return None


def filter_request(item: Mapping[str, Any]) -> LLMRequest:
    """``item``: ``id``, ``question``, ``choices`` and ``answer``. The verdict is bound to the item (it
    names the item's id, checked): a verdict meant for another question is re-asked, never applied."""
    variables = {
        "question": item["question"],
        "choices": ", ".join(item["choices"]),
        "answer": item["answer"],
    }
    return LLMRequest.from_prompt(
        load_prompt(PROMPT), variables, schema=BQAFilterVerdict, item_id=str(item["id"])
    )


def run_filter(
    work_dir: Path,
    items: Sequence[Mapping[str, Any]],
    client: LLMClient | None,
    *,
    ahead: int | None = None,
    reject_failures: bool = False,
) -> dict[str, str]:
    """Run STEP3 over ``items`` (rules first, then the LLM on the rest). Returns ``{id: error}``."""
    records = StepRecords(work_dir, STEP)
    if records.covers(items):
        return {}
    passed = []
    for item in records.pending(items):
        violation = rule_violation(item["question"], item["choices"])
        if violation is None:
            passed.append(item)
        else:
            reason, detail = violation
            records.add(
                {"id": item["id"], "question": item["question"]},
                status=REJECTED,
                reason=reason,
                detail=detail,
            )
    if passed and client is None:
        raise RuntimeError("STEP3 needs an LLM client for the questions that passed the rule filter")

    def outcome(item: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        verdict: BQAFilterVerdict = result.value
        record = {
            "id": item["id"],
            "question": item["question"],
            "verdict": verdict.model_dump(mode="json"),
            **llm_fields(result, request, client),
        }
        reason = verdict.reject_reason()
        if reason is None:
            return Outcome(record)
        return Outcome(record, REJECTED, reason, verdict.reason)

    failures = (
        run_llm_step(
            records,
            passed,
            client,
            filter_request,
            outcome,
            ahead=ahead,
            reject_failures=reject_failures,
            desc="STEP3 filter",
        )  # fmt: skip
        if passed
        else {}
    )
    if not failures:
        records.finish(item["id"] for item in items)
    return failures
