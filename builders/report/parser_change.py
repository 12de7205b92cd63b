"""The report's "Answer parser change" section: per model, the items a parser version reads
differently from the version the run was scored with, and which way they moved.

A run's predictions file records the parser that read it (``answer_parser`` on each line). The report
re-reads every raw reply with one parser (``--parser NAME@VERSION``, default the current default);
where the recorded version differs, or ``--parser`` is given, it also re-reads them with the
recorded version (or, for a file that records none, the default) and counts the moves
(:func:`builders.scoring.parser_change.parser_change`). Nothing is asked of a model again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from builders.report.document import Section
from builders.report.inputs import preview
from builders.report.tables import markdown_table
from builders.scoring.answer_parsing import DEFAULT_PARSER, AnswerParser
from builders.scoring.label_sets import UnreadableLabels
from builders.scoring.parser_change import TRANSITIONS, ChangeItem, parser_change


def run_parser_change(
    recorded: Any,
    scoring: AnswerParser,
    items: Sequence[ChangeItem],
    ids: Sequence[str],
    make_parser: Callable[[str], AnswerParser],
    *,
    explicit: bool,
) -> dict[str, Any] | None:
    """The change from the parser a run recorded (``recorded``: its provenance's ``answer_parser``)
    to ``scoring``, or None when there is nothing to compare (same version and no ``--parser``).
    ``explicit``: the scoring parser was asked for (``--parser``), so a run is compared even when
    its file records no parser (with the default) or the same version (no change, shown)."""
    if isinstance(recorded, list):
        return {
            "from": recorded,
            "to": scoring.signature,
            "unavailable": "the file's lines record different parser versions",
        }
    if isinstance(recorded, str):
        try:
            old = make_parser(recorded.partition("|")[0])
        except ValueError as error:
            return {"from": recorded, "to": scoring.signature, "unavailable": str(error)}
        source = "recorded"
    elif explicit:
        old, source = make_parser(DEFAULT_PARSER), "default (the file records no parser)"
    else:
        return None
    if old.signature == scoring.signature and not explicit:
        return None
    try:
        change = parser_change(items, old, scoring)
    except UnreadableLabels as error:  # e.g. digit labels, which only version 4 reads
        return {"from": old.signature, "to": scoring.signature, "unavailable": str(error)}
    change["from_source"] = source
    change["changed_ids"] = [ids[i] for i in change.pop("changed_indices")]
    return change


def describe(name: str, change: Mapping[str, Any]) -> str:
    """One line for the terminal: how many items moved, which way, and the count right before and after."""
    if "unavailable" in change:
        return f"{name}: not compared with {change['from']}: {change['unavailable']}"
    moves = ", ".join(f"{v} {k}" for k, v in change["transitions"].items() if v) or "no item changed"
    return (
        f"{name}: {change['changed']} of {change['n']} items read differently by {change['to']} than by "
        f"{change['from']} ({change['from_source']}): {moves}; right {change['correct_before']} -> "
        f"{change['correct_after']}"
    )


def parser_change_section(
    changes: Mapping[str, Mapping[str, Any] | None], scale: float = 1.0
) -> Section | None:
    """One row per compared model; ``scale`` multiplies accuracies (100 for a 0-100 benchmark)."""
    compared = {name: c for name, c in changes.items() if c}
    if not compared:
        return None
    rows, notes = [], []
    for name, c in compared.items():
        if "unavailable" in c:
            notes.append(f"- {name}: not compared with `{c['from']}`: {c['unavailable']}.")
            continue
        before, after = (
            scale * c[k] / c["n"] if c["n"] else None for k in ("correct_before", "correct_after")
        )
        digits = 1 if scale != 1.0 else 3
        rows.append(
            [
                name,
                f"`{c['from']}` ({c['from_source']})",
                f"`{c['to']}`",
                c["n"],
                c["changed"],
                *(c["transitions"][t] for t in TRANSITIONS),
                f"{before:.{digits}f} → {after:.{digits}f}" if before is not None else None,
            ]
        )
        if c["changed_ids"]:
            notes.append(f"- {name}: items read differently: {preview(c['changed_ids'])}.")
    body = [
        "Every raw reply is read again by the parser that scores this report and by the one the run was "
        "scored with; no model is asked again. The columns count items by how they moved between the two "
        "readings (right, wrong, or unparsed, which counts as wrong).",
    ]
    if rows:
        header = ["Model", "From", "To", "n", "changed", *TRANSITIONS, "accuracy before → after"]
        body.append(markdown_table(header, rows, "lll" + "r" * (len(header) - 3)))
    if notes:
        body.append("\n".join(notes))
    return Section("Answer parser change", body)
