"""The labels a multiple-choice item shows its options with, read as data before any reply is.

Video benchmarks label options ``A``-``E``, ``a``-``e``, ``0``-``4``, ``1``-``5``, ``(1)``, ``[A]``
or ``A.``. Answer parser version 4 reads every such set; a set it cannot read (mixed kinds, digits
that do not count up from 0 or 1, repeats, words) is refused with an :class:`UnreadableLabels`
naming it, at the scorer's entry, so that no run stops in the middle of scoring on item 2,000.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from string import ascii_uppercase

# A label as shown: one letter or a number, optionally in brackets or followed by ".", ")" or ":".
_SHOWN = re.compile(r"\s*[(\[]?\s*([A-Za-z]|\d{1,2})\s*[)\].:]?\s*")


class UnreadableLabels(ValueError):
    """A label set the answer parser cannot read; the message names the set and why."""


@dataclass(frozen=True)
class LabelSet:
    """Option labels in option order, as the parser matches them: letters upper-cased (a reply may
    write either case), numbers as written. ``digits``: the labels are numbers, which a reply names
    only in brackets, as "option 2", right after a declaration or beside their option's text."""

    labels: tuple[str, ...]
    digits: bool


def default_labels(n: int) -> tuple[str, ...]:
    """``A``, ``B``, ... one per option."""
    return tuple(ascii_uppercase[:n])


def letters_only(letters: Sequence[str], n: int) -> tuple[str, ...]:
    """Versions 2 and 3: distinct single letters only (upper-cased)."""
    labels = tuple(str(s).upper() for s in letters)
    if len(labels) != n:
        raise UnreadableLabels(f"{len(labels)} letters for {n} options: {list(letters)}")
    if any(len(s) != 1 or not s.isalpha() for s in labels) or len(set(labels)) != n:
        raise UnreadableLabels(f"option letters must be distinct single letters, got {list(letters)}")
    return labels


def label_set(labels: Sequence[str] | None, n: int) -> LabelSet:
    """The :class:`LabelSet` of ``n`` options shown with ``labels`` (None: ``A``, ``B``, ...).

    Letters of one case or the other, each once; or numbers counting up by one from 0 or from 1;
    each optionally written ``(1)``, ``[A]``, ``A.``, ``1)`` or ``1:``. Anything else raises
    :class:`UnreadableLabels`.
    """
    if labels is None:
        return LabelSet(default_labels(n), digits=False)
    shown = [str(s) for s in labels]
    if len(shown) != n:
        raise UnreadableLabels(f"{len(shown)} labels for {n} options: {shown}")
    cores = []
    for s in shown:
        m = _SHOWN.fullmatch(s)
        if m is None:
            raise UnreadableLabels(
                f"cannot read the label set {shown}: {s!r} is not a letter or a number "
                "(optionally bracketed, or followed by '.', ')' or ':')"
            )
        cores.append(m.group(1))
    if all(c.isdigit() for c in cores):
        numbers = [int(c) for c in cores]
        if numbers[0] not in (0, 1) or numbers != list(range(numbers[0], numbers[0] + n)):
            raise UnreadableLabels(
                f"cannot read the label set {shown}: numbers must count up by one from 0 or 1"
            )
        return LabelSet(tuple(str(k) for k in numbers), digits=True)
    if not all(c.isalpha() for c in cores):
        raise UnreadableLabels(f"cannot read the label set {shown}: it mixes letters and numbers")
    upper = tuple(c.upper() for c in cores)
    if len(set(upper)) != n:
        raise UnreadableLabels(f"cannot read the label set {shown}: a letter repeats (case does not count)")
    return LabelSet(upper, digits=False)
