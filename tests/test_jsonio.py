"""JSON/JSONL reading with file+line errors, and atomic writes that leave normal permissions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from builders.files.folders import atomic_directory
from builders.files.jsonio import (
    read_json_object,
    read_jsonl,
    write_file_atomic,
    write_jsonl_atomic,
    write_text_atomic,
)


def test_bad_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": 1}\nnot json\n{"id": 2}\n')
    with pytest.raises(ValueError, match=r"x.jsonl, line 2"):
        read_jsonl(path, tolerate_torn_tail=True)


def test_write_jsonl_atomic_round_trip(tmp_path: Path) -> None:
    rows = [{"b": 1, "a": "é"}, {"a": [1, 2]}]
    path = write_jsonl_atomic(tmp_path / "d" / "rows.jsonl", rows)
    assert read_jsonl(path) == rows
    assert json.loads(path.read_text().splitlines()[0]) == rows[0]
    assert [p.name for p in path.parent.iterdir()] == ["rows.jsonl"]


def test_torn_tail_is_skipped_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "partial.jsonl"
    path.write_text('{"id": 1}\n{"id": 2')
    assert read_jsonl(path, tolerate_torn_tail=True) == [{"id": 1}]
    with pytest.raises(ValueError, match="partial.jsonl, line 2"):
        read_jsonl(path)


def test_read_json_object_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.json"):
        read_json_object(tmp_path / "nope.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="list.json: expected a JSON object, got list"):
        read_json_object(tmp_path / "list.json")
    (tmp_path / "bad.json").write_text("{\n oops")
    with pytest.raises(ValueError, match="bad.json: not valid JSON"):
        read_json_object(tmp_path / "bad.json")


def test_atomic_outputs_get_ordinary_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        text = write_text_atomic(tmp_path / "a.txt", "x")
        blob = write_file_atomic(tmp_path / "b.bin", lambda p: p.write_bytes(b"y"))
        with atomic_directory(tmp_path / "folder", marker=".m") as tmp:
            (tmp / "inside.txt").write_text("z")
    finally:
        os.umask(old)
    assert oct(text.stat().st_mode & 0o777) == oct(0o644)
    assert oct(blob.stat().st_mode & 0o777) == oct(0o644)
    assert oct((tmp_path / "folder").stat().st_mode & 0o777) == oct(0o755)


def test_atomic_directory_keeps_the_old_folder_on_error(tmp_path: Path) -> None:
    target = tmp_path / "release"
    target.mkdir()
    (target / "old.txt").write_text("old")
    (target / ".m").write_text("")
    with pytest.raises(RuntimeError, match="boom"), atomic_directory(target, marker=".m") as tmp:
        (tmp / "new.txt").write_text("new")
        raise RuntimeError("boom")
    assert sorted(p.name for p in target.iterdir()) == [".m", "old.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["release"]


def test_a_non_utf8_jsonl_file_names_file_and_line(tmp_path: Path) -> None:
    """Issue 15, case 12: a predictions file saved in Latin-1 is named, with the line, not a bare
    UnicodeDecodeError; a UTF-8 BOM is accepted."""
    path = tmp_path / "preds.jsonl"
    path.write_bytes('{"id": 1}\n{"id": 2, "raw_output": "Colère"}\n'.encode("latin-1"))
    with pytest.raises(ValueError, match=rf"{path}, line 2: not UTF-8 \(byte 0xe8"):
        read_jsonl(path)
    path.write_bytes(b"\xef\xbb\xbf" + b'{"id": 1}\n')
    assert read_jsonl(path) == [{"id": 1}]
