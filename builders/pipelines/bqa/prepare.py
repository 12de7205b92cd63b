"""The steps before the LLM: STEP1 candidates (:func:`bqa.candidates.extract_candidates`) and the clips.

``candidates``: one record per BoLD row with its answer and four shuffled choices; a row that
gives no well-posed question is rejected with reason ``step1_no_candidates``.
``clips``: each kept row's clip, whole, without audio (packets copied, no re-encode), at
``<work>/clips/<id>.mp4``; several rows (persons) of one BoLD clip each get their own file, as the
release has one clip per row. A clip that cannot be remuxed is rejected as ``clip_unreadable``.
Both are cheap and deterministic; they resume like the LLM steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tqdm.auto import tqdm

from bqa.candidates import CandidateError, extract_candidates
from bqa.records import BoLDAnnotation
from bqa.vocabulary import GroupMapping
from bqa.workfolder import clip_relpath
from builders.runs.steps import REJECTED, StepRecords
from builders.video.remux import remove_audio
from builders.video.source import VideoError

CANDIDATES, CLIPS = "candidates", "clips"
STEP1_NO_CANDIDATES, CLIP_UNREADABLE = "step1_no_candidates", "clip_unreadable"


def run_candidates(
    work_dir: Path, rows: Sequence[BoLDAnnotation], *, seed: int, mapping: GroupMapping
) -> None:
    records = StepRecords(work_dir, CANDIDATES)
    for item in records.pending([{"id": a.id, "row": a} for a in rows]):
        row: BoLDAnnotation = item["row"]
        try:
            c = extract_candidates(row.emotions, key=row.id, seed=seed, mapping=mapping)
        except CandidateError as err:
            records.add({"id": row.id}, status=REJECTED, reason=STEP1_NO_CANDIDATES, detail=str(err))
            continue
        records.add(
            {
                "id": row.id,
                "answer": c.answer,
                "answer_group": c.answer_group,
                "choices": list(c.choices),
                "choice_groups": list(c.choice_groups),
            }
        )
    records.finish(a.id for a in rows)


def run_clips(work_dir: Path, ids: Sequence[str], rows: Mapping[str, BoLDAnnotation]) -> None:
    records = StepRecords(work_dir, CLIPS)
    pending = records.pending([{"id": i} for i in ids])
    if not pending and records.complete:
        return
    with tqdm(
        total=len(ids), initial=len(ids) - len(pending), desc="clips", unit="clip", disable=None
    ) as bar:
        for item in pending:
            row = rows[item["id"]]
            clip = clip_relpath(row.id)
            if row.clip_path is None:  # read_bold resolves the clip of every row it keeps
                raise ValueError(f"row {row.id}: its clip was never located under the BoLD video root")
            try:
                remove_audio(row.clip_path, Path(work_dir) / clip)  # atomic: never a half-written clip
            except (VideoError, FileNotFoundError) as err:
                records.add({"id": row.id}, status=REJECTED, reason=CLIP_UNREADABLE, detail=str(err))
            else:
                records.add({"id": row.id, "clip": clip})
            bar.update(1)
    records.finish(ids)
