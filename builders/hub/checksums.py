"""Content integrity of a release: the export records every file's sha256 in the card's YAML
(:data:`CHECKSUMS_KEY`), and the readers the project owns check the files they read against it.

``load_dataset`` reads a flipped byte in a video, a label turned into "Heppiness" or a changed letter of a
question without complaint, and a Parquet file's own checks cover only some of its pages; a digest
covers every byte. The card itself cannot hold its own digest: what it says is read, and checked, as
text. A file under ``data/`` that the card does not list was not written by the export and is refused.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: The card YAML key holding ``{path in the folder: sha256 hex}`` of every file the export wrote.
CHECKSUMS_KEY = "vqabench_sha256"
_verified: dict[tuple[str, int, int, int], str] = {}  # (path, inode, size, mtime) -> digest, this process


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The file's sha256 (hex), read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _cached_sha256(path: Path) -> str:
    st = path.stat()
    key = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _verified:
        _verified[key] = sha256_file(path)
    return _verified[key]


def release_files(folder: Path, card: str) -> list[str]:
    """The relative paths of the folder's files a release is made of: all but the card and hidden ones."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file()
        and p.name != card
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def record(folder: Path, card: str) -> dict[str, str]:
    """``{path: sha256}`` of :func:`release_files`: what the export writes under :data:`CHECKSUMS_KEY`."""
    return {rel: sha256_file(folder / rel) for rel in release_files(folder, card)}


def recorded(meta: Mapping[str, Any], where: str) -> dict[str, str] | None:
    """The card's checksums (None when it has none); a malformed entry is an error naming ``where``."""
    value = meta.get(CHECKSUMS_KEY)
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and len(v) == 64 for k, v in value.items()
    ):
        raise ValueError(f"{where}: the card's {CHECKSUMS_KEY} must map file paths to sha256 hex digests")
    return dict(value)


def verify(folder: Path, sums: Mapping[str, str], paths: Iterable[str]) -> None:
    """Check ``paths`` (relative to ``folder``) against ``sums``; a ValueError naming each file that is
    missing, changed, or not listed (not written by the export)."""
    problems = []
    for rel in paths:
        path = folder / rel
        if rel not in sums:
            problems.append(
                f"{path}: not one of the files the export wrote (the card lists no checksum for it)"
            )
        elif not path.is_file():
            problems.append(f"{path}: missing (the card lists it)")
        elif (got := _cached_sha256(path)) != sums[rel]:
            problems.append(
                f"{path}: its content changed since the export (sha256 {got[:16]}…, the card records "
                f"{sums[rel][:16]}…): the file is damaged or was edited; export the release again"
            )
    if problems:
        raise ValueError(
            "the release's content does not match its checksums:\n  - " + "\n  - ".join(problems)
        )


def verify_release(folder: Path, meta: Mapping[str, Any], card: str) -> int:
    """Check every file of the release (:func:`release_files`) and that every listed file is there;
    a release with no checksums is refused. Returns the number of files checked."""
    sums = recorded(meta, f"{folder / card}")
    if sums is None:
        raise ValueError(
            f"{folder}: the card records no content checksums ({CHECKSUMS_KEY}), so its content cannot be "
            "verified; export the release with this version"
        )
    files = release_files(folder, card)
    verify(folder, sums, sorted({*files, *sums}))
    return len(files)
