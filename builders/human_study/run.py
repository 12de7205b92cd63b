"""``score_study``: read a study's answer files, score them, and write the report (what the
``human-study score`` command runs)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from builders.human_study.answers import read_all_answers
from builders.human_study.report import models_on_study_items, write_study_report
from builders.human_study.score import read_judge_items, score_bqa_study, score_marinelife_study
from builders.human_study.source import bqa_references
from builders.human_study.study import BQA, Study
from builders.report.document import Report


def score_study(
    study_dir: str | os.PathLike[str],
    answer_files: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    data: str | os.PathLike[str] | None = None,
    predictions: Mapping[str, str | os.PathLike[str]] | None = None,
    judge_results: str | os.PathLike[str] | None = None,
    judge_model: str | None = None,
) -> Report:
    """BQA reads its reference answers from ``data`` (default: the folder the study was drawn from)
    and may score ``predictions`` (model -> JSONL) on the same items; MarineLife-16K compares the
    experts with ``judge_results`` when given."""
    study = Study.read(study_dir)
    raters = read_all_answers(study, answer_files)
    if study.benchmark == BQA:
        if judge_results is not None:
            raise ValueError(
                "judge results are compared with MarineLife-16K expert scores, not with a BQA study"
            )
        split = bqa_references(Path(data or study.data), study.split)
        metrics = score_bqa_study(study, raters, {r["id"]: r for r in split.rows}, split.source)
        if predictions:
            metrics["models"] = models_on_study_items(study, split, predictions)
    else:
        if predictions:
            raise ValueError("--predictions puts models beside the human row of a BQA study; a MarineLife-16K "
                             "study compares the experts with the judge (--judge-results)")  # fmt: skip
        judge = read_judge_items(judge_results, judge_model) if judge_results is not None else None
        metrics = score_marinelife_study(study, raters, judge, str(judge_results) if judge_results else None)
    return write_study_report(study, metrics, out_dir)
