"""A full disk, told apart from every other write error: a run that cannot save what it pays for must
stop at once, with one line, not go on paying (and print a traceback per reply)."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

#: OSError numbers that mean "no room to write": no space, or over the user's quota.
NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFull(RuntimeError):
    """A write failed for lack of space; the message names what could not be written."""


def is_disk_full(err: BaseException) -> bool:
    """Whether ``err`` says the disk (or the quota) is full: ``ENOSPC``/``EDQUOT``, or SQLite's
    "database or disk is full" (``SQLITE_FULL``)."""
    if isinstance(err, DiskFull):
        return True
    if isinstance(err, OSError):
        return err.errno in NO_SPACE
    return isinstance(err, sqlite3.OperationalError) and "disk is full" in str(err)


@contextmanager
def writing(what: str) -> Iterator[None]:
    """Turn a full disk met inside into :class:`DiskFull` naming ``what`` (other errors pass)."""
    try:
        yield
    except (OSError, sqlite3.OperationalError) as err:
        if not is_disk_full(err):
            raise
        raise DiskFull(f"no space left on the disk to write {what}") from None
