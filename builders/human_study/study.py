"""The study record (``<study>/study.json``): what was drawn, how, and who rates what.

A study folder holds, and hands out, nothing about the correct answers::

    <study>/study.json                 this record (the coordinator's; strata, seed, assignment)
    <study>/raters/<rater>/index.html  the rater's page (its data embedded: works from file://)
    <study>/raters/<rater>/study.json  the same data as the page, for tools and checks
    <study>/raters/<rater>/clips/*.mp4 the clips, audio removed

``score`` reads the answers back against this record and, for BQA, the split's reference answers.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from builders.files.jsonio import read_json_object, write_json_atomic

STUDY_FORMAT = "vqabench-human-study"
PAGE_FORMAT = "vqabench-human-study-page"
ANSWERS_FORMAT = "vqabench-human-study-answers"
FORMAT_VERSION = 1
STUDY_FILE = "study.json"
STUDY_MARKER = ".vqabench-human-study"  # left in a study folder: making the study again may replace it
RATERS_DIR = "raters"
PAGE_FILE = "index.html"
CLIPS_DIR = "clips"
BQA, MARINELIFE = "bqa", "marinelife16k"
_RATER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")


def check_rater_ids(raters: Sequence[str]) -> list[str]:
    """Rater ids name folders and files: letters, digits, ``_``, ``-``; no repeats."""
    out = []
    for rater in raters:
        if not _RATER_ID.fullmatch(rater):
            raise ValueError(
                f"rater id {rater!r}: use 1-40 letters, digits, '_' or '-' (a letter or digit first)"
            )
        if rater in out:
            raise ValueError(f"rater id {rater!r} is given twice")
        out.append(rater)
    if not out:
        raise ValueError("a study needs at least one rater")
    return out


@dataclass
class StudyItem:
    """One drawn item: its id, its stratum, what raters see, and who rates it."""

    id: str
    stratum: str
    shown: dict[str, Any]  # question, choices (BQA) / question, answer_to_rate, rubric (MarineLife)
    raters: list[str]


@dataclass
class Study:
    benchmark: str
    data: str  # the folder the study was drawn from (score reads BQA references from it again)
    source: str  # how it was read ("work folder ...", "Hub-layout folder ...")
    split: str
    seed: int
    size: int
    stratify_by: str
    strata: dict[str, dict[str, int]]  # stratum -> {"available", "drawn"}
    ratings_per_item: int
    raters: list[str]
    items: list[StudyItem]
    order: dict[str, list[str]]  # rater -> item ids in the order their page shows them
    model: str | None = None  # MarineLife: whose answers are rated
    predictions: dict[str, str] | None = None  # MarineLife: {"path", "sha256"}
    rubrics: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> page rubric (MarineLife)
    study_id: str = ""
    draw: str = "stratified"  # "random" or "stratified" (records made before draws had names: stratified)
    design: str | None = None  # a named design the study follows (e.g. the paper's), if any

    def __post_init__(self) -> None:
        if not self.study_id:
            self.study_id = self.identity()

    def identity(self) -> str:
        """A digest of everything that defines the study (not where its data lies): answer files
        carry it, so a file from another study is recognised."""
        core = {
            "benchmark": self.benchmark,
            "split": self.split,
            "seed": self.seed,
            "size": self.size,
            "stratify_by": self.stratify_by,
            "ratings_per_item": self.ratings_per_item,
            "items": [(i.id, i.raters) for i in self.items],
            "order": self.order,
            "model": self.model,
            "predictions": (self.predictions or {}).get("sha256"),
            "rubrics": {name: r.get("signature") for name, r in self.rubrics.items()},
        }
        if self.draw != "stratified":  # so that studies recorded before draws had names keep their ids
            core["draw"] = self.draw
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]

    def item(self, item_id: str) -> StudyItem:
        return self._by_id()[item_id]

    def _by_id(self) -> dict[str, StudyItem]:
        return {i.id: i for i in self.items}

    def assigned(self, rater: str) -> list[str]:
        return list(self.order[rater])

    def to_json(self) -> dict[str, Any]:
        return {"format": STUDY_FORMAT, "format_version": FORMAT_VERSION, **asdict(self)}

    def write(self, folder: str | os.PathLike[str]) -> Path:
        return write_json_atomic(Path(folder) / STUDY_FILE, self.to_json())

    @classmethod
    def read(cls, folder: str | os.PathLike[str]) -> Study:
        folder = Path(folder)
        path = folder / STUDY_FILE if folder.is_dir() else folder
        data = read_json_object(path)
        if data.get("format") != STUDY_FORMAT:
            raise ValueError(
                f"{path}: not a study record (format {data.get('format')!r}); pass the folder "
                "'vqabench human-study make' wrote"
            )
        if data.get("format_version") != FORMAT_VERSION:
            raise ValueError(
                f"{path}: study format version {data.get('format_version')!r}, expected {FORMAT_VERSION}"
            )
        fields = {k: v for k, v in data.items() if k not in ("format", "format_version")}
        try:
            fields["items"] = [StudyItem(**i) for i in fields["items"]]
            study = cls(**fields)
        except (KeyError, TypeError) as err:
            raise ValueError(f"{path}: malformed study record ({err})") from None
        if study.identity() != study.study_id:
            raise ValueError(
                f"{path}: the record was edited after it was made (its study id no longer matches)"
            )
        return study


def page_data(study: Study, rater: str, clips: Mapping[str, str]) -> dict[str, Any]:
    """What one rater's page holds: the items in their order with what they may see, no answers."""
    items = []
    for item_id in study.assigned(rater):
        item = study.item(item_id)
        items.append({"id": item.id, "clip": clips[item.id], **item.shown})
    data: dict[str, Any] = {
        "format": PAGE_FORMAT,
        "format_version": FORMAT_VERSION,
        "study_id": study.study_id,
        "benchmark": study.benchmark,
        "rater": rater,
        "items": items,
    }
    if study.rubrics:
        data["rubrics"] = study.rubrics
    return data
