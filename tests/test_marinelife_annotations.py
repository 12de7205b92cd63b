"""Reading expert attribute files (CSV and JSONL) and their bad inputs."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from builders.testing.clips import write_clip
from marinelife16k.annotations import REQUIRED_COLUMNS, read_annotations
from marinelife16k.sample import sample_attributes_path, sample_video_root
from marinelife16k.vocabulary import ATTRIBUTES

ROWS = [
    {
        "video_id": "mvk-1",
        "collection": "MVK",
        "video_file": "mvk-1.mp4",
        **dict.fromkeys(ATTRIBUTES, ""),
        "central_object": "clownfish",
        "color": "orange with white bands",
        "size_shape": "small, oval body",
        "camera_position": "close-up",
        "camera_angle": "eye-level, static",
        "lighting": "dim natural light",
        "caption": "A clownfish hides in an anemone.",
    },
    {
        "video_id": "msc-7",
        "collection": "MSC",
        "video_file": "msc-7.mp4",
        **dict.fromkeys(ATTRIBUTES, ""),
        "central_object": "manta ray",
        "object_2": "remora",
        "color": "black and white",
        "size_shape": "very large, diamond-shaped",
        "camera_position": "full scene",
        "camera_angle": "low angle, panning left",
        "movement_behavior": "gliding in a loop",
    },
]


def _write_csv(path: Path, rows: list[dict], columns: list[str] | None = None) -> Path:
    columns = columns or list(rows[0])
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_csv_and_jsonl_read_the_same(tmp_path):
    from_csv = read_annotations(_write_csv(tmp_path / "a.csv", ROWS))
    jsonl_rows = [dict(r) for r in ROWS]
    assert "caption" not in jsonl_rows[1]  # the caption is optional
    jsonl_rows[0]["object_4"] = None  # null reads as empty
    from_jsonl = read_annotations(_write_jsonl(tmp_path / "a.jsonl", jsonl_rows))
    assert from_csv == from_jsonl
    first, second = from_csv
    assert first["id"] == "MVK--mvk-1" and first["video_path"] == "MVK/mvk-1.mp4"
    assert first["caption"] == "A clownfish hides in an anemone." and second["caption"] == ""
    assert (first["camera_kind"], second["camera_kind"]) == ("static", "moving")
    assert second["object_2"] == "remora" and first["object_4"] == ""


def test_sample_attributes_read_with_their_videos():
    rows = read_annotations(sample_attributes_path(), video_root=sample_video_root())
    assert len(rows) == 24
    assert {r["collection"] for r in rows} == {"MVK", "MSC"}
    assert {r["camera_kind"] for r in rows} == {"static", "moving"}
    assert all(r["caption"] for r in rows)
    assert {
        name for name in ("environment", "lighting", "movement_behavior") if any(not r[name] for r in rows)
    } == {
        "environment",
        "lighting",
        "movement_behavior",
    }


def test_missing_columns_are_named(tmp_path):
    columns = [c for c in ROWS[0] if c not in ("lighting", "collection")]
    path = _write_csv(tmp_path / "a.csv", ROWS, columns)
    with pytest.raises(ValueError, match=r"a\.csv: missing column\(s\) \['collection', 'lighting'\]"):
        read_annotations(path)
    row = {k: v for k, v in ROWS[0].items() if k != "camera_angle"}
    path = _write_jsonl(tmp_path / "a.jsonl", [ROWS[1], row])
    with pytest.raises(ValueError, match=r"a\.jsonl: line 2: missing column\(s\) \['camera_angle'\]"):
        read_annotations(path)


def test_unknown_collection_names_the_row(tmp_path):
    path = _write_csv(tmp_path / "a.csv", [ROWS[0], {**ROWS[1], "collection": "MSX"}])
    with pytest.raises(ValueError) as err:
        read_annotations(path)
    assert "row 3 (msc-7): column 'collection': unknown collection 'MSX'" in str(err.value)


def test_empty_required_values_and_duplicates(tmp_path):
    rows = [ROWS[0], {**ROWS[1], "color": " "}, {**ROWS[0], "video_id": ""}, dict(ROWS[0])]
    with pytest.raises(ValueError) as err:
        read_annotations(_write_csv(tmp_path / "a.csv", rows))
    text = str(err.value)
    assert "row 3 (msc-7): column 'color' is empty" in text
    assert "row 4: column 'video_id' is empty" in text
    assert "row 5 (mvk-1): video 'MVK--mvk-1' is already listed at row 2" in text
    assert text.startswith(f"{tmp_path / 'a.csv'}: 4 problem(s)")


def test_video_file_must_be_a_file_name(tmp_path):
    with pytest.raises(ValueError, match="must be a file name, not a path"):
        read_annotations(_write_csv(tmp_path / "a.csv", [{**ROWS[0], "video_file": "MVK/mvk-1.mp4"}]))


def test_missing_video_files(tmp_path):
    root = tmp_path / "videos"
    write_clip(root / "MVK" / "mvk-1.mp4", num_frames=10, width=64, height=48)
    path = _write_csv(tmp_path / "a.csv", ROWS)
    with pytest.raises(FileNotFoundError) as err:
        read_annotations(path, video_root=root)
    assert "1 video file(s) missing" in str(err.value) and "MSC/msc-7.mp4 (video msc-7)" in str(err.value)
    assert "mvk-1" not in str(err.value)
    write_clip(root / "MSC" / "msc-7.mp4", num_frames=10, width=64, height=48)
    assert len(read_annotations(path, video_root=root)) == 2


def test_unreadable_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="attribute file not found"):
        read_annotations(tmp_path / "none.csv")
    (tmp_path / "a.xlsx").write_text("x")
    with pytest.raises(ValueError, match="unsupported attribute file type '.xlsx'"):
        read_annotations(tmp_path / "a.xlsx")
    (tmp_path / "b.jsonl").write_text(json.dumps(ROWS[0]) + "\n{oops\n")
    with pytest.raises(ValueError, match=r"b\.jsonl, line 2: not valid JSON"):
        read_annotations(tmp_path / "b.jsonl")
    (tmp_path / "c.jsonl").write_text("[1, 2]\n")
    with pytest.raises(ValueError, match="line 1: expected a JSON object"):
        read_annotations(tmp_path / "c.jsonl")


def test_required_columns_are_the_ids_and_13_attributes():
    assert REQUIRED_COLUMNS == ("video_id", "collection", "video_file", *ATTRIBUTES) and len(ATTRIBUTES) == 13
