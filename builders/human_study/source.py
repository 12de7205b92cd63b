"""Where a study's items come from: one split of a work folder or an exported Hub-layout folder.

Each benchmark is read through its dataset's one split opener (:func:`bqa.data.open_split`,
:func:`marinelife16k.data.open_split`: items with their clips) and the report's ``load_bqa_split``
for reference answers, each wrapped once here so the rest of the package does not depend on them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bqa.data import open_split as open_bqa_split
from builders.report.bqa_report import BQASplit, load_bqa_split
from builders.report.inputs import Prediction, preview, read_predictions
from builders.video.source import SourceLike
from marinelife16k.data import open_split as open_marinelife_split
from marinelife16k.rubrics import JUDGE_TASKS
from marinelife16k.vocabulary import MULTIPLE_CHOICE

#: Open-ended question type -> the judge rubric its answers are scored with (the judge's own table).
RUBRIC_OF_TYPE: dict[str, str] = {t.question_type: t.rubric for t in JUDGE_TASKS.values()}
_NO_REPLY = Prediction(None, None, 0)


@dataclass(frozen=True)
class Candidate:
    """An item that may be drawn: what raters see (never its answer) and how to get its clip."""

    id: str
    stratum: str
    shown: dict[str, Any]
    clip_key: str  # items sharing a clip share one copy of it
    clip: Callable[[], SourceLike]


@dataclass(frozen=True)
class Candidates:
    source: str
    split: str
    items: list[Candidate]


def bqa_candidates(data: str | os.PathLike[str], split: str) -> Candidates:
    """Every item of a BQA split, stratified by difficulty (Easy/Hard, the paper's STEP4)."""
    opened = open_bqa_split(Path(data), split)
    items = [
        Candidate(
            row["id"],
            row["difficulty"],
            {"question": row["question"], "choices": list(row["choices"])},
            row["id"],
            partial(opened.video, row["id"]),
        )
        for row in opened.rows
    ]
    return Candidates(opened.source, split, items)


def marinelife_candidates(
    data: str | os.PathLike[str],
    split: str,
    predictions: str | os.PathLike[str],
    *,
    types: tuple[str, ...] | None = None,
) -> Candidates:
    """The open-ended questions of a MarineLife-16K split that ``predictions`` answers, stratified by
    question type; what raters see is the question and the model's answer, never the reference."""
    wanted = types or tuple(RUBRIC_OF_TYPE)
    unknown = [t for t in wanted if t not in RUBRIC_OF_TYPE]
    if unknown:
        raise ValueError(f"question types {unknown} are not judged; open-ended types: {list(RUBRIC_OF_TYPE)}")
    replies = read_predictions(predictions, "question_id")
    opened = open_marinelife_split(Path(data), split)
    rows = [r for r in opened.rows if r["question_format"] != MULTIPLE_CHOICE and r["type"] in wanted]
    if not rows:
        raise ValueError(
            f"{opened.source}: the {split} split has no open-ended questions of types {list(wanted)}"
        )
    unanswered = [r["question_id"] for r in rows if (replies.get(r["question_id"]) or _NO_REPLY).text is None]
    if unanswered:  # the judge could not score them either: a partial file is the wrong file
        raise ValueError(
            f"{predictions}: no answer to {len(unanswered)} of the {len(rows)} open-ended questions of the "
            f"{split} split ({opened.source}): {preview(unanswered)}"
        )
    items = [
        Candidate(
            row["question_id"],
            row["type"],
            {
                "question": row["question"],
                "answer_to_rate": replies[row["question_id"]].text,
                "rubric": RUBRIC_OF_TYPE[row["type"]],
            },
            row["id"],
            partial(opened.video, row["id"]),
        )
        for row in rows
    ]
    return Candidates(opened.source, split, items)


def bqa_references(data: str | os.PathLike[str], split: str) -> BQASplit:
    """The reference side of a BQA split (answers, choices, difficulty, demographics; text only)."""
    return load_bqa_split(data, split)
