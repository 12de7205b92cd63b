"""BQA accuracy on a hand-worked set of eight items: every output key, then malformed input."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from bqa.accuracy import BQAAccuracy, bqa_accuracy, error_breakdown
from bqa.vocabulary import DEFAULT_GROUP_MAPPING, EMOTION_GROUPS, GroupMapping

# (choices, reference, difficulty, reply, gender, age, ethnicity, rationale)
ITEMS = [
    (["Surprise", "Confidence", "Anger", "Embarrassment"], "Surprise", "Easy", "Surprise",
     "Male", "Adult", "White", "He jumps back, which shows Surprise."),
    (["Peace", "Excitement", "Anger", "Fatigue"], "Anger", "Hard", "The answer is B.",
     "Female", "Adult", "White", "Not Peace: his fists show Anger."),
    (["Happiness", "Anticipation", "Fear", "Sadness"], "Happiness", "Hard", "He looks down. Sadness.",
     "Male", "Kid", "Asian", None),
    (["Affection", "Pleasure", "Annoyance", "Pain"], "Pain", "Easy", "Pain or Annoyance",
     "Female", "Teenager", "Asian", ""),
    (["Esteem", "Engagement", "Disapproval", "Doubt/Confusion"], "Doubt/Confusion", "Easy", "D",
     "Male", "Adult", "Black or African American", "The head tilt suggests Doubt/Confusion."),
    (["Sympathy", "Surprise", "Aversion", "Yearning"], "Sympathy", "Hard", "I think it's Happiness.",
     None, "Adult", "White", "Sympathy."),
    (["Confidence", "Excitement", "Fear", "Sadness"], "Fear", "Hard", "**Answer:** C",
     "Female", "Adult", "White", "Fear, not Sadness."),
    (["Affection", "Anticipation", "Annoyance", "Suffering"], "Annoyance", "Easy",
     "A man is walking away. The answer is C.", "Male", "Adult", "White", None),
]  # fmt: skip
COLUMNS = dict(
    zip(
        ["choices", "references", "difficulty", "predictions", "gender", "age", "ethnicity", "rationales"],
        map(list, zip(*ITEMS, strict=True)),
        strict=True,
    )
)


def run(**overrides):
    kwargs = {**COLUMNS, **overrides}
    return bqa_accuracy(**kwargs).to_dict()


def wilson(k, n):
    ci = stats.binomtest(k, n).proportion_ci(method="wilson")
    return pytest.approx([ci.low, ci.high], abs=1e-12)


def test_accuracy_counts_and_intervals():
    # Right: items 0, 4, 6, 7. Easy = 0, 3, 4, 7 (3 right); Hard = 1, 2, 5, 6 (1 right).
    # Unparsed: 3 (two choices, no declaration) and 5 (names no choice).
    r = run()
    assert (r["accuracy"], r["accuracy_easy"], r["accuracy_hard"]) == (0.5, 0.75, 0.25)
    assert r["accuracy_ci95"] == wilson(4, 8)
    assert r["accuracy_easy_ci95"] == wilson(3, 4)
    assert r["accuracy_hard_ci95"] == wilson(1, 4)
    assert (r["n"], r["n_easy"], r["n_hard"]) == (8, 4, 4)
    assert (r["n_unparsed"], r["unparsed_indices"]) == (2, [3, 5])
    assert r["group_mapping"] == DEFAULT_GROUP_MAPPING.name
    assert r["answer_parser"] == "vqabench-choice@4|aliases:bqa-labels-v1"
    # 0, 2: the one option named; 4: a letter; 1, 6, 7: declared; 3: two options; 5: "Happiness"
    # is no choice of the item.
    assert {k: v for k, v in r["parse_reasons"].items() if v} == {
        "option_text": 2,
        "letter": 1,
        "declared": 3,
        "ambiguous": 1,
        "no_option": 1,
    }


def test_label_aliases_score_a_part_of_the_label_right():
    """ "Confusion" names Doubt/Confusion; "sad" (not a choice) still goes to Sadness's group."""
    r = run(predictions=[*COLUMNS["predictions"][:4], "Confusion", "He is sad.", *COLUMNS["predictions"][6:]])
    assert r["accuracy"] == 0.5 and r["unparsed_indices"] == [3, 5]
    assert r["confusion"]["Happiness"]["Sadness"] == 2  # items 2 and 5


def test_confusion_of_wrong_answers():
    # 1: Anger -> Excitement (Pleasure); 2: Happiness -> Sadness; 3: Pain, no single answer -> Others;
    # 5: Sympathy -> "Happiness", not a choice but an emotion -> its own group.
    confusion = run()["confusion"]
    assert list(confusion) == ["Happiness", "Pleasure", "Anger", "Sadness"]
    nonzero = {(t, p): c for t, row in confusion.items() for p, c in row.items() if c}
    assert nonzero == {
        ("Anger", "Pleasure"): 1,
        ("Happiness", "Sadness"): 1,
        ("Sadness", "Others"): 1,
        ("Happiness", "Happiness"): 1,
    }
    assert all(
        list(row) == ["Happiness", "Pleasure", "Anger", "Sadness", "Others"] for row in confusion.values()
    )


def test_demographic_breakdowns():
    r = run()
    gender = r["by_gender"]
    assert {g: (v["n"], v["errors"]) for g, v in gender["groups"].items()} == {
        "Male": (4, 1),
        "Female": (3, 2),
    }
    assert gender["groups"]["Female"]["error_rate"] == pytest.approx(2 / 3)
    assert gender["groups"]["Female"]["error_rate_ci95"] == wilson(2, 3)
    assert gender["n_missing"] == 1
    d = gender["disparity"]
    ref = stats.chi2_contingency([[1, 3], [2, 1]], correction=False)
    assert (d["highest"], d["lowest"]) == ("Female", "Male")
    assert d["max_gap"] == pytest.approx(2 / 3 - 1 / 4)
    assert d["chi2"] == pytest.approx(ref.statistic) and d["dof"] == 1
    assert d["p_value"] == pytest.approx(ref.pvalue)
    assert d["small_groups"] == ["Male", "Female"] and "too small" in d["warning"]

    age = r["by_age"]
    assert list(age["groups"]) == ["Kid", "Teenager", "Adult"]  # vocabulary order
    assert {g: (v["n"], v["errors"]) for g, v in age["groups"].items()} == {
        "Kid": (1, 1),
        "Teenager": (1, 1),
        "Adult": (6, 2),
    }
    assert (age["disparity"]["highest"], age["disparity"]["lowest"]) == ("Kid", "Adult")
    assert age["disparity"]["max_gap"] == pytest.approx(1 - 2 / 6)
    assert age["disparity"]["dof"] == 2

    eth = r["by_ethnicity"]["groups"]
    assert {g: (v["n"], v["errors"]) for g, v in eth.items()} == {
        "White": (5, 2), "Black or African American": (1, 0), "Asian": (2, 2),
    }  # fmt: skip


def test_bold_integer_codes_decode_like_labels():
    codes = {"Male": 1, "Female": 2, None: None}
    as_codes = run(gender=[codes[g] for g in COLUMNS["gender"]])
    assert as_codes["by_gender"] == run()["by_gender"]


def test_disparity_without_small_groups():
    labels = ["Male"] * 50 + ["Female"] * 50
    wrong = [i < 10 for i in range(50)] + [i < 25 for i in range(50)]
    d = error_breakdown(labels, wrong, ["Male", "Female"]).disparity
    ref = stats.chi2_contingency([[10, 40], [25, 25]], correction=False)
    assert d.p_value == pytest.approx(ref.pvalue) and d.small_groups == [] and d.warning is None
    one_group = error_breakdown(["Male", "Male"], [True, False]).disparity
    assert one_group.p_value is None and "nothing to compare" in (one_group.warning or "")
    all_right = error_breakdown(["Male", "Female"], [False, False]).disparity
    assert (
        all_right.max_gap == 0 and all_right.p_value is None and "no disparity" in (all_right.warning or "")
    )


def test_leakage():
    # Leaks: 0 (names only Surprise), 4 (only Doubt/Confusion), 5 (only Sympathy), 1 ("Not Peace: his
    # fists show Anger": Peace ruled out) and 6 ("Fear, not Sadness"). 2, 3, 7 have no rationale.
    leak = run()["leakage"]
    assert (leak["n_leaking"], leak["leaking_indices"], leak["n_non_leaking"]) == (5, [0, 1, 4, 5, 6], 3)
    assert leak["leak_rate"] == pytest.approx(5 / 8)
    assert leak["accuracy_non_leaking"] == pytest.approx(1 / 3)  # item 7 right of 2, 3, 7
    assert leak["accuracy_non_leaking_ci95"] == wilson(1, 3)
    assert leak["accuracy_leaking"] == pytest.approx(3 / 5)  # 0, 4, 6 right of 0, 1, 4, 5, 6
    assert leak["accuracy_leaking_ci95"] == wilson(3, 5)
    assert (leak["n_undetermined"], leak["undetermined_indices"]) == (0, [])


def test_optional_inputs_absent_and_json_round_trip():
    r = run(gender=None, age=None, ethnicity=None, rationales=None)
    assert (
        r["by_gender"] is None and r["by_age"] is None and r["by_ethnicity"] is None and r["leakage"] is None
    )
    full = run()
    assert json.loads(json.dumps(full, allow_nan=False)) == full


def test_other_group_mapping_changes_confusion(tmp_path):
    groups = {g: [e for e in v if e != "Excitement"] for g, v in EMOTION_GROUPS.items()}
    groups["Anger"].append("Excitement")
    custom = GroupMapping("excitement-is-anger", {g: tuple(v) for g, v in groups.items()})
    r = run(group_mapping=custom)
    assert r["group_mapping"] == "excitement-is-anger"
    assert r["confusion"]["Anger"]["Anger"] == 1 and r["confusion"]["Anger"]["Pleasure"] == 0
    path = tmp_path / "mapping.json"
    path.write_text(json.dumps(custom.to_dict()))
    assert run(group_mapping=str(path))["confusion"] == r["confusion"]
    with pytest.raises(ValueError, match="neither the default mapping"):
        run(group_mapping="no-such-mapping")


@pytest.mark.parametrize(
    "override, message",
    [
        ({"references": COLUMNS["references"][:-1]}, r"differ in length: predictions=8, references=7"),
        ({"gender": ["Male"]}, "differ in length"),
        ({"difficulty": ["Medium"] + COLUMNS["difficulty"][1:]}, r"difficulty\[0\]: 'Medium'"),
        (
            {"choices": [["Surprise", "Joy", "Anger", "Pain"]] + COLUMNS["choices"][1:]},
            r"choices\[0\]: unknown emotion label 'Joy'",
        ),
        ({"choices": [["Surprise", "Anger", "Pain"]] + COLUMNS["choices"][1:]}, r"choices\[0\]: expected 4"),
        (
            {"choices": [["Surprise", "Surprise", "Anger", "Pain"]] + COLUMNS["choices"][1:]},
            r"choices\[0\]: labels repeat",
        ),
        (
            {"references": ["Joy"] + COLUMNS["references"][1:]},
            r"references\[0\]: unknown emotion label 'Joy'",
        ),
        ({"references": ["Peace"] + COLUMNS["references"][1:]}, r"references\[0\]: 'Peace' is not among"),
        (
            {"predictions": [3] + COLUMNS["predictions"][1:]},
            r"predictions\[0\]: expected the model's raw text",
        ),
        ({"age": ["Elderly"] + COLUMNS["age"][1:]}, r"age\[0\]: unknown age 'Elderly'"),
        ({"gender": [9] + COLUMNS["gender"][1:]}, r"gender\[0\]: unknown BoLD gender code 9"),
        ({"rationales": [7] + COLUMNS["rationales"][1:]}, r"rationales\[0\]"),
    ],
)
def test_malformed_input_is_a_clear_error(override, message):
    with pytest.raises(ValueError, match=message):
        run(**override)


def test_empty_input_is_an_error():
    with pytest.raises(ValueError, match="no items"):
        bqa_accuracy([], [], [], [])


def _keys(value, prefix=""):
    """Every key of a nested result, as dotted paths."""
    if isinstance(value, dict):
        return [k for key, v in value.items() for k in [f"{prefix}{key}", *_keys(v, f"{prefix}{key}.")]]
    return []


def test_interval_keys_name_their_level_and_results_read_back_typed():
    """At confidence 0.9 no key says 95%: every interval is *_ci90, with the level in the result; the
    typed result reads a dict back (today's, or one stored before ``confidence`` was recorded)."""
    at90 = bqa_accuracy(**COLUMNS, confidence=0.9)
    result = at90.to_dict()
    keys = _keys(result)
    assert not [k for k in keys if "ci95" in k]
    assert {
        "accuracy_ci90",
        "accuracy_easy_ci90",
        "accuracy_hard_ci90",
        "leakage.accuracy_leaking_ci90",
    } <= set(keys)
    assert "by_gender.groups.Male.error_rate_ci90" in keys and result["confidence"] == 0.9
    wider = run()  # 95%: the same rates, wider intervals
    assert wider["accuracy"] == result["accuracy"] and "accuracy_ci95" in wider
    low90, high90 = result["accuracy_ci90"]
    low95, high95 = wider["accuracy_ci95"]
    assert low95 < low90 < high90 < high95
    typed = BQAAccuracy.from_dict(result)
    assert typed == at90
    assert typed.by_difficulty()["Easy"].interval == result["accuracy_easy_ci90"]
    old = {k: v for k, v in wider.items() if k != "confidence"}  # a result stored by an older version
    assert BQAAccuracy.from_dict(old).accuracy.interval == wider["accuracy_ci95"]
    assert BQAAccuracy.from_dict(old).breakdown("gender") == BQAAccuracy.from_dict(wider).by_gender
