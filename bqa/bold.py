"""Read BoLD's annotation CSVs into :class:`bqa.records.BoLDAnnotation` records.

Expected layout of a BoLD root (as in the public ``BOLD_public`` archive)::

    <root>/annotations/train.csv      headerless, 37 columns (see COLUMNS)
    <root>/annotations/val.csv
    <root>/videos/003/IzvOYVMltkI.mp4/0114.mp4   the CSV's first column, relative to <root>/videos

Every malformed row is an error naming the file, line and column: wrong column count, a
non-numeric or non-finite number, a frame range that runs backwards, an unknown demographic code
(codes are read through an overridable table, :data:`bqa.vocabulary.DEFAULT_DEMOGRAPHIC_CODES`),
a clip path that leaves the video root, the same (clip, person) twice, and a clip file that is
not there. Missing clips are all collected first; with ``skip_missing`` their rows are left out
and listed in :attr:`BoLDSource.missing` (and logged), never dropped silently.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from bqa.records import BoLDAnnotation
from bqa.vocabulary import DEFAULT_DEMOGRAPHIC_CODES, EMOTIONS
from builders.files.csvio import iter_csv_records

log = logging.getLogger(__name__)

#: Column names of BoLD's annotation CSVs, in file order.
COLUMNS: tuple[str, ...] = (
    "video", "person_id", "min_frame", "max_frame", *EMOTIONS,
    "Valence", "Arousal", "Dominance", "Gender", "Age", "Ethnicity", "annotation_confidence",
)  # fmt: skip
assert len(COLUMNS) == 37

#: BoLD annotation files, keyed by the name of BoLD's own split.
BOLD_FILES: dict[str, str] = {"train": "train.csv", "val": "val.csv"}
ANNOTATIONS_DIR, VIDEOS_DIR = "annotations", "videos"
_DEMOGRAPHICS = {"Gender": "gender", "Age": "age", "Ethnicity": "ethnicity"}
_FLOAT_COLUMNS = (*EMOTIONS, "Valence", "Arousal", "Dominance", "annotation_confidence")
_UNIT_COLUMNS = (*EMOTIONS, "annotation_confidence")  # BoLD's scores: fractions of annotators, in [0, 1]
MAX_FRAME = 10**8  # about 39 days at 30 fps: a larger frame number is a corrupt cell, not a clip
_INDEX = {name: i for i, name in enumerate(COLUMNS)}


class BoLDFormatError(ValueError):
    """A malformed BoLD annotation row; the message names file, line and column."""

    def __init__(self, file: str | Path, line: int, column: int | None, message: str) -> None:
        where = f"{file}, line {line}"
        if column is not None:
            where += f", column {column + 1} ({COLUMNS[column]})"
        super().__init__(f"{where}: {message}")
        self.file, self.line, self.column = str(file), line, column


@dataclass(frozen=True)
class MissingClip:
    file: str
    line: int
    video: str
    path: Path

    def __str__(self) -> str:
        return f"{self.file}, line {self.line}, column 1 (video): {self.video} (looked for {self.path})"


@dataclass
class BoLDSource:
    """What was read from a BoLD root: the usable annotations and the rows whose clip is missing."""

    root: Path
    annotations: list[BoLDAnnotation]
    missing: list[MissingClip] = field(default_factory=list)

    def missing_report(self) -> str:
        return "".join(f"{m}\n" for m in self.missing)


def _number(raw: str, file: Path, line: int, column: int) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise BoLDFormatError(file, line, column, f"expected a number, got {raw!r}") from None
    if not math.isfinite(value):
        raise BoLDFormatError(file, line, column, f"expected a finite number, got {raw!r}")
    return value


def _integer(raw: str, file: Path, line: int, column: int) -> int:
    value = _number(raw, file, line, column)
    if value != int(value):  # "3.0" is how some exports write integers; "3.5" is not one
        raise BoLDFormatError(file, line, column, f"expected an integer, got {raw!r}")
    return int(value)


def _clip_path(raw: str, file: Path, line: int) -> str:
    path = PurePosixPath(raw.strip())
    if not raw.strip() or path.is_absolute() or ".." in path.parts or len(path.parts) < 2:
        raise BoLDFormatError(
            file,
            line,
            0,
            f"expected a clip path relative to the video root like 003/<film>.mp4/0114.mp4, got {raw!r}",
        )
    return str(path)


def parse_row(
    row: list[str],
    *,
    file: Path,
    line: int,
    bold_split: str,
    codes: Mapping[str, Mapping[int, str]] = DEFAULT_DEMOGRAPHIC_CODES,
) -> BoLDAnnotation:
    """Decode one CSV row (already split into cells)."""
    if [cell.strip().lower() for cell in row[:4]] == list(COLUMNS[:4]):
        raise BoLDFormatError(
            file, line, None, "this looks like a header line; BoLD annotation files have none"
        )
    if len(row) != len(COLUMNS):
        raise BoLDFormatError(file, line, None, f"expected {len(COLUMNS)} columns, found {len(row)}")
    col = _INDEX
    video = _clip_path(row[0], file, line)
    ints = {
        name: _integer(row[col[name]], file, line, col[name])
        for name in ("person_id", "min_frame", "max_frame")
    }
    for name in ("min_frame", "max_frame"):
        if not 0 <= ints[name] <= MAX_FRAME:
            raise BoLDFormatError(
                file,
                line,
                col[name],
                f"expected a frame number from 0 to {MAX_FRAME:,}, got {row[col[name]]!r}",
            )
    if ints["max_frame"] < ints["min_frame"]:
        raise BoLDFormatError(
            file,
            line,
            col["max_frame"],
            f"max_frame {ints['max_frame']} is before min_frame {ints['min_frame']}",
        )
    nums = {name: _number(row[col[name]], file, line, col[name]) for name in _FLOAT_COLUMNS}
    for name in _UNIT_COLUMNS:
        if not 0.0 <= nums[name] <= 1.0:
            raise BoLDFormatError(
                file, line, col[name], f"expected a score in [0, 1], got {row[col[name]]!r}"
            )
    labels = {}
    for column_name, key in _DEMOGRAPHICS.items():
        code = _integer(row[col[column_name]], file, line, col[column_name])
        table = codes[key]
        if code not in table:
            known = ", ".join(f"{c}={v}" for c, v in sorted(table.items()))
            raise BoLDFormatError(file, line, col[column_name], f"unknown {key} code {code} (known: {known})")
        labels[key] = table[code]
    return BoLDAnnotation(
        video=video,
        person_id=ints["person_id"],
        min_frame=ints["min_frame"],
        max_frame=ints["max_frame"],
        emotions={e: nums[e] for e in EMOTIONS},
        valence=nums["Valence"],
        arousal=nums["Arousal"],
        dominance=nums["Dominance"],
        annotation_confidence=nums["annotation_confidence"],
        bold_split=bold_split,
        source_file=file.name,
        line=line,
        gender=labels["gender"],
        age=labels["age"],
        ethnicity=labels["ethnicity"],
    )


def read_annotation_file(
    path: str | Path,
    *,
    bold_split: str | None = None,
    codes: Mapping[str, Mapping[int, str]] = DEFAULT_DEMOGRAPHIC_CODES,
) -> list[BoLDAnnotation]:
    """Parse one headerless BoLD CSV (blank lines are skipped). Clip files are not looked at here."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"BoLD annotation file not found: {path}")
    split = bold_split or path.stem
    out = []
    for record in iter_csv_records(path):
        if record.end != record.start:  # BoLD rows are one line each: a quote was left open
            raise BoLDFormatError(
                path,
                record.start,
                None,
                f"a quote opened on this line is not closed (the row runs on to line {record.end})",
            )
        out.append(parse_row(record.cells, file=path, line=record.start, bold_split=split, codes=codes))
    if not out:  # legitimate for one split (read_bold refuses a root with no rows at all)
        log.warning("%s: no annotation rows (the file is empty)", path)
    return out


def read_bold(
    root: str | Path,
    *,
    splits: Iterable[str] = tuple(BOLD_FILES),
    codes: Mapping[str, Mapping[int, str]] = DEFAULT_DEMOGRAPHIC_CODES,
    skip_missing: bool = False,
) -> BoLDSource:
    """Read BoLD's annotation files under ``root`` and resolve every row's clip under ``root/videos``.

    A missing clip raises FileNotFoundError listing them all, unless ``skip_missing``: then those
    rows are left out and returned in :attr:`BoLDSource.missing`.
    """
    root = Path(root)
    videos = root / VIDEOS_DIR
    if not (root / ANNOTATIONS_DIR).is_dir():
        raise FileNotFoundError(
            f"{root}: no '{ANNOTATIONS_DIR}/' folder (expected a BoLD root, e.g. BOLD_public)"
        )
    annotations: list[BoLDAnnotation] = []
    missing: list[MissingClip] = []
    seen: dict[tuple[str, int], BoLDAnnotation] = {}
    for split in splits:
        if split not in BOLD_FILES:
            raise ValueError(f"unknown BoLD split {split!r}; expected one of {sorted(BOLD_FILES)}")
        path = root / ANNOTATIONS_DIR / BOLD_FILES[split]
        for ann in read_annotation_file(path, bold_split=split, codes=codes):
            first = seen.setdefault((ann.video, ann.person_id), ann)
            if first is not ann:
                raise BoLDFormatError(
                    path, ann.line, None,
                    f"clip {ann.video} person {ann.person_id} was already annotated at {first.source_file}, line {first.line}",
                )  # fmt: skip
            clip = videos / ann.video
            if not clip.is_file():
                missing.append(MissingClip(ann.source_file, ann.line, ann.video, clip))
                continue
            annotations.append(replace(ann, clip_path=clip))
    if not annotations and not missing:
        files = ", ".join(str(root / ANNOTATIONS_DIR / BOLD_FILES[s]) for s in splits)
        raise ValueError(f"no annotation rows in {files}: every file is empty")
    if missing and not skip_missing:
        shown = "\n  ".join(str(m) for m in missing[:20])
        more = f"\n  ... and {len(missing) - 20} more" if len(missing) > 20 else ""
        raise FileNotFoundError(
            f"{len(missing)} clip(s) named in the annotations are missing under {videos}:\n  {shown}{more}\n"
            "(use --skip-missing to leave those rows out; they are then listed, not dropped silently)"
        )
    if missing:
        log.warning("left out %d annotation row(s) whose clip is missing under %s", len(missing), videos)
    return BoLDSource(root=root, annotations=annotations, missing=missing)
