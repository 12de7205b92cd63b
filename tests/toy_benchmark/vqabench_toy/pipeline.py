"""The toy's two-step pipeline: sample rows -> questions (step ``questions``) -> split release (step
``release``), each step's records in the work folder, as the real pipelines keep theirs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from builders.runs.summary import BuildSummary, StepSummary
from vqabench_toy.data import read_sample
from vqabench_toy.vocabulary import COLOURS, NAME, SPLITS


class ToyDetails:
    def note(self) -> str:
        return ""

    def lines(self) -> list[str]:
        return []

    def split_note(self, counts: Mapping[str, int]) -> str:
        return ""

    def to_json(self) -> dict[str, Any]:
        return {}


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def build(work: Path, sample: Path) -> BuildSummary[ToyDetails]:
    items = read_sample(sample)
    questions = [
        {"id": r["id"], "question": f"Which colour does this sentence name? {r['sentence']}",
         "choices": list(COLOURS), "answer": r["colour"]}
        for r in items
    ]  # fmt: skip
    _write(work / "questions.jsonl", questions)
    splits = {split: [q for i, q in enumerate(questions) if SPLITS[i % 3 == 2] == split] for split in SPLITS}
    for split, rows in splits.items():
        _write(work / "release" / f"{split}.jsonl", rows)
    return BuildSummary(
        benchmark=NAME, work_dir=work, inputs=len(items), input_noun="sentence",
        steps={"questions": StepSummary(len(questions), complete=True), "release": StepSummary(len(questions), complete=True)},
        release=work / "release", splits={s: {"rows": len(r), "videos": 0} for s, r in splits.items()},
        tokens=(0, 0), run=None, details=ToyDetails(),
    )  # fmt: skip
