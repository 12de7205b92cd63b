"""Answer parser version 4 on real video-model replies (issue 38): the corpus labelled before any
v4 rule change (``tests/data/video_replies``), the agreement v4 holds on its dev and held-out
parts and on the earlier corpora, and each rule written from the dev part, asserted on a reply
of that shape (the pre-change v4 read each of them otherwise)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bqa.accuracy import BQA_PARSER
from builders.scoring.answer_parsing import UNPARSED, get_parser

V4 = get_parser("vqabench-choice@4")
V4_BQA = get_parser("vqabench-choice@4", BQA_PARSER.aliases)  # the project corpus's BQA rows
DATA = Path(__file__).parent / "data"
VIDEO = DATA / "video_replies" / "replies.jsonl"
REAL = DATA / "real_replies" / "replies.jsonl"
PROJECT = DATA / "answer_replies.jsonl"

CABLES = ["Four", "Six", "Three", "Five", "None of the above"]
CAMERA = [
    "By adjusting the brightness or exposure settings.",
    "By using a time-lapse feature.",
    "By changing the camera angle.",
    "By using a filter.",
    "None of the above",
]
ILLUSION = [  # an AISG item that shows "None of the above" as option C and again as E
    "Only skillful drawing and perspective",
    "Video editing effects and skillful drawing",
    "None of the above",
    "Only video editing effects",
    "None of the above",
]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _scores(rows: list[dict]) -> tuple[int, list, list]:
    """Agreements, wrong options (another option than the reader's) and guesses (an option where
    the reader refuses); labels are compared as the item shows them."""
    agree, wrong, guessed = 0, [], []
    for row in rows:
        parser = V4_BQA if row.get("dataset") == "bqa" else V4
        index = parser.parse(row["reply"], row["options"], row["letters"]).index
        got = "refuse" if index is None else row["letters"][index]
        agree += got == row["label"]
        if got not in ("refuse", row["label"]):
            (guessed if row["label"] == "refuse" else wrong).append((row["id"], got, row["label"]))
    return agree, wrong, guessed


def test_video_corpus_is_intact():
    rows = _rows(VIDEO)
    assert len(rows) == 314 and [r["id"] for r in rows] == list(range(1, 315))
    assert sum(r["split"] == "heldout" for r in rows) == 94
    assert len({r["model"] for r in rows}) == 5
    for r in rows:
        assert r["label"] == "refuse" or r["label"] in r["letters"], r["id"]
        assert len(r["options"]) == len(r["letters"]), r["id"]
        assert {"repo", "commit", "path", "item"} <= set(r["source"]), r["id"]
        V4.check_labels(r["options"], r["letters"])  # every label set is one v4 reads


def test_version_4_on_the_dev_part():
    """The part the rules below were written from: no wrong option, no guess."""
    rows = [r for r in _rows(VIDEO) if r["split"] == "dev"]
    agree, wrong, guessed = _scores(rows)
    assert wrong == []
    assert agree / len(rows) >= 0.97, f"{agree}/{len(rows)}"
    assert len(guessed) <= 5, guessed


def test_version_4_on_the_held_out_part():
    """Never looked at while writing rules: measured 91/94 (96.8%), no wrong option."""
    rows = [r for r in _rows(VIDEO) if r["split"] == "heldout"]
    agree, wrong, _ = _scores(rows)
    assert wrong == []
    assert agree / len(rows) >= 0.96, f"{agree}/{len(rows)}"


@pytest.mark.xfail(strict=True, reason="issue 38's bar; v4 reads 91 of the 94 held-out replies")
def test_version_4_reaches_the_issue_bar_on_the_held_out_part():
    rows = [r for r in _rows(VIDEO) if r["split"] == "heldout"]
    assert _scores(rows)[0] / len(rows) >= 0.97


def test_version_4_on_the_earlier_corpora():
    real = _rows(REAL)
    project = []
    for row in _rows(PROJECT):
        letters = list("ABCDEFGHIJ"[: len(row["options"])])
        label = "refuse" if row["expected"] is None else letters[row["options"].index(row["expected"])]
        project.append({**row, "letters": letters, "label": label})
    for rows in (real, project):
        agree, wrong, guessed = _scores(rows)
        assert wrong == [] and guessed == []
        assert agree / len(rows) >= 0.95, f"{agree}/{len(rows)}"


@pytest.mark.parametrize(
    "reply, options, expected",
    [
        # The reply's opening answer on a line of its own is explicit: against the final one, ambiguous.
        ("A. Four\nThe bundle holds four distinct cables.\n\nFinal answer: C", CABLES, UNPARSED),
        ("'A'.\nThe middle row has 4 compartments.\n\nFinal answer: C", CABLES, UNPARSED),
        # ... and when it agrees, or opens a review of the options, the final answer stands.
        ("A.\nThe other answers can be ruled out.\nFinal answer: A", CABLES, "Four"),
        (
            "A. Four cables would need a thicker tube.\nB. Six is too many.\n\nFinal answer: C",
            CABLES,
            "Three",
        ),
        # A backward explicit answer ("option B is the correct answer", "'E ...' is also the correct answer").
        (
            "The man uses a time-lapse feature. So, option B is the correct answer.\n\nFinal answer: A",
            CAMERA,
            UNPARSED,
        ),
        (
            "B.\nThe lighting changes slowly.\n'E None of the above' is also the correct answer for this "
            "question.\nTherefore, the final answer is B.\nFinal answer: B",
            CAMERA,
            UNPARSED,
        ),
        # A superlative statement of the choice ("the most fitting ... is option D") is explicit too.
        (
            "Each option in turn.\nThe most fitting description of the effect is option D, a filter.\n\n"
            "Final answer: C",
            CAMERA,
            UNPARSED,
        ),
        ("The best reading of the scene is option D.\nFinal answer: D", CAMERA, CAMERA[3]),
        # A quoted label is a label, like a bracketed one.
        ("'C' is the best answer based on the given information.", CABLES, "Three"),
    ],
)
def test_explicit_answers_the_dev_part_showed(reply, options, expected):
    assert V4.parse(reply, options).answer(options) == expected


def test_an_option_text_two_options_share_names_neither_and_labels_still_read():
    """Real items repeat "None of the above"; versions 2 and 3 raise on them mid-scoring."""
    with pytest.raises(ValueError, match="distinct"):
        get_parser("vqabench-choice@3").parse("A", ILLUSION)
    assert V4.parse("The drawing is the core technique.\n\nA", ILLUSION).answer(ILLUSION) == ILLUSION[0]
    assert V4.parse("Final answer: E", ILLUSION).index == 4
    assert V4.parse("None of the above.", ILLUSION).answer(ILLUSION) == UNPARSED
