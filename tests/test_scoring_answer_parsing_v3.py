"""Answer parser version 3 (issue 26): the mechanisms real chain-of-thought replies need, each
reproduced on version 2 first, and the real-reply corpus labelled before version 3 existed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.scoring.answer_parsing import PARSERS, UNPARSED, get_parser, parser_names

V2 = get_parser("vqabench-choice@2")
V3 = get_parser("vqabench-choice@3")
REAL = Path(__file__).parent / "data" / "real_replies" / "replies.jsonl"

CAMERA = ["static camera", "panning", "slow motion", "zoom in"]
SPEED = ["normal speed", "slow motion", "fast forward", "reverse"]
ABCD = ["first clip", "second clip", "third clip", "fourth clip"]
ABCDE = ["red", "blue", "green", "white", "black"]
BEHAVIOUR = ["Playing", "Feeding", "Resting", "Fighting"]
POINTS = ["Point A", "Point B", "Point C", "Point D"]
DEPTH = ["A is closer", "B is closer"]
NUMBERS = ["30", "40", "50", "60"]
LETTERS_AS_TEXT = ["E", "k", "F", "A"]
SWIM = [
    "The fish swims toward the camera",
    "The fish swims away from the camera",
    "The camera pans left",
    "The reef is empty",
]


def answer(parser, reply, options, letters=None):
    return parser.parse(reply, options, letters).answer(options)


# Each case: the reply, its options, what a careful reader takes, and what version 2 read instead.
CASES = [
    # Exclusion lists: the negation reaches every coordinated option, and is no declaration.
    (
        "The best option is A. The camera pans slowly over the reef, so options C and D can be excluded.",
        CAMERA,
        "static camera",
        "slow motion",
    ),
    (
        "Option A fits best: the fish swim past a still camera, so options B and C are not correct.",
        CAMERA,
        "static camera",
        "panning",
    ),
    ("The answer is B, so C, D or E are unlikely.", ABCDE, "blue", UNPARSED),
    # A declaration whose answer follows a colon and a line break; "10°C" is a temperature.
    (
        "The water is about 10°C, the fish circle each other and bite. Therefore, the best option is:\n\nD. Fighting",
        BEHAVIOUR,
        "Fighting",
        UNPARSED,
    ),
    ("Readings (C°7) aside, the correct answer is:\n(B) Feeding", BEHAVIOUR, "Feeding", UNPARSED),
    # Hypothetical and contrastive mentions are not declarations.
    (
        "If the video were panning, the trees would move across the frame; slow motion would show blurred leaves. Here the frame stays still: static camera.",
        CAMERA,
        "static camera",
        UNPARSED,
    ),
    ("In contrast to normal speed, the clip plays in slow motion.", SPEED, "slow motion", UNPARSED),
    # Declarations version 2 did not know.
    (
        "Options A and B show people standing still. This is best described by option C.",
        ABCD,
        "third clip",
        UNPARSED,
    ),
    (
        "The best answer based on the given video is A. B and C show other scenes.",
        ABCD,
        "first clip",
        UNPARSED,
    ),
    (
        "The third clip (C) is most similar to the reference, the first clip (A) is not.",
        ABCD,
        "third clip",
        UNPARSED,
    ),
    # Option texts that are letters, numbers or very short: words and numbers in sentences are not the option.
    ("A sea turtle swims past a sign with the letter k on it.", LETTERS_AS_TEXT, "k", UNPARSED),
    ("The answer is C. The shark circles the reef for 30.", NUMBERS, "50", UNPARSED),
    # A list of every option is not an answer; the options' own letters ("Point A") are labels.
    (
        "The choices on the second image are A, B, C, and D. The corresponding point is (A).",
        POINTS,
        "Point A",
        UNPARSED,
    ),
    ("B is closer to the camera. Point A is on the far wall.", DEPTH, "B is closer", UNPARSED),
    # An answer tag declares, closed or not, after an unclosed reasoning block.
    (
        "<think>\nThe umbrella shades three pairs of chairs.\n<answer>C</answer>",
        ["one", "three", "two", "four"],
        "two",
        UNPARSED,
    ),
    # An option whose last mention rules it out is not the one left over by an earlier mention.
    (
        "Point B does not correspond. The location of point C (bottom right) is far from it. Therefore, point C does not correspond either.",
        POINTS,
        UNPARSED,
        "Point C",
    ),
    # Paraphrase: other inflections of every content word of exactly one option, in a declaration.
    ("The answer is that the fish is swimming toward the camera.", SWIM, SWIM[0], UNPARSED),
]


@pytest.mark.parametrize("reply, options, expected, v2_read", CASES)
def test_version_3_reads_what_version_2_missed(reply, options, expected, v2_read):
    assert answer(V2, reply, options) == v2_read  # the failure, reproduced
    assert answer(V3, reply, options) == expected


@pytest.mark.parametrize(
    "reply, options",
    [
        # A singular negation stays with its option: C is still the answer.
        ("The answer is C, and D is wrong.", ABCD),
        # A comma does not carry a leading negation forward: the third clip is the answer.
        ("Not the second clip, the third clip.", ABCD),
        # A line ending on "is:" that opens a list of options declares none of them.
        ("My reading of each clip is:\nA. first clip: people stand\nB. second clip: people run", ABCD),
        # Numbers inside a calculation are no option.
        ("Section A: 30 fish\nSection B: 40 fish\nTherefore, the total is:\n\n30 + 40 = 70 fish", NUMBERS),
    ],
)
def test_version_3_keeps_what_it_should_not_read(reply, options):
    parsed = V3.parse(reply, options)
    if "C, and D" in reply or "Not the second" in reply:
        assert parsed.answer(options) == options[2]
    else:
        assert parsed.index is None


@pytest.mark.parametrize(
    "reply",
    [
        "The answer is that he is drawing his sword from the sheath.",  # "unsheathing a sword": no stem shared enough
        "The answer is that the fish swims toward the reef.",  # "camera" missing: not every content word
        "The answer is that the fish is swimming toward and then away from the camera.",  # two options whole
        "The answer is not that the fish is swimming toward the camera.",  # negated
        "The answer is not that the fish swims toward the camera.",  # negated, named as such
    ],
)
def test_paraphrase_is_refused_without_a_wide_margin(reply):
    options = [*SWIM[:3], "He is unsheathing a sword"]
    assert V3.parse(reply, options).index is None


def test_a_looping_echo_of_the_prompt_keeps_the_declared_answer():
    prompt = (
        "Question: Is the first fish smaller than, equal to or larger than the second?\nOptions:\n(A) smaller than\n"
        "(B) equal to\n(C) larger than\nAnswer with the option's letter from the given choices directly. "
    )
    reply = "the answer is (B) equal to. " + (prompt + "the answer is (B) equal to. ") * 40
    options = ["smaller than", "equal to", "larger than"]
    assert answer(V3, reply, options) == "equal to"


def test_both_versions_are_registered_and_named():
    assert {2, 3} <= set(PARSERS["vqabench-choice"])
    assert parser_names()[:2] == ["vqabench-choice@2", "vqabench-choice@3"]
    assert V2.signature == "vqabench-choice@2|aliases:none"
    assert V3.signature == "vqabench-choice@3|aliases:none"
    assert get_parser("vqabench-choice@2|aliases:bqa-labels-v1").version == 2
    assert get_parser("vqabench-choice").version == max(PARSERS["vqabench-choice"])  # a bare name: the newest
    with pytest.raises(ValueError, match=r"no version '1'; known: vqabench-choice@2, vqabench-choice@3"):
        get_parser("vqabench-choice@1")


def _real_rows():
    return [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines()]


def _scores(rows, parser):
    agree, wrong, guessed = 0, [], []
    for row in rows:
        index = parser.parse(row["reply"], row["options"], row["letters"]).index
        got = "refuse" if index is None else row["letters"][index]
        agree += got == row["label"]
        if got != "refuse" and got != row["label"]:
            (guessed if row["label"] == "refuse" else wrong).append((row["id"], got, row["label"]))
    return agree, wrong, guessed


def test_real_replies_corpus_is_intact():
    rows = _real_rows()
    assert len(rows) >= 200 and len({r["id"] for r in rows}) == len(rows)
    assert sum(r["split"] == "heldout" for r in rows) == 64
    for r in rows:
        assert r["label"] == "refuse" or r["label"] in r["letters"], r["id"]
        assert r["options"] is None or len(r["options"]) == len(r["letters"]), r["id"]
        assert r["source"], r["id"]


def test_version_3_agrees_with_a_careful_reader_on_real_replies():
    """Issue 26's acceptance test on the replies v3 was designed with (dev); never a wrong option."""
    rows = [r for r in _real_rows() if r["split"] == "dev"]
    agree, wrong, guessed = _scores(rows, V3)
    assert wrong == [] and guessed == []
    assert agree / len(rows) >= 0.95, f"{agree}/{len(rows)}"
    assert _scores(rows, V2)[0] < agree  # version 2 read fewer of them


def test_version_3_on_held_out_real_replies():
    """The part v3 was not designed on: measured, and held to the same bar as dev."""
    rows = [r for r in _real_rows() if r["split"] == "heldout"]
    agree, wrong, guessed = _scores(rows, V3)
    assert wrong == []
    assert agree / len(rows) >= 0.95, f"{agree}/{len(rows)}"
