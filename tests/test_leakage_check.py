"""The CoT leakage check sees the forms rationales give the answer in (issue 37, item 8): a letter
("The correct option is (C)."), and the stage-1 prompt's own form, which names every option ("...
shows Happiness; Anticipation, Disconnection and Disapproval fit less well"). The old check counted
only rationales naming the correct label and no other choice: 0% on both, accuracy 1.00, and the
report called "accuracy without those items 1.000" the fairer comparison."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bqa.accuracy import bqa_accuracy
from builders.report.bqa_report import _leakage_section

CHOICES = ["Anticipation", "Happiness", "Disconnection", "Disapproval"]  # Happiness is B, the answer


def leakage(rationales: list[str]):
    n = len(rationales)
    return bqa_accuracy(
        predictions=["Happiness"] * n, references=["Happiness"] * n, choices=[CHOICES] * n,
        difficulty=["Easy"] * n, rationales=rationales,
    ).leakage  # fmt: skip


@pytest.mark.parametrize(
    "rationale",
    [
        "The correct option is (B).",
        "The raised arms and the wide smile point to answer B.",
        "The person's open posture and smile show Happiness; Anticipation, Disconnection and Disapproval fit "
        "less well.",
        "His relaxed stance shows Happiness. Anticipation does not fit, and neither Disconnection nor "
        "Disapproval is visible.",
        "Happiness rather than Disapproval or Anticipation.",
    ],
)
def test_rationales_that_give_the_answer_away_leak(rationale):
    assert leakage([rationale]).leaking_indices == [0]


@pytest.mark.parametrize(
    "rationale",
    [
        "The shoulders are raised and the hands stay close to the body.",  # no option at all
        "The slumped posture shows Disconnection, not Happiness.",  # points to another option
        "The correct option is (C).",  # another option's letter
    ],
)
def test_rationales_that_do_not_point_to_the_answer_do_not_leak(rationale):
    found = leakage([rationale])
    assert found.leaking_indices == [] and found.undetermined_indices == []


def test_a_rationale_pointing_to_the_answer_and_another_is_undetermined_and_no_fairer_claim_is_made():
    found = leakage(["It could be Happiness or Anticipation.", "Happiness, clearly."])
    assert (found.leaking_indices, found.undetermined_indices) == ([1], [0])
    section = _leakage_section({"m": _model(found)})
    assert section is not None
    text = "\n".join(str(part) for part in section.body)
    assert "is the fairer comparison" not in text and "no fairer comparison" in text
    assert "1 (50.0%)" in text  # the undetermined rationales are counted, not hidden


def test_the_fairer_comparison_is_claimed_only_where_the_check_sees_every_rationale():
    section = _leakage_section({"m": _model(leakage(["Happiness, clearly.", "Anticipation, clearly."]))})
    assert section is not None
    assert "is the fairer comparison" in "\n".join(str(part) for part in section.body)


def _model(found):
    """A model's result carrying ``found`` (the section reads only its leakage)."""
    return replace(bqa_accuracy(predictions=["Happiness"], references=["Happiness"], choices=[CHOICES],
                                difficulty=["Easy"]), leakage=found)  # fmt: skip
