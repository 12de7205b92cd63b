"""One home for reading JSON/JSONL with errors that name file and line, and for atomic writes.

Atomic means: written beside the target and renamed into place with ``os.replace``, so a crash
leaves either the old content or the new one, never half of it.

JSONL is one pair, :func:`dumps_line` and :func:`iter_jsonl`, that round-trips every string: records
end at ``"\n"`` and nowhere else. ``str.splitlines`` (and readers built on it) also break at U+2028,
U+2029, U+0085, ``\x1c``-``\x1e``, ``\v`` and ``\f``; ``json.dumps(ensure_ascii=False)`` leaves the
first three raw inside strings, so one such character in an LLM reply would cut its record in two.
The reader splits on ``"\n"`` only (so any valid JSONL file reads, whoever wrote it); the writer
also escapes those three, so what we write reads back even through a ``splitlines`` reader.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _publishable(path: PathLike, mode: int) -> None:
    """mkstemp/mkdtemp create owner-only entries; give the result the mode a plain open/mkdir would."""
    os.chmod(path, mode & ~_umask())


def naming(err: OSError, path: PathLike) -> OSError:
    """``err`` with ``path`` as its file name when it has none (a write that fails on a full disk
    raises ``[Errno 28]`` naming no file), or when the disk is full (a copy names its source): the user
    is told which file could not be written."""
    if err.errno is not None and (err.filename is None or err.errno in (errno.ENOSPC, errno.EDQUOT)):
        named = type(err)(err.errno, err.strerror, os.fspath(path))
        named.__cause__ = err
        return named
    return err


def read_capped(path: PathLike, limit: int, what: str) -> bytes:
    """The bytes of the file at ``path`` if it holds at most ``limit``; else a ValueError naming it and
    ``what`` it is. Counted by the bytes actually read, never a size the file reports: a FIFO, a device
    (``/dev/zero``) or a file that grows are refused at ``limit`` + 1 bytes, not read without bound."""
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}: more than {limit:,} bytes; too large for {what}")
    return data


def read_text(path: PathLike, limit: int | None = None, what: str = "this input") -> str:
    """A UTF-8 text file's content (a leading BOM dropped); bytes that are not UTF-8 are an error
    naming the file, the line and the byte, not a bare UnicodeDecodeError. ``limit``: at most this many
    bytes are read (:func:`read_capped`)."""
    path = Path(path)
    data = path.read_bytes() if limit is None else read_capped(path, limit, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise ValueError(
            f"{path}, line {line}: not UTF-8 (byte 0x{data[err.start]:02x} at offset {err.start}); "
            "save the file as UTF-8"
        ) from None


def iter_jsonl(path: PathLike, *, tolerate_torn_tail: bool = False) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line.

    A line that is not JSON is an error naming the file and line, except, with
    ``tolerate_torn_tail``, an unterminated last line (what a killed appender leaves), which is skipped.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"file not found: {path}")
    lines = read_text(path).split("\n")  # "\n" only: see the module doc
    last = len(lines) if lines[-1] else len(lines) - 1  # a final "\n" ends the last line, starts none
    for number, line in enumerate(lines[:last], start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            if tolerate_torn_tail and number == len(lines):  # the last line, with no "\n" after it
                log.warning("%s: ignoring the torn last line %d left by an interrupted run", path, number)
                return
            raise ValueError(f"{path}, line {number}: not valid JSON ({err.msg})") from None
        yield number, value


def read_jsonl(path: PathLike, *, tolerate_torn_tail: bool = False) -> list[Any]:
    return [value for _, value in iter_jsonl(path, tolerate_torn_tail=tolerate_torn_tail)]


def read_json_object(path: PathLike) -> dict[str, Any]:
    """A JSON file holding one object; anything else is an error naming the file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def write_text_atomic(path: PathLike, text: str | Iterable[str]) -> Path:
    """Write ``text`` (or its pieces, one after another: never held whole) to ``path`` atomically
    (:func:`write_file_atomic`)."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.writelines([text] if isinstance(text, str) else text)

    return write_file_atomic(path, write)


#: Line breaks to ``str.splitlines`` that ``json.dumps(ensure_ascii=False)`` leaves raw (it escapes
#: every other one, being a control character below U+0020).
_RAW_BREAKS = str.maketrans({c: f"\\u{ord(c):04x}" for c in "\u0085\u2028\u2029"})


def dumps_line(record: Any, *, sort_keys: bool = True) -> str:
    """One JSONL record, ``"\n"``-terminated, with no other character any reader takes for a line break.

    Non-ASCII text stays readable (UTF-8); U+0085/U+2028/U+2029 can only occur inside JSON strings,
    so escaping them there changes no value."""
    return json.dumps(record, ensure_ascii=False, sort_keys=sort_keys).translate(_RAW_BREAKS) + "\n"


def write_jsonl_atomic(
    path: PathLike, records: Iterable[Mapping[str, Any]], *, sort_keys: bool = True
) -> Path:
    """``sort_keys=False`` keeps each record's field order (e.g. a schema's documented order)."""
    return write_text_atomic(path, (dumps_line(r, sort_keys=sort_keys) for r in records))


def write_json_atomic(path: PathLike, data: Any) -> Path:
    return write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def write_bytes_atomic(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file beside it and a rename."""
    return write_file_atomic(path, lambda tmp: tmp.write_bytes(data))


def copy_file_atomic(source: PathLike, path: PathLike) -> Path:
    """Copy the file ``source`` to ``path`` through a temporary file beside it and a rename."""
    return write_file_atomic(path, lambda tmp: shutil.copyfile(source, tmp))


def write_chunks_atomic(path: PathLike, chunks: Iterable[bytes]) -> Path:
    """Stream ``chunks`` to ``path`` through a temporary file beside it and a rename (memory: one chunk)."""

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)

    return write_file_atomic(path, write)


def write_file_atomic(path: PathLike, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp_path)`` for a temporary path beside ``path``, flush it to disk, then rename it
    into place: a reader sees the old file or the whole new one, also after a crash."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        with open(tmp, "rb") as written:
            os.fsync(written.fileno())
        _publishable(tmp, 0o666)
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise naming(err, path) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
