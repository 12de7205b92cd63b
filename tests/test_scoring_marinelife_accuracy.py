"""MarineLife-16K accuracy per dimension on a hand-worked set; options; malformed input."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from marinelife16k.accuracy import MarineLifeAccuracy, marinelife_accuracy

# (question type, reply, answer letter): dimension, right?, unparsed?
ITEMS = [
    ("central_object", "A", "A"),  # MBC-so right
    ("central_object", "Answer: B", "B"),  # MBC-so right
    ("central_object", "C or D", "C"),  # MBC-so unparsed
    ("object_detect", "D", "A"),  # MBC-mo wrong
    ("central_object_appearance", "b", "B"),  # PMT right
    ("camera_motion", "The camera pans left, answer: A", "A"),  # PDO right
    ("camera_motion", "I cannot tell.", "B"),  # PDO unparsed
    ("central_object_motion", "(C)", "C"),  # OBK right
    ("lighting", "**Answer:** D", "C"),  # SM-l wrong
]
TYPES, PREDICTIONS, REFERENCES = (list(c) for c in zip(*ITEMS, strict=True))
DIMENSIONS = ["MBC-so", "MBC-mo", "PMT", "PDO", "OBK", "SM-e", "SM-l"]


def wilson100(k, n):
    ci = stats.binomtest(k, n).proportion_ci(method="wilson")
    return pytest.approx([100 * ci.low, 100 * ci.high], abs=1e-9)


def test_every_key_hand_worked():
    r = marinelife_accuracy(PREDICTIONS, REFERENCES, TYPES).to_dict()
    assert list(r) == [
        *DIMENSIONS, "overall", "ci95", "n", "n_unparsed", "n_open_ended_skipped", "parse_reasons",
        "answer_parser", "correct", "confidence",
    ]  # fmt: skip
    assert r["correct"] == [True, True, False, False, True, True, False, True, False]
    assert r["answer_parser"] == "vqabench-choice@4|aliases:none"
    assert {k: v for k, v in r["parse_reasons"].items() if v} == {
        "letter": 4,  # A, b, (C), D
        "declared": 3,  # Answer: B, answer: A, **Answer:** D
        "ambiguous": 1,  # C or D
        "no_option": 1,  # I cannot tell.
    }
    expected = {
        "MBC-so": 200 / 3,
        "MBC-mo": 0.0,
        "PMT": 100.0,
        "PDO": 50.0,
        "OBK": 100.0,
        "SM-e": None,
        "SM-l": 0.0,
    }
    for dim, value in expected.items():
        assert r[dim] == (None if value is None else pytest.approx(value)), dim
    assert r["overall"] == pytest.approx(500 / 9)
    assert r["n"] == {
        "MBC-so": 3,
        "MBC-mo": 1,
        "PMT": 1,
        "PDO": 2,
        "OBK": 1,
        "SM-e": 0,
        "SM-l": 1,
        "overall": 9,
    }
    assert r["n_unparsed"] == {
        "MBC-so": 1,
        "MBC-mo": 0,
        "PMT": 0,
        "PDO": 1,
        "OBK": 0,
        "SM-e": 0,
        "SM-l": 0,
        "overall": 2,
    }
    assert r["ci95"]["MBC-so"] == wilson100(2, 3)
    assert r["ci95"]["PDO"] == wilson100(1, 2)
    assert r["ci95"]["overall"] == wilson100(5, 9)
    assert r["ci95"]["SM-e"] is None
    assert json.loads(json.dumps(r, allow_nan=False)) == r


def test_option_texts_are_read_when_options_are_given():
    texts = ["Clownfish", "Moray eel", "Sea turtle", "Manta ray"]
    records = [{"label": label, "text": t} for label, t in zip("ABCD", texts, strict=True)]
    replies = ["It is a **sea turtle**.", "Moray eel", "C"]
    kwargs = dict(references=["C", "B", "C"], question_types=["central_object"] * 3)
    with_texts = marinelife_accuracy(replies, options=[texts] * 3, **kwargs).to_dict()
    assert (with_texts["MBC-so"], with_texts["n_unparsed"]["MBC-so"]) == (100.0, 0)
    assert marinelife_accuracy(replies, options=[records] * 3, **kwargs).to_dict() == with_texts
    letters_only = marinelife_accuracy(replies, **kwargs).to_dict()
    assert letters_only["MBC-so"] == pytest.approx(100 / 3) and letters_only["n_unparsed"]["MBC-so"] == 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"references": REFERENCES[:-1]}, "differ in length"),
        (
            {"question_types": ["octopus"] + TYPES[1:]},
            r"question_types\[0\]: unknown question type or dimension 'octopus'",
        ),
        ({"references": ["E"] + REFERENCES[1:]}, r"references\[0\]: 'E' is not an option letter"),
        ({"options": [["a", "b", "c"]] * 9}, r"options\[0\]: expected 4 options"),
        (
            {"options": [[{"label": "B", "text": "x"}, "b", "c", "d"]] * 9},
            r"options\[0\]: expected label 'A'",
        ),
        ({"options": [["a", "", "c", "d"]] * 9}, r"options\[0\]: option B has no text"),
        ({"options": [["a", "b", "c", "d"]] * 8}, "differ in length"),
    ],
)
def test_malformed_input_is_a_clear_error(kwargs, message):
    args = {"predictions": PREDICTIONS, "references": REFERENCES, "question_types": TYPES, **kwargs}
    with pytest.raises(ValueError, match=message):
        marinelife_accuracy(**args).to_dict()


def test_interval_keys_name_their_level_and_results_read_back_typed():
    videos = ["v1", "v1", "v2", "v2", "v3", "v3", "v4", "v4", "v5"]
    at90 = marinelife_accuracy(PREDICTIONS, REFERENCES, TYPES, videos=videos, confidence=0.9)
    result = at90.to_dict()
    assert "ci95" not in result and "ci95_cluster" not in result and result["confidence"] == 0.9
    assert set(result["ci90"]) == set(result["ci90_cluster"]) == set(result["n"])
    default = marinelife_accuracy(PREDICTIONS, REFERENCES, TYPES, videos=videos).to_dict()
    assert default["overall"] == result["overall"] and "ci95" in default
    (low90, high90), (low95, high95) = result["ci90"]["overall"], default["ci95"]["overall"]
    assert low95 < low90 < high90 < high95
    assert MarineLifeAccuracy.from_dict(result) == at90
    assert MarineLifeAccuracy.from_dict(result).overall.interval == [low90, high90]
    old = {k: v for k, v in default.items() if k != "confidence"}  # stored by an older version
    assert MarineLifeAccuracy.from_dict(old).clustered == default["ci95_cluster"]
