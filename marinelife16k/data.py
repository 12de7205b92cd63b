"""Open one MarineLife-16K split from a work folder (``release/`` inside) or an exported Hub-layout
folder (configs ``qa`` and ``videos``): the one opener of the evaluation runner, the report and the demo.

Either way the split is a :class:`builders.hub.split_data.SplitData` (BQA's shape too): its rows are
the QA records in the paper's JSONL form (:func:`marinelife16k.features.qa_record` for a Hub folder),
its videos the video rows (text columns) by video id, and a video, by id, is a file path (work
folder) or ``{"path", "bytes"}`` read from the Parquet shard when asked for (Hub folder;
:mod:`builders.hub.splits`, nothing copied, no torch).
"""

from __future__ import annotations

import os
from pathlib import Path

from builders.hub.layout import CARD_FILE
from builders.hub.split_data import SplitData, by_id
from builders.hub.splits import NotAHubFolder, read_hub_folder
from marinelife16k.features import VIDEO_TEXT_COLUMNS, qa_record
from marinelife16k.splits import SPLITS
from marinelife16k.workfolder import QA_FILE, RELEASE_DIR, VIDEOS_FILE, read_release

QA_CONFIG, VIDEOS_CONFIG = "qa", "videos"


def _is_work_folder(path: Path) -> bool:
    return (path / RELEASE_DIR / VIDEOS_FILE).is_file() and (path / RELEASE_DIR / QA_FILE).is_file()


def split_names(path: str | os.PathLike[str]) -> list[str]:
    """The splits a work folder or Hub-layout folder holds, in the order train, validation, test."""
    path = Path(path)
    if _is_work_folder(path):
        return read_release(path, check_videos=False, check_qa=False).split_names()
    try:
        present = read_hub_folder(path).shards.get(QA_CONFIG, {})
    except NotAHubFolder:
        raise FileNotFoundError(
            f"{path}: neither a MarineLife-16K work folder ({RELEASE_DIR}/{VIDEOS_FILE}, "
            f"{RELEASE_DIR}/{QA_FILE}) nor a Hub-layout folder (no {CARD_FILE} dataset card)"
        ) from None
    return [name for name in SPLITS if name in present]


def open_split(path: str | os.PathLike[str], split: str, *, check_videos: bool = True) -> SplitData:
    """``split`` of a MarineLife-16K work folder or Hub-layout folder; ``check_videos``: every video
    file of the work folder's release must be on disk (the runner reads them; a report does not)."""
    path = Path(path)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {list(SPLITS)}")
    if _is_work_folder(path):
        release = read_release(path, check_videos=check_videos)
        if split not in release.split_names():
            raise ValueError(f"{path}: no split {split!r} (splits: {release.split_names()})")
        videos = {row["id"]: row for row in release.videos if row["split"] == split}
        rows = [r for r in release.records if r["id"] in videos]
        return SplitData(
            f"work folder {path}", split, rows, videos, lambda vid: release.video_file(videos[vid])
        )
    try:
        hub = read_hub_folder(path)
    except NotAHubFolder:
        raise FileNotFoundError(
            f"{path}: neither a MarineLife-16K work folder ({RELEASE_DIR}/{VIDEOS_FILE}, "
            f"{RELEASE_DIR}/{QA_FILE}) nor a Hub-layout folder (no {CARD_FILE} dataset card)"
        ) from None
    qa, media = hub.split(split, QA_CONFIG), hub.split(split, VIDEOS_CONFIG)
    source = f"Hub folder {path} (config {QA_CONFIG})"
    texts = media.rows(VIDEO_TEXT_COLUMNS)
    position = {row["id"]: i for i, row in enumerate(texts)}
    return SplitData(
        source,
        split,
        [qa_record(example) for example in qa.rows()],
        by_id(texts, f"Hub folder {path} (config {VIDEOS_CONFIG})"),
        lambda vid: media.video(position[vid], "video", vid),
    )
