"""Bad BoLD CSVs get clear errors naming the file and line (issue 15, case 12): non-UTF-8 bytes, an
unterminated quote, an empty file, scores outside [0, 1], absurd frame numbers; a UTF-8 BOM is fine.
The build (a real ``vqabench`` process) reports them as ``read_bold`` does."""

from __future__ import annotations

import pytest
from test_bqa_bold import _bold_root, _error, _good_row, _write
from test_unfinished_runs import vqabench

from bqa.bold import COLUMNS, read_annotation_file, read_bold
from bqa.vocabulary import EMOTIONS


def test_non_utf8_names_file_and_line(tmp_path):
    path = _write(tmp_path / "train.csv", [_good_row(f"003/f.mp4/{i:04d}.mp4") for i in range(3)])
    data = path.read_bytes().splitlines(keepends=True)
    data[2] = data[2].replace(b"003/f.mp4", b"003/f\xe9.mp4")  # a Latin-1 byte on line 3
    path.write_bytes(b"".join(data))
    with pytest.raises(ValueError, match=rf"{path}, line 3: not UTF-8 \(byte 0xe9"):
        read_annotation_file(path)


def test_a_bom_is_not_part_of_the_first_clip_path(tmp_path):
    path = _write(tmp_path / "train.csv", [_good_row()])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    (row,) = read_annotation_file(path)
    assert row.video == "003/IzvOYVMltkI.mp4/0114.mp4"


def test_an_unterminated_quote_points_at_the_line_it_opens(tmp_path):
    rows = [_good_row(f"003/f.mp4/{i:04d}.mp4") for i in range(5)]
    path = _write(tmp_path / "train.csv", rows)
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace("003/f.mp4/0001.mp4", '"003/f.mp4/0001.mp4')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=rf"{path}, line 2: a quote opened on this line is not closed"):
        read_annotation_file(path)


def test_empty_file_scores_and_frames(tmp_path):
    root = tmp_path / "BOLD_public"
    (root / "annotations").mkdir(parents=True)
    for name in ("train.csv", "val.csv"):
        (root / "annotations" / name).write_text("")
    assert read_annotation_file(root / "annotations" / "train.csv") == []  # one empty split: a warning
    with pytest.raises(
        ValueError, match=r"no annotation rows in .*train.csv, .*val.csv: every file is empty"
    ):
        read_bold(root)
    for column, value in ((EMOTIONS[3], "1.5"), (EMOTIONS[0], "-0.1"), ("annotation_confidence", "7")):
        row = _good_row()
        row[COLUMNS.index(column)] = value
        err = _error(tmp_path, row)
        assert (
            f"line 2, column {COLUMNS.index(column) + 1} ({column}): expected a score in [0, 1], got '{value}'"
            in str(err)
        )
    row = _good_row()
    row[COLUMNS.index("max_frame")] = "1e300"
    assert "(max_frame): expected a frame number from 0 to 100,000,000, got '1e300'" in str(
        _error(tmp_path, row)
    )


def test_the_build_reports_the_same(tmp_path):
    clip = "003/IzvOYVMltkI.mp4/0114.mp4"
    bad = _good_row(clip)
    bad[COLUMNS.index(EMOTIONS[0])] = "1.5"
    root = _bold_root(tmp_path, {"train": [bad], "val": [_good_row(clip, person=2)]}, [clip])
    with pytest.raises(ValueError) as raised:
        read_bold(root)
    built = vqabench(
        ["bqa", "build", "--bold-root", str(root), "--work", str(tmp_path / "w"), "--steps", "candidates"]
    )
    assert built.returncode == 2 and str(raised.value) in built.stderr, built.stderr
