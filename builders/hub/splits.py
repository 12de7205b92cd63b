"""The one reader of a Hub-layout folder: what counts as one, and one config's split read straight
from its Parquet shards.

A Hub-layout folder is a ``README.md`` card whose YAML header declares ``configs:`` with the data
files of each split, and those files present as Parquet (what :func:`builders.hub.layout.write_hub_folder`
writes and ``load_dataset(folder)`` reads). Nothing here copies the dataset: the Parquet files are
read in place with pyarrow, only the columns asked for, so opening a split any number of times leaves
no cache behind (``load_dataset`` would first convert every shard into Arrow files under a cache
folder; ``benchmarks/hub_splits.py`` measures the two). Cells come back as ``load_dataset(...).to_list()``
gives them, except that media columns are never decoded: a video cell is ``{"path", "bytes"}``, what
``datasets.Video(decode=False)`` gives and :func:`builders.video.sampler.sample_frames` reads (no torch).
"""

from __future__ import annotations

import bisect
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from builders.files.folders import confined_path
from builders.hub.checksums import recorded, verify
from builders.hub.layout import CARD_FILE, read_card, shard_damage

log = logging.getLogger(__name__)

#: The split of a data file given without one (the Hub's rule).
DEFAULT_SPLIT = "train"


class NotAHubFolder(FileNotFoundError):
    """The folder has no dataset card at all (so it is some other kind of folder, or none)."""


def _patterns(value: object, where: str) -> list[str]:
    patterns = [value] if isinstance(value, str) else value
    if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) for p in patterns):
        raise ValueError(f"{where}: expected a path pattern or a list of them, got {value!r}")
    return patterns


def _split_patterns(data_files: object, where: str) -> dict[str, list[str]]:
    """``data_files`` in any of the card's forms -> split -> path patterns."""
    if isinstance(data_files, dict):  # {split: pattern(s)}
        return {str(s): _patterns(p, f"{where}, split {s!r}") for s, p in data_files.items()}
    if isinstance(data_files, list) and data_files and all(isinstance(e, dict) for e in data_files):
        out: dict[str, list[str]] = {}  # [{split, path}], what write_hub_folder writes
        for entry in data_files:
            split = str(entry.get("split", DEFAULT_SPLIT))
            out.setdefault(split, []).extend(_patterns(entry.get("path"), f"{where}, split {split!r}"))
        return out
    return {DEFAULT_SPLIT: _patterns(data_files, where)}  # pattern(s) of a single split


@dataclass(frozen=True)
class HubFolder:
    """A folder in Hub layout: its configs, each split's Parquet shards, and the default config."""

    path: Path
    shards: dict[str, dict[str, tuple[Path, ...]]]  # config -> split -> shards, in file-name order
    default: str | None  # the config a bare ``load_dataset(folder)`` reads; None if ambiguous
    checksums: dict[str, str] | None = None  # the card's (builders.hub.checksums); None: it has none

    def config_name(self, config: str | None = None) -> str:
        """``config``, checked, or the default config when None."""
        if config is None:
            if self.default is None:
                raise ValueError(f"{self.path}: the card marks no single default config; name one")
            return self.default
        if config not in self.shards:
            raise ValueError(
                f"{self.path}: no config {config!r} in the card (configs: {sorted(self.shards)})"
            )
        return config

    def split(self, split: str, config: str | None = None) -> HubSplit:
        """One split of ``config`` (default: the default config)."""
        name = self.config_name(config)
        if split not in self.shards[name]:
            raise ValueError(
                f"{self.path}: config {name!r} has no split {split!r} (splits: {list(self.shards[name])})"
            )
        shards = self.shards[name][split]
        if self.checksums is not None:  # the split's files, as the export wrote them
            verify(self.path, self.checksums, [f.relative_to(self.path).as_posix() for f in shards])
        return HubSplit(self.path, name, split, shards)


def read_hub_folder(folder: str | os.PathLike[str]) -> HubFolder:
    """The folder's card and data files, checked; the one rule for what a Hub-layout folder is.

    No ``README.md``: :class:`NotAHubFolder`. A card without ``configs:``, a pattern that matches no
    file, or a data file that is not Parquet: ValueError naming the folder, config and split.
    """
    path = Path(folder)
    if not (path / CARD_FILE).is_file():
        raise NotAHubFolder(f"{path}: no {CARD_FILE} dataset card")
    meta, _ = read_card(path)
    checksums = recorded(meta, str(path / CARD_FILE))
    if checksums is None:
        log.warning("%s: the card records no content checksums: the data read is not verified", path)
    configs = meta.get("configs")
    if not isinstance(configs, list) or not configs:
        raise ValueError(
            f"{path}: {CARD_FILE} declares no 'configs:' in its YAML header, so it is no Hub-layout folder "
            "(its card names each config's data files)"
        )
    shards: dict[str, dict[str, tuple[Path, ...]]] = {}
    defaults = []
    for entry in configs:
        if not isinstance(entry, dict) or not isinstance(entry.get("config_name"), str):
            raise ValueError(f"{path}: {CARD_FILE}: a config entry has no config_name: {entry!r}")
        name = entry["config_name"]
        where = f"{path}: config {name!r}"
        if entry.get("default"):
            defaults.append(name)
        shards[name] = {}
        for split, patterns in _split_patterns(entry.get("data_files"), where).items():
            files = sorted({f for p in patterns for f in path.glob(p) if f.is_file()})
            if not files:
                raise ValueError(f"{where}, split {split!r}: no data file matches {patterns}")
            other = [f.name for f in files if f.suffix != ".parquet"]
            if other:
                raise ValueError(f"{where}, split {split!r}: only Parquet data files are read, found {other}")
            shards[name][split] = tuple(files)
    if len(defaults) == 1:
        default: str | None = defaults[0]
    elif not defaults and len(shards) == 1:
        default = next(iter(shards))
    else:
        default = "default" if not defaults and "default" in shards else None
    return HubFolder(path, shards, default, checksums)


@dataclass
class HubSplit:
    """One config's split, read from its Parquet shards in place (nothing is copied).

    :meth:`rows` reads whole columns; :meth:`cell` reads one value, loading only the row group that
    holds it (the last one read is kept, so reading a column row by row reads each group once).
    """

    folder: Path
    config: str
    split: str
    shards: tuple[Path, ...]
    column_names: list[str] = field(init=False)
    num_rows: int = field(init=False)
    _starts: list[int] = field(init=False, repr=False)  # first row of each (shard, row group)
    _groups: list[tuple[Path, int]] = field(init=False, repr=False)
    # One row group of one column, kept as Arrow (a video cell becomes Python bytes only when asked).
    _cached: tuple[tuple[Path, int, str], pa.ChunkedArray] | None = field(
        default=None, init=False, repr=False
    )
    # The step loop's prepare threads call cell() at once: one reads a group, the others wait for it.
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        schemas = {shard: pq.read_schema(shard) for shard in self.shards}
        self.column_names = list(schemas[self.shards[0]].names)
        for shard, schema in schemas.items():
            if list(schema.names) != self.column_names:
                raise ValueError(
                    f"{self.where}: {shard.name} has columns {schema.names}, {self.shards[0].name} "
                    f"{self.column_names}; the shards of one split share one schema"
                )
        self._starts, self._groups, row = [], [], 0
        for shard in self.shards:
            meta = pq.read_metadata(shard)
            for g in range(meta.num_row_groups):
                self._starts.append(row)
                self._groups.append((shard, g))
                row += meta.row_group(g).num_rows
        self.num_rows = row

    def __len__(self) -> int:
        return self.num_rows

    @property
    def where(self) -> str:
        return f"{self.folder}: config {self.config!r}, split {self.split!r}"

    def _check(self, columns: Sequence[str]) -> None:
        missing = [c for c in columns if c not in self.column_names]
        if missing:
            raise ValueError(f"{self.where}: no column(s) {missing} (columns: {self.column_names})")

    def rows(self, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Every row, as dicts of ``columns`` (default: all), in split order."""
        names = list(columns) if columns is not None else self.column_names
        self._check(names)
        rows: list[dict[str, Any]] = []
        for shard in self.shards:
            with pq.ParquetFile(shard) as file:
                table = file.read(columns=names)
            try:
                rows += table.to_pylist()
            except (UnicodeDecodeError, pa.ArrowException) as err:
                raise ValueError(
                    shard_damage(shard, names) or f"{shard}: {type(err).__name__}: {err}"
                ) from None
        return rows

    def video(self, index: int, column: str = "video", item: str | None = None) -> dict[str, Any]:
        """Row ``index``'s video cell, safe to read: ``{"path", "bytes"}`` with its bytes, or with
        ``bytes`` None and ``path`` the file it names *inside this folder* (absolute, resolved). A cell
        naming an absolute path or one leading out of the folder (``..``, a symbolic link) is a
        ValueError naming the row and field: a dataset never makes the tool read another local file.
        ``item``: the row's id, for the message."""
        where = f"{self.where}, row {index}{f' ({item})' if item else ''}, field {column!r}"
        value = self.cell(index, column)
        if not isinstance(value, dict) or not ({"bytes", "path"} & value.keys()):
            raise ValueError(f"{where}: expected a video {{bytes, path}}, got {type(value).__name__}")
        if value.get("bytes") is not None:
            return value
        if not value.get("path"):
            raise ValueError(f"{where}: the video has neither bytes nor a path")
        # A Hub cache snapshot (.../snapshots/<commit>/) links its files into the repo's blob store.
        blobs = [self.folder.parent.parent / "blobs"] if self.folder.parent.name == "snapshots" else []
        return {"path": str(confined_path(self.folder, value["path"], where, also=blobs)), "bytes": None}

    def cell(self, index: int, column: str) -> Any:
        """Row ``index``'s ``column``, as stored: a video is ``{"path", "bytes"}``, undecoded (read
        videos with :meth:`video`)."""
        if not 0 <= index < self.num_rows:
            raise IndexError(f"{self.where}: row {index} out of range ({self.num_rows} rows)")
        self._check([column])
        at = bisect.bisect_right(self._starts, index) - 1
        shard, group = self._groups[at]
        with self._lock:
            if self._cached is None or self._cached[0] != (shard, group, column):
                self._cached = None  # freed before the next group is read: one group held, never two
                with pq.ParquetFile(shard) as file:
                    values = file.read_row_group(group, columns=[column]).column(column)
                self._cached = ((shard, group, column), values)
            try:
                return self._cached[1][index - self._starts[at]].as_py()
            except (UnicodeDecodeError, pa.ArrowException) as err:
                raise ValueError(
                    shard_damage(shard, [column]) or f"{shard}: {type(err).__name__}: {err}"
                ) from None


def read_split(
    folder: str | os.PathLike[str],
    split: str,
    config: str | None = None,
    columns: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """``columns`` (default: all) of one split of a Hub-layout folder's ``config`` (default: the
    default config), as rows."""
    return read_hub_folder(folder).split(split, config).rows(columns)
