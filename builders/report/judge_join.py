"""Which model's predictions a judge result belongs to: by the predictions file it judged, not only
by name.

``vqabench marinelife judge FILE`` names its result after the file's stem unless told ``--name``;
``vqabench report --predictions NAME=FILE`` names the same run as the user likes. Joined by name
alone, one model became two rows (one with accuracy, one with judge scores). The judge records a
digest of the file it read (:func:`predictions_digest`); the report gives a judge result whose name
matches no predictions the name of the predictions file with that digest.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from builders.scoring.judge_results import JudgeResult

DIGEST_KEY = "predictions_sha256"


def predictions_digest(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a predictions file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def _digests_of(tasks: Mapping[str, JudgeResult]) -> set[str]:
    return {
        str(r.provenance[DIGEST_KEY]) for r in tasks.values() if r.provenance and r.provenance.get(DIGEST_KEY)
    }


def join_by_predictions_file(
    judge: Mapping[str, dict[str, JudgeResult]], predictions: Mapping[str, str | os.PathLike[str]]
) -> tuple[dict[str, dict[str, JudgeResult]], list[str]]:
    """``judge`` (model -> task -> result) with each result whose name no predictions carry renamed
    to the predictions judged (same file digest), and a line per renaming. Names that match, and
    results without a recorded digest, are kept as they are."""
    unmatched = [name for name in predictions if name not in judge]
    digests = {name: predictions_digest(predictions[name]) for name in unmatched}
    joined: dict[str, dict[str, JudgeResult]] = {}
    notes = []
    for name, tasks in judge.items():
        target = name
        if name not in predictions:
            found = [p for p, d in digests.items() if d in _digests_of(tasks) and p not in joined]
            if len(found) == 1:
                target = found[0]
                notes.append(
                    f"judge results {name!r} joined to predictions {target!r}: the same predictions file"
                )
        if target in joined:
            raise ValueError(f"two sets of judge results for {target!r} ({name!r} is one)")
        joined[target] = tasks
    return joined, notes
