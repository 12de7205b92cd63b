"""Properties of answer parser version 4 over generated label sets and replies (issue 38): it never
raises on a readable label set, whatever the reply; it refuses an unreadable set with
:class:`UnreadableLabels` and nothing else; and its cost does not grow with a looping reply's length.

The generator is a seeded ``random.Random`` (the same cases on every run): label sets of every kind
the parser reads and some it does not, option texts that clash with labels, and replies assembled
from the fragments real replies are made of (declarations, brackets, tags, templates, negations,
lists, the pronoun "I", numbers, markup, other scripts, stray punctuation)."""

from __future__ import annotations

import random
import string
import time

import pytest

from builders.scoring.answer_parsing import REASONS, get_parser
from builders.scoring.label_sets import UnreadableLabels

V4 = get_parser("vqabench-choice@4")
CASES = 600


def label_sets(rng: random.Random, n: int) -> list[str] | None:
    kind = rng.randrange(9)
    if kind == 0:
        return None
    if kind == 1:
        return list(string.ascii_uppercase[:n])
    if kind == 2:
        return list(string.ascii_lowercase[:n])
    if kind in (3, 4):
        first = kind - 3
        return [str(first + k) for k in range(n)]
    if kind == 5:
        form = rng.choice(["({})", "[{}]", "{}.", "{})", "{}:"])
        first = rng.choice(["A", 0, 1])
        cores = list(string.ascii_uppercase[:n]) if first == "A" else [str(int(first) + k) for k in range(n)]
        return [form.format(core) for core in cores]
    if kind == 6:  # unreadable: repeats, gaps, words, mixtures
        return rng.choice(
            [["A"] * n, [str(2 * k) for k in range(n)], ["opt"] * n, ["A", *"123456789"[: n - 1]]]
        )
    return list(string.ascii_uppercase[:n])


WORDS = [
    "cup",
    "red",
    "3",
    "I",
    "A",
    "the man",
    "walks across",
    "Point B",
    "0",
    "sat down",
    "fast-paced",
    "E",
]
FRAGMENTS = [
    "The answer is {l}.",
    "Answer: {l}",
    "[[{l}]]",
    "<answer>{l}</answer>",
    "\\boxed{{{l}}}",
    "({l})",
    "option {l}",
    "{l}",
    "**{l}**\n",
    "{t}",
    "not {t}",
    "{t} is unlikely",
    "If the correct option letters (A, B, C, D...) are more than one, give [[{l}]].",
    "I think",
    "I ",
    "wait, actually",
    "so {l}",
    "bottle, towel, {t}, phone",
    "In contrast to {t},",
    "{l} or {l2}",
    "{t}/{t2}",
    "答案是{l}",
    "?",
    "\n\n",
    ":\n",
    "...",
    "—",
    "(",
    ")",
    "[[",
    "]]",
    "<answer>",
    "</think>",
    "<think>",
    "{t}, {t2} and {t3}",
    "2 + 3 = 5",
    "10°C",
    "Ｂ",
    "N/A",
    " ",
    ",",
    "I cannot tell.",
    "{l}. {t}",
    "The video is {t}.",
]


def reply(rng: random.Random, labels: list[str], texts: list[str]) -> str:
    parts = []
    for _ in range(rng.randrange(0, 14)):
        fragment = rng.choice(FRAGMENTS)
        parts.append(
            fragment.format(
                l=rng.choice(labels + ["Z", "9", "I"]),
                l2=rng.choice(labels),
                t=rng.choice(texts),
                t2=rng.choice(texts),
                t3=rng.choice(texts),
            )
        )
    return rng.choice([" ", "", "\n", ". "]).join(parts)


def test_no_exception_for_any_label_set_on_any_reply():
    rng = random.Random(38)
    refused = parsed = 0
    for _ in range(CASES):
        n = rng.randrange(2, 11)
        texts = rng.sample(WORDS + [f"option text {k}" for k in range(10)], n)
        labels = label_sets(rng, n)
        try:
            V4.check_labels(texts, labels)
        except UnreadableLabels:
            refused += 1
            continue
        shown = labels if labels is not None else list(string.ascii_uppercase[:n])
        for options in (texts, None):
            got = V4.parse(reply(rng, shown, texts), options, labels if options is not None else shown)
            assert got.reason in REASONS
            assert got.index is None or 0 <= got.index < n
            parsed += 1
    assert refused and parsed > CASES  # both paths were exercised


@pytest.mark.parametrize(
    "unit",
    [
        "[[C]] ",
        "(2) ",
        "I ",
        "bottle, towel, cup, ",
        "give the option letters (A, B, C...) as [[C]]. ",
        "not cup, ",
    ],
)
def test_a_looping_reply_costs_what_its_first_and_last_parts_cost(unit):
    """The parser reads a looping reply on its first and last 8 KB after a linear cleaning: the time
    for 1 MB is not 64 times the time for 16 KB (a quadratic step would make it ~4,000 times)."""
    options, labels = ["cup", "laptop", "scissors", "book"], ["0", "1", "2", "3"]
    small, large = unit * (16_384 // len(unit)), unit * (1_048_576 // len(unit))

    def cost(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.thread_time()
            V4.parse(text, options, labels)
            best = min(best, time.thread_time() - start)
        return max(best, 1e-3)

    assert cost(large) / cost(small) < 64
