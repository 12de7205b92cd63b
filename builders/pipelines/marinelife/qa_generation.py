"""QA generation: one LLM request per video writes the distractors; the code builds the records.

Why one request per video (not one per question type): every type needs the same context (the 13
attributes and the caption), so it is sent once instead of up to seven times; the model sees all
correct answers at once and can keep each type's distractors apart from the others; and the paper
generated a video's questions in one prompt. A reply with one bad distractor is re-asked as a
whole, but the re-ask carries the previous reply and the exact problem, so the model fixes that part.

What the LLM writes: three distractors per applicable multiple-choice type (structured: colour and
size/shape, camera position and angle, object lists, are separate fields so that the code formats
them exactly like the answer) and, by default, the fluent ``camera_object_open_ended`` reference
sentence. What the code owns (:mod:`marinelife16k.questions`): ids, indices, question texts, the
correct option (the ground-truth value in the paper's format), the seeded option order and answer
letter, the prompt string and the evidence attributes. The caption question's reference answer is
the video's *final caption* from the caption engine: the paper's "video captions from the dataset
GT" are that caption.

The validator re-asks (bounded by the client's ``max_validation_retries``) when a distractor is
empty, equals the answer or another distractor (case, spacing and end punctuation ignored), is a
shorter or longer name of the answer, an ``object_detect`` list has no absent object (it would be
correct too), a ``central_object_motion`` option gives the movement to another subject, or the
reference sentence does not name the central object; and when the assembled records fail
:func:`marinelife16k.schema.check_records`. A reply still invalid after that is reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from builders.llm import LLMClient, LLMRequest, LLMResult, user_message
from builders.llm.prompts import load_prompt
from builders.llm.schema import ITEM_ID_FIELD
from builders.pipelines.marinelife.checks import foreign_subject, option_problems
from builders.pipelines.marinelife.outcomes import call_cost
from builders.runs.llm_step import DEFAULT_BATCH_SIZE, Outcome, run_llm_step
from builders.runs.steps import StepRecords
from builders.scoring.phrases import mentions, normalized
from marinelife16k.questions import applicable_types, assemble_records
from marinelife16k.questions import correct_answer as ground_truth
from marinelife16k.rubrics import format_attributes
from marinelife16k.schema import check_records
from marinelife16k.vocabulary import MULTIPLE_CHOICE, QUESTION_TYPES, SECONDARY_OBJECTS

STEP = "qa"
PROMPT_NAME = "marinelife_qa_distractors"
SCHEMA_NAME = "marinelife_qa_distractors"
REFERENCE_FIELD = "camera_object_reference"
REFERENCE_TYPE = "camera_object_open_ended"
DISTRACTORS = 3


class AppearanceOption(BaseModel):
    model_config = ConfigDict(extra="ignore")
    color: str
    size_shape: str


class CameraOption(BaseModel):
    model_config = ConfigDict(extra="ignore")
    camera_position: str
    camera_angle: str


_ObjectList = Annotated[list[str], Field(min_length=1, max_length=6)]
# The reply field of each multiple-choice type: what one distractor is.
_OPTION_TYPES: dict[str, Any] = {
    "central_object": str,
    "central_object_appearance": AppearanceOption,
    "object_detect": _ObjectList,
    "camera_motion": CameraOption,
    "central_object_motion": str,
    "environment": str,
    "lighting": str,
}
# How each field looks in the prompt's reply format (for servers that ignore the schema).
_FIELD_FORMATS: dict[str, str] = {
    "central_object": "[3 strings]",
    "central_object_appearance": '[3 objects {"color": string, "size_shape": string}]',
    "object_detect": "[3 lists of object names]",
    "camera_motion": '[3 objects {"camera_position": string, "camera_angle": string}]',
    "central_object_motion": "[3 strings]",
    "environment": "[3 strings]",
    "lighting": "[3 strings]",
}
# Types whose distractors must not merely extend or shorten the answer's name ("sea turtle" for
# "green sea turtle", "coral reef" for "shallow coral reef").
_NAME_TYPES = ("central_object", "central_object_motion", "environment", "lighting")


def mcq_types(row: Mapping[str, Any]) -> list[str]:
    """The video's applicable multiple-choice types, in index order."""
    return [t for t in applicable_types(row) if QUESTION_TYPES[t].question_format == MULTIPLE_CHOICE]


@cache
def reply_model(types: tuple[str, ...], reference: bool) -> type[BaseModel]:
    """The reply schema for a set of types: one field of exactly three distractors per type (plus
    the reference sentence). Cached: one class per combination, so the schema sent is stable."""
    fields: dict[str, Any] = {
        t: (Annotated[list[_OPTION_TYPES[t]], Field(min_length=DISTRACTORS, max_length=DISTRACTORS)], ...)
        for t in types
    }
    if reference:
        fields[REFERENCE_FIELD] = (str, Field(min_length=1, description="one sentence"))
    return create_model("MarineLifeDistractors", __config__=ConfigDict(extra="ignore"), **fields)


def present_objects(row: Mapping[str, Any]) -> list[str]:
    return [
        str(row[n]).strip() for n in ("central_object", *SECONDARY_OBJECTS) if str(row.get(n) or "").strip()
    ]


def prompt_answers(row: Mapping[str, Any]) -> dict[str, Any]:
    """The correct answers as the prompt shows them: structured where the reply is structured."""
    out: dict[str, Any] = {}
    for t in mcq_types(row):
        if t == "central_object_appearance":
            out[t] = {"color": row["color"], "size_shape": row["size_shape"]}
        elif t == "camera_motion":
            out[t] = {"camera_position": row["camera_position"], "camera_angle": row["camera_angle"]}
        elif t == "object_detect":
            out[t] = present_objects(row)
        else:
            out[t] = ground_truth(t, row)
    return out


def option_text(qtype: str, option: Any) -> str:
    """One distractor as option text, in exactly the format of the type's correct answer ("" when a
    part is blank, which the checks report as an empty distractor)."""
    if qtype == "central_object_appearance":
        parts = {"color": option.color.strip(), "size_shape": option.size_shape.strip()}
    elif qtype == "camera_motion":
        parts = {
            "camera_position": option.camera_position.strip(),
            "camera_angle": option.camera_angle.strip(),
        }
    elif qtype == "object_detect":
        names = [name.strip() for name in option]
        return ", ".join(names) if all(names) else ""
    else:
        return str(option).strip()
    return ground_truth(qtype, parts) if all(parts.values()) else ""


def distractor_texts(row: Mapping[str, Any], value: BaseModel) -> dict[str, list[str]]:
    return {t: [option_text(t, o) for o in getattr(value, t)] for t in mcq_types(row)}


def reply_problems(row: Mapping[str, Any], value: BaseModel) -> list[str]:
    """Everything wrong with a reply for this video (empty: usable)."""
    problems: list[str] = []
    central = str(row["central_object"]).strip()
    present = present_objects(row)
    for qtype, options in distractor_texts(row, value).items():
        answer = ground_truth(qtype, row)
        problems += option_problems(qtype, answer, options)
        if qtype in _NAME_TYPES:
            for i, option in enumerate(options, start=1):
                if normalized(option) != normalized(answer) and (
                    mentions(option, answer) or mentions(answer, option)
                ):
                    problems.append(
                        f"{qtype} distractor {i} ({option!r}) only rewords the correct answer {answer!r}; "
                        "write a clearly different option"
                    )
        if qtype == "object_detect":
            for i, names in enumerate(value.object_detect, start=1):
                absent = [n for n in names if not any(mentions(n, p) or mentions(p, n) for p in present)]
                if not absent:
                    problems.append(
                        f"object_detect list {i} ({', '.join(names)}) names only objects the video shows, so it "
                        "would be correct too; add at least one object that is not in the video"
                    )
        if qtype == "central_object_motion":
            others = [p for p in present if p != central]
            for i, option in enumerate(options, start=1):
                subject = foreign_subject(option, central, others)
                if subject:
                    problems.append(
                        f"central_object_motion distractor {i} ({option!r}) is about {subject!r}; every option "
                        f"must describe a movement or state of the {central} itself"
                    )
    reference = getattr(value, REFERENCE_FIELD, None)
    if reference is not None:
        if "\n" in reference.strip():
            problems.append(f"{REFERENCE_FIELD} must be one sentence on one line")
        if not mentions(reference, central):
            problems.append(f"{REFERENCE_FIELD} must name the central object, the {central}")
    return problems


def build_records(row: Mapping[str, Any], value: BaseModel, seed: int = 0) -> list[dict[str, Any]]:
    """The video's QA records from a reply, checked by the dataset's validator (ValueError if not)."""
    reference = getattr(value, REFERENCE_FIELD, None)
    records = assemble_records(
        row,
        distractor_texts(row, value),
        seed,
        reference_answers={REFERENCE_TYPE: reference.strip()} if reference is not None else None,
    )
    check_records(records, [row], source=f"QA records of video {row['id']}")
    return records


def _validator(row: Mapping[str, Any]) -> Callable[[BaseModel], None]:
    def check(value: BaseModel) -> None:
        problems = reply_problems(row, value)
        if problems:
            raise ValueError("; ".join(problems))
        build_records(row, value)

    return check


def qa_request(row: Mapping[str, Any], *, reference: bool = True) -> LLMRequest:
    """The distractor request of one video row; ``row["caption"]`` must hold its final caption."""
    if not str(row.get("caption") or "").strip():
        raise ValueError(f"video {row['id']}: no final caption; run the caption engine first")
    types = tuple(mcq_types(row))
    model = reply_model(types, reference)
    item_id = str(row["id"])
    formats = {ITEM_ID_FIELD: json.dumps(item_id), **{t: _FIELD_FORMATS[t] for t in types}}
    if reference:
        formats[REFERENCE_FIELD] = "string"
    prompt = load_prompt(PROMPT_NAME)
    text = prompt.render(
        attributes=format_attributes(row),
        caption=str(row["caption"]).strip(),
        answers=json.dumps(prompt_answers(row), ensure_ascii=False),
        central_object=str(row["central_object"]).strip(),
        fields="{" + ", ".join(f'"{name}": {fmt}' for name, fmt in formats.items()) + "}",
        item_id=item_id,
    )
    return LLMRequest(
        [user_message(text)],
        schema=model,
        prompt=prompt,
        validator=_validator(row),
        schema_name=SCHEMA_NAME,
        item_id=item_id,
    )


def run_qa(
    work_dir: Path,
    rows: Sequence[Mapping[str, Any]],
    client: LLMClient,
    *,
    seed: int = 0,
    reference: bool = True,
    batch_size: int = DEFAULT_BATCH_SIZE,
    reject_failures: bool = False,
) -> dict[str, str]:
    """QA for ``rows`` (video rows with their final ``caption``); finishes the step when nothing
    failed and returns ``{id: error}``. ``reference=False`` uses the template reference sentence
    (:func:`marinelife16k.questions.camera_object_reference`) instead of the LLM's.

    Record: ``{"id", "records": [QA records], "distractors": {type: [3 texts]},
    "reference_source": "llm" | "template", "llm": cost}``.
    """
    records = StepRecords(work_dir, STEP)

    def outcome(row: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        return Outcome(
            {
                "id": row["id"],
                "records": build_records(row, result.value, seed),
                "distractors": distractor_texts(row, result.value),
                "reference_source": "llm" if reference else "template",
                "llm": call_cost(client, result),
            }
        )

    failures = run_llm_step(
        records, rows, client, lambda row: qa_request(row, reference=reference), outcome,
        batch_size=batch_size, reject_failures=reject_failures, desc="QA distractors",
    )  # fmt: skip
    if not failures:
        records.finish(row["id"] for row in rows)
    return failures
