"""Reading the answer files the raters' pages export, checked against the study record.

Every problem is an error naming the file (and the item): a file from another study or benchmark,
a rater the study does not know or given twice, items missing, unanswered or not assigned to that
rater, a choice outside the item's choices, a score outside a criterion's scale.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from builders.files.jsonio import read_json_object
from builders.human_study.study import ANSWERS_FORMAT, BQA, FORMAT_VERSION, Study
from builders.report.inputs import preview


@dataclass(frozen=True)
class RaterAnswers:
    rater: str
    path: Path
    answers: dict[str, Any]  # item id -> choice index (BQA) or {criterion: score} (MarineLife)
    time_ms: dict[str, int]


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_value(study: Study, item_id: str, row: dict[str, Any], where: str) -> Any:
    shown = study.item(item_id).shown
    if study.benchmark == BQA:
        choice = row.get("choice")
        if not _whole(choice) or not 0 <= choice < len(shown["choices"]):
            raise ValueError(f"{where}: choice {choice!r} is not one of 0..{len(shown['choices']) - 1}")
        label = row.get("choice_label")
        if label is not None and label != shown["choices"][choice]:
            raise ValueError(
                f"{where}: choice {choice} is {shown['choices'][choice]!r} in the study, the file says {label!r}"
            )
        return choice
    scores = row.get("scores")
    rubric = study.rubrics[shown["rubric"]]
    names = [c["name"] for c in rubric["criteria"]]
    if not isinstance(scores, dict) or set(scores) != set(names):
        raise ValueError(f"{where}: expected one score per criterion {names}, got {scores!r}")
    for c in rubric["criteria"]:
        value = scores[c["name"]]
        if not _whole(value) or not c["min"] <= value <= c["max"]:
            raise ValueError(
                f"{where}: {c['name']} score {value!r} is not a whole number in {c['min']}-{c['max']}"
            )
    return {n: scores[n] for n in names}


def read_answers(study: Study, path: str | os.PathLike[str]) -> RaterAnswers:
    """One rater's exported file, every assigned item answered exactly once."""
    path = Path(path)
    data = read_json_object(path)
    if data.get("format") != ANSWERS_FORMAT or data.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: not a human-study answers file (format {data.get('format')!r}, version {data.get('format_version')!r})"
        )
    if data.get("study_id") != study.study_id or data.get("benchmark") != study.benchmark:
        raise ValueError(
            f"{path}: answers to another study ({data.get('benchmark')} study {data.get('study_id')!r}); "
            f"this study is {study.benchmark} {study.study_id!r}"
        )
    rater = data.get("rater")
    if rater not in study.raters:
        raise ValueError(f"{path}: rater {rater!r} is not one of the study's raters {study.raters}")
    rows = data.get("answers")
    if not isinstance(rows, list):
        raise ValueError(f"{path}: 'answers' must be a list")
    assigned = set(study.assigned(rater))
    answers: dict[str, Any] = {}
    times: dict[str, int] = {}
    unanswered = []
    for n, row in enumerate(rows):
        item_id = row.get("item_id") if isinstance(row, dict) else None
        where = f"{path}, answer {n} (item {item_id})"
        if item_id not in assigned:
            raise ValueError(f"{where}: not an item assigned to rater {rater}")
        if item_id in answers or item_id in unanswered:
            raise ValueError(f"{where}: the item is answered twice")
        if row.get("choice" if study.benchmark == BQA else "scores") is None:
            unanswered.append(item_id)
            continue
        answers[item_id] = _check_value(study, item_id, row, where)
        time_ms = row.get("time_ms", 0)
        if not _whole(time_ms) or time_ms < 0:
            raise ValueError(f"{where}: time_ms must be a whole number >= 0, got {time_ms!r}")
        times[item_id] = time_ms
    missing = [i for i in study.assigned(rater) if i not in answers]
    if missing:
        raise ValueError(
            f"{path}: rater {rater} has not answered {len(missing)} of their {len(assigned)} items: "
            f"{preview(missing)} (open the page again, finish, and download again)"
        )
    return RaterAnswers(rater, path, answers, times)


def read_all_answers(study: Study, paths: Sequence[str | os.PathLike[str]]) -> dict[str, RaterAnswers]:
    """rater -> answers, one file per rater, from every rater of the study (the assignment is
    balanced; a rater left out would leave their items short of ratings)."""
    out: dict[str, RaterAnswers] = {}
    for path in paths:
        answers = read_answers(study, path)
        if answers.rater in out:
            raise ValueError(f"{path}: rater {answers.rater} already answered in {out[answers.rater].path}")
        out[answers.rater] = answers
    absent = [r for r in study.raters if r not in out]
    if absent:
        raise ValueError(f"no answers file from rater(s) {absent}; the study has raters {study.raters}")
    return {r: out[r] for r in study.raters}
