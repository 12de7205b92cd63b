"""A small BQA work folder built from the bundled BoLD sample, for report tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from bqa.bold import read_bold
from bqa.candidates import extract_candidates
from bqa.records import BQARecord, Provenance, StepProvenance
from bqa.sample import sample_root
from bqa.workfolder import ReleaseMeta, make_record, write_release

PROVENANCE = Provenance(*(StepProvenance("test-model", s, "1") for s in ("question", "filter", "difficulty")))


def write_work_folder(
    work: Path, n_test: int, edit: Callable[[int, BQARecord], BQARecord] = lambda i, r: r
) -> list[BQARecord]:
    """The sample's records (clips copied into ``work``): the first ``n_test``, each passed through
    ``edit(i, record)``, are the test split, the next 20 train, the rest validation. Returns the test split."""
    records = []
    for a in read_bold(sample_root()).annotations:
        record = make_record(
            a,
            extract_candidates(a.emotions, key=a.id, seed=5),
            question="How does the person in this clip feel?",
            difficulty="Easy",
            difficulty_reason="right_choice",
            provenance=PROVENANCE,
        )
        (work / record.clip).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(a.clip_path, work / record.clip)
        records.append(record)
    test = [edit(i, r) for i, r in enumerate(records[:n_test])]
    splits = {"train": records[n_test : n_test + 20], "validation": records[n_test + 20 :], "test": test}
    write_release(work, splits, ReleaseMeta(seed=5))
    return test
