"""Assemble a report folder: ``report.md`` (sections of text, tables and figures) and ``metrics.json``.

The figures are written first by the sections that draw them, then ``metrics.json``, then
``report.md`` last, each atomically: a ``report.md`` on disk always links figures that exist.

A report travels (it is shared, attached, published): it names local files relative to its own
folder, never by their absolute path, which says nothing on another machine and may name a user.
:func:`relative_paths` rewrites every absolute path of a file or folder that exists, in the text and
in ``metrics.json``, for every report writer at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.files.folders import Protected, claim_folder
from builders.files.jsonio import write_json_atomic, write_text_atomic

REPORT_FILE = "report.md"
METRICS_FILE = "metrics.json"
#: Left in every report folder: a report is written only into a new or empty folder, or a report's.
REPORT_MARKER = ".vqabench-report"


def report_folder(out_dir: str | os.PathLike[str], protect: Protected = ()) -> Path:
    """``out_dir``, claimed for a report (:func:`~builders.files.folders.claim_folder`) before any figure
    is drawn: a folder of notes, a dataset or the current directory is refused, not written into."""
    return claim_folder(out_dir, marker=REPORT_MARKER, protect=protect)


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


# An absolute path as it appears in text: from a "/" that starts a word (not the "//" of a URL, not a
# repo id's "owner/name") up to whitespace or the punctuation that closes it.
_ABSOLUTE = re.compile(r"(?<![\w:/.~-])/[^\s`'\"()\[\]<>,;|]+")


def relative_paths(value: Any, folder: Path, inputs: Iterable[str | os.PathLike[str]] = ()) -> Any:
    """``value`` (text, or JSON data) with the absolute path of every existing file or folder written
    relative to ``folder``. ``inputs``: paths to rewrite even where the text cannot delimit them (a
    folder whose name holds a space)."""
    base = Path(folder).resolve()
    known = sorted({os.path.abspath(p) for p in inputs}, key=len, reverse=True)

    def rel(path: str) -> str:
        return Path(os.path.relpath(path, base)).as_posix()

    def text(s: str) -> str:
        for path in known:
            s = s.replace(path, rel(path))
        return _ABSOLUTE.sub(lambda m: rel(m.group()) if os.path.exists(m.group()) else m.group(), s)

    if isinstance(value, str):
        return text(value)
    if isinstance(value, Mapping):
        return {k: relative_paths(v, base, known) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [relative_paths(v, base, known) for v in value]
    return value


def write_report(
    out_dir: str | os.PathLike[str],
    title: str,
    intro: Sequence[str],
    sections: Sequence[Section],
    metrics: Mapping[str, Any],
    inputs: Iterable[str | os.PathLike[str]] = (),
) -> Report:
    """Write ``metrics.json`` (``metrics`` plus the figure list) and ``report.md`` into ``out_dir``,
    local paths relative to it (:func:`relative_paths`; ``inputs``: the files and folders read)."""
    out = Path(out_dir)
    if not (out / REPORT_MARKER).is_file():  # every report writer claims its folder first
        raise RuntimeError(f"{out}: not claimed with report_folder() before the report was drawn into it")
    inputs = list(inputs)
    figures = [path for s in sections for path, _ in s.figures]
    for path in figures:
        if path.parent.resolve() != out.resolve() or not path.is_file():
            raise RuntimeError(f"figure {path} is not a file in the report folder {out}")
    data = relative_paths({**metrics, "figures": [p.name for p in figures]}, out, inputs)
    metrics_path = write_json_atomic(out / METRICS_FILE, data)
    blocks = [f"# {title}", *intro]
    for section in sections:
        blocks.append(f"## {section.title}")
        blocks += list(section.body)
        blocks += [f"![{alt}]({path.name})" for path, alt in section.figures]
    blocks.append(f"All numbers are also in [`{METRICS_FILE}`]({METRICS_FILE}).")
    markdown = write_text_atomic(out / REPORT_FILE, relative_paths("\n\n".join(blocks) + "\n", out, inputs))
    return Report(out, markdown, metrics_path, figures, data)
