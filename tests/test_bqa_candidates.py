"""STEP1 invariants over many rows and seeds, reproducibility, tie-breaking and refused rows."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from bqa.candidates import CandidateError, extract_candidates, top_emotion
from bqa.vocabulary import DEFAULT_GROUP_MAPPING, EMOTION_GROUPS, EMOTIONS, GROUP_NAMES, GroupMapping


def _random_scores(rng: np.random.Generator) -> dict[str, float]:
    # Coarse values (like averages of a few annotators) so that ties happen often.
    values = rng.integers(0, 7, size=len(EMOTIONS)) / 6
    values[rng.integers(len(EMOTIONS))] += 1 / 6  # at least one positive score
    return dict(zip(EMOTIONS, values.tolist(), strict=True))


def test_invariants_over_many_rows_and_seeds():
    rng = np.random.default_rng(0)
    group_of = {label: group for group, labels in EMOTION_GROUPS.items() for label in labels}
    refused = 0
    positions = Counter()
    for row in range(400):
        scores = _random_scores(rng)
        vector = np.array([scores[e] for e in EMOTIONS])
        expected_answer = EMOTIONS[int(np.argmax(vector))]  # numpy: first maximum = BoLD order
        for seed in range(10):
            try:
                c = extract_candidates(scores, key=f"row{row}", seed=seed)
            except CandidateError:
                # Only allowed when some other group has every label tied with the top score.
                top = vector.max()
                assert any(
                    all(scores[label] == top for label in labels)
                    for group, labels in EMOTION_GROUPS.items()
                    if group != group_of[expected_answer]
                )
                refused += 1
                continue
            assert c.answer == expected_answer
            assert c.answer_group == group_of[c.answer]
            assert len(c.choices) == 4 and len(set(c.choices)) == 4
            assert c.answer in c.choices
            assert c.choice_groups == tuple(group_of[label] for label in c.choices)
            assert sorted(c.choice_groups) == sorted(GROUP_NAMES)  # one choice per group
            for label in c.choices:
                if label != c.answer:
                    assert scores[label] < scores[c.answer]
            positions[c.choices.index(c.answer)] += 1
    assert refused < 40
    # The shuffle puts the answer everywhere, roughly evenly (3,600+ draws, 4 positions).
    assert set(positions) == {0, 1, 2, 3}
    assert min(positions.values()) > 0.2 * sum(positions.values())


def test_reproducible_per_row_and_independent_of_other_rows():
    rng = np.random.default_rng(1)
    rows = {f"id{i}": _random_scores(rng) for i in range(50)}
    first = {k: extract_candidates(v, key=k, seed=7) for k, v in rows.items()}
    again = {k: extract_candidates(rows[k], key=k, seed=7) for k in reversed(list(rows))}
    assert first == again
    other_seed = {k: extract_candidates(v, key=k, seed=8) for k, v in rows.items()}
    assert sum(first[k].choices != other_seed[k].choices for k in rows) > 25
    # Same scores, different rows: draws differ between keys.
    same = rows["id0"]
    draws = {extract_candidates(same, key=f"k{i}", seed=7).choices for i in range(30)}
    assert len(draws) > 10


def test_ties_go_to_the_first_label_in_bold_order():
    scores = dict.fromkeys(EMOTIONS, 0.1)
    scores["Fatigue"] = scores["Surprise"] = 0.8  # Surprise (column 10) comes before Fatigue (14)
    assert top_emotion(scores) == "Surprise"
    c = extract_candidates(scores, key="tie", seed=0)
    assert c.answer == "Surprise" and c.answer_group == "Pleasure"
    assert "Fatigue" not in c.choices  # a tied label would be a second right answer
    # Dict order does not matter.
    assert top_emotion(dict(reversed(list(scores.items())))) == "Surprise"


def test_rows_without_a_clear_question_are_refused():
    with pytest.raises(CandidateError, match="no emotion has a positive score"):
        extract_candidates(dict.fromkeys(EMOTIONS, 0.0), key="zeros", seed=0)
    scores = dict.fromkeys(EMOTIONS, 0.1)
    for label in EMOTION_GROUPS["Anger"]:
        scores[label] = 0.9
    scores["Peace"] = 0.9  # Peace comes first: the answer is from Happiness, all of Anger ties
    with pytest.raises(
        CandidateError, match="every emotion of group 'Anger' scores as high as the answer 'Peace'"
    ):
        extract_candidates(scores, key="tied-group", seed=0)
    with pytest.raises(ValueError, match="scores missing"):
        top_emotion({"Peace": 1.0})


def test_mapping_with_more_groups_still_gives_four_choices_from_distinct_groups():
    groups = dict(EMOTION_GROUPS)
    groups["Calm"] = ("Peace", "Sympathy")
    groups["Happiness"] = tuple(e for e in EMOTION_GROUPS["Happiness"] if e not in groups["Calm"])
    mapping = GroupMapping("five", groups)
    rng = np.random.default_rng(2)
    used_groups = Counter()
    for i in range(200):
        c = extract_candidates(_random_scores(rng) | {"Anger": 2.0}, key=str(i), seed=0, mapping=mapping)
        assert c.answer == "Anger"
        assert len(set(c.choice_groups)) == 4 and c.choice_groups == tuple(
            mapping.group_of[x] for x in c.choices
        )
        used_groups.update(g for g in c.choice_groups if g != "Anger")
    assert set(used_groups) == set(groups) - {"Anger"}  # each other group gets drawn sometimes
    assert DEFAULT_GROUP_MAPPING.group_names == GROUP_NAMES
