"""BoLD reader: the bundled sample reads back exactly, and every malformed input is named precisely."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import pytest

from bqa.bold import COLUMNS, BoLDFormatError, read_annotation_file, read_bold
from bqa.candidates import top_emotion
from bqa.records import clip_id, film_of
from bqa.sample import sample_root
from bqa.vocabulary import DEFAULT_DEMOGRAPHIC_CODES, EMOTIONS, load_demographic_codes
from builders.testing.clips import write_clip

GOOD_VIDEO = "003/IzvOYVMltkI.mp4/0114.mp4"


def _good_row(video: str = GOOD_VIDEO, person: int = 1) -> list[str]:
    scores = [f"{0.01 * (i + 1):.2f}" for i in range(len(EMOTIONS))]
    return [video, str(person), "3", "120", *scores, "5.5", "4.0", "6.25", "1", "3", "1", "0.75"]


def _write(path: Path, rows: list[list[str]], raw_lines: list[str] = ()) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
        for line in raw_lines:
            handle.write(line + "\n")
    return path


def _error(tmp_path: Path, row: list[str], line_before: int = 1) -> BoLDFormatError:
    rows = [_good_row(f"003/film.mp4/{i:04d}.mp4") for i in range(line_before)] + [row]
    path = _write(tmp_path / "train.csv", rows)
    with pytest.raises(BoLDFormatError) as info:
        read_annotation_file(path)
    return info.value


def test_sample_reads_back_exactly_as_written():
    source = read_bold(sample_root())
    with (sample_root() / "annotations" / "train.csv").open(newline="") as handle:
        raw = list(csv.reader(handle))
    with (sample_root() / "annotations" / "val.csv").open(newline="") as handle:
        raw += list(csv.reader(handle))
    assert len(source.annotations) == len(raw) == 38
    assert source.missing == []
    for ann, cells in zip(source.annotations, raw, strict=True):
        assert len(cells) == 37
        assert ann.video == cells[0] and ann.person_id == int(cells[1])
        assert (ann.min_frame, ann.max_frame) == (int(cells[2]), int(cells[3]))
        assert list(ann.emotions) == list(EMOTIONS)
        assert [ann.emotions[e] for e in EMOTIONS] == [float(c) for c in cells[4:30]]
        assert (ann.valence, ann.arousal, ann.dominance) == tuple(float(c) for c in cells[30:33])
        assert ann.gender == DEFAULT_DEMOGRAPHIC_CODES["gender"][int(cells[33])]
        assert ann.age == DEFAULT_DEMOGRAPHIC_CODES["age"][int(cells[34])]
        assert ann.ethnicity == DEFAULT_DEMOGRAPHIC_CODES["ethnicity"][int(cells[35])]
        assert ann.annotation_confidence == float(cells[36])
        assert ann.clip_path == sample_root() / "videos" / cells[0] and ann.clip_path.is_file()
        assert ann.film_id == cells[0].split("/")[1]
    assert {a.bold_split for a in source.annotations} == {"train", "val"}
    # The sample is what the demo and tests rely on: several films, every demographic label.
    assert len({a.film_id for a in source.annotations}) == 6
    for key in ("gender", "age", "ethnicity"):
        assert {getattr(a, key) for a in source.annotations} == set(DEFAULT_DEMOGRAPHIC_CODES[key].values())
    assert {top_emotion(a.emotions) for a in source.annotations} == set(EMOTIONS)  # every label answers
    [tie] = [
        a
        for a in source.annotations
        if a.emotions["Surprise"] == a.emotions["Fatigue"] == max(a.emotions.values())
    ]
    assert top_emotion(tie.emotions) == "Surprise"
    assert Counter(a.video for a in source.annotations).most_common(1)[0][1] == 2  # a clip with two persons


def test_ids_and_films():
    assert film_of(GOOD_VIDEO) == "IzvOYVMltkI.mp4"
    assert clip_id(GOOD_VIDEO, 2) == "003_IzvOYVMltkI_0114_p2"
    with pytest.raises(ValueError, match="no film folder"):
        film_of("0114.mp4")


def test_wrong_column_count(tmp_path):
    err = _error(tmp_path, _good_row()[:-1], line_before=2)
    assert str(err) == f"{tmp_path / 'train.csv'}, line 3: expected 37 columns, found 36"
    assert (err.line, err.column) == (3, None)
    err = _error(tmp_path, [*_good_row(), "extra"])
    assert "expected 37 columns, found 38" in str(err)


@pytest.mark.parametrize("column", ["Esteem", "Doubt/Confusion", "Valence", "annotation_confidence"])
@pytest.mark.parametrize("value", ["abc", "", "nan", "inf"])
def test_non_numeric_or_non_finite_score(tmp_path, column, value):
    row = _good_row()
    index = COLUMNS.index(column)
    row[index] = value
    err = _error(tmp_path, row)
    assert (err.line, err.column) == (2, index)
    assert f"line 2, column {index + 1} ({column}): expected a" in str(err)
    assert repr(value) in str(err)


@pytest.mark.parametrize("column", ["person_id", "min_frame", "max_frame", "Gender"])
def test_non_integer(tmp_path, column):
    row = _good_row()
    row[COLUMNS.index(column)] = "2.5"
    err = _error(tmp_path, row)
    assert f"({column}): expected an integer, got '2.5'" in str(err)


def test_integers_written_as_floats_are_accepted(tmp_path):
    row = _good_row()
    row[1], row[33] = "2.0", "2.0"
    [ann] = read_annotation_file(_write(tmp_path / "val.csv", [row]))
    assert ann.person_id == 2 and ann.gender == "Female" and ann.bold_split == "val"


@pytest.mark.parametrize(("column", "code"), [("Gender", "3"), ("Age", "0"), ("Ethnicity", "8")])
def test_unknown_demographic_code(tmp_path, column, code):
    row = _good_row()
    index = COLUMNS.index(column)
    row[index] = code
    err = _error(tmp_path, row)
    assert (err.line, err.column) == (2, index)
    assert f"column {index + 1} ({column}): unknown {column.lower()} code {code} (known: 1=" in str(err)


def test_overridden_code_table(tmp_path):
    table = tmp_path / "codes.yaml"
    table.write_text("gender: {1: Woman, 2: Man, 3: Non-binary}\n")
    codes = load_demographic_codes(table)
    row = _good_row()
    row[COLUMNS.index("Gender")] = "3"
    [ann] = read_annotation_file(_write(tmp_path / "train.csv", [row]), codes=codes)
    assert ann.gender == "Non-binary" and ann.age == "Adult"  # untouched tables keep the defaults


def test_header_line_gets_a_hint(tmp_path):
    path = _write(tmp_path / "train.csv", [list(COLUMNS), _good_row()])
    with pytest.raises(
        BoLDFormatError, match=r"line 1: this looks like a header line; BoLD annotation files have none"
    ):
        read_annotation_file(path)


def test_backwards_frame_range(tmp_path):
    row = _good_row()
    row[2], row[3] = "50", "10"
    err = _error(tmp_path, row)
    assert "column 4 (max_frame): max_frame 10 is before min_frame 50" in str(err)


@pytest.mark.parametrize("video", ["/abs/film.mp4/0001.mp4", "003/../../etc/passwd", "0001.mp4", " "])
def test_bad_clip_path(tmp_path, video):
    err = _error(tmp_path, _good_row(video))
    assert "column 1 (video): expected a clip path relative to the video root" in str(err)


def test_blank_lines_are_skipped_and_line_numbers_stay_true(tmp_path):
    path = tmp_path / "train.csv"
    _write(path, [_good_row()], raw_lines=["", ",".join(_good_row("003/x.mp4/0002.mp4")[:5])])
    with pytest.raises(BoLDFormatError, match=r"line 3: expected 37 columns, found 5"):
        read_annotation_file(path)


def _bold_root(tmp_path: Path, rows: dict[str, list[list[str]]], clips: list[str]) -> Path:
    root = tmp_path / "BOLD_public"
    for split, split_rows in rows.items():
        _write(root / "annotations" / f"{split}.csv", split_rows)
    for clip in clips:
        write_clip(root / "videos" / clip, num_frames=3, width=32, height=32)
    return root


def test_missing_clips_fail_listing_each_or_are_reported_with_skip_missing(tmp_path):
    present, gone1, gone2 = "001/a.mp4/0001.mp4", "001/a.mp4/0002.mp4", "002/b.mp4/0001.mp4"
    root = _bold_root(
        tmp_path, {"train": [_good_row(present), _good_row(gone1)], "val": [_good_row(gone2)]}, [present]
    )
    with pytest.raises(FileNotFoundError) as info:
        read_bold(root)
    message = str(info.value)
    assert message.startswith("2 clip(s) named in the annotations are missing")
    assert f"train.csv, line 2, column 1 (video): {gone1}" in message
    assert f"val.csv, line 1, column 1 (video): {gone2}" in message
    assert "--skip-missing" in message

    source = read_bold(root, skip_missing=True)
    assert [a.video for a in source.annotations] == [present]
    assert [(m.file, m.line, m.video) for m in source.missing] == [
        ("train.csv", 2, gone1),
        ("val.csv", 1, gone2),
    ]
    assert source.missing_report().count("\n") == 2


def test_duplicate_clip_person_is_an_error(tmp_path):
    clip = "001/a.mp4/0001.mp4"
    root = _bold_root(
        tmp_path, {"train": [_good_row(clip)], "val": [_good_row(clip, 2), _good_row(clip)]}, [clip]
    )
    with pytest.raises(
        BoLDFormatError, match=r"val.csv, line 2: clip .* person 1 was already annotated at train.csv, line 1"
    ):
        read_bold(root)


def test_root_without_annotations(tmp_path):
    with pytest.raises(FileNotFoundError, match="no 'annotations/' folder"):
        read_bold(tmp_path)
    (tmp_path / "annotations").mkdir()
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "annotations" / "train.csv"))):
        read_bold(tmp_path)
