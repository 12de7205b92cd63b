"""The QA record of the paper's appendix (JSONL schema) and a validator that reports every violation.

:class:`QARecord` is the record's shape (field names and types, nothing extra). :func:`validate_records`
checks what the shape cannot: the id pattern and sequential indices, the question text of each type,
four options A-D with the answer letter on the ground-truth text, the prompt, open-ended records without
options, the mandatory types of each video, and conditional types only where their attribute exists.
Given the videos' attributes it also recomputes every deterministic answer. Each problem is one
:class:`Violation` naming the question id and the field.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError

from marinelife16k.questions import (
    LLM_ANSWER_TYPES,
    MOTION_TYPE,
    TASK,
    build_prompt,
    candidate_types,
    correct_answer,
    evidence_attributes,
    motion_source_problems,
    question_text,
    video_key,
)
from marinelife16k.vocabulary import (
    ATTRIBUTES,
    COLLECTIONS,
    MANDATORY_TYPES,
    MULTIPLE_CHOICE,
    OPEN_ENDED,
    OPTION_LABELS,
    QUESTION_TYPES,
)


class Option(BaseModel):
    """One answer choice of a multiple-choice question."""

    model_config = ConfigDict(extra="forbid")
    label: StrictStr
    text: StrictStr


class QARecord(BaseModel):
    """One line of the QA JSONL, field for field as the paper's appendix defines it."""

    model_config = ConfigDict(extra="forbid")
    question_id: StrictStr
    id: StrictStr
    task: StrictStr
    type: StrictStr
    question_format: StrictStr
    collection: StrictStr
    video_id: StrictStr
    video_file: StrictStr
    video_path: StrictStr
    central_object: StrictStr
    question: StrictStr
    prompt: StrictStr
    options: list[Option]
    answer: StrictStr
    answer_text: StrictStr
    evidence_attributes: dict[str, StrictStr]


RECORD_FIELDS: tuple[str, ...] = tuple(QARecord.model_fields)


@dataclass(frozen=True)
class Violation:
    """One broken rule: which question (or video id, for per-video rules), which field, what is wrong."""

    question_id: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.question_id}: {self.field}: {self.message}"


def _label(record: Mapping[str, Any], position: int) -> str:
    qid = record.get("question_id") if isinstance(record, Mapping) else None
    return qid if isinstance(qid, str) and qid else f"<record {position}>"


def _check_shape(record: Any, label: str) -> tuple[QARecord | None, list[Violation]]:
    if not isinstance(record, Mapping):
        return None, [Violation(label, "<record>", f"expected a JSON object, got {type(record).__name__}")]
    try:
        return QARecord.model_validate(dict(record)), []
    except ValidationError as err:
        out = []
        for e in err.errors():
            field = ".".join(str(p) for p in e["loc"]) or "<record>"
            message = "unexpected field" if e["type"] == "extra_forbidden" else e["msg"].lower()
            out.append(Violation(label, field, message))
        return None, out


def _check_record(r: QARecord) -> list[Violation]:
    """Rules one record must satisfy on its own."""
    out: list[Violation] = []

    def bad(field: str, message: str) -> None:
        out.append(Violation(r.question_id, field, message))

    if r.task != TASK:
        bad("task", f"must be {TASK!r}, got {r.task!r}")
    qtype = QUESTION_TYPES.get(r.type)
    if qtype is None:
        bad("type", f"unknown type {r.type!r}; expected one of {list(QUESTION_TYPES)}")
    elif r.question_format != qtype.question_format:
        bad("question_format", f"{r.type} is {qtype.question_format!r}, got {r.question_format!r}")
    if r.collection not in COLLECTIONS:
        bad("collection", f"unknown collection {r.collection!r}; expected one of {list(COLLECTIONS)}")
    if not r.video_file or "/" in r.video_file or "." not in r.video_file.lstrip("."):
        bad("video_file", f"must be a file name with its extension, got {r.video_file!r}")
    key = video_key(r.collection, r.video_file)
    if r.id != key:
        bad("id", f"must be '{{collection}}--{{video file without extension}}' = {key!r}, got {r.id!r}")
    match = re.fullmatch(re.escape(r.id) + r"--q([1-9][0-9]*)", r.question_id)
    if not match:
        bad("question_id", f"must be '{r.id}--q<index>' with an index from 1, got {r.question_id!r}")
    if r.video_path != f"{r.collection}/{r.video_file}":
        bad("video_path", f"must be {r.collection + '/' + r.video_file!r}, got {r.video_path!r}")
    if not r.video_id.strip():
        bad("video_id", "is empty")
    if not r.central_object.strip():
        bad("central_object", "is empty")
    if qtype is not None:
        expected = question_text(r.type, {"central_object": r.central_object})
        if r.question != expected:
            bad("question", f"the {r.type} question must read {expected!r}, got {r.question!r}")
    options = [(o.label, o.text) for o in r.options]
    if r.question_format == MULTIPLE_CHOICE:
        if [label for label, _ in options] != list(OPTION_LABELS):
            bad(
                "options",
                f"must be four options labelled A, B, C, D in order, got {[lb for lb, _ in options]}",
            )
        texts = [text.strip().casefold() for _, text in options]
        if any(not t for t in texts):
            bad("options", "an option text is empty")
        elif len(set(texts)) != len(texts):
            bad("options", "two options have the same text")
        if r.answer not in OPTION_LABELS:
            bad("answer", f"must be one of A, B, C, D, got {r.answer!r}")
        else:
            chosen = dict(options).get(r.answer)
            if chosen is not None and chosen != r.answer_text:
                bad("answer", f"option {r.answer} reads {chosen!r}, not the answer_text {r.answer_text!r}")
    elif r.question_format == OPEN_ENDED:
        if options:
            bad("options", "an open-ended question has no options")
        if r.answer != "":
            bad("answer", f"must be empty for an open-ended question, got {r.answer!r}")
    if not r.answer_text.strip():
        bad("answer_text", "is empty")
    expected_prompt = build_prompt(r.question, [{"label": lb, "text": t} for lb, t in options])
    if r.prompt != expected_prompt:
        bad("prompt", f"must be {expected_prompt!r}, got {r.prompt!r}")
    for name, value in r.evidence_attributes.items():
        if name not in ATTRIBUTES:
            bad(f"evidence_attributes.{name}", f"unknown attribute; expected one of {list(ATTRIBUTES)}")
        elif not value.strip():
            bad(f"evidence_attributes.{name}", "is empty: only attributes that exist are evidence")
    if r.evidence_attributes.get("central_object", r.central_object) != r.central_object:
        bad("evidence_attributes.central_object", "differs from the record's central_object")
    if qtype is not None and not qtype.mandatory:
        condition = qtype.condition_attribute or ""
        if not r.evidence_attributes.get(condition, "").strip():
            bad("type", f"conditional type {r.type} needs a non-empty {condition} in evidence_attributes")
    return out


def _index(question_id: str) -> int | None:
    match = re.search(r"--q([1-9][0-9]*)$", question_id)
    return int(match.group(1)) if match else None


def _check_video(key: str, records: list[QARecord]) -> list[Violation]:
    """Rules over all records of one video (reported under the video's id)."""
    out: list[Violation] = []
    seen: dict[str, int] = defaultdict(int)
    for r in records:
        seen[r.question_id] += 1
    for qid, count in seen.items():
        if count > 1:
            out.append(Violation(qid, "question_id", f"appears {count} times"))
    indices = sorted({i for i in map(_index, seen) if i is not None})
    if indices and indices != list(range(1, len(indices) + 1)):
        missing = sorted(set(range(1, max(indices) + 1)) - set(indices))
        out.append(
            Violation(
                key, "question_id", f"indices must run q1..q{len(indices)} without gaps; missing {missing}"
            )
        )
    types = [r.type for r in records]
    for qtype in MANDATORY_TYPES:
        if qtype not in types:
            out.append(Violation(key, "type", f"mandatory type {qtype} is missing"))
    for qtype in sorted(set(types)):
        if types.count(qtype) > 1:
            out.append(Violation(key, "type", f"type {qtype} appears {types.count(qtype)} times"))
    for field in ("video_id", "central_object"):
        values = sorted({getattr(r, field) for r in records})
        if len(values) > 1:
            out.append(Violation(key, field, f"differs between the questions of one video: {values}"))
    return out


def _attributes(video: Mapping[str, Any]) -> Mapping[str, Any]:
    nested = video.get("attributes")
    return nested if isinstance(nested, Mapping) else video


def _check_against_video(key: str, records: list[QARecord], video: Mapping[str, Any]) -> list[Violation]:
    """Rules that need the video's attributes: which conditional types exist, and the answers."""
    out: list[Violation] = []
    attributes = _attributes(video)
    candidates = candidate_types(attributes)
    present = {r.type for r in records}
    for qtype in QUESTION_TYPES:
        condition = QUESTION_TYPES[qtype].condition_attribute
        if condition is None:
            continue
        if qtype in present and qtype not in candidates:
            out.append(
                Violation(key, "type", f"conditional type {qtype} is present but {condition} is empty")
            )
        # central_object_motion may be left out although movement_behavior exists: whether that
        # describes the central object is the QA generation's decision, recorded in the release.
        elif qtype not in present and qtype in candidates and qtype != MOTION_TYPE:
            out.append(
                Violation(key, "type", f"conditional type {qtype} is missing although {condition} exists")
            )
    caption = str(video.get("caption") or "")
    for r in records:
        if r.type not in QUESTION_TYPES:
            continue
        if str(video.get("video_id", r.video_id)) != r.video_id:
            out.append(Violation(r.question_id, "video_id", f"the video's id is {video.get('video_id')!r}"))
        if r.central_object != str(attributes.get("central_object") or "").strip():
            out.append(Violation(r.question_id, "central_object", "differs from the video's central_object"))
        if r.type == "caption" and not caption.strip():
            out.append(
                Violation(r.question_id, "answer_text", "the video has no caption to check it against")
            )
        elif r.type == MOTION_TYPE:
            for problem in motion_source_problems(
                r.answer_text, str(attributes.get("movement_behavior") or "")
            ):
                out.append(Violation(r.question_id, "answer_text", problem))
        elif r.type not in LLM_ANSWER_TYPES:
            expected = correct_answer(r.type, attributes, caption)
            if r.answer_text != expected:
                out.append(
                    Violation(r.question_id, "answer_text", f"must be {expected!r}, got {r.answer_text!r}")
                )
        evidence = evidence_attributes(r.type, attributes)
        if r.evidence_attributes != evidence:
            out.append(
                Violation(
                    r.question_id, "evidence_attributes", f"must be {evidence}, got {r.evidence_attributes}"
                )
            )
    return out


def validate_records(
    records: Iterable[Mapping[str, Any]], videos: Iterable[Mapping[str, Any]] | None = None
) -> list[Violation]:
    """Every violation in ``records`` (an empty list when they are valid): those of single records
    in record order, then those of whole videos.

    ``videos``, when given, are video rows (``collection``, ``video_file``, ``video_id``, the 13
    attributes flat or under ``"attributes"``, ``caption``): then each record must belong to one of
    them, each of them must have its questions, conditional types must match the attributes exactly,
    every answer but those the QA generation writes is recomputed (the ``caption`` answer must be the
    video's caption), and a ``central_object_motion`` answer must be taken from ``movement_behavior``
    (:func:`~marinelife16k.questions.motion_source_problems`). A left-out ``central_object_motion``
    is no violation: whether ``movement_behavior`` describes the central object is decided at QA
    generation, and the release records why it was not asked (:mod:`marinelife16k.workfolder`).
    """
    out: list[Violation] = []
    by_video: dict[str, list[QARecord]] = defaultdict(list)
    for position, raw in enumerate(records, start=1):
        record, problems = _check_shape(raw, _label(raw, position))
        out.extend(problems)
        if record is not None:
            out.extend(_check_record(record))
            by_video[record.id].append(record)
    for key, group in by_video.items():
        out.extend(_check_video(key, group))
    if videos is not None:
        table = {video_key(str(v["collection"]), str(v["video_file"])): v for v in videos}
        for key, group in by_video.items():
            if key not in table:
                out.append(Violation(key, "id", "no such video in the video table"))
            else:
                out.extend(_check_against_video(key, group, table[key]))
        for key in sorted(table.keys() - by_video.keys()):
            out.append(Violation(key, "id", "the video has no questions"))
    return out


def check_records(
    records: Iterable[Mapping[str, Any]],
    videos: Iterable[Mapping[str, Any]] | None = None,
    *,
    source: str = "QA records",
    limit: int = 20,
) -> None:
    """Raise ValueError listing the violations (the first ``limit`` of them) if there are any."""
    problems = validate_records(records, videos)
    if problems:
        shown = "\n  ".join(str(v) for v in problems[:limit])
        more = f"\n  ... and {len(problems) - limit} more" if len(problems) > limit else ""
        raise ValueError(f"{source}: {len(problems)} schema violation(s):\n  {shown}{more}")
