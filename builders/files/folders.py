"""Folders a command writes as a whole: the one ownership check, and an atomic replacement.

Every command that writes a folder of its own (``export``, ``human-study make``, a MarineLife-16K
release, the BoLD sample, ``demo``) goes through :func:`check_replaceable`, and those that replace it
whole through :func:`atomic_directory`, which runs the check itself: no caller can forget it. A folder
may be replaced only if it is new, empty, or holds the writer's own *marker* file (which the writer
leaves in it), and never if it is, or holds, the current directory or a ``protect`` path (the work
folder with its paid reply cache, the dataset read). A folder of notes, a dataset or a work folder given
by mistake is refused, not wiped. Each writer has its own marker, so one command's folder is not
taken for another's. The marker lists the files the writer wrote; anything else a replaced folder holds
(a rater's answers kept in a study folder, a user's notes) is carried into the new folder, never lost.

The replacement itself is one ``renameat2(RENAME_EXCHANGE)`` on Linux: the new folder and the old one
swap places in a single step, so a process killed at any moment leaves the old folder or the new one
at the target, never neither. Elsewhere (or on a file system without it) it is two renames with the
old folder parked as ``.<name>.old-<pid>``; a later write to the same target puts such a parked folder
back if its process died before the second rename, and removes what killed writers left beside it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from builders.files.jsonio import PathLike, _publishable, naming, write_text_atomic

log = logging.getLogger(__name__)

_AT_FDCWD, _RENAME_EXCHANGE = -100, 2
_NEW, _OLD = "new", "old"  # .<name>.new-<pid>-XXXX: being written; .<name>.old-<pid>: parked


def _owned(target: Path, marker: str, legacy: Collection[str]) -> bool:
    if (target / marker).is_file():
        return True
    entries = {p.name for p in target.iterdir()}
    return not entries or bool(legacy) and entries <= set(legacy)


#: What a writer must not replace: paths, or ``{"the work folder": path, ...}`` to name them in errors.
Protected = Mapping[str, PathLike] | Iterable[PathLike]


def check_replaceable(
    target: PathLike,
    *,
    marker: str,
    protect: Protected = (),
    legacy: Collection[str] = (),
) -> Path:
    """``target`` resolved, if the writer whose marker is ``marker`` may replace it; else a ValueError
    saying why and what to do.

    Never a folder that is, or contains, the current directory or one of ``protect`` (a folder or a
    file). An existing folder must be empty or hold the file ``marker`` (a relative path; what
    :func:`atomic_directory` leaves in the folders it writes). ``legacy``: the entry names the writer
    wrote before it left markers; a folder holding nothing else is taken as its own.
    """
    target = Path(target).resolve()
    named = protect.items() if isinstance(protect, Mapping) else (("an input", p) for p in protect)
    for what, kept in (("the current directory", Path.cwd()), *named):
        kept = Path(kept).resolve()
        if kept == target or target in kept.parents:
            raise ValueError(
                f"refusing to write {target}: it would replace {what} {kept}"
                + (" (which is inside it)" if kept != target else "")
                + "; give a new folder for the output"
            )
    if target.exists() and not target.is_dir():
        raise ValueError(f"refusing to write {target}: it is a file, not a folder")
    if target.is_dir() and not _owned(target, marker, legacy):
        raise ValueError(
            f"refusing to replace {target}: it is not empty and was not written by this command (no "
            f"{marker} in it); give a new or empty folder, or remove this one yourself"
        )
    return target


def claim_folder(target: PathLike, *, marker: str, protect: Protected = ()) -> Path:
    """``target``, created, for a command that writes several files into it one by one (each atomically,
    e.g. a report and its plots): it must be new, empty, or already this writer's (:func:`check_replaceable`),
    and gets ``marker`` now. Files in it that the command does not write are left as they are."""
    target = check_replaceable(target, marker=marker, protect=protect)
    target.mkdir(parents=True, exist_ok=True)
    if not (target / marker).is_file():
        note = "written by vqabench; the same command may write into this folder again\n"
        write_text_atomic(target / marker, note)
    return target


def copy_folder(src: PathLike, dst: PathLike) -> None:
    """Copy a shipped folder (files only, no caches) into ``dst`` (inside a folder being written); a copy
    that fails (a full disk) is an OSError naming the first file not written."""
    try:
        shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    except shutil.Error as err:  # a list of (source, target, reason)
        first = err.args[0][0]
        raise OSError(
            f"cannot write {first[1]} ({first[2]}; {len(err.args[0])} file(s) not copied)"
        ) from None


def remove_entries(folder: Path, names: Iterable[str]) -> None:
    """Remove the entries ``names`` of a folder its writer owns (:func:`claim_folder`): what a rerun
    writes again. Only plain names of the folder (:func:`entry_path`)."""
    for name in names:
        path = entry_path(folder, name, f"{folder}")
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def entry_path(folder: PathLike, name: object, where: str) -> Path:
    """``folder / name`` for a ``name`` that comes from data (a row id, a clip or file name); a ValueError
    naming ``where`` for any name that is not one plain entry of ``folder``: empty, ``.``, ``..``,
    absolute, a drive (``C:``), a path separator (``/`` or ``\\``) or a NUL in it. The one way a path
    is built from data, so no id can make a command write (or read) outside its folder."""
    if not isinstance(name, str) or name in ("", ".", ".."):
        raise ValueError(f"{where}: {name!r} cannot name a file (expected a plain file name)")
    bad = [c for c in ("/", "\\", "\0") if c in name] + (
        ["a drive"] if Path(name).drive or name[1:2] == ":" else []
    )
    if bad:
        shown = ", ".join("NUL" if c == "\0" else repr(c) if len(c) == 1 else c for c in bad)
        raise ValueError(
            f"{where}: {name!r} cannot name a file: it holds {shown} (one plain name is allowed)"
        )
    return Path(folder) / name


def confined_path(root: PathLike, path: str, where: str, *, also: Iterable[PathLike] = ()) -> Path:
    """``path`` (relative to ``root``) resolved, if it stays inside ``root``; else a ValueError naming
    ``where``. An absolute path is refused, and so is one that leaves ``root`` by ``..`` or through a
    symbolic link (its real location is what counts); ``also``: more folders the real location may be
    in (the blob store a Hub cache snapshot links into)."""
    if not isinstance(path, str) or not path or "\0" in path:
        raise ValueError(f"{where}: expected a relative file path, got {path!r}")
    if Path(path).is_absolute() or Path(path).drive:
        raise ValueError(f"{where}: the path {path!r} is absolute; only a path inside {root} is read")
    real = (Path(root) / path).resolve()
    roots = [Path(r).resolve() for r in (root, *also)]
    if not any(real == r or r in real.parents for r in roots):
        raise ValueError(f"{where}: the path {path!r} leads outside {root} (to {real}); it is not read")
    return real


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


def _leftovers(target: Path) -> Iterator[tuple[str, int, Path]]:
    """``(kind, pid, path)`` of what writers of ``target`` left beside it."""
    prefix = f".{target.name}."
    if not target.parent.is_dir():
        return
    for path in target.parent.iterdir():
        kind, _, rest = path.name.removeprefix(prefix).partition("-")
        if path.name.startswith(prefix) and kind in (_NEW, _OLD) and rest.split("-")[0].isdigit():
            yield kind, int(rest.split("-")[0]), path


def _recover(target: Path) -> None:
    """Put back a folder parked by a writer killed between its two renames; remove dead writers' rest."""
    dead = [(kind, path) for kind, pid, path in _leftovers(target) if pid != os.getpid() and not _alive(pid)]
    for kind, path in dead:
        if kind == _OLD and not target.exists():
            os.rename(path, target)
            log.warning("%s: put back the folder an interrupted write had moved to %s", target, path.name)
        else:
            shutil.rmtree(path, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(b))


def _files(folder: Path) -> Iterator[str]:
    """The relative paths of every entry under ``folder`` that is not a folder (links not followed)."""
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        names += [d for d in dirs if (here / d).is_symlink()]
        yield from ((here / n).relative_to(folder).as_posix() for n in names)


def _written(target: Path, marker: str, legacy: Collection[str]) -> set[str]:
    """What the writer recorded in ``target``'s marker as its own (a folder with no marker, owned by
    ``legacy``: those entries and all under them)."""
    if not (target / marker).is_file():
        return {rel for rel in _files(target) if rel.split("/")[0] in legacy}
    try:
        listed = json.loads((target / marker).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        listed = []
    return {marker, *(str(rel) for rel in listed)}


def _carry_foreign(target: Path, tmp: Path, marker: str, legacy: Collection[str]) -> list[str]:
    """Link into ``tmp`` every file of ``target`` its writer did not write (copy where links fail), so
    replacing ``target`` loses none; a ValueError if the new folder has a file of the same name."""
    if not target.is_dir():
        return []
    written = _written(target, marker, legacy)
    carried = []
    for rel in _files(target):
        if rel in written:
            continue
        dest = tmp / rel
        if dest.exists() or dest.is_symlink():
            raise ValueError(
                f"refusing to replace {target}: {rel} in it was not written by this command and the new "
                "output has a file of that name; move it out of the folder first"
            )
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(target / rel, dest, follow_symlinks=False)
        except OSError:
            shutil.copy2(target / rel, dest, follow_symlinks=False)
        carried.append(rel)
    return carried


def _replace(tmp: Path, target: Path) -> None:
    if not target.exists():
        os.rename(tmp, target)
    elif _exchange(tmp, target):
        shutil.rmtree(tmp)  # now the old folder
    else:
        old = target.with_name(f".{target.name}.{_OLD}-{os.getpid()}")
        os.rename(target, old)
        try:
            os.rename(tmp, target)
        except BaseException:
            os.rename(old, target)
            raise
        shutil.rmtree(old)


@contextmanager
def atomic_directory(
    target: PathLike,
    *,
    marker: str,
    protect: Protected = (),
    legacy: Collection[str] = (),
) -> Iterator[Path]:
    """Yield an empty folder beside ``target``; when the block ends without error, it replaces ``target``.

    ``target`` must pass :func:`check_replaceable` (``marker``, ``protect``, ``legacy``), checked before
    the block runs; the new folder gets the file ``marker``, listing what the block wrote. Files of the
    old ``target`` that its writer did not write are carried over. On error the new folder is removed
    and ``target`` is left as it was.
    """
    target = Path(target).resolve()
    _recover(target)
    target = check_replaceable(target, marker=marker, protect=protect, legacy=legacy)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.{_NEW}-{os.getpid()}-", dir=target.parent))
    _publishable(tmp, 0o777)
    try:
        yield tmp
        files = sorted(rel for rel in _files(tmp) if rel != marker)
        (tmp / marker).parent.mkdir(parents=True, exist_ok=True)
        note = "written by vqabench; writing to this folder again replaces these files, and keeps any other"
        write_text_atomic(tmp / marker, json.dumps({"note": note, "files": files}, indent=1) + "\n")
        carried = _carry_foreign(target, tmp, marker, legacy)
        if carried:
            log.warning(
                "%s: kept %d file(s) this command did not write: %s", target, len(carried), ", ".join(carried)
            )
        _replace(tmp, target)
    except OSError as err:  # a full disk names no file: name the folder being written
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
        raise naming(err, target) from None
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
        raise
