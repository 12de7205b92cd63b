"""STEP1 of the paper: pick the answer and three distractors of a question from BoLD's 26 scores.

Rules (pure functions, no I/O):

* The answer is the emotion with the highest score. Ties go to the emotion that comes first in
  BoLD's column order (:data:`bqa.vocabulary.EMOTIONS`), so the result never depends on dict order.
  A row whose highest score is not positive names no emotion and is refused.
* One distractor is drawn from each group other than the answer's (with a mapping of more than 4
  groups, 3 of the other groups are drawn first). A distractor must score strictly below the
  answer: a label tied with the answer would be a second right answer. A group whose labels all
  tie with the answer leaves no valid distractor and the row is refused (:class:`CandidateError`).
* The four choices are then shuffled.

All draws use one ``random.Random`` seeded from ``(seed, key)`` (``key`` is the row id) through
SHA-256, so a row gets the same candidates whatever the order or subset of rows being processed,
on every platform and Python version (``Random.choice``/``shuffle`` are stable since 3.2).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass

from bqa.records import NUM_CHOICES
from bqa.vocabulary import DEFAULT_GROUP_MAPPING, EMOTIONS, GroupMapping


class CandidateError(ValueError):
    """A row that cannot give a well-posed question (no positive score, or no valid distractor)."""


@dataclass(frozen=True)
class Candidates:
    answer: str
    answer_group: str
    choices: tuple[str, ...]  # shuffled; contains the answer
    choice_groups: tuple[str, ...]  # group of each choice, aligned with ``choices``


def top_emotion(emotions: Mapping[str, float]) -> str:
    """The highest-scored emotion; ties go to the one earliest in BoLD order."""
    missing = [e for e in EMOTIONS if e not in emotions]
    if missing:
        raise ValueError(f"scores missing for {missing}")
    best = EMOTIONS[0]
    for label in EMOTIONS[1:]:
        if emotions[label] > emotions[best]:  # strict: an equal score keeps the earlier label
            best = label
    return best


def row_rng(seed: int, key: str) -> random.Random:
    """A generator that depends only on ``seed`` and ``key``."""
    digest = hashlib.sha256(f"{seed}\x00{key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def extract_candidates(
    emotions: Mapping[str, float], *, key: str, seed: int, mapping: GroupMapping = DEFAULT_GROUP_MAPPING
) -> Candidates:
    """STEP1 for one row (``key``: its id, so that each row has its own reproducible draw)."""
    answer = top_emotion(emotions)
    top = emotions[answer]
    if not top > 0:
        raise CandidateError(f"{key}: no emotion has a positive score (highest: {answer}={top})")
    answer_group = mapping.group_of[answer]
    rng = row_rng(seed, key)
    others = [g for g in mapping.group_names if g != answer_group]
    if len(others) > NUM_CHOICES - 1:
        chosen = set(rng.sample(others, NUM_CHOICES - 1))
        others = [g for g in others if g in chosen]
    picks = [(answer, answer_group)]
    for group in others:
        pool = [label for label in mapping.groups[group] if emotions[label] < top]
        if not pool:
            raise CandidateError(
                f"{key}: every emotion of group {group!r} scores as high as the answer {answer!r} ({top}); "
                "no distractor would be wrong"
            )
        picks.append((rng.choice(pool), group))
    rng.shuffle(picks)
    return Candidates(
        answer=answer,
        answer_group=answer_group,
        choices=tuple(label for label, _ in picks),
        choice_groups=tuple(group for _, group in picks),
    )
