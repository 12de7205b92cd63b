"""Answer parser version 4 (issue 38): each failure kind the issue measured on version 3 is a case
that version 3 gets wrong (asserted here) and version 4 reads as a careful reader does; label sets
are data, refused by name before scoring."""

from __future__ import annotations

import pytest

from builders.scoring.answer_parsing import UNPARSED, get_parser, parser_names
from builders.scoring.label_sets import UnreadableLabels, label_set
from builders.scoring.parser_change import ChangeItem, parser_change

V3 = get_parser("vqabench-choice@3")
V4 = get_parser("vqabench-choice@4")

DOG = ["runs to the gate", "chews a bone", "shakes its fur", "lies down", "barks at the mailman"]
CHORES = ["ride a bike", "walk the dog", "cook dinner", "sleep"]
COLOURS = ["red", "blue", "green", "white", "black", "pink", "grey", "brown", "orange", "purple"]
SPEED = ["accelerated", "normal speed", "super slow motion", "fast-paced"]
ROTATION = ["spinning clockwise", "spinning counter-clockwise", "not moving", "moving left"]
OBJECTS = ["cup", "laptop", "scissors", "book"]


def read(parser, reply, options, labels=None):
    return parser.parse(reply, options, labels).answer(options)


# (reply, options, labels, what a careful reader takes, what version 3 read instead)
CASES = [
    # A final [[X]] after discussing other options, or after reviewing every option by letter.
    (
        "Looking at the options, B could fit since the man smiles, but C matches the tools better and "
        "A is unlikely. [[C]]",
        CHORES,
        None,
        "cook dinner",
        UNPARSED,
    ),
    (
        "Option A says the man rides a bike. Option B says he walks the dog. Option C says he cooks "
        "dinner. Option D says he sleeps. The pan and stove are visible throughout.\n\n[[C]]",
        CHORES,
        None,
        "cook dinner",
        UNPARSED,
    ),
    # The same with the answer in bold on its own last line.
    ("The man is at the stove. B and C both fit.\n\n**C**", CHORES, None, "cook dinner", UNPARSED),
    # An echoed prompt template is no mention: its example [[C]] is not the answer.
    (
        "If the correct option letters (A, B, C, D...) are more than one, give all of them, e.g. [[C]].\n\n"
        "The man is riding a bike.\n\n[[A]]",
        CHORES,
        None,
        "ride a bike",
        UNPARSED,
    ),
    # The pronoun "I" is no option I (ten options), where no declaration puts it.
    (
        "I went through the clip frame by frame but the colour is hard to see.",
        COLOURS,
        None,
        UNPARSED,
        "orange",
    ),
    ("I cannot tell from the video.", COLOURS, None, UNPARSED, "orange"),
    # A claim in the first sentence, the other options only in contrast.
    (
        "The video is playing at an accelerated rate.\n\nIn contrast to normal speed or fast-paced footage, "
        "the clouds race across the sky; fast-paced editing would cut between shots, while here the camera "
        "is fixed.",
        SPEED,
        None,
        "accelerated",
        UNPARSED,
    ),
    (
        "The circular pattern is moving counter-clockwise.",
        ROTATION,
        None,
        "spinning counter-clockwise",
        UNPARSED,
    ),
    # A list of object names, one of which is an option's text, answers nothing.
    ("Bottle, towel, cup, phone.", OBJECTS, None, UNPARSED, "cup"),
    ("In the video I see a bottle, a towel, a cup and a phone on the table.", OBJECTS, None, UNPARSED, "cup"),
]


@pytest.mark.parametrize("reply, options, labels, expected, v3_read", CASES)
def test_version_4_reads_what_version_3_missed(reply, options, labels, expected, v3_read):
    assert read(V3, reply, options, labels) == v3_read  # the failure, measured on version 3
    assert read(V4, reply, options, labels) == expected


def test_the_model_s_own_words_about_the_format_are_no_instruction():
    assert read(V4, "I will give my answer in the required format: [[A]]", CHORES) == "ride a bike"
    assert read(V4, "Following the required format, the answer is [[B]].", CHORES) == "walk the dog"


def test_the_i_of_a_declaration_is_still_option_i():
    assert read(V4, "Answer: I", COLOURS) == "orange"
    assert read(V4, "(I) orange", COLOURS) == "orange"
    assert read(V4, "Answer: I cannot tell.", COLOURS) == UNPARSED


@pytest.mark.parametrize(
    "reply, labels, expected",
    [
        ("<answer>3</answer>", ["0", "1", "2", "3", "4"], "lies down"),
        ("3", ["0", "1", "2", "3", "4"], "lies down"),
        ("3: lies down", ["0", "1", "2", "3", "4"], "lies down"),
        ("The dog rests after standing by the gate. Answer: 3", ["0", "1", "2", "3", "4"], "lies down"),
        ("There are 2 dogs; the brown one rests, so option 3.", ["0", "1", "2", "3", "4"], "lies down"),
        ("(4) lies down", ["(1)", "(2)", "(3)", "(4)", "(5)"], "lies down"),
        ("The answer is 4.", ["1", "2", "3", "4", "5"], "lies down"),
        ("The answer is d.", ["a", "b", "c", "d", "e"], "lies down"),
        ("The answer is (d)", ["a.", "b.", "c.", "d.", "e."], "lies down"),
        # a bare number elsewhere is a count, not a label
        ("The brown dog walks 2 steps and then rests.", ["0", "1", "2", "3", "4"], UNPARSED),
    ],
)
def test_digit_and_lower_case_label_sets(reply, labels, expected):
    if labels[0].strip("(.") in {"0", "1"}:
        with pytest.raises(ValueError):  # version 3 stops on them in the middle of scoring
            V3.parse(reply, DOG, labels)
    assert read(V4, reply, DOG, labels) == expected


def test_a_number_that_is_both_a_label_and_an_option_names_neither():
    counts = ["3", "4", "5", "6"]
    assert read(V4, "Answer: 3", counts, ["0", "1", "2", "3"]) == UNPARSED
    assert read(V4, "I count 5 people, so option 2.", counts, ["0", "1", "2", "3"]) == "5"


def test_a_final_answer_against_an_earlier_explicit_answer_is_ambiguous():
    reply = "The answer is B. Looking again at the tools, the final answer is [[C]]"
    assert read(V3, reply, CHORES) == "cook dinner"
    assert read(V4, reply, CHORES) == UNPARSED
    # a correction between them keeps the later one
    assert read(V4, "The answer is B. Wait, actually the answer is [[C]]", CHORES) == "cook dinner"


@pytest.mark.parametrize(
    "labels, message",
    [
        (["A", "B", "B", "C"], "repeats"),
        (["A", "1", "C", "D"], "mixes"),
        (["2", "3", "4", "5"], "count up"),
        (["0", "2", "4", "6"], "count up"),
        (["A", "B", "C"], "3 labels for 4 options"),
        (["first", "second", "third", "fourth"], "'first' is not a letter"),
    ],
)
def test_an_unreadable_label_set_is_refused_by_name(labels, message):
    with pytest.raises(UnreadableLabels, match=message) as caught:
        label_set(labels, 4)
    assert str(labels[0]) in str(caught.value)


def test_label_sets_are_data():
    assert label_set(["(1)", "(2)", "(3)"], 3).labels == ("1", "2", "3")
    assert label_set(["a", "b", "c"], 3).labels == ("A", "B", "C")
    assert label_set(["[A]", "B.", "C)"], 3).labels == ("A", "B", "C")
    assert label_set(["0", "1", "2"], 3).digits
    assert label_set(None, 3).labels == ("A", "B", "C")


def test_parser_change_refuses_an_unreadable_label_set_before_reading_any_reply():
    items = [ChangeItem("A", CHORES, None, 0), ChangeItem("2", CHORES, ["0", "1", "2", "3"], 2)]
    with pytest.raises(UnreadableLabels, match=r"item 1 .*vqabench-choice@3"):
        parser_change(items, V3, V4)
    change = parser_change(items, V4, V4)
    assert change["correct_after"] == 2


def test_version_4_is_registered_beside_version_3():
    assert "vqabench-choice@4" in parser_names()
    assert V4.signature == "vqabench-choice@4|aliases:none"
    assert get_parser("vqabench-choice@3").version == 3  # old results are re-scored with their version
