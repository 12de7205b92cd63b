"""A paper's published numbers, read from its dataset package's ``paper_values.json``.

Each dataset package ships one file for its paper (``bqa/paper_values.json``,
``marinelife16k/paper_values.json``): every printed cell of the tables it compares against, with
the seed line it was read from, its unit and scale, and ``n`` where the paper gives or implies it
(``n_inferred`` and the table's ``n_how`` say how). Cells the paper contradicts itself on carry a
``flags`` note. ``tests/test_paper_values.py`` finds every stored number on its line of the paper's
text. A row's ``n`` (column -> n, ``null`` for none) overrides its columns'.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

SCHEMA = 1


@dataclass(frozen=True)
class PaperCell:
    """One printed value: where it is (table, row, column, seed line), what it measures, and its n."""

    table: str  # e.g. "Table 1"
    row: str  # the row's label as printed
    column: str
    value: Any  # a number as printed (or a setting's text)
    line: int
    measure: str  # accuracy, judge_score, count, self_bleu, setting, statistic
    unit: str | None
    scale: tuple[float, float] | None
    n: int | None = None
    n_inferred: bool = False
    n_how: str | None = None
    flag: str | None = None
    model: str | None = None  # the paper model the row reports (Table 3's spelling for MarineLife)
    extra: tuple[tuple[str, Any], ...] = ()  # the row's and column's other fields (split, style, subset ...)

    def info(self, key: str) -> Any:
        return dict(self.extra).get(key)


@dataclass(frozen=True)
class PaperValues:
    """A paper's published values: its tables as stored, and their cells."""

    paper: str
    seed: str
    notes: tuple[str, ...]
    tables: tuple[dict[str, Any], ...]

    def table(self, table_id: str) -> dict[str, Any]:
        for table in self.tables:
            if table["id"] == table_id:
                return table
        raise KeyError(f"{self.seed}: no table {table_id!r} (stored: {[t['id'] for t in self.tables]})")

    def cells(self, table_id: str | None = None) -> Iterator[PaperCell]:
        """Every stored cell (of one table), row by row; a column a row leaves empty (``null``) is skipped."""
        for table in self.tables if table_id is None else (self.table(table_id),):
            yield from _table_cells(table)

    def row_values(self, table_id: str) -> dict[str, dict[str, Any]]:
        """Row label -> column -> value, of one table."""
        out: dict[str, dict[str, Any]] = {}
        for cell in self.cells(table_id):
            out.setdefault(cell.row, {})[cell.column] = cell.value
        return out


_COLUMN_KEYS = ("name", "n", "n_inferred", "measure", "unit", "scale")
_ROW_KEYS = ("label", "line", "values", "n", "n_how", "flags", "model")


def _table_cells(table: dict[str, Any]) -> Iterator[PaperCell]:
    for row in table["rows"]:
        overrides = row.get("n", {})
        for column, value in zip(table["columns"], row["values"], strict=True):
            if value is None:
                continue
            name = column["name"]
            n = overrides[name] if name in overrides else column.get("n")
            scale = column.get("scale", table.get("scale"))
            yield PaperCell(
                table=table["name"],
                row=row["label"],
                column=name,
                value=value,
                line=row["line"],
                measure=column.get("measure", table["measure"]),
                unit=column.get("unit", table.get("unit")),
                scale=tuple(scale) if scale else None,
                n=n,
                n_inferred=bool(n is not None and column.get("n_inferred")),
                n_how=row.get("n_how", table.get("n_how")),
                flag=row.get("flags", {}).get(name),
                model=row.get("model"),
                extra=tuple(
                    [(k, v) for k, v in row.items() if k not in _ROW_KEYS]
                    + [(k, v) for k, v in column.items() if k not in _COLUMN_KEYS]
                ),
            )


@cache
def load_paper_values(package: str) -> PaperValues:
    """The ``paper_values.json`` a dataset package ships (``"bqa"``, ``"marinelife16k"``)."""
    resource = files(package) / "paper_values.json"
    data = json.loads(resource.read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{resource}: schema {data.get('schema')!r}, this tool reads schema {SCHEMA}")
    return PaperValues(data["paper"], data["seed"], tuple(data.get("notes", ())), tuple(data["tables"]))
