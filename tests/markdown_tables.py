"""Read back the Markdown tables a report wrote, so tests check the numbers a reader sees."""

from __future__ import annotations


def read_table(markdown: str, first_header: str) -> tuple[list[str], dict[str, list[str]]]:
    """(header, {row label: cells}) of the first table whose first header cell is ``first_header``."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    header = [c.strip() for c in lines[start].strip("|").split(" | ")]
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        rows[cells[0]] = cells[1:]
    return header, rows
