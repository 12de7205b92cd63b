"""The toy's metric: accuracy of the colour a reply names (the first vocabulary word in it)."""

from __future__ import annotations

from vqabench_toy.vocabulary import COLOURS


def parse(reply: str | None) -> str | None:
    words = [w.strip(".,!?").lower() for w in (reply or "").split()]
    return next((w for w in words if w in COLOURS), None)


def accuracy(replies: list[str | None], answers: list[str]) -> float:
    if len(replies) != len(answers) or not answers:
        raise ValueError(f"{len(replies)} replies for {len(answers)} answers")
    return sum(parse(r) == a for r, a in zip(replies, answers, strict=True)) / len(answers)
