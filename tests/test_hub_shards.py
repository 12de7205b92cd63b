"""A Hub folder's split sizes are checked against its shards even when the card has no
``dataset_info`` (issue 15, case 14): two exports' shards side by side are caught, not loaded as
doubled rows."""

from __future__ import annotations

import shutil

import pytest

from builders.hub.layout import check_hub_folder, read_card, render_card
from marinelife16k.export import export_release
from marinelife16k.sample import write_sample_work_folder


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    work = write_sample_work_folder(tmp_path_factory.mktemp("work"))
    root, cache = tmp_path_factory.mktemp("exports"), tmp_path_factory.mktemp("cache")
    export_release(work, root / "two", cache_dir=cache, max_shard_bytes=70_000)
    export_release(work, root / "one", cache_dir=cache)
    return root


def drop_dataset_info(folder):
    meta, body = read_card(folder)
    meta.pop("dataset_info")
    (folder / "README.md").write_text(render_card(meta, body), encoding="utf-8")


def test_mixed_shard_sets_are_refused_without_dataset_info(exports, tmp_path):
    mixed = tmp_path / "mixed"
    shutil.copytree(exports / "two", mixed)
    shutil.copytree(exports / "one", mixed, dirs_exist_ok=True)
    drop_dataset_info(mixed)
    with pytest.raises(ValueError) as raised:
        check_hub_folder(mixed, cache_dir=tmp_path / "cache")
    message = str(raised.value)
    assert "config 'qa' split 'train': its files are not one set of shards" in message
    assert (
        "train-00000-of-00001.parquet, train-00000-of-00002.parquet, train-00001-of-00002.parquet" in message
    )


def test_a_missing_shard_is_refused(exports, tmp_path):
    gap = tmp_path / "gap"
    shutil.copytree(exports / "two", gap)
    drop_dataset_info(gap)
    (gap / "data" / "qa" / "train-00001-of-00002.parquet").unlink()
    with pytest.raises(ValueError, match="config 'qa' split 'train': its files are not one set of shards"):
        check_hub_folder(gap, cache_dir=tmp_path / "cache")


def test_a_whole_folder_without_dataset_info_passes(exports, tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(exports / "two", plain)
    drop_dataset_info(plain)
    loaded = check_hub_folder(plain, cache_dir=tmp_path / "cache")
    assert {s: len(d) for s, d in loaded["qa"].items()} == {"train": 134, "validation": 17, "test": 52}
