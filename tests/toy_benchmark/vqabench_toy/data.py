"""The toy's data: its features, the sample, and one split opener for a work folder or an export."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

SAMPLE = Path(__file__).parent / "sample" / "items.csv"
#: The toy's features: one question per row.
FEATURES = pa.schema(
    [
        ("id", pa.string()),
        ("question", pa.string()),
        ("choices", pa.list_(pa.string())),
        ("answer", pa.string()),
    ]
)


def read_sample(path: Path = SAMPLE) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@dataclass(frozen=True)
class ToySplit:
    source: str
    split: str
    rows: list[dict[str, Any]]


def open_split(folder: Path, split: str) -> ToySplit:
    """A split of a work folder (``release/<split>.jsonl``) or of an export (the shared Hub reader)."""
    from builders.hub.splits import read_hub_folder

    release = folder / "release" / f"{split}.jsonl"
    if release.is_file():
        rows = [json.loads(line) for line in release.read_text(encoding="utf-8").splitlines()]
    else:
        rows = read_hub_folder(folder).split(split).rows()
    return ToySplit(str(folder), split, rows)
