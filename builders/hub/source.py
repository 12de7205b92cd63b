"""``--data``: a local folder, or a Hub dataset repo id at a revision, turned into a local folder and
the provenance every result records. The one resolver of every command that reads a dataset
(the evaluation runners, ``report``, ``marinelife judge``, ``human-study``).

A repo id (``naist-nlp/BQA``, ``naist-nlp/BQA@v1.1`` or ``--revision v1.1``) is downloaded with
:func:`huggingface_hub.snapshot_download` into huggingface_hub's own cache, so ``HF_HOME``,
``HF_HUB_CACHE``, ``HF_ENDPOINT``, ``HF_TOKEN`` and offline mode (``HF_HUB_OFFLINE=1``: only what is
cached) work as everywhere else in the ecosystem; a second run downloads nothing. The folder it
gives is read in place like any exported Hub-layout folder. The provenance keeps the repo id, the
revision asked for and the commit it resolved to; a local folder's provenance is its path and a
fingerprint of its card and data files (names and sizes: cheap on a multi-GB release).

Argparse-level imports only: huggingface_hub loads when a repo id is resolved.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.hub.sample import folder_sample_note

# owner/name as the Hub spells repo ids (letters, digits, - _ .), optionally @revision.
_REPO_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95})(?:@(?P<rev>[^\s@]+))?$")
# What a fingerprint covers: the card, the exported data, a work folder's release.
_FINGERPRINT_FILES = ("README.md", "release/meta.json")
_FINGERPRINT_DIRS = ("data", "release")


class DataSourceError(ValueError):
    """``--data`` names nothing that can be read: the message says what was tried and what to do."""


@dataclass(frozen=True)
class DataSource:
    """Where a dataset was read from: a local ``folder`` and how it got there."""

    folder: Path
    repo_id: str | None = None  # None for a local folder
    revision: str | None = None  # as asked (a branch, tag or commit); None = the default branch
    commit: str | None = None  # the commit the revision resolved to
    fingerprint: str | None = None  # local folders only
    sample: str | None = None  # what a bundled sample's release says it was built from (None: real data)

    @property
    def label(self) -> str:
        """``repo@revision (commit abc1234)`` or the folder's path, for messages and reports."""
        if self.repo_id is None:
            return str(self.folder)
        return f"{self.repo_id}@{self.revision or 'main'} (commit {(self.commit or '?')[:12]})"

    def provenance(self) -> dict[str, Any]:
        """What results record about the data (JSON); ``sample`` only for a bundled sample's release,
        so that everything that publishes can refuse it (:mod:`builders.hub.sample`)."""
        if self.repo_id is None:
            recorded = {"folder": str(self.folder.resolve()), "fingerprint": self.fingerprint}
        else:
            recorded = {"repo_id": self.repo_id, "revision": self.revision, "commit": self.commit}
        return {**recorded, "sample": self.sample} if self.sample else recorded


def folder_fingerprint(folder: Path) -> str:
    """``sha256:<hex>`` over the card (and a work folder's meta.json) and the names and sizes of the
    data files: changes when the data is re-exported or rebuilt, costs no read of the Parquet."""
    digest = hashlib.sha256()
    for name in _FINGERPRINT_FILES:
        path = folder / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    for sub in _FINGERPRINT_DIRS:
        for path in sorted((folder / sub).rglob("*")) if (folder / sub).is_dir() else ():
            if path.is_file():
                digest.update(f"{path.relative_to(folder).as_posix()}\0{path.stat().st_size}\0".encode())
    return "sha256:" + digest.hexdigest()[:16]


@contextmanager
def _quiet_hub() -> Iterator[None]:
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    was_disabled = are_progress_bars_disabled()
    disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            enable_progress_bars()


def _download(repo_id: str, revision: str | None) -> DataSource:
    # Lazy: huggingface_hub (and its HTTP client) only when a repo id is given.
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import GatedRepoError, LocalEntryNotFoundError, RepositoryNotFoundError

    from builders.hub.errors import HubError, hub_errors

    where = f"{repo_id}@{revision or 'main'}"
    local = (
        "or give a local folder (`hf download REPO --repo-type dataset --local-dir DIR`, or one you exported)"
    )
    try:
        with hub_errors(f"--data {where}", endpoint=constants.ENDPOINT, repo_id=repo_id, revision=revision):
            try:
                with _quiet_hub():  # no "Fetching N files" bar on stderr: the command says what it read
                    path = Path(snapshot_download(repo_id, repo_type="dataset", revision=revision))
            except GatedRepoError:
                raise  # worded by hub_errors
            except RepositoryNotFoundError:  # the name may also be a mistyped folder: say both
                raise DataSourceError(
                    f"--data {where}: no local folder {repo_id!r}, and no such dataset repo on the Hub, or it "
                    f"is private (log in with HF_TOKEN or `hf auth login`); {local}"
                ) from None
            except LocalEntryNotFoundError:
                raise DataSourceError(
                    f"--data {where}: not in the Hugging Face cache and the Hub cannot be reached (offline "
                    f"mode HF_HUB_OFFLINE=1, or no connection); download it once online, {local}"
                ) from None
    except HubError as err:
        raise DataSourceError(f"{err}; {local}") from None
    except OSError as err:  # a full disk, a cache folder that cannot be written
        raise DataSourceError(f"--data {where}: could not download the dataset ({err}); {local}") from None
    # snapshot_download returns .../snapshots/<commit>: the revision's resolved commit.
    return DataSource(path, repo_id, revision, path.name, sample=folder_sample_note(path))


def resolve_data(data: str | os.PathLike[str], revision: str | None = None) -> DataSource:
    """``data`` as a local folder or a Hub dataset repo id (``owner/name[@revision]``).

    An existing folder wins over a repo id of the same spelling; ``revision`` with a folder is an
    error (a folder has no revisions). Anything else is a :class:`DataSourceError` naming it.
    """
    text = os.fspath(data)
    path = Path(text).expanduser()
    if path.is_dir():
        if revision:
            raise DataSourceError(f"--data {text} is a local folder; --revision is for Hub repo ids")
        return DataSource(path, fingerprint=folder_fingerprint(path), sample=folder_sample_note(path))
    match = _REPO_ID.match(text)
    if match and not text.startswith((".", "/", "~")):
        inline = match["rev"]
        if inline and revision and inline != revision:
            raise DataSourceError(f"--data {text} names revision {inline!r} but --revision says {revision!r}")
        return _download(match["repo"], revision or inline)
    raise DataSourceError(f"--data {_not_a_source(text, path)}")


def _not_a_source(text: str, path: Path) -> str:
    if path.exists():
        return f"{text}: not a folder (expected a dataset folder or a Hub dataset repo id owner/name)"
    return f"{text}: no such folder, and not a Hub dataset repo id (owner/name)"


def data_argument(text: str) -> str:
    """``--data`` checked as the command line is parsed: an existing folder or something shaped like
    a repo id (downloaded later, by :func:`resolve_data`); anything else fails at once, naming it."""
    path = Path(text).expanduser()
    if path.is_dir() or (_REPO_ID.match(text) and not text.startswith((".", "/", "~"))):
        return text
    raise argparse.ArgumentTypeError(_not_a_source(text, path))


def add_data_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str, *, required: bool = True
) -> None:
    """``--data FOLDER_OR_REPO --revision REV`` (what :func:`resolve_data` reads)."""
    parser.add_argument(
        "--data",
        required=required,
        type=data_argument,
        metavar="FOLDER_OR_REPO",
        help=f"{what}: a local folder (an exported Hub-layout folder or the pipeline's work folder) or a "
        "Hub dataset repo id such as naist-nlp/BQA (downloaded once into the Hugging Face cache; HF_HOME, "
        "HF_ENDPOINT, HF_TOKEN and HF_HUB_OFFLINE=1 apply)",
    )
    parser.add_argument(
        "--revision",
        help="with a repo id: the branch, tag or commit to read (default main; also REPO@REV); "
        "results record the commit it resolved to",
    )


def required_data_from_args(args: argparse.Namespace) -> DataSource:
    """:func:`data_from_args` for commands whose ``--data`` is required (argparse already enforces it)."""
    source = data_from_args(args)
    if source is None:
        raise DataSourceError("--data is required: a local folder or a Hub dataset repo id")
    return source


def data_from_args(args: argparse.Namespace) -> DataSource | None:
    """The :class:`DataSource` of ``--data``/``--revision`` (None when ``--data`` was not given)."""
    if args.data is None:
        if getattr(args, "revision", None):
            raise DataSourceError("--revision needs --data (a Hub dataset repo id)")
        return None
    return resolve_data(args.data, args.revision)
