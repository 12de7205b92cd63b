"""The one sample guard of everything that publishes: data built from a bundled sample (synthetic clips,
scripted replies) is not published unless asked for with ``--allow-sample``.

A sample's release says so where it is made: its work folder's ``release/meta.json`` and its card
(:data:`SAMPLE_KEY`). The data source of a run records it (:mod:`builders.hub.source`), so a report's
``metrics.json`` carries it, and so do the ``.eval_results`` notes written from it. ``push`` (the
card), ``results write`` (the report) and ``results push`` (the notes) all ask :func:`refuse_sample`.
Argparse-level imports only (yaml, json when reading).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# Card YAML key of a release built from a bundled sample or scripted replies (its value says which).
SAMPLE_KEY = "vqabench_sample"
ALLOW_SAMPLE = "--allow-sample"
# Where a work folder's release/meta.json says it is a sample: BQA under extra, MarineLife-16K under
# provenance (each pipeline's own metadata layout).
_META_PATHS = (("extra", "sample"), ("provenance", "sample"))


class SampleRefused(ValueError):
    """Publishing data built from a bundled sample, without ``--allow-sample``."""


def add_allow_sample_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        ALLOW_SAMPLE,
        action="store_true",
        help=f"publish {what} built from a bundled sample or scripted replies (the data says so); refused "
        "otherwise",
    )


def refuse_sample(note: str | None, *, what: str, target: str, said_by: str, allow: bool) -> None:
    """SampleRefused when ``note`` (what the data says it was built from; ``said_by`` names where it
    says so) is set and ``allow`` is not."""
    if note and not allow:
        raise SampleRefused(
            f"{what}: not publishing it to {target}: {said_by} says it was {note}; pass {ALLOW_SAMPLE} if "
            "publishing it is really meant"
        )


def folder_sample_note(folder: str | Path) -> str | None:
    """What a dataset folder says it was built from, if a sample: a Hub-layout folder's card, or a
    work folder's release/meta.json. None for real data (or a folder that says nothing)."""
    from builders.hub.cards import CARD_FILE, read_card

    folder = Path(folder)
    if (folder / CARD_FILE).is_file():
        try:
            note = read_card(folder)[0].get(SAMPLE_KEY)
        except (ValueError, OSError):
            note = None  # the dataset's opener reports a broken card
        if note:
            return str(note)
    meta_path = folder / "release" / "meta.json"
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            return None
        for outer, key in _META_PATHS:
            inner = meta.get(outer) if isinstance(meta, Mapping) else None
            if isinstance(inner, Mapping) and inner.get(key):
                return str(inner[key])
    return None


def _notes_in(value: Any) -> Iterable[str]:
    """Every ``sample`` note recorded in a provenance mapping, at any depth."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if key == "sample" and isinstance(inner, str) and inner:
                yield inner
            else:
                yield from _notes_in(inner)


def metrics_sample_note(metrics: Mapping[str, Any]) -> str | None:
    """The sample note of a report's data, or of the data any of its runs were made on."""
    sources = [metrics.get("provenance")]
    models = metrics.get("models")
    if isinstance(models, Mapping):
        sources += [m.get("provenance") for m in models.values() if isinstance(m, Mapping)]
    return next((note for source in sources for note in _notes_in(source)), None)
