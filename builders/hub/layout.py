"""The one place that writes and checks a dataset folder in Hugging Face Hub layout.

Layout (what `load_dataset(folder)` and the Hub both read; datasets 5 runs no loading scripts)::

    README.md                                    card: YAML (configs, dataset_info, ...) + prose
    data/<config>/<split>-00000-of-0000N.parquet  media bytes embedded, so the folder stands alone

Only public APIs: media files are read here and stored as the ``{"bytes", "path"}`` struct of their
``datasets`` feature (what ``push_to_hub`` stores: the bytes and the file's base name), shards are
cut by a size estimate from the Arrow table and the media files' sizes, media splits get small row
groups (:func:`row_group_rows`), and ``dataset_info`` is
rendered by ``DatasetInfosDict.to_dataset_card_data`` into a ``huggingface_hub.DatasetCardData``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCardData

from builders.files.folders import Protected, atomic_directory, check_replaceable, entry_path
from builders.files.jsonio import write_text_atomic
from builders.hub.benchmark import check_eval_yaml, read_eval_yaml
from builders.hub.cards import CARD_FILE, read_card  # noqa: F401 - read_card: also imported from here
from builders.hub.checksums import CHECKSUMS_KEY, record
from builders.hub.sample import SAMPLE_KEY  # noqa: F401 - the exports write it; imported from here

DEFAULT_MAX_SHARD_BYTES = 500 * 1024 * 1024
# Row groups of a split with media: at most this many rows (the dataset viewer's page, and what
# `datasets` used for image and audio shards) and about this many bytes. A reader holds one row
# group of a column to give one cell (`builders.hub.splits.HubSplit.cell`), so this, not the split,
# bounds its memory; `datasets` 5 alone cuts groups at 100 MB, i.e. a whole 300-clip split in one.
MEDIA_ROW_GROUP_ROWS = 100
MEDIA_ROW_GROUP_BYTES = 16 * 1024 * 1024
SHARD_NAME = re.compile(r"^(?P<split>.+)-(?P<index>\d{5})-of-(?P<count>\d{5})\.parquet$")
SPLIT_ORDER = ("train", "validation", "test")
# Left in every folder write_hub_folder makes: only such a folder (or an empty one) is ever replaced.
# Hidden and beside the shards, so load_dataset ignores it, publish never uploads it, and the
# folder's top level stays README.md + data/.
EXPORT_MARKER = "data/.vqabench-export"


def _ordered_splits(dataset_dict: datasets.DatasetDict) -> list[str]:
    known = [s for s in SPLIT_ORDER if s in dataset_dict]
    return known + sorted(s for s in dataset_dict if s not in SPLIT_ORDER)


# Features whose values are files (a {"bytes", "path"} struct with decode=False).
MEDIA_FEATURES = (datasets.Video, datasets.Image, datasets.Audio)


def _has_media(feature: Any) -> bool:
    if isinstance(feature, MEDIA_FEATURES):
        return True
    if isinstance(feature, Mapping):
        return any(_has_media(f) for f in feature.values())
    if isinstance(feature, (list, tuple)):
        return any(_has_media(f) for f in feature)
    inner = getattr(feature, "feature", None)  # List, LargeList, Sequence
    return inner is not None and _has_media(inner)


def _media_columns(dataset: datasets.Dataset, split: str) -> list[str]:
    """The top-level media columns; media nested inside another column is refused, not left unembedded."""
    media = [name for name, f in dataset.features.items() if isinstance(f, MEDIA_FEATURES)]
    nested = [name for name, f in dataset.features.items() if name not in media and _has_media(f)]
    if nested:
        raise ValueError(
            f"split {split!r}: media nested inside column(s) {nested}; only top-level media columns are embedded"
        )
    return media


def _as_files(dataset: datasets.Dataset, media: list[str]) -> datasets.Dataset:
    """The media columns as ``{"bytes", "path"}`` structs (``decode=False``, a schema-only cast)."""
    for name in media:
        dataset = dataset.cast_column(name, dataclasses.replace(dataset.features[name], decode=False))
    return dataset


def _is_local(path: str) -> bool:
    return "://" not in path and "::" not in path


def _estimated_nbytes(dataset: datasets.Dataset, media: list[str]) -> int:
    """The split's Arrow bytes (its share of the table) plus the size of every media file not yet embedded."""
    table = dataset.data
    nbytes = table.nbytes * len(dataset) // max(1, len(table))
    if media and len(dataset):
        for batch in _as_files(dataset, media).select_columns(media).iter(batch_size=1000):
            for values in batch.values():
                for value in values:
                    if (
                        value is not None
                        and value["bytes"] is None
                        and value["path"]
                        and _is_local(value["path"])
                    ):
                        with contextlib.suppress(
                            OSError
                        ):  # an unreadable file is reported, by row, by _embed
                            nbytes += os.path.getsize(value["path"])
    return nbytes


def _embed(dataset: datasets.Dataset, media: list[str], split: str, first_row: int = 0) -> datasets.Dataset:
    """Read every local media file into its row (path kept as the file's base name), so the Parquet
    file stands alone; values that already hold bytes are kept. ``first_row``: the row number in the
    split of the dataset's first row, for errors."""
    if not media:
        return dataset
    files = _as_files(dataset, media)

    def read(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        for name in media:
            column = []
            for i, value in zip(indices, batch[name], strict=True):
                path = None if value is None else value["path"]
                if path is None:
                    column.append(value)
                    continue
                where = f"split {split!r}, row {first_row + i}, column {name!r}"
                if not _is_local(path):
                    if value["bytes"] is None:
                        raise ValueError(f"{where}: {path} is not a local file; download it before exporting")
                    column.append(value)
                    continue
                data = value["bytes"]
                if data is None:
                    try:
                        data = Path(path).read_bytes()
                    except OSError as err:
                        raise ValueError(f"{where}: cannot read {path} ({err.strerror})") from None
                column.append({"bytes": data, "path": os.path.basename(path)})
            batch[name] = column
        return batch

    embedded = files.map(read, batched=True, with_indices=True, features=files.features, keep_in_memory=True)
    for name in media:
        embedded = embedded.cast_column(name, dataset.features[name])
    return embedded


def row_group_rows(num_rows: int, nbytes: int) -> int:
    """Rows per Parquet row group for a media split of ``num_rows`` rows and about ``nbytes`` bytes:
    at most :data:`MEDIA_ROW_GROUP_ROWS`, and about :data:`MEDIA_ROW_GROUP_BYTES` each."""
    per_row = max(1, nbytes // max(1, num_rows))
    return max(1, min(MEDIA_ROW_GROUP_ROWS, MEDIA_ROW_GROUP_BYTES // per_row))


def _write_split(dataset: datasets.Dataset, data_dir: Path, split: str, max_shard_bytes: int) -> int:
    """Write one split as Parquet shards with external media embedded; returns bytes written."""
    media = _media_columns(dataset, split)
    nbytes = _estimated_nbytes(dataset, media)
    num_shards = max(1, min(len(dataset), math.ceil(nbytes / max_shard_bytes)))
    rows_per_group = row_group_rows(len(dataset), nbytes) if media else None  # None: datasets' rule
    written = first_row = 0
    for index in range(num_shards):
        shard = dataset.shard(num_shards=num_shards, index=index, contiguous=True)
        path = data_dir / f"{split}-{index:05d}-of-{num_shards:05d}.parquet"
        _embed(shard, media, split, first_row).to_parquet(str(path), batch_size=rows_per_group)
        written += path.stat().st_size
        first_row += len(shard)
    return written


def _info_yaml(name: str, info: datasets.DatasetInfo) -> dict[str, Any]:
    """One ``dataset_info`` entry as the Hub reads it, always a mapping that starts with its config name.

    Refuses features whose YAML means something else once a YAML tool sorts its keys (see
    :func:`feature_problems`): a card must survive any editor, not only this writer.
    """
    card = DatasetCardData()
    DatasetInfosDict({name: info}).to_dataset_card_data(card)
    entry = card.to_dict()["dataset_info"]
    entry = {"config_name": name, **{k: v for k, v in entry.items() if k != "config_name"}}
    problems = feature_problems(entry, f"config {name!r}")
    if problems:
        raise ValueError("the card cannot describe these features safely:\n  - " + "\n  - ".join(problems))
    return entry


def _sorted_keys(value: Any) -> Any:
    """``value`` as a YAML tool that sorts mapping keys (``yaml.safe_dump``'s default) writes it."""
    if isinstance(value, Mapping):
        return {k: _sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(v) for v in value]
    return value


def feature_problems(info: Mapping[str, Any], where: str) -> list[str]:
    """Features of one ``dataset_info`` entry that ``datasets`` cannot read, or reads differently once
    the keys are sorted. ``datasets`` takes a feature's *first* key as its type, so a fixed-length
    list (``list``, then ``length``) becomes a ``length`` feature after sorting and fails with
    ``TypeError: 'int' object is not a mapping``."""
    problems = []
    items = info.get("features")
    if items is None:
        return []
    if not isinstance(items, list):
        return [f"{where}: dataset_info features must be a list, got {type(items).__name__}"]

    def read(item: Any) -> datasets.Features | None:  # how datasets reads one feature of a card
        infos = DatasetInfosDict.from_dataset_card_data({"dataset_info": [{"features": [item]}]})
        return infos["default"].features

    for i, item in enumerate(items):
        name = item.get("name", f"#{i}") if isinstance(item, Mapping) else f"#{i}"
        try:
            as_written = read(dict(item))
        except Exception as err:  # noqa: BLE001 - any failure means the Hub cannot read it either
            problems.append(
                f"{where}: feature {name!r} cannot be read by datasets ({type(err).__name__}: {err}); "
                "datasets takes a feature's first key as its type: was the card rewritten with sorted keys?"
            )
            continue
        try:
            resorted = read(_sorted_keys(item))
        except Exception:  # noqa: BLE001
            resorted = None
        if resorted != as_written:
            problems.append(
                f"{where}: feature {name!r} changes meaning when a YAML tool sorts its keys "
                f"({sorted(item)}); declare it without an order-dependent key such as 'length'"
            )
    return problems


def _card_yaml(
    configs: Mapping[str, datasets.DatasetDict],
    default_config: str,
    sizes: Mapping[str, Mapping[str, int]],
    card_data: Mapping[str, Any],
) -> dict[str, Any]:
    meta: dict[str, Any] = dict(card_data)
    meta["configs"] = [
        {
            "config_name": name,
            **({"default": True} if name == default_config else {}),
            "data_files": [
                {"split": split, "path": f"data/{name}/{split}-*.parquet"} for split in _ordered_splits(dd)
            ],
        }
        for name, dd in configs.items()
    ]
    infos = []
    for name, dd in configs.items():
        splits = datasets.SplitDict()
        for split in _ordered_splits(dd):
            splits.add(
                datasets.SplitInfo(name=split, num_bytes=sizes[name][split], num_examples=len(dd[split]))
            )
        info = datasets.DatasetInfo(
            features=next(iter(dd.values())).features,
            splits=splits,
            download_size=sum(sizes[name].values()),
            dataset_size=sum(sizes[name].values()),
        )
        infos.append(_info_yaml(name, info))
    meta["dataset_info"] = infos
    return meta


def render_card(meta: Mapping[str, Any], body: str) -> str:
    front = yaml.safe_dump(dict(meta), sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{front}---\n\n{body.strip()}\n"


def write_hub_folder(
    out_dir: str | Path,
    configs: Mapping[str, datasets.DatasetDict],
    *,
    default_config: str,
    card_body: str,
    card_data: Mapping[str, Any] | None = None,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    protect: Protected = (),
    extra_files: Mapping[str, str] | None = None,
) -> Path:
    """Write ``configs`` (name -> DatasetDict) and a card to ``out_dir``, replacing it atomically.

    ``extra_files`` (root file name -> text), such as ``eval.yaml``, are written into the same folder.

    The folder is assembled beside ``out_dir`` and renamed into place, so a crash never leaves a
    half-written release where a finished one is expected. Only a folder this function wrote before
    (:data:`EXPORT_MARKER`) or an empty one is replaced, never one that is or contains the current
    directory or a ``protect`` folder (see :func:`check_export_target`).
    """
    if default_config not in configs:
        raise ValueError(f"default config {default_config!r} is not one of {sorted(configs)}")
    empty = [
        f"{name}/{split}"
        for name, dd in configs.items()
        for split in _ordered_splits(dd)
        if not len(dd[split])
    ]
    if empty:  # load_dataset would fail with "Instruction ... corresponds to no data!"
        raise ValueError(
            f"split(s) {', '.join(empty)} have no rows: a Hub dataset cannot have an empty split"
        )
    with atomic_directory(out_dir, marker=EXPORT_MARKER, protect=protect) as tmp:
        sizes: dict[str, dict[str, int]] = {}
        for name, dd in configs.items():
            data_dir = tmp / "data" / name
            data_dir.mkdir(parents=True)
            sizes[name] = {s: _write_split(dd[s], data_dir, s, max_shard_bytes) for s in _ordered_splits(dd)}
        for name, text in (extra_files or {}).items():
            if name in (CARD_FILE, "data"):
                raise ValueError(f"extra file {name!r}: expected a file name at the folder's root")
            write_text_atomic(entry_path(tmp, name, "extra file"), text)
        meta = _card_yaml(configs, default_config, sizes, card_data or {})
        meta[CHECKSUMS_KEY] = record(tmp, CARD_FILE)  # every file but the card, as written
        write_text_atomic(tmp / CARD_FILE, render_card(meta, card_body))
    return Path(out_dir).resolve()


def check_export_target(out_dir: str | Path, work_dir: str | Path) -> Path:
    """Refuse, before any work, an ``out_dir`` that :func:`write_hub_folder` would refuse to replace."""
    return check_replaceable(out_dir, marker=EXPORT_MARKER, protect={"the work folder": work_dir})


def _split_files(folder: Path, config: Mapping[str, Any]) -> dict[str, list[Path]]:
    """The files each split of a declared config reads (its ``data_files`` patterns, globbed)."""
    entries = config.get("data_files") or []
    entries = [{"split": "train", "path": entries}] if isinstance(entries, str | list) and not (
        entries and isinstance(entries[0], dict)
    ) else entries  # fmt: skip
    out: dict[str, list[Path]] = {}
    for entry in entries:
        patterns = entry["path"] if isinstance(entry["path"], list) else [entry["path"]]
        out[entry["split"]] = sorted({p for pattern in patterns for p in folder.glob(pattern) if p.is_file()})
    return out


def _shard_problems(name: str, split: str, files: list[Path]) -> list[str]:
    """Shards named ``<split>-XXXXX-of-NNNNN`` must form one whole set: two exports' shards side by
    side (a re-sharded release pushed over the old one) are read together and double the rows."""
    named = [SHARD_NAME.match(f.name) for f in files]
    sets = {int(m["count"]) for m in named if m}
    indices = sorted(int(m["index"]) for m in named if m)
    if len(sets) > 1 or (sets and indices != list(range(next(iter(sets))))):
        listed = ", ".join(f.name for f in files)
        return [f"config {name!r} split {split!r}: its files are not one set of shards ({listed})"]
    return []


def _has_text(kind: pa.DataType) -> bool:
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return True
    return any(_has_text(kind.field(i).type) for i in range(kind.num_fields))


def _text_paths(field: pa.Field, prefix: str = "") -> list[str]:
    """The columns to read for a field's text: a struct's text leaves by their dotted path (a video's
    ``path``, never its ``bytes``), any other field holding text whole."""
    name = prefix + field.name
    if pa.types.is_struct(field.type):
        return [p for i in range(field.type.num_fields) for p in _text_paths(field.type.field(i), name + ".")]
    return [name] if _has_text(field.type) else []


def shard_damage(path: str | Path, columns: Iterable[str] | None = None) -> str | None:
    """Why a Parquet shard's text cannot be read (bytes that are not UTF-8, as a flipped bit leaves
    them), naming the file, the column and the first row; None when its text reads. Only the text is
    read (``columns``: of the text columns, only these; a struct's text leaves, not its bytes), one row
    group at a time, so checking a shard of videos is cheap and its memory is one row group's text."""
    try:
        with pq.ParquetFile(path) as file:
            wanted = [f for f in file.schema_arrow if columns is None or f.name in columns]
            paths = [p for f in wanted for p in _text_paths(f)]
            if not paths:
                return None  # no text column to read
            first = 0
            for group in range(file.num_row_groups):
                table = file.read_row_group(group, columns=paths)
                damage = _text_damage(path, table, first)
                if damage:
                    return damage
                first += table.num_rows
    except (OSError, pa.ArrowException) as err:
        return f"{path}: not a readable Parquet file ({type(err).__name__}: {err})"
    return None


def _text_damage(path: str | Path, table: pa.Table, first: int) -> str | None:
    """The first column of ``table`` (rows ``first``... of the shard) whose text is not UTF-8."""
    for name in table.column_names:
        column = table.column(name)
        try:
            column.validate(full=True)
        except pa.ArrowInvalid:
            row = next((i for i in range(len(column)) if not _valid_cell(column, i)), None)
            at = f", row {first + row}" if row is not None else ""
            return f"{path}: column {name!r}{at} is not valid UTF-8 text: the file is damaged"
    return None


def _valid_cell(column: pa.ChunkedArray, index: int) -> bool:
    try:
        column[index].as_py()
    except (UnicodeDecodeError, pa.ArrowException):
        return False
    return True


@contextlib.contextmanager
def quiet_datasets() -> Iterator[None]:
    """datasets' own progress bars off (restored after): an export or a push check prints one summary,
    not a "Generating train split" bar per split and config between its lines. Also a decorator."""
    was_off = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_off:
            datasets.enable_progress_bars()


@contextmanager
def _loadable(folder: Path) -> Iterator[Path]:
    """``folder``, or a link to it whose path ``datasets`` reads literally: it expands ``$VAR`` in
    local paths (``relative_to_absolute_path``), so data under a folder named ``$HOME`` would be
    looked for in the home folder."""
    if "$" not in str(folder.resolve()):
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix="vqabench-load-") as tmp:
        link = Path(tmp) / "dataset"
        link.symlink_to(folder.resolve(), target_is_directory=True)
        yield link


@quiet_datasets()
def check_hub_folder(
    folder: str | os.PathLike[str], cache_dir: str | os.PathLike[str] | None = None
) -> dict[str, datasets.DatasetDict]:
    """Validate a folder the way the Hub will read it; return each config loaded with `load_dataset`.

    Checks: a card whose YAML declares configs with exactly one default, no ``*.py`` at the root
    (datasets 5 refuses loading scripts), ``dataset_info`` features that datasets reads the same
    whatever a YAML tool did to their key order, an ``eval.yaml`` (if there is one) that declares
    tasks on the card's configs and splits, every config loads, each split's Parquet files are one
    whole set of shards and hold (by their own metadata) the rows loaded, and split sizes match
    ``dataset_info`` where the card has it, and every shard's text reads as UTF-8 (:func:`shard_damage`:
    ``load_dataset`` does not look, and a reader would fail on it later). Raises ValueError listing every
    problem found.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder")
    problems: list[str] = []
    scripts = sorted(p.name for p in folder.glob("*.py"))
    if scripts:
        problems.append(f"loading scripts at the root (datasets 5 refuses them): {scripts}")
    meta, _ = read_card(folder)
    declared = meta.get("configs") or []
    names = [c.get("config_name") for c in declared]
    defaults = [c.get("config_name") for c in declared if c.get("default")]
    if not declared:
        problems.append("card YAML declares no 'configs'")
    elif len(defaults) != 1 and names != ["default"]:
        problems.append(f"card YAML must mark exactly one default config, found {defaults or 'none'}")
    infos = meta.get("dataset_info") or []
    infos = [infos] if isinstance(infos, dict) else infos
    for info in infos:
        if isinstance(info, Mapping):
            problems += feature_problems(info, f"card YAML, config {info.get('config_name', 'default')!r}")
    link = meta.get("license_link")
    if isinstance(link, str) and "://" not in link and not (folder / link).is_file():
        problems.append(f"card YAML: license_link {link!r} names no file in the folder")
    try:
        benchmark = read_eval_yaml(folder)
    except ValueError as err:
        problems.append(str(err))
    else:
        if benchmark is not None:
            problems += check_eval_yaml(benchmark, meta)
    expected = {
        i.get("config_name", "default"): {s["name"]: s["num_examples"] for s in i.get("splits", [])}
        for i in infos
    }
    loaded: dict[str, datasets.DatasetDict] = {}
    with _loadable(folder) as readable:
        for name in names if not problems else ():
            try:
                dd = datasets.load_dataset(
                    str(readable), name, cache_dir=str(cache_dir) if cache_dir else None
                )
            except Exception as err:  # noqa: BLE001 - reported with the config name, then raised below
                problems.append(f"config {name!r} does not load: {type(err).__name__}: {err}")
                continue
            loaded[name] = dd
            got = {s: len(d) for s, d in dd.items()}
            if name in expected and got != expected[name]:
                problems.append(f"config {name!r}: split sizes {got} differ from the card's {expected[name]}")
            config = next(c for c in declared if c.get("config_name") == name)
            for split, files in _split_files(folder, config).items():
                problems += _shard_problems(name, split, files)
                parquet = [f for f in files if f.suffix == ".parquet"]
                problems += [d for d in map(shard_damage, parquet) if d]
                if parquet and len(parquet) == len(files) and split in got:
                    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in parquet)
                    if rows != got[split]:
                        problems.append(
                            f"config {name!r} split {split!r}: {got[split]} rows loaded, its shards hold {rows}"
                        )
    if problems:
        raise ValueError(f"{folder} is not a valid Hub dataset folder:\n  - " + "\n  - ".join(problems))
    return loaded
