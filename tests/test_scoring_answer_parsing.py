"""The shared reply parser: declarations, whole words, markdown, negations, and refusing to guess."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bqa.accuracy import BQA_PARSER, bqa_parser
from bqa.vocabulary import EMOTIONS, LABEL_FORMS, LABEL_PARTS
from builders.scoring.answer_parsing import (
    PARSERS,
    REASONS,
    UNPARSED,
    Aliases,
    ChoiceParser,
    clean_reply,
    get_parser,
    mentioned_options,
    parse_answer,
    parse_choice,
    parsed_choice,
    reason_counts,
)
from marinelife16k.accuracy import MARINELIFE_PARSER

CORPUS = Path(__file__).parent / "data" / "answer_replies.jsonl"

CHOICES = ["Surprise", "Confidence", "Anger", "Embarrassment"]


@pytest.mark.parametrize(
    "reply, expected",
    [
        # The issue's hard cases.
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
        ("The answer is not A, it is C.", "Anger"),  # v1 refused it; issue 14: a reader takes C
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
        # Whole words only; the article "A" is not option A; no option named -> unparsed. A first
        # sentence that states one option by the content words only it has declares it (rule 21).
        ("Surprised", "Surprise"),
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
        (["Anger", " ", "Peace", "Fear"], None, "empty option"),
        (["Anger", "Peace"], ("A", "B", "C"), "3 labels for 2 options"),
        (None, None, "give the option"),
        (None, ("A", "AB"), r"cannot read the label set \['A', 'AB'\]: 'AB' is not a letter"),
    ],
)
def test_bad_options_are_clear_errors(options, letters, message):
    with pytest.raises(ValueError, match=message):
        parse_choice("A", options, letters)


def test_a_text_two_options_share_names_neither_since_version_4():
    """Version 3 refused such an item; version 4 (rule 23) reads its labels and never its shared text."""
    options = ["Anger", "anger", "Peace", "Fear"]
    with pytest.raises(ValueError, match="distinct"):
        get_parser("vqabench-choice@3").parse("A", options)
    assert parse_choice("B", options) == 1
    assert parse_choice("anger", options) is None


# --- the rules of issue 14, one group each -----------------------------------------------------------
@pytest.mark.parametrize(
    "reply, expected, reason",
    [
        # A letter only as a standalone choice marker.
        ("N/A", UNPARSED, "no_option"),
        ("Answer: N/A.", UNPARSED, "no_option"),
        ("Answer: A person clenching his fists in anger.", "Anger", "option_text"),
        ("We ran A/B testing; the person shows Confidence.", "Confidence", "option_text"),
        ("Ｂ", "Confidence", "letter"),
        ("（Ｃ）", "Anger", "letter"),
        # Negated mentions exclude their option.
        ("Not B.", UNPARSED, "negated_only"),
        ("It's definitely not Anger.", UNPARSED, "negated_only"),
        ("Anything but Surprise.", UNPARSED, "negated_only"),
        ("Surprise, not Anger.", "Surprise", "negation_resolved"),
        ("Not Anger, it is Surprise.", "Surprise", "negation_resolved"),
        ("The answer is not Anger but Surprise.", "Surprise", "negation_resolved"),
        ("Confidence rather than Embarrassment.", "Confidence", "negation_resolved"),
        ("Anger? No, Surprise.", "Surprise", "negation_resolved"),
        ("He shows no anger; Surprise.", "Surprise", "negation_resolved"),
        ("Anger is not present; Surprise.", "Surprise", "negation_resolved"),
        # The final declaration wins over earlier hedges.
        ("Surprise or Anger? Hard to tell... I'd say Anger.", "Anger", "declared"),
        ("It might be Surprise, leaning towards Anger.", "Anger", "declared"),
        ("Surprise and Anger both fit, but Anger is the most likely.", "Anger", "declared"),
        ("Hmm, Surprise, Anger... so: Anger", "Anger", "declared"),
        ("Anger. Wait, actually Surprise.", "Surprise", "declared"),
        # Echoed option lists are not mentions.
        ("(A) Surprise (B) Confidence (C) Anger (D) Embarrassment. The person shows (C).", "Anger", "letter"),
        ("Surprise, Confidence, Anger, Embarrassment", UNPARSED, "no_option"),
        # A letter declaration keeps its letter unless the next sentence contradicts it.
        ("The answer is C. Surprise is not present in his posture.", "Anger", "declared"),
        ("The answer is C. Surprise would be too strong.", "Anger", "declared"),
        ("Answer: C. Surprise", UNPARSED, "ambiguous"),
        ("Surprise. But looking closer, Anger.", UNPARSED, "ambiguous"),  # a correction: not guessed
        ("Answer: Anger. But it might also be Surprise.", "Anger", "declared"),  # a hedge keeps it
        ("I choose (C) Anger over (A) Surprise.", "Anger", "declared"),  # same sentence names C
        # Negation reaches options joined to a negated one.
        ("It rules out Surprise and Embarrassment; Anger.", "Anger", "negation_resolved"),
        ("I can't choose between Surprise and Anger.", UNPARSED, "negated_only"),
        ("Surprise? Definitely not. Anger.", "Anger", "negation_resolved"),
        ("A) Surprise is not the answer; C) Anger.", "Anger", "negation_resolved"),  # A goes with its text
        ("Between Surprise and Anger, Anger seems more likely.", "Anger", "declared"),
        # CJK declarations.
        ("答案是B", "Confidence", "declared"),
        ("选B", "Confidence", "declared"),
        ("答案不是A，而是C。", "Anger", "negation_resolved"),
        # Genuine ambiguity is still refused.
        ("Surprise and Anger are both plausible.", UNPARSED, "ambiguous"),
        ("Either B or C.", UNPARSED, "ambiguous"),
        (None, UNPARSED, "empty"),
        ("  ** **  ", UNPARSED, "empty"),
    ],
)
def test_issue_rules(reply, expected, reason):
    parsed = parsed_choice(reply, CHOICES)
    assert (parsed.answer(CHOICES), parsed.reason) == (expected, reason)


def test_label_aliases_come_from_the_vocabulary():
    choices = ["Doubt/Confusion", "Excitement", "Anger", "Peace"]
    for reply in (
        "Confusion",
        "Doubt",
        "doubt or confusion",
        "Doubt / Confusion",
        "Doubt/ Confusion",
        "confused",
    ):
        assert BQA_PARSER.parse(reply, choices).index == 0, reply
        # no aliases: the text, or every content word of it in a first sentence (rule 21)
        assert parse_choice(reply, choices) == (0 if "/" in reply or " or " in reply else None), reply
    assert (
        BQA_PARSER.parse("He looks happy and excited.", ["Happiness", "Excitement", "Anger", "Sadness"]).index
        is None
    )
    assert BQA_PARSER.parse("He is not angry; Peace.", choices).index == 3
    # An inflected form after a declaration describes; it does not take the declaration back.
    assert BQA_PARSER.parse("Excitement. He jumps and looks confused.", choices).index == 1
    assert BQA_PARSER.parse("Excitement. No, Confusion.", choices).index is None
    assert set(LABEL_PARTS) | set(LABEL_FORMS) <= set(EMOTIONS)
    # Every alias names exactly one of the 26 labels: parsing it over all of them finds that label.
    for label, names in [*LABEL_PARTS.items(), *LABEL_FORMS.items()]:
        for name in names:
            assert BQA_PARSER.parse(name, EMOTIONS, ()).index == EMOTIONS.index(label), name


def test_an_alias_two_options_share_names_neither():
    parser = ChoiceParser(Aliases("test", {"Anger": ("mad",), "Annoyance": ("mad",)}))
    options = ["Anger", "Annoyance", "Peace", "Fear"]
    assert parser.parse("mad", options).reason == "no_option"
    assert parser.parse("mad", ["Anger", "Peace", "Fear", "Pain"]).index == 0


def test_signature_and_registry():
    assert PARSERS["vqabench-choice"][2] is ChoiceParser
    assert MARINELIFE_PARSER.signature == "vqabench-choice@4|aliases:none"  # the default since issue 38
    assert BQA_PARSER.signature == "vqabench-choice@4|aliases:bqa-labels-v1"
    assert bqa_parser("vqabench-choice@2").signature == "vqabench-choice@2|aliases:bqa-labels-v1"
    assert get_parser("vqabench-choice@4|aliases:none").signature == MARINELIFE_PARSER.signature
    with pytest.raises(ValueError, match="no version '1'"):
        get_parser("vqabench-choice@1")
    with pytest.raises(ValueError, match="unknown answer parser"):
        get_parser("lmms-eval")


def test_reason_counts_list_every_reason():
    counts = reason_counts([parsed_choice(r, CHOICES) for r in ("C", "Anger", "B or C", None)])
    assert list(counts) == list(REASONS)
    assert {k: v for k, v in counts.items() if v} == {
        "letter": 1,
        "option_text": 1,
        "ambiguous": 1,
        "empty": 1,
    }


@pytest.mark.parametrize("word", ["Anger ", "A ", "not Anger, ", "hmm ", "I would say Anger. "])
def test_degenerate_megabyte_reply_is_read_quickly(word):
    text = word * (1_000_000 // len(word))
    # CPU seconds of this thread, not wall time: a loaded machine does not move it, and a quadratic
    # scan of 1 MB would take minutes. Speed itself is measured by benchmarks/answer_parsing.py.
    start = time.thread_time()
    parsed = BQA_PARSER.parse(text, CHOICES)
    assert time.thread_time() - start < 5
    assert parsed.index in (None, CHOICES.index("Anger"), 0)
    assert (
        parsed.index
        == {"Anger ": 2, "A ": 0, "not Anger, ": None, "hmm ": None, "I would say Anger. ": 2}[word]
    )


@pytest.mark.parametrize("version", sorted(PARSERS["vqabench-choice"]))
def test_corpus_agrees_with_a_careful_reader(version):
    """Issues 14 and 26: every version keeps >= 99% agreement with the person, never a wrong option."""
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 150
    agree, wrong = 0, []
    bqa, marine = bqa_parser(f"vqabench-choice@{version}"), get_parser(f"vqabench-choice@{version}")
    for row in rows:
        parser = bqa if row["dataset"] == "bqa" else marine
        got = parser.parse(row["reply"], row["options"]).index
        got_text = None if got is None else row["options"][got]
        agree += got_text == row["expected"]
        if got_text is not None and got_text != row["expected"]:
            wrong.append((row["id"], row["reply"], got_text, row["expected"]))
    assert wrong == []
    assert agree / len(rows) >= 0.99, f"{agree}/{len(rows)}"
