"""One split of a benchmark as its readers see it: the same shape for BQA and MarineLife-16K.

Each dataset package has one opener (:func:`bqa.data.open_split`, :func:`marinelife16k.data.open_split`)
that reads a pipeline's work folder or an exported Hub-layout folder into a :class:`SplitData`; the
evaluation runners, reports, human study, fine-tuning export and harness integrations read only this.

Videos are looked up by id, for both benchmarks: a MarineLife-16K row is one of several questions
about a video, so a row's position names no video, while every row of either benchmark names its
video by ``row["id"]`` (BQA: one question per clip, so a clip's id is its row's id). Selections
(``--videos``), predictions and reports already key on that id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from builders.video.source import SourceLike


@dataclass(frozen=True)
class SplitData:
    """One split: its rows, its videos by id, and a way to get a video's file."""

    source: str  # "work folder X" or "Hub folder X (config C)", for messages and reports
    split: str
    rows: list[dict[str, Any]]  # the questions, in split order; row["id"] is the video the row is about
    videos: dict[str, dict[str, Any]]  # video id -> the video's text fields, in split order
    read_video: Callable[[str], SourceLike] = field(repr=False)  # id -> path or {"path", "bytes"}

    def __post_init__(self) -> None:
        orphans = sorted({row["id"] for row in self.rows} - set(self.videos))
        if orphans:
            raise ValueError(
                f"{self.source}: rows of the {self.split} split name unknown videos {orphans[:5]}"
            )

    def video(self, video_id: str) -> SourceLike:
        """The video ``video_id``: a file path (work folder) or ``{"path", "bytes"}`` (Hub folder,
        read from its Parquet shard now; nothing copied)."""
        if video_id not in self.videos:
            raise KeyError(f"{self.source}: the {self.split} split has no video {video_id!r}")
        return self.read_video(video_id)


def by_id(rows: Iterable[dict[str, Any]], source: str) -> dict[str, dict[str, Any]]:
    """``rows`` keyed by their ``id``, in order; a repeated id is refused by name (two videos under
    one id would make one of them unreachable)."""
    out: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(rows):
        if row["id"] in out:
            raise ValueError(f"{source}: row {i}: duplicate id {row['id']!r}")
        out[row["id"]] = row
    return out
