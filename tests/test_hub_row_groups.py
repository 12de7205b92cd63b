"""A media split is written in small row groups, so a reader's memory is bounded by one group,
not by the split (issue 16: a 300-clip split was one 14 MB row group, and the runner's peak RSS
grew with the split). Expected counts are worked by hand from the rows and the clip's size."""

from __future__ import annotations

import math

import datasets
import pyarrow.parquet as pq
import pytest

from builders.hub import layout
from builders.hub.layout import write_hub_folder
from builders.hub.splits import read_hub_folder
from builders.testing.clips import write_clip


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return write_clip(tmp_path_factory.mktemp("clip") / "c.mp4", num_frames=10, width=64, height=48)


def _export(out, clip, rows: int):
    features = datasets.Features({"id": datasets.Value("string"), "video": datasets.Video()})
    split = datasets.Dataset.from_dict(
        {"id": [f"r{i}" for i in range(rows)], "video": [str(clip)] * rows}, features=features
    )
    text = datasets.Dataset.from_dict({"id": [f"r{i}" for i in range(rows)]})
    write_hub_folder(
        out,
        {"videos": datasets.DatasetDict({"test": split}), "text": datasets.DatasetDict({"test": text})},
        default_config="videos",
        card_body="test",
    )
    return out


def _groups(folder, config):
    (shard,) = (folder / "data" / config).glob("test-*.parquet")
    meta = pq.read_metadata(shard)
    return [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]


def test_media_splits_get_row_groups_of_at_most_100_rows(tmp_path, clip):
    folder = _export(tmp_path / "out", clip, 250)
    assert _groups(folder, "videos") == [100, 100, 50]  # a tiny clip: the row cap decides
    assert _groups(folder, "text") == [250]  # no media: datasets' own rule (one group under 100 MB)
    split = read_hub_folder(folder).split("test", "videos")
    for i in (249, 0, 150, 99, 100):  # across groups, in any order
        assert split.cell(i, "video") == {"path": "c.mp4", "bytes": clip.read_bytes()}


def test_large_clips_get_row_groups_of_about_the_byte_budget(tmp_path, clip, monkeypatch):
    size = clip.stat().st_size
    monkeypatch.setattr(layout, "MEDIA_ROW_GROUP_BYTES", 7 * size + size // 2)  # room for 7 rows each
    folder = _export(tmp_path / "out", clip, 30)
    groups = _groups(folder, "videos")
    assert len(groups) == math.ceil(30 / 7) and max(groups) == 7 and sum(groups) == 30
    loaded = datasets.load_dataset(str(folder), "videos", split="test", cache_dir=str(tmp_path / "cache"))
    assert (
        loaded.cast_column("video", datasets.Video(decode=False))[29]["video"]["bytes"] == clip.read_bytes()
    )


def test_row_group_rows_by_hand():
    mb = 1024 * 1024
    assert layout.row_group_rows(1443, 195 * mb) == 100  # BQA's test split: ~138 KB a clip
    assert layout.row_group_rows(2000, 4000 * mb) == 8  # 2 MB clips: 16 MB // 2 MB
    assert layout.row_group_rows(3, 3 * 100 * mb) == 1  # a clip above the budget stands alone
