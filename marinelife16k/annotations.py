"""Read the experts' attribute annotations: one row per video, CSV (with a header) or JSONL.

Columns (JSONL keys): ``video_id, collection, video_file``, the 13 attributes of
:data:`~marinelife16k.vocabulary.ATTRIBUTES`, and optionally ``caption`` (the final caption, once the
caption engine has produced it). Other columns are ignored. Every row becomes a *video row*, the one
dict shape used throughout the package (the ``videos`` config minus the video bytes and the split)::

    {video_id, id, collection, video_file, video_path, <13 attributes>, caption, camera_kind}

where ``id`` is ``{collection}--{video file without extension}`` (what QA records point at),
``video_path`` is ``{collection}/{video_file}`` (relative to a video root) and ``camera_kind`` is
:func:`~marinelife16k.vocabulary.camera_kind` of the camera attributes. Empty cells and JSON nulls
become ``""``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from builders.files.csvio import iter_csv_records
from builders.files.jsonio import iter_jsonl
from marinelife16k.questions import video_key
from marinelife16k.vocabulary import ATTRIBUTES, COLLECTIONS, REQUIRED_ATTRIBUTES, camera_kind

ID_COLUMNS: tuple[str, ...] = ("video_id", "collection", "video_file")
CAPTION_COLUMN = "caption"
REQUIRED_COLUMNS: tuple[str, ...] = (*ID_COLUMNS, *ATTRIBUTES)
# Keys of a video row, in order.
VIDEO_ROW_KEYS: tuple[str, ...] = (
    "video_id", "id", "collection", "video_file", "video_path", *ATTRIBUTES, CAPTION_COLUMN, "camera_kind",
)  # fmt: skip

_MAX_REPORTED = 20


def video_row(raw: dict[str, Any]) -> dict[str, str]:
    """A video row from a mapping holding the id columns, the attributes and maybe the caption."""
    values = {
        k: "" if raw.get(k) is None else str(raw.get(k)).strip() for k in (*REQUIRED_COLUMNS, CAPTION_COLUMN)
    }
    row = {
        "video_id": values["video_id"],
        "id": video_key(values["collection"], values["video_file"]),
        "collection": values["collection"],
        "video_file": values["video_file"],
        "video_path": f"{values['collection']}/{values['video_file']}",
        **{name: values[name] for name in ATTRIBUTES},
        CAPTION_COLUMN: values[CAPTION_COLUMN],
        "camera_kind": camera_kind(values["camera_position"], values["camera_angle"]),
    }
    return row


def _csv_rows(path: Path) -> Iterator[tuple[str, dict[str, Any], list[str]]]:
    """``(where, row, problems)`` per record; a record with more or fewer cells than the header (an
    unquoted comma shifts every later column) is a problem, not a row to guess at."""
    records = iter_csv_records(path)
    first = next(records, None)
    header = [h.strip() for h in first.cells] if first else []
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; the header has {header}")
    for number, record in enumerate(records, start=2):  # spreadsheet numbering: the header is row 1
        problems = []
        if len(record.cells) != len(header):
            quote = "; a quote opened on that line may be unterminated" if record.end > record.start else ""
            problems.append(
                f"{record.lines}: {len(record.cells)} cells, the header has {len(header)} (an unquoted comma in a "
                f"cell? quote it){quote}"
            )
        yield f"row {number}", dict(zip(header, record.cells, strict=False)), problems


def _jsonl_rows(path: Path) -> Iterator[tuple[str, dict[str, Any], list[str]]]:
    for number, raw in iter_jsonl(path):
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: line {number}: expected a JSON object, got {type(raw).__name__}")
        missing = [c for c in REQUIRED_COLUMNS if c not in raw]
        if missing:
            raise ValueError(f"{path}: line {number}: missing column(s) {missing}")
        problems = [
            f"column {k!r}: expected a string, got {type(raw[k]).__name__} {json.dumps(raw[k])[:60]}"
            for k in (*REQUIRED_COLUMNS, CAPTION_COLUMN)
            if isinstance(raw.get(k), list | dict | bool)
        ]
        yield f"line {number}", raw, problems


def read_annotations(
    path: str | os.PathLike[str], *, video_root: str | os.PathLike[str] | None = None
) -> list[dict]:
    """Video rows from an attribute file (``.csv`` or ``.jsonl``), in file order.

    Raises ValueError naming the file, the row and the column for: a file with no rows, a CSV row
    with more or fewer cells than the header (file and line), a JSON list, object or boolean where a
    string belongs, bytes that are not UTF-8 (a BOM is fine), missing columns, an empty
    ``video_id``/``video_file``, an unknown collection, an empty attribute that the mandatory
    questions need (:data:`~marinelife16k.vocabulary.REQUIRED_ATTRIBUTES`) and a video listed twice.
    With ``video_root``, every ``<video_root>/<collection>/<video_file>`` must exist, else
    FileNotFoundError lists the missing ones.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"attribute file not found: {path}")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise ValueError(f"{path}: unsupported attribute file type {suffix!r}; use .csv or .jsonl")
    rows: list[dict] = []
    errors: list[str] = []
    first_seen: dict[str, str] = {}
    for where, raw, problems in _csv_rows(path) if suffix == ".csv" else _jsonl_rows(path):
        row = video_row(raw)
        label = where + (f" ({row['video_id']})" if row["video_id"] else "")
        if problems:  # the row's cells cannot be trusted: report them, check nothing else in it
            errors += [f"{label}: {problem}" for problem in problems]
            continue
        for column in ("video_id", "video_file"):
            if not row[column]:
                errors.append(f"{label}: column {column!r} is empty")
        if row["collection"] not in COLLECTIONS:
            errors.append(
                f"{label}: column 'collection': unknown collection {row['collection']!r}; expected one of {list(COLLECTIONS)}"
            )
        if "/" in row["video_file"] or "\\" in row["video_file"]:
            errors.append(
                f"{label}: column 'video_file': {row['video_file']!r} must be a file name, not a path"
            )
        for name in REQUIRED_ATTRIBUTES:
            if not row[name]:
                errors.append(f"{label}: column {name!r} is empty; the mandatory questions need it")
        # One video, one row: neither its id nor its (collection, video_id) may repeat.
        for key in (row["id"], f"{row['collection']}:{row['video_id']}"):
            if key in first_seen:
                errors.append(f"{label}: video {key!r} is already listed at {first_seen[key]}")
                break
        for key in (row["id"], f"{row['collection']}:{row['video_id']}"):
            first_seen.setdefault(key, where)
        rows.append(row)
    if errors:
        raise ValueError(_listing(f"{path}: {len(errors)} problem(s)", errors))
    if not rows:  # every reader (check-attributes, the build, validate) says the same
        raise ValueError(
            f"{path}: no videos (the file has {'only a header' if suffix == '.csv' else 'no rows'})"
        )
    if video_root is not None:
        root = Path(video_root)
        missing = [
            f"{r['video_path']} (video {r['video_id']})"
            for r in rows
            if not (root / r["video_path"]).is_file()
        ]
        if missing:
            raise FileNotFoundError(
                _listing(f"{path}: {len(missing)} video file(s) missing under {root}", missing)
            )
    return rows


def _listing(headline: str, items: list[str]) -> str:
    shown = "\n  ".join(items[:_MAX_REPORTED])
    more = f"\n  ... and {len(items) - _MAX_REPORTED} more" if len(items) > _MAX_REPORTED else ""
    return f"{headline}:\n  {shown}{more}"
