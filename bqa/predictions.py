"""A BQA predictions line: what it copies from its item, and the metric's inputs from such lines.

The evaluation runner writes one line per item (``builders.evaluation.bqa``); the report joins any
predictions file (``id``, ``raw_output``, ``rationale``?) to the split's rows into the same lines;
the demo reads the runner's files. All three score through :func:`accuracy_inputs`, so every BQA
number comes from one mapping of lines to :func:`bqa.accuracy.bqa_accuracy`'s inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from bqa.accuracy import DEMOGRAPHIC_FIELDS


class _Inputs(TypedDict):
    predictions: list[str | None]
    references: list[str]
    choices: list[list[str]]
    difficulty: list[str]
    gender: list[str | int | None]
    age: list[str | int | None]
    ethnicity: list[str | int | None]


class AccuracyInputs(_Inputs, total=False):
    """:func:`bqa.accuracy.bqa_accuracy`'s keyword inputs (``rationales`` only where a line has one)."""

    rationales: list[str | None]


def item_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a predictions line takes from its item (a split row): the item's ``answer`` is
    the line's ``reference``."""
    return {
        "id": row["id"],
        "reference": row["answer"],
        "choices": list(row["choices"]),
        "difficulty": row["difficulty"],
        **{field: row[field] for field in DEMOGRAPHIC_FIELDS},
    }


def accuracy_inputs(lines: Sequence[Mapping[str, Any]]) -> AccuracyInputs:
    """The keyword inputs of ``bqa_accuracy`` (and ``metrics/bqa_accuracy``) from predictions lines
    (``raw_output``, ``rationale``? and :func:`item_fields`); ``rationales`` only when a line has one."""
    inputs: AccuracyInputs = {
        "predictions": [line["raw_output"] for line in lines],
        "references": [line["reference"] for line in lines],
        "choices": [line["choices"] for line in lines],
        "difficulty": [line["difficulty"] for line in lines],
        "gender": [line["gender"] for line in lines],
        "age": [line["age"] for line in lines],
        "ethnicity": [line["ethnicity"] for line in lines],
    }
    rationales = [line.get("rationale") for line in lines]
    if any(r is not None for r in rationales):
        inputs["rationales"] = rationales
    return inputs
