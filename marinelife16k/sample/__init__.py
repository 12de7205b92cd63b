"""The bundled MarineLife-16K sample: 24 short real MP4 clips, their attribute rows and QA records.

Regenerate with ``python -m builders.testing.samples.make_marinelife_sample`` (deterministic). The clips are
synthetic pictures standing in for the real footage; the attributes, captions and questions are
realistic values written for the sample. ``qa.jsonl`` holds hand-written sample QA records (distractors
from fixed pools, no LLM), the ground truth of the sample work folder (:func:`write_sample_work_folder`).

``pipeline_replies.jsonl`` and ``pipeline_settings.json`` are recorded replies of a deterministic *scripted
responder* (not a model) with the settings they were recorded under: ``vqabench marinelife build --work WORK
--sample --replay`` reruns the regeneration pipeline on the sample offline from them. Re-record with
``python -m builders.testing.samples.record_marinelife_pipeline``.

``baseline_replies.jsonl`` / ``baseline_settings.json`` (answers of a *scripted baseline*, not a model,
to the rebuilt release's questions) and ``judge_replies.jsonl`` / ``judge_settings.json`` (a scripted
judge's scores of those answers) are what ``vqabench demo`` replays and scores; re-record with
``python -m builders.testing.samples.record_marinelife_baseline``.
"""

from __future__ import annotations

import os
from pathlib import Path

from builders.files.jsonio import read_jsonl
from marinelife16k.annotations import read_annotations
from marinelife16k.workfolder import read_release, write_release

ATTRIBUTES_FILE = "attributes.csv"
QA_FILE = "qa.jsonl"
VIDEO_DIR = "videos"
#: Why a release from the sample is not the dataset (stated on its card; push refuses it by default).
SAMPLE_REASON = "built from the bundled MarineLife-16K sample (synthetic clips), not from the real footage"
#: Seed of the sample's split (the paper's proportions, 65 / 10 / 25 %, of 24 videos: 16 / 2 / 6).
SPLIT_SEED = 0


def sample_root() -> Path:
    """The folder holding ``attributes.csv``, ``qa.jsonl`` and ``videos/<collection>/<file>.mp4``."""
    return Path(__file__).resolve().parent


def sample_attributes_path() -> Path:
    return sample_root() / ATTRIBUTES_FILE


def sample_qa_path() -> Path:
    return sample_root() / QA_FILE


def sample_video_root() -> Path:
    return sample_root() / VIDEO_DIR


def sample_records() -> list[dict]:
    """The sample's hand-written QA records (``qa.jsonl``)."""
    return read_jsonl(sample_qa_path())


def sample_motion_not_asked(rows: list[dict], records: list[dict]) -> dict[str, str]:
    """Why each sample video with a movement has no ``central_object_motion`` record: the hand-written
    sample decided that its ``movement_behavior`` describes another object."""
    asked = {r["id"] for r in records if r["type"] == "central_object_motion"}
    return {
        row[
            "id"
        ]: f"hand-written sample: movement_behavior ({row['movement_behavior']!r}) does not describe the "
        f"central object ({row['central_object']!r})"
        for row in rows
        if row["movement_behavior"] and row["id"] not in asked
    }


def write_sample_work_folder(work_dir: str | os.PathLike[str], *, seed: int = SPLIT_SEED) -> Path:
    """A work folder (see :mod:`marinelife16k.workfolder`) for the sample's ground-truth release.

    The videos are not copied: ``meta.json`` points at the installed sample's video folder.
    """
    rows = read_annotations(sample_attributes_path(), video_root=sample_video_root())
    records = sample_records()
    write_release(
        work_dir,
        rows,
        records,
        motion_not_asked=sample_motion_not_asked(rows, records),
        seed=seed,
        video_root=sample_video_root(),
        provenance={
            "source": "bundled sample (marinelife16k/sample)",
            "distractors": "hand-written pools",
            "sample": SAMPLE_REASON,
        },
    )
    read_release(work_dir)
    return Path(work_dir)
