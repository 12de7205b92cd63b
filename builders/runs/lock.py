"""One run at a time per work folder: an exclusive OS lock that a killed process cannot leave behind.

Two builds (or evaluations) on one work folder would both ask the LLM for every pending item, pay
twice, and append to the same step logs. The first run takes ``fcntl.flock`` on
``<work>/.vqabench.lock`` and writes its PID there; a second run is refused with that PID. The
kernel drops a flock when its holder exits, however it exits (SIGKILL included), so there is no
stale lock to clean up: the PID in the file is only information. The lock is re-entrant within a
process (a runner may call another that locks the same folder). The lock file also marks the folder as a
work folder: a folder that is not empty and has none (notes, a dataset) is refused, never written into.
"""

from __future__ import annotations

import fcntl
import functools
import inspect
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from builders.files.folders import check_replaceable
from builders.files.jsonio import naming
from builders.runs.steps import DEFAULT_CACHE

LOCK_FILE = ".vqabench.lock"
F = TypeVar("F", bound=Callable[..., Any])

_held: dict[Path, tuple[int, int]] = {}  # folder -> (file descriptor, depth) held by this process
_guard = threading.Lock()


class WorkFolderBusy(RuntimeError):
    """Another live process holds the work folder."""


def claim_work_folder(work_dir: str | os.PathLike[str]) -> Path:
    """``work_dir`` resolved and created with its lock file, if it may be a work folder: new, empty, or
    holding the lock file already; a ValueError for a folder of other files (notes, a dataset), the
    current directory or a file. Called by the lock, and by commands that open files in the folder (the
    reply cache) before they take it."""
    # a folder holding only the reply cache is one a caller opened its client in, before the run took it
    cache = ("", "-wal", "-shm", "-journal")
    folder = check_replaceable(work_dir, marker=LOCK_FILE, legacy=[DEFAULT_CACHE + end for end in cache])
    folder.mkdir(parents=True, exist_ok=True)
    os.close(os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644))
    return folder


@contextmanager
def work_folder_lock(work_dir: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``work_dir`` (created if missing) exclusively for the block; :class:`WorkFolderBusy` if
    another process holds it, a ValueError if it is a folder of other files (no lock file in it)."""
    folder = Path(work_dir).resolve()
    with _guard:
        if folder in _held:
            fd, depth = _held[folder]
            _held[folder] = (fd, depth + 1)
        else:
            claim_work_folder(folder)
            fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise WorkFolderBusy(
                    f"work folder {folder} is in use by another run (PID {holder}); wait for it to finish "
                    "or stop it: two runs on one folder would pay for every pending item twice"
                ) from None
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError as err:  # a full disk: the lock is held all the same, the PID is information
                os.close(fd)
                raise naming(err, folder / LOCK_FILE) from None
            _held[folder] = (fd, 1)
    try:
        yield folder
    finally:
        with _guard:
            fd, depth = _held[folder]
            if depth > 1:
                _held[folder] = (fd, depth - 1)
            else:
                del _held[folder]
                os.close(fd)  # closing the descriptor releases the flock


def locks_work_folder(func: F) -> F:
    """Decorate a run function whose ``work_dir`` argument names its work folder: the call holds it."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        with work_folder_lock(signature.bind_partial(*args, **kwargs).arguments["work_dir"]):
            return func(*args, **kwargs)

    return run  # type: ignore[return-value]
