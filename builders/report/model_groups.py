"""Which group each model of a report belongs to and its backbone: the rows of the papers' tables.

The MarineLife-16K paper lays its Table 3 and caption table out in model groups ("Open-source VLMs
(7B - 8B)", "(31B - 78B)", "Close-source VLMs"), with a Backbone column and an Average row per group.
``--models FILE`` gives a report that layout: a CSV with a header row and the columns ``name`` (the
model's name in the report: ``--predictions NAME=...``, the judge results' key), ``group`` and
``backbone`` (both optional; an empty group puts the model in an unnamed group, an empty backbone
shows as the paper's "-")::

    name,group,backbone
    qwen2.5-vl-7b,Open-source VLMs (7B - 8B),2D RoPE/Qwen
    internvl3-8b,Open-source VLMs (7B - 8B),V2PE/Qwen
    gemini-3.1-pro,Close-source VLMs,

Groups appear in the order of their first row, models in file order within their group.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from builders.files.csvio import iter_csv_records

COLUMNS: tuple[str, ...] = ("name", "group", "backbone")


@dataclass(frozen=True)
class ModelRow:
    """One model row of a paper-style table."""

    name: str
    group: str | None = None
    backbone: str | None = None


def read_models_file(path: str | os.PathLike[str]) -> list[ModelRow]:
    """The rows of a ``--models`` CSV; ValueError naming the file and line for a missing ``name``
    column, an unknown column, an empty name or a model listed twice."""
    records = iter_csv_records(path)
    first = next(records, None)
    if first is None:
        raise ValueError(f"{path}: empty; expected a header row with {', '.join(COLUMNS)}")
    header = [cell.strip().lower() for cell in first.cells]
    unknown = [h for h in header if h not in COLUMNS]
    if "name" not in header or unknown:
        raise ValueError(
            f"{path}, {first.lines}: the header must name the columns {', '.join(COLUMNS)} (name required)"
            + (f"; unknown column(s) {unknown}" if unknown else "")
        )
    rows: list[ModelRow] = []
    seen: dict[str, str] = {}
    for record in records:
        if len(record.cells) > len(header):
            raise ValueError(f"{path}, {record.lines}: {len(record.cells)} cells for {len(header)} columns")
        cells = dict(zip(header, (c.strip() for c in record.cells), strict=False))
        name = cells.get("name", "")
        if not name:
            raise ValueError(f"{path}, {record.lines}: the model name is empty")
        if name in seen:
            raise ValueError(f"{path}, {record.lines}: model {name!r} is already listed at {seen[name]}")
        seen[name] = record.lines
        rows.append(ModelRow(name, cells.get("group") or None, cells.get("backbone") or None))
    if not rows:
        raise ValueError(f"{path}: no models under the header")
    return rows


@dataclass(frozen=True)
class Arranged:
    """The models a table shows, grouped and ordered, and the file's models it leaves out."""

    groups: list[tuple[str | None, list[ModelRow]]]  # (group name or None, its rows in order)
    without_results: list[str]  # listed in the file, no results in the report

    @property
    def rows(self) -> list[ModelRow]:
        return [row for _, rows in self.groups for row in rows]


def arrange(names: Iterable[str], listed: Sequence[ModelRow] | None, *, where: str = "--models") -> Arranged:
    """``names`` (models with results, in report order) as table rows: grouped and ordered by
    ``listed`` (a ``--models`` file) when given, else one unnamed group in report order.

    A model with results that ``listed`` does not name is a ValueError (a typo would put it in no
    group); models ``listed`` without results are left out and returned.
    """
    names = list(dict.fromkeys(names))
    if listed is None:
        return Arranged([(None, [ModelRow(n) for n in names])] if names else [], [])
    by_name = {row.name: row for row in listed}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(
            f"{where}: no row for model(s) {unknown}; it lists {list(by_name)} (names must match the report's "
            "model names: --predictions NAME=FILE and the judge results' keys)"
        )
    groups: dict[str | None, list[ModelRow]] = {}
    for row in listed:
        if row.name in names:
            groups.setdefault(row.group, []).append(row)
    return Arranged(list(groups.items()), [row.name for row in listed if row.name not in names])
