"""Pieces of the BQA pipeline on their own: the rule filter, answer reading, frames, the split."""

from __future__ import annotations

import base64
import io
import random
from collections import Counter

import pytest
from PIL import Image

from bqa.sample import sample_root
from bqa.vocabulary import EMOTIONS, LABEL_FORMS, LABEL_RELATED_WORDS, label_words
from builders.evaluation.bqa_answers import format_options, read_answer
from builders.pipelines.bqa.split import RATIOS, grouped_stratified_split
from builders.pipelines.bqa.step3_filter import BQAFilterVerdict, named_labels, rule_violation
from builders.pipelines.bqa.step4_difficulty import difficulty_of
from builders.scripted.bqa_responder import CARELESS_FORMS
from builders.video.frame_spec import FrameSpec

CHOICES = ["Surprise", "Confidence", "Anger", "Doubt/Confusion"]


# -- STEP3 rule filter --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("Which emotion best describes the man on the left?", None),
        ("Which emotion best describes the man on the left.", "rule_no_question_mark"),
        ("Look at the man.\nWhich emotion fits best?", "rule_multiline"),
        ("Look at the man.\r\nWhich emotion fits best?", "rule_multiline"),
        ("Is the woman surprised by what she hears?", "rule_names_candidate"),
        ("Does the man look angry?", "rule_names_candidate"),
        ("Is the girl CONFIDENT here?", "rule_names_candidate"),
        ("Does the boy seem confused about the rules?", "rule_names_candidate"),
        ("Is this doubt/confusion?", "rule_names_candidate"),
        ("Which emotion does the angler in the painting show?", None),  # 'anger'/'pain' inside words
        ("  Which emotion does the woman show?  \n", None),  # surrounding whitespace is not a second line
    ],
)
def test_rule_filter(question, reason):
    violation = rule_violation(question, CHOICES)
    assert (violation[0] if violation else None) == reason


def test_rule_filter_names_only_the_candidates_of_the_item():
    # "sad" names Sadness, which is not a choice here: not this item's candidate.
    assert rule_violation("Why does the man walk away so sad?", CHOICES) is None
    assert (
        rule_violation("Why does the man walk away so sad?", ["Sadness", *CHOICES[:3]])[0]
        == "rule_names_candidate"
    )


def test_every_label_and_every_careless_form_is_caught():
    for label in EMOTIONS:
        assert named_labels(f"Is it {label.lower()}?", [label]) == [(label, label.lower())]
        for form in label_words(label):
            assert named_labels(f"Does the man look {form} now?", [label]), (label, form)
    for label, form in CARELESS_FORMS.items():
        assert rule_violation(f"Is the man {form}?", [label, *[c for c in CHOICES if c != label][:3]])


def test_one_home_for_the_label_words():
    """bqa/vocabulary.py holds the words of each label once: the parser reads the label and its forms
    as answers; the filter refuses questions naming any word of the family, forms included."""
    assert tuple(LABEL_RELATED_WORDS) == EMOTIONS and set(LABEL_FORMS) <= set(EMOTIONS)
    words = [w for label in EMOTIONS for w in label_words(label)]
    assert len(words) == len(set(words))  # no word names two labels, none is listed twice
    assert named_labels("Is he angrily pacing?", ["Anger"]) == [("Anger", "angrily")]
    assert named_labels("Is the audience engaged?", ["Engagement"]) == [("Engagement", "engaged")]
    assert "engaged" not in LABEL_FORMS.get("Engagement", ())  # other senses: not read as an answer


def test_filter_verdict_reasons():
    base = {"objective": True, "leaks_answer": False, "harmful": False, "reason": "fine"}
    assert BQAFilterVerdict(**base).reject_reason() is None
    assert BQAFilterVerdict(**{**base, "objective": False}).reject_reason() == "llm_not_objective"
    assert (
        BQAFilterVerdict(**{**base, "leaks_answer": True, "objective": False}).reject_reason()
        == "llm_leaks_answer"
    )
    assert (
        BQAFilterVerdict(**{**base, "harmful": True, "leaks_answer": True}).reject_reason() == "llm_harmful"
    )


# -- answers ------------------------------------------------------------------------------------
def test_options_are_lettered_lines():
    assert format_options(CHOICES) == "A. Surprise\nB. Confidence\nC. Anger\nD. Doubt/Confusion"


@pytest.mark.parametrize(
    ("raw", "style", "answer", "rationale"),
    [
        ("Anger", "single_word", "Anger", None),
        ("C", "single_word", "Anger", None),
        ("doubt/confusion.", "single_word", "Doubt/Confusion", None),
        ("I cannot tell from these frames.", "single_word", None, None),
        ("Anger or Surprise", "single_word", None, None),
        (
            "Rationale: Fists are clenched.\nAnswer: Anger",
            "reason_then_answer",
            "Anger",
            "Fists are clenched.",
        ),
        (
            "The arms are raised high.\n\n**Answer:** B",
            "reason_then_answer",
            "Confidence",
            "The arms are raised high.",
        ),
        (
            "He leans back; it could be Surprise.",
            "reason_then_answer",
            "Surprise",
            "He leans back; it could be Surprise.",
        ),
        ("Rationale: unclear.\nAnswer: none of them", "reason_then_answer", None, "unclear."),
    ],
)
def test_read_answer(raw, style, answer, rationale):
    read = read_answer(raw, CHOICES, style)
    assert (read.answer, read.rationale) == (answer, rationale)
    assert read.parsed == (answer or "unparsed")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Anger", ("Easy", "right_choice")),
        ("C", ("Easy", "right_choice")),
        ("Surprise.", ("Hard", "wrong_choice")),
        # The paper: Hard "if it could not answer" - and the reason says which way it could not.
        ("I cannot tell from these frames what this person is feeling.", ("Hard", "no_answer")),
        ("", ("Hard", "no_answer")),
        ("Either Surprise or Anger.", ("Hard", "ambiguous")),
    ],
)
def test_difficulty_labels(reply, expected):
    assert difficulty_of(read_answer(reply, CHOICES), "Anger") == expected


# -- frames -------------------------------------------------------------------------------------
def _jpeg_size(url: str) -> tuple[int, int]:
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size


def test_frame_spec():
    clip = next(
        p for p in (sample_root() / "videos").rglob("*.mp4") if p.is_file()
    )  # 125 frames at 25 fps, 160x120
    one_fps = FrameSpec(fps=1.0).data_urls(clip)
    assert len(one_fps) == 5  # t = 0, 1, 2, 3, 4 s of a 5 s clip
    assert {_jpeg_size(u) for u in one_fps} == {(160, 120)}
    small = FrameSpec(fps=None, num_frames=3, max_side=80).data_urls(clip)
    assert len(small) == 3 and {_jpeg_size(u) for u in small} == {(80, 60)}
    assert FrameSpec(fps=1.0).describe(5) == "5 frames taken at 1 frame per second"
    assert FrameSpec(fps=None, num_frames=16).describe(16) == "16 frames spread evenly over the clip"
    assert FrameSpec.from_json(FrameSpec(fps=None, num_frames=8, max_side=256).to_json()) == FrameSpec(
        None, 8, 256
    )
    for bad in ({"fps": None}, {"fps": 1.0, "num_frames": 4}, {"fps": 0.0}, {"fps": None, "num_frames": 0}):
        with pytest.raises(ValueError):
            FrameSpec(**bad)


# -- split --------------------------------------------------------------------------------------
def _synthetic(seed: int = 3) -> list[tuple[str, str, str, int]]:
    """600 items over 60 films of uneven size (5-15), each (film, difficulty, group, n)."""
    rng = random.Random(seed)
    halves = [rng.randint(5, 15) for _ in range(30)]
    sizes = [*halves, *(20 - h for h in halves)]  # 60 films, 600 items
    items = []
    for f, size in enumerate(sizes):
        bias = rng.random()  # films differ in their mix, as real films do
        for _ in range(size):
            items.append(
                (f"film{f:02d}", "Easy" if rng.random() < bias else "Hard", rng.choice("HPAS"), len(items))
            )
    assert len(items) == 600
    return items


def _split(items, seed):
    return grouped_stratified_split(items, group=lambda x: x[0], stratum=lambda x: (x[1], x[2]), seed=seed)


def _stratum_deviation(items, splits) -> float:
    """Mean over strata and splits of |share of the stratum in the split - split ratio|."""
    totals = Counter((x[1], x[2]) for x in items)
    devs = [
        abs(sum((x[1], x[2]) == k for x in members) / n - RATIOS[s])
        for s, members in splits.items()
        for k, n in totals.items()
    ]
    return sum(devs) / len(devs)


def test_split_invariants_on_600_items_60_films():
    items = _synthetic()
    splits = _split(items, seed=7)
    assert list(splits) == ["train", "validation", "test"]
    films = {s: {x[0] for x in members} for s, members in splits.items()}
    assert not (
        films["train"] & films["validation"]
        or films["train"] & films["test"]
        or films["validation"] & films["test"]
    )
    assert sorted(x[3] for m in splits.values() for x in m) == list(range(600))  # each item once
    for s, members in splits.items():
        assert list(members) == sorted(members, key=lambda x: x[3])  # input order kept
        assert abs(len(members) / 600 - RATIOS[s]) <= 0.02, (s, len(members))
    # Stratified: clearly closer to 6:2:2 in every stratum than assigning whole films at random.
    rng = random.Random(0)
    film_ids = sorted({x[0] for x in items})
    random_devs = []
    for _ in range(20):
        rng.shuffle(film_ids)
        where = {f: "train" if i < 36 else "validation" if i < 48 else "test" for i, f in enumerate(film_ids)}
        random_devs.append(
            _stratum_deviation(items, {s: [x for x in items if where[x[0]] == s] for s in RATIOS})
        )
    ours = _stratum_deviation(items, splits)
    assert ours < 0.5 * sum(random_devs) / len(random_devs), (ours, random_devs)


def test_split_is_reproducible_by_seed_and_ignores_input_order():
    items = _synthetic()
    first, again = _split(items, seed=7), _split(items, seed=7)
    assert first == again
    shuffled = list(items)
    random.Random(1).shuffle(shuffled)
    by_film = {x[0]: s for s, m in first.items() for x in m}
    assert {x[0]: s for s, m in _split(shuffled, seed=7).items() for x in m} == by_film
    others = [{x[0]: s for s, m in _split(items, seed=seed).items() for x in m} for seed in (8, 9, 10)]
    assert any(o != by_film for o in others)


def test_split_of_few_films_leaves_no_film_in_two_splits():
    items = [("a", "Easy", "H", 0), ("a", "Hard", "S", 1), ("b", "Easy", "H", 2), ("c", "Hard", "A", 3)]
    splits = _split(items, seed=0)
    assert {s: [x[3] for x in m] for s, m in splits.items()} in (
        {"train": [0, 1], "validation": [2], "test": [3]},
        {"train": [0, 1], "validation": [3], "test": [2]},
    )
