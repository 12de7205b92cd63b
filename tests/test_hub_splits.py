"""The one Hub-folder reader (``builders.hub.splits``) and the datasets' openers over it: rows and
video cells equal what ``datasets.load_dataset`` gives on the same folder, across several shards
and row groups; opening leaves no copy of the dataset behind; what is no Hub folder is refused by name.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from hub_helpers import record_checksums

from bqa.data import open_split as open_bqa
from builders.cli import main as cli_main
from builders.hub.splits import NotAHubFolder, read_hub_folder, read_split
from marinelife16k.data import open_split as open_marinelife
from marinelife16k.export import export_release
from marinelife16k.sample import write_sample_work_folder

SPLITS = ("train", "validation", "test")
ITEM_COLUMNS = ("id", "question", "choices", "answer", "answer_group", "choice_groups", "difficulty", "gender", "age",
                "ethnicity")  # fmt: skip


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """The BQA sample (one shard per split, the test split rewritten as two shards of 2-row groups)
    and the MarineLife-16K sample exported with one row per shard."""
    root = tmp_path_factory.mktemp("hub-splits")
    assert cli_main(["bqa", "build", "--sample", "--replay", "--work", str(root / "bqa-work"),
                     "--export", str(root / "bqa")]) == 0  # fmt: skip
    shard = next((root / "bqa" / "data" / "default").glob("test-*.parquet"))
    table = pq.read_table(shard)
    shard.unlink()
    half = table.num_rows // 2
    for i, part in enumerate((table.slice(0, half), table.slice(half))):
        pq.write_table(part, shard.parent / f"test-{i:05d}-of-00002.parquet", row_group_size=2)
    record_checksums(root / "bqa")  # the rewritten shards, recorded as an export records them
    work = write_sample_work_folder(root / "ml-work")
    export_release(work, root / "ml", cache_dir=root / "export-cache", max_shard_bytes=1, check=False)
    return {"bqa": root / "bqa", "bqa-work": root / "bqa-work", "ml": root / "ml", "ml-work": work}


def _loaded(folder: Path, config: str | None, split: str, cache: Path) -> datasets.Dataset:
    ds = datasets.load_dataset(str(folder), config, split=split, cache_dir=str(cache))
    if "video" in ds.column_names:
        ds = ds.cast_column("video", datasets.Video(decode=False))
    return ds


@pytest.mark.parametrize(("name", "config"), [("bqa", None), ("ml", "qa"), ("ml", "videos")])
def test_rows_and_video_cells_equal_load_dataset(folders, tmp_path, name, config):
    folder = folders[name]
    hub = read_hub_folder(folder)
    if name == "bqa":
        assert len(hub.shards["default"]["test"]) == 2
        assert sum(pq.read_metadata(s).num_row_groups for s in hub.shards["default"]["test"]) >= 3
    else:
        assert all(
            len(shards) == len(_loaded(folder, config, s, tmp_path))
            for s, shards in hub.shards[config].items()
        )
    for split in SPLITS:
        expected = _loaded(folder, config, split, tmp_path)
        opened = hub.split(split, config)
        assert len(opened) == len(expected) and opened.column_names == expected.column_names
        text = [c for c in expected.column_names if c != "video"]
        assert opened.rows(text) == expected.select_columns(text).to_list()
        assert opened.rows(["id"]) == [{"id": i} for i in expected["id"]]  # only the columns asked for
        if "video" in expected.column_names:
            for i in reversed(range(len(expected))):  # any order, across shards and row groups
                cell = opened.cell(i, "video")
                assert set(cell) == {"path", "bytes"} and cell == expected[i]["video"]
                assert cell["bytes"][4:8] == b"ftyp"  # the MP4 itself, not decoded


def test_dataset_openers_give_load_dataset_rows(folders, tmp_path):
    for split in SPLITS:
        bqa = open_bqa(folders["bqa"], split)
        expected = _loaded(folders["bqa"], None, split, tmp_path)
        assert bqa.rows == expected.remove_columns("video").to_list()
        assert bqa.video(expected[0]["id"]) == expected[0]["video"]
        assert bqa.source == f"Hub folder {folders['bqa']} (config default)"
        items = open_bqa(folders["bqa"], split, ITEM_COLUMNS).rows
        assert (
            items == open_bqa(folders["bqa-work"], split, ITEM_COLUMNS).rows
        )  # scores are float32 in Parquet
        assert items == expected.select_columns(list(ITEM_COLUMNS)).to_list()
        marine = open_marinelife(folders["ml"], split)
        qa = _loaded(folders["ml"], "qa", split, tmp_path)
        assert [r["question_id"] for r in marine.rows] == qa["question_id"]
        assert marine.rows == open_marinelife(folders["ml-work"], split).rows
        videos = _loaded(folders["ml"], "videos", split, tmp_path)
        assert list(marine.videos) == videos["id"]
        assert all(marine.video(row["id"]) == row["video"] for row in videos)


def _count_files(*folders: Path) -> int:
    return sum(1 for folder in folders if folder.exists() for p in folder.rglob("*") if p.is_file())


def test_opening_many_times_leaves_no_copy(folders, tmp_path, monkeypatch):
    """Six opens of each dataset's split write nothing to the temporary folder or a datasets cache."""
    temp, cache = tmp_path / "tmp", tmp_path / "hf-datasets"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    before = {p: _count_files(p) for p in (folders["bqa"], folders["ml"])}
    for _ in range(6):
        for split in SPLITS:
            data = open_bqa(folders["bqa"], split)
            assert data.video(data.rows[-1]["id"])["bytes"]
            marine = open_marinelife(folders["ml"], split)
            assert marine.video(next(iter(marine.videos)))["bytes"]
    assert _count_files(temp, cache) == 0
    assert {p: _count_files(p) for p in before} == before
    # The same check sees a copy where one is made: load_dataset into the default cache.
    datasets.load_dataset(str(folders["bqa"]), split="test")
    assert _count_files(temp, cache) > 0


def test_what_is_no_hub_folder_is_refused_by_name(folders, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(NotAHubFolder, match="no README.md dataset card"):
        read_hub_folder(empty)
    with pytest.raises(FileNotFoundError, match="neither a BQA work folder .* nor a Hub-layout folder"):
        open_bqa(empty, "test")
    readme_only = tmp_path / "readme-only"
    readme_only.mkdir()
    (readme_only / "README.md").write_text("---\npretty_name: Mine\n---\n\nNotes.\n")
    for opener in (read_hub_folder, lambda f: open_bqa(f, "test"), lambda f: open_marinelife(f, "test")):
        with pytest.raises(ValueError, match=r"readme-only: README.md declares no 'configs:'"):
            opener(readme_only)
    (readme_only / "README.md").write_text("Just prose.\n")
    with pytest.raises(ValueError, match=r"README.md: the card does not start with a YAML block"):
        open_bqa(readme_only, "test")
    partial = tmp_path / "partial"
    shutil.copytree(folders["bqa"], partial)
    for shard in (partial / "data" / "default").glob("validation-*"):
        shard.unlink()
    with pytest.raises(
        ValueError, match=r"partial: config 'default', split 'validation': no data file matches"
    ):
        read_hub_folder(partial)


def test_bad_requests_name_folder_config_split_and_column(folders):
    hub = read_hub_folder(folders["ml"])
    assert hub.default == "qa"
    with pytest.raises(
        ValueError, match=r"ml: no config 'clips' in the card \(configs: \['qa', 'videos'\]\)"
    ):
        hub.split("test", "clips")
    with pytest.raises(ValueError, match=r"ml: config 'qa' has no split 'dev'"):
        hub.split("dev")
    with pytest.raises(ValueError, match=r"ml: config 'videos', split 'test': no column\(s\) \['frames'\]"):
        read_split(folders["ml"], "test", "videos", ["id", "frames"])
    with pytest.raises(IndexError, match=r"config 'videos', split 'test': row 99 out of range"):
        hub.split("test", "videos").cell(99, "video")
    with pytest.raises(ValueError, match="unknown split 'valid'"):
        open_bqa(folders["bqa"], "valid")
