"""The work folder: what a MarineLife-16K pipeline hands to the builder.

Layout (the contract between ``builders`` pipelines and :mod:`marinelife16k.builder`)::

    <work>/release/videos.jsonl   one video row per line (see marinelife16k.annotations) + "split"
    <work>/release/qa.jsonl       QA records, exactly the appendix's JSONL schema (no extra keys)
    <work>/release/meta.json      {"seed", "split_sizes", "not_asked": [...], "video_root"?, "provenance"?: {...}}
    <work>/videos/<collection>/<video_file>   the videos, unless meta.json's "video_root" points
                                              elsewhere (absolute, or relative to <work>)

A question's split is its video's split (``qa.id`` = ``videos.id``), so it is stored once, in
``videos.jsonl``. ``provenance`` is free-form (models, prompt versions, the caption threshold tau...)
and is shown in the dataset card. ``not_asked`` lists every conditional question a video does not
get and why (:func:`not_asked_questions`): its attribute is empty, or, for ``central_object_motion``,
the QA generation found that ``movement_behavior`` does not describe the central object.
:func:`write_release` validates before it writes and replaces the ``release`` folder atomically;
:func:`read_release` validates again, naming the file and line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.files.folders import atomic_directory
from builders.files.jsonio import iter_jsonl, read_json_object, write_jsonl_atomic, write_text_atomic
from marinelife16k.annotations import VIDEO_ROW_KEYS, video_row
from marinelife16k.questions import MOTION_TYPE, candidate_types
from marinelife16k.schema import check_records
from marinelife16k.splits import SPLITS, assign_splits
from marinelife16k.vocabulary import CAMERA_KINDS, COLLECTIONS, QUESTION_TYPES

RELEASE_DIR = "release"
VIDEOS_FILE = "videos.jsonl"
QA_FILE = "qa.jsonl"
META_FILE = "meta.json"
RELEASE_MARKER = ".vqabench-release"  # left in release/ by write_release: rebuilding may replace it
DEFAULT_VIDEO_DIR = "videos"
VIDEO_RELEASE_KEYS: tuple[str, ...] = (*VIDEO_ROW_KEYS, "split")
NOT_ASKED = "not_asked"
#: Why a conditional question was not asked: its attribute is empty, or (central_object_motion) the
#: QA generation decided that movement_behavior does not describe the central object.
EMPTY_ATTRIBUTE, NOT_CENTRAL = "attribute empty", "not about the central object"


@dataclass
class Release:
    """A validated work folder: video rows (with ``split``), QA records and metadata."""

    work_dir: Path
    videos: list[dict[str, str]]
    records: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def video_root(self) -> Path:
        return video_root(self.work_dir, self.meta)

    def video_file(self, row: Mapping[str, str]) -> Path:
        """Where the video of a video row (or a QA record) lies on disk."""
        return self.video_root / row["video_path"]

    def splits(self) -> dict[str, str]:
        """Video ``id`` -> split."""
        return {row["id"]: row["split"] for row in self.videos}

    def not_asked(self) -> list[dict[str, str]]:
        """The conditional questions the videos do not get, with why (``meta.json``'s, checked on reading)."""
        return self.meta[NOT_ASKED]

    def split_names(self) -> list[str]:
        """The splits that hold at least one video, in the order train, validation, test."""
        present = {row["split"] for row in self.videos}
        return [name for name in SPLITS if name in present]


def video_root(work_dir: str | os.PathLike[str], meta: Mapping[str, Any]) -> Path:
    root = Path(meta.get("video_root") or DEFAULT_VIDEO_DIR)
    return root if root.is_absolute() else Path(work_dir) / root


def not_asked_questions(
    videos: Iterable[Mapping[str, Any]],
    records: Iterable[Mapping[str, Any]],
    motion_not_asked: Mapping[str, str] | None = None,
) -> list[dict[str, str]]:
    """Every conditional question a video does not get: ``{"id", "type", "why", "reason"}``.

    ``why`` is :data:`EMPTY_ATTRIBUTE` or :data:`NOT_CENTRAL`; ``motion_not_asked`` maps a video id to
    the reason its non-empty ``movement_behavior`` gave no ``central_object_motion`` question (the QA
    generation's). A video without that question, with a movement and no reason, is a ValueError.
    """
    motion_not_asked = motion_not_asked or {}
    asked: dict[str, set[str]] = {}
    for record in records:
        asked.setdefault(record["id"], set()).add(record["type"])
    out, unexplained = [], []
    for video in videos:
        candidates = candidate_types(video)
        for name, qtype in QUESTION_TYPES.items():
            if qtype.mandatory or name in asked.get(video["id"], set()):
                continue
            if name not in candidates:
                attribute = qtype.condition_attribute
                out.append(
                    {
                        "id": video["id"],
                        "type": name,
                        "why": EMPTY_ATTRIBUTE,
                        "reason": f"{attribute} is empty",
                    }
                )
            elif name == MOTION_TYPE and motion_not_asked.get(video["id"], "").strip():
                reason = motion_not_asked[video["id"]].strip()
                out.append({"id": video["id"], "type": name, "why": NOT_CENTRAL, "reason": reason})
            else:
                unexplained.append(f"{video['id']}: {name}")
    if unexplained:
        raise ValueError(
            f"{len(unexplained)} conditional question(s) not asked although their attribute is non-empty, with "
            f"no recorded reason: {unexplained[:10]}"
        )
    return out


def write_release(
    work_dir: str | os.PathLike[str],
    videos: Iterable[Mapping[str, Any]],
    records: Iterable[Mapping[str, Any]],
    *,
    motion_not_asked: Mapping[str, str] | None = None,
    splits: Mapping[str, str] | None = None,
    seed: int = 0,
    sizes: Mapping[str, int | float] | None = None,
    video_root: str | os.PathLike[str] | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> Path:
    """Validate and write ``<work_dir>/release``; return its path.

    ``videos`` are video rows (from :func:`~marinelife16k.annotations.read_annotations`); each gets
    its split from ``splits`` (video ``id`` -> split) or, when that is None, from
    :func:`~marinelife16k.splits.assign_splits` with ``sizes`` and ``seed``. ``records`` must pass
    :func:`~marinelife16k.schema.check_records` against the videos. ``motion_not_asked``: why each
    video with a movement but no ``central_object_motion`` question has none
    (:func:`not_asked_questions`, stored in ``meta.json``). ``video_root`` is stored in ``meta.json``
    when the videos are not under ``<work_dir>/videos``.
    """
    work = Path(work_dir)
    rows = [video_row(dict(v)) for v in videos]
    records = [dict(r) for r in records]
    check_records(records, rows, source="release QA records")
    not_asked = not_asked_questions(rows, records, motion_not_asked)
    if splits is None:
        splits = assign_splits([r["id"] for r in rows], sizes, seed=seed)
    for row in rows:
        split = splits.get(row["id"])
        if split not in SPLITS:
            raise ValueError(f"video {row['id']}: split {split!r} is not one of {list(SPLITS)}")
        row["split"] = split
    meta: dict[str, Any] = {
        "seed": seed,
        "split_sizes": {name: sum(r["split"] == name for r in rows) for name in SPLITS},
        NOT_ASKED: not_asked,
    }
    if video_root is not None:
        meta["video_root"] = os.fspath(video_root)
    if provenance:
        meta["provenance"] = dict(provenance)
    target = work / RELEASE_DIR
    with atomic_directory(target, marker=RELEASE_MARKER, legacy=(VIDEOS_FILE, QA_FILE, META_FILE)) as tmp:
        # Schema field order is kept (not sorted): the files read like the paper's appendix.
        write_jsonl_atomic(tmp / VIDEOS_FILE, rows, sort_keys=False)
        write_jsonl_atomic(tmp / QA_FILE, records, sort_keys=False)
        write_text_atomic(tmp / META_FILE, json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return target


def _check_video_row(path: Path, number: int, row: Any) -> None:
    where = f"{path}: line {number}"
    if not isinstance(row, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(row).__name__}")
    missing = [k for k in VIDEO_RELEASE_KEYS if k not in row]
    extra = [k for k in row if k not in VIDEO_RELEASE_KEYS]
    if missing or extra:
        raise ValueError(f"{where}: missing key(s) {missing}, unexpected key(s) {extra}")
    bad = [k for k in VIDEO_RELEASE_KEYS if not isinstance(row[k], str)]
    if bad:
        raise ValueError(f"{where}: values of {bad} must be strings")
    if row["video_file"] in ("", ".", "..") or "/" in row["video_file"] or "\\" in row["video_file"]:
        raise ValueError(f"{where}: video_file {row['video_file']!r} must be a file name, not a path")
    expected = video_row(row)
    for key in ("id", "video_path"):
        if row[key] != expected[key]:
            raise ValueError(f"{where}: {key} must be {expected[key]!r}, got {row[key]!r}")
    checks = (("collection", COLLECTIONS), ("split", SPLITS), ("camera_kind", CAMERA_KINDS))
    for key, allowed in checks:
        if row[key] not in allowed:
            raise ValueError(f"{where}: {key} {row[key]!r} is not one of {list(allowed)}")


def _check_not_asked(release: Release, meta_path: Path) -> None:
    """``meta.json``'s ``not_asked`` must be exactly the conditional questions the records leave out."""
    recorded = release.meta.get(NOT_ASKED)
    if not isinstance(recorded, list) or not all(isinstance(e, dict) for e in recorded):
        raise ValueError(f"{meta_path}: {NOT_ASKED!r} must be a list of objects")
    motion = {  # an entry without a string id matches no question: the comparison below names it
        e["id"]: str(e.get("reason"))
        for e in recorded
        if e.get("why") == NOT_CENTRAL and isinstance(e.get("id"), str)
    }
    expected = not_asked_questions(release.videos, release.records, motion)
    if recorded != expected:
        extra = [f"{e.get('id')}: {e.get('type')}" for e in recorded if e not in expected]
        missing = [f"{e['id']}: {e['type']}" for e in expected if e not in recorded]
        raise ValueError(
            f"{meta_path}: {NOT_ASKED!r} does not match the QA records (listed but asked or unknown: {extra[:5]}; "
            f"not asked but not listed: {missing[:5]})"
        )


def read_release(
    work_dir: str | os.PathLike[str], *, check_videos: bool = True, check_qa: bool = True
) -> Release:
    """Read and validate ``<work_dir>/release``; with ``check_videos`` every video file must exist.

    ``check_qa=False`` skips the QA schema validation (for a caller that has just validated the
    same files, e.g. the builder generating each split).
    """
    work = Path(work_dir)
    folder = work / RELEASE_DIR
    if not folder.is_dir():
        raise FileNotFoundError(f"{work} is not a MarineLife-16K work folder: {folder} is missing")
    meta = read_json_object(folder / META_FILE)
    videos_path = folder / VIDEOS_FILE
    videos = []
    seen: dict[str, int] = {}
    for number, row in iter_jsonl(videos_path):
        _check_video_row(videos_path, number, row)
        if row["id"] in seen:
            raise ValueError(
                f"{videos_path}: line {number}: video {row['id']} is already at line {seen[row['id']]}"
            )
        seen[row["id"]] = number
        videos.append(row)
    if not videos:
        raise ValueError(f"{videos_path}: no videos")
    records = [record for _, record in iter_jsonl(folder / QA_FILE)]
    release = Release(work, videos, records, meta)
    if check_qa:
        check_records(records, videos, source=str(folder / QA_FILE))
        _check_not_asked(release, folder / META_FILE)
    if check_videos:
        missing = [row["video_path"] for row in videos if not release.video_file(row).is_file()]
        if missing:
            raise FileNotFoundError(
                f"{len(missing)} video file(s) of {videos_path} missing under {release.video_root}: {missing[:10]}"
            )
    return release
