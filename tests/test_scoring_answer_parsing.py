"""The shared reply parser: declarations, whole words, markdown, and refusing to guess."""

from __future__ import annotations

import pytest

from builders.scoring.answer_parsing import (
    UNPARSED,
    clean_reply,
    mentioned_options,
    parse_answer,
    parse_choice,
)

CHOICES = ["Surprise", "Confidence", "Anger", "Embarrassment"]


@pytest.mark.parametrize(
    "reply, expected",
    [
        # The hard cases.
        ("A man is walking away. The answer is C.", "Anger"),
        ("The answer is B. Note that A is a common distractor.", "Confidence"),
        ("Based on his posture, Surprise.", "Surprise"),
        ("It could be Surprise, or maybe Anger.", UNPARSED),
        # Bare letters and texts, any case, any wrapping.
        ("C", "Anger"),
        ("c", "Anger"),
        ("(b)", "Confidence"),
        ("A.", "Surprise"),
        ("surprise", "Surprise"),
        ("EMBARRASSMENT!", "Embarrassment"),
        # Markdown, fences, reasoning blocks, LaTeX.
        ("**Answer:** D", "Embarrassment"),
        ("```\nAnswer: A\n```", "Surprise"),
        ('```json\n{"answer": "C"}\n```', "Anger"),
        ("# Result\n> Anger", "Anger"),
        ("<think>Surprise or Anger? The fists say Anger.</think>Confidence", "Confidence"),
        ("\\boxed{C}", "Anger"),
        ("\\boxed{\\text{Surprise}}", "Surprise"),
        # Declarations: the last one wins; negated ones do not count.
        ("I would choose Anger.", "Anger"),
        ("I'd pick option D.", "Embarrassment"),
        ("Anger is the correct answer.", "Anger"),
        ("C is correct.", "Anger"),
        ("Answer: A. Wait, on reflection the answer is D.", "Embarrassment"),
        ("The answer is not A. Answer: D", "Embarrassment"),
        ("The answer isn't A.", UNPARSED),
        ("The answer is not A, it is C.", UNPARSED),
        ("A) Surprise\nB) Confidence\nC) Anger\nD) Embarrassment\nAnswer: C", "Anger"),
        ("The correct option is (B) Confidence.", "Confidence"),
        ("Final answer: (D) Embarrassment", "Embarrassment"),
        ("Answer: C (Anger)", "Anger"),
        ("He is smiling broadly; Answer: Confidence. Anger and Surprise do not fit.", "Confidence"),
        # Declared double answers and contradictions are refused.
        ("The answer is B or C.", UNPARSED),
        ("Answer: B. Anger", UNPARSED),
        ("Answer: C (Surprise)", UNPARSED),
        ("The answer is Surprise/Anger.", UNPARSED),
        # Whole words only; the article "A" is not option A; no option named -> unparsed.
        ("Surprised", UNPARSED),
        ("He seems angry.", UNPARSED),
        ("A person stands still.", UNPARSED),
        ("A or C", UNPARSED),
        ("A is correct", "Surprise"),
        ("The answer is a bit unclear.", UNPARSED),
        ("I don't know.", UNPARSED),
        ("", UNPARSED),
        (None, UNPARSED),
        ("Option B", "Confidence"),
    ],
)
def test_parse_answer_cases(reply, expected):
    assert parse_answer(reply, CHOICES) == expected


def test_option_texts_with_slashes_and_overlaps():
    assert (
        parse_answer("Doubt/Confusion.", ["Doubt/Confusion", "Anger", "Peace", "Excitement"])
        == "Doubt/Confusion"
    )
    # "reef fish" inside "small reef fish" names only the longer option.
    options = ["reef fish", "small reef fish", "crab", "moray eel"]
    assert parse_choice("It is a small reef fish.", options) == 1
    assert parse_choice("It is a reef fish.", options) == 0
    # Option texts normalise whitespace and a trailing period; the reply may break lines.
    assert parse_choice("answer: moray\n eel", ["Crab.", "Moray  eel.", "Shark.", "Ray."]) == 1


def test_letters_only_without_options():
    letters = ("A", "B", "C", "D")
    assert parse_choice("Answer: B", None, letters) == 1
    assert parse_choice("(d)", None, letters) == 3
    assert parse_choice("a sea turtle", None, letters) is None
    assert parse_choice("The camera pans left, so C.", None, letters) == 2


def test_texts_only_ignore_letters():
    assert parse_choice("C", CHOICES, ()) is None
    assert parse_choice("anger", CHOICES, ()) == 2


def test_mentioned_options_is_whole_word_and_case_insensitive():
    text = "He is surprised, not angry; **anger** is wrong, Surprise fits. A man."
    assert mentioned_options(text, CHOICES) == {0, 2}
    assert mentioned_options(None, CHOICES) == set()


def test_clean_reply_strips_markup():
    assert clean_reply("**Answer:** `C`").strip() == "Answer: C"
    assert "think" not in clean_reply("<think>Anger?</think>C")


@pytest.mark.parametrize(
    "options, letters, message",
    [
        (["Anger", "anger", "Peace", "Fear"], None, "distinct"),
        (["Anger", " ", "Peace", "Fear"], None, "empty option"),
        (["Anger", "Peace"], ("A", "B", "C"), "letters for"),
        (None, None, "give the option"),
        (None, ("A", "AB"), "single letters"),
    ],
)
def test_bad_options_are_clear_errors(options, letters, message):
    with pytest.raises(ValueError, match=message):
        parse_choice("A", options, letters)
