"""The shared Hub-layout writer: round trip through load_dataset, atomic replace, and the checks."""

from __future__ import annotations

from pathlib import Path

import av
import datasets
import numpy as np
import pytest

from builders.hub.checksums import CHECKSUMS_KEY
from builders.hub.layout import check_hub_folder, read_card, write_hub_folder


def _tiny_mp4(path: Path, shade: int) -> Path:
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        for i in range(5):
            img = np.full((32, 32, 3), (shade + 10 * i) % 256, dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


@pytest.fixture()
def configs(tmp_path: Path) -> dict[str, datasets.DatasetDict]:
    videos = [_tiny_mp4(tmp_path / f"v{i}.mp4", 40 * i) for i in range(4)]
    features = datasets.Features({"id": datasets.Value("string"), "video": datasets.Video(decode=False)})
    rows = {"id": [f"v{i}" for i in range(4)], "video": [{"path": str(v), "bytes": None} for v in videos]}
    clips = datasets.Dataset.from_dict(rows, features=features)
    qa = datasets.Dataset.from_dict({"id": ["v0", "v1", "v3"], "q": ["a?", "b?", "c?"]})
    return {
        "qa": datasets.DatasetDict({"train": qa.select([0, 1]), "test": qa.select([2])}),
        "videos": datasets.DatasetDict({"train": clips.select([0, 1, 2]), "test": clips.select([3])}),
    }


def test_round_trip_embeds_video_bytes(tmp_path: Path, configs) -> None:
    out = write_hub_folder(
        tmp_path / "release",
        configs,
        default_config="qa",
        card_body="# Tiny\n\nProse.",
        card_data={"license": "other", "pretty_name": "Tiny"},
    )
    originals = {p.name: p.read_bytes() for p in tmp_path.glob("v*.mp4")}
    for p in tmp_path.glob("v*.mp4"):
        p.unlink()  # the folder must stand alone
    meta, body = read_card(out)
    assert meta["license"] == "other" and body.startswith("# Tiny")
    assert [c["config_name"] for c in meta["configs"] if c.get("default")] == ["qa"]
    assert sorted(out.glob("data/videos/*.parquet")) == [
        out / "data/videos/test-00000-of-00001.parquet",
        out / "data/videos/train-00000-of-00001.parquet",
    ]
    loaded = check_hub_folder(out, cache_dir=tmp_path / "cache")
    assert {s: len(d) for s, d in loaded["videos"].items()} == {"train": 3, "test": 1}
    default = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    assert default["train"]["q"] == ["a?", "b?"]
    row = loaded["videos"]["test"].cast_column("video", datasets.Video(decode=False))[0]
    # Against the file as written (encoding it again is not byte-stable: x264's threads under load).
    assert row["video"] == {"path": "v3.mp4", "bytes": originals["v3.mp4"]}


def test_rewrite_replaces_atomically_and_shards(tmp_path: Path, configs) -> None:
    out = tmp_path / "release"
    write_hub_folder(out, configs, default_config="qa", card_body="v1")
    (out / "stale.txt").write_text("from an older release")
    write_hub_folder(out, configs, default_config="videos", card_body="v2", max_shard_bytes=1)
    # a file the export did not write is kept, never lost (issue 37), and is not part of the release
    assert (out / "stale.txt").read_text() == "from an older release"
    assert (
        "stale.txt" not in read_card(out)[0][CHECKSUMS_KEY]
        and "data/videos/train-00000-of-00003.parquet" in (read_card(out)[0][CHECKSUMS_KEY])
    )
    assert len(list(out.glob("data/videos/train-*.parquet"))) == 3
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp leftovers
    assert read_card(out)[1].strip() == "v2"


def test_check_reports_every_problem(tmp_path: Path, configs) -> None:
    out = write_hub_folder(tmp_path / "release", configs, default_config="qa", card_body="x")
    (out / "release.py").write_text("# a loading script\n")
    text = (out / "README.md").read_text()
    (out / "README.md").write_text(text.replace("  default: true\n", ""))
    with pytest.raises(ValueError) as err:
        check_hub_folder(out)
    assert "release.py" in str(err.value) and "exactly one default" in str(err.value)


def test_check_catches_split_size_mismatch(tmp_path: Path, configs) -> None:
    out = write_hub_folder(tmp_path / "release", configs, default_config="qa", card_body="x")
    text = (out / "README.md").read_text()
    (out / "README.md").write_text(text.replace("num_examples: 3", "num_examples: 30"))
    with pytest.raises(ValueError, match=r"config 'videos'.*num_examples=30"):
        check_hub_folder(out, cache_dir=tmp_path / "cache")


def test_unknown_default_config(tmp_path: Path, configs) -> None:
    with pytest.raises(ValueError, match="default config 'nope'"):
        write_hub_folder(tmp_path / "r", configs, default_config="nope", card_body="x")
    assert not (tmp_path / "r").exists()


def test_unreadable_or_remote_media_is_an_error_naming_the_row(tmp_path: Path, configs) -> None:
    clips = configs["videos"]["train"]  # rows v0, v1, v2
    (tmp_path / "v2.mp4").unlink()
    with pytest.raises(ValueError, match=r"split 'train', row 2, column 'video': cannot read .*v2\.mp4"):
        write_hub_folder(tmp_path / "a", {"videos": datasets.DatasetDict({"train": clips})},
                         default_config="videos", card_body="x", max_shard_bytes=1)  # fmt: skip
    remote = datasets.Dataset.from_dict(
        {"video": [{"path": "https://example.invalid/v.mp4", "bytes": None}]},
        features=datasets.Features({"video": datasets.Video(decode=False)}),
    )
    with pytest.raises(
        ValueError, match=r"row 0, column 'video': https://example.invalid/v.mp4 is not a local"
    ):
        write_hub_folder(
            tmp_path / "b", {"c": datasets.DatasetDict({"test": remote})}, default_config="c", card_body="x"
        )
    nested = datasets.Dataset.from_dict(
        {"clips": [[{"path": str(tmp_path / "v0.mp4"), "bytes": None}]]},
        features=datasets.Features({"clips": datasets.List(datasets.Video(decode=False))}),
    )
    with pytest.raises(ValueError, match=r"media nested inside column\(s\) \['clips'\]"):
        write_hub_folder(
            tmp_path / "c", {"c": datasets.DatasetDict({"test": nested})}, default_config="c", card_body="x"
        )
    assert not any((tmp_path / name).exists() for name in "abc")  # nothing half-written


def test_embedded_rows_keep_bytes_and_base_names(tmp_path: Path, configs) -> None:
    # A value that already holds bytes is stored as is; a path becomes its file's base name.
    video = tmp_path / "v1.mp4"
    rows = datasets.Dataset.from_dict(
        {
            "video": [
                {"path": str(video), "bytes": None},
                {"path": "given.mp4", "bytes": b"not read from disk"},
            ]
        },
        features=datasets.Features({"video": datasets.Video(decode=False)}),
    )
    out = write_hub_folder(
        tmp_path / "r", {"c": datasets.DatasetDict({"test": rows})}, default_config="c", card_body="x"
    )
    loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"), split="test")
    values = loaded.cast_column("video", datasets.Video(decode=False))["video"]
    assert values == [
        {"path": "v1.mp4", "bytes": video.read_bytes()},
        {"path": "given.mp4", "bytes": b"not read from disk"},
    ]
