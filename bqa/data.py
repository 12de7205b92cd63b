"""Open one BQA split from a work folder (``release/`` inside) or an exported Hub-layout folder: the
one opener of the evaluation runner, the report and the demo.

Either way the rows are the same JSON values (the Hub folder's Parquet cells, or the work folder's
records as :meth:`bqa.records.BQARecord.to_json` writes them), only the ``columns`` asked for, and
a row's video, by its id, is a clip path (work folder) or ``{"path", "bytes"}`` read from the Parquet
shard when asked for (Hub folder; :mod:`builders.hub.splits`, nothing copied, no torch). The shape is
MarineLife-16K's too (:class:`builders.hub.split_data.SplitData`); BQA adds its release's tables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bqa.features import SPLITS, TEXT_COLUMNS
from bqa.vocabulary import GroupMapping
from bqa.workfolder import META_FILE, RELEASE_DIR, meta_path, read_release
from builders.hub.layout import CARD_FILE
from builders.hub.split_data import SplitData, by_id
from builders.hub.splits import NotAHubFolder, read_hub_folder


@dataclass(frozen=True)
class BQASplitData(SplitData):
    """A BQA split (:class:`~builders.hub.split_data.SplitData`: ``columns`` only; one question per
    clip, so ``videos[id]`` is the row itself) and the release's tables."""

    # The release's own tables (work folder); None for a Hub folder, whose card records none.
    group_mapping: GroupMapping | None = None
    demographic_codes: Mapping[str, Mapping[int, str]] | None = None


def open_split(
    path: str | os.PathLike[str],
    split: str,
    columns: Sequence[str] = TEXT_COLUMNS,
    *,
    check_clips: bool = True,
) -> BQASplitData:
    """``split`` of a BQA work folder or Hub-layout folder; ``check_clips``: every clip of the work
    folder's release must be on disk (the runner reads them; a report does not)."""
    path = Path(path)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {list(SPLITS)}")
    if "id" not in columns:
        raise ValueError(f"columns {list(columns)} lack 'id', which names each row's video")
    if meta_path(path).is_file():
        release = read_release(path, check_clips=check_clips)
        records = release.splits[split]
        rows = [r.to_json() for r in records]
        missing = [c for c in columns if rows and c not in rows[0]]
        if missing:
            raise ValueError(f"{path}: the release's records have no field(s) {missing}")
        source = f"work folder {path}"
        kept = [{c: row[c] for c in columns} for row in rows]
        clips = {r.id: r for r in records}  # ids are unique in a release (read_release checks)
        return BQASplitData(
            source,
            split,
            kept,
            by_id(kept, source),
            lambda vid: release.clip_path(clips[vid]),
            release.meta.group_mapping,
            release.meta.demographic_codes,
        )
    try:
        hub = read_hub_folder(path).split(split)
    except NotAHubFolder:
        raise FileNotFoundError(
            f"{path}: neither a BQA work folder (no {RELEASE_DIR}/{META_FILE}) nor a Hub-layout folder "
            f"(no {CARD_FILE} dataset card)"
        ) from None
    rows = hub.rows(columns)
    source = f"Hub folder {path} (config {hub.config})"
    position = {row["id"]: i for i, row in enumerate(rows)}
    return BQASplitData(
        source, split, rows, by_id(rows, source), lambda vid: hub.video(position[vid], "video", vid)
    )
