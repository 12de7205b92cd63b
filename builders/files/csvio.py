"""CSV records with the lines they came from, and errors that name the file and line.

:func:`csv.reader` alone reports where a record *ends*; a cell whose quote was never closed runs on
over later lines, so the line worth naming is where the record *starts*. Text is read with
:func:`builders.files.jsonio.read_text` (a UTF-8 BOM is dropped, other encodings are an error
naming the line).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass

from builders.files.jsonio import read_text


@dataclass(frozen=True)
class CSVRecord:
    cells: list[str]
    start: int  # the line the record starts on (1-based)
    end: int  # the line it ends on: past ``start`` when a quoted cell spans lines (or never closes)

    @property
    def lines(self) -> str:
        return f"line {self.start}" if self.end == self.start else f"lines {self.start}-{self.end}"


def iter_csv_records(path: str | os.PathLike[str]) -> Iterator[CSVRecord]:
    """Every non-empty record of ``path`` (blank lines skipped); ValueError names file and line."""
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            raise ValueError(f"{path}, line {start}: {err}") from None
        if cells and any(cell.strip() for cell in cells):
            yield CSVRecord(cells, start, reader.line_num)
