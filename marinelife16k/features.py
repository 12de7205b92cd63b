"""MarineLife-16K's configs: the one declaration of each config's ``datasets.Features``.

* ``videos`` - one row per video: the video, its ids, the 13 expert attributes, the final caption
  and the camera kind (static / moving, :func:`~marinelife16k.vocabulary.camera_kind`).
* ``qa`` - one row per question: the paper's JSONL fields plus ``dimension``. The video is not
  repeated per question: ``qa.id`` equals ``videos.id`` (``{collection}--{file stem}``), join on it.

``evidence_attributes`` is a struct with one field per attribute (null where the record does not use
it) because Parquet needs a fixed schema; :func:`qa_record` turns a row back into the paper's JSONL.

``video`` is ``datasets.Video()``; decoding it needs torchcodec (and torch). Without them read it as
``{"path", "bytes"}`` with ``ds.cast_column("video", Video(decode=False))`` and sample frames with
``builders.video.sampler.sample_frames``. Labels are strings (the paper's values), not ``ClassLabel``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import datasets

from marinelife16k.annotations import VIDEO_ROW_KEYS
from marinelife16k.schema import RECORD_FIELDS
from marinelife16k.vocabulary import ATTRIBUTES, DIMENSION_OF_TYPE

CONFIGS: tuple[str, ...] = ("qa", "videos")
#: Loaded by a bare ``load_dataset(repo)``: the questions are what researchers evaluate first.
DEFAULT_CONFIG = "qa"

_string = datasets.Value("string")

VIDEOS_FEATURES = datasets.Features({"video": datasets.Video(), **{key: _string for key in VIDEO_ROW_KEYS}})

_QA_SPECIAL: dict[str, Any] = {
    "options": datasets.List({"label": _string, "text": _string}),
    "evidence_attributes": {name: _string for name in ATTRIBUTES},
}
# The appendix's fields in its order, with the evaluation dimension after the question format.
_qa_fields: dict[str, Any] = {}
for _name in RECORD_FIELDS:
    _qa_fields[_name] = _QA_SPECIAL.get(_name, _string)
    if _name == "question_format":
        _qa_fields["dimension"] = _string
QA_FEATURES = datasets.Features(_qa_fields)

FEATURES: dict[str, datasets.Features] = {"qa": QA_FEATURES, "videos": VIDEOS_FEATURES}

#: Every ``videos`` column except the video itself, for statistics that must not read video bytes.
VIDEO_TEXT_COLUMNS: tuple[str, ...] = tuple(name for name in VIDEOS_FEATURES if name != "video")


def qa_example(record: Mapping[str, Any]) -> dict[str, Any]:
    """A ``qa`` row from a (valid) JSONL record: adds ``dimension``, fills the evidence struct."""
    example = {name: record[name] for name in QA_FEATURES if name not in ("dimension", "evidence_attributes")}
    example["dimension"] = DIMENSION_OF_TYPE[record["type"]]
    example["evidence_attributes"] = {name: record["evidence_attributes"].get(name) for name in ATTRIBUTES}
    return example


def qa_record(example: Mapping[str, Any]) -> dict[str, Any]:
    """The paper's JSONL record from a ``qa`` row (inverse of :func:`qa_example`)."""
    record = {name: example[name] for name in RECORD_FIELDS}
    record["options"] = [{"label": o["label"], "text": o["text"]} for o in example["options"]]
    record["evidence_attributes"] = {k: v for k, v in example["evidence_attributes"].items() if v is not None}
    return record
