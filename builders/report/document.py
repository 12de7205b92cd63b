"""Assemble a report folder: ``report.md`` (sections of text, tables and figures) and ``metrics.json``.

The figures are written first by the sections that draw them, then ``metrics.json``, then
``report.md`` last, each atomically: a ``report.md`` on disk always links figures that exist.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.files.jsonio import write_json_atomic, write_text_atomic

REPORT_FILE = "report.md"
METRICS_FILE = "metrics.json"


@dataclass(frozen=True)
class Section:
    title: str
    body: Sequence[str]  # Markdown blocks: paragraphs, tables, lists
    figures: Sequence[tuple[Path, str]] = field(default_factory=tuple)  # (PNG, alt text)


@dataclass(frozen=True)
class Report:
    folder: Path
    markdown: Path
    metrics_file: Path
    figures: list[Path]
    metrics: dict[str, Any]


def write_report(
    out_dir: str | os.PathLike[str],
    title: str,
    intro: Sequence[str],
    sections: Sequence[Section],
    metrics: Mapping[str, Any],
) -> Report:
    """Write ``metrics.json`` (``metrics`` plus the figure list) and ``report.md`` into ``out_dir``."""
    out = Path(out_dir)
    figures = [path for s in sections for path, _ in s.figures]
    for path in figures:
        if path.parent.resolve() != out.resolve() or not path.is_file():
            raise RuntimeError(f"figure {path} is not a file in the report folder {out}")
    data = {**metrics, "figures": [p.name for p in figures]}
    metrics_path = write_json_atomic(out / METRICS_FILE, data)
    blocks = [f"# {title}", *intro]
    for section in sections:
        blocks.append(f"## {section.title}")
        blocks += list(section.body)
        blocks += [f"![{alt}]({path.name})" for path, alt in section.figures]
    blocks.append(f"All numbers are also in [`{METRICS_FILE}`]({METRICS_FILE}).")
    markdown = write_text_atomic(out / REPORT_FILE, "\n\n".join(blocks) + "\n")
    return Report(out, markdown, metrics_path, figures, data)
