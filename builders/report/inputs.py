"""What a report reads: model prediction files and one split of a dataset.

Prediction files are JSONL, one reply per line: the item's id under ``id_field`` (``id`` for BQA,
``question_id`` for MarineLife-16K) and the model's raw text under ``raw_output`` (or
``prediction``), optionally a ``rationale``. Other keys (a ``parsed_answer`` written by an
evaluation runner, token counts...) are ignored: the report parses every raw reply again with the
shared parser, so every number comes from one piece of code.

A dataset split comes from a folder in Hub layout (read with ``load_dataset``, only the text
columns, so no video is decoded or copied) or from a pipeline's work folder; the benchmark modules
decide which columns they need.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builders.files.jsonio import iter_jsonl
from builders.hub.layout import read_card

TEXT_FIELDS: tuple[str, ...] = ("raw_output", "prediction")
RATIONALE_FIELD = "rationale"
_PREVIEW = 10


def preview(ids: Sequence[str], k: int = _PREVIEW) -> str:
    """``[a, b, ...] and N more``: error messages name items without flooding the terminal."""
    shown = ", ".join(ids[:k])
    return f"[{shown}]" + (f" and {len(ids) - k} more" if len(ids) > k else "")


def named_paths(specs: Iterable[str], option: str) -> dict[str, Path]:
    """``NAME=PATH`` (or a bare ``PATH``, named after its file stem) -> ``{name: path}``, in order."""
    out: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = Path(spec).stem, spec
        name, path = name.strip(), path.strip()
        if not name or not path:
            raise ValueError(f"{option} {spec!r}: expected NAME=PATH (or a path)")
        if name in out:
            raise ValueError(f"{option}: the name {name!r} is given twice; name each file (NAME=PATH)")
        out[name] = Path(path)
    return out


@dataclass(frozen=True)
class Prediction:
    text: str | None  # the raw reply; None = the model gave none
    rationale: str | None
    line: int


def read_predictions(path: str | os.PathLike[str], id_field: str) -> dict[str, Prediction]:
    """Item id -> :class:`Prediction` from a JSONL file; malformed or repeated ids are errors."""
    out: dict[str, Prediction] = {}
    for number, data in iter_jsonl(path):
        where = f"{path}, line {number}"
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
        item = data.get(id_field)
        if not isinstance(item, str) or not item:
            raise ValueError(f"{where}: missing or non-text {id_field!r}")
        field = next((f for f in TEXT_FIELDS if f in data), None)
        if field is None:
            raise ValueError(
                f"{where} ({id_field} {item}): no model reply; expected a {TEXT_FIELDS[0]!r} field"
            )
        text, rationale = data[field], data.get(RATIONALE_FIELD)
        for key, value in ((field, text), (RATIONALE_FIELD, rationale)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{where} ({id_field} {item}): {key!r} must be text or null")
        if item in out:
            raise ValueError(f"{where}: {id_field} {item} already has a prediction at line {out[item].line}")
        out[item] = Prediction(text, rationale, number)
    if not out:
        raise ValueError(f"{path}: no predictions")
    return out


@dataclass(frozen=True)
class Aligned:
    """One model's replies in the split's item order."""

    texts: list[str | None]
    rationales: list[str | None] | None  # None when no prediction carries a rationale
    missing: list[str]  # items with no prediction (scored as unparsed, with allow_missing)


def align(
    predictions: Mapping[str, Prediction],
    ids: Sequence[str],
    *,
    source: str,
    split: str,
    allow_missing: bool,
    ignored_ids: Iterable[str] = (),
) -> Aligned:
    """Order ``predictions`` like ``ids``. Predictions for items outside the split (other than
    ``ignored_ids``) are an error (a wrong split or dataset); missing items are an error unless
    ``allow_missing``, in which case they count as replies that name no option."""
    known = set(ids) | set(ignored_ids)
    unknown = [i for i in predictions if i not in known]
    if unknown:
        raise ValueError(
            f"{source}: {len(unknown)} prediction(s) for items that are not in the {split} split: "
            f"{preview(unknown)} (wrong split or dataset?)"
        )
    missing = [i for i in ids if i not in predictions]
    if missing and not allow_missing:
        raise ValueError(
            f"{source}: no prediction for {len(missing)} of the {len(ids)} item(s) of the {split} split: "
            f"{preview(missing)}; pass --allow-missing to score them as unparsed (wrong)"
        )
    got = [predictions.get(i) for i in ids]
    texts = [p.text if p else None for p in got]
    has_rationale = any(p is not None and p.rationale is not None for p in got)
    rationales = [p.rationale if p else None for p in got] if has_rationale else None
    return Aligned(texts, rationales, missing)


# --- dataset splits ----------------------------------------------------------------------------------
def is_hub_folder(folder: str | os.PathLike[str]) -> bool:
    return (Path(folder) / "README.md").is_file()


def default_config(folder: str | os.PathLike[str]) -> str:
    """The config a bare ``load_dataset(folder)`` reads: the one marked default, or the only one."""
    meta, _ = read_card(folder)
    configs = meta.get("configs") or []
    defaults = [c["config_name"] for c in configs if c.get("default")]
    if len(defaults) == 1:
        return defaults[0]
    if len(configs) == 1:
        return configs[0]["config_name"]
    raise ValueError(f"{folder}: the card marks no single default config; name one")


def load_hub_rows(
    folder: str | os.PathLike[str],
    config: str,
    split: str,
    columns: Sequence[str],
    cache_dir: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """``columns`` of one split of a Hub-layout folder, via ``load_dataset`` (the video is not read)."""
    import datasets

    meta, _ = read_card(folder)
    configs = {c.get("config_name"): c for c in meta.get("configs") or []}
    if config not in configs:
        raise ValueError(f"{folder}: no config {config!r} in the card (configs: {sorted(configs)})")
    splits = [f.get("split") for f in configs[config].get("data_files") or [] if isinstance(f, dict)]
    if split not in splits:
        raise ValueError(f"{folder}: config {config!r} has no split {split!r} (splits: {splits})")
    infos = meta.get("dataset_info") or []
    info = next(
        (i for i in ([infos] if isinstance(infos, dict) else infos) if i.get("config_name") == config), {}
    )
    declared = [f.get("name") for f in info.get("features") or [] if isinstance(f, dict)]
    missing = [c for c in columns if declared and c not in declared]
    if missing:  # load_dataset would fail deep inside Parquet reading; say it plainly here
        raise ValueError(f"{folder}: config {config!r} has no column(s) {missing} (columns: {declared})")
    with tempfile.TemporaryDirectory(prefix="vqabench-report-") as tmp:
        ds = datasets.load_dataset(
            str(folder), config, split=split, columns=list(columns), cache_dir=str(cache_dir or tmp)
        )
        return ds.to_list()
