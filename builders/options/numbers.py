"""Argparse types for numeric options: a value out of range is a usage error at parse time.

``type=int`` takes ``--limit -2`` (which then sliced 3 of 5 rows), ``--limit 0`` (which meant "all")
and ``type=float`` takes ``--max-cost nan`` (a budget nothing exceeds). Every numeric option of every
command goes through one of these instead, so ``vqabench ... --limit 0`` stops with argparse's usage
line and exit 2 before anything is read or sent. Argparse and the standard library only (every
``--help`` imports this).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _named(function: Callable, name: str) -> Callable:
    function.__name__ = name  # argparse names the type in "invalid <name> value" messages
    return function


def int_at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """A whole number ``>= low`` (and ``<= high``)."""

    def parse(text: str) -> int:
        value = _integer(text)
        if value < low or (high is not None and value > high):
            wanted = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"expected a whole number {wanted}, got {text!r}")
        return value

    return _named(parse, "integer")


def number_at_least(low: float, *, above: bool = False, high: float | None = None) -> Callable[[str], float]:
    """A finite number ``>= low`` (``> low`` with ``above``; and ``<= high``): never nan or inf."""

    def parse(text: str) -> float:
        value = _number(text)
        if (value <= low if above else value < low) or (high is not None and value > high):
            wanted = f"{'above' if above else 'at least'} {low:g}" + (
                f" and at most {high:g}" if high is not None else ""
            )
            raise argparse.ArgumentTypeError(f"expected a number {wanted}, got {text!r}")
        return value

    return _named(parse, "number")


POSITIVE_INT = int_at_least(1)  # a count of things: --limit, --ahead, --num-frames, --size, ...
NON_NEGATIVE_INT = int_at_least(0)  # --llm-max-retries
POSITIVE_NUMBER = number_at_least(0, above=True)  # --fps, --llm-timeout
NON_NEGATIVE_NUMBER = number_at_least(0)  # money: --max-cost, --price-in, --price-out
