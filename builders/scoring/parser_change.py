"""What re-scoring with another answer-parser version does to a run: which items are read
differently, and which way each moved (right -> wrong, wrong -> right, parsed -> unparsed, ...).

A researcher upgrading the tool re-reads the raw replies of a predictions file with the version that
scored it and with the new one; the difference is the effect of the upgrade on a published number,
item by item. Both readings come from the registered parsers themselves
(:mod:`builders.scoring.answer_parsing`), nothing is asked again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from builders.scoring.answer_parsing import AnswerParser
from builders.scoring.label_sets import UnreadableLabels

RIGHT, WRONG, UNPARSED = "right", "wrong", "unparsed"
#: Every way an item can move, in the order reports show them.
TRANSITIONS: tuple[str, ...] = (
    "wrong->right",
    "unparsed->right",
    "right->wrong",
    "right->unparsed",
    "wrong->unparsed",
    "unparsed->wrong",
    "wrong->other wrong",
)


@dataclass(frozen=True)
class ChangeItem:
    """One multiple-choice item: the raw reply, its options (None: letters only), the letters they
    were shown with (None: A, B, ...) and the index of the correct option."""

    reply: str | None
    options: Sequence[str] | None
    letters: Sequence[str] | None
    reference: int


def _state(index: int | None, reference: int) -> str:
    return UNPARSED if index is None else RIGHT if index == reference else WRONG


def parser_change(items: Sequence[ChangeItem], old: AnswerParser, new: AnswerParser) -> dict:
    """How ``new`` reads ``items`` compared with ``old``.

    A label set either parser cannot read raises :class:`UnreadableLabels` naming the item, before
    any reply is read. Returns ``from`` and ``to`` (the two signatures), ``n`` items, ``correct_before`` and
    ``correct_after``, ``changed`` (items read as another option or none), ``transitions``
    (:data:`TRANSITIONS` -> count, zeros included) and ``changed_indices``.
    """
    for i, item in enumerate(items):  # every label set is checked before any reply is read
        for parser in (old, new):
            try:
                parser.check_labels(item.options, item.letters)
            except UnreadableLabels as error:
                raise UnreadableLabels(f"item {i} ({parser.signature}): {error}") from None
    transitions = dict.fromkeys(TRANSITIONS, 0)
    changed: list[int] = []
    before = after = 0
    for i, item in enumerate(items):
        a = old.parse(item.reply, item.options, item.letters).index
        b = new.parse(item.reply, item.options, item.letters).index
        was, now = _state(a, item.reference), _state(b, item.reference)
        before += was == RIGHT
        after += now == RIGHT
        if a == b:
            continue
        changed.append(i)
        transitions["wrong->other wrong" if was == now == WRONG else f"{was}->{now}"] += 1
    return {
        "from": old.signature,
        "to": new.signature,
        "n": len(items),
        "correct_before": before,
        "correct_after": after,
        "changed": len(changed),
        "transitions": transitions,
        "changed_indices": changed,
    }
