"""A MarineLife-16K predictions line: what it copies from its QA record, and the accuracy metric's
inputs from such lines.

The evaluation runner writes one line per question (``builders.evaluation.marinelife``); the report
joins any predictions file (``question_id``, ``raw_output``) to the split's records into the same
lines (and :func:`joined_lines` joins any file to the split for ``marinelife judge --data``); the
demo reads the runner's files. All three score through :func:`accuracy_inputs`, so every
multiple-choice number comes from one mapping of lines to
:func:`marinelife16k.accuracy.marinelife_accuracy`'s inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from marinelife16k.vocabulary import DIMENSION_OF_TYPE, MULTIPLE_CHOICE


class AccuracyInputs(TypedDict):
    """:func:`marinelife16k.accuracy.marinelife_accuracy`'s keyword inputs."""

    predictions: list[str | None]
    references: list[str]
    question_types: list[str]
    options: list[list[str]]


def item_fields(record: Mapping[str, Any], video: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a predictions line takes from its QA record and the record's video row."""
    mcq = record["question_format"] == MULTIPLE_CHOICE
    return {
        "id": record["question_id"],  # the runner's item key (builders.runs.steps)
        "question_id": record["question_id"],
        "video": record["id"],
        "type": record["type"],
        "dimension": DIMENSION_OF_TYPE[record["type"]],
        "question_format": record["question_format"],
        "camera_kind": video["camera_kind"],
        "question": record["question"],
        "options": [o["text"] for o in record["options"]],
        "reference": record["answer"] if mcq else record["answer_text"],
        "evidence": dict(record["evidence_attributes"]),
    }


def joined_lines(
    records: Sequence[Mapping[str, Any]],
    videos: Mapping[str, Mapping[str, Any]],
    replies: Mapping[str, str | None],
) -> list[dict[str, Any]]:
    """Predictions lines for the ``records`` (QA records, in split order) that have a reply in
    ``replies`` (question id -> raw reply): the item's fields from the dataset joined to the reply,
    so a file holding only ``question_id`` and ``raw_output`` scores and judges like a runner's."""
    return [
        {**item_fields(r, videos[r["id"]]), "raw_output": replies[r["question_id"]]}
        for r in records
        if r["question_id"] in replies
    ]


def accuracy_inputs(lines: Sequence[Mapping[str, Any]]) -> AccuracyInputs:
    """The keyword inputs of ``marinelife_accuracy`` (and ``metrics/marinelife_qa``) from the
    multiple-choice lines among ``lines`` (open-ended ones are the judge's)."""
    mcq = [line for line in lines if line["question_format"] == MULTIPLE_CHOICE]
    return {
        "predictions": [line["raw_output"] for line in mcq],
        "references": [line["reference"] for line in mcq],
        "question_types": [line["type"] for line in mcq],
        "options": [line["options"] for line in mcq],
    }
