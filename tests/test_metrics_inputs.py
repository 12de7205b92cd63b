"""The metric modules take what the datasets give: the whole MarineLife-16K ``qa`` split (open-ended
rows skipped and counted; ``dimension`` or ``type``; ``options`` as stored), BQA replies that are
None and demographics from a pandas DataFrame (NaN = missing); anything else is a clear error."""

from __future__ import annotations

import math

import evaluate
import pandas as pd
import pytest

from builders import metric_path
from marinelife16k.vocabulary import MULTIPLE_CHOICE


@pytest.fixture(scope="module")
def marine_qa(built_samples):
    return built_samples["marinelife16k"].loaded["qa"]["test"]


@pytest.fixture(scope="module")
def marine_metric():
    return evaluate.load(metric_path("marinelife_qa"))


@pytest.fixture(scope="module")
def bqa_metric():
    return evaluate.load(metric_path("bqa_accuracy"))


def _option_text(row) -> str | None:
    """A reply that names the right option by its text only (no letter): what a chatty model says."""
    if row["question_format"] != MULTIPLE_CHOICE:
        return "The camera drifts while a turtle swims past."
    text = next(o["text"] for o in row["options"] if o["label"] == row["answer"])
    return f"I think it is {text.lower()}"


@pytest.mark.parametrize("column", ["dimension", "type"])
def test_marinelife_qa_on_the_whole_qa_split(marine_qa, marine_metric, column):
    rows = marine_qa.to_list()
    n_open = sum(r["question_format"] != MULTIPLE_CHOICE for r in rows)
    assert 0 < n_open < len(rows)  # the split holds both kinds
    result = marine_metric.compute(
        predictions=[_option_text(r) for r in rows],
        references=marine_qa["answer"],
        question_types=marine_qa[column],
        options=marine_qa["options"],
        videos=marine_qa["id"],
    )
    assert result["n_open_ended_skipped"] == n_open
    assert result["n"]["overall"] == len(rows) - n_open
    assert result["overall"] == 100.0 and result["n_unparsed"]["overall"] == 0  # option texts were read
    assert result["ci95_cluster"]["overall"] is None  # every item right: no variance to cluster
    assert result["correct"].count(None) == n_open
    # Without the options the same text replies name no letter: all unparsed (the card says pass them).
    bare = marine_metric.compute(
        predictions=[_option_text(r) for r in rows],
        references=marine_qa["answer"],
        question_types=marine_qa[column],
    )
    assert bare["overall"] == 0.0 and bare["n_unparsed"]["overall"] == len(rows) - n_open


def test_marinelife_qa_open_ended_first_and_no_reply(marine_metric):
    """evaluate itself checks only the first item: a None there was its generic format error."""
    result = marine_metric.compute(
        predictions=[None, None, "B"],
        references=[None, "A", "B"],
        question_types=["OEMU", "PDO", "PDO"],
    )
    assert (result["n_open_ended_skipped"], result["n"]["PDO"], result["PDO"]) == (1, 2, 50.0)
    assert result["parse_reasons"]["empty"] == 1
    with pytest.raises(ValueError, match=r"predictions\[1\]: expected text or None, got 3"):
        marine_metric.compute(predictions=["A", 3], references=["A", "B"], question_types=["PDO", "PDO"])


CHOICES = [
    ["Surprise", "Confidence", "Anger", "Embarrassment"],
    ["Peace", "Excitement", "Anger", "Fatigue"],
    ["Confidence", "Excitement", "Fear", "Sadness"],
    ["Affection", "Pleasure", "Annoyance", "Pain"],
]


def test_bqa_accuracy_takes_none_replies_and_pandas_missing_values(bqa_metric):
    frame = pd.DataFrame(
        {
            "reply": [None, "Anger", "C", None],
            "answer": ["Surprise", "Anger", "Fear", "Pain"],
            "difficulty": ["Easy", "Hard", "Hard", "Easy"],
            "gender": ["Female", None, "Male", "Female"],  # object column: None stays None
            "age": [2, None, 1, 2],  # BoLD codes with a gap: a float column, 2.0 and NaN
        }
    )
    assert math.isnan(frame["age"].tolist()[1])
    result = bqa_metric.compute(
        predictions=frame["reply"].tolist(),
        references=frame["answer"].tolist(),
        choices=CHOICES,
        difficulty=frame["difficulty"].tolist(),
        gender=frame["gender"].tolist(),
        age=frame["age"].tolist(),
    )
    # Hand-worked: replies 2 and 3 are right, 1 and 4 give nothing (unparsed, wrong).
    assert (result["accuracy"], result["n_unparsed"], result["unparsed_indices"]) == (0.5, 2, [0, 3])
    assert result["parse_reasons"]["empty"] == 2
    assert result["by_gender"]["n_missing"] == 1 and result["by_age"]["n_missing"] == 1
    assert sum(g["n"] for g in result["by_age"]["groups"].values()) == 3
    assert result["correct"] == [False, True, True, False]


def test_bqa_accuracy_names_a_reply_that_is_not_text(bqa_metric):
    with pytest.raises(ValueError, match=r"predictions\[1\]: expected text or None, got 2"):
        bqa_metric.compute(
            predictions=["Surprise", 2], references=["Surprise", "Anger"], choices=CHOICES[:2],
            difficulty=["Easy", "Hard"],
        )  # fmt: skip
    with pytest.raises(ValueError, match=r"references\[0\]: expected text, got None"):
        bqa_metric.compute(
            predictions=["Surprise", "B"], references=[None, "Anger"], choices=CHOICES[:2],
            difficulty=["Easy", "Hard"],
        )  # fmt: skip
