"""Input checks shared by the metrics: every error names the argument and the item."""

from __future__ import annotations

from collections.abc import Sequence


def check_same_length(**columns: Sequence | None) -> int:
    """Number of items, after checking that every given (non-None) column has that many."""
    given = {name: len(col) for name, col in columns.items() if col is not None}
    if len(set(given.values())) > 1:
        sizes = ", ".join(f"{name}={size}" for name, size in given.items())
        raise ValueError(f"inputs differ in length: {sizes}")
    n = next(iter(given.values()), 0)
    if n == 0:
        raise ValueError("no items to score: the inputs are empty")
    return n


def check_reply(index: int, reply: object) -> str | None:
    """A model reply must be text (None counts as no answer)."""
    if reply is not None and not isinstance(reply, str):
        raise ValueError(
            f"predictions[{index}]: expected the model's raw text reply, got {type(reply).__name__}"
        )
    return reply
